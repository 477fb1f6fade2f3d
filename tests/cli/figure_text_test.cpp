// Every exported figure keeps its words on the page and whole, and holds its
// labels to their marks and its colour bars to their data (tests/mark_rules.h,
// from --describe): each variant × view of the registry and each view of the
// three model kinds, as PDF and SVG, at the default size and at one column (3.5 in). The PDF's words are read back with their
// boxes (poppler's pdftotext -bbox-layout); the SVG's text elements are read
// from the file. A word outside the page, or a line ending in '…', fails.
// Text in a figure is never clipped by its box (Qt::TextDontClip), so a word
// that does not fit can only show up here, past the page's edge.
#include "engine/registry.h"
#include "tests/mark_rules.h"
#include "tests/test_support.h"

#include <QImage>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

namespace attn::test {
namespace {

// Text elements of an SVG that end in a word cut short by '…' ("segm…"; the
// SVG holds whole strings, or a formula's runs, where a lone '…' is a range
// "1 … n").
std::vector<std::string> svgTextProblems(const std::string& svg, int& texts) {
  texts = 0;
  const std::string file = slurp(svg);
  std::vector<std::string> problems;
  const std::regex text_re(R"(<text[^>]*>([\s\S]*?)</text>)");
  for (auto m = std::sregex_iterator(file.begin(), file.end(), text_re); m != std::sregex_iterator(); ++m) {
    ++texts;
    std::string text = unescapeXml((*m)[1]);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    const bool lone = text == "\xE2\x80\xA6" || (text.size() > 4 && text.compare(text.size() - 4, 4, " \xE2\x80\xA6") == 0);
    if (endsWithEllipsis(text) && !lone) problems.push_back("SVG text cut short: '" + text + "'");
  }
  return problems;
}

// Renders `args` at each size as PDF and SVG and checks both.
void expectWholeWords(const std::vector<std::string>& args, const std::string& name) {
  TempDir dir;
  for (const std::string size : {"1200x900", "column"}) {
    for (const std::string ext : {".pdf", ".svg"}) {
      const std::string out = (dir / (name + "_" + size + ext)).string();
      std::vector<std::string> render = {"render"};
      render.insert(render.end(), args.begin(), args.end());
      render.insert(render.end(), {"--size", size, "--out", out});
      if (ext == ".svg") render.insert(render.end(), {"--describe", out + ".json"});
      const RunResult r = runAttnlab(render);
      ASSERT_EQ(r.status, 0) << name << " " << size << ": " << r.err;
      if (ext == ".svg")
        for (const std::string& why : describedRuleBreaks(nlohmann::json::parse(slurp(out + ".json"))))
          ADD_FAILURE() << name << " at " << size << ": " << why;
      int count = 0;
      const std::vector<std::string> problems = ext == ".pdf" ? pdfTextProblems(out, count) : svgTextProblems(out, count);
      EXPECT_GT(count, 3) << out << ": a figure without its words";
      for (const std::string& p : problems) ADD_FAILURE() << name << " at " << size << " (" << ext << "): " << p;
    }
  }
}

// A learned PE needs a file: the sinusoidal table, written by compute.
std::vector<std::string> extraArgs(const std::string& variant, const TempDir& dir) {
  if (variant != "learned-pe") return {};
  const RunResult r = runAttnlab({"compute", "sinusoidal-pe", "--out", (dir / "pe").string()});
  EXPECT_EQ(r.status, 0) << r.err;
  return {"--set", "pe=" + (dir / "pe" / "extras" / "pe.npy").string()};
}

class VariantFigureText : public ::testing::TestWithParam<std::string> {};

TEST_P(VariantFigureText, EveryViewKeepsItsWordsOnThePage) {
  const VariantInfo& info = variantOrThrow(GetParam());
  TempDir inputs;
  const std::vector<std::string> extra = extraArgs(info.name, inputs);
  for (const std::string& v : info.views) {
    std::vector<std::string> args = {info.name, "--view", v};
    args.insert(args.end(), extra.begin(), extra.end());
    expectWholeWords(args, info.name + "_" + v);
  }
}

std::vector<std::string> variantNames() {
  std::vector<std::string> names;
  for (const VariantInfo& v : variants()) names.push_back(v.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Registry, VariantFigureText, ::testing::ValuesIn(variantNames()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(ModelFigureText, EveryModelViewKeepsItsWordsOnThePage) {
  for (const std::string view : {"model", "heads", "qk", "rollout", "table", "pattern"})
    expectWholeWords({"--model", "shipped:default", "--view", view}, "model_" + view);
  for (const std::string view : {"maps", "heads", "table"})
    expectWholeWords({"--model", "shipped:t5-toy", "--view", view}, "t5_" + view);
  for (const std::string of : {"cross", "encoder", "decoder"})
    expectWholeWords({"--model", "shipped:t5-toy", "--view", "model", "--attention-of", of}, "t5_model_" + of);
  for (const std::string view : {"picture", "rollout", "distance", "model"})
    expectWholeWords({"--model", "shipped:vit-shapes", "--view", view}, "vit_" + view);
}

// The check itself can fail: a word too long for a column runs off the page.
TEST(FigureTextCheck, AWordWiderThanThePageIsReported) {
  TempDir dir;
  const std::string pdf = (dir / "long.pdf").string();
  const RunResult r = runAttnlab({"render", "multi-head", "--size", "column", "--out", pdf, "--title",
                                  "Pneumonoultramicroscopicsilicovolcanoconiosis_and_its_attention_heads"});
  ASSERT_EQ(r.status, 0) << r.err;
  int words = 0;
  const std::vector<std::string> problems = pdfTextProblems(pdf, words);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("outside"), std::string::npos) << problems[0];
}

TEST(FigureOptions, ColumnIsThreeAndAHalfInchesWideAndAsTallAsItsContent) {
  TempDir dir;
  const std::string pdf = (dir / "c.pdf").string(), png = (dir / "c.png").string();
  const RunResult a = runAttnlab({"render", "multi-head", "--size", "column", "--out", pdf});
  ASSERT_EQ(a.status, 0) << a.err;
  double w = 0, h = 0;
  ASSERT_TRUE(pdfPageSize(pdf, w, h));
  EXPECT_NEAR(w, 252.0, 0.5);  // 3.5 in at 72 pt
  // A square heatmap under a wrapped title, its row labels and colour bar beside it: about as tall as wide
  // (its height follows the content: not the default 900), but not a strip.
  EXPECT_GT(h, 252.0 * 0.85);
  EXPECT_LT(h, 252.0 * 1.8);
  // The PNG is the same page at 300 dpi.
  const RunResult b = runAttnlab({"render", "multi-head", "--size", "column", "--out", png});
  ASSERT_EQ(b.status, 0) << b.err;
  const QImage img(QString::fromStdString(png));
  EXPECT_NEAR(img.width(), 1050, 1);
  EXPECT_NEAR(img.height() / 1050.0, h / 252.0, 0.01);
}

TEST(FigureOptions, EmptyTitleDrawsNone) {
  TempDir dir;
  const std::string with = (dir / "with.pdf").string(), without = (dir / "without.pdf").string();
  ASSERT_EQ(runAttnlab({"render", "multi-head", "--out", with}).status, 0);
  ASSERT_EQ(runAttnlab({"render", "multi-head", "--title", "", "--out", without}).status, 0);
  EXPECT_NE(runProgram(kPdfToText, {with, "-"}).out.find("Multi-head self-attention"), std::string::npos);
  EXPECT_EQ(runProgram(kPdfToText, {without, "-"}).out.find("Multi-head self-attention"), std::string::npos);
}

TEST(FigureOptions, BadSizeAndFontSizeAreOneLineErrorsAndWriteNothing) {
  TempDir dir;
  const std::string pdf = (dir / "x.pdf").string();
  const RunResult a = runAttnlab({"render", "multi-head", "--size", "postcard", "--out", pdf});
  EXPECT_EQ(a.status, 2);
  EXPECT_EQ(countLines(a.err), 1) << a.err;
  EXPECT_NE(a.err.find("--size"), std::string::npos) << a.err;
  EXPECT_NE(a.err.find("column, two-column, slide or WxH"), std::string::npos) << a.err;
  const RunResult b = runAttnlab({"render", "multi-head", "--font-size", "1000", "--out", pdf});
  EXPECT_EQ(b.status, 2);
  EXPECT_EQ(countLines(b.err), 1) << b.err;
  EXPECT_NE(b.err.find("--font-size"), std::string::npos) << b.err;
  EXPECT_TRUE(listFiles(dir.path).empty());
}

TEST(FigureOptions, BadScaleGammaAndPercentileAreOneLineErrorsAndWriteNothing) {
  TempDir dir;
  const std::string pdf = (dir / "x.pdf").string();
  const struct {
    std::vector<std::string> flags;
    std::string named;
  } cases[] = {{{"--scale", "cubic"}, "--scale"},
               {{"--scale", "power", "--gamma", "0"}, "--gamma"},
               {{"--scale", "percentile", "--percentile", "10"}, "--percentile"}};
  for (const auto& c : cases) {
    std::vector<std::string> args = {"render", "multi-head", "--out", pdf};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    const RunResult r = runAttnlab(args);
    EXPECT_EQ(r.status, 2) << c.named;
    EXPECT_EQ(countLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.named), std::string::npos) << r.err;
  }
  EXPECT_TRUE(listFiles(dir.path).empty());
}

}  // namespace
}  // namespace attn::test
