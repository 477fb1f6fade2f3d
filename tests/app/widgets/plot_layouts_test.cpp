// The extras' plot layouts (widgets/plot_layouts.h) as both backends receive
// them, measured with a monospace canvas: text inside the area and never on
// top of other text, bars at their values' heights, averaged bars when there
// are more values than pixels, marker labels stacked, the token strip's
// fallback, the legend's wrapping.
#include "widgets/plot_layouts.h"

#include "tests/app_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attn {
namespace {

using test::monoCanvas;

// A text primitive's box (upright or turned) as the backends draw it: height 1.2 px.
Box textBox(const Canvas& c, const Primitive& p) {
  const float w = c.textWidth(p.text, p.size), h = p.size * 1.2f;
  if (p.vertical) return {p.x0 - p.align_y * h, p.y0 - (1 - p.align_x) * w, h, w};
  if (p.baseline) return {p.x0, p.y0 - c.ascent_of(p.size), w, h};
  return {p.x0 - p.align_x * w, p.y0 - p.align_y * h, w, h};
}

std::vector<Box> texts(const Canvas& c, const Primitives& prims) {
  std::vector<Box> out;
  for (const Primitive& p : prims)
    if (p.kind == Primitive::Kind::Text && !p.text.empty()) out.push_back(textBox(c, p));
  return out;
}

void expectInside(const std::vector<Box>& boxes, const Box& area) {
  for (const Box& b : boxes) {
    EXPECT_GE(b.x, area.x - 0.5f) << b.x << "," << b.y << " " << b.w << "x" << b.h;
    EXPECT_GE(b.y, area.y - 0.5f);
    EXPECT_LE(b.right(), area.right() + 0.5f);
    EXPECT_LE(b.bottom(), area.bottom() + 0.5f);
  }
}

void expectApart(const std::vector<Box>& boxes) {
  for (size_t a = 0; a < boxes.size(); ++a)
    for (size_t b = a + 1; b < boxes.size(); ++b) {
      const Box &p = boxes[a], &q = boxes[b];
      const bool apart = p.right() <= q.x + 0.5f || q.right() <= p.x + 0.5f || p.bottom() <= q.y + 0.5f || q.bottom() <= p.y + 0.5f;
      EXPECT_TRUE(apart) << "texts " << a << " and " << b << " overlap: " << p.x << "," << p.y << " " << p.w << "x" << p.h << " / " << q.x
                         << "," << q.y << " " << q.w << "x" << q.h;
    }
}

// Every text inside the area, none on top of another.
void expectReadable(const Canvas& c, const Primitives& prims, const Box& area) {
  const std::vector<Box> t = texts(c, prims);
  expectInside(t, area);
  expectApart(t);
}

template <class Pred>
int countOf(const Primitives& prims, Pred pred) {
  return static_cast<int>(std::count_if(prims.begin(), prims.end(), pred));
}

Array vec(std::vector<float> v) {
  Array a;
  a.shape = {static_cast<int64_t>(v.size())};
  a.data = std::move(v);
  return a;
}

std::vector<const Primitive*> fills(const Primitives& prims) {
  std::vector<const Primitive*> out;
  for (const Primitive& p : prims)
    if (p.kind == Primitive::Kind::FillRect && p.colour) out.push_back(&p);
  return out;
}

TEST(BarsPrimitives, BarsStandAtTheirValuesFromTheZeroLine) {
  const Canvas c = monoCanvas();
  const Box area{10, 20, 400, 240};
  Primitives prims;
  const Array v = vec({1.0f, -0.5f, 0.25f, 0.0f});
  const BarsLayout g = barsPrimitives(prims, c, area, v, "v", nullptr, ValueRange{-1.0f, 1.0f, true}, Colormap::Coolwarm, true);
  ASSERT_EQ(g.bars, 4);
  const auto bars = fills(prims);
  ASSERT_EQ(bars.size(), 4u);
  const float zero = g.plot.y + g.plot.h / 2, per_unit = g.plot.h / 2;
  EXPECT_NEAR(bars[0]->y0, zero - per_unit, 0.01f);
  EXPECT_NEAR(bars[0]->y1, zero, 0.01f);
  EXPECT_NEAR(bars[1]->y0, zero, 0.01f) << "a negative value hangs from the zero line";
  EXPECT_NEAR(bars[1]->y1, zero + 0.5f * per_unit, 0.01f);
  EXPECT_NEAR(bars[2]->y1 - bars[2]->y0, 0.25f * per_unit, 0.01f);
  EXPECT_EQ(bars[1]->colour->r, headColor(1).r) << "one colour per head";
  EXPECT_EQ(bars[1]->colour->g, headColor(1).g);
  for (size_t b = 0; b < bars.size(); ++b) {
    EXPECT_GE(bars[b]->x0, g.plot.x + g.bar_w * static_cast<float>(b) - 0.01f);
    EXPECT_LE(bars[b]->x1, g.plot.x + g.bar_w * static_cast<float>(b + 1) + 0.01f);
  }
  EXPECT_EQ(g.barAt(g.plot.x + g.bar_w * 2.5f), 2);
  EXPECT_EQ(g.barAt(g.plot.x - 1), -1);
  expectReadable(c, prims, area);
}

TEST(BarsPrimitives, MoreValuesThanPixelsAreAveragedOneBarPerPixel) {
  Canvas c = monoCanvas();
  c.raster_scale = 2;
  const Box area{0, 0, 300, 200};
  std::vector<float> data(100000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = i % 2 ? 1.0f : 0.0f;  // pairs average to 0.5
  Primitives prims;
  const BarsLayout g = barsPrimitives(prims, c, area, vec(data), "v", nullptr, ValueRange{0.0f, 1.0f, false}, Colormap::Viridis, false);
  EXPECT_EQ(g.bars, static_cast<int64_t>(g.plot.w * 2)) << "one bar per device pixel";
  const auto bars = fills(prims);
  ASSERT_EQ(bars.size(), static_cast<size_t>(g.bars));
  for (const Primitive* b : bars) EXPECT_NEAR(b->y1 - b->y0, g.plot.h * 0.5f, g.plot.h * 0.02f);
  EXPECT_GE(bars[0]->x1, bars[1]->x0) << "averaged bars touch, like a strip";
  expectReadable(c, prims, area);
}

TEST(BarsPrimitives, LongTokensAreTurnedAndThinnedNeverOverlapping) {
  const Canvas c = monoCanvas();
  const Box area{0, 0, 360, 260};
  std::vector<std::string> tokens;
  std::vector<float> data;
  for (int i = 0; i < 64; ++i) {
    tokens.push_back("token" + std::to_string(i));
    data.push_back(static_cast<float>(i % 7));
  }
  Primitives prims;
  barsPrimitives(prims, c, area, vec(data), "v", &tokens, ValueRange{0.0f, 6.0f, false}, Colormap::Viridis, false);
  EXPECT_GT(countOf(prims, [](const Primitive& p) { return p.kind == Primitive::Kind::Text && p.vertical; }), 4);
  expectReadable(c, prims, area);
}

TEST(CurvesPrimitives, MarkerLabelsStackAboveThePlotAndTheTimelineCutsTheSeries) {
  const Canvas c = monoCanvas();
  const Box area{0, 0, 420, 300};
  Array curves;
  curves.shape = {2, 50};
  for (int s = 0; s < 2; ++s)
    for (int x = 0; x < 50; ++x) curves.data.push_back(static_cast<float>(s + 1) * static_cast<float>(x) / 49.0f);
  const std::vector<Marker> markers{{10, "R = 10", 0}, {11, "z = 11", 0}, {12, "z = 12", 1}};
  const std::vector<Marker> levels{{1.5, "1 − ε", -1}};
  Primitives prims;
  const CurvesLayout g = curvesPrimitives(prims, c, area, curves, {"head 0", "head 1"}, "x", markers, levels, 20);
  std::vector<const Primitive*> lines, marker_labels;
  for (const Primitive& p : prims) {
    if (p.kind == Primitive::Kind::Polyline) lines.push_back(&p);
    if (p.kind == Primitive::Kind::Text && p.text.rfind("R", 0) == 0) marker_labels.push_back(&p);
    if (p.kind == Primitive::Kind::Text && p.text.rfind("z", 0) == 0) marker_labels.push_back(&p);
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NEAR(lines[0]->points[lines[0]->points.size() - 2], g.xAt(20), 0.01f) << "drawn up to the timeline's step";
  ASSERT_EQ(marker_labels.size(), 3u);
  for (const Primitive* l : marker_labels) EXPECT_LT(textBox(c, *l).bottom(), g.plot.y + 0.5f) << "above the plot";
  EXPECT_EQ(g.indexAt(g.xAt(30.2)), 30);
  expectReadable(c, prims, area);
}

TEST(CurvesPrimitives, CrowdedMarkerLabelsAreLeftOutRatherThanOverlapped) {
  const Canvas c = monoCanvas();
  const Box area{0, 0, 300, 220};
  Array curves = vec({1, 1, 0.5f, 0, 0, 0, 0, 0});
  std::vector<Marker> markers;
  for (int k = 0; k < 8; ++k) markers.push_back({3.0 + 0.05 * k, "z+R (R=2) " + std::to_string(k), k % 4});
  Primitives prims;
  curvesPrimitives(prims, c, area, curves, {"m"}, "x", markers, {});
  EXPECT_EQ(countOf(prims, [](const Primitive& p) { return p.kind == Primitive::Kind::Line && p.dashed; }), 8)
      << "every marker keeps its line";
  expectReadable(c, prims, area);
}

TEST(PointsPrimitives, SectorsAsPolygonsAndArrowLabelsInside) {
  const Canvas c = monoCanvas();
  const Box area{0, 0, 200, 260};
  Extra e;
  e.kind = ExtraKind::Points;
  e.value.shape = {3, 3};
  e.value.data = {1, 0, 0, 0, 1, 1, -1, -1, 2};
  e.markers = {{0.0, "", 0}, {2.0, "", 1}, {4.0, "", 2}};
  e.arrows = {{1.5f, 0.0f, "r₀", 0}};
  Primitives prims;
  const PointsLayout g = pointsPrimitives(prims, c, area, e);
  auto kind = [](Primitive::Kind k) { return [k](const Primitive& p) { return p.kind == k; }; };
  EXPECT_GE(countOf(prims, kind(Primitive::Kind::Polygon)), 3) << "sectors";
  EXPECT_EQ(countOf(prims, kind(Primitive::Kind::FillEllipse)), 3) << "dots";
  EXPECT_EQ(countOf(prims, kind(Primitive::Kind::Arrow)), 1);
  EXPECT_NEAR(g.cx + 1.5f * g.scale, g.cx + g.radius / 1.05f, 0.01f) << "the longest vector reaches near the rim";
  expectInside(texts(c, prims), area);
}

TEST(TokenStripPrimitives, TokensAsTextWhileTheyFitElseOneCellPerToken) {
  const Canvas c = monoCanvas();
  const Array cats = vec({0, 1, 2, 1});
  Primitives prims;
  const TokenStripLayout g = tokenStripPrimitives(prims, c, Box{0, 0, 300, 100}, cats, {"a", "bb", "ccc", "d"}, "t");
  ASSERT_EQ(g.boxes.size(), 4u);
  EXPECT_EQ(g.tokenAt(g.boxes[2].x + 1, g.boxes[2].y + 1), 2);
  expectInside(texts(c, prims), Box{0, 0, 300, 100});
  std::vector<float> many(1000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<float>(i % 5);
  std::vector<std::string> tokens(many.size(), "token");
  Primitives cells;
  const TokenStripLayout f = tokenStripPrimitives(cells, c, Box{0, 0, 300, 40}, vec(many), tokens, "t");
  EXPECT_TRUE(f.boxes.empty());
  EXPECT_EQ(f.cols, 300);
  int64_t covered = 0;
  for (const Primitive& p : cells) {
    ASSERT_EQ(p.kind, Primitive::Kind::Raster);
    EXPECT_TRUE(p.raster->categories);
    EXPECT_LE(p.y1, 40.01f);
    covered += p.raster->rows * p.raster->cols;
  }
  EXPECT_EQ(covered, 1000) << "every token a cell, none twice";
  EXPECT_EQ(f.tokenAt(f.cell_w * 2.5f, f.cell_h * 3.5f), 3 * 300 + 2);
  EXPECT_EQ(f.tokenAt(299, 39), -1) << "past the last token";
}

TEST(StackedPrimitives, SegmentsStackToTheirSumsWithALegendOfTheUsedOnes) {
  const Canvas c = monoCanvas();
  const Box area{0, 0, 400, 300};
  Array v;
  v.shape = {3, 4};
  v.data = {0.5f, 0.5f, 0, 0, 1.0f, 0, 0, 0, 0.25f, 0.25f, 0.5f, 0};
  Primitives prims;
  const StackedLayout g = stackedPrimitives(prims, c, area, v, {"a\nx", "b\ny", "c\nz"}, "position", "step");
  EXPECT_EQ(g.used, 3) << "segment 4 is 0 everywhere";
  EXPECT_EQ(countOf(prims, [](const Primitive& p) { return p.kind == Primitive::Kind::Text && p.text.rfind("step ", 0) == 0; }), 3);
  float top0 = 1e9f, top1 = 1e9f;
  for (const Primitive* f : fills(prims)) {
    if (f->y1 < g.plot.y) continue;  // legend swatches are above the plot
    if (f->x0 < g.plot.x + g.bar_w) top0 = std::min(top0, f->y0);
    else if (f->x0 < g.plot.x + 2 * g.bar_w) top1 = std::min(top1, f->y0);
  }
  EXPECT_NEAR(top0, g.plot.y, 0.5f) << "stacks of 1 reach the top";
  EXPECT_NEAR(top1, g.plot.y, 0.5f);
  expectReadable(c, prims, area);
}

TEST(LegendPrimitives, WrapsAtTheRightEdgeOrStandsInAColumn) {
  const Canvas c = monoCanvas();
  std::vector<LegendEntry> entries;
  for (int i = 0; i < 8; ++i) entries.push_back({headColor(i), "entry " + std::to_string(i)});
  Primitives row, column;
  const float row_h = legendPrimitives(row, c, Box{0, 0, 300, 0}, entries, false);
  const float col_h = legendPrimitives(column, c, Box{0, 0, 300, 0}, entries, true);
  EXPECT_GT(row_h, 0);
  EXPECT_LT(row_h, col_h);
  Primitives none;
  EXPECT_FLOAT_EQ(legendPrimitives(none, c, Box{0, 0, 300, 0}, entries, false, false), row_h) << "measuring draws nothing";
  EXPECT_TRUE(none.empty());
  expectInside(texts(c, row), Box{0, 0, 300, row_h});
  expectApart(texts(c, row));
  for (const Box& b : texts(c, column)) EXPECT_LE(b.right(), legendWidth(c, entries) + 0.5f);
}

TEST(ScalarsPrimitives, CountsInFullInColumnsThatFit) {
  EXPECT_EQ(formatScalar(16384), "16,384");
  EXPECT_EQ(formatScalar(-1234567), "-1,234,567");
  EXPECT_EQ(formatScalar(0.123456), "0.1235");
  const Canvas c = monoCanvas();
  const std::vector<ScalarItem> items{{"FLOPs saved", 123456}, {"connections", 2048}, {"span", 0.5}};
  Primitives wide, narrow;
  const float wide_h = scalarsPrimitives(wide, c, Box{0, 0, 900, 0}, items);
  const float narrow_h = scalarsPrimitives(narrow, c, Box{0, 0, 150, 0}, items);
  EXPECT_LT(wide_h, narrow_h) << "side by side where they fit";
  expectInside(texts(c, narrow), Box{0, 0, 150, narrow_h});
  expectApart(texts(c, wide));
}

}  // namespace
}  // namespace attn
