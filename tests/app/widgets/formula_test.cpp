// The formula layout (widgets/formula.h) with a monospace measure: every
// character 10 px × scale wide, so positions can be checked by hand.
#include "widgets/formula.h"

#include "tests/app_test_support.h"

#include <gtest/gtest.h>

#include <string>

namespace attn {
namespace {

std::vector<FormulaLine> lay(const std::string& text, float max_width = 0) {
  return layoutFormula(text, 20.0f, max_width, test::monoMeasure(10));
}

TEST(Formula, ScriptsAfterOneBaseStack) {
  const std::vector<FormulaLine> lines = lay("W^q_i");
  ASSERT_EQ(lines.size(), 1u);
  const std::vector<FormulaRun>& r = lines[0].runs;
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].text, "W");
  EXPECT_EQ(r[1].text, "q");
  EXPECT_EQ(r[2].text, "i");
  EXPECT_FLOAT_EQ(r[1].x, 10.0f);
  EXPECT_FLOAT_EQ(r[2].x, 10.0f) << "the subscript stacks under the superscript";
  EXPECT_LT(r[1].dy, 0.0f);
  EXPECT_GT(r[2].dy, 0.0f);
  EXPECT_FLOAT_EQ(r[1].scale, kScriptScale);
  EXPECT_FLOAT_EQ(lines[0].width, 10.0f + 7.0f);
}

TEST(Formula, GroupsWordsAndParenthesesAreArguments) {
  // r_{i−j}: one subscript "i−j"; d_head: the letters; base^(2i/d): the parenthesised group, without parentheses.
  EXPECT_EQ(lay("r_{i−j}")[0].runs[1].text, "i−j");
  EXPECT_EQ(lay("d_head)")[0].runs[1].text, "head");
  EXPECT_EQ(lay("d_head)")[0].runs[2].text, ")");
  EXPECT_FLOAT_EQ(lay("d_head)")[0].runs[2].x, 10.0f + 4 * 7.0f);
  const std::vector<FormulaRun> pe = lay("base^(2i/d)")[0].runs;
  ASSERT_EQ(pe.size(), 2u);
  EXPECT_EQ(pe[1].text, "2i/d");
  // Not scripts: a marker at a word's start, or with nothing after it.
  EXPECT_EQ(lay("_x y^")[0].runs.size(), 1u);
  EXPECT_EQ(lay("_x y^")[0].runs[0].text, "_x y^");
}

// A backslash keeps '^', '_' and itself literal: "views\_mistral" is one run of base text.
TEST(Formula, EscapedMarkersAreLiteral) {
  const auto lines = layoutFormula("views\\_mistral a\\^2 x\\\\y W_q", 10.0f, 0.0f, [](const std::string& t, float sc) {
    return static_cast<float>(t.size()) * sc;
  });
  ASSERT_EQ(lines.size(), 1u);
  std::string base;
  int scripts = 0;
  for (const FormulaRun& r : lines[0].runs) {
    if (r.dy == 0.0f) base += r.text;
    else ++scripts;
  }
  EXPECT_NE(base.find("views_mistral"), std::string::npos) << base;
  EXPECT_NE(base.find("a^2"), std::string::npos) << base;
  EXPECT_NE(base.find("x\\y"), std::string::npos) << base;
  EXPECT_EQ(scripts, 1) << "only W_q's q is a script";
}

TEST(Formula, PlainWordsStayOneRunAndLinesBreakAtSpaces) {
  const std::vector<FormulaLine> one = lay("(a) normal attention");
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(one[0].runs.size(), 1u);
  EXPECT_EQ(one[0].runs[0].text, "(a) normal attention");
  // 100 px: "aaaa bbbb" (90) fits, "cccc" goes to the next line.
  const std::vector<FormulaLine> wrapped = lay("aaaa bbbb cccc", 100.0f);
  ASSERT_EQ(wrapped.size(), 2u);
  EXPECT_EQ(wrapped[0].runs[0].text, "aaaa bbbb");
  EXPECT_FLOAT_EQ(wrapped[0].width, 90.0f);
  EXPECT_EQ(wrapped[1].runs[0].text, "cccc");
  // A word wider than the line gets a line of its own.
  EXPECT_EQ(lay("a bbbbbbbbbbbbbb c", 50.0f).size(), 3u);
}

}  // namespace
}  // namespace attn
