// Marks drawn over a matrix to say "look here": a ring on a cell, a row or
// column band, a box around a block, an arrow from one cell to another and a
// token marked on both axes. Lessons place them (app/lesson); the layout
// emits primitives (widgets/primitives.h), so the screen and the handouts
// draw the same marks.
#pragma once

#include "widgets/primitives.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// Where a matrix was drawn: its cell area [x0, x1] × [y0, y1] shows the data
// window [u0, u1] × [v0, v1] ⊂ [0, 1]² (zoom) of a rows × cols matrix.
struct MatrixPlacement {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float u0 = 0, v0 = 0, u1 = 1, v1 = 1;
  int64_t rows = 0, cols = 0;
  bool valid() const { return rows > 0 && cols > 0 && x1 > x0 && y1 > y0; }
  float colX(double col) const;  // screen x of a column edge (col may be fractional)
  float rowY(double row) const;
};

struct Annotation {
  enum class Kind { Ring, Row, Column, Box, Arrow, Token } kind = Kind::Ring;
  // Ring: the cell (query, key). Row: query. Column: key. Box: rows
  // query … query_end and columns key … key_end. Arrow: from the cell
  // (query, key) to the cell (query_end, key_end). Token: position query,
  // marked on both axes.
  int64_t query = -1, key = -1, query_end = -1, key_end = -1;
  std::string label;  // optional, drawn beside the mark
};

const char* annotationKindName(Annotation::Kind k);

// Empty when `a` fits a rows × cols matrix; else what is out of range.
std::string annotationRangeError(const Annotation& a, int64_t rows, int64_t cols);

// The marks over `m`, `progress` (0…1) of the way through their entrance
// (rings shrink onto their cell, bands fade in, arrows grow); labels at
// `text_px` on a plate `measure` sizes. Marks that do not fit the matrix are
// skipped.
void annotationPrimitives(Primitives& out, const MatrixPlacement& m, const std::vector<Annotation>& marks, float progress,
                          float text_px, const MeasureText& measure);

}  // namespace attn
