// A grid of coloured cells with a short text in each, its rows and columns
// labelled and a colour bar beside it: the importance grid (layers × heads,
// Δ log p in each cell), the logit lens (streams × positions, the predicted
// token in each cell), the heads' logit attribution. Each cell is a mark
// ("<array>[row, col]" with its value); a cell's text is drawn where it fits,
// dark on light cells and light on dark ones.
#pragma once

#include "engine/tensor.h"
#include "widgets/colormap.h"
#include "widgets/primitives.h"
#include "widgets/value_range.h"

#include <string>
#include <vector>

namespace attn {

struct CellGrid {
  Mat values;                      // [rows, cols]
  std::vector<std::string> text;   // rows·cols, row-major: each cell's text ("" none); empty: the values, formatted
  std::vector<std::string> row_labels, col_labels;  // empty: the indices
  std::string row_caption, col_caption, bar_caption;
  std::string array;               // the marks' name: "Δ log p"
  ValueRange range;
  Colormap cmap = Colormap::Viridis;
  int64_t mark_row = -1, mark_col = -1;  // one cell outlined (the focused head)
  float max_cell = 0;              // the largest cell side in units (0: 3.2 units)
};

struct CellGridLayout {
  Box cells;  // the grid's picture
  int64_t rows = 0, cols = 0;
  float right = 0;  // where the grid's drawing ends, its colour bar's labels included
  // The cell under (x, y), row-major, or −1.
  int64_t cellAt(float x, float y) const;
};

// Lays the grid out in `area`, its cells as large as the area allows (up to
// max_cell; a window stretches them to fill the area), labels left and below, the colour bar right.
CellGridLayout cellGridPrimitives(Primitives& out, const Canvas& c, const Box& area, const CellGrid& g);
// The height the grid needs at `width` (its cells at the largest size that fits the width).
float cellGridHeight(const Canvas& c, float width, const CellGrid& g);

}  // namespace attn
