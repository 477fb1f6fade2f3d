// The figures' text helpers, for other QPainter pages (the lesson handouts,
// app/export/handout.h): the figure font, wrapped text and typeset formulas.
#pragma once

#include "widgets/formula.h"

#include <QColor>
#include <QFont>
#include <QPainter>
#include <QRectF>
#include <QString>

#include <vector>

namespace attn {

QFont figureFont(double px, bool bold = false);  // DejaVu Sans at `px` layout units
QFont scaledFont(const QFont& font, double scale);
// Height of `text` word-wrapped to `width` (0 for no text).
double wrappedHeight(const QFont& font, double width, const QString& text);
// A formula (widgets/formula.h) in `font`, wrapped to `width`; its height, and
// drawn from the top-left of `area` (returns the height drawn).
std::vector<FormulaLine> formulaLines(const QFont& font, double width, const QString& text);
double formulaHeight(const QFont& font, double width, const QString& text);
double drawFormula(QPainter& p, const QRectF& area, const QString& text, const QFont& font, const QColor& colour);

}  // namespace attn
