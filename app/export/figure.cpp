// Figure export: the views drawn with QPainter onto QImage (PNG),
// QSvgGenerator (SVG) and QPdfWriter (PDF).
//
// [SECTION] Painting helpers (theme, text, colorbar, images, legends)
// [SECTION] Matrix panel (heatmap with token axes, key bands and overlays)
// [SECTION] Views (heatmap, heads, lines, family)
// [SECTION] Extras (bars, curves with markers, categories, scalars)
// [SECTION] Image view (the pattern on the raster image, connectivity)
// [SECTION] Walkthrough view (stages with category strips, points, bars)
// [SECTION] Compare view (a pattern against full attention)
// [SECTION] Output devices and atomic write
#include "app/export/figure.h"
#include "app/export/figure_paint.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/files.h"
#include "widgets/annotations.h"
#include "widgets/formula.h"
#include "widgets/primitives.h"
#include "widgets/value_range.h"

#include <QFontMetricsF>
#include <QImage>
#include <QLinearGradient>
#include <QPainter>
#include <QPainterPath>
#include <QPdfWriter>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <numbers>

namespace attn {

// [SECTION] Text helpers shared with the handouts (figure_paint.h)

QFont figureFont(double px, bool bold) {
  QFont f("DejaVu Sans");
  f.setPixelSize(std::max(1, static_cast<int>(std::lround(px))));
  f.setBold(bold);
  return f;
}

// Height of `text` in `font`, word-wrapped to `width` (0 for no text). Text in
// a figure is never elided nor clipped: a box that is too narrow wraps, and
// the layout makes room for the lines.
double wrappedHeight(const QFont& font, double width, const QString& text) {
  if (text.isEmpty()) return 0;
  return QFontMetricsF(font).boundingRect(QRectF(0, 0, std::max(1.0, width), 1e6), Qt::TextWordWrap, text).height();
}

QFont scaledFont(const QFont& font, double scale) {
  QFont f = font;
  f.setPixelSize(std::max(1, static_cast<int>(std::lround(font.pixelSize() * scale))));
  return f;
}

// A formula (widgets/formula.h: sub- and superscripts from caret text) in
// `font`, wrapped to `width`.
std::vector<FormulaLine> formulaLines(const QFont& font, double width, const QString& text) {
  const MeasureText measure = [&](const std::string& s, float scale) {
    return static_cast<float>(QFontMetricsF(scaledFont(font, scale)).horizontalAdvance(QString::fromStdString(s)));
  };
  return layoutFormula(text.toStdString(), static_cast<float>(font.pixelSize()), static_cast<float>(width), measure);
}

double formulaHeight(const QFont& font, double width, const QString& text) {
  if (text.isEmpty()) return 0;
  return formulaLineHeight(static_cast<float>(font.pixelSize())) * static_cast<double>(formulaLines(font, width, text).size());
}

// Draws the formula from the top-left of `area` (wrapped to its width); returns its height.
double drawFormula(QPainter& p, const QRectF& area, const QString& text, const QFont& font, const QColor& colour) {
  if (text.isEmpty()) return 0;
  const std::vector<FormulaLine> lines = formulaLines(font, area.width(), text);
  const double px = font.pixelSize(), line_h = formulaLineHeight(static_cast<float>(px));
  const double ascent = QFontMetricsF(font).ascent();
  p.setPen(colour);
  for (size_t l = 0; l < lines.size(); ++l) {
    // The baseline leaves the headroom a superscript needs.
    const double baseline = area.top() + line_h * static_cast<double>(l) + (line_h - px) + ascent * 0.92;
    for (const FormulaRun& r : lines[l].runs) {
      p.setFont(scaledFont(font, r.scale));
      p.drawText(QPointF(area.left() + r.x, baseline + r.dy), QString::fromStdString(r.text));
    }
  }
  return line_h * static_cast<double>(lines.size());
}

namespace {

// [SECTION] Painting helpers
struct Theme {
  QColor background, text, muted, frame, accent;
};

Theme themeFor(bool dark) {
  const QColor accent(255, 158, 38);  // the screen's focus colour (ImGuiCol_PlotHistogram)
  if (dark) return {QColor(24, 26, 30), QColor(235, 235, 235), QColor(150, 150, 155), QColor(90, 90, 95), accent};
  return {QColor(255, 255, 255), QColor(20, 20, 20), QColor(110, 110, 115), QColor(160, 160, 165), QColor(230, 110, 0)};
}

QColor toQColor(Rgb8 c, int alpha = 255) { return QColor(c.r, c.g, c.b, alpha); }

QString qs(const std::string& s) { return QString::fromStdString(s); }

// The margin token labels take beside a matrix: the longest label at the
// largest label size (0.85 units) and a gap, capped at `cap` so long tokens
// cannot squeeze the matrix away. The figure's height and the matrix panel
// measure it alike.
double labelMargin(double unit, const std::vector<std::string>& labels, double cap) {
  const QFontMetricsF fm(figureFont(unit * 0.85));
  double w = 0;
  for (const std::string& l : labels) w = std::max(w, fm.horizontalAdvance(qs(l)));
  return std::min(w + unit * 0.8, cap);
}

// "16384" → "16,384".
QString grouped(int64_t n) {
  QString s = QString::number(n);
  for (int i = static_cast<int>(s.size()) - 3; i > (n < 0 ? 1 : 0); i -= 3) s.insert(i, ',');
  return s;
}

QString formatTick(float v) { return QString::fromStdString(formatValueShort(v)); }


struct Painter {
  QPainter& p;
  Theme theme;
  Colormap cmap;
  double unit;          // base text size in device units; scales with the figure
  double raster_scale;  // image pixels per device unit: 1 for PNG, 2 for SVG/PDF (sharp when zoomed in)
};

// Vertical colorbar with ticks in `area` (fewer ticks on a short bar, so labels never overlap).
// Replays primitives (widgets/primitives.h) with the figure's theme: the
// figures' backend, the screen's is widgets/primitives_imgui.h.
void drawPrimitives(Painter& ctx, const Primitives& prims) {
  QPainter& p = ctx.p;
  auto colourOf = [&](Role r, float alpha = 1.0f) {
    QColor c = r == Role::Text    ? ctx.theme.text
               : r == Role::Muted ? ctx.theme.muted
               : r == Role::Frame ? ctx.theme.frame
               : r == Role::Background ? ctx.theme.background
                                  : ctx.theme.accent;
    c.setAlphaF(c.alphaF() * std::clamp(alpha, 0.0f, 1.0f));
    return c;
  };
  p.save();
  p.setRenderHint(QPainter::Antialiasing, true);
  for (const Primitive& pr : prims) {
    const QRectF rect(QPointF(pr.x0, pr.y0), QPointF(pr.x1, pr.y1));
    const QPen pen(colourOf(pr.role, pr.alpha), pr.thickness);
    p.setBrush(Qt::NoBrush);
    switch (pr.kind) {
      case Primitive::Kind::StrokeRect:
        p.setPen(pen);
        p.drawRect(rect);
        break;
      case Primitive::Kind::FillRect: p.fillRect(rect, colourOf(pr.role, pr.alpha)); break;
      case Primitive::Kind::Line:
        p.setPen(pen);
        p.drawLine(QPointF(pr.x0, pr.y0), QPointF(pr.x1, pr.y1));
        break;
      case Primitive::Kind::Arrow: {
        const ArrowHead h = arrowHead(pr);
        p.setPen(pen);
        p.drawLine(QPointF(pr.x0, pr.y0), QPointF(h.base_x, h.base_y));
        p.setPen(Qt::NoPen);
        p.setBrush(colourOf(pr.role, pr.alpha));
        const QPointF tri[3] = {QPointF(pr.x1, pr.y1), QPointF(h.left_x, h.left_y), QPointF(h.right_x, h.right_y)};
        p.drawPolygon(tri, 3);
        break;
      }
      case Primitive::Kind::Ellipse:
        p.setPen(pen);
        p.drawEllipse(rect.normalized());
        break;
      case Primitive::Kind::ColormapStrip: {
        // One gradient-filled rect (a <linearGradient> in SVG), bottom = 0.
        QLinearGradient g(rect.bottomLeft(), rect.topLeft());
        constexpr int stops = 32;
        for (int i = 0; i <= stops; ++i)
          g.setColorAt(static_cast<double>(i) / stops, toQColor(colormapAt(pr.cmap, static_cast<float>(i) / stops)));
        p.fillRect(rect, g);
        break;
      }
      case Primitive::Kind::Text: {
        const QFont font = figureFont(pr.size);
        const QFontMetricsF fm(font);
        const QString text = qs(pr.text);
        const double w = fm.horizontalAdvance(text), h = fm.height();
        p.setFont(font);
        p.setPen(colourOf(pr.role, pr.alpha));
        p.save();
        p.translate(pr.x0, pr.y0);
        if (pr.vertical) p.rotate(-90);  // reads bottom to top, as on screen
        p.drawText(QPointF(-pr.align_x * w, -pr.align_y * h + fm.ascent()), text);
        p.restore();
        break;
      }
    }
  }
  p.restore();
}

MeasureText figureMeasure(double px) {
  return [px](const std::string& s, float scale) {
    return static_cast<float>(QFontMetricsF(figureFont(px * scale)).horizontalAdvance(qs(s)));
  };
}

// The colour bar: the screen's own layout (colorbarPrimitives), in figure units.
void drawColorbar(Painter& ctx, const QRectF& area, const ValueRange& range, const QString& label) {
  const double px = ctx.unit * 0.8;
  Primitives prims;
  colorbarPrimitives(prims, static_cast<float>(area.left()), static_cast<float>(area.top()), static_cast<float>(area.width()),
                     static_cast<float>(area.height()), ctx.cmap, range, label.toStdString(), static_cast<float>(px),
                     figureMeasure(px));
  drawPrimitives(ctx, prims);
}

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
void drawCrispImage(Painter& ctx, const QRectF& target, QImage img) {
  const double k = std::floor(std::min(target.width() * ctx.raster_scale / img.width(),
                                       target.height() * ctx.raster_scale / img.height()));
  if (k >= 2)
    img = img.scaled(static_cast<int>(img.width() * k), static_cast<int>(img.height() * k), Qt::IgnoreAspectRatio,
                     Qt::FastTransformation);
  // What is left is a scale below 2: nearest neighbour would double every
  // n-th pixel and draw bands; a smooth scale blends one pixel at each edge.
  const double rest = std::max(target.width() * ctx.raster_scale / img.width(), target.height() * ctx.raster_scale / img.height());
  ctx.p.save();
  ctx.p.setRenderHint(QPainter::SmoothPixmapTransform, std::abs(rest - std::round(rest)) > 0.01);
  ctx.p.drawImage(target, img);
  ctx.p.restore();
}

// A legend: swatches with names in a row (wrapped) or a column. Returns its
// height; with draw = false only measures.
struct LegendEntry {
  QColor colour;
  QString name;
  bool outline = false;  // an outlined box (the query block) rather than a filled swatch
};

double layoutLegend(Painter& ctx, const QRectF& area, const std::vector<LegendEntry>& entries, bool vertical, bool draw) {
  QPainter& p = ctx.p;
  const QFont font = figureFont(ctx.unit * 0.85);
  const QFontMetricsF fm(font);
  p.setFont(font);
  const double sw = ctx.unit, row_h = ctx.unit * 1.6;
  double x = area.left(), y = area.top();
  for (size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& e = entries[i];
    const double w = sw + ctx.unit * 0.5 + fm.horizontalAdvance(e.name) + ctx.unit * 1.5;
    if (i > 0 && (vertical || x + w > area.right())) {
      x = area.left();
      y += row_h;
    }
    if (draw) {
      const QRectF swatch(x, y + (row_h - sw) / 2, sw, sw);
      if (e.outline) {
        p.setPen(QPen(e.colour, ctx.unit * 0.2));
        p.setBrush(Qt::NoBrush);
      } else {
        p.setPen(QPen(ctx.theme.frame, 0));
        p.setBrush(e.colour);
      }
      p.drawRect(swatch);
      p.setBrush(Qt::NoBrush);
      p.setPen(ctx.theme.text);
      p.drawText(QRectF(x + sw + ctx.unit * 0.5, y, w, row_h), Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, e.name);
    }
    x += w;
  }
  return entries.empty() ? 0 : y + row_h - area.top();
}

// Widest legend entry (swatch and name), for a legend in a column.
double legendWidth(Painter& ctx, const std::vector<LegendEntry>& entries) {
  const QFontMetricsF fm(figureFont(ctx.unit * 0.85));
  double w = 0;
  for (const LegendEntry& e : entries) w = std::max(w, fm.horizontalAdvance(e.name));
  return w + ctx.unit * 2.0;
}

// Connections are coloured by the sub-patterns that admit them
// (SparseRows::sets, named by Result::set_names), as in the GUI: setColor().
QColor setColour(int bits) { return toQColor(setColor(static_cast<unsigned>(bits))); }

// One entry per named set, and one for entries in several sets where any exist.
std::vector<LegendEntry> setLegend(const Result& r, const SparseRows& s) {
  const int n = std::max<int>(1, static_cast<int>(r.set_names.size()));
  std::vector<LegendEntry> out;
  for (int k = 0; k < n; ++k)
    out.push_back({setColour(1 << k), r.set_names.empty() ? QString("attended key") : qs(r.set_names[static_cast<size_t>(k)])});
  const bool several = std::any_of(s.sets.begin(), s.sets.end(), [](uint8_t b) { return (b & (b - 1)) != 0; });
  if (several) out.push_back({setColour(3), n == 2 ? "both" : "several"});
  return out;
}

// A panel's title, bold, wrapped to the panel's width: its height with the
// space under it (0 for no title), and drawing it.
double panelTitleHeight(Painter& ctx, double width, const QString& title) {
  if (title.isEmpty()) return 0;
  return formulaHeight(figureFont(ctx.unit * 1.05, true), width, title) + ctx.unit * 0.4;
}

double drawPanelTitle(Painter& ctx, const QRectF& area, const QString& title) {
  if (title.isEmpty()) return 0;
  return drawFormula(ctx.p, area, title, figureFont(ctx.unit * 1.05, true), ctx.theme.text) + ctx.unit * 0.4;
}

// The query the image and compare views mark.
const QColor kQueryMark(220, 20, 60);

// [SECTION] Matrix panel
struct MatrixPanel {
  const Mat* values = nullptr;         // dense [rows, cols]; may be null when `sparse` is set
  const SparseRows* sparse = nullptr;  // the same matrix as CSR: drawn through rasterize() when there is
                                       // no dense copy or it is too large for one rect per cell
  const Mat* mask = nullptr;           // optional: masked cells are grey
  const std::vector<std::string>* row_labels = nullptr;
  const std::vector<std::string>* col_labels = nullptr;
  ValueRange range;
  QString title, row_axis, col_axis;
  const Extra* position = nullptr;                        // QueryPosition overlay
  const Extra* window = nullptr;                          // QueryWindow overlay
  const std::vector<KeyBand>* bands = nullptr;            // key bands: dividers, labels above the columns
  const std::vector<std::string>* categories = nullptr;  // values are category indices, colour headColor(k)
  const std::vector<int32_t>* row_categories = nullptr;  // category per row / column: colour strips beside the axes
  const std::vector<int32_t>* col_categories = nullptr;
  const std::vector<int64_t>* row_dividers = nullptr;    // lines before these rows / columns
  const std::vector<int64_t>* col_dividers = nullptr;
  bool labels = true;
  int64_t rows() const { return values ? values->rows() : sparse->rows; }
  int64_t cols() const { return values ? values->cols() : sparse->cols; }
};

// Cells become one rect each up to this many; beyond, one image (a vector
// file with a million rects helps nobody).
constexpr int64_t kMaxVectorCells = 512 * 512;

// A cell of a pooled image that holds no entry (masked, or not in the pattern).
constexpr float kNoEntry = -std::numeric_limits<float>::infinity();

// Pools dense [rows, cols] into at most [out_rows, out_cols] cells of whole
// blockSize() blocks, keeping the value of largest magnitude (the max for
// weights, as rasterize() does for sparse rows; a signed matrix keeps its
// extremes of either sign). Masked cells are left out; a cell with nothing
// left holds kNoEntry.
Mat poolDense(const Mat& v, const Mat* mask, int64_t out_rows, int64_t out_cols) {
  const int64_t rows = v.rows(), cols = v.cols();
  const int64_t k_r = blockSize(rows, out_rows), k_c = blockSize(cols, out_cols);
  Mat out = Mat::Constant(std::max<int64_t>(1, (rows + k_r - 1) / k_r), std::max<int64_t>(1, (cols + k_c - 1) / k_c), kNoEntry);
  const bool masked = mask && mask->size();
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t y = i / k_r;
    for (int64_t j = 0; j < cols; ++j) {
      if (masked && (*mask)(i, j) == 0.0f) continue;
      float& cell = out(y, j / k_c);
      if (cell == kNoEntry || std::abs(v(i, j)) > std::abs(cell)) cell = v(i, j);
    }
  }
  return out;
}

// Draws `m` into `area` (including labels); returns the cell rectangle.
QRectF drawMatrixPanel(Painter& ctx, const QRectF& area, const MatrixPanel& m) {
  QPainter& p = ctx.p;
  const int64_t rows = m.rows(), cols = m.cols();
  const double title_h = m.title.isEmpty() ? 0 : panelTitleHeight(ctx, area.width(), m.title);
  const bool has_bands = m.bands && !m.bands->empty();
  auto labelSpace = [&](const std::vector<std::string>* labels, double cap) {
    return m.labels && labels ? labelMargin(ctx.unit, *labels, cap) : ctx.unit * 0.5;
  };
  const double label_w = labelSpace(m.row_labels, area.width() * 0.3);
  const double label_h = labelSpace(m.col_labels, area.height() * 0.3);
  const double axis = m.labels ? ctx.unit * 1.4 : 0;
  const double strip = ctx.unit * 0.6, row_strip = m.row_categories ? strip + ctx.unit * 0.15 : 0,
               col_strip = m.col_categories ? strip + ctx.unit * 0.15 : 0;
  // The cells under `band_h` of key-band labels; cell width cw, height ch.
  double cw = 0, ch = 0;
  auto layoutCells = [&](double band_h) {
    QRectF c(area.left() + axis + label_w + row_strip, area.top() + title_h + band_h + col_strip,
             area.width() - axis - label_w - row_strip, area.height() - title_h - band_h - col_strip - label_h - axis);
    // Square cells where the aspect allows, as in the papers' figures.
    const double cell = std::min(c.width() / std::max<int64_t>(cols, 1), c.height() / std::max<int64_t>(rows, 1));
    const double aspect_cols = c.width() / std::max<int64_t>(cols, 1);
    cw = rows == cols || cols <= rows ? cell : std::max(cell, std::min(aspect_cols, cell * 4));
    // A wide matrix (an extra [L, d]) may stretch its rows up to 4× as well,
    // so a 12 × 64 gate map is not drawn as a thin strip.
    ch = cols > rows ? std::max(cell, std::min(c.height() / std::max<int64_t>(rows, 1), cell * 4)) : cell;
    c.setWidth(cw * cols);
    c.setHeight(ch * rows);
    return c;
  };
  // Key-band labels wrap to their band's width: the space above the cells
  // grows to the tallest label (measured on a first layout).
  const QFont band_font = figureFont(ctx.unit * 0.8);
  auto bandLabelWidth = [&](const KeyBand& b) { return std::max(ctx.unit, (b.end - b.begin) * cw - ctx.unit * 0.3); };
  double band_h = has_bands ? ctx.unit * 1.5 : 0;
  QRectF cells = layoutCells(band_h);
  if (has_bands) {
    double text_h = 0;
    for (const KeyBand& b : *m.bands) text_h = std::max(text_h, wrappedHeight(band_font, bandLabelWidth(b), qs(b.label)));
    if (text_h + ctx.unit * 0.5 > band_h) cells = layoutCells(band_h = text_h + ctx.unit * 0.5);
  }

  drawPanelTitle(ctx, area, m.title);
  const Colormap cmap = colormapFor(m.range, ctx.cmap);
  const QColor masked_colour = ctx.theme.background.lightness() > 128 ? QColor(225, 225, 228) : QColor(50, 50, 55);
  auto colourOf = [&](float v) {
    if (v == kNoEntry) return masked_colour;
    if (m.categories) return toQColor(headColor(static_cast<int>(v)));
    return toQColor(colormapAt(cmap, scaleToUnit(m.range, v)));
  };
  p.setRenderHint(QPainter::Antialiasing, false);  // crisp cells, no seams between them
  if (m.values && rows * cols <= kMaxVectorCells) {
    p.setPen(Qt::NoPen);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const bool is_masked = m.mask && m.mask->size() && (*m.mask)(i, j) == 0.0f;
        // Slight overlap hides hairline seams between rects in viewers.
        p.fillRect(QRectF(cells.left() + j * cw, cells.top() + i * ch, cw + 0.02, ch + 0.02),
                   is_masked ? masked_colour : colourOf((*m.values)(i, j)));
      }
  } else {
    // Large matrices become one embedded image (an <image> in SVG) at the
    // figure's resolution: one rect per cell is impossible at L = 16,384
    // (2^28 cells). A sparse result is pooled by rasterize() straight from
    // its CSR rows, never through an L×L copy.
    // Each image pixel pools whole blocks of rows and columns (blockSize),
    // as rasterize() does: blocks of a fractional size beat against a
    // periodic pattern and draw moiré that is not in the data.
    const auto out_rows = static_cast<int64_t>(std::ceil(cells.height() * ctx.raster_scale));
    const auto out_cols = static_cast<int64_t>(std::ceil(cells.width() * ctx.raster_scale));
    const Mat pooled = m.sparse ? rasterize(*m.sparse, 0, rows, 0, cols, out_rows, out_cols, RasterValue::Values, kNoEntry)
                                : poolDense(*m.values, m.mask, out_rows, out_cols);
    drawCrispImage(ctx, cells, colourise(pooled, [&](float v) { return colourOf(v).rgb(); }));
  }
  p.setPen(QPen(ctx.theme.frame, 0));
  p.setBrush(Qt::NoBrush);
  p.drawRect(cells);
  // Category strips (runs of equal categories) beside the rows and above the columns.
  auto strips = [&](const std::vector<int32_t>& cats, double extent, auto&& rect) {
    for (size_t a = 0; a < cats.size();) {
      size_t b = a + 1;
      // Runs thinner than a device pixel merge into their neighbour's colour: a 4,096-long axis stays a few hundred rects.
      while (b < cats.size() && (cats[b] == cats[a] || (b - a) * extent / cats.size() < 0.5 / ctx.raster_scale)) ++b;
      p.fillRect(rect(static_cast<double>(a) / cats.size() * extent, static_cast<double>(b) / cats.size() * extent),
                 toQColor(headColor(cats[a])));
      a = b;
    }
  };
  if (m.row_categories)
    strips(*m.row_categories, cells.height(), [&](double y0, double y1) {
      return QRectF(cells.left() - row_strip, cells.top() + y0, strip, y1 - y0);
    });
  if (m.col_categories)
    strips(*m.col_categories, cells.width(), [&](double x0, double x1) {
      return QRectF(cells.left() + x0, cells.top() - col_strip, x1 - x0, strip);
    });
  // Dividers (chunk boundaries): dark under light, visible on any colour.
  for (const bool dark : {true, false}) {
    p.setPen(dark ? QPen(QColor(20, 20, 20), std::max(1.5, ctx.unit * 0.22)) : QPen(QColor(255, 255, 255), std::max(0.7, ctx.unit * 0.08)));
    // Dividers closer than 0.3 text units are thinned: a chunk of 64 at L = 65,536 would paint a solid sheet.
    double last = -1e9;
    if (m.col_dividers)
      for (const int64_t c : *m.col_dividers)
        if (cells.left() + c * cw - last >= ctx.unit * 0.3) {
          last = cells.left() + c * cw;
          p.drawLine(QPointF(last, cells.top()), QPointF(last, cells.bottom()));
        }
    last = -1e9;
    if (m.row_dividers)
      for (const int64_t r : *m.row_dividers)
        if (cells.top() + r * ch - last >= ctx.unit * 0.3) {
          last = cells.top() + r * ch;
          p.drawLine(QPointF(cells.left(), last), QPointF(cells.right(), last));
        }
  }
  p.setRenderHint(QPainter::Antialiasing, true);

  // Overlays: predicted positions (p_t) and windows [first, last] per query.
  if (m.window) {
    p.setPen(QPen(QColor(255, 255, 255), std::max(1.0, ctx.unit * 0.12)));
    for (int64_t i = 0; i < rows && 2 * i + 1 < m.window->value.size(); ++i) {
      const double a = m.window->value.data[2 * i], b = m.window->value.data[2 * i + 1];
      p.drawRect(QRectF(cells.left() + a * cw, cells.top() + i * ch, (b - a + 1) * cw, ch));
    }
  }
  if (m.position) {
    p.setPen(QPen(QColor(230, 30, 30), std::max(1.0, ctx.unit * 0.12)));
    p.setBrush(QColor(255, 80, 80));
    const double r = std::max(1.5, std::min(cw, ch) * 0.22);
    for (int64_t i = 0; i < rows && i < m.position->value.size(); ++i)
      p.drawEllipse(QPointF(cells.left() + (m.position->value.data[i] + 0.5) * cw, cells.top() + (i + 0.5) * ch), r, r);
    p.setBrush(Qt::NoBrush);
  }
  // Key bands (Transformer-XL: memory | segment τ): a divider through the
  // matrix at each band's first column, the band's name above its columns.
  if (has_bands) {
    p.setFont(band_font);
    for (const KeyBand& b : *m.bands) {
      const double x0 = cells.left() + b.begin * cw, x1 = cells.left() + b.end * cw;
      p.setPen(QPen(ctx.theme.muted, std::max(1.0, ctx.unit * 0.1)));
      p.drawLine(QPointF(x0 + ctx.unit * 0.15, cells.top() - ctx.unit * 0.3), QPointF(x1 - ctx.unit * 0.15, cells.top() - ctx.unit * 0.3));
      p.setPen(ctx.theme.text);
      const double label_w = bandLabelWidth(b);
      p.drawText(QRectF((x0 + x1 - label_w) / 2, cells.top() - band_h, label_w, band_h - ctx.unit * 0.45),
                 Qt::AlignHCenter | Qt::AlignBottom | Qt::TextWordWrap | Qt::TextDontClip, qs(b.label));
      if (b.begin <= 0 || b.begin >= cols) continue;
      // Dark under light: the divider shows on any colour of the colormap.
      p.setPen(QPen(ctx.theme.text, std::max(1.0, ctx.unit * 0.1)));
      p.drawLine(QPointF(x0, cells.top() - band_h * 0.8), QPointF(x0, cells.top()));
      p.setPen(QPen(QColor(20, 20, 20), std::max(2.0, ctx.unit * 0.3)));
      p.drawLine(QPointF(x0, cells.top()), QPointF(x0, cells.bottom()));
      p.setPen(QPen(QColor(255, 255, 255), std::max(1.0, ctx.unit * 0.12)));
      p.drawLine(QPointF(x0, cells.top()), QPointF(x0, cells.bottom()));
    }
  }

  if (!m.labels) return cells;
  p.setPen(ctx.theme.text);
  // Labels stay readable on small cells: every n-th is written (labelStride).
  const double cell_px = std::clamp(std::min(cw, ch) * 0.8, ctx.unit * 0.6, ctx.unit * 0.85);
  // Labels longer than their (capped) margin are set smaller until they fit, never cut.
  auto fittedPx = [&](const std::vector<std::string>& labels, double room) {
    const QFontMetricsF fm(figureFont(cell_px));
    double w = 0;
    for (const std::string& l : labels) w = std::max(w, fm.horizontalAdvance(qs(l)));
    return w > room ? std::max(ctx.unit * 0.3, cell_px * room / w) : cell_px;
  };
  if (m.row_labels) {
    const double font_px = fittedPx(*m.row_labels, label_w - ctx.unit * 0.3);
    p.setFont(figureFont(font_px));
    const int stride = labelStride(static_cast<float>(ch), static_cast<float>(font_px * 1.1));
    for (int64_t i = 0; i < rows && i < static_cast<int64_t>(m.row_labels->size()); i += stride)
      p.drawText(QRectF(cells.left() - row_strip - label_w, cells.top() + i * ch + ch / 2 - font_px, label_w - ctx.unit * 0.3,
                        font_px * 2),
                 Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip, qs((*m.row_labels)[static_cast<size_t>(i)]));
  }
  if (m.col_labels) {
    const double font_px = fittedPx(*m.col_labels, label_h - ctx.unit * 0.4);
    p.setFont(figureFont(font_px));
    const int stride = labelStride(static_cast<float>(cw), static_cast<float>(font_px * 1.1));
    for (int64_t j = 0; j < cols && j < static_cast<int64_t>(m.col_labels->size()); j += stride) {
      p.save();
      p.translate(cells.left() + j * cw + cw / 2, cells.bottom() + ctx.unit * 0.3);
      p.rotate(-90);
      p.drawText(QRectF(-label_h, -font_px, label_h - ctx.unit * 0.1, font_px * 2), Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip,
                 qs((*m.col_labels)[static_cast<size_t>(j)]));
      p.restore();
    }
  }
  // Axis titles: set smaller when longer than their side (a 4-row matrix), never past it.
  p.setPen(ctx.theme.muted);
  auto axisFont = [&](const QString& t, double side) {
    const double w = QFontMetricsF(figureFont(ctx.unit * 0.85)).horizontalAdvance(t);
    return figureFont(ctx.unit * 0.85 * std::clamp(side / std::max(w, 1.0), 0.5, 1.0));
  };
  if (!m.col_axis.isEmpty()) {
    p.setFont(axisFont(m.col_axis, cells.width() + label_w));
    p.drawText(QRectF(cells.left(), cells.bottom() + label_h, cells.width(), axis), Qt::AlignCenter | Qt::TextDontClip, m.col_axis);
  }
  if (!m.row_axis.isEmpty()) {
    p.setFont(axisFont(m.row_axis, cells.height()));
    p.save();
    p.translate(area.left() + axis / 2, cells.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-cells.height() / 2, -axis / 2, cells.height(), axis), Qt::AlignCenter | Qt::TextDontClip, m.row_axis);
    p.restore();
  }
  return cells;
}

QString defaultTitle(const Result& r, const FigureOptions& o) {
  const VariantInfo* info = findVariant(r.variant);
  QString t = qs(info ? info->title : r.variant);
  const bool one_head = o.view == ViewKind::Heatmap || o.view == ViewKind::Image || o.view == ViewKind::Compare;
  if (one_head && r.heads() > 1) t += QString(" — head %1").arg(o.head);
  if (o.view == ViewKind::Compare) t += " against full attention";
  return t;
}

// The figure's title and subtitle, each wrapped to the page; returns the
// height they take with the gap under them (0 with neither).
QFont titleFont(double unit) { return figureFont(unit * 1.5, true); }
QFont subtitleFont(double unit) { return figureFont(unit * 0.85); }

// Room for what drawTitle() draws, measured without drawing, for a figure
// whose height follows its content: the wrapped title and subtitle and
// 1.4 units (drawTitle's gaps take 1.1 of them).
double titleBlockHeight(double unit, double width, const QString& title, const QString& subtitle) {
  return wrappedHeight(titleFont(unit), width, title) + formulaHeight(subtitleFont(unit), width, subtitle) + unit * 1.4;
}

double drawTitle(Painter& ctx, const QRectF& area, const QString& title, const QString& subtitle) {
  double y = area.top();
  const QFont title_font = titleFont(ctx.unit), subtitle_font = subtitleFont(ctx.unit);
  if (!title.isEmpty()) {
    const double h = wrappedHeight(title_font, area.width(), title);
    ctx.p.setPen(ctx.theme.text);
    ctx.p.setFont(title_font);
    ctx.p.drawText(QRectF(area.left(), y, area.width(), h), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, title);
    y += h + ctx.unit * 0.3;
  }
  if (!subtitle.isEmpty())
    y += drawFormula(ctx.p, QRectF(area.left(), y, area.width(), 0), subtitle, subtitle_font, ctx.theme.muted);
  return y > area.top() ? y - area.top() + ctx.unit * 0.8 : 0;
}

QString subtitleFor(const Result& r) {
  const VariantInfo* info = findVariant(r.variant);
  QString s = info ? qs(info->summary) : QString();
  if (info && !info->citation.empty()) s += "   (" + qs(info->citation) + ")";
  return s;
}

MatrixPanel weightsPanel(const Result& r, int head, const ValueRange& range) {
  MatrixPanel m;
  if (!r.weights.empty()) m.values = &r.weights[static_cast<size_t>(head)];
  if (r.isSparse()) m.sparse = &r.sparse[static_cast<size_t>(head)];
  m.mask = &r.mask;
  m.row_labels = &r.q_tokens;
  m.col_labels = &r.k_tokens;
  m.range = range;
  const WeightAxes axes = weightAxes(r);
  m.row_axis = qs(axes.rows);
  m.col_axis = qs(axes.cols);
  m.position = r.firstExtra(ExtraKind::QueryPosition);
  m.window = r.firstExtra(ExtraKind::QueryWindow);
  m.bands = &r.key_bands;
  return m;
}

// Cells of `n` panels in `area` (the same layout rule as the GUI's grids).
std::vector<QRectF> gridCells(const QRectF& area, int n, double gap, double overhead) {
  const GridLayout g = bestGrid(n, static_cast<float>(area.width() + gap), static_cast<float>(area.height() + gap),
                                static_cast<float>(overhead), static_cast<float>(overhead));
  std::vector<QRectF> out;
  for (int i = 0; i < n; ++i)
    out.emplace_back(area.left() + (i % g.cols) * g.cell_w, area.top() + (i / g.cols) * g.cell_h, g.cell_w - gap,
                     g.cell_h - gap);
  return out;
}

// A matrix panel with its colorbar at the right of `cell`; the title spans both.
QRectF panelWithBar(Painter& ctx, const QRectF& cell, MatrixPanel m, const QString& bar_label = {}) {
  const double bar_w = ctx.unit * 7, title_h = drawPanelTitle(ctx, cell, m.title);
  m.title.clear();
  const QRectF cells = drawMatrixPanel(
      ctx, QRectF(cell.left(), cell.top() + title_h, cell.width() - bar_w, cell.height() - title_h), m);
  drawColorbar(ctx, QRectF(cells.right() + ctx.unit * 1.0, cells.top(), ctx.unit * 0.9, cells.height()), m.range, bar_label);
  return cells;
}

// [SECTION] Views
// The marks of a lesson's step (widgets/annotations.h) over the cells of a
// rows × cols matrix drawn whole into `cells`: the screen's layout, replayed.
void drawMarks(Painter& ctx, const QRectF& cells, int64_t rows, int64_t cols, const std::vector<Annotation>& marks) {
  if (marks.empty()) return;
  const MatrixPlacement m{static_cast<float>(cells.left()), static_cast<float>(cells.top()), static_cast<float>(cells.right()),
                          static_cast<float>(cells.bottom()), 0, 0, 1, 1, rows, cols};
  Primitives prims;
  const double px = ctx.unit * 0.85;
  annotationPrimitives(prims, m, marks, 1.0f, static_cast<float>(px), figureMeasure(px));
  drawPrimitives(ctx, prims);
}

void drawHeatmap(Painter& ctx, const QRectF& body, const Result& r, const FigureOptions& o) {
  const ValueRange range = scaledWeightsRange(weightsRange(r), o.scale, r, o.head);
  MatrixPanel m = weightsPanel(r, o.head, range);
  const double bar_w = ctx.unit * 7;
  const QRectF cells = drawMatrixPanel(ctx, QRectF(body.left(), body.top(), body.width() - bar_w, body.height()), m);
  drawColorbar(ctx, QRectF(cells.right() + ctx.unit * 1.2, cells.top(), ctx.unit * 1.1, cells.height()), range,
               qs(r.weights_label));
  drawMarks(ctx, cells, r.queries(), r.keys(), o.marks);
}

void drawHeads(Painter& ctx, const QRectF& body, const Result& r, const FigureOptions& o) {
  const ValueRange range = scaledWeightsRange(weightsRange(r), o.scale, r, o.head);
  const double bar_w = ctx.unit * 7;
  const std::vector<QRectF> grid = gridCells(QRectF(body.left(), body.top(), body.width() - bar_w, body.height()),
                                             r.heads(), ctx.unit, ctx.unit * 3);
  double top = body.bottom(), bottom = body.top();
  for (int h = 0; h < r.heads(); ++h) {
    MatrixPanel m = weightsPanel(r, h, range);
    m.title = static_cast<size_t>(h) < o.panel_titles.size() ? qs(o.panel_titles[static_cast<size_t>(h)])
                                                             : QString("head %1").arg(h);
    m.labels = r.queries() <= 24 && grid[static_cast<size_t>(h)].width() > ctx.unit * 16;
    const QRectF cells = drawMatrixPanel(ctx, grid[static_cast<size_t>(h)], m);
    if (h == o.head) drawMarks(ctx, cells, r.queries(), r.keys(), o.marks);
    top = std::min(top, cells.top());
    bottom = std::max(bottom, cells.bottom());
  }
  drawColorbar(ctx, QRectF(body.right() - bar_w + ctx.unit * 1.2, top, ctx.unit * 1.1, bottom - top), range,
               qs(r.weights_label));
}

void drawLines(Painter& ctx, const QRectF& body, const Result& r, const FigureOptions& o) {
  QPainter& p = ctx.p;
  const int64_t lq = r.queries(), lk = r.keys();
  const double legend_h = ctx.unit * 2;
  const QRectF area(body.left(), body.top() + legend_h, body.width(), body.height() - legend_h);
  const double col_w = std::min(area.width() * 0.3, ctx.unit * 12);
  const double left_x = area.center().x() - ctx.unit * 8, right_x = area.center().x() + ctx.unit * 8;
  const double row_q = area.height() / std::max<int64_t>(lq, 1), row_k = area.height() / std::max<int64_t>(lk, 1);
  auto visible = [&](int h) { return o.heads_visible.empty() || (h < static_cast<int>(o.heads_visible.size()) && o.heads_visible[static_cast<size_t>(h)]); };
  // Legend: one colour per head.
  p.setFont(figureFont(ctx.unit * 0.85));
  double x = body.left();
  for (int h = 0; h < r.heads(); ++h) {
    if (!visible(h)) continue;
    p.fillRect(QRectF(x, body.top() + ctx.unit * 0.4, ctx.unit, ctx.unit), toQColor(headColor(h)));
    p.setPen(ctx.theme.text);
    p.drawText(QRectF(x + ctx.unit * 1.3, body.top(), ctx.unit * 5, ctx.unit * 1.8), Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip,
               QString("head %1").arg(h));
    x += ctx.unit * 6.5;
  }
  for (int h = 0; h < r.heads(); ++h) {
    if (!visible(h)) continue;
    const Mat& w = r.weights[static_cast<size_t>(h)];
    for (int64_t i = 0; i < lq; ++i)
      for (int64_t j = 0; j < lk; ++j) {
        const float a = lineOpacity(w(i, j), r.weights_stats);
        if (a < 0.01f) continue;  // invisible; keeps vector files small
        p.setPen(QPen(toQColor(headColor(h), static_cast<int>(a * 255)), ctx.unit * 0.18));
        p.drawLine(QPointF(left_x, area.top() + (i + 0.5) * row_q), QPointF(right_x, area.top() + (j + 0.5) * row_k));
      }
  }
  const double font_px = std::clamp(std::min(row_q, row_k) * 0.7, ctx.unit * 0.45, ctx.unit * 1.0);
  p.setFont(figureFont(font_px));
  p.setPen(ctx.theme.text);
  const int sq = labelStride(static_cast<float>(row_q), static_cast<float>(font_px * 1.1));
  const int sk = labelStride(static_cast<float>(row_k), static_cast<float>(font_px * 1.1));
  for (int64_t i = 0; i < lq; i += sq)
    p.drawText(QRectF(left_x - col_w - ctx.unit * 0.4, area.top() + (i + 0.5) * row_q - font_px, col_w, font_px * 2),
               Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip, qs(r.q_tokens[static_cast<size_t>(i)]));
  for (int64_t j = 0; j < lk; j += sk)
    p.drawText(QRectF(right_x + ctx.unit * 0.4, area.top() + (j + 0.5) * row_k - font_px, col_w, font_px * 2),
               Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, qs(r.k_tokens[static_cast<size_t>(j)]));
}

// Every member on one colour scale (the union of their ranges, so equal
// colours are equal weights) with one colour bar at the right.
void drawFamily(Painter& ctx, const QRectF& body, const std::vector<Result>& results, const FigureOptions& o) {
  std::vector<const Result*> members;
  for (const Result& r : results) members.push_back(&r);
  const ValueRange range = scaledWeightsRange(sharedWeightsRange(members), o.scale, results[0], o.head);
  const double bar_w = ctx.unit * 7;
  const std::vector<QRectF> grid = gridCells(QRectF(body.left(), body.top(), body.width() - bar_w, body.height()),
                                             static_cast<int>(results.size()), ctx.unit * 1.5, ctx.unit * 8);
  double top = body.bottom(), bottom = body.top();
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    MatrixPanel m = weightsPanel(r, 0, range);
    m.title = qs(r.variant);
    const QRectF cells = drawMatrixPanel(ctx, grid[i], m);
    if (i == 0) drawMarks(ctx, cells, r.queries(), r.keys(), o.marks);  // the subject, as the screen marks it
    top = std::min(top, cells.top());
    bottom = std::max(bottom, cells.bottom());
  }
  drawColorbar(ctx, QRectF(body.right() - bar_w + ctx.unit * 1.2, top, ctx.unit * 1.1, bottom - top), range,
               "weight (shared scale)");
}

// [SECTION] Extras

// One bar per value (TokenValues [L], HeadValues [H]), coloured headColor(i)
// when `colour_per_bar`. More values than device pixels are averaged in
// groups, one bar per pixel (a 16,384-long span strip stays readable).
void drawBars(Painter& ctx, const QRectF& area, const Extra& e, const std::vector<std::string>& labels,
              bool colour_per_bar) {
  QPainter& p = ctx.p;
  const double title_h = drawPanelTitle(ctx, area, qs(e.label));
  const QRectF plot(area.left() + ctx.unit * 3, area.top() + title_h + ctx.unit * 0.4, area.width() - ctx.unit * 3,
                    area.height() - title_h - ctx.unit * 5.4);
  const int64_t n = e.value.size();
  const int64_t bars = std::clamp<int64_t>(static_cast<int64_t>(plot.width() * ctx.raster_scale), 1, std::max<int64_t>(n, 1));
  const ValueRange range = extraRange(e);
  const float lo = range.lo, hi = range.hi;
  const double bw = plot.width() / static_cast<double>(bars);
  const double zero_y = plot.bottom() - plot.height() * (0 - lo) / (hi - lo);
  p.setRenderHint(QPainter::Antialiasing, false);
  for (int64_t b = 0; b < bars; ++b) {
    const int64_t first = b * n / bars, last = (b + 1) * n / bars;
    double sum = 0;
    for (int64_t i = first; i < last; ++i) sum += e.value.data[static_cast<size_t>(i)];
    const double v = sum / static_cast<double>(std::max<int64_t>(last - first, 1));
    const double y = plot.bottom() - plot.height() * (v - lo) / (hi - lo);
    const QColor c = colour_per_bar ? toQColor(headColor(static_cast<int>(b))) : toQColor(colormapAt(ctx.cmap, 0.35f));
    const double gap = bars == n && bw > 3 ? bw * 0.1 : 0;  // averaged bars touch, like a strip
    p.fillRect(QRectF(plot.left() + b * bw + gap, std::min(y, zero_y), bw - 2 * gap, std::abs(zero_y - y)), c);
  }
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setPen(QPen(ctx.theme.frame, 0));
  p.drawLine(QPointF(plot.left(), zero_y), QPointF(plot.right(), zero_y));
  p.setFont(figureFont(ctx.unit * 0.7));
  p.setPen(ctx.theme.text);
  for (const float t : niceTicks(lo, hi, 4)) {
    const double y = plot.bottom() - plot.height() * (t - lo) / (hi - lo);
    p.drawText(QRectF(area.left(), y - ctx.unit, ctx.unit * 2.7, ctx.unit * 2), Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip,
               formatTick(t));
  }
  // Labels of the bars' first values; upright when they fit under a bar.
  const QFontMetricsF fm(p.font());
  double widest = 0;
  for (const std::string& l : labels) widest = std::max(widest, fm.horizontalAdvance(qs(l)));
  const bool upright = widest <= bw * 0.95;
  const int stride = labelStride(static_cast<float>(bw), static_cast<float>(upright ? widest + ctx.unit * 0.4 : ctx.unit * 0.8));
  for (int64_t b = 0; b < bars; b += stride) {
    const size_t i = static_cast<size_t>(b * n / bars);
    if (i >= labels.size()) break;
    if (upright) {
      p.drawText(QRectF(plot.left() + b * bw, plot.bottom() + ctx.unit * 0.2, bw, ctx.unit * 1.2), Qt::AlignHCenter | Qt::AlignTop | Qt::TextDontClip,
                 qs(labels[i]));
      continue;
    }
    p.save();
    p.translate(plot.left() + (b + 0.5) * bw, plot.bottom() + ctx.unit * 0.3);
    p.rotate(-90);
    p.drawText(QRectF(-ctx.unit * 4.6, -ctx.unit * 0.5, ctx.unit * 4.5, ctx.unit), Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip,
               qs(labels[i]));
    p.restore();
  }
}

// Curves [S, n]: series s is y over x = 0 … n−1, drawn in headColor(s) with
// axes, ticks, a legend (S > 1) and the extra's markers as labelled dashed
// lines (adaptive span: R and z on the ramp m_z(x)). Marker labels that
// would collide are stacked on up to three rows above the plot, in their
// line's colour; the lines stop at the plot so they never cross a label.
void drawCurves(Painter& ctx, const QRectF& area, const Extra& e) {
  QPainter& p = ctx.p;
  const double title_h = drawPanelTitle(ctx, area, qs(e.label));
  const int64_t series = e.value.rank() >= 2 ? e.value.shape[0] : 1;
  const int64_t n = e.value.shape.empty() ? 0 : e.value.shape.back();
  const double left = area.left() + ctx.unit * 3.6, right = area.right() - ctx.unit * 1.2;
  const double x_hi = std::max<double>(static_cast<double>(n - 1), 1.0);
  auto xAt = [&](double x) { return left + (right - left) * x / x_hi; };

  // Marker labels in rows above the plot (stackLabels: the screen's rule too).
  p.setFont(figureFont(ctx.unit * 0.8));
  const QFontMetricsF fm(p.font());
  std::vector<float> centres, widths;
  for (const Marker& mk : e.markers) {
    centres.push_back(static_cast<float>(xAt(mk.x)));
    widths.push_back(static_cast<float>(fm.horizontalAdvance(qs(mk.label))));
  }
  const LabelRows labels = stackLabels(centres, widths, static_cast<float>(left), static_cast<float>(right),
                                       static_cast<float>(ctx.unit * 0.5));
  std::vector<LegendEntry> legend;
  if (series > 1)
    for (int64_t s = 0; s < series; ++s)
      legend.push_back({toQColor(headColor(static_cast<int>(s))),
                        s < static_cast<int64_t>(e.categories.size())
                            ? qs(e.categories[static_cast<size_t>(s)])
                            : QString("%1 %2").arg(qs(e.row_axis.empty() ? "series" : e.row_axis)).arg(s)});
  const QRectF legend_area(left, 0, right - left, 0);
  const double legend_h = layoutLegend(ctx, legend_area, legend, false, false);
  const double row_h = ctx.unit * 1.25;
  const QRectF plot(left, area.top() + title_h + ctx.unit * 0.4 + labels.rows * row_h, right - left,
                    area.height() - title_h - ctx.unit * 0.4 - labels.rows * row_h - ctx.unit * 3.2 - legend_h);
  if (plot.height() <= ctx.unit) return;
  float top = e.stats.max;
  for (const Marker& l : e.levels) top = std::max(top, static_cast<float>(l.x));
  const float lo = std::min(0.0f, e.stats.min), hi = top > lo ? top : lo + 1.0f;
  auto yAt = [&](double y) { return plot.bottom() - plot.height() * (y - lo) / (hi - lo); };

  // Grid, axes and ticks.
  p.setFont(figureFont(ctx.unit * 0.75));
  const QColor grid(ctx.theme.frame.red(), ctx.theme.frame.green(), ctx.theme.frame.blue(), 70);
  for (const float t : niceTicks(lo, hi, std::clamp(static_cast<int>(plot.height() / (ctx.unit * 2.2)), 2, 6))) {
    p.setPen(QPen(grid, 0));
    p.drawLine(QPointF(plot.left(), yAt(t)), QPointF(plot.right(), yAt(t)));
    p.setPen(ctx.theme.text);
    p.drawText(QRectF(area.left(), yAt(t) - ctx.unit, ctx.unit * 3.2, ctx.unit * 2), Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip,
               formatTick(t));
  }
  for (const float t : niceTicks(0, static_cast<float>(x_hi), std::clamp(static_cast<int>(plot.width() / (ctx.unit * 4.5)), 2, 8))) {
    p.setPen(QPen(ctx.theme.frame, 0));
    p.drawLine(QPointF(xAt(t), plot.bottom()), QPointF(xAt(t), plot.bottom() + ctx.unit * 0.3));
    p.setPen(ctx.theme.text);
    p.drawText(QRectF(xAt(t) - ctx.unit * 3, plot.bottom() + ctx.unit * 0.35, ctx.unit * 6, ctx.unit * 1.2),
               Qt::AlignHCenter | Qt::AlignTop | Qt::TextDontClip, formatTick(t));
  }
  p.setPen(QPen(ctx.theme.frame, 0));
  p.drawLine(plot.bottomLeft(), plot.bottomRight());
  p.drawLine(plot.bottomLeft(), plot.topLeft());
  p.setPen(ctx.theme.muted);
  p.setFont(figureFont(ctx.unit * 0.85));
  p.drawText(QRectF(plot.left(), plot.bottom() + ctx.unit * 1.6, plot.width(), ctx.unit * 1.4), Qt::AlignCenter | Qt::TextDontClip,
             qs(e.col_axis));

  // Series.
  for (int64_t s = 0; s < series; ++s) {
    QPolygonF line;
    for (int64_t x = 0; x < n; ++x) line << QPointF(xAt(static_cast<double>(x)), yAt(e.value.data[static_cast<size_t>(s * n + x)]));
    p.setPen(QPen(toQColor(headColor(static_cast<int>(s))), std::max(1.0, ctx.unit * 0.18)));
    p.drawPolyline(line);
  }
  // Markers: a dashed line through the plot, the label above it.
  p.setFont(figureFont(ctx.unit * 0.8));
  for (size_t k = 0; k < e.markers.size(); ++k) {
    const Marker& mk = e.markers[k];
    const QColor c = mk.series >= 0 ? toQColor(headColor(mk.series)) : ctx.theme.muted;
    const double x = xAt(mk.x);
    const double label_top = area.top() + title_h + ctx.unit * 0.4 + labels.placed[k].row * row_h;
    QPen dashed(c, std::max(1.0, ctx.unit * 0.12), Qt::DashLine);
    p.setPen(dashed);
    p.drawLine(QPointF(x, plot.top() - ctx.unit * 0.3), QPointF(x, plot.bottom()));
    p.setPen(c);
    p.drawText(QRectF(labels.placed[k].left, label_top, widths[k] + 1, row_h), Qt::AlignCenter | Qt::TextDontClip, qs(mk.label));
  }
  // Levels: a dashed line across, the label at its right end above it.
  for (const Marker& l : e.levels) {
    const double y = yAt(l.x);
    p.setPen(QPen(ctx.theme.text, std::max(1.0, ctx.unit * 0.12), Qt::DashLine));
    p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    p.setPen(ctx.theme.text);
    p.drawText(QRectF(plot.left(), y - ctx.unit * 1.3, plot.width() - ctx.unit * 0.3, ctx.unit * 1.2),
               Qt::AlignRight | Qt::AlignBottom | Qt::TextDontClip, qs(l.label));
  }
  layoutLegend(ctx, QRectF(left, area.bottom() - legend_h, right - left, legend_h), legend, false, true);
}

// Points [n, 3] (x, y, category) around the origin with tinted sectors
// between the rays (markers: angle, category) and arrows from the origin;
// equal scale on both axes, as the GUI's pointPlot().
void drawPoints(Painter& ctx, const QRectF& area, const Extra& e, const QString& title) {
  QPainter& p = ctx.p;
  const double title_h = drawPanelTitle(ctx, area, title);
  const int64_t n = e.value.rank() == 2 && e.value.shape[1] == 3 ? e.value.shape[0] : 0;
  float radius = 1e-6f;
  for (int64_t i = 0; i < n; ++i)
    radius = std::max(radius, std::hypot(e.value.data[static_cast<size_t>(3 * i)], e.value.data[static_cast<size_t>(3 * i + 1)]));
  for (const Arrow& a : e.arrows) radius = std::max(radius, std::hypot(a.x, a.y));
  const double half = std::max(1.0, std::min(area.width(), area.height() - title_h) * 0.5 - ctx.unit);
  const QPointF c(area.center().x(), area.top() + title_h + half + ctx.unit);  // right under the title
  const double k = half / (radius * 1.05);
  std::vector<Marker> rays = e.markers;
  std::sort(rays.begin(), rays.end(), [](const Marker& a, const Marker& b) { return a.x < b.x; });
  const QRectF disc(c.x() - half, c.y() - half, 2 * half, 2 * half);
  p.setPen(Qt::NoPen);
  for (size_t i = 0; i < rays.size(); ++i) {
    const double a0 = rays[i].x, a1 = i + 1 < rays.size() ? rays[i + 1].x : rays[0].x + 2 * std::numbers::pi;
    QPainterPath pie(c);
    pie.arcTo(disc, a0 * 180 / std::numbers::pi, (a1 - a0) * 180 / std::numbers::pi);  // QPainter angles are counter-clockwise, in degrees
    pie.closeSubpath();
    p.fillPath(pie, toQColor(headColor(rays[i].series), 45));
  }
  for (const Marker& ray : rays) {
    p.setPen(QPen(toQColor(headColor(ray.series), 200), std::max(1.0, ctx.unit * 0.1)));
    p.drawLine(c, QPointF(c.x() + half * std::cos(ray.x), c.y() - half * std::sin(ray.x)));
  }
  p.setPen(QPen(ctx.theme.frame, 0));
  p.setBrush(Qt::NoBrush);
  p.drawEllipse(disc);
  p.setPen(Qt::NoPen);
  const double dot = std::max(1.2, ctx.unit * 0.17);
  for (int64_t i = 0; i < n; ++i) {
    const float* q = e.value.data.data() + 3 * i;
    p.setBrush(toQColor(headColor(static_cast<int>(q[2]))));
    p.drawEllipse(QPointF(c.x() + q[0] * k, c.y() - q[1] * k), dot, dot);
  }
  p.setFont(figureFont(ctx.unit * 0.75));
  for (const Arrow& a : e.arrows) {
    const QPointF tip(c.x() + a.x * k, c.y() - a.y * k);
    p.setPen(QPen(QColor(20, 20, 20), std::max(1.5, ctx.unit * 0.16)));
    p.drawLine(c, tip);
    p.setPen(QPen(a.category >= 0 ? toQColor(headColor(a.category)) : ctx.theme.text, std::max(0.8, ctx.unit * 0.08)));
    p.drawLine(c, tip);
    p.setPen(ctx.theme.text);
    p.drawText(QPointF(tip.x() + ctx.unit * 0.2, tip.y() - ctx.unit * 0.2), qs(a.label));
  }
}

// CategoryValues [n]: one bar per category in its colour, numbered.
void drawCategoryBars(Painter& ctx, const QRectF& area, const Extra& e) {
  QPainter& p = ctx.p;
  const double title_h = drawPanelTitle(ctx, area, qs(e.label));
  const QRectF plot(area.left() + ctx.unit * 3, area.top() + title_h + ctx.unit * 0.6, area.width() - ctx.unit * 3,
                    area.height() - title_h - ctx.unit * 2.4);
  const int64_t n = e.value.size();
  const float hi = std::max(1e-6f, e.stats.max);
  if (n == 0 || plot.height() <= ctx.unit) return;
  p.setFont(figureFont(ctx.unit * 0.7));
  for (const float t : niceTicks(0, hi, 4)) {
    const double y = plot.bottom() - plot.height() * t / hi;
    p.setPen(QPen(ctx.theme.frame, 0));
    p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    p.setPen(ctx.theme.text);
    p.drawText(QRectF(area.left(), y - ctx.unit, ctx.unit * 2.7, ctx.unit * 2), Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip, formatTick(t));
  }
  const double bw = plot.width() / static_cast<double>(n);
  const int stride = labelStride(static_cast<float>(bw), static_cast<float>(ctx.unit * 1.6));
  for (int64_t i = 0; i < n; ++i) {
    const double h = plot.height() * e.value.data[static_cast<size_t>(i)] / hi;
    p.fillRect(QRectF(plot.left() + i * bw + bw * 0.1, plot.bottom() - h, bw * 0.8, h), toQColor(headColor(static_cast<int>(i))));
    if (i % stride == 0)
      p.drawText(QRectF(plot.left() + i * bw, plot.bottom() + ctx.unit * 0.2, bw * stride, ctx.unit * 1.2), Qt::AlignLeft | Qt::AlignTop | Qt::TextDontClip,
                 QString::number(i));
  }
}

// TokenCategories [L]: the tokens on their categories' colours, wrapped;
// when they do not fit as text, one cell per token in rows.
void drawTokenStrip(Painter& ctx, const QRectF& area, const Extra& e, const std::vector<std::string>& tokens) {
  QPainter& p = ctx.p;
  const double title_h = drawPanelTitle(ctx, area, qs(e.label));
  const QRectF box(area.left(), area.top() + title_h, area.width(), area.height() - title_h);
  const int64_t n = e.value.size();
  const QFont font = figureFont(ctx.unit * 0.85);
  const QFontMetricsF fm(font);
  const double row_h = ctx.unit * 1.6, pad = ctx.unit * 0.3;
  std::vector<QRectF> boxes;
  double x = box.left(), y = box.top();
  for (int64_t i = 0; i < n && y + row_h <= box.bottom(); ++i) {
    const double w = fm.horizontalAdvance(i < static_cast<int64_t>(tokens.size()) ? qs(tokens[static_cast<size_t>(i)]) : QString()) + 2 * pad;
    if (x + w > box.right() && x > box.left()) {
      x = box.left();
      y += row_h + pad;
    }
    boxes.emplace_back(x, y, w, row_h);
    x += w + pad;
  }
  p.setFont(font);
  if (static_cast<int64_t>(boxes.size()) == n && (boxes.empty() || boxes.back().bottom() <= box.bottom())) {
    for (int64_t i = 0; i < n; ++i) {
      p.fillRect(boxes[static_cast<size_t>(i)], toQColor(headColor(static_cast<int>(e.value.data[static_cast<size_t>(i)]))));
      p.setPen(QColor(255, 255, 255));
      p.drawText(boxes[static_cast<size_t>(i)], Qt::AlignCenter | Qt::TextDontClip, qs(tokens[static_cast<size_t>(i)]));
    }
    return;
  }
  const Mat cats = Eigen::Map<const Mat>(e.value.data.data(), 1, n);
  const int64_t cols = std::max<int64_t>(1, static_cast<int64_t>(box.width() * ctx.raster_scale));
  const int64_t rows = (n + cols - 1) / cols;
  Mat grid = Mat::Constant(rows, std::min(n, cols), -1.0f);
  for (int64_t i = 0; i < n; ++i) grid(i / cols, i % cols) = cats(0, i);
  const double h = std::min(box.height(), rows * row_h);
  drawCrispImage(ctx, QRectF(box.left(), box.top(), box.width(), h), colourise(grid, [&](float v) {
    return v < 0 ? ctx.theme.background.rgb() : toQColor(headColor(static_cast<int>(v))).rgb();
  }));
}

// Stacked [T, n]: bar t stacks its n values bottom to top in headColor(k), as
// the GUI's stackedBars; the legend names the used segments (col_axis k+1),
// each bar's caption (several lines) is written under it, thinned to fit.
void drawStacked(Painter& ctx, const QRectF& area, const Extra& e) {
  QPainter& p = ctx.p;
  const double title_h = drawPanelTitle(ctx, area, qs(e.label));
  const int64_t rows = e.value.rank() == 2 ? e.value.shape[0] : 0, n = e.value.rank() == 2 ? e.value.shape[1] : 0;
  auto at = [&](int64_t t, int64_t k) { return e.value.data[static_cast<size_t>(t * n + k)]; };
  int64_t used = 0;
  double hi = 0;
  for (int64_t t = 0; t < rows; ++t) {
    double sum = 0;
    for (int64_t k = 0; k < n; ++k)
      if (std::isfinite(at(t, k)) && at(t, k) > 0) {
        used = std::max(used, k + 1);
        sum += at(t, k);
      }
    hi = std::max(hi, sum);
  }
  if (!(hi > 0)) hi = 1;
  std::vector<LegendEntry> legend;
  for (int64_t k = 0; k < used; ++k)
    legend.push_back({toQColor(headColor(static_cast<int>(k))), QString("%1 %2").arg(qs(e.col_axis)).arg(k + 1)});
  const double left = area.left() + ctx.unit * 3, right = area.right() - ctx.unit * 0.5;
  const double legend_h = layoutLegend(ctx, QRectF(left, 0, right - left, 0), legend, false, false);
  int lines = 1;
  for (const std::string& l : e.row_labels) lines = std::max(lines, 1 + static_cast<int>(std::count(l.begin(), l.end(), '\n')));
  const double label_h = ctx.unit * 0.85 * lines + ctx.unit * 0.4;
  const QRectF plot(left, area.top() + title_h + ctx.unit * 0.4 + legend_h, right - left,
                    area.height() - title_h - ctx.unit * 0.4 - legend_h - label_h - ctx.unit * 1.6);
  if (rows == 0 || plot.height() <= ctx.unit) return;
  layoutLegend(ctx, QRectF(left, area.top() + title_h, right - left, legend_h), legend, false, true);
  auto yAt = [&](double v) { return plot.bottom() - plot.height() * v / hi; };
  p.setFont(figureFont(ctx.unit * 0.7));
  const QColor grid(ctx.theme.frame.red(), ctx.theme.frame.green(), ctx.theme.frame.blue(), 70);
  for (const float t : niceTicks(0, static_cast<float>(hi), 4)) {
    p.setPen(QPen(grid, 0));
    p.drawLine(QPointF(plot.left(), yAt(t)), QPointF(plot.right(), yAt(t)));
    p.setPen(ctx.theme.text);
    p.drawText(QRectF(area.left(), yAt(t) - ctx.unit, ctx.unit * 2.7, ctx.unit * 2), Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip,
               formatTick(t));
  }
  const double bw = plot.width() / static_cast<double>(rows), gap = std::min(bw * 0.12, ctx.unit * 0.3);
  p.setRenderHint(QPainter::Antialiasing, false);
  for (int64_t t = 0; t < rows; ++t) {
    double base = 0;
    for (int64_t k = 0; k < used; ++k) {
      const double v = at(t, k);
      if (!std::isfinite(v) || v <= 0) continue;
      p.fillRect(QRectF(QPointF(plot.left() + t * bw + gap, yAt(base + v)), QPointF(plot.left() + (t + 1) * bw - gap, yAt(base))),
                 toQColor(headColor(static_cast<int>(k))));
      base += v;
    }
  }
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setPen(QPen(ctx.theme.frame, 0));
  p.drawLine(plot.bottomLeft(), plot.bottomRight());
  p.setPen(ctx.theme.text);
  const QFontMetricsF fm(p.font());
  double widest = 0;
  for (const std::string& l : e.row_labels)
    for (const QString& part : qs(l).split('\n')) widest = std::max(widest, fm.horizontalAdvance(part));
  const int stride = labelStride(static_cast<float>(bw), static_cast<float>(widest + ctx.unit * 0.4));
  for (int64_t t = 0; t < rows && t < static_cast<int64_t>(e.row_labels.size()); t += stride)
    p.drawText(QRectF(plot.left() + t * bw - ctx.unit, plot.bottom() + ctx.unit * 0.2, bw + 2 * ctx.unit, label_h),
               Qt::AlignHCenter | Qt::AlignTop | Qt::TextDontClip, qs(e.row_labels[static_cast<size_t>(t)]));
  p.setPen(ctx.theme.muted);
  p.setFont(figureFont(ctx.unit * 0.85));
  p.drawText(QRectF(plot.left(), plot.bottom() + label_h + ctx.unit * 0.2, plot.width(), ctx.unit * 1.4), Qt::AlignCenter | Qt::TextDontClip,
             qs(e.row_axis));
}

// Scalar extras ("FLOPs saved against full span") as a list of values.
void drawScalars(Painter& ctx, const QRectF& area, const std::vector<const Extra*>& scalars) {
  double y = area.top() + drawPanelTitle(ctx, area, "values");
  const QFont font = figureFont(ctx.unit * 0.9);
  ctx.p.setFont(font);
  for (const Extra* e : scalars) {
    ctx.p.setPen(ctx.theme.muted);
    const double label_h = wrappedHeight(font, area.width(), qs(e->label));
    ctx.p.drawText(QRectF(area.left(), y, area.width(), label_h), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, qs(e->label));
    y += label_h;
    ctx.p.setPen(ctx.theme.text);
    const double v = e->value.size() ? e->value.data[0] : 0.0;
    // Counts (connections, FLOPs, bytes) in full with thousands separators; the rest to 4 digits.
    const bool count = v == std::floor(v) && std::abs(v) >= 1000 && std::abs(v) < 1e15;
    ctx.p.drawText(QRectF(area.left(), y, area.width(), ctx.unit * 1.5), Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip,
                   count ? grouped(static_cast<int64_t>(v)) : QString::number(v, 'g', 4));
    y += ctx.unit * 2.2;
  }
}

// The extras a figure draws as panels, and the scalars it lists in one more.
void splitExtras(const Result& r, std::vector<const Extra*>& shown, std::vector<const Extra*>& scalars) {
  for (const Extra& e : r.extras) {
    switch (e.kind) {
      case ExtraKind::Matrix:
      case ExtraKind::Weights:
      case ExtraKind::TokenValues:
      case ExtraKind::HeadValues:
      case ExtraKind::Curves:
      case ExtraKind::TokenCategories:
      case ExtraKind::CategoryValues:
      case ExtraKind::Points:
      case ExtraKind::Stacked: shown.push_back(&e); break;
      case ExtraKind::Scalar: scalars.push_back(&e); break;
      case ExtraKind::QueryPosition:
      case ExtraKind::QueryWindow:
      case ExtraKind::QueryGroup: break;  // overlays of the matrix and image views
      case ExtraKind::Data: break;        // written by compute, not drawn
    }
  }
}

// Panels of the extras view: the weights, each shown extra, the scalars.
int extrasPanels(const Result& r) {
  std::vector<const Extra*> shown, scalars;
  splitExtras(r, shown, scalars);
  return static_cast<int>(shown.size()) + 1 + (scalars.empty() ? 0 : 1);
}

void drawExtras(Painter& ctx, const QRectF& body, const Result& r, const FigureOptions& o) {
  bool marked = false;  // a lesson's marks drawn (on the first weights panel)
  std::vector<const Extra*> shown, scalars;
  splitExtras(r, shown, scalars);
  if (shown.empty() && scalars.empty()) throw InputError("--view extras: variant '" + r.variant + "' has no extras to show");
  // The main weights come first so extras are read against them.
  const std::vector<QRectF> grid = gridCells(body, extrasPanels(r), ctx.unit * 1.5, ctx.unit * 12);
  MatrixPanel main = weightsPanel(r, o.head, scaledWeightsRange(weightsRange(r), o.scale, r, o.head));
  main.title = qs(r.weights_label) + (r.heads() > 1 ? QString(" — head %1").arg(o.head) : QString());
  panelWithBar(ctx, grid[0], main);
  std::vector<std::string> indices;
  int64_t longest = 64;
  for (const Extra* e : shown) longest = std::max(longest, e->value.size());
  for (int64_t k = 0; k < longest; ++k) indices.push_back(std::to_string(k));
  std::vector<Mat> mats(shown.size());
  for (size_t i = 0; i < shown.size(); ++i) {
    const Extra& e = *shown[i];
    const QRectF& cell = grid[i + 1];
    if (e.kind == ExtraKind::TokenValues) {
      // Per-token values are labelled by their tokens, other vectors (a head's q, k) by index.
      drawBars(ctx, cell, e, e.value.size() == r.queries() ? r.q_tokens : indices, false);
      continue;
    }
    if (e.kind == ExtraKind::HeadValues) {
      std::vector<std::string> head_labels;
      for (int64_t h = 0; h < e.value.size(); ++h) head_labels.push_back(QString("h%1").arg(h).toStdString());
      drawBars(ctx, cell, e, head_labels, true);
      continue;
    }
    if (e.kind == ExtraKind::Curves) {
      drawCurves(ctx, cell, e);
      continue;
    }
    if (e.kind == ExtraKind::Points) {
      drawPoints(ctx, cell, e, qs(e.label));
      continue;
    }
    if (e.kind == ExtraKind::CategoryValues) {
      drawCategoryBars(ctx, cell, e);
      continue;
    }
    if (e.kind == ExtraKind::TokenCategories) {
      drawTokenStrip(ctx, cell, e, r.q_tokens);
      continue;
    }
    if (e.kind == ExtraKind::Stacked) {
      drawStacked(ctx, cell, e);
      continue;
    }
    // Matrix [R, C], or head o.head of Weights [H, Lq, Lk] (the one the main panel shows).
    const int64_t rows = e.value.shape[e.value.rank() - 2], cols = e.value.shape[e.value.rank() - 1];
    const int64_t heads = e.value.rank() == 3 ? e.value.shape[0] : 1;
    const int64_t head = std::min<int64_t>(o.head, heads - 1);
    mats[i] = Eigen::Map<const Mat>(e.value.data.data() + head * rows * cols, rows, cols);
    MatrixPanel m;
    m.values = &mats[i];
    m.range = extraRange(e);
    // A head of Weights [H, Lq, Lk], or the first of another axis (slice_axis "step", counted from 1).
    const bool by_head = e.slice_axis == "head";
    m.title = qs(e.label) + (heads <= 1 ? QString()
                             : by_head ? QString(" — head %1").arg(head)
                                       : QString(" — %1 %2 of %3").arg(qs(e.slice_axis)).arg(head + 1).arg(heads));
    m.row_axis = qs(e.row_axis.empty() ? "query" : e.row_axis);
    m.col_axis = qs(e.col_axis.empty() ? "key" : e.col_axis);
    if (e.kind == ExtraKind::Weights) {
      m.row_labels = &r.q_tokens;
      m.col_labels = &r.k_tokens;
      m.bands = &r.key_bands;
    } else if (r.rowsAreTokens(e)) {
      m.row_labels = &r.q_tokens;
    } else if (rows <= 64 && cols <= 64) {  // a small picture (layer × head): number its rows and columns
      m.row_labels = &indices;
      m.col_labels = &indices;
    }
    if (e.categories.empty()) {
      const QRectF cells = panelWithBar(ctx, cell, m);
      // A lesson's marks go on the first weights panel (the screen puts them on the weights beside it: same axes).
      if (e.kind == ExtraKind::Weights && !marked) {
        drawMarks(ctx, cells, rows, cols, o.marks);
        marked = true;
      }
      continue;
    }
    // Categories (which pattern each layer × head uses): distinct colours, a legend in place of the colorbar.
    m.categories = &e.categories;
    std::vector<LegendEntry> legend;
    for (size_t k = 0; k < e.categories.size(); ++k) legend.push_back({toQColor(headColor(static_cast<int>(k))), qs(e.categories[k])});
    // The title spans the cell; the legend sits beside the matrix, or under it
    // when beside it would take more than a third of the width.
    const double title_h = drawPanelTitle(ctx, cell, m.title);
    m.title.clear();
    const QRectF body(cell.left(), cell.top() + title_h, cell.width(), cell.height() - title_h);
    const double legend_w = legendWidth(ctx, legend) + ctx.unit;
    if (legend_w <= body.width() / 3) {
      const QRectF cells = drawMatrixPanel(ctx, QRectF(body.left(), body.top(), body.width() - legend_w, body.height()), m);
      layoutLegend(ctx, QRectF(cells.right() + ctx.unit, cells.top(), legend_w, cells.height()), legend, true, true);
    } else {
      const double legend_h = layoutLegend(ctx, QRectF(body.left(), 0, body.width(), 0), legend, false, false);
      drawMatrixPanel(ctx, QRectF(body.left(), body.top(), body.width(), body.height() - legend_h - ctx.unit * 0.5), m);
      layoutLegend(ctx, QRectF(body.left(), body.bottom() - legend_h, body.width(), legend_h), legend, false, true);
    }
  }
  if (!scalars.empty()) drawScalars(ctx, grid.back(), scalars);
}

// [SECTION] Image view
// Width of the raster image a sequence is drawn as: Result::image_width, or
// the smallest square that holds the keys.
int64_t imageWidth(const Result& r) {
  if (r.image_width > 0) return r.image_width;
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(r.keys())))));
}

// Nice ticks along the left and bottom of `rect`, which shows `rows` × `cols`
// cells (positions 0 … n−1 at cell centres), with axis captions.
void drawCellAxes(Painter& ctx, const QRectF& rect, int64_t rows, int64_t cols, const QString& row_caption,
                  const QString& col_caption) {
  QPainter& p = ctx.p;
  p.setFont(figureFont(ctx.unit * 0.75));
  const double ch = rect.height() / static_cast<double>(rows), cw = rect.width() / static_cast<double>(cols);
  std::vector<float> row_ticks = niceTicks(0, static_cast<float>(rows - 1), std::clamp(static_cast<int>(rect.height() / (ctx.unit * 3)), 2, 6));
  if (rows > 1 && rows <= 16 && rect.height() / static_cast<double>(rows) >= ctx.unit * 1.1) {  // few rows (heads): each one
    row_ticks.clear();
    for (int64_t i = 0; i < rows; ++i) row_ticks.push_back(static_cast<float>(i));
  }
  for (const float t : row_ticks) {
    const double y = rect.top() + (t + 0.5) * ch;
    p.setPen(QPen(ctx.theme.frame, 0));
    p.drawLine(QPointF(rect.left() - ctx.unit * 0.3, y), QPointF(rect.left(), y));
    p.setPen(ctx.theme.text);
    p.drawText(QRectF(rect.left() - ctx.unit * 4.4, y - ctx.unit, ctx.unit * 4, ctx.unit * 2), Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip,
               grouped(static_cast<int64_t>(t)));
  }
  for (const float t : niceTicks(0, static_cast<float>(cols - 1), std::clamp(static_cast<int>(rect.width() / (ctx.unit * 5)), 2, 6))) {
    const double x = rect.left() + (t + 0.5) * cw;
    p.setPen(QPen(ctx.theme.frame, 0));
    p.drawLine(QPointF(x, rect.bottom()), QPointF(x, rect.bottom() + ctx.unit * 0.3));
    p.setPen(ctx.theme.text);
    p.drawText(QRectF(x - ctx.unit * 3, rect.bottom() + ctx.unit * 0.35, ctx.unit * 6, ctx.unit * 1.2), Qt::AlignHCenter | Qt::AlignTop | Qt::TextDontClip,
               grouped(static_cast<int64_t>(t)));
  }
  p.setPen(ctx.theme.muted);
  p.setFont(figureFont(ctx.unit * 0.85));
  p.drawText(QRectF(rect.left(), rect.bottom() + ctx.unit * 1.6, rect.width(), ctx.unit * 1.4), Qt::AlignCenter | Qt::TextDontClip, col_caption);
  p.save();
  p.translate(rect.left() - ctx.unit * 5.2, rect.center().y());
  p.rotate(-90);
  p.drawText(QRectF(-rect.height() / 2, -ctx.unit * 0.7, rect.height(), ctx.unit * 1.4), Qt::AlignCenter | Qt::TextDontClip, row_caption);
  p.restore();
}

// The Sparse Transformer paper's figure: the sequence as a w×w raster
// image with the query's keys coloured by the sub-pattern that admits them
// (Image Transformer: the query block outlined, the block's memory shaded),
// next to the L×L connectivity matrix coloured by set with the query's row
// marked. Both come from the CSR rows; nothing is L×L.
void drawImageView(Painter& ctx, const QRectF& body, const Result& r, const FigureOptions& o, int64_t q) {
  QPainter& p = ctx.p;
  const SparseRows& s = r.sparse[static_cast<size_t>(o.head)];
  const int64_t lq = s.rows, lk = s.cols, w = imageWidth(r), h = (lk + w - 1) / w;
  const Extra* group = r.firstExtra(ExtraKind::QueryGroup);
  const bool light = ctx.theme.background.lightness() > 128;
  const QColor base = light ? QColor(236, 236, 239) : QColor(58, 58, 64);     // a position of the sequence
  const QColor shade = light ? QColor(190, 190, 198) : QColor(105, 105, 115);  // memory of the query's block

  std::vector<LegendEntry> legend = setLegend(r, s);
  if (group) {
    legend.push_back({shade, "keys of the block's other queries"});
    legend.push_back({ctx.theme.text, "the query's block", true});
  }
  legend.push_back({kQueryMark, QString("query %1").arg(grouped(q)), true});
  const double legend_h = layoutLegend(ctx, QRectF(body.left(), 0, body.width(), 0), legend, false, false);

  // Two square panels side by side; margins for titles, ticks and captions.
  const double margin_l = ctx.unit * 6, axis_h = ctx.unit * 3.4, gap = ctx.unit * 2;
  const double panel_w = (body.width() - gap) / 2;
  const QString image_title = QString("%1 × %2 image: query %3 (row %4, column %5)").arg(w).arg(h).arg(grouped(q)).arg(q / w).arg(q % w);
  const QString matrix_title = QString("connectivity %1 × %2: %3 connections").arg(grouped(lq), grouped(lk), grouped(s.nnz()));
  const double title_h = std::max(panelTitleHeight(ctx, panel_w, image_title), panelTitleHeight(ctx, panel_w, matrix_title));
  const double side = std::max(ctx.unit, std::min(panel_w - margin_l, body.height() - legend_h - ctx.unit - title_h - axis_h));
  const double px = side / static_cast<double>(std::max(w, h));
  const QRectF image_rect(body.left() + margin_l, body.top() + title_h, px * w, px * h);
  const double matrix_h = side * std::min(1.0, static_cast<double>(lq) / static_cast<double>(lk));
  const QRectF matrix_rect(body.left() + panel_w + gap + margin_l, body.top() + title_h, side, matrix_h);

  // [image] Sequence positions, the block's memory, the query's keys by set, the query.
  QImage img(static_cast<int>(w), static_cast<int>(h), QImage::Format_RGB32);
  img.fill(ctx.theme.background);
  auto pixel = [&](int64_t i, const QColor& c) { img.setPixel(static_cast<int>(i % w), static_cast<int>(i / w), c.rgb()); };
  for (int64_t i = 0; i < lk; ++i) pixel(i, base);
  std::vector<int64_t> block;  // queries of the query's block
  if (group && q < group->value.size()) {
    const float id = group->value.data[static_cast<size_t>(q)];
    for (int64_t i = 0; i < std::min(lq, group->value.size()); ++i)
      if (group->value.data[static_cast<size_t>(i)] == id) block.push_back(i);
    for (const int64_t i : block)
      for (int64_t e = s.rowBegin(i); e < s.rowEnd(i); ++e) pixel(s.indices[static_cast<size_t>(e)], shade);
  }
  for (int64_t e = s.rowBegin(q); e < s.rowEnd(q); ++e)
    pixel(s.indices[static_cast<size_t>(e)], setColour(s.sets.empty() ? 1 : s.sets[static_cast<size_t>(e)]));
  if (q < lk) pixel(q, kQueryMark);
  drawCrispImage(ctx, image_rect, img);
  auto X = [&](int64_t x) { return image_rect.left() + static_cast<double>(x) * px; };
  auto Y = [&](int64_t y) { return image_rect.top() + static_cast<double>(y) * px; };
  if (px >= ctx.unit * 0.45) {  // pixel grid, where pixels are big enough to count
    QVector<QLineF> lines;
    for (int64_t x = 1; x < w; ++x) lines << QLineF(X(x), image_rect.top(), X(x), image_rect.bottom());
    for (int64_t y = 1; y < h; ++y) lines << QLineF(image_rect.left(), Y(y), image_rect.right(), Y(y));
    p.setPen(QPen(light ? QColor(255, 255, 255, 150) : QColor(0, 0, 0, 120), 0));
    p.drawLines(lines);
  }
  p.setPen(QPen(ctx.theme.frame, 0));
  p.drawRect(image_rect);
  if (!block.empty()) {
    // The block's outline: every pixel edge between a member and a non-member.
    std::vector<uint8_t> in_block(static_cast<size_t>(w * h), 0);
    for (const int64_t i : block)
      if (i < w * h) in_block[static_cast<size_t>(i)] = 1;
    auto inside = [&](int64_t x, int64_t y) { return x >= 0 && x < w && y >= 0 && y < h && in_block[static_cast<size_t>(y * w + x)]; };
    QVector<QLineF> edges;
    for (const int64_t i : block) {
      const int64_t x = i % w, y = i / w;
      if (!inside(x, y - 1)) edges << QLineF(X(x), Y(y), X(x + 1), Y(y));
      if (!inside(x, y + 1)) edges << QLineF(X(x), Y(y + 1), X(x + 1), Y(y + 1));
      if (!inside(x - 1, y)) edges << QLineF(X(x), Y(y), X(x), Y(y + 1));
      if (!inside(x + 1, y)) edges << QLineF(X(x + 1), Y(y), X(x + 1), Y(y + 1));
    }
    p.setPen(QPen(ctx.theme.text, std::max(1.5, ctx.unit * 0.22), Qt::SolidLine, Qt::SquareCap));
    p.drawLines(edges);
  }
  const QPointF qc(X(q % w) + px / 2, Y(q / w) + px / 2);
  const double ring = std::max(px * 0.95, ctx.unit * 0.8);
  p.setPen(QPen(kQueryMark, std::max(1.5, ctx.unit * 0.2)));
  p.drawEllipse(qc, ring, ring);
  drawCellAxes(ctx, image_rect, h, w, "row", "column");
  drawPanelTitle(ctx, QRectF(body.left(), body.top(), panel_w, title_h), image_title);

  // [connectivity] rasterize() ORs the set bits of each pixel's entries.
  const Mat sets = rasterize(s, 0, lq, 0, lk, static_cast<int64_t>(std::ceil(matrix_rect.height() * ctx.raster_scale)),
                             static_cast<int64_t>(std::ceil(matrix_rect.width() * ctx.raster_scale)), RasterValue::Sets, 0.0f);
  const QRgb empty = (light ? QColor(247, 247, 249) : QColor(40, 40, 45)).rgb();
  drawCrispImage(ctx, matrix_rect, colourise(sets, [&](float bits) {
                   return bits == 0.0f ? empty : setColour(static_cast<int>(bits)).rgb();
                 }));
  p.setPen(QPen(ctx.theme.frame, 0));
  p.drawRect(matrix_rect);
  const double row_y = matrix_rect.top() + (static_cast<double>(q) + 0.5) * matrix_rect.height() / static_cast<double>(lq);
  p.setPen(QPen(QColor(kQueryMark.red(), kQueryMark.green(), kQueryMark.blue(), 150), std::max(1.0, ctx.unit * 0.1)));
  p.drawLine(QPointF(matrix_rect.left(), row_y), QPointF(matrix_rect.right(), row_y));
  const double t = ctx.unit * 0.55;
  p.setPen(Qt::NoPen);
  p.setBrush(kQueryMark);
  p.drawPolygon(QPolygonF({QPointF(matrix_rect.right() + 1, row_y), QPointF(matrix_rect.right() + 1 + 1.6 * t, row_y - t),
                           QPointF(matrix_rect.right() + 1 + 1.6 * t, row_y + t)}));
  p.setBrush(Qt::NoBrush);
  drawCellAxes(ctx, matrix_rect, lq, lk, "query", "key");
  drawPanelTitle(ctx, QRectF(matrix_rect.left() - margin_l, body.top(), panel_w, title_h), matrix_title);

  const double legend_top = body.top() + title_h + side + axis_h;
  layoutLegend(ctx, QRectF(body.left() + margin_l, legend_top, body.width() - margin_l, legend_h), legend, false, true);
}

// [SECTION] Walkthrough view
// The stages in a grid, each in its own order with category strips and
// dividers (sparse: pooled by rasterize()), the points pictures, bars and
// token strip in a row below: the GUI's walkthrough layout.
void drawWalkthrough(Painter& ctx, const QRectF& body, const Result& r, const FigureOptions& o) {
  std::vector<const Extra*> pictures, others;
  for (const Extra& e : r.extras) {
    if (e.kind == ExtraKind::Points) pictures.push_back(&e);
    if (e.kind == ExtraKind::CategoryValues || e.kind == ExtraKind::TokenCategories) others.push_back(&e);
  }
  const double bottom_h = pictures.empty() && others.empty() ? 0 : body.height() * 0.36;
  const QRectF top(body.left(), body.top(), body.width(), body.height() - bottom_h);
  const std::vector<QRectF> grid = gridCells(top, static_cast<int>(r.stages.size()), ctx.unit * 1.5, ctx.unit * 12);
  const ValueRange range = withScale({0.0f, std::max(1e-6f, r.weights_stats.max), false}, o.scale, r.keys(), nullptr, 0);
  // Titles and captions wrap; every panel's matrix starts under the tallest
  // header, so the stages line up.
  const QFont caption_font = figureFont(ctx.unit * 0.75);
  double header_h = 0;
  for (size_t i = 0; i < r.stages.size(); ++i)
    header_h = std::max(header_h, panelTitleHeight(ctx, grid[i].width(), qs(r.stages[i].title)) +
                                      formulaHeight(caption_font, grid[i].width(), qs(r.stages[i].caption)));
  header_h += ctx.unit * 0.3;
  for (size_t i = 0; i < r.stages.size(); ++i) {
    const Stage& st = r.stages[i];
    const QRectF& cell = grid[i];
    const double title_h = drawPanelTitle(ctx, cell, qs(st.title));
    drawFormula(ctx.p, QRectF(cell.left(), cell.top() + title_h, cell.width(), header_h - title_h), qs(st.caption),
                caption_font, ctx.theme.muted);
    MatrixPanel m;
    m.sparse = &st.matrix;
    m.range = range;
    m.row_labels = &st.row_labels;
    m.col_labels = &st.col_labels;
    m.row_axis = "query";
    m.col_axis = "key";
    m.row_categories = st.row_categories.empty() ? nullptr : &st.row_categories;
    m.col_categories = st.col_categories.empty() ? nullptr : &st.col_categories;
    m.row_dividers = &st.row_dividers;
    m.col_dividers = &st.col_dividers;
    m.labels = st.matrix.rows <= 64;
    // Every panel leaves room for a colour bar so all get the same size; the last one draws it.
    const double bar_w = ctx.unit * 7;
    const QRectF cells = drawMatrixPanel(ctx, QRectF(cell.left(), cell.top() + header_h, cell.width() - bar_w, cell.height() - header_h), m);
    if (i + 1 == r.stages.size())
      drawColorbar(ctx, QRectF(cells.right() + ctx.unit, cells.top(), ctx.unit * 0.9, cells.height()), range, "weight");
  }
  if (bottom_h <= 0) return;
  const double y0 = body.bottom() - bottom_h + ctx.unit, h = bottom_h - ctx.unit;
  const double side = std::min(h, body.width() * 0.6 / std::max<size_t>(1, pictures.size()));
  for (size_t k = 0; k < pictures.size(); ++k)
    drawPoints(ctx, QRectF(body.left() + k * side, y0, side - ctx.unit * 0.5, h), *pictures[k],
               QString("b = %1").arg(pictures[k]->categories.size()));
  const double x0 = body.left() + pictures.size() * side + ctx.unit;
  const double each = h / std::max<size_t>(1, others.size());
  for (size_t k = 0; k < others.size(); ++k) {
    const QRectF area(x0, y0 + k * each, body.right() - x0, each - ctx.unit * 0.5);
    if (others[k]->kind == ExtraKind::CategoryValues) drawCategoryBars(ctx, area, *others[k]);
    else drawTokenStrip(ctx, area, *others[k], r.q_tokens);
  }
}

// [SECTION] Compare view
// Per-query mass kept [H, L] as one strip per head; more queries than device
// pixels keep the smallest share of each pixel's queries (a loss stays visible).
void drawMassStrip(Painter& ctx, const QRectF& area, const Mat& kept, const QString& title) {
  QPainter& p = ctx.p;
  const int64_t heads = kept.rows(), n = kept.cols();
  const double bar_w = ctx.unit * 6.5;
  const double title_h = panelTitleHeight(ctx, area.width(), title);
  const QRectF strip(area.left() + ctx.unit * 6, area.top() + title_h, area.width() - ctx.unit * 6 - bar_w,
                     area.height() - title_h - ctx.unit * 3.4);
  const int64_t out_cols = std::clamp<int64_t>(static_cast<int64_t>(strip.width() * ctx.raster_scale), 1, std::max<int64_t>(n, 1));
  Mat pooled(heads, out_cols);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t b = 0; b < out_cols; ++b)
      pooled(h, b) = kept.row(h).segment(b * n / out_cols, std::max<int64_t>((b + 1) * n / out_cols - b * n / out_cols, 1)).minCoeff();
  const ValueRange range{0.0f, 1.0f, false};
  drawPanelTitle(ctx, area, title);
  drawCrispImage(ctx, strip, colourise(pooled, [&](float v) { return toQColor(colormapAt(ctx.cmap, v)).rgb(); }));
  p.setPen(QPen(ctx.theme.frame, 0));
  p.drawRect(strip);
  drawCellAxes(ctx, strip, heads, n, heads > 1 ? "head" : "",
               out_cols < n ? "query (a pixel shows the smallest share among its queries)" : "query");
  drawColorbar(ctx, QRectF(strip.right() + ctx.unit * 0.8, strip.top(), ctx.unit * 0.8, strip.height()), range, "");
}

// The numbers of a Comparison: mass kept, KL (∞ stated with its finite
// count and mean), output error, and FLOPs / memory / connections of each.
void drawComparisonText(Painter& ctx, const QRectF& area, const Comparison& c) {
  QPainter& p = ctx.p;
  const double line_h = ctx.unit * 1.55;
  const QFont label_font = figureFont(ctx.unit * 0.9), value_font = figureFont(ctx.unit * 0.9, true);
  const int64_t pairs = static_cast<int64_t>(c.heads) * c.length;
  QString kl;
  if (std::isinf(c.kl_mean))
    kl = QString("∞ (full attention puts mass on dropped keys); finite for %1 of %2 (head, query) pairs, mean %3 nats")
             .arg(grouped(c.kl_finite), grouped(pairs), QString::number(c.kl_finite_mean, 'g', 3));
  else
    kl = QString("%1 nats (mean over heads and queries)").arg(QString::number(c.kl_mean, 'g', 3));
  const std::vector<std::pair<QString, QString>> metrics = {
      {"mass kept", QString("%1 % of full attention's mass (mean over heads and queries)").arg(c.mass_kept_mean * 100, 0, 'f', 1)},
      {"KL(full ‖ pattern)", kl},
      {"output relative error", QString("%1  (‖O_pattern − O_full‖ / ‖O_full‖)").arg(QString::number(c.output_rel_error, 'g', 3))},
  };
  p.setFont(label_font);
  const QFontMetricsF fm(label_font);
  double label_w = 0;
  for (const auto& [k, v] : metrics) label_w = std::max(label_w, fm.horizontalAdvance(k));
  double y = area.top();
  for (const auto& [k, v] : metrics) {
    p.setFont(label_font);
    p.setPen(ctx.theme.muted);
    p.drawText(QRectF(area.left(), y, label_w, line_h), Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, k);
    p.setFont(value_font);
    p.setPen(ctx.theme.text);
    const double vx = area.left() + label_w + ctx.unit;
    const double h = std::max(line_h, wrappedHeight(value_font, area.right() - vx, v));
    p.drawText(QRectF(vx, y, area.right() - vx, h), Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, v);
    y += h;
  }
  // Costs of attention alone (scores, softmax, weighted sum), full against pattern.
  y += line_h * 0.5;
  auto ratio = [](double a, double b) { return b > 0 ? QString("%1 %").arg(100.0 * a / b, 0, 'f', 1) : QString("–"); };
  const std::vector<std::vector<QString>> table = {
      {"", "full", "pattern", "pattern / full"},
      {"FLOPs", qs(formatFlops(c.full_flops)), qs(formatFlops(c.pattern_flops)), ratio(c.pattern_flops, c.full_flops)},
      {"memory (weights held)", qs(formatBytes(c.full_bytes)), qs(formatBytes(c.pattern_bytes)), ratio(c.pattern_bytes, c.full_bytes)},
      {"connections", grouped(c.full_connections), grouped(c.pattern_connections),
       ratio(static_cast<double>(c.pattern_connections), static_cast<double>(c.full_connections))},
  };
  std::vector<double> col_w(4, 0);
  for (const auto& row : table)
    for (size_t k = 0; k < row.size(); ++k) col_w[k] = std::max(col_w[k], fm.horizontalAdvance(row[k]) * 1.08 + ctx.unit * 2);
  // A narrow figure sets the table smaller rather than letting it run off the page.
  const double table_w = col_w[0] + col_w[1] + col_w[2] + col_w[3] - ctx.unit;
  const double shrink = std::min(1.0, area.width() / table_w);
  for (double& w : col_w) w *= shrink;
  const QFont table_label_font = figureFont(ctx.unit * 0.9 * shrink), table_value_font = figureFont(ctx.unit * 0.9 * shrink, true);
  for (size_t r = 0; r < table.size(); ++r) {
    double x = area.left();
    for (size_t k = 0; k < table[r].size(); ++k) {
      p.setFont(r == 0 || k == 0 ? table_label_font : table_value_font);
      p.setPen(r == 0 || k == 0 ? ctx.theme.muted : ctx.theme.text);
      p.drawText(QRectF(x, y, col_w[k] - ctx.unit, line_h), (k == 0 ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter | Qt::TextDontClip, table[r][k]);
      x += col_w[k];
    }
    y += line_h;
  }
}

// Full attention, the pattern, their difference (where the L×L matrices
// exist), the per-query mass kept and the numbers.
void drawCompare(Painter& ctx, const QRectF& body, const Result& r, const Comparison& c, const FigureOptions& o) {
  const size_t h = static_cast<size_t>(std::clamp(o.head, 0, std::max(c.heads - 1, 0)));
  const double text_h = ctx.unit * 1.55 * 8.5;
  const bool matrices = !c.full.empty() && h < c.full.size();
  const double strip_h = ctx.unit * (5.4 + std::clamp(c.heads * (matrices ? 1.2 : 2.0), matrices ? 2.5 : 5.0, 12.0));
  double strip_top = body.top();
  if (matrices) {
    const QRectF top(body.left(), body.top(), body.width(), body.height() - text_h - strip_h - ctx.unit);
    const double panel_w = (top.width() - ctx.unit * 2) / 3;
    const float hi = std::max({c.full[h].maxCoeff(), c.pattern[h].maxCoeff(), 1e-12f});
    const ValueRange weights = withScale({0.0f, hi, false}, o.scale, c.length, c.full[h].data(), c.full[h].size());
    const Mat& diff = c.difference[h];
    const ValueRange signed_range = valueRange(ValueStats::of(diff.data(), diff.size()), true);
    const bool labels = c.length <= 32;
    auto panel = [&](int k, const Mat& m, const QString& title, const ValueRange& range, const Mat* mask) {
      MatrixPanel mp;
      mp.values = &m;
      mp.mask = mask;
      mp.range = range;
      mp.title = title;
      mp.row_axis = "query";
      mp.col_axis = "key";
      mp.labels = labels;
      if (labels) {
        mp.row_labels = &r.q_tokens;
        mp.col_labels = &r.k_tokens;
      }
      const QRectF cells = panelWithBar(ctx, QRectF(top.left() + k * (panel_w + ctx.unit), top.top(), panel_w, top.height()), mp);
      if (k == 0) drawMarks(ctx, cells, m.rows(), m.cols(), o.marks);
      return cells.bottom();
    };
    const bool mask_fits = r.mask.rows() == c.length && r.mask.cols() == c.length;
    const double bottom = std::max({panel(0, c.full[h], "full attention", weights, nullptr),
                                    panel(1, c.pattern[h], "pattern", weights, mask_fits ? &r.mask : nullptr),
                                    panel(2, diff, "pattern − full", signed_range, nullptr)});
    strip_top = bottom + ctx.unit * (labels ? 1.5 : 2.5);
  } else {
    ctx.p.setPen(ctx.theme.muted);
    ctx.p.setFont(figureFont(ctx.unit * 0.85));
    ctx.p.drawText(QRectF(body.left(), body.top(), body.width(), ctx.unit * 1.5), Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip,
                   QString("L = %1: the L×L matrices are not materialised; the numbers come from full attention in row blocks")
                       .arg(grouped(c.length)));
    strip_top += ctx.unit * 2.5;
  }
  drawMassStrip(ctx, QRectF(body.left(), strip_top, body.width(), strip_h), c.mass_kept,
                "share of full attention's mass the pattern keeps, per query");
  drawComparisonText(ctx, QRectF(body.left(), strip_top + strip_h + ctx.unit * 0.5, body.width(), text_h), c);
}

// The painter of a figure of o.width × o.height: background filled, text
// unit scaled to the figure; `page` is the area inside the margins.
// The text unit of a figure: labels are drawn at 0.85 units, so a chosen
// label size sets it; else it scales with the figure.
double textUnit(const FigureOptions& o) {
  return o.font_size > 0 ? o.font_size / 0.85 : std::clamp(std::min(o.width, o.height) / 55.0, 7.0, 40.0);
}

QString figureTitle(const Result& r, const FigureOptions& o) {
  if (o.title) return qs(*o.title);
  return o.view == ViewKind::Family ? qs(r.variant) + " and its family" : defaultTitle(r, o);
}

Painter beginPage(QPainter& p, const FigureOptions& o, double raster_scale, QRectF& page) {
  Painter ctx{p, themeFor(o.dark), o.colormap, textUnit(o), raster_scale};
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setRenderHint(QPainter::TextAntialiasing, true);
  p.fillRect(QRectF(0, 0, o.width, o.height), ctx.theme.background);
  const double margin = ctx.unit * 1.5;
  page = QRectF(margin, margin, o.width - 2 * margin, o.height - 2 * margin);
  return ctx;
}

void paintFigure(QPainter& p, const std::vector<Result>& results, const FigureOptions& o, const Comparison* comparison,
                 double raster_scale) {
  const Result& r = results[0];
  QRectF page;
  Painter ctx = beginPage(p, o, raster_scale, page);
  const double title_h = drawTitle(ctx, page, figureTitle(r, o), o.subtitle.empty() ? subtitleFor(r) : qs(o.subtitle));
  const QRectF body(page.left(), page.top() + title_h, page.width(), page.height() - title_h);
  switch (o.view) {
    case ViewKind::Heatmap: drawHeatmap(ctx, body, r, o); break;
    case ViewKind::Heads: drawHeads(ctx, body, r, o); break;
    case ViewKind::Lines: drawLines(ctx, body, r, o); break;
    case ViewKind::Extras: drawExtras(ctx, body, r, o); break;
    case ViewKind::Family: drawFamily(ctx, body, results, o); break;
    case ViewKind::Image: drawImageView(ctx, body, r, o, o.query >= 0 ? o.query : defaultImageQuery(r)); break;
    case ViewKind::Compare: drawCompare(ctx, body, r, *comparison, o); break;
    case ViewKind::Walkthrough: drawWalkthrough(ctx, body, r, o); break;
  }
}

// A table of text: header row, rule, rows in alternating shades, columns
// sized to their widest cell; the font shrinks until every row fits.
void paintTable(QPainter& p, const std::vector<std::string>& columns, const std::vector<std::vector<std::string>>& rows,
                const FigureOptions& o, double raster_scale) {
  QRectF page;
  Painter ctx = beginPage(p, o, raster_scale, page);
  const double title_h = drawTitle(ctx, page, qs(o.title.value_or("")), qs(o.subtitle));
  const QRectF body(page.left(), page.top() + title_h, page.width(), page.height() - title_h);
  const double row_h = std::min(ctx.unit * 1.8, body.height() / static_cast<double>(rows.size() + 1));
  // The text is 0.6 rows high, smaller where the columns would not fit the width.
  double font_px = row_h * 0.6, total = 0;
  std::vector<double> width(columns.size(), 0.0);
  for (int pass = 0; pass < 2; ++pass) {
    const QFontMetricsF fm(figureFont(font_px, true));
    total = 0;
    for (size_t c = 0; c < columns.size(); ++c) {
      width[c] = fm.horizontalAdvance(qs(columns[c]));
      for (const auto& row : rows) width[c] = std::max(width[c], fm.horizontalAdvance(qs(row[c])));
      total += width[c];
    }
    const double needed = total + row_h * 0.6 * static_cast<double>(columns.size());
    if (needed <= body.width()) break;
    font_px *= body.width() / needed;
  }
  const double pad = std::max(row_h * 0.6, (body.width() - total) / static_cast<double>(columns.size()));
  auto drawRow = [&](double y, const std::vector<std::string>& cells, bool bold) {
    p.setFont(figureFont(font_px, bold));
    double x = body.left();
    for (size_t c = 0; c < cells.size(); ++c) {
      p.drawText(QRectF(x, y, width[c] + pad * 0.8, row_h), Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip, qs(cells[c]));
      x += width[c] + pad;
    }
  };
  p.setPen(ctx.theme.text);
  drawRow(body.top(), columns, true);
  p.setPen(QPen(ctx.theme.frame, 0));
  p.drawLine(QPointF(body.left(), body.top() + row_h), QPointF(body.right(), body.top() + row_h));
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = body.top() + row_h * static_cast<double>(i + 1);
    if (i % 2) p.fillRect(QRectF(body.left(), y, body.width(), row_h), ctx.theme.frame.lighter(o.dark ? 60 : 150));
    p.setPen(ctx.theme.text);
    drawRow(y, rows[i], false);
  }
}

// [SECTION] Output devices and atomic write
using Paint = std::function<void(QPainter&, double raster_scale)>;

// The height a figure of width o.width needs (FigureOptions::height == 0):
// margins, the wrapped title and subtitle, and a body whose matrices get
// square cells. A heatmap's body follows its shape and labels; the composite
// views have a shape of their own.
int figureHeightFor(const std::vector<Result>& results, const FigureOptions& o, const QString& title, const QString& subtitle) {
  const Result& r = results[0];
  const double unit = textUnit(o), margin = unit * 1.5, body_w = o.width - 2 * margin;
  const double title_h = titleBlockHeight(unit, body_w, title, subtitle);
  double body_h = body_w * 0.8;
  switch (o.view) {
    case ViewKind::Heatmap: {
      // The matrix panel's margins: labels (labelMargin) and the axis title.
      auto labels = [&](const std::vector<std::string>& l, double cap) { return labelMargin(unit, l, cap) + unit * 1.4; };
      const double cells_w = body_w - unit * 7 - labels(r.q_tokens, body_w * 0.3);
      body_h = cells_w * static_cast<double>(r.queries()) / static_cast<double>(std::max<int64_t>(r.keys(), 1)) +
               labels(r.k_tokens, body_w * 0.3) + (r.key_bands.empty() ? 0 : unit * 3);
      break;
    }
    case ViewKind::Lines: body_h = std::max(body_w * 0.6, std::max(r.queries(), r.keys()) * unit * 1.3 + unit * 2); break;
    case ViewKind::Image: body_h = body_w * 0.62 + unit * 8; break;
    case ViewKind::Compare: body_h = body_w * 0.45 + unit * 24; break;
    case ViewKind::Extras:
    case ViewKind::Walkthrough:
    case ViewKind::Heads:
    case ViewKind::Family: {
      // Panels in as many columns as hold one at least 16 units wide (heads
      // and family: no colour bar of their own) or 24 (extras, walkthrough),
      // rows of roughly square panels under their titles.
      const bool own_bars = o.view == ViewKind::Extras || o.view == ViewKind::Walkthrough;
      const int n = o.view == ViewKind::Extras        ? extrasPanels(r)
                    : o.view == ViewKind::Walkthrough ? static_cast<int>(r.stages.size()) + 1
                    : o.view == ViewKind::Heads       ? r.heads()
                                                      : static_cast<int>(results.size());
      const int cols = std::clamp(static_cast<int>(body_w / (unit * (own_bars ? 24 : 16))), 1, std::max(1, n));
      const int rows = (n + cols - 1) / cols;
      body_h = rows * (body_w / cols * 0.85 + unit * 3);
      break;
    }
  }
  return static_cast<int>(std::clamp(std::ceil(2 * margin + title_h + body_h), 64.0, 16384.0));
}

// Paints onto a vector device (SVG, PDF); false when the device cannot open.
bool paintOn(QPaintDevice& device, const Paint& paint) {
  QPainter p;
  if (!p.begin(&device)) return false;
  paint(p, 2.0);
  return p.end();
}

// Writes the figure `paint` draws in the format of `path`'s extension,
// through a temp file renamed into place.
void writeFigure(const Paint& paint, const FigureOptions& o, const std::string& path, const std::string& name) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".png" && ext != ".svg" && ext != ".pdf")
    throw InputError(path + ": expected a .png, .svg or .pdf file name");
  TempFile tmp(path);
  const QString qtmp = QString::fromStdString(tmp.path().string());
  bool ok = false;
  if (ext == ".png") {
    // The layout is in units; a PNG has png_scale pixels per unit.
    QImage img(static_cast<int>(std::lround(o.width * o.png_scale)), static_cast<int>(std::lround(o.height * o.png_scale)),
               QImage::Format_ARGB32_Premultiplied);
    const int dots_per_metre = static_cast<int>(std::lround(3780 * o.png_scale));  // 96 dpi per unit of text
    img.setDotsPerMeterX(dots_per_metre);
    img.setDotsPerMeterY(dots_per_metre);
    {
      QPainter p(&img);
      p.scale(o.png_scale, o.png_scale);
      paint(p, o.png_scale);
    }
    ok = img.save(qtmp, "PNG");
  } else if (ext == ".svg") {
    QSvgGenerator gen;
    gen.setFileName(qtmp);
    gen.setSize(QSize(o.width, o.height));
    gen.setViewBox(QRect(0, 0, o.width, o.height));
    gen.setResolution(72);
    gen.setTitle(QString::fromStdString(name));
    gen.setDescription("AttnLab figure");
    ok = paintOn(gen, paint);
  } else {
    QPdfWriter pdf(qtmp);
    pdf.setResolution(72);
    pdf.setPageSize(QPageSize(QSizeF(o.width, o.height), QPageSize::Point));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    pdf.setTitle(QString::fromStdString(name));
    pdf.setCreator("AttnLab");
    ok = paintOn(pdf, paint);
  }
  if (!ok) throw InputError(path + ": could not write the figure (folder missing or not writable?)");
  tmp.commit();
}

}  // namespace

int64_t defaultImageQuery(const Result& r) {
  const int64_t lq = r.queries();
  if (lq <= 0) return 0;
  // The middle of the image's full rows: a causal pattern shows its reach above and to the left.
  const int64_t w = imageWidth(r), full_rows = lq / w;
  const int64_t centre = full_rows == 0 ? lq / 2 : (full_rows / 2) * w + w / 2;
  const Extra* g = r.firstExtra(ExtraKind::QueryGroup);
  if (!g || centre >= g->value.size()) return centre;
  // With query blocks: the middle query of the block holding the centre.
  std::vector<int64_t> block;
  for (int64_t i = 0; i < std::min(lq, g->value.size()); ++i)
    if (g->value.data[static_cast<size_t>(i)] == g->value.data[static_cast<size_t>(centre)]) block.push_back(i);
  return block[block.size() / 2];
}

void applyFigureSize(const std::string& size, const std::string& flag, FigureOptions& o) {
  struct Named {
    const char* name;
    int width, height;  // points; height 0: the content's
    double font_size, png_scale;
  };
  constexpr Named kNamed[] = {{"column", 252, 0, 7, 300.0 / 72}, {"two-column", 504, 0, 8, 300.0 / 72}, {"slide", 960, 540, 14, 2}};
  for (const Named& n : kNamed)
    if (size == n.name) {
      o.width = n.width;
      o.height = n.height;
      o.font_size = n.font_size;
      o.png_scale = n.png_scale;
      return;
    }
  int w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(size.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || x != 'x' || w < 64 || h < 64 || w > 16384 ||
      h > 16384)
    throw InputError(flag + ": expected column, two-column, slide or WxH with 64 ≤ W, H ≤ 16384, got '" + size + "'");
  o.width = w;
  o.height = h;
}

PreparedFigure prepareFigure(std::shared_ptr<const std::vector<Result>> results, const FigureOptions& options,
                             const Comparison* comparison) {
  if (!results || results->empty() || (*results)[0].heads() == 0) throw InputError("export: nothing to draw");
  const Result& r = (*results)[0];
  FigureOptions o = options;
  if (o.height == 0) o.height = figureHeightFor(*results, o, figureTitle(r, o), o.subtitle.empty() ? subtitleFor(r) : qs(o.subtitle));
  if (o.head < 0 || o.head >= r.heads())
    throw InputError("--head: expected 0.." + std::to_string(r.heads() - 1) + ", got " + std::to_string(o.head));
  if (o.view == ViewKind::Lines && r.weights.empty())
    throw InputError("--view lines: " + std::to_string(r.queries()) + " queries are too many for token lines; use heatmap");
  if (o.view == ViewKind::Image) {
    if (!r.isSparse()) throw InputError("--view image: variant '" + r.variant + "' has no sparse pattern to draw");
    if (o.query < -1 || o.query >= r.queries())
      throw InputError("--query: expected a query 0.." + std::to_string(r.queries() - 1) + ", got " + std::to_string(o.query));
  }
  if (o.view == ViewKind::Compare && !comparison) throw InputError("--view compare: no comparison with full attention given");
  if (o.view == ViewKind::Walkthrough && r.stages.empty())
    throw InputError("--view walkthrough: variant '" + r.variant + "' has no walkthrough stages");
  PreparedFigure f;
  f.options = o;
  f.name = r.variant;
  f.paint = [results, o, comparison](QPainter& p, double scale) { paintFigure(p, *results, o, comparison, scale); };
  return f;
}

PreparedFigure prepareTableFigure(std::vector<std::string> columns, std::vector<std::vector<std::string>> rows,
                                  const FigureOptions& options) {
  if (rows.empty()) throw InputError("export: the table has no rows");
  FigureOptions o = options;
  if (o.height == 0) {  // a header and the rows at 1.8 units each
    const double unit = textUnit(o), margin = unit * 1.5;
    const double title_h = titleBlockHeight(unit, o.width - 2 * margin, qs(o.title.value_or("")), qs(o.subtitle));
    o.height = static_cast<int>(std::clamp(std::ceil(2 * margin + title_h + unit * 1.8 * (rows.size() + 1)), 64.0, 16384.0));
  }
  PreparedFigure f;
  f.options = o;
  f.name = o.title.value_or("");
  f.paint = [columns = std::move(columns), rows = std::move(rows), o](QPainter& p, double scale) {
    paintTable(p, columns, rows, o, scale);
  };
  return f;
}

void writeFigure(const PreparedFigure& f, const std::string& path) { writeFigure(f.paint, f.options, path, f.name); }

int exportFigure(const std::vector<Result>& results, const FigureOptions& options, const std::string& path,
                 const Comparison* comparison) {
  // Painted before this returns: the results are borrowed, not copied (a shared_ptr that owns nothing).
  const PreparedFigure f = prepareFigure(std::shared_ptr<const std::vector<Result>>(std::shared_ptr<void>(), &results), options, comparison);
  writeFigure(f, path);
  return f.options.height;
}

}  // namespace attn
