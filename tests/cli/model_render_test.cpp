// `attnlab render --model PATH | --default-model`: every model view written
// as a PNG (and SVG), from the embedded model and from the same files on
// disk; a bad model path is a one-line usage error and writes nothing. On a
// Mistral checkpoint the Q/K figure adds RoPE's bands and angles, the grid's
// panels name their kv head, and the table has its GQA columns.
#include "engine/npy.h"
#include "tests/mark_rules.h"
#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <QImage>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace attn::test {
namespace {

const std::string kModelDir = std::string(ATTNLAB_SOURCE_DIR) + "/assets/model";

class ModelRender : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelRender, EachViewWritesAFigure) {
  TempDir dir;
  const std::string png = (dir / (GetParam() + ".png")).string();
  const RunResult r = runAttnlab({"render", "--default-model", "--view", GetParam(), "--out", png, "--size", "900x700"});
  ASSERT_EQ(r.status, 0) << r.err;
  QImage img(QString::fromStdString(png));
  ASSERT_FALSE(img.isNull());
  EXPECT_EQ(img.width(), 900);
  // Not a blank page: many colours.
  std::set<QRgb> colours;
  for (int y = 0; y < img.height(); y += 2)
    for (int x = 0; x < img.width(); x += 2) colours.insert(img.pixel(x, y));
  EXPECT_GT(colours.size(), 20u) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Views, ModelRender,
                         ::testing::Values("model", "heads", "qk", "rollout", "table", "pattern"));

// Every view of every model kind (`list --kinds`, the registry) renders under
// the name the window's view bar shows, on a shipped model of that kind.
TEST(ModelRenderCli, EveryKindsViewRendersUnderItsOneName) {
  const RunResult list = runAttnlab({"list", "--kinds", "--json"});
  ASSERT_EQ(list.status, 0) << list.err;
  TempDir dir;
  // Attention from a file: what `model run` wrote.
  const RunResult run = runAttnlab({"model", "run", "shipped:default", "--out", (dir / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::map<std::string, std::vector<std::string>> shipped = {{"text", {"--model", "shipped:default"}},
                                                                   {"encoder-decoder", {"--model", "shipped:t5-toy"}},
                                                                   {"vision", {"--model", "shipped:vit-shapes"}},
                                                                   {"attention", {"--attention", (dir / "run").string()}}};
  for (const nlohmann::json& kind : nlohmann::json::parse(list.out)) {
    const auto model = shipped.find(kind.at("name").get<std::string>());
    ASSERT_NE(model, shipped.end()) << "no shipped model of the kind " << kind.at("name");
    ASSERT_FALSE(kind.at("views").empty()) << kind.at("name");
    for (size_t i = 0; i < kind.at("views").size(); ++i) {
      const nlohmann::json& view = kind.at("views")[i];
      const std::string name = view.at("name");
      // the window's digits: 1 … 9, then 0, then none (the view bar)
      if (i < 10) EXPECT_EQ(view.at("key"), i < 9 ? static_cast<int>(i) + 1 : 0) << name;
      else EXPECT_TRUE(view.at("key").is_null()) << name;
      EXPECT_FALSE(view.at("help").get<std::string>().empty()) << name;
      if (name == "qk" && model->first == "attention") continue;  // needs q and k (tests/cli/attention_file_test.cpp)
      std::vector<std::string> args = {"render", model->second[0], model->second[1], "--view", name, "--out", (dir / "v.svg").string()};
      if (name == "patching")  // a corrupted prompt of the default text's 28 tokens, and a query where the two differ
        args.insert(args.end(), {"--corrupted", "And God said, Let there come light: and there was light. And God said, Let "
                                                "there be light: and there was light.", "--query", "19"});
      if (name == "compare") args.insert(args.end(), {"--text-b", "A second prompt."});  // run B (tests/cli/model_compare_test.cpp)
      const RunResult r = runAttnlab(args);
      EXPECT_EQ(r.status, 0) << model->second[1] << " --view " << name << ": " << r.err;
      EXPECT_NE(r.out.find("(" + name + " of "), std::string::npos) << r.out;
    }
  }
}

// --attention-of picks an encoder–decoder's attention; on a model with one
// kind of attention it is refused, not ignored, and an unknown one is named.
TEST(ModelRenderCli, AttentionOfIsAnEncoderDecodersAlone) {
  test::TempDir dir;
  const std::string out = (dir.path / "a.svg").string();
  for (const char* model : {"shipped:default", "shipped:vit-shapes"}) {
    const RunResult r = runAttnlab({"render", "--model", model, "--view", "model", "--attention-of", "encoder", "--out", out});
    EXPECT_EQ(r.status, 2) << model;
    EXPECT_NE(r.err.find("--attention-of: only encoder\xE2\x80\x93" "decoder models (T5, BART) have more than one attention"),
              std::string::npos)
        << model << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << model;
  }
  const RunResult bad = runAttnlab({"render", "--model", "shipped:t5-toy", "--view", "model", "--attention-of", "self", "--out", out});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--attention-of: expected one of encoder, decoder, cross, got 'self'"), std::string::npos) << bad.err;
  const RunResult ok = runAttnlab({"render", "--model", "shipped:t5-toy", "--view", "model", "--attention-of", "encoder", "--out", out});
  EXPECT_EQ(ok.status, 0) << ok.err;
}

// The entropy view: a dot per head at the entropy the head summaries give
// it (`model run`'s heads.json, on the same example text), its labels held
// to the mark rules.
TEST(ModelRenderCli, EntropyViewDrawsEachHeadsEntropy) {
  TempDir dir;
  const RunResult run = runAttnlab({"model", "run", "shipped:default", "--maps", "pooled", "--out", (dir / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const RunResult r = runAttnlab({"render", "--model", "shipped:default", "--view", "entropy", "--out", (dir / "e.svg").string(),
                                  "--describe", (dir / "e.json").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json described = nlohmann::json::parse(slurp(dir / "e.json"));
  for (const std::string& why : describedRuleBreaks(described)) ADD_FAILURE() << why;
  std::vector<double> drawn, summaries;
  for (const nlohmann::json& m : described.at("marks")) drawn.push_back(m.at("value").get<double>());
  for (const nlohmann::json& h : nlohmann::json::parse(slurp(dir / "run/heads.json"))) summaries.push_back(h.at("entropy").get<double>());
  ASSERT_EQ(drawn.size(), summaries.size());
  std::sort(drawn.begin(), drawn.end());
  std::sort(summaries.begin(), summaries.end());
  for (size_t i = 0; i < drawn.size(); ++i) EXPECT_NEAR(drawn[i], summaries[i], 1e-4) << i;
}

// `model run` on the same folder and text: attention [layers, heads, L, L].
Array modelRenderAttention(const std::string& text, const TempDir& dir) {
  const RunResult r = runAttnlab({"model", "run", kModelDir, "--text", text, "--out", (dir / "run").string()});
  EXPECT_EQ(r.status, 0) << r.err;
  return readNpy(dir / "run/attention.npy", "attention");
}

// Head (layer, head) of attention [layers, heads, L, L], row by row.
std::vector<float> modelRenderHead(const Array& a, int64_t layer, int64_t head) {
  const int64_t cells = a.shape[2] * a.shape[3];
  const auto begin = a.data.begin() + (layer * a.shape[1] + head) * cells;
  return {begin, begin + cells};
}

// The q·k figure of head 1 (not head 0): its weights panel is that head's
// map cell by cell, the key is that head's strongest for the last query, and
// the attention weight printed is that cell's.
TEST(ModelRenderCli, QkSvgFromAModelFolderShowsTheAskedHead) {
  TempDir dir;
  const std::string text = "the cat sat on the mat. the cat sat";
  const std::string svg = (dir / "qk.svg").string();
  const RunResult r = runAttnlab({"render", "--model", kModelDir, "--text", text, "--view", "qk", "--layer", "0", "--head", "1",
                                  "--out", svg});
  ASSERT_EQ(r.status, 0) << r.err;
  const Array a = modelRenderAttention(text, dir);
  ASSERT_EQ(a.shape.size(), 4u);
  const int64_t n = a.shape[2];
  const std::vector<float> head = modelRenderHead(a, 0, 1);
  const std::string figure = slurp(svg);
  const std::vector<SvgGrid> grids = svgCellGrids(figure, n, n);
  ASSERT_EQ(grids.size(), 1u) << "one " << n << " × " << n << " weights panel";
  const float hi = *std::max_element(head.begin(), head.end());
  for (const std::string& p : cellColourProblems(grids[0].rgb, head, hi, colormapTable(Colormap::Viridis), n)) ADD_FAILURE() << p;

  const auto row = head.begin() + (n - 1) * n;
  const int64_t key = std::max_element(row, row + n) - row;
  const std::vector<std::string> texts = svgTexts(figure);
  const std::string pair = "query " + std::to_string(n - 1) + " ";
  const auto label = std::find_if(texts.begin(), texts.end(), [&](const std::string& s) { return s.find(pair) != std::string::npos; });
  ASSERT_NE(label, texts.end()) << "no q∘k panel title";
  EXPECT_NE(label->find("key " + std::to_string(key) + " '"), std::string::npos) << *label << "; head 1's strongest key is " << key;
  // The values row: "attention weight" beside its number (a row of values on one line: the number first;
  // stacked: under its name), the weights panel having the same title over token labels.
  auto number = [](const std::string& s) { return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-'); };
  std::string value;
  for (size_t i = 0; i < texts.size() && value.empty(); ++i)
    if (texts[i] == "attention weight") {
      if (i > 0 && number(texts[i - 1])) value = texts[i - 1];
      else if (i + 1 < texts.size() && number(texts[i + 1])) value = texts[i + 1];
    }
  ASSERT_FALSE(value.empty()) << "no attention weight value";
  EXPECT_NEAR(std::stod(value), row[key], 1e-4) << "the printed attention weight";
}

// The model view's grid: panel L l H h shows that head's map, in layer-major order.
TEST(ModelRenderCli, ModelViewPanelsShowEachHeadInOrder) {
  TempDir dir;
  const std::string text = "the cat sat on the mat";
  const std::string svg = (dir / "model.svg").string();
  const RunResult r = runAttnlab({"render", "--model", kModelDir, "--text", text, "--view", "model", "--out", svg});
  ASSERT_EQ(r.status, 0) << r.err;
  const Array a = modelRenderAttention(text, dir);
  ASSERT_EQ(a.shape.size(), 4u);
  const int64_t layers = a.shape[0], heads = a.shape[1], n = a.shape[2];
  const std::vector<SvgGrid> grids = svgCellGrids(slurp(svg), n, n);
  ASSERT_EQ(static_cast<int64_t>(grids.size()), layers * heads) << "a panel per head";
  const float hi = *std::max_element(a.data.begin(), a.data.end());
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t h = 0; h < heads; ++h)
      for (const std::string& p : cellColourProblems(grids[static_cast<size_t>(l * heads + h)].rgb, modelRenderHead(a, l, h), hi,
                                                     colormapTable(Colormap::Viridis), n))
        ADD_FAILURE() << "L" << l << " H" << h << " " << p;
}

// The head table's figure has the screen's plot under it: its axes, the
// layers' legend and the heads that stand out on it (L1 H1 the strongest
// induction head, L0 H2 the previous-token head); the table keeps its last
// column (it was once set wider than the page).
TEST(ModelRenderCli, TableFigureHasTheScreensPlotOfTheHeads) {
  TempDir dir;
  const std::string svg = (dir / "table.svg").string();
  const RunResult r = runAttnlab({"render", "--default-model", "--view", "table", "--out", svg});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> texts = svgTexts(slurp(svg));
  for (const char* t : {"previous-token score", "induction score", "layer 0", "layer 1", "L1 H1", "L0 H2", "group JS"})
    EXPECT_NE(std::find(texts.begin(), texts.end(), t), texts.end()) << t;
}

TEST(ModelRenderCli, MistralFiguresShowRopeBandsAndKvGroups) {
  TempDir dir;
  // A folder name with '_' and '^' (the subtitle is laid out as a formula and must keep them literal).
  writeTinyModel(dir / "tiny_mistral^2", {.arch = test::Fixture::Llama, .family = "mistral", .kv_heads = 2, .sliding_window = 3});
  const auto pdfText = [&](const std::string& view) {
    const std::string pdf = (dir / (view + ".pdf")).string();
    const RunResult r = runAttnlab({"render", "--model", (dir / "tiny_mistral^2").string(), "--text", "the cat sat on the mat",
                                    "--view", view, "--out", pdf});
    EXPECT_EQ(r.status, 0) << r.err;
    return runProgram(kPdfToText, {pdf, "-"}).out;
  };
  const std::string qk = pdfText("qk");
  EXPECT_NE(qk.find("frequency bands"), std::string::npos) << qk;
  EXPECT_NE(qk.find("RoPE angle"), std::string::npos) << qk;
  EXPECT_NE(pdfText("model").find("L1 H3 kv 1"), std::string::npos) << "the grid's panels name their kv head";
  const std::string table = pdfText("table");
  EXPECT_NE(table.find("kv head"), std::string::npos) << table;
  EXPECT_NE(table.find("group JS"), std::string::npos) << table;
  EXPECT_NE(table.find("tiny_mistral^2 (MistralForCausalLM)"), std::string::npos) << table;
}

TEST(ModelRenderCli, BadModelPathIsUsageErrorAndWritesNothing) {
  TempDir dir;
  const std::string png = (dir / "x.png").string();
  const RunResult r = runAttnlab({"render", "--model", (dir / "missing").string(), "--view", "model", "--out", png});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(countLines(r.err), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(png));
  EXPECT_TRUE(listFiles(dir.path).empty());
}

TEST(ModelRenderCli, HeadOutOfRangeIsUsageError) {
  TempDir dir;
  const std::string png = (dir / "x.png").string();
  const RunResult r = runAttnlab({"render", "--default-model", "--view", "heads", "--layer", "99", "--out", png});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(countLines(r.err), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(png));
}

}  // namespace
}  // namespace attn::test
