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
  // Two arrangements: the text under the figure, across the page, or beside
  // it in a column (a square map on a landscape page). The text takes what
  // it needs, set smaller when it would take more than its share (not under
  // 8 pt). The figure fills the room the text leaves, laid out at that size:
  // a grid, a table or a stack of panels spreads over it as over a window,
  // and its type keeps the size the figure sets it at. The arrangement whose
  // room shows the figure's content larger is drawn.
  const double room_h = height - kMargin - y;
  auto fitted = [&](double text_w, double share) {
    TextBlock t = measureText(page, text_w, 11);
    while (t.height() > room_h * share && t.px > 8) t = measureText(page, text_w, t.px - 0.5);
    return t;
  };
  // The area the content would take in a room: as large as its shape at that width allows.
  auto shown = [&](double room_w, double room_height) {
    const double aspect = page.figure(static_cast<int>(room_w), 0).options.height / room_w;
    const double fig_w = std::min(room_w, room_height / aspect);
    return fig_w * fig_w * aspect;
  };
  const TextBlock under = fitted(w, 0.35);
  const double under_h = std::max(64.0, room_h - under.height() - under.gap);
  const double column = std::max(200.0, w * 0.3), side_w = w - column - 2 * under.gap;
  const TextBlock side = fitted(column, 1.0);
  const bool beside = side_w >= 200 && side.height() <= room_h && shown(side_w, room_h) > 1.15 * shown(w, under_h);
  const TextBlock& t = beside ? side : under;
  const double fig_w = beside ? side_w : w, fig_h = beside ? room_h : under_h;
  const PreparedFigure f = page.figure(static_cast<int>(fig_w), static_cast<int>(fig_h));
  p.save();
  p.translate(kMargin, y);
  f.paint(p, 2.0);
  p.restore();
  // Narration, formula, prompt: under the figure, or at the top of the column beside it.
  const double tx = beside ? kMargin + w - column : kMargin, tw = beside ? column : w;
  double ty = beside ? y : height - kMargin - t.height() + t.gap;
  ty += drawFormula(p, QRectF(tx, ty, tw, t.narration), qstr(page.narration), figureFont(t.px), text) + t.gap;
  ty += drawFormula(p, QRectF(tx, ty, tw, t.formula), qstr(page.formula), figureFont(t.px * 1.1), QColor(25, 75, 160));
  if (!page.prompt.empty()) {
    ty += t.gap;
    drawFormula(p, QRectF(tx, ty, tw, t.prompt), qstr("Try it: " + page.prompt), figureFont(t.px * 0.95, true), accent);
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
