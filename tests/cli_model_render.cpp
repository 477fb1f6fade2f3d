// `attnlab render --model PATH | --default-model`: every model view written
// as a PNG (and SVG), from the embedded model and from the same files on
// disk; a bad model path is a one-line usage error and writes nothing. On a
// Mistral checkpoint the Q/K figure adds RoPE's bands and angles, the grid's
// panels name their kv head, and the table has its GQA columns.
#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <QImage>

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

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

TEST(ModelRenderCli, SvgFromAModelFolder) {
  TempDir dir;
  const std::string svg = (dir / "qk.svg").string();
  const RunResult r = runAttnlab({"render", "--model", kModelDir, "--text", "the cat sat on the mat. the cat sat",
                                  "--view", "qk", "--layer", "0", "--head", "1", "--out", svg});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = slurp(svg);
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_GT(text.size(), 2000u);
}

TEST(ModelRenderCli, MistralFiguresShowRopeBandsAndKvGroups) {
  TempDir dir;
  // A folder name with '_' and '^' (the subtitle is laid out as a formula and must keep them literal).
  writeTinyModel(dir / "tiny_mistral^2", {.arch = Architecture::Llama, .family = "mistral", .kv_heads = 2, .sliding_window = 3});
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
