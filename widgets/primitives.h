// A view drawn once, as primitives, and replayed by a backend: the screen
// (widgets/primitives_imgui.h: an ImGui draw list) and the figures
// (app/export: QPainter onto PNG, SVG and PDF). Layout code emits rects,
// lines, colormap strips and text with a size and an anchor; what a figure
// shows is then the screen's drawing by construction. Coordinates and text
// sizes are pixels on screen, layout units in a figure. Colours of text and
// frames are roles the backend's theme resolves.
//
// Drawn this way so far: the colour bar (colorbarPrimitives) and the
// annotations a lesson draws over a matrix (widgets/annotations.h). Plots'
// marker labels share their placement (stackLabels). The other views are
// still drawn twice, by widgets/ and by app/export/figure.cpp.
#pragma once

#include "widgets/colormap.h"
#include "widgets/formula.h"
#include "widgets/value_range.h"

#include <string>
#include <vector>

namespace attn {

// The theme's text, secondary text, frame and background colours, and the
// accent that marks what a lesson points at.
enum class Role { Text, Muted, Frame, Background, Accent };

struct Primitive {
  // FillRect: `alpha` of the role's colour. Ellipse: inscribed in the rect.
  // Arrow: a line from (x0, y0) with a head at (x1, y1).
  enum class Kind { StrokeRect, FillRect, Line, Arrow, Ellipse, Text, ColormapStrip } kind = Kind::Line;
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // rect corners, line ends; text: the anchor point (x0, y0)
  Role role = Role::Text;
  float thickness = 0;  // strokes: 0 is a hairline
  float alpha = 1;      // 0..1, multiplies the role's colour
  // Text: size, which point of its box sits at the anchor (0 left/top,
  // 0.5 centre, 1 right/bottom, along the text's own axes) and whether it
  // reads bottom to top (turned 90° counter-clockwise, as an axis title).
  std::string text;
  float size = 0, align_x = 0, align_y = 0;
  bool vertical = false;
  Colormap cmap = Colormap::Viridis;  // ColormapStrip: bottom is 0, top is 1
};

using Primitives = std::vector<Primitive>;

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
