#include "app/export/handout.h"

#include "app/export/figure_paint.h"
#include "engine/error.h"
#include "engine/files.h"

#include <QPageSize>
#include <QPdfWriter>

#include <algorithm>
#include <filesystem>

namespace attn {

namespace {

constexpr double kMargin = 36;  // half an inch

QString qstr(const std::string& s) { return QString::fromStdString(s); }

// The text under the figure at `px`: narration, formula and prompt.
struct TextBlock {
  double px = 11;
  double narration = 0, formula = 0, prompt = 0, gap = 0;
  double height() const { return narration + formula + prompt + gap * 3; }
};

TextBlock measureText(const HandoutPage& page, double width, double px) {
  TextBlock t;
  t.px = px;
  t.gap = px * 0.6;
  // Narration and prompt are typeset as the screen sets them (p_t, q_i·k_j).
  t.narration = formulaHeight(figureFont(px), width, qstr(page.narration));
  t.formula = formulaHeight(figureFont(px * 1.1), width, qstr(page.formula));
  t.prompt = page.prompt.empty() ? 0 : formulaHeight(figureFont(px * 0.95, true), width, qstr("Try it: " + page.prompt));
  return t;
}

void paintPage(QPainter& p, const HandoutPage& page, int width, int height) {
  const QColor text(20, 20, 20), muted(110, 110, 115), accent(230, 110, 0);
  p.fillRect(QRectF(0, 0, width, height), Qt::white);
  const double w = width - 2 * kMargin;
  double y = kMargin;
  // Heading and the step's title.
  const QFont head_font = figureFont(9), title_font = figureFont(16, true);
  p.setFont(head_font);
  p.setPen(muted);
  const double head_h = wrappedHeight(head_font, w, qstr(page.heading));
  p.drawText(QRectF(kMargin, y, w, head_h), Qt::TextWordWrap | Qt::TextDontClip, qstr(page.heading));
  y += head_h + 4;
  p.setFont(title_font);
  p.setPen(text);
  const double title_h = wrappedHeight(title_font, w, qstr(page.title));
  p.drawText(QRectF(kMargin, y, w, title_h), Qt::TextWordWrap | Qt::TextDontClip, qstr(page.title));
  y += title_h + 8;
  // The text takes what it needs, up to 45 % of the page; smaller type when it would take more.
  TextBlock t = measureText(page, w, 11);
  while (t.height() > (height - 2 * kMargin) * 0.45 && t.px > 7) t = measureText(page, w, t.px - 0.5);
  const double bottom = height - kMargin - t.height();
  // The figure in the room between. A layout narrower than the page is tried
  // while the figure is too tall (a heatmap's height follows its width; a
  // stack of panels' does not), and the one drawn largest is kept: its text
  // is set at one size, so the largest scale reads best. Scaled down, centred.
  const double room_h = std::max(10.0, bottom - y - t.gap);
  auto scaleOf = [&](const PreparedFigure& g) { return std::min({1.0, w / g.options.width, room_h / g.options.height}); };
  PreparedFigure f = page.figure(static_cast<int>(w));
  PreparedFigure candidate = f;
  for (int i = 0; i < 3 && candidate.options.height > room_h; ++i) {
    const int narrower = static_cast<int>(candidate.options.width * std::max(0.3, room_h / candidate.options.height));
    if (narrower < 160) break;
    candidate = page.figure(narrower);
    if (scaleOf(candidate) > scaleOf(f) * 1.05) f = candidate;  // clearly larger, else keep the wider
  }
  const double scale = scaleOf(f);
  const double fx = kMargin + (w - f.options.width * scale) * 0.5;
  p.save();
  p.translate(fx, y);
  p.scale(scale, scale);
  f.paint(p, 2.0);
  p.restore();
  // Narration, formula, prompt.
  double ty = bottom + t.gap;
  ty += drawFormula(p, QRectF(kMargin, ty, w, t.narration), qstr(page.narration), figureFont(t.px), text) + t.gap;
  ty += drawFormula(p, QRectF(kMargin, ty, w, t.formula), qstr(page.formula), figureFont(t.px * 1.1), QColor(25, 75, 160));
  if (!page.prompt.empty()) {
    ty += t.gap;
    drawFormula(p, QRectF(kMargin, ty, w, t.prompt), qstr("Try it: " + page.prompt), figureFont(t.px * 0.95, true), accent);
  }
}

}  // namespace

void writeHandout(const std::vector<HandoutPage>& pages, const std::string& title, int width, int height,
                  const std::string& path) {
  if (std::filesystem::path(path).extension() != ".pdf") throw InputError("--out " + path + ": a handout is a .pdf file");
  if (pages.empty()) throw InputError("lesson export: the lesson has no steps");
  TempFile tmp(path);
  {
    QPdfWriter pdf(QString::fromStdString(tmp.path().string()));
    pdf.setResolution(72);
    pdf.setPageSize(QPageSize(QSizeF(width, height), QPageSize::Point));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    pdf.setTitle(qstr(title));
    pdf.setCreator("AttnLab");
    QPainter p;
    if (!p.begin(&pdf)) throw InputError(path + ": could not write the handout (folder missing or not writable?)");
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setRenderHint(QPainter::TextAntialiasing, true);
    for (size_t i = 0; i < pages.size(); ++i) {
      if (i > 0) pdf.newPage();
      paintPage(p, pages[i], width, height);
    }
    if (!p.end()) throw InputError(path + ": could not write the handout (folder missing or not writable?)");
  }
  tmp.commit();
}

}  // namespace attn
