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
#include "app/export/primitives_qt.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/files.h"
#include "widgets/annotations.h"
#include "widgets/formula.h"
#include "widgets/plot_layouts.h"
#include "widgets/primitives.h"
#include "widgets/value_range.h"
#include "widgets/view_layouts.h"

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

QRectF rectOf(const Box& b) { return QRectF(b.x, b.y, b.w, b.h); }



// The colour bar: the screen's own layout (colorbarPrimitives), in figure units.
void drawColorbar(Painter& ctx, const QRectF& area, const ValueRange& range, const QString& label) {
  const double px = ctx.unit * 0.8;
  Primitives prims;
  colorbarPrimitives(prims, static_cast<float>(area.left()), static_cast<float>(area.top()), static_cast<float>(area.width()),
                     static_cast<float>(area.height()), ctx.cmap, range, label.toStdString(), static_cast<float>(px),
                     figureMeasure(px));
  drawPrimitives(ctx, prims);
}

Box boxOf(const QRectF& r) {
  return {static_cast<float>(r.left()), static_cast<float>(r.top()), static_cast<float>(r.width()), static_cast<float>(r.height())};
}
// The shared legend (legendPrimitives): swatches with names in a row
// (wrapped) or a column. Returns its height; with draw = false only measures.
double layoutLegend(Painter& ctx, const QRectF& area, const std::vector<LegendEntry>& entries, bool vertical, bool draw) {
  Primitives prims;
  const float h = legendPrimitives(prims, figureCanvas(ctx), boxOf(area), entries, vertical, draw);
  drawPrimitives(ctx, prims);
  return h;
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

// The screen's token lines (tokenLinesPrimitives), the shown heads in the legend.
void drawLines(Painter& ctx, const QRectF& body, const Result& r, const FigureOptions& o) {
  Primitives prims;
  tokenLinesPrimitives(prims, figureCanvas(ctx), boxOf(body), r, o.heads_visible, false);
  drawPrimitives(ctx, prims);
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

// A plot panel: its title, then the screen's layout `fill` (widgets/plot_layouts.h) in the rest, replayed.
template <class Fill>
void drawPlotPanel(Painter& ctx, const QRectF& area, const QString& title, Fill fill) {
  const double title_h = drawPanelTitle(ctx, area, title);
  Primitives prims;
  fill(prims, figureCanvas(ctx), boxOf(area.adjusted(0, title_h, 0, 0)));
  drawPrimitives(ctx, prims);
}

// One bar per value (TokenValues [L], HeadValues [H] in headColor(h)).
void drawBars(Painter& ctx, const QRectF& area, const Extra& e, const std::vector<std::string>& labels, bool colour_per_bar) {
  const ValueRange range = extraRange(e);
  drawPlotPanel(ctx, area, qs(e.label), [&](Primitives& prims, const Canvas& c, Box box) {
    barsPrimitives(prims, c, box, e.value, &labels, range, colormapFor(range, ctx.cmap), colour_per_bar);
  });
}

void drawPoints(Painter& ctx, const QRectF& area, const Extra& e, const QString& title) {
  drawPlotPanel(ctx, area, title, [&](Primitives& prims, const Canvas& c, Box box) { pointsPrimitives(prims, c, box, e); });
}

// CategoryValues [n]: one bar per category in its colour, numbered.
void drawCategoryBars(Painter& ctx, const QRectF& area, const Extra& e) {
  drawPlotPanel(ctx, area, qs(e.label), [&](Primitives& prims, const Canvas& c, Box box) {
    barsPrimitives(prims, c, box, e.value, nullptr, ValueRange{0.0f, std::max(1e-6f, e.stats.max)}, ctx.cmap, true);
  });
}

void drawTokenStrip(Painter& ctx, const QRectF& area, const Extra& e, const std::vector<std::string>& tokens) {
  drawPlotPanel(ctx, area, qs(e.label), [&](Primitives& prims, const Canvas& c, Box box) {
    tokenStripPrimitives(prims, c, box, e.value, tokens, e.name);
  });
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
      drawPlotPanel(ctx, cell, qs(e.label), [&](Primitives& prims, const Canvas& c, Box box) {
        curvesPrimitives(prims, c, box, e.value, seriesNames(e.value.rank() == 2 ? e.value.shape[0] : 1, e.categories, e.row_axis.empty() ? "series" : e.row_axis),
                         e.col_axis.empty() ? "x" : e.col_axis, e.markers, e.levels);
      });
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
      drawPlotPanel(ctx, cell, qs(e.label), [&](Primitives& prims, const Canvas& c, Box box) {
        stackedPrimitives(prims, c, box, e.value, e.row_labels, e.row_axis.empty() ? "row" : e.row_axis,
                          e.col_axis.empty() ? "segment" : e.col_axis);
      });
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
    for (size_t k = 0; k < e.categories.size(); ++k) legend.push_back({headColor(static_cast<int>(k)), e.categories[k]});
    // The title spans the cell; the legend sits beside the matrix, or under it
    // when beside it would take more than a third of the width.
    const double title_h = drawPanelTitle(ctx, cell, m.title);
    m.title.clear();
    const QRectF body(cell.left(), cell.top() + title_h, cell.width(), cell.height() - title_h);
    const double legend_w = legendWidth(figureCanvas(ctx), legend) + ctx.unit;
    if (legend_w <= body.width() / 3) {
      const QRectF cells = drawMatrixPanel(ctx, QRectF(body.left(), body.top(), body.width() - legend_w, body.height()), m);
      layoutLegend(ctx, QRectF(cells.right() + ctx.unit, cells.top(), legend_w, cells.height()), legend, true, true);
    } else {
      const double legend_h = layoutLegend(ctx, QRectF(body.left(), 0, body.width(), 0), legend, false, false);
      drawMatrixPanel(ctx, QRectF(body.left(), body.top(), body.width(), body.height() - legend_h - ctx.unit * 0.5), m);
      layoutLegend(ctx, QRectF(body.left(), body.bottom() - legend_h, body.width(), legend_h), legend, false, true);
    }
  }
  if (!scalars.empty()) {
    std::vector<ScalarItem> items;
    for (const Extra* e : scalars) items.push_back(scalarItem(*e));
    drawPlotPanel(ctx, grid.back(), "values", [&](Primitives& prims, const Canvas& c, Box box) { scalarsPrimitives(prims, c, box, items); });
  }
}

// [SECTION] Image view
// The screen's image view (imageViewPrimitives): the pattern on the raster
// image beside the connectivity, query q marked.
void drawImageView(Painter& ctx, const QRectF& body, const Result& r, const FigureOptions& o, int64_t q) {
  Primitives prims;
  imageViewPrimitives(prims, figureCanvas(ctx), boxOf(body), r.sparse[static_cast<size_t>(o.head)], r.set_names, imageWidth(r), q,
                      r.firstExtra(ExtraKind::QueryGroup), "figure");
  drawPrimitives(ctx, prims);
}

// [SECTION] Walkthrough view
// The screen's walkthrough (walkthroughPrimitives): headers, colour bar and
// the rects the stages' matrices and the extras plots go into.
void drawWalkthrough(Painter& ctx, const QRectF& body, const Result& r, const FigureOptions& o) {
  const ValueRange range = withScale({0.0f, std::max(1e-6f, r.weights_stats.max), false}, o.scale, r.keys(), nullptr, 0);
  Primitives prims;
  const WalkthroughLayout g = walkthroughPrimitives(prims, figureCanvas(ctx), boxOf(body), r, range, colormapFor(range, ctx.cmap));
  drawPrimitives(ctx, prims);
  for (size_t i = 0; i < g.stages.size(); ++i) {
    const Stage& st = r.stages[i];
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
    drawMatrixPanel(ctx, rectOf(g.stages[i]), m);
  }
  for (size_t k = 0; k < g.pictures.size(); ++k)
    drawPoints(ctx, rectOf(g.pictures[k]), *g.picture_extras[k], QString("b = %1").arg(g.picture_extras[k]->categories.size()));
  for (size_t k = 0; k < g.others.size(); ++k) {
    const Extra& e = *g.other_extras[k];
    if (e.kind == ExtraKind::CategoryValues) drawCategoryBars(ctx, rectOf(g.others[k]), e);
    else drawTokenStrip(ctx, rectOf(g.others[k]), e, r.q_tokens);
  }
}

// [SECTION] Compare view
// The screen's comparison (comparePrimitives): the numbers, the mass strip
// and the rects full attention, the pattern and their difference go into.
void drawCompare(Painter& ctx, const QRectF& body, const Result& r, const Comparison& c, const FigureOptions& o) {
  const size_t h = static_cast<size_t>(std::clamp(o.head, 0, std::max(c.heads - 1, 0)));
  Primitives prims;
  const CompareLayout g = comparePrimitives(prims, figureCanvas(ctx), boxOf(body), c, ctx.cmap);
  drawPrimitives(ctx, prims);
  if (g.panels.empty() || h >= c.full.size()) return;
  const float hi = std::max({c.full[h].maxCoeff(), c.pattern[h].maxCoeff(), 1e-12f});
  const ValueRange weights = withScale({0.0f, hi, false}, o.scale, c.length, c.full[h].data(), c.full[h].size());
  const Mat& diff = c.difference[h];
  const ValueRange signed_range = valueRange(ValueStats::of(diff.data(), diff.size()), true);
  const bool labels = c.length <= 32;
  const bool mask_fits = r.mask.rows() == c.length && r.mask.cols() == c.length;
  const struct {
    const Mat& m;
    const ValueRange& range;
    const Mat* mask;
  } panels[] = {{c.full[h], weights, nullptr}, {c.pattern[h], weights, mask_fits ? &r.mask : nullptr}, {diff, signed_range, nullptr}};
  for (size_t k = 0; k < 3; ++k) {
    MatrixPanel mp;
    mp.values = &panels[k].m;
    mp.mask = panels[k].mask;
    mp.range = panels[k].range;
    mp.row_axis = "query";
    mp.col_axis = "key";
    mp.labels = labels;
    if (labels) {
      mp.row_labels = &r.q_tokens;
      mp.col_labels = &r.k_tokens;
    }
    const QRectF cells = panelWithBar(ctx, rectOf(g.panels[k]), mp);
    if (k == 0) drawMarks(ctx, cells, panels[k].m.rows(), panels[k].m.cols(), o.marks);
  }
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
    case ViewKind::Compare: body_h = compareHeight(static_cast<float>(body_w), static_cast<float>(unit)); break;
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
