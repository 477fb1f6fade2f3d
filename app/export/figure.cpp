// Figure export: a view's layout (widgets/views/) under the page's title,
// drawn with QPainter onto QImage (PNG), QSvgGenerator (SVG) and QPdfWriter
// (PDF). No view is laid out here: the figure is page + title + the view's
// own layout + the Qt backend.
//
// [SECTION] Text helpers shared with the handouts (figure_paint.h)
// [SECTION] Page: title, subtitle, text unit
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

// [SECTION] Page
// A layout's area.
Box boxOf(const QRectF& r) {
  return {static_cast<float>(r.left()), static_cast<float>(r.top()), static_cast<float>(r.width()), static_cast<float>(r.height())};
}

// "<variant title><view's suffix> — head h".
QString defaultTitle(const Result& r, const FigureOptions& o) {
  const VariantInfo* info = findVariant(r.variant);
  const ViewInfo& view = viewOrThrow(o.view);
  QString t = qs(info ? info->title : r.variant) + qs(view.title_suffix);
  if (view.one_head && r.heads() > 1) t += QString(" — head %1").arg(o.params.head);
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

// The painter of a figure of o.width × o.height: background filled, text
// unit scaled to the figure; `page` is the area inside the margins.
// The text unit of a figure: labels are drawn at 0.85 units, so a chosen
// label size sets it; else it scales with the figure.
double textUnit(const FigureOptions& o) {
  return o.font_size > 0 ? o.font_size / 0.85 : std::clamp(std::min(o.width, o.height) / 55.0, 7.0, 40.0);
}

QString figureTitle(const Result& r, const FigureOptions& o) { return o.title ? qs(*o.title) : defaultTitle(r, o); }

QString figureSubtitle(const Result& r, const FigureOptions& o) { return o.subtitle.empty() ? subtitleFor(r) : qs(o.subtitle); }

Painter beginPage(QPainter& p, const FigureOptions& o, double raster_scale, QRectF& page) {
  Painter ctx{p, themeFor(o.dark), o.params.colormap, textUnit(o), raster_scale};
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setRenderHint(QPainter::TextAntialiasing, true);
  p.fillRect(QRectF(0, 0, o.width, o.height), ctx.theme.background);
  const double margin = ctx.unit * 1.5;
  page = QRectF(margin, margin, o.width - 2 * margin, o.height - 2 * margin);
  return ctx;
}

// What a figure's view reads: the results (the subject first, then the rest
// of its family), the comparison, and a dense result's pattern as CSR for
// the image view, built once when the figure is prepared.
struct FigureSource {
  std::shared_ptr<const std::vector<Result>> results;
  const Comparison* comparison = nullptr;
  std::shared_ptr<const SparseRows> dense_pattern;

  ViewInput input() const {
    ViewInput in;
    in.result = &results->front();
    in.comparison = comparison;
    in.dense_pattern = dense_pattern.get();
    // The family in the registry's order, as the screen shows it.
    const auto rank = [](const std::string& name) {
      const std::vector<VariantInfo>& all = variants();
      return std::find_if(all.begin(), all.end(), [&](const VariantInfo& v) { return v.name == name; }) - all.begin();
    };
    for (const Result& r : *results) in.family.push_back({r.variant, &r, ""});
    std::stable_sort(in.family.begin(), in.family.end(),
                     [&](const ViewMember& a, const ViewMember& b) { return rank(a.variant) < rank(b.variant); });
    return in;
  }
};

// The page: title, subtitle, then the view's layout (widgets/views/) in the
// rest, its panels and a lesson's marks on its anchor panel.
void paintFigure(QPainter& p, const FigureSource& src, const FigureOptions& o, double raster_scale, nlohmann::json& described) {
  const Result& r = src.results->front();
  QRectF page;
  Painter ctx = beginPage(p, o, raster_scale, page);
  const double title_h = drawTitle(ctx, page, figureTitle(r, o), figureSubtitle(r, o));
  const Box body = boxOf(QRectF(page.left(), page.top() + title_h, page.width(), page.height() - title_h));
  const Canvas c = figureCanvas(ctx);
  Primitives prims;
  const ViewLayout l = viewOrThrow(o.view).layout(prims, c, body, src.input(), o.params);
  bool marked = false;
  for (const ViewPanel& panel : l.panels) {
    const bool marks = panel.anchor && !marked;
    panelPrimitives(prims, c, panel, marks ? o.params.marks : std::vector<Annotation>{});
    marked = marked || marks;
  }
  if (!l.message.empty()) addText(prims, body.x + body.w * 0.5f, body.y + body.h * 0.5f, l.message, labelPx(c), Role::Muted, 0.5f, 0.5f);
  drawPrimitives(ctx, prims);
  described = describeLayout(l, c);
  MarkSheet marks;
  recordMarks(prims, c, marks);
  described.update(markSheetJson(marks));
}

// A table of text: header row, rule, rows in alternating shades, columns
// sized to their widest cell; the font shrinks until every row fits. The
// plot, where given, takes the page under the rows.
// A page of primitives: the title block, then `layout` in the rest.
// `described`: its data marks, their labels and leaders (markSheetJson).
void paintLayout(QPainter& p, const FigureLayout& layout, const FigureOptions& o, double raster_scale, nlohmann::json& described) {
  QRectF page;
  Painter ctx = beginPage(p, o, raster_scale, page);
  const double title_h = drawTitle(ctx, page, qs(o.title.value_or("")), qs(o.subtitle));
  Primitives prims;
  const Canvas c = figureCanvas(ctx);
  layout(prims, c, boxOf(QRectF(page.left(), page.top() + title_h, page.width(), page.height() - title_h)));
  drawPrimitives(ctx, prims);
  MarkSheet marks;
  recordMarks(prims, c, marks);
  described = markSheetJson(marks);
}

// [SECTION] Output devices and atomic write
using Paint = std::function<void(QPainter&, double raster_scale)>;

// The height a figure of width o.width needs (FigureOptions::height == 0):
// margins, the wrapped title and subtitle, and the body the view asks for
// at that width (ViewInfo::height).
int figureHeightFor(const FigureSource& src, const FigureOptions& o) {
  const Result& r = src.results->front();
  const double unit = textUnit(o), margin = unit * 1.5, body_w = o.width - 2 * margin;
  const double title_h = titleBlockHeight(unit, body_w, figureTitle(r, o), figureSubtitle(r, o));
  const double body_h = viewOrThrow(o.view).height(figureCanvas(unit), static_cast<float>(body_w), src.input(), o.params);
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
  if (o.params.head < 0 || o.params.head >= r.heads())
    throw InputError("--head: expected 0.." + std::to_string(r.heads() - 1) + ", got " + std::to_string(o.params.head));
  const ViewInfo& view = viewOrThrow(o.view);
  auto src = std::make_shared<FigureSource>();
  src->results = results;
  src->comparison = comparison;
  // The image view of a dense pattern reads it as CSR (sparse results carry theirs).
  if (view.query && !r.isSparse() && !r.weights.empty())
    src->dense_pattern = std::make_shared<const SparseRows>(sparseFromDense(r.weights[static_cast<size_t>(o.params.head)], r.mask));
  if (const std::string why = view.refusal(src->input(), o.params); !why.empty()) throw InputError(why);
  if (o.height == 0) o.height = figureHeightFor(*src, o);
  PreparedFigure f;
  f.options = o;
  f.name = r.variant;
  f.paint = [src, o, described = f.described](QPainter& p, double scale) { paintFigure(p, *src, o, scale, *described); };
  return f;
}

PreparedFigure prepareLayoutFigure(FigureLayout layout, const FigureBodyHeight& body_height, const FigureOptions& options) {
  FigureOptions o = options;
  if (o.height == 0) {  // the title block and the body the layout asks for at the page's width
    const double unit = textUnit(o), margin = unit * 1.5, body_w = o.width - 2 * margin;
    const double title_h = titleBlockHeight(unit, body_w, qs(o.title.value_or("")), qs(o.subtitle));
    const double body_h = body_height(figureCanvas(unit), static_cast<float>(body_w));
    o.height = static_cast<int>(std::clamp(std::ceil(2 * margin + title_h + body_h), 64.0, 16384.0));
  }
  PreparedFigure f;
  f.options = o;
  f.name = o.title.value_or("");
  f.paint = [layout = std::move(layout), o, described = f.described](QPainter& p, double scale) {
    paintLayout(p, layout, o, scale, *described);
  };
  return f;
}

PreparedFigure prepareTableFigure(std::vector<std::string> columns, std::vector<std::vector<std::string>> rows,
                                  const FigureOptions& options, std::optional<Scatter> plot) {
  if (rows.empty()) throw InputError("export: the table has no rows");
  const size_t n = rows.size();
  const bool has_plot = plot.has_value();
  // A header and the rows at 1.8 units each, the plot under them at half the width.
  const FigureBodyHeight height = [n, has_plot](const Canvas& c, float width) {
    return c.unit * 1.8f * static_cast<float>(n + 1) + (has_plot ? c.unit + width * 0.5f : 0.0f);
  };
  FigureLayout layout = [columns = std::move(columns), rows = std::move(rows), plot = std::move(plot)](
                            Primitives& prims, const Canvas& c, const Box& body) {
    const float table_h = columnsTablePrimitives(prims, c, body, columns, rows);
    if (plot && body.h - table_h > c.unit * 8)
      scatterPrimitives(prims, c, {body.x, body.y + table_h + c.unit, body.w, body.h - table_h - c.unit}, *plot);
  };
  return prepareLayoutFigure(std::move(layout), height, options);
}

void writeFigure(const PreparedFigure& f, const std::string& path) { writeFigure(f.paint, f.options, path, f.name); }

int exportFigure(const std::vector<Result>& results, const FigureOptions& options, const std::string& path,
                 const Comparison* comparison, nlohmann::json* described) {
  // Painted before this returns: the results are borrowed, not copied (a shared_ptr that owns nothing).
  const PreparedFigure f = prepareFigure(std::shared_ptr<const std::vector<Result>>(std::shared_ptr<void>(), &results), options, comparison);
  writeFigure(f, path);
  if (described) *described = *f.described;
  return f.options.height;
}

}  // namespace attn
