// The shared layouts of widgets/primitives.h, as both backends receive them:
// the colour bar's pieces, and marker labels that never overlap.
#include "widgets/primitives.h"

#include "tests/app_test_support.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace attn {
namespace {


TEST(StackLabels, LabelsInOneRowNeverOverlapAndStayInside) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> at(0.0f, 400.0f), wide(10.0f, 80.0f);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> centres, widths;
    for (int k = 0; k < 6; ++k) {
      centres.push_back(at(rng));
      widths.push_back(wide(rng));
    }
    const LabelRows rows = stackLabels(centres, widths, 0.0f, 400.0f, 4.0f, 10);
    ASSERT_EQ(rows.placed.size(), centres.size());
    for (size_t a = 0; a < centres.size(); ++a) {
      EXPECT_GE(rows.placed[a].left, 0.0f);
      EXPECT_LE(rows.placed[a].left + widths[a], 400.0f + 1e-3f);
      EXPECT_LT(rows.placed[a].row, rows.rows);
      for (size_t b = a + 1; b < centres.size(); ++b) {
        if (rows.placed[a].row != rows.placed[b].row) continue;
        const bool apart = rows.placed[a].left + widths[a] + 4.0f <= rows.placed[b].left + 1e-3f ||
                           rows.placed[b].left + widths[b] + 4.0f <= rows.placed[a].left + 1e-3f;
        EXPECT_TRUE(apart) << "labels " << a << " and " << b << " overlap in row " << rows.placed[a].row;
      }
    }
  }
  // Far apart: one row; on top of each other: one row each.
  EXPECT_EQ(stackLabels({50, 300}, {40, 40}, 0, 400, 4).rows, 1);
  EXPECT_EQ(stackLabels({200, 200, 200}, {40, 40, 40}, 0, 400, 4).rows, 3);
}

TEST(ColorbarPrimitives, StripFrameTicksAndACaptionTurnedUp) {
  Primitives prims;
  const ValueRange range{-2.0f, 2.0f, true};
  colorbarPrimitives(prims, 10, 20, 12, 300, Colormap::Viridis, range, "signed", 14, test::monoMeasure(8));
  ASSERT_GE(prims.size(), 2u);
  EXPECT_EQ(prims[0].kind, Primitive::Kind::ColormapStrip);
  EXPECT_EQ(prims[0].cmap, Colormap::Coolwarm) << "a signed range takes a diverging map";
  EXPECT_EQ(prims[1].kind, Primitive::Kind::StrokeRect);
  std::vector<float> tick_ys;
  for (const Primitive& p : prims)
    if (p.kind == Primitive::Kind::Line) tick_ys.push_back(p.y0);
  ASSERT_GE(tick_ys.size(), 3u);
  EXPECT_FLOAT_EQ(tick_ys[tick_ys.size() / 2], 20 + 150) << "0 sits in the middle of a signed bar";
  const Primitive& caption = prims.back();
  EXPECT_EQ(caption.kind, Primitive::Kind::Text);
  EXPECT_EQ(caption.text, "signed");
  EXPECT_TRUE(caption.vertical);
  EXPECT_GT(caption.x0, 22.0f) << "right of the strip and its labels";
}

// A caption longer than its bar is set smaller to fit it; past 0.6× it is left out, never run past the bar.
TEST(ColorbarPrimitives, ACaptionLongerThanItsBarShrinksOrIsLeftOut) {
  const std::string caption(30, 'x');
  const float wide = test::monoMeasure(8)(caption, 1.0f);  // 240 units at the caption's size
  Primitives prims;
  auto captionOf = [&](float h) -> const Primitive* {
    prims.clear();
    colorbarPrimitives(prims, 0, 0, 10, h, Colormap::Viridis, ValueRange{0.0f, 1.0f, false}, caption, 14, test::monoMeasure(8));
    return prims.back().kind == Primitive::Kind::Text && prims.back().vertical ? &prims.back() : nullptr;
  };
  const Primitive* full = captionOf(wide * 2);
  ASSERT_NE(full, nullptr);
  EXPECT_FLOAT_EQ(full->size, 14.0f);
  const Primitive* smaller = captionOf(wide * 0.8f);
  ASSERT_NE(smaller, nullptr);
  EXPECT_NEAR(smaller->size, 14.0f * 0.8f, 1e-3f);
  EXPECT_LE(test::monoMeasure(8)(caption, smaller->size / 14.0f), wide * 0.8f + 1e-3f) << "it fits the bar";
  EXPECT_EQ(captionOf(wide * 0.5f), nullptr) << "too short even at 0.6x: no caption";
}


TEST(WrapLines, BreaksAtSpacesWithinTheWidthAndKeepsEveryWord) {
  const Canvas c = test::monoCanvas(10, 0.5f, 0.6f);
  const std::string text = "the pattern keeps every key within the window";
  const std::vector<std::string> lines = wrapLines(c, text, 10, 80);  // 16 characters a line
  ASSERT_GT(lines.size(), 2u);
  std::string joined;
  for (const std::string& l : lines) {
    EXPECT_LE(c.textWidth(l, 10), 80.0f) << l;
    joined += (joined.empty() ? "" : " ") + l;
  }
  EXPECT_EQ(joined, text);
  // A word longer than the line gets a line of its own; explicit breaks break.
  EXPECT_EQ(wrapLines(c, "a incomprehensibilities b", 10, 40), (std::vector<std::string>{"a", "incomprehensibilities", "b"}));
  EXPECT_EQ(wrapLines(c, "one\ntwo", 10, 0), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(wrapLines(c, "", 10, 50), (std::vector<std::string>{""}));
}

TEST(AddFormula, RunsSitOnBaselinesInsideTheWidthAndItsHeightIsMeasuredAlike) {
  const Canvas c = test::monoCanvas(10, 0.5f, 0.6f);
  Primitives prims;
  const float h = addFormula(prims, c, "W^q_i x_t and more words to wrap here", 5, 7, 10, 60);
  EXPECT_FLOAT_EQ(h, formulaHeight(c, "W^q_i x_t and more words to wrap here", 10, 60));
  EXPECT_GT(h, formulaLineHeight(10) * 1.5f) << "it wrapped";
  ASSERT_FALSE(prims.empty());
  bool scripted = false;
  for (const Primitive& p : prims) {
    EXPECT_EQ(p.kind, Primitive::Kind::Text);
    EXPECT_TRUE(p.baseline);
    EXPECT_GE(p.x0, 5.0f);
    EXPECT_LE(p.x0 + c.textWidth(p.text, p.size), 5.0f + 60.0f + 1e-3f) << p.text;
    EXPECT_GT(p.y0, 7.0f);
    EXPECT_LT(p.y0, 7.0f + h);
    scripted |= p.size < 10.0f;
  }
  EXPECT_TRUE(scripted) << "q and i are scripts";
  EXPECT_EQ(formulaHeight(c, "", 10, 60), 0.0f);
}

TEST(PrimitiveBuilders, ClipsPairAndDataColoursOverrideRoles) {
  Primitives prims;
  pushClip(prims, 0, 0, 10, 10);
  addFill(prims, 1, 2, 3, 4, Rgb8{1, 2, 3}, 0.5f);
  addLine(prims, 0, 0, 5, 5, Role::Muted, 2).dashed = true;
  addText(prims, 3, 4, "x", 12, Role::Text, 0.5f, 1.0f);
  popClip(prims);
  ASSERT_EQ(prims.size(), 5u);
  EXPECT_EQ(prims[0].kind, Primitive::Kind::PushClip);
  EXPECT_EQ(prims[1].kind, Primitive::Kind::FillRect);
  ASSERT_TRUE(prims[1].colour.has_value());
  EXPECT_EQ(prims[1].colour->g, 2);
  EXPECT_FLOAT_EQ(prims[1].alpha, 0.5f);
  EXPECT_TRUE(prims[2].dashed);
  EXPECT_FALSE(prims[2].colour.has_value());
  EXPECT_EQ(prims[3].size, 12.0f);
  EXPECT_FLOAT_EQ(prims[3].align_x, 0.5f);
  EXPECT_EQ(prims[4].kind, Primitive::Kind::PopClip);
}

}  // namespace
}  // namespace attn
