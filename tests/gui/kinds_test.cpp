// The model workspace of the real window under Xvfb on the other kinds of
// model the binary ships, checked by their pixels against the engine's
// numbers (`model run` in the same test): an encoder–decoder's maps view
// draws the focused head's cross-attention (each target row brightest where
// the run's map is), a ViT's picture view colours the patch each head's
// chosen token reads most, the rollout view [CLS]'s rollout after each
// layer, and the keys switch among the kind's own views.
#include "engine/npy.h"
#include "tests/gui_support.h"

#include <nlohmann/json.hpp>

#include <QImage>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace attn::test {
namespace {

const std::string kSource = "the big red cat sleeps", kTarget = "le chat rouge grand dort";
const std::string kStar = std::string(ATTNLAB_SOURCE_DIR) + "/assets/trained/vit-shapes/examples/star.png";

int64_t argmaxOf(const float* row, int64_t n) { return std::max_element(row, row + n) - row; }

TEST_F(GuiTest, EncoderDecoderMapsViewDrawsTheFocusedHeadsCrossAttention) {
  TempDir out;
  ASSERT_EQ(runAttnlab({"model", "run", "shipped:t5-toy", "--text", kSource, "--target", kTarget, "--out", (out / "run").string()}).status, 0);
  const Array cross = readNpy(out / "run/cross_attention.npy", "cross");  // [layers, heads, T, S]
  const int64_t T = cross.shape[2], S = cross.shape[3];
  for (const int head : {0, 3}) {
    const QImage img = shootAt("1600x1000", {"--model", "shipped:t5-toy", "--text", kSource, "--target", kTarget, "--view", "maps",
                                             "--layer", "1", "--head", std::to_string(head)});
    ASSERT_FALSE(img.isNull());
    // The cross-attention map takes the left 55 % of the view (the self-attention maps are right of it): its
    // cells, each a block of colormap pixels inside hairlines, outline it; its colour bar is tall and narrow.
    const ColormapMatcher viridis(Colormap::Viridis);
    const QRect view = viewArea(img);
    QRect map;
    for (const QRect& r : regions(img, [&](QRgb p) { return viridis.match(p) >= 0; }, 100))
      if (r.center().x() < view.left() + view.width() * 56 / 100 && r.height() < r.width() * 6) map = map.united(r);
    EXPECT_GT(map.width(), view.width() / 4) << "the cross map takes the larger share";
    const float* heads = cross.data.data() + (1 * cross.shape[1] + head) * T * S;
    for (int64_t i = 0; i < T; ++i) {
      int brightest = -1, best = -1;
      for (int64_t j = 0; j < S; ++j) {
        const QPoint c(map.left() + static_cast<int>((static_cast<double>(j) + 0.5) * map.width() / S),
                       map.top() + static_cast<int>((static_cast<double>(i) + 0.5) * map.height() / T));
        const int v = viridis.match(img.pixel(c));
        if (v > best) best = v, brightest = static_cast<int>(j);
      }
      EXPECT_EQ(brightest, argmaxOf(heads + i * S, S)) << "head " << head << ", target row " << i;
    }
  }
}

TEST_F(GuiTest, EncoderDecoderKeysSwitchAmongItsOwnViews) {
  const std::vector<std::string> base = {"--model", "shipped:t5-toy", "--text", kSource, "--target", kTarget};
  std::vector<QImage> shots;
  for (const std::string keys : {"1", "2", "3", "4"}) {
    std::vector<std::string> a = base;
    a.insert(a.end(), {"--keys", keys});
    shots.push_back(shootAt("1280x800", a, nullptr, nullptr, 12));
  }
  const QRect view = viewArea(shots[0]);
  for (size_t i = 0; i < shots.size(); ++i)
    for (size_t j = i + 1; j < shots.size(); ++j)
      EXPECT_GT(differingPixels(shots[i], shots[j], view), 5000u) << "views " << i + 1 << " and " << j + 1 << " look alike";
}

// The patch of a picture panel whose pixels lean most to the colour map's
// top (yellow: red and green high, blue low), the patch grid from --describe.
int64_t yellowestPatch(const QImage& img, const nlohmann::json& panel) {
  const auto& a = panel.at("area");
  const double x = a[0].get<double>(), y = a[1].get<double>(), w = a[2].get<double>(), h = a[3].get<double>();
  const int64_t gh = panel.at("grid")[0].get<int64_t>(), gw = panel.at("grid")[1].get<int64_t>();
  int64_t best = -1;
  double best_score = -1e9;
  for (int64_t p = 0; p < gh * gw; ++p) {
    // A few pixels around the patch's centre, clear of its grid lines.
    double score = 0;
    for (const double dx : {-0.2, 0.0, 0.2})
      for (const double dy : {-0.2, 0.0, 0.2}) {
        const QRgb c = img.pixel(static_cast<int>(x + (static_cast<double>(p % gw) + 0.5 + dx) * w / static_cast<double>(gw)),
                                 static_cast<int>(y + (static_cast<double>(p / gw) + 0.5 + dy) * h / static_cast<double>(gh)));
        score += qRed(c) + qGreen(c) - 2.0 * qBlue(c);
      }
    if (score > best_score) best_score = score, best = p;
  }
  return best;
}

const nlohmann::json& panelTitled(const nlohmann::json& described, const std::string& start) {
  for (const nlohmann::json& p : described.at("panels"))
    if (p.value("title", "").rfind(start, 0) == 0) return p;
  ADD_FAILURE() << "no panel titled '" << start << "…' in " << described.at("panels").dump();
  static const nlohmann::json none = {{"area", {0, 0, 1, 1}}, {"grid", {1, 1}}};
  return none;
}

TEST_F(GuiTest, ViTPictureViewColoursThePatchEachTokenReadsMost) {
  TempDir out;
  ASSERT_EQ(runAttnlab({"model", "run", "shipped:vit-shapes", "--image", kStar, "--out", (out / "run").string()}).status, 0);
  const Array att = readNpy(out / "run/attention.npy", "attention");  // [layers, heads, 65, 65]
  const int64_t n = att.shape[2];
  for (const int64_t token : {int64_t{0}, int64_t{28}}) {  // [CLS], then patch 27 (the star's centre)
    nlohmann::json described;
    const QImage img = shootAt("1600x1000", {"--model", "shipped:vit-shapes", "--image", "examples/star.png", "--view", "picture",
                                             "--layer", "2", "--query", std::to_string(token)},
                               &described);
    ASSERT_FALSE(img.isNull());
    ASSERT_EQ(described.at("panels").size(), 6u) << "the input, the heads' mean and 4 heads";
    EXPECT_EQ(described["panels"][0].value("title", ""), "the input");
    // Head 0 of layer 2 reads one patch far more than any other, from [CLS] and from the centre patch alike.
    const float* row = att.data.data() + ((2 * att.shape[1] + 0) * n + token) * n;
    EXPECT_EQ(yellowestPatch(img, panelTitled(described, "head 0")), argmaxOf(row + 1, n - 1)) << "token " << token;
  }
}

TEST_F(GuiTest, ViTRolloutViewShowsEachLayersRolloutFromCls) {
  TempDir out;
  ASSERT_EQ(runAttnlab({"model", "run", "shipped:vit-shapes", "--image", kStar, "--out", (out / "run").string()}).status, 0);
  const Array rollout = readNpy(out / "run/rollout.npy", "rollout");  // [layers, 65, 65]
  const int64_t n = rollout.shape[1];
  nlohmann::json described;
  const QImage img = shootAt("1600x1000", {"--model", "shipped:vit-shapes", "--image", "examples/star.png", "--view", "rollout"}, &described);
  ASSERT_EQ(described.at("panels").size(), 1u + 2 * static_cast<size_t>(rollout.shape[0])) << "input, each layer's mean, each rollout";
  for (int64_t l = 0; l < rollout.shape[0]; ++l) {
    const float* cls = rollout.data.data() + l * n * n;  // row 0
    EXPECT_EQ(yellowestPatch(img, panelTitled(described, "rollout, layer " + std::to_string(l))), argmaxOf(cls + 1, n - 1)) << "layer " << l;
  }
  // The distance view plots a dot per head in the head colours.
  const QImage plot = shootAt("1280x800", {"--model", "shipped:vit-shapes", "--view", "distance"});
  for (int h = 0; h < 4; ++h) EXPECT_GT(countNear(plot, headColor(h), 10), 20u) << "head " << h;
}

}  // namespace
}  // namespace attn::test
