// A view drawn once, as primitives, and replayed by a backend: the screen
// (widgets/primitives_imgui.h: an ImGui draw list, matrices through the GL
// colormap shader) and the figures (app/export/primitives_qt.h: QPainter
// onto PNG, SVG and PDF). Layout code emits rects, lines, polylines,
// polygons, text with a size and an anchor, colormap strips, rasters of a
// matrix and clip regions; what a figure shows is then the screen's drawing
// by construction. Coordinates and text sizes are pixels on screen, layout
// units in a figure. Colours of text and frames are roles the backend's
// theme resolves; data colours (a head's, a category's) are given as such.
//
// A layout takes a Canvas (the base text size, how text measures, the
// raster resolution) and an area, appends primitives, and returns the
// geometry a screen view needs for hover and clicks.
#pragma once

#include "engine/sparse.h"
#include "engine/tensor.h"
#include "widgets/colormap.h"
#include "widgets/formula.h"
#include "widgets/value_range.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn {

// The theme's text, secondary text, frame and background colours, and the
// accent that marks what a lesson points at.
enum class Role { Text, Muted, Frame, Background, Accent };

// A matrix drawn as an image into a primitive's rect: values through a
// colour scale, category indices in headColor(), or colours given per cell.
// Nothing is owned but `pixels`: the data outlives the drawing (a result).
struct Raster {
  const float* values = nullptr;       // dense [rows, cols], row-major
  const SparseRows* sparse = nullptr;  // or CSR rows, pooled by rasterize() (cells without an entry: no entry)
  const Mat* mask = nullptr;           // cells where it is 0 are drawn as no entry (grey at every length)
  int64_t rows = 0, cols = 0;
  ValueRange range;
  Colormap cmap = Colormap::Viridis;
  bool categories = false;            // values are category indices (headColor); < 0: no entry
  std::vector<uint32_t> pixels;       // when not empty: rows × cols colours 0xAABBGGRR (IM_COL32 order)
  std::string key;                    // pixels and categories: names them across frames (the screen's texture cache)
  std::string version;                // what changes the picture under the same key (the data, the query):
                                      // a new version replaces the texture of that key, never adds one
  float u0 = 0, v0 = 0, u1 = 1, v1 = 1;  // the window of the data shown, ⊂ [0, 1]² (zoom)
  bool grid = false;                  // hairlines between cells where cells are large
  // `sparse` only: each cell coloured by the sub-patterns of its entries
  // (setColor of the OR of their SparseRows::sets bits, rasterize() with
  // RasterValue::Sets); a cell without an entry takes patternBackground().
  bool sets = false;
};

// Where a pattern has no key (a connectivity cell, an image pixel): a grey a
// step off the theme's background. Set colours are setColor().
Rgb8 patternBackground(bool dark);

struct Primitive {
  // FillRect: `alpha` of the role's colour. Ellipse: inscribed in the rect.
  // Arrow: a line from (x0, y0) with a head at (x1, y1). Polyline (open) and
  // Polygon (filled): `points`. Raster: `raster` into the rect. PushClip:
  // later primitives are clipped to the rect until the matching PopClip.
  enum class Kind {
    StrokeRect, FillRect, Line, Arrow, Ellipse, FillEllipse, Polyline, Polygon, Text, ColormapStrip, Raster, PushClip, PopClip
  } kind = Kind::Line;
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // rect corners, line ends; text: the anchor point (x0, y0)
  Role role = Role::Text;
  std::optional<Rgb8> colour;  // a data colour in place of the role's
  float thickness = 0;  // strokes: 0 is a hairline
  float alpha = 1;      // 0..1, multiplies the colour
  bool dashed = false;  // Line, Polyline
  std::vector<float> points;  // Polyline, Polygon: x, y pairs
  // Text: size, which point of its box sits at the anchor (0 left/top,
  // 0.5 centre, 1 right/bottom, along the text's own axes) and whether it
  // reads bottom to top (turned 90° counter-clockwise, as an axis title).
  // `baseline`: y0 is the baseline (align_y unused): formula runs; `script`:
  // a formula's sub- or superscript, set smaller than its line.
  std::string text;
  float size = 0, align_x = 0, align_y = 0;
  bool vertical = false, bold = false, baseline = false, script = false;
  Colormap cmap = Colormap::Viridis;  // ColormapStrip: bottom is 0, top is 1
  std::shared_ptr<const Raster> raster;
  // A data mark (a dot, a bar): what it stands for, "array[index]" ("induction score[L0 H1]"), and its
  // value. `--describe` lists it with its box, and the tests hold labels to it (markRuleViolations). A
  // Text that labels a mark, and a leader Line that joins such a label to its mark, name it in `labels`.
  std::string mark;
  double mark_value = 0;
  // The area the mark claims where it is not the primitive's rect: a bar's column from its end to the
  // axis its label sits under (x0, y0, x1, y1; all 0: the rect).
  std::array<float, 4> mark_area{};
  std::string labels;
};

using Primitives = std::vector<Primitive>;

// An area a layout fills: its top-left corner and size.
struct Box {
  float x = 0, y = 0, w = 0, h = 0;
  float right() const { return x + w; }
  float bottom() const { return y + h; }
};
// Whether two boxes overlap by more than `tolerance` each way.
inline bool overlaps(const Box& a, const Box& b, float tolerance = 0) {
  return a.x + tolerance < b.right() && b.x + tolerance < a.right() && a.y + tolerance < b.bottom() && b.y + tolerance < a.bottom();
}

// Labels and ticks are set at kLabelScale × Canvas::unit: on screen that is
// the font's size, in a figure 0.85 of its base text size.
constexpr float kLabelScale = 0.85f;

// What a layout knows of the device it lays out for.
struct Canvas {
  float unit = 14;          // the base text size: titles, labels and ticks are set relative to it
  float raster_scale = 1;   // device pixels per unit: matrices are pooled to this resolution
  Colormap cmap = Colormap::Viridis;
  bool dark = true;         // the theme's background is dark (colours of pictures drawn as pixels follow it)
  bool screen = false;      // a window: panels taller than the area scroll, matrices stretch their cells to fill
                            // their panel (a page's never do)
  std::function<float(const std::string& text, float px, bool bold)> width_of;  // text advance
  std::function<float(float px)> ascent_of;                                   // baseline below a line's top
  float textWidth(const std::string& text, float px, bool bold = false) const { return width_of(text, px, bold); }
  MeasureText measure(float px, bool bold = false) const;
};

// The size of labels and ticks on `c`.
inline float labelPx(const Canvas& c) { return c.unit * kLabelScale; }

// Builders: append one primitive and return it for the rarer fields.
Primitive& addRect(Primitives& out, float x0, float y0, float x1, float y1, Role role, float thickness = 0);
Primitive& addFill(Primitives& out, float x0, float y0, float x1, float y1, Rgb8 colour, float alpha = 1);
Primitive& addFill(Primitives& out, float x0, float y0, float x1, float y1, Role role, float alpha = 1);
Primitive& addLine(Primitives& out, float x0, float y0, float x1, float y1, Role role, float thickness = 0);
Primitive& addLine(Primitives& out, float x0, float y0, float x1, float y1, Rgb8 colour, float thickness = 0);
Primitive& addText(Primitives& out, float x, float y, std::string text, float px, Role role = Role::Text, float align_x = 0,
                   float align_y = 0);
void pushClip(Primitives& out, float x0, float y0, float x1, float y1);
void popClip(Primitives& out);

// A formula (widgets/formula.h: scripts, wrapped at spaces to `max_width`,
// ≤ 0 for one line) from its top-left (x, y) at `px`: one Text run per
// script. Returns its height; `draw` false only measures.
float addFormula(Primitives& out, const Canvas& c, const std::string& text, float x, float y, float px, float max_width,
                 Role role = Role::Text, bool bold = false, bool draw = true);
float formulaHeight(const Canvas& c, const std::string& text, float px, float max_width, bool bold = false);
// Plain text broken at spaces into lines at most `max_width` wide (a word
// longer than a line gets a line of its own); explicit '\n' breaks too.
std::vector<std::string> wrapLines(const Canvas& c, const std::string& text, float px, float max_width, bool bold = false);

// [SECTION] Marks and their labels
// What a view drew of its data marks, the labels that name them and the
// leaders that join the two, each with its box on the screen or the page:
// what `--describe` writes and the rules below read.
struct MarkSheet {
  struct Mark {
    std::string id;
    Box box;
    double value = 0;
  };
  struct Label {
    std::string text, names;
    Box box;
  };
  struct Leader {
    std::string names;
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // from the label to the mark
  };
  std::vector<Mark> marks;
  std::vector<Label> labels;
  std::vector<Leader> leaders;
};
// The box of a Text primitive whose run measures w × h, its baseline
// `ascent` below its top (a turned text's box is turned too).
Box textBox(const Primitive& t, float w, float h, float ascent);
// The box a mark claims (Primitive::mark_area, else its rect).
Box markBox(const Primitive& p);
// Appends to `sheet` the marks, mark labels and leaders among `prims` as a
// figure lays them out on `c` (the screen records what it draws instead:
// widgets/primitives_imgui.h).
void recordMarks(const Primitives& prims, const Canvas& c, MarkSheet& sheet);
// Whether a label at `label` reads as naming marks[own] (the rule of
// markRuleViolations): its centre lies nearer that mark's box than any
// other's, and it covers no other mark.
bool labelNamesOnly(const Box& label, size_t own, const std::vector<Box>& marks);
// Every break of the rules for labels, one line each: a label names a mark
// that is drawn; it lies nearer its own mark than any other, or a leader
// runs from the label to it; it covers no other mark.
std::vector<std::string> markRuleViolations(const MarkSheet& sheet);

// The head of an Arrow primitive: the triangle's tip is (x1, y1), its base
// centre is where the shaft ends; both backends draw this one shape.
struct ArrowHead {
  float base_x, base_y, left_x, left_y, right_x, right_y;
};
ArrowHead arrowHead(const Primitive& arrow);

// A vertical colour bar at (x, y, w, h) for `range`: the strip, its frame,
// ticks (scaleTicks: as many as fit, at least two) with their labels at
// `text_px`, and `caption` turned along its right side: smaller where it is
// longer than the bar, left out where it would not fit even at 0.6× (the
// panel's title names what the bar shows). `measure` sets text.
void colorbarPrimitives(Primitives& out, float x, float y, float w, float h, Colormap cmap, const ValueRange& range,
                        const std::string& caption, float text_px, const MeasureText& measure);

// Labels along an axis (a plot's markers: adaptive span's R and z), each
// centred on its x and kept inside [left, right], stacked in rows so none
// overlaps another: a label takes the first row whose last label ends `gap`
// before it; past `max_rows` rows, the row that ends first. The screen and
// the figures place marker labels with this one rule.
struct LabelSlot {
  int row = 0;
  float left = 0;  // the label's left edge
};
struct LabelRows {
  std::vector<LabelSlot> placed;  // in the order of `centres` (not "slots": a Qt macro)
  int rows = 0;                  // rows used
};
LabelRows stackLabels(const std::vector<float>& centres, const std::vector<float>& widths, float left, float right, float gap,
                      int max_rows = 3);

}  // namespace attn
