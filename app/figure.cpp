// Figure export: the views drawn with QPainter onto QImage (PNG),
// QSvgGenerator (SVG) and QPdfWriter (PDF).
//
// [SECTION] Painting helpers (theme, text, colorbar)
// [SECTION] Matrix panel (heatmap with token axes and overlays)
// [SECTION] Views (heatmap, heads, lines, extras, family)
// [SECTION] Output devices and atomic write
#include "app/figure.h"

#include "engine/error.h"
#include "engine/files.h"
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

namespace attn {
namespace {

// [SECTION] Painting helpers
struct Theme {
  QColor background, text, muted, frame;
};

Theme themeFor(bool dark) {
  if (dark) return {QColor(24, 26, 30), QColor(235, 235, 235), QColor(150, 150, 155), QColor(90, 90, 95)};
  return {QColor(255, 255, 255), QColor(20, 20, 20), QColor(110, 110, 115), QColor(160, 160, 165)};
}

QColor toQColor(Rgb8 c, int alpha = 255) { return QColor(c.r, c.g, c.b, alpha); }

QFont figureFont(double px, bool bold = false) {
  QFont f("DejaVu Sans");
  f.setPixelSize(std::max(1, static_cast<int>(std::lround(px))));
  f.setBold(bold);
  return f;
}

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString formatTick(float v) { return QString::fromStdString(formatValueShort(v)); }

// Position of `v` in the range, 0..1, for the colormap.
float normalise(const ValueRange& r, float v) { return r.hi > r.lo ? (v - r.lo) / (r.hi - r.lo) : 0.5f; }

// Draw every n-th label so labels `label_px` high do not overlap on cells `cell_px` apart.
int labelStride(float cell_px, float label_px) {
  return cell_px <= 0.0f ? 1 << 30 : std::max(1, static_cast<int>(std::ceil(label_px / cell_px)));
}

struct Painter {
  QPainter& p;
  Theme theme;
  Colormap cmap;
  double unit;  // base text size in device units; scales with the figure
};

// Vertical colorbar with ticks in `area`.
void drawColorbar(Painter& ctx, const QRectF& area, const ValueRange& range, const QString& label) {
  QPainter& p = ctx.p;
  const Colormap cmap = colormapFor(range, ctx.cmap);
  // One gradient-filled rect (a <linearGradient> in SVG), bottom = lo.
  QLinearGradient g(area.bottomLeft(), area.topLeft());
  const int stops = 32;
  for (int i = 0; i <= stops; ++i)
    g.setColorAt(static_cast<double>(i) / stops, toQColor(colormapAt(cmap, static_cast<float>(i) / stops)));
  p.fillRect(area, g);
  p.setPen(QPen(ctx.theme.frame, 0));
  p.setBrush(Qt::NoBrush);
  p.drawRect(area);
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setFont(figureFont(ctx.unit * 0.8));
  p.setPen(ctx.theme.text);
  for (const float t : niceTicks(range.lo, range.hi, 5)) {
    const double y = area.bottom() - area.height() * normalise(range, t);
    p.drawLine(QPointF(area.right(), y), QPointF(area.right() + ctx.unit * 0.3, y));
    p.drawText(QRectF(area.right() + ctx.unit * 0.4, y - ctx.unit, ctx.unit * 5, ctx.unit * 2),
               Qt::AlignLeft | Qt::AlignVCenter, formatTick(t));
  }
  p.save();
  p.translate(area.right() + ctx.unit * 4.6, area.center().y());
  p.rotate(90);
  p.drawText(QRectF(-area.height() / 2, -ctx.unit, area.height(), ctx.unit * 2), Qt::AlignCenter, label);
  p.restore();
}

// [SECTION] Matrix panel
struct MatrixPanel {
  const Mat* values = nullptr;
  const Mat* mask = nullptr;  // optional: masked cells are hatched-grey
  const std::vector<std::string>* row_labels = nullptr;
  const std::vector<std::string>* col_labels = nullptr;
  ValueRange range;
  QString title, row_axis, col_axis;
  const Extra* position = nullptr;  // QueryPosition overlay
  const Extra* window = nullptr;    // QueryWindow overlay
  bool labels = true;
};

// Cells become one rect each up to this many; beyond, one image (a vector
// file with a million rects helps nobody).
constexpr int64_t kMaxVectorCells = 512 * 512;

// Draws `m` into `area` (including labels); returns the cell rectangle.
QRectF drawMatrixPanel(Painter& ctx, const QRectF& area, const MatrixPanel& m) {
  QPainter& p = ctx.p;
  const Mat& v = *m.values;
  const int64_t rows = v.rows(), cols = v.cols();
  const double title_h = m.title.isEmpty() ? 0 : ctx.unit * 1.6;
  // Label margins fit the longest label at the largest label size, capped
  // so long tokens cannot squeeze the matrix away.
  auto labelSpace = [&](const std::vector<std::string>* labels, double cap) {
    if (!m.labels || !labels) return ctx.unit * 0.5;
    const QFontMetricsF fm(figureFont(ctx.unit * 0.85));
    double w = 0;
    for (const std::string& l : *labels) w = std::max(w, fm.horizontalAdvance(qs(l)));
    return std::min(w + ctx.unit * 0.8, cap);
  };
  const double label_w = labelSpace(m.row_labels, area.width() * 0.3);
  const double label_h = labelSpace(m.col_labels, area.height() * 0.3);
  const double axis = m.labels ? ctx.unit * 1.4 : 0;
  QRectF cells(area.left() + axis + label_w, area.top() + title_h, area.width() - axis - label_w,
               area.height() - title_h - label_h - axis);
  // Square cells where the aspect allows, as in the papers' figures.
  const double cell = std::min(cells.width() / std::max<int64_t>(cols, 1), cells.height() / std::max<int64_t>(rows, 1));
  const double aspect_cols = cells.width() / std::max<int64_t>(cols, 1);
  const double cw = rows == cols || cols <= rows ? cell : std::max(cell, std::min(aspect_cols, cell * 4));
  cells.setWidth(cw * cols);
  cells.setHeight(cell * rows);
  const double ch = cell;

  if (!m.title.isEmpty()) {
    p.setPen(ctx.theme.text);
    p.setFont(figureFont(ctx.unit * 1.05, true));
    p.drawText(QRectF(area.left(), area.top(), area.width(), title_h), Qt::AlignLeft | Qt::AlignVCenter, m.title);
  }
  const Colormap cmap = colormapFor(m.range, ctx.cmap);
  const QColor masked_colour = ctx.theme.background.lightness() > 128 ? QColor(225, 225, 228) : QColor(50, 50, 55);
  p.setRenderHint(QPainter::Antialiasing, false);  // crisp cells, no seams between them
  if (rows * cols <= kMaxVectorCells) {
    p.setPen(Qt::NoPen);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const bool is_masked = m.mask && m.mask->size() && (*m.mask)(i, j) == 0.0f;
        const QColor c = is_masked ? masked_colour : toQColor(colormapAt(cmap, normalise(m.range, v(i, j))));
        // Slight overlap hides hairline seams between rects in viewers.
        p.fillRect(QRectF(cells.left() + j * cw, cells.top() + i * ch, cw + 0.02, ch + 0.02), c);
      }
  } else {
    QImage img(static_cast<int>(cols), static_cast<int>(rows), QImage::Format_RGB32);
    for (int64_t i = 0; i < rows; ++i) {
      QRgb* line = reinterpret_cast<QRgb*>(img.scanLine(static_cast<int>(i)));
      for (int64_t j = 0; j < cols; ++j) {
        const bool is_masked = m.mask && m.mask->size() && (*m.mask)(i, j) == 0.0f;
        line[j] = is_masked ? masked_colour.rgb() : toQColor(colormapAt(cmap, normalise(m.range, v(i, j)))).rgb();
      }
    }
    p.drawImage(cells, img);
  }
  p.setPen(QPen(ctx.theme.frame, 0));
  p.setBrush(Qt::NoBrush);
  p.drawRect(cells);
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

  if (!m.labels) return cells;
  p.setPen(ctx.theme.text);
  const double font_px = std::clamp(std::min(cw, ch) * 0.8, ctx.unit * 0.45, ctx.unit * 0.85);
  p.setFont(figureFont(font_px));
  if (m.row_labels) {
    const int stride = labelStride(static_cast<float>(ch), static_cast<float>(font_px * 1.1));
    for (int64_t i = 0; i < rows && i < static_cast<int64_t>(m.row_labels->size()); i += stride)
      p.drawText(QRectF(cells.left() - label_w, cells.top() + i * ch + ch / 2 - font_px, label_w - ctx.unit * 0.3,
                        font_px * 2),
                 Qt::AlignRight | Qt::AlignVCenter, qs((*m.row_labels)[static_cast<size_t>(i)]));
  }
  if (m.col_labels) {
    const int stride = labelStride(static_cast<float>(cw), static_cast<float>(font_px * 1.1));
    for (int64_t j = 0; j < cols && j < static_cast<int64_t>(m.col_labels->size()); j += stride) {
      p.save();
      p.translate(cells.left() + j * cw + cw / 2, cells.bottom() + ctx.unit * 0.3);
      p.rotate(-90);
      p.drawText(QRectF(-label_h, -font_px, label_h - ctx.unit * 0.1, font_px * 2), Qt::AlignRight | Qt::AlignVCenter,
                 qs((*m.col_labels)[static_cast<size_t>(j)]));
      p.restore();
    }
  }
  p.setFont(figureFont(ctx.unit * 0.85));
  p.setPen(ctx.theme.muted);
  if (!m.col_axis.isEmpty())
    p.drawText(QRectF(cells.left(), cells.bottom() + label_h, cells.width(), axis), Qt::AlignCenter, m.col_axis);
  if (!m.row_axis.isEmpty()) {
    p.save();
    p.translate(area.left() + axis / 2, cells.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-cells.height() / 2, -axis / 2, cells.height(), axis), Qt::AlignCenter, m.row_axis);
    p.restore();
  }
  return cells;
}

QString defaultTitle(const Result& r, const FigureOptions& o) {
  const VariantInfo* info = findVariant(r.variant);
  QString t = qs(info ? info->title : r.variant);
  if (o.view == ViewKind::Heatmap && r.heads() > 1) t += QString(" — head %1").arg(o.head);
  return t;
}

void drawTitle(Painter& ctx, const QRectF& area, const QString& title, const QString& subtitle) {
  ctx.p.setPen(ctx.theme.text);
  ctx.p.setFont(figureFont(ctx.unit * 1.5, true));
  ctx.p.drawText(QRectF(area.left(), area.top(), area.width(), ctx.unit * 2.2), Qt::AlignLeft | Qt::AlignVCenter, title);
  ctx.p.setPen(ctx.theme.muted);
  ctx.p.setFont(figureFont(ctx.unit * 0.85));
  ctx.p.drawText(QRectF(area.left(), area.top() + ctx.unit * 2.2, area.width(), ctx.unit * 1.4),
                 Qt::AlignLeft | Qt::AlignVCenter, subtitle);
}

QString subtitleFor(const Result& r) {
  const VariantInfo* info = findVariant(r.variant);
  QString s = info ? qs(info->summary) : QString();
  if (info && !info->citation.empty()) s += "   (" + qs(info->citation) + ")";
  return s;
}

MatrixPanel weightsPanel(const Result& r, int head, const ValueRange& range) {
  MatrixPanel m;
  m.values = &r.weights[static_cast<size_t>(head)];
  m.mask = &r.mask;
  m.row_labels = &r.q_tokens;
  m.col_labels = &r.k_tokens;
  m.range = range;
  m.row_axis = "query";
  m.col_axis = "key";
  m.position = r.firstExtra(ExtraKind::QueryPosition);
  m.window = r.firstExtra(ExtraKind::QueryWindow);
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

// [SECTION] Views
void drawHeatmap(Painter& ctx, const QRectF& body, const Result& r, const FigureOptions& o) {
  const ValueRange range = weightsRange(r);
  MatrixPanel m = weightsPanel(r, o.head, range);
  const double bar_w = ctx.unit * 7;
  const QRectF cells = drawMatrixPanel(ctx, QRectF(body.left(), body.top(), body.width() - bar_w, body.height()), m);
  drawColorbar(ctx, QRectF(cells.right() + ctx.unit * 1.2, cells.top(), ctx.unit * 1.1, cells.height()), range,
               qs(r.weights_label));
}

void drawHeads(Painter& ctx, const QRectF& body, const Result& r) {
  const ValueRange range = weightsRange(r);
  const double bar_w = ctx.unit * 7;
  const std::vector<QRectF> grid = gridCells(QRectF(body.left(), body.top(), body.width() - bar_w, body.height()),
                                             r.heads(), ctx.unit, ctx.unit * 3);
  double top = body.bottom(), bottom = body.top();
  for (int h = 0; h < r.heads(); ++h) {
    MatrixPanel m = weightsPanel(r, h, range);
    m.title = QString("head %1").arg(h);
    m.labels = r.queries() <= 24 && grid[static_cast<size_t>(h)].width() > ctx.unit * 16;
    const QRectF cells = drawMatrixPanel(ctx, grid[static_cast<size_t>(h)], m);
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
    p.drawText(QRectF(x + ctx.unit * 1.3, body.top(), ctx.unit * 5, ctx.unit * 1.8), Qt::AlignLeft | Qt::AlignVCenter,
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
               Qt::AlignRight | Qt::AlignVCenter, qs(r.q_tokens[static_cast<size_t>(i)]));
  for (int64_t j = 0; j < lk; j += sk)
    p.drawText(QRectF(right_x + ctx.unit * 0.4, area.top() + (j + 0.5) * row_k - font_px, col_w, font_px * 2),
               Qt::AlignLeft | Qt::AlignVCenter, qs(r.k_tokens[static_cast<size_t>(j)]));
}

void drawBars(Painter& ctx, const QRectF& area, const Extra& e, const std::vector<std::string>& labels) {
  QPainter& p = ctx.p;
  p.setPen(ctx.theme.text);
  p.setFont(figureFont(ctx.unit * 1.05, true));
  p.drawText(QRectF(area.left(), area.top(), area.width(), ctx.unit * 1.6), Qt::AlignLeft | Qt::AlignVCenter, qs(e.label));
  const QRectF plot(area.left() + ctx.unit * 3, area.top() + ctx.unit * 2, area.width() - ctx.unit * 3,
                    area.height() - ctx.unit * 7);
  const int64_t n = e.value.size();
  const ValueRange range = extraRange(e);
  const float lo = range.lo, hi = range.hi;
  const double bw = plot.width() / std::max<int64_t>(n, 1);
  const double zero_y = plot.bottom() - plot.height() * (0 - lo) / (hi - lo);
  for (int64_t i = 0; i < n; ++i) {
    const double y = plot.bottom() - plot.height() * (e.value.data[static_cast<size_t>(i)] - lo) / (hi - lo);
    p.fillRect(QRectF(plot.left() + i * bw + bw * 0.1, std::min(y, zero_y), bw * 0.8, std::abs(zero_y - y)),
               toQColor(colormapAt(ctx.cmap, 0.35f)));
  }
  p.setPen(QPen(ctx.theme.frame, 0));
  p.drawLine(QPointF(plot.left(), zero_y), QPointF(plot.right(), zero_y));
  p.setFont(figureFont(ctx.unit * 0.7));
  p.setPen(ctx.theme.text);
  for (const float t : niceTicks(lo, hi, 4)) {
    const double y = plot.bottom() - plot.height() * (t - lo) / (hi - lo);
    p.drawText(QRectF(area.left(), y - ctx.unit, ctx.unit * 2.7, ctx.unit * 2), Qt::AlignRight | Qt::AlignVCenter,
               formatTick(t));
  }
  const int stride = labelStride(static_cast<float>(bw), static_cast<float>(ctx.unit * 0.8));
  for (int64_t i = 0; i < n && i < static_cast<int64_t>(labels.size()); i += stride) {
    p.save();
    p.translate(plot.left() + (i + 0.5) * bw, plot.bottom() + ctx.unit * 0.3);
    p.rotate(-90);
    p.drawText(QRectF(-ctx.unit * 4.6, -ctx.unit * 0.5, ctx.unit * 4.5, ctx.unit), Qt::AlignRight | Qt::AlignVCenter,
               qs(labels[static_cast<size_t>(i)]));
    p.restore();
  }
}

void drawExtras(Painter& ctx, const QRectF& body, const Result& r) {
  std::vector<const Extra*> shown;
  for (const Extra& e : r.extras)
    if (e.kind == ExtraKind::Matrix || e.kind == ExtraKind::Weights || e.kind == ExtraKind::TokenValues) shown.push_back(&e);
  if (shown.empty()) throw InputError("--view extras: variant '" + r.variant + "' has no extras to show");
  // The main weights come first so extras are read against them.
  const std::vector<QRectF> grid = gridCells(body, static_cast<int>(shown.size()) + 1, ctx.unit * 1.5, ctx.unit * 12);
  const double bar_w = ctx.unit * 7;
  auto panelWithBar = [&](const QRectF& cell, MatrixPanel m) {
    const QRectF cells = drawMatrixPanel(ctx, QRectF(cell.left(), cell.top(), cell.width() - bar_w, cell.height()), m);
    drawColorbar(ctx, QRectF(cells.right() + ctx.unit * 1.0, cells.top(), ctx.unit * 0.9, cells.height()), m.range, "");
  };
  MatrixPanel main = weightsPanel(r, 0, weightsRange(r));
  main.title = qs(r.weights_label);
  panelWithBar(grid[0], main);
  std::vector<Mat> mats(shown.size());
  for (size_t i = 0; i < shown.size(); ++i) {
    const Extra& e = *shown[i];
    const QRectF& cell = grid[i + 1];
    if (e.kind == ExtraKind::TokenValues) {
      drawBars(ctx, cell, e, r.q_tokens);
      continue;
    }
    // Matrix [R, C], or the first head of Weights [H, Lq, Lk].
    const int64_t rows = e.value.shape[e.value.rank() - 2], cols = e.value.shape[e.value.rank() - 1];
    mats[i] = Eigen::Map<const Mat>(e.value.data.data(), rows, cols);
    MatrixPanel m;
    m.values = &mats[i];
    m.range = extraRange(e);
    m.title = qs(e.label);
    m.row_axis = qs(e.row_axis.empty() ? "query" : e.row_axis);
    m.col_axis = qs(e.col_axis.empty() ? "key" : e.col_axis);
    if (e.kind == ExtraKind::Weights) {
      m.row_labels = &r.q_tokens;
      m.col_labels = &r.k_tokens;
    } else {
      m.row_labels = rows == static_cast<int64_t>(r.q_tokens.size()) ? &r.q_tokens : nullptr;
    }
    panelWithBar(cell, m);
  }
}

void drawFamily(Painter& ctx, const QRectF& body, const std::vector<Result>& results) {
  const double bar_w = ctx.unit * 6;
  const std::vector<QRectF> grid =
      gridCells(body, static_cast<int>(results.size()), ctx.unit * 1.5, ctx.unit * 12);
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const ValueRange range = weightsRange(r);
    MatrixPanel m = weightsPanel(r, 0, range);
    m.title = qs(r.variant);
    const QRectF& cell = grid[i];
    const QRectF cells = drawMatrixPanel(ctx, QRectF(cell.left(), cell.top(), cell.width() - bar_w, cell.height()), m);
    drawColorbar(ctx, QRectF(cells.right() + ctx.unit * 0.8, cells.top(), ctx.unit * 0.8, cells.height()), range, "");
  }
}

void paintFigure(QPainter& p, const std::vector<Result>& results, const FigureOptions& o) {
  const Result& r = results[0];
  Painter ctx{p, themeFor(o.dark), o.colormap, std::clamp(std::min(o.width, o.height) / 55.0, 7.0, 40.0)};
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setRenderHint(QPainter::TextAntialiasing, true);
  p.fillRect(QRectF(0, 0, o.width, o.height), ctx.theme.background);
  const double margin = ctx.unit * 1.5;
  const QRectF page(margin, margin, o.width - 2 * margin, o.height - 2 * margin);
  const QString title = o.title.empty() ? (o.view == ViewKind::Family ? qs(r.variant) + " and its family" : defaultTitle(r, o))
                                        : qs(o.title);
  drawTitle(ctx, page, title, subtitleFor(r));
  const QRectF body(page.left(), page.top() + ctx.unit * 4.4, page.width(), page.height() - ctx.unit * 4.4);
  switch (o.view) {
    case ViewKind::Heatmap: drawHeatmap(ctx, body, r, o); break;
    case ViewKind::Heads: drawHeads(ctx, body, r); break;
    case ViewKind::Lines: drawLines(ctx, body, r, o); break;
    case ViewKind::Extras: drawExtras(ctx, body, r); break;
    case ViewKind::Family: drawFamily(ctx, body, results); break;
  }
}

// [SECTION] Output devices and atomic write
// Paints onto a vector device (SVG, PDF); false when the device cannot open.
bool paintOn(QPaintDevice& device, const std::vector<Result>& results, const FigureOptions& o) {
  QPainter p;
  if (!p.begin(&device)) return false;
  paintFigure(p, results, o);
  return p.end();
}

}  // namespace

void exportFigure(const std::vector<Result>& results, const FigureOptions& o, const std::string& path) {
  if (results.empty() || results[0].weights.empty()) throw InputError("export: nothing to draw");
  if (o.head < 0 || o.head >= results[0].heads())
    throw InputError("--head: expected 0.." + std::to_string(results[0].heads() - 1) + ", got " + std::to_string(o.head));
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".png" && ext != ".svg" && ext != ".pdf")
    throw InputError(path + ": expected a .png, .svg or .pdf file name");
  TempFile tmp(path);
  const QString qtmp = QString::fromStdString(tmp.path().string());
  bool ok = false;
  if (ext == ".png") {
    QImage img(o.width, o.height, QImage::Format_ARGB32_Premultiplied);
    img.setDotsPerMeterX(3780);  // 96 dpi, the size the text was laid out for
    img.setDotsPerMeterY(3780);
    {
      QPainter p(&img);
      paintFigure(p, results, o);
    }
    ok = img.save(qtmp, "PNG");
  } else if (ext == ".svg") {
    QSvgGenerator gen;
    gen.setFileName(qtmp);
    gen.setSize(QSize(o.width, o.height));
    gen.setViewBox(QRect(0, 0, o.width, o.height));
    gen.setResolution(72);
    gen.setTitle(QString::fromStdString(results[0].variant));
    gen.setDescription("AttnLab figure");
    ok = paintOn(gen, results, o);
  } else {
    QPdfWriter pdf(qtmp);
    pdf.setResolution(72);
    pdf.setPageSize(QPageSize(QSizeF(o.width, o.height), QPageSize::Point));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    pdf.setTitle(QString::fromStdString(results[0].variant));
    pdf.setCreator("AttnLab");
    ok = paintOn(pdf, results, o);
  }
  if (!ok) throw InputError(path + ": could not write the figure (folder missing or not writable?)");
  tmp.commit();
}

}  // namespace attn
