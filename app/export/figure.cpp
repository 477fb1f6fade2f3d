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
#include "widgets/matrix_panel.h"
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
// A layout's area and a painter's rect.
Box boxOf(const QRectF& r) {
  return {static_cast<float>(r.left()), static_cast<float>(r.top()), static_cast<float>(r.width()), static_cast<float>(r.height())};
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

// A panel's title, bold, wrapped to the panel's width; returns its height
// with the space under it (0 for no title).
double drawPanelTitle(Painter& ctx, const QRectF& area, const QString& title) {
  if (title.isEmpty()) return 0;
  return drawFormula(ctx.p, area, title, figureFont(ctx.unit * 1.05, true), ctx.theme.text) + ctx.unit * 0.4;
}


// [SECTION] Matrix panel

// A figure's matrix panel: square cells, as in the papers' figures; a wide
// matrix may stretch its cells up to 4:1 (a 12 × 64 gate map is not drawn
// as a thin strip).
MatrixStyle panelStyle(const MatrixSpec& m, const ValueRange& range, bool colorbar) {
  MatrixStyle s;
  s.range = range;
  s.colorbar = colorbar;
  s.max_cell_aspect = m.cols > m.rows ? 4.0f : 1.0f;
  return s;
}

// The matrix panel (widgets/matrix_panel.h), the screen's layout in the
// figure's units and colours, and a lesson's marks over its cells
// (widgets/annotations.h). Returns where the cells are.
MatrixPlacement drawMatrixPanel(Painter& ctx, const QRectF& area, const MatrixSpec& m, MatrixStyle s,
                                const std::vector<Annotation>& marks = {}) {
  s.colormap = ctx.cmap;
  const Canvas c = figureCanvas(ctx);
  Primitives prims;
  const MatrixPlacement placed = matrixPanelPrimitives(prims, c, boxOf(area), m, s);
  const float px = kLabelScale * c.unit;
  annotationPrimitives(prims, placed, marks, 1.0f, px, c.measure(px));
  drawPrimitives(ctx, prims);
  return placed;
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
  const MatrixSpec m = weightsSpec(r, o.head);
  drawMatrixPanel(ctx, body, m, panelStyle(m, scaledWeightsRange(weightsRange(r), o.scale, r, o.head), true), o.marks);
}

void drawHeads(Painter& ctx, const QRectF& body, const Result& r, const FigureOptions& o) {
  const ValueRange range = scaledWeightsRange(weightsRange(r), o.scale, r, o.head);
  const double bar_w = ctx.unit * 7;
  const std::vector<QRectF> grid = gridCells(QRectF(body.left(), body.top(), body.width() - bar_w, body.height()),
                                             r.heads(), ctx.unit, ctx.unit * 3);
  double top = body.bottom(), bottom = body.top();
  for (int h = 0; h < r.heads(); ++h) {
    MatrixSpec m = weightsSpec(r, h);
    m.title = static_cast<size_t>(h) < o.panel_titles.size() ? o.panel_titles[static_cast<size_t>(h)] : "head " + std::to_string(h);
    MatrixStyle st = panelStyle(m, range, false);
    st.labels = r.queries() <= 24 && grid[static_cast<size_t>(h)].width() > ctx.unit * 16;
    const MatrixPlacement cells = drawMatrixPanel(ctx, grid[static_cast<size_t>(h)], m, st, h == o.head ? o.marks : std::vector<Annotation>{});
    top = std::min<double>(top, cells.y0);
    bottom = std::max<double>(bottom, cells.y1);
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
    MatrixSpec m = weightsSpec(r, 0);
    m.title = r.variant;
    // The subject carries a lesson's marks, as the screen marks it.
    const MatrixPlacement cells = drawMatrixPanel(ctx, grid[i], m, panelStyle(m, range, false), i == 0 ? o.marks : std::vector<Annotation>{});
    top = std::min<double>(top, cells.y0);
    bottom = std::max<double>(bottom, cells.y1);
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
      case ExtraKind::Picture:            // under the image view
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
  MatrixSpec main = weightsSpec(r, o.head);
  main.title = r.weights_label + (r.heads() > 1 ? " — head " + std::to_string(o.head) : std::string());
  main.value_label.clear();  // the title names what the bar shows
  drawMatrixPanel(ctx, grid[0], main, panelStyle(main, scaledWeightsRange(weightsRange(r), o.scale, r, o.head), true));
  std::vector<std::string> indices;
  int64_t longest = 64;
  for (const Extra* e : shown) longest = std::max(longest, e->value.size());
  for (int64_t k = 0; k < longest; ++k) indices.push_back(std::to_string(k));
  std::vector<Mat> mats(shown.size());
  for (size_t i = 0; i < shown.size(); ++i) {
    const Extra& e = *shown[i];
    const QRectF& cell = grid[i + 1];
    if (e.kind == ExtraKind::TokenValues) {
      // Bars are labelled by their own labels, else per-token values by their tokens, other vectors
      // (a head's q, k) by index.
      drawBars(ctx, cell, e, !e.row_labels.empty() ? e.row_labels : e.value.size() == r.queries() ? r.q_tokens : indices,
               false);
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
    MatrixSpec m = MatrixSpec::of(mats[i]);
    // A head of Weights [H, Lq, Lk], or the first of another axis (slice_axis "step", counted from 1).
    const bool by_head = e.slice_axis == "head";
    m.title = e.label + (heads <= 1 ? std::string()
                         : by_head ? " — head " + std::to_string(head)
                                   : " — " + e.slice_axis + " " + std::to_string(head + 1) + " of " + std::to_string(heads));
    m.value_label.clear();  // the title names it
    m.row_axis = e.row_axis.empty() ? "query" : e.row_axis;
    m.col_axis = e.col_axis.empty() ? "key" : e.col_axis;
    if (e.kind == ExtraKind::Weights) {
      m.row_labels = &r.q_tokens;
      m.col_labels = &r.k_tokens;
      m.key_bands = &r.key_bands;
    } else if (!e.row_labels.empty()) {
      m.row_labels = &e.row_labels;
    } else if (r.rowsAreTokens(e)) {
      m.row_labels = &r.q_tokens;
    }
    // Categories (which pattern each layer × head uses): distinct colours, a legend in place of the colour bar.
    if (!e.categories.empty()) {
      m.categories = true;
      m.category_names = &e.categories;
    }
    // A lesson's marks go on the first weights panel (the screen puts them on the weights beside it: same axes).
    const bool marks_here = e.kind == ExtraKind::Weights && !marked;
    drawMatrixPanel(ctx, cell, m, panelStyle(m, extraRange(e), true), marks_here ? o.marks : std::vector<Annotation>{});
    marked = marked || marks_here;
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
// With a Picture extra: the picture with Result::image_queries marked
// (--query moves the first), beside each one's map (pictureViewPrimitives).
void drawImageView(Painter& ctx, const QRectF& body, const Result& r, const FigureOptions& o, int64_t q) {
  Primitives prims;
  if (const Extra* picture = r.firstExtra(ExtraKind::Picture); picture && !r.weights.empty()) {
    std::vector<int64_t> queries = !o.queries.empty()        ? o.queries
                                   : r.image_queries.empty() ? std::vector<int64_t>{q}
                                                             : r.image_queries;
    if (o.queries.empty() && o.query >= 0) queries[0] = o.query;
    pictureViewPrimitives(prims, figureCanvas(ctx), boxOf(body), picture->value, r.weights[static_cast<size_t>(o.head)],
                          r.key_image_width, queries, 0, "figure");
    drawPrimitives(ctx, prims);
    return;
  }
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
    MatrixSpec m = MatrixSpec::of(st.matrix);
    m.row_labels = &st.row_labels;
    m.col_labels = &st.col_labels;
    m.row_categories = st.row_categories.empty() ? nullptr : &st.row_categories;
    m.col_categories = st.col_categories.empty() ? nullptr : &st.col_categories;
    m.row_dividers = &st.row_dividers;
    m.col_dividers = &st.col_dividers;
    MatrixStyle style = panelStyle(m, range, false);
    style.labels = st.matrix.rows <= 64;
    drawMatrixPanel(ctx, rectOf(g.stages[i]), m, style);
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
    MatrixSpec mp = MatrixSpec::of(panels[k].m);
    mp.mask = panels[k].mask;
    if (labels) {
      mp.row_labels = &r.q_tokens;
      mp.col_labels = &r.k_tokens;
    }
    MatrixStyle style = panelStyle(mp, panels[k].range, true);
    style.labels = labels;
    drawMatrixPanel(ctx, rectOf(g.panels[k]), mp, style, k == 0 ? o.marks : std::vector<Annotation>{});
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
  Primitives prims;
  columnsTablePrimitives(prims, figureCanvas(ctx), boxOf(QRectF(page.left(), page.top() + title_h, page.width(), page.height() - title_h)),
                         columns, rows);
  drawPrimitives(ctx, prims);
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
      // The matrix panel with square cells across the width (widgets/matrix_panel.h measures its margins).
      const MatrixSpec m = weightsSpec(r, std::clamp(o.head, 0, std::max(0, r.heads() - 1)));
      body_h = matrixPanelHeight(figureCanvas(unit), static_cast<float>(body_w), m, panelStyle(m, {}, true));
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
    if (!r.isSparse() && !(r.firstExtra(ExtraKind::Picture) && !r.weights.empty()))
      throw InputError("--view image: variant '" + r.variant + "' has no sparse pattern or picture to draw");
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
