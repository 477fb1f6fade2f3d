// The model workspace of the real window under Xvfb, on the embedded
// default model (assets/model/): the layers × heads grid, the head lines in
// the head colours, the Q/K bars, the rollout heatmap, the head table and the
// pattern on a head, checked by their pixels; a bad model path is a usage error.
// On a tiny Mistral checkpoint (tests/model_fixture.h): the grid grouped by
// key/value head and the sliding window's line on the focused head.
#include "tests/gui_support.h"
#include "tests/mark_rules.h"
#include "tests/model_fixture.h"

#include <nlohmann/json.hpp>

#include <QImage>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <vector>

namespace attn::test {
namespace {

struct ModelShape {
  int layers = 0, heads = 0;
};

ModelShape embeddedShape() {
  std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/assets/model/config.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  return {j.at("n_layer").get<int>(), j.at("n_head").get<int>()};
}

TEST_F(GuiTest, ModelWorkspaceOpensOnTheEmbeddedModelWithAGridOfHeads) {
  const ModelShape m = embeddedShape();
  RunResult r;
  const QImage img = shoot({}, &r);
  ASSERT_FALSE(img.isNull());
  const ColormapMatcher viridis(Colormap::Viridis);
  const std::vector<QRect> blocks = regions(img, [&](QRgb p) { return viridis.match(p) >= 0; }, 150);
  // The focused head's heatmap beside the grid is the largest block; the
  // thumbnails are near-square blocks of under half its width, laid out in
  // `heads` columns and `layers` rows.
  ASSERT_FALSE(blocks.empty());
  const QRect largest = *std::max_element(blocks.begin(), blocks.end(), [](const QRect& a, const QRect& b) {
    return a.width() * a.height() < b.width() * b.height();
  });
  std::vector<QRect> thumbs;
  for (const QRect& b : blocks)
    if (std::abs(b.width() - b.height()) <= 3 && b.width() * 2 < largest.width()) thumbs.push_back(b);
  ASSERT_GE(static_cast<int>(thumbs.size()), m.layers * m.heads) << r.err;
  std::set<int> columns, rows;
  for (const QRect& t : thumbs) {
    columns.insert(t.left() / 4);
    rows.insert(t.top() / 4);
  }
  EXPECT_GE(static_cast<int>(columns.size()), m.heads);
  EXPECT_GE(static_cast<int>(rows.size()), m.layers);
}

TEST_F(GuiTest, ModelHeadViewDrawsLinesInSeveralHeadColours) {
  const ModelShape m = embeddedShape();
  const QImage img = shoot({"--view", "heads"});
  ASSERT_FALSE(img.isNull());
  int coloured = 0;
  for (int h = 0; h < std::min(m.heads, 10); ++h) coloured += countNear(img, headColor(h), 60) > 300u;
  EXPECT_GE(coloured, std::min(m.heads, 3)) << "lines in too few head colours";
}

TEST_F(GuiTest, ModelQkViewDrawsSignedBars) {
  const QImage img = shoot({"--view", "qk"});
  ASSERT_FALSE(img.isNull());
  // q, k and q∘k are signed: coolwarm bars of both signs.
  const size_t area = static_cast<size_t>(img.width()) * img.height();
  EXPECT_GT(endPixels(img, Colormap::Coolwarm, 64, false), area / 2000) << "no negative bars";
  EXPECT_GT(endPixels(img, Colormap::Coolwarm, 64, true), area / 2000) << "no positive bars";
  // The causal head heatmap (its upper triangle masked grey) beside the bars.
  EXPECT_GT(analyse(img).colormap_pixels, area / 60) << "no head heatmap to pick the pair";
}

TEST_F(GuiTest, ModelRolloutViewDrawsAHeatmap) {
  const QImage img = shoot({"--view", "rollout"});
  ASSERT_FALSE(img.isNull());
  EXPECT_GT(analyse(img).colormap_pixels, static_cast<size_t>(img.width()) * img.height() / 8);
}

TEST_F(GuiTest, ModelTableViewDrawsARowPerHead) {
  const ModelShape m = embeddedShape();
  const QImage img = shoot({"--view", "table"});
  ASSERT_FALSE(img.isNull());
  // Text rows in the right half (the table): runs of image rows holding bright text pixels.
  int runs = 0;
  bool in_run = false;
  for (int y = 0; y < img.height() - 40; ++y) {
    int bright = 0;
    for (int x = img.width() / 2; x < img.width(); ++x) {
      const QRgb p = img.pixel(x, y);
      bright += qRed(p) > 200 && qGreen(p) > 200 && qBlue(p) > 200;
    }
    const bool text = bright > 4;
    runs += text && !in_run;
    in_run = text;
  }
  EXPECT_GE(runs, m.layers * m.heads + 1) << "header and one row per head";
}

TEST_F(GuiTest, ModelPatternViewShowsTheRealHeadAndThePattern) {
  const QImage img = shoot({"--view", "pattern", "--pattern", "sparse-strided", "--set", "stride=2"});
  ASSERT_FALSE(img.isNull());
  const ColormapMatcher viridis(Colormap::Viridis);
  const std::vector<QRect> blocks = regions(img, [&](QRgb p) { return viridis.match(p) >= 0; }, 5000);
  EXPECT_GE(blocks.size(), 2u) << "the real head and the pattern, side by side";
}

// The grid's thumbnails: near-square viridis blocks 40 … 200 px wide in the
// left 60 % of the window (the focused head's cells are smaller, its
// regions not square). Their left edges, one per column, left to right, and
// the bounding box of the viridis pixels right of them (the focused head and
// its colour bar).
struct GridShot {
  std::vector<int> columns;
  QRect focus;
};

GridShot gridShot(const QImage& img) {
  const ColormapMatcher viridis(Colormap::Viridis);
  GridShot g;
  std::vector<int> lefts;
  int right = 0;
  for (const QRect& b : regions(img, [&](QRgb p) { return viridis.match(p) >= 0; }, 1600))
    if (std::abs(b.width() - b.height()) <= 3 && b.width() >= 40 && b.width() <= 200 && b.left() < img.width() * 3 / 5) {
      lefts.push_back(b.left());
      right = std::max(right, b.right());
    }
  std::sort(lefts.begin(), lefts.end());
  for (const int x : lefts)
    if (g.columns.empty() || x - g.columns.back() > 3) g.columns.push_back(x);
  int x0 = img.width(), y0 = img.height(), x1 = -1, y1 = -1;
  for (int y = 0; y < img.height(); ++y)
    for (int x = right + 10; x < img.width(); ++x)
      if (viridis.match(img.pixel(x, y)) >= 0) x0 = std::min(x0, x), y0 = std::min(y0, y), x1 = std::max(x1, x), y1 = std::max(y1, y);
  if (x1 > x0 && y1 > y0) g.focus = QRect(QPoint(x0, y0), QPoint(x1, y1));
  return g;
}

// Light pixels (every channel ≥ 200) inside `area` that no colormap entry explains: lines drawn over the cells.
size_t lightPixels(const QImage& img, const QRect& area) {
  size_t n = 0;
  for (int y = area.top(); y <= area.bottom(); ++y)
    for (int x = area.left(); x <= area.right(); ++x) {
      const QRgb p = img.pixel(x, y);
      n += qRed(p) >= 200 && qGreen(p) >= 200 && qBlue(p) >= 200;
    }
  return n;
}

TEST_F(GuiTest, MistralGridGroupsHeadsByKvHeadAndDrawsTheWindow) {
  // 2 layers × 4 query heads over 2 kv heads; a window of 3 keys on 19 tokens.
  const std::filesystem::path mistral = dir_.path / "mistral", llama = dir_.path / "llama";
  writeTinyModel(mistral, {.arch = test::Fixture::Llama, .seed = 3, .family = "mistral", .kv_heads = 2, .sliding_window = 3});
  writeTinyModel(llama, {.arch = test::Fixture::Llama, .seed = 3, .family = "llama", .kv_heads = 2});
  const std::string text = "the cat sat on the mat";
  RunResult r;
  const QImage windowed = shoot({"--model", mistral.string(), "--text", text}, &r);
  ASSERT_FALSE(windowed.isNull());
  const GridShot w = gridShot(windowed);
  ASSERT_EQ(w.columns.size(), 4u) << r.err;
  // Heads 0, 1 read kv head 0 and heads 2, 3 kv head 1: a wider gap between the groups.
  const int within = w.columns[1] - w.columns[0], between = w.columns[2] - w.columns[1];
  EXPECT_NEAR(w.columns[3] - w.columns[2], within, 2);
  EXPECT_GT(between, within + 5) << "no gap between the kv groups";
  // The window's staircase line crosses the focused head; the plain Llama head has none.
  const QImage plain = shoot({"--model", llama.string(), "--text", text});
  ASSERT_FALSE(plain.isNull());
  const GridShot p = gridShot(plain);
  ASSERT_EQ(p.columns.size(), 4u);
  ASSERT_FALSE(w.focus.isEmpty());
  const size_t line = lightPixels(windowed, w.focus), none = lightPixels(plain, p.focus);
  EXPECT_GT(line, none + static_cast<size_t>(w.focus.height())) << "no window line on the focused head";
}

// A text whose every map will not fit (a memory limit makes 600 tokens of a
// tiny model "long"): the grid shows the pooled maps and the focused head is
// recomputed whole from the kept q and k, the same pixels as the run that
// kept every map; the rollout view says the length it allows.
TEST_F(GuiTest, LongTextPoolsTheGridAndRecomputesTheFocusedHead) {
  const std::filesystem::path llama = dir_.path / "llama";
  const TinyModel tm = writeTinyModel(llama, {.arch = test::Fixture::Llama, .seed = 3, .kv_heads = 2});
  setConfigField(tm, "max_position_embeddings", "1024");
  std::string text;
  while (text.size() < 600) text += "the cat sat on the mat. ";
  const std::vector<std::string> args = {"--model", llama.string(), "--text", text, "--layer", "1", "--head", "2"};
  const std::vector<std::string> limit = {"ATTNLAB_MEMORY_LIMIT_MB=12"};
  const QImage whole = shoot(args), pooled = shoot(args, nullptr, limit);
  ASSERT_FALSE(whole.isNull());
  ASSERT_FALSE(pooled.isNull());
  const GridShot w = gridShot(whole), p = gridShot(pooled);
  ASSERT_EQ(w.columns.size(), 4u);
  ASSERT_EQ(p.columns.size(), 4u) << "no grid of pooled thumbnails";
  ASSERT_FALSE(p.focus.isEmpty());
  EXPECT_EQ(p.focus, w.focus);
  EXPECT_EQ(differingPixels(whole, pooled, w.focus), 0u) << "the focused head differs from the whole run's";
  // …while the thumbnails are other pictures: block means, not the maps shrunk.
  const QRect grid(QPoint(w.columns[0], 0), QPoint(w.focus.left() - 20, whole.height() - 1));
  EXPECT_GT(differingPixels(whole, pooled, grid), 1000u) << "the grid was not pooled";
  const ColormapMatcher viridis(Colormap::Viridis);
  auto cells = [&](const QImage& img) {
    size_t n = 0;
    for (int y = 0; y < img.height(); ++y)
      for (int x = img.width() / 3; x < img.width(); ++x) n += viridis.match(img.pixel(x, y)) >= 0;
    return n;
  };
  const std::vector<std::string> rollout = {"--model", llama.string(), "--text", text, "--view", "rollout"};
  EXPECT_GT(cells(shoot(rollout)), 10000u);
  EXPECT_LT(cells(shoot(rollout, nullptr, limit)), 200u) << "a pooled run drew a rollout heatmap";
}

TEST_F(GuiTest, BadModelPathIsUsageError) {
  const RunResult r = runAttnlab({"gui", "--frames", "2", "--model", (dir_ / "no-such-model").string()}, env(), 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(countLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no-such-model"), std::string::npos) << r.err;
}

TEST_F(GuiTest, ModelViewTheWorkspaceLacksIsUsageError) {
  const RunResult r = runAttnlab({"gui", "--frames", "2", "--view", "walkthrough"}, env(), 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(countLines(r.err), 1) << r.err;
}

}  // namespace
}  // namespace attn::test

namespace attn::test {
namespace {

// A model of 32 layers × 64 heads: the model view draws one cell per head
// (thumbnails would be a few pixels), readable at both desk sizes, its
// labels and colour bar held to the rules; the focused head beside it.
TEST_F(GuiTest, AModelTooLargeForThumbnailsShowsACellPerHead) {
  writeManyHeadsCheckpoint(dir_ / "big", 32, 64);
  for (const std::string size : {"1600x1000", "1280x720"}) {
    nlohmann::json described;
    const QImage img = shootAt(size, {"--model", (dir_ / "big").string(), "--text", "the cat sat on the mat, the cat sat", "--view", "model"},
                               &described, nullptr, 12);
    ASSERT_FALSE(img.isNull());
    ASSERT_EQ(described.at("panels").size(), 1u) << described.dump();
    const nlohmann::json& p = described["panels"][0];
    EXPECT_EQ(p.at("rows"), 32);
    EXPECT_EQ(p.at("cols"), 64);
    EXPECT_GE(p.at("cell").get<double>(), 5.0) << size << ": a cell per head a pointer can hit";
    EXPECT_NE(p.at("title").get<std::string>().find("first-token share"), std::string::npos);
    // Its area is drawn in the colour map: not a block of background.
    const nlohmann::json& a = p.at("area");
    const QRect cells(a[0].get<int>() + 1, a[1].get<int>() + 1, a[2].get<int>() - 2, a[3].get<int>() - 2);
    const Stats s = analyse(img.copy(cells));
    EXPECT_GT(s.colormap_pixels, static_cast<size_t>(cells.width() * cells.height()) * 8 / 10) << size;
    for (const std::string& why : describedRuleBreaks(described)) ADD_FAILURE() << size << ": " << why;
    // The row labels and the focused head's title do not run into each other.
    for (const nlohmann::json& t : described.at("texts"))
      for (const nlohmann::json& u : described.at("texts"))
        if (&t < &u && t["text"] != "" && u["text"] != "") {
          const bool apart = t["x"].get<double>() + t["w"].get<double>() <= u["x"].get<double>() + 1 ||
                             u["x"].get<double>() + u["w"].get<double>() <= t["x"].get<double>() + 1 ||
                             t["y"].get<double>() + t["h"].get<double>() <= u["y"].get<double>() + 1 ||
                             u["y"].get<double>() + u["h"].get<double>() <= t["y"].get<double>() + 1;
          EXPECT_TRUE(apart) << size << ": '" << t["text"] << "' over '" << u["text"] << "'";
        }
  }
}

// The shipped models' views on screen hold their labels to their marks and
// their colour bars to their data, at both desk sizes.
TEST_F(GuiTest, ShippedModelViewsHoldTheMarkRules) {
  const std::pair<const char*, std::vector<const char*>> models[] = {
      {"shipped:default", {"model", "table", "pattern"}},
      {"shipped:t5-toy", {"maps", "table"}},
      {"shipped:vit-shapes", {"model", "distance"}}};
  for (const std::string size : {"1600x1000", "1280x720"})
    for (const auto& [model, views] : models)
      for (const char* view : views) {
        nlohmann::json described;
        shootAt(size, {"--model", model, "--view", view}, &described);
        for (const std::string& why : describedRuleBreaks(described))
          ADD_FAILURE() << model << " " << view << " at " << size << ": " << why;
      }
}

// The compare view on screen, reached by its key B from the model view at
// one size: a bar per head, ranked by JS (largest first), run B from --text-b,
// the mark rules held at both desk sizes.
TEST_F(GuiTest, ModelCompareViewRanksEveryHeadAndHoldsTheMarkRules) {
  const ModelShape m = embeddedShape();
  for (const std::string size : {"1600x1000", "1280x720"}) {
    std::vector<std::string> args = {"--model", "shipped:default", "--text", "The cat sat on the mat", "--text-b", "The dog sat on a mat"};
    if (size == "1600x1000") args.insert(args.end(), {"--view", "model", "--keys", "B"});
    else args.insert(args.end(), {"--view", "compare"});
    nlohmann::json described;
    shootAt(size, args, &described);
    std::vector<double> js;
    for (const nlohmann::json& mark : described.at("marks"))
      if (mark.at("id").get<std::string>().rfind("js[", 0) == 0) js.push_back(mark.at("value").get<double>());
    EXPECT_EQ(static_cast<int>(js.size()), m.layers * m.heads) << size;
    EXPECT_TRUE(std::is_sorted(js.rbegin(), js.rend())) << size;
    EXPECT_GT(js.empty() ? 0.0 : js.front(), 0.0) << size;
    for (const std::string& why : describedRuleBreaks(described)) ADD_FAILURE() << "compare at " << size << ": " << why;
  }
}

}  // namespace
}  // namespace attn::test
