// The figures' backend for widgets/primitives.h: replays primitives with
// QPainter onto PNG, SVG and PDF devices in the figure's theme (the screen's
// backend is widgets/primitives_imgui.h). Also the figure's theme, its
// canvas for layouts, and the image helpers rasters are drawn with.
#pragma once

#include "engine/tensor.h"
#include "widgets/primitives.h"

#include <QColor>
#include <QImage>
#include <QPainter>
#include <QRectF>
#include <QString>

#include <cstdint>
#include <limits>
#include <string>

namespace attn {

struct Theme {
  QColor background, text, muted, frame, accent;
};
Theme themeFor(bool dark);

QColor toQColor(Rgb8 c, int alpha = 255);
inline QString qs(const std::string& s) { return QString::fromStdString(s); }

// A page being painted: the painter, its theme and colormap, the base text
// size and the raster resolution.
struct Painter {
  QPainter& p;
  Theme theme;
  Colormap cmap;
  double unit;          // base text size in device units; scales with the figure
  double raster_scale;  // image pixels per device unit: 1 for PNG, 2 for SVG/PDF (sharp when zoomed in)
};

void drawPrimitives(Painter& ctx, const Primitives& prims);
// Text widths of the figure font (DejaVu Sans) at `px` × scale.
MeasureText figureMeasure(double px);
// The page as a layout's canvas: the figure font, base size ctx.unit.
Canvas figureCanvas(const Painter& ctx);
// A page's canvas before there is a painter (a figure measuring its height).
Canvas figureCanvas(double unit, double raster_scale = 1.0, Colormap cmap = Colormap::Viridis, bool dark = false);

// Cells become one rect each up to this many; beyond, one image (a vector
// file with a million rects helps nobody).
constexpr int64_t kMaxVectorCells = 512 * 512;
// A cell of a pooled image that holds no entry (masked, or not in the pattern).
constexpr float kNoEntry = -std::numeric_limits<float>::infinity();


// [rows, cols] → an image of the same size, one colour per value.
template <class ColourOf>
QImage colourise(const Mat& m, ColourOf colour) {
  QImage img(static_cast<int>(m.cols()), static_cast<int>(m.rows()), QImage::Format_RGB32);
  for (int64_t i = 0; i < m.rows(); ++i) {
    QRgb* line = reinterpret_cast<QRgb*>(img.scanLine(static_cast<int>(i)));
    for (int64_t j = 0; j < m.cols(); ++j) line[j] = colour(m(i, j));
  }
  return img;
}

// Draws `img` into `target` with hard pixel edges: upscaled by a whole factor
// (nearest neighbour) to about device resolution first, so an SVG or PDF
// viewer's smoothing cannot blur a 64×64 image into mush.
void drawCrispImage(Painter& ctx, const QRectF& target, QImage img);

}  // namespace attn
