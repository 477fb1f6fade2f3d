// The extras' small plots as layouts (widgets/primitives.h): bars of one
// value per item, curves with markers and levels, points around an origin,
// bars per category, a strip of tokens on category colours, stacked bars,
// the list of scalar values, and the legend every plot shares. Each takes a
// canvas and an area, appends primitives and returns the geometry the
// screen's hover needs; the screen (widgets/bars.h, widgets/plots.h) and the
// figures (app/export/figure.cpp) replay the same primitives.
#pragma once

#include "engine/result.h"
#include "widgets/primitives.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// [SECTION] Legend
struct LegendEntry {
  Rgb8 colour;
  std::string name;
  bool outline = false;  // an outlined box (the query block) rather than a filled swatch
  float alpha = 1;       // a swatch drawn faded, its name muted (a hidden head)
};
// Swatches with names in rows that wrap at the area's right edge, or in a
// column (`vertical`), from the area's top-left. Returns the height it
// takes; `draw` false only measures. `hit` (optional) receives each entry's
// rect, for clicks.
float legendPrimitives(Primitives& out, const Canvas& c, Box area, const std::vector<LegendEntry>& entries, bool vertical,
                       bool draw = true, std::vector<Box>* hit = nullptr);
// The widest entry (swatch, gap and name): the width of a legend in a column.
float legendWidth(const Canvas& c, const std::vector<LegendEntry>& entries);

// [SECTION] Bars
// Where bars went: bar b spans [plot.x + b·bar_w, plot.x + (b+1)·bar_w] and
// holds the items [first(b), first(b+1)) (one each unless there are more
// items than device pixels: then their mean).
struct BarsLayout {
  Box plot{};
  int64_t items = 0, bars = 0;
  float bar_w = 0;
  int64_t first(int64_t bar) const { return bars > 0 ? bar * items / bars : 0; }
  int64_t barAt(float x) const;  // -1 outside the plot
};
// One bar per value from 0 (a signed range: from its zero line), coloured
// by value through `cmap`, or headColor(bar) when `colour_per_bar` (one per
// head); ticks and grid on the left, `labels` (index numbers when null)
// under the bars, upright where they fit a bar, else turned, thinned so
// none overlaps. Category values (ExtraKind::CategoryValues) are such bars
// too: one per category in its colour, numbered. Each bar is a mark,
// "array[label]" with its value, and its label names it.
BarsLayout barsPrimitives(Primitives& out, const Canvas& c, Box area, const Array& values, const std::string& array,
                          const std::vector<std::string>* labels, const ValueRange& range, Colormap cmap,
                          bool colour_per_bar);

// [SECTION] Curves
// x ↔ screen of a curves plot: x = 0 … x_hi across plot.
struct CurvesLayout {
  Box plot{};
  int64_t n = 0;
  double x_hi = 1;
  float xAt(double x) const { return plot.x + static_cast<float>(x / x_hi) * plot.w; }
  int64_t indexAt(float x) const;  // the nearest x, clamped to 0 … n−1
};
// `curves` is [S, n]: series s is y = curves[s, x] in headColor(s), named
// `names[s]` in the legend above the plot (S > 1). Markers are dashed
// vertical lines in their series' colour, their labels stacked in rows
// above the plot (stackLabels); levels are dashed horizontal lines at y =
// their x, labelled at the right. `reveal` ≥ 0 draws the series up to x =
// reveal only (a timeline playing the process), that x marked.
CurvesLayout curvesPrimitives(Primitives& out, const Canvas& c, Box area, const Array& curves,
                              const std::vector<std::string>& names, const std::string& x_axis,
                              const std::vector<Marker>& markers, const std::vector<Marker>& levels, int64_t reveal = -1);
// The series' names: `categories[s]`, else `series_axis` s.
std::vector<std::string> seriesNames(int64_t series, const std::vector<std::string>& categories, const std::string& series_axis);

// [SECTION] Points
// The disc the points were drawn in: (x, y) sits at (cx + x·scale, cy − y·scale).
struct PointsLayout {
  float cx = 0, cy = 0, radius = 0, scale = 1;
};
// ExtraKind::Points [n, 3] (x, y, category): dots in headColor(category)
// on a disc at the top of the area, the sectors between the rays
// `e.markers` (angle x; counter-clockwise of it lies category `series`)
// tinted, `e.arrows` from the origin with their labels. Equal scale on both axes.
PointsLayout pointsPrimitives(Primitives& out, const Canvas& c, Box area, const Extra& e);

// [SECTION] Token strip
// Where each token went: `boxes` when they are drawn as text, else one cell
// per token, `cols` a row, cells cell_w × cell_h from the area's top-left.
struct TokenStripLayout {
  std::vector<Box> boxes;
  Box area{};
  int64_t n = 0, cols = 0;
  float cell_w = 0, cell_h = 0;
  int64_t tokenAt(float x, float y) const;  // -1 on none
};
// ExtraKind::TokenCategories [L]: the tokens wrapped in rows, each on its
// category's colour (headColor); when they do not all fit as text, one
// cell per token in rows of about a device pixel each (a category raster
// named `key` across frames: the screen's texture cache).
TokenStripLayout tokenStripPrimitives(Primitives& out, const Canvas& c, Box area, const Array& categories_of,
                                      const std::vector<std::string>& tokens, const std::string& key);

// [SECTION] Stacked bars
struct StackedLayout {
  Box plot{};
  int64_t rows = 0, used = 0;  // bars, and the segments used in any
  float bar_w = 0;
  int64_t barAt(float x) const;  // -1 outside the plot
};
// `values` is [T, n] ≥ 0 (ExtraKind::Stacked): bar t stacks values[t, 0 … n−1]
// bottom to top, segment k in headColor(k), named `segment_axis` k+1 in the
// legend above (segments 0 everywhere are left out); `row_labels[t]` (lines
// split at '\n') under bar t, thinned to fit; `row_axis` under them.
StackedLayout stackedPrimitives(Primitives& out, const Canvas& c, Box area, const Array& values,
                                const std::vector<std::string>& row_labels, const std::string& row_axis,
                                const std::string& segment_axis);

// [SECTION] Scatter
// Points (x, y) in their colours over [0, x_hi] × [y_lo, y_hi] (the model's
// head scores: shares), with grids, ticks, the axes' names and the levels
// (dashed across, labelled at the right: a reference such as uniform
// attention's distance). Each dot is a
// mark, "(x_axis, y_axis)[label]"; its label goes beside it where it reads
// as that dot's alone and clear of the others (labelNamesOnly), else
// farther out on a leader line, else a line over the plot names the points
// left unlabelled where they crowd (the screen names a dot on hover).
// `legend` above the plot.
struct ScatterPoint {
  float x = 0, y = 0;
  Rgb8 colour;
  std::string label;
};
// What a scatter plot shows: its points, their legend, the axes' names and ranges, its levels (Marker::x is the y).
struct Scatter {
  std::vector<ScatterPoint> points;
  std::vector<LegendEntry> legend;
  std::string x_axis, y_axis;
  float x_hi = 1, y_lo = 0, y_hi = 1;
  std::vector<Marker> levels;
  bool x_counts = false;  // x counts something (layers): ticks at whole numbers only
};
struct ScatterLayout {
  Box plot{};
  std::vector<float> sx, sy;  // each point's centre
  int64_t pointAt(float x, float y, float radius) const;  // the nearest point within `radius`, −1 on none
};
ScatterLayout scatterPrimitives(Primitives& out, const Canvas& c, Box area, const Scatter& s);

// [SECTION] Scalars
// Scalar extras (ExtraKind::Scalar) as "label value" items: each label
// (a formula, wrapped) over its value, in as many columns as fit the
// area's width. Returns the height taken; `draw` false only measures.
struct ScalarItem {
  std::string label;
  double value = 0;
};
// A Scalar extra as an item: its label (its name where it has none) and its value.
ScalarItem scalarItem(const Extra& e);
float scalarsPrimitives(Primitives& out, const Canvas& c, Box area, const std::vector<ScalarItem>& items, bool draw = true);
// Counts (connections, FLOPs, bytes) in full with thousands separators
// ("16,384"); other values to four significant digits.
std::string formatScalar(double v);

}  // namespace attn
