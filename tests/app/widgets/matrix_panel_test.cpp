// The matrix panel's layout (widgets/matrix_panel.h), as both backends
// receive it, on a fake monospace canvas: everything inside its area, labels
// thinned so none overlaps another, cells square, column labels turned up
// only when they do not fit a cell, band labels inside their band, a
// category legend beside or under the cells, zoom showing only what is in
// view, and the height a figure asks for holding the whole panel.
#include "widgets/matrix_panel.h"

#include "tests/app_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

namespace attn {
namespace {

// Every glyph 0.6 of the text size wide.
Canvas monospace() { return test::monoCanvas(12); }

struct GlyphRect {
  float x0, y0, x1, y1;
  bool overlaps(const GlyphRect& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// The box a text primitive's glyphs cover, as the backends place it: its
// advance wide, one em high (a label's letters and digits stay within it).
GlyphRect glyphRect(const Canvas& c, const Primitive& p) {
  const float w = c.textWidth(p.text, p.size), h = p.size;
  if (p.baseline) return {p.x0, p.y0 - c.ascent_of(p.size), p.x0 + w, p.y0 - c.ascent_of(p.size) + h};
  if (!p.vertical) return {p.x0 - p.align_x * w, p.y0 - p.align_y * h, p.x0 - p.align_x * w + w, p.y0 - p.align_y * h + h};
  // Turned up: the text's own x runs up the page, its y to the right.
  const float left = p.x0 - p.align_y * h, bottom = p.y0 + p.align_x * w;
  return {left, bottom - w, left + h, bottom};
}

std::vector<const Primitive*> texts(const Primitives& prims) {
  std::vector<const Primitive*> out;
  for (const Primitive& p : prims)
    if (p.kind == Primitive::Kind::Text) out.push_back(&p);
  return out;
}

const Primitive* rasterOf(const Primitives& prims) {
  for (const Primitive& p : prims)
    if (p.kind == Primitive::Kind::Raster) return &p;
  return nullptr;
}

// Weights in [0, 1].
MatrixStyle weightsStyle() {
  MatrixStyle s;
  s.range = {0.0f, 1.0f, false};
  return s;
}

MatrixSpec labelled(const Mat& w, const std::vector<std::string>& rows, const std::vector<std::string>& cols) {
  MatrixSpec m = MatrixSpec::of(w);
  m.row_labels = &rows;
  m.col_labels = &cols;
  return m;
}

std::vector<std::string> tokens(int n, const std::string& stem) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(stem + std::to_string(i));
  return out;
}

void expectInside(const Canvas& c, const Primitives& prims, const Box& area) {
  for (const Primitive* t : texts(prims)) {
    const GlyphRect r = glyphRect(c, *t);
    EXPECT_GE(r.x0, area.x - 0.5f) << "'" << t->text << "' runs past the left edge";
    EXPECT_LE(r.x1, area.x + area.w + 0.5f) << "'" << t->text << "' runs past the right edge";
    EXPECT_GE(r.y0, area.y - 0.5f) << "'" << t->text << "' runs past the top";
    EXPECT_LE(r.y1, area.y + area.h + 0.5f) << "'" << t->text << "' runs past the bottom";
  }
}

// Labels of one kind (same size, same turn) never overlap one another.
void expectNoOverlap(const Canvas& c, const Primitives& prims) {
  const std::vector<const Primitive*> t = texts(prims);
  for (size_t a = 0; a < t.size(); ++a)
    for (size_t b = a + 1; b < t.size(); ++b) {
      if (t[a]->baseline || t[b]->baseline || t[a]->vertical != t[b]->vertical || t[a]->role != t[b]->role) continue;
      EXPECT_FALSE(glyphRect(c, *t[a]).overlaps(glyphRect(c, *t[b]))) << "'" << t[a]->text << "' and '" << t[b]->text << "'";
    }
}

TEST(MatrixPanel, ALongMatrixHasThinnedLabelsInsideItsAreaAndSquareCells) {
  const Canvas c = monospace();
  const Mat w = Mat::Constant(200, 200, 0.5f);
  const std::vector<std::string> q = tokens(200, "query"), k = tokens(200, "key");
  MatrixSpec m = labelled(w, q, k);
  m.title = "head 0";
  MatrixStyle s = weightsStyle();
  const Box area{10, 20, 640, 480};
  Primitives prims;
  const MatrixPlacement p = matrixPanelPrimitives(prims, c, area, m, s);
  ASSERT_TRUE(p.valid());
  EXPECT_NEAR((p.x1 - p.x0) / 200.0f, (p.y1 - p.y0) / 200.0f, 1.0f / 200.0f) << "square cells";
  EXPECT_GE(p.x0, area.x);
  EXPECT_LE(p.y1, area.y + area.h);
  const Primitive* cells = rasterOf(prims);
  ASSERT_NE(cells, nullptr);
  EXPECT_FLOAT_EQ(cells->x0, p.x0);
  EXPECT_FLOAT_EQ(cells->y1, p.y1);
  EXPECT_EQ(cells->raster->values, w.data());
  expectInside(c, prims, area);
  expectNoOverlap(c, prims);
  size_t labels = 0;
  for (const Primitive* t : texts(prims)) labels += t->text.rfind("query", 0) == 0 && t->text != "query";
  EXPECT_GT(labels, 3u);
  EXPECT_LT(labels, 200u) << "200 rows in ~400 units cannot all be labelled";
}

TEST(MatrixPanel, ColumnLabelsLieFlatWhereTheyFitAndTurnUpWhereNot) {
  const Canvas c = monospace();
  const Mat w = Mat::Constant(4, 4, 0.25f);
  const std::vector<std::string> shortk = tokens(4, "k"), longk = tokens(4, "a-rather-long-token-");
  MatrixSpec m = MatrixSpec::of(w);
  MatrixStyle s = weightsStyle();
  const Box area{0, 0, 600, 500};
  auto turned = [&](const std::vector<std::string>& labels) {
    m.col_labels = &labels;
    Primitives prims;
    matrixPanelPrimitives(prims, c, area, m, s);
    expectInside(c, prims, area);
    for (const Primitive* t : texts(prims))
      if (t->text == labels[2]) return t->vertical;
    ADD_FAILURE() << "no label " << labels[2];
    return false;
  };
  EXPECT_FALSE(turned(shortk));
  EXPECT_TRUE(turned(longk));
}

TEST(MatrixPanel, KeyBandLabelsWrapInsideTheirBands) {
  const Canvas c = monospace();
  const Mat w = Mat::Constant(8, 24, 0.1f);
  MatrixSpec m = MatrixSpec::of(w);
  const std::vector<KeyBand> bands = {{0, 16, "memory M (the previous segment, no gradient)"}, {16, 24, "segment tau"}};
  m.key_bands = &bands;
  MatrixStyle s = weightsStyle();
  const Box area{0, 0, 420, 300};
  Primitives prims;
  const MatrixPlacement p = matrixPanelPrimitives(prims, c, area, m, s);
  ASSERT_TRUE(p.valid());
  expectInside(c, prims, area);
  expectNoOverlap(c, prims);
  int memory_lines = 0;
  for (const Primitive* t : texts(prims)) {
    const GlyphRect r = glyphRect(c, *t);
    if (t->text.find("memory") != std::string::npos || t->text.find("gradient") != std::string::npos) {
      EXPECT_GE(r.x0, p.colX(0) - 0.5f);
      EXPECT_LE(r.x1, p.colX(16) + 0.5f) << "'" << t->text << "' leaves its band";
    }
    if (t->text.find("tau") != std::string::npos) {
      EXPECT_GE(r.x0, p.colX(16) - 0.5f);
    }
    if (t->y0 < p.y0 && (t->text.find("memory") != std::string::npos || t->text.find("no gradient") != std::string::npos))
      ++memory_lines;
  }
  EXPECT_GE(memory_lines, 1);
}

TEST(MatrixPanel, CategoriesHaveALegendBesideOrUnderTheCells) {
  const Canvas c = monospace();
  const Mat w = (Mat(2, 3) << 0, 1, 2, 2, 1, 0).finished();
  MatrixSpec m = MatrixSpec::of(w);
  m.categories = true;
  MatrixStyle s;
  const std::vector<std::string> few = {"local", "strided", "both"};
  const std::vector<std::string> long_names = {"the first pattern of the factorization", "the second pattern, strided",
                                               "both of them at once"};
  for (const auto* names : {&few, &long_names}) {
    m.category_names = names;
    const Box area{0, 0, 500, 260};
    Primitives prims;
    const MatrixPlacement p = matrixPanelPrimitives(prims, c, area, m, s);
    ASSERT_TRUE(p.valid());
    EXPECT_TRUE(rasterOf(prims)->raster->categories);
    expectInside(c, prims, area);
    expectNoOverlap(c, prims);
    const Primitive* entry = nullptr;
    for (const Primitive* t : texts(prims))
      if (t->text == (*names)[1]) entry = t;
    ASSERT_NE(entry, nullptr) << "the legend names every category";
    if (names == &few) {
      EXPECT_GT(entry->x0, p.x1) << "a short legend goes beside the cells";
    } else {
      EXPECT_GT(entry->y0, p.y1) << "a wide legend goes under them";
    }
    for (const Primitive& q : prims) EXPECT_NE(q.kind, Primitive::Kind::ColormapStrip) << "no colour bar for categories";
  }
}

TEST(MatrixPanel, AZoomedWindowLabelsOnlyTheRowsAndColumnsInView) {
  const Canvas c = monospace();
  const Mat w = Mat::Constant(64, 64, 0.5f);
  MatrixSpec m = MatrixSpec::of(w);
  MatrixStyle s = weightsStyle();
  s.u0 = s.v0 = 0.5f;
  s.u1 = s.v1 = 0.75f;  // rows and columns 32 … 47
  Primitives prims;
  const MatrixPlacement p = matrixPanelPrimitives(prims, c, Box{0, 0, 500, 500}, m, s);
  ASSERT_TRUE(p.valid());
  EXPECT_NEAR(p.colX(32), p.x0, 1e-3f);
  EXPECT_NEAR(p.rowY(48), p.y1, 1e-3f);
  EXPECT_FLOAT_EQ(rasterOf(prims)->raster->u0, 0.5f);
  for (const Primitive* t : texts(prims)) {
    const bool label = t->x0 < p.x0 || t->y0 < p.y0;  // not a colour-bar tick
    if (!label || t->role != Role::Text || t->text.empty() || !std::isdigit(static_cast<unsigned char>(t->text[0]))) continue;
    const int i = std::stoi(t->text);
    EXPECT_GE(i, 32);
    EXPECT_LT(i, 48);
  }
}

TEST(MatrixPanel, TheHeightAFigureAsksForHoldsThePanelWithSquareCells) {
  const Canvas c = monospace();
  const Mat w = Mat::Constant(12, 30, 0.5f);
  const std::vector<std::string> q = tokens(12, "token"), k = tokens(30, "word");
  MatrixSpec m = labelled(w, q, k);
  const std::vector<KeyBand> bands = {{0, 18, "memory"}, {18, 30, "segment"}};
  m.key_bands = &bands;
  m.title = "a title";
  MatrixStyle s = weightsStyle();
  const float width = 520, height = matrixPanelHeight(c, width, m, s);
  Primitives prims;
  const Box area{0, 0, width, height};
  const MatrixPlacement p = matrixPanelPrimitives(prims, c, area, m, s);
  ASSERT_TRUE(p.valid());
  expectInside(c, prims, area);
  EXPECT_NEAR((p.x1 - p.x0) / 30.0f, (p.y1 - p.y0) / 12.0f, 0.2f) << "square cells";
  EXPECT_LE(p.y1, height);
  EXPECT_GT(p.y1, height - c.unit * 2) << "no room left over under the cells";
}

TEST(MatrixPanel, HoverOutlinesTheCellAndMarksItsLabels) {
  const Canvas c = monospace();
  const Mat w = Mat::Constant(6, 6, 0.5f);
  MatrixSpec m = MatrixSpec::of(w);
  MatrixStyle s = weightsStyle();
  Primitives plain, hovered;
  matrixPanelPrimitives(plain, c, Box{0, 0, 300, 300}, m, s);
  s.hover_row = 2;
  s.hover_col = 4;
  const MatrixPlacement p = matrixPanelPrimitives(hovered, c, Box{0, 0, 300, 300}, m, s);
  int outlines = 0, plates = 0;
  for (const Primitive& q : hovered) {
    if (q.kind == Primitive::Kind::StrokeRect && std::abs(q.x0 - p.colX(4)) < 1e-3f && std::abs(q.y0 - p.rowY(2)) < 1e-3f) ++outlines;
    if (q.kind == Primitive::Kind::FillRect && q.role == Role::Accent) ++plates;
  }
  EXPECT_EQ(outlines, 2) << "dark under light";
  EXPECT_EQ(plates, 2) << "the row's label and the column's";
  EXPECT_GT(hovered.size(), plain.size());
}

TEST(MatrixPanel, NothingToDrawGivesAnEmptyPlacement) {
  const Canvas c = monospace();
  Primitives prims;
  EXPECT_FALSE(matrixPanelPrimitives(prims, c, Box{0, 0, 300, 300}, MatrixSpec{}, MatrixStyle{}).valid());
  EXPECT_TRUE(prims.empty());
}

}  // namespace
}  // namespace attn
