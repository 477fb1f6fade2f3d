// The matrix panel: a heatmap of a matrix with its axes, laid out once as
// primitives (widgets/primitives.h) for the screen and the figures. The
// screen's widgets/heatmap.h adds zoom, pan, hover and the tooltip on top of
// the placement it returns; app/export/figure.cpp replays it with QPainter.
//
// What it draws, top to bottom: the panel's title (a typeset formula), the
// column axis title (in the corner left of the column labels where it fits,
// "key →"), key-band labels (wrapped to their band), column labels
// (flat where they fit a cell, else turned up; thinned by labelStride), a
// column category strip, the cells (values through the colour scale, masked
// cells and a sparse matrix's missing entries grey, or category colours),
// dividers, query windows and position markers; left of the cells the row
// axis title, row labels and a row category strip; right of them the colour
// bar, or the legend of a category matrix (under it where a column of names
// would take more than a third of the width).
#pragma once

#include "engine/result.h"
#include "widgets/annotations.h"
#include "widgets/primitives.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// What to draw; nothing is owned. Either `data` (dense, row-major) or `sparse`.
struct MatrixSpec {
  const float* data = nullptr;
  const SparseRows* sparse = nullptr;  // pooled to the device's resolution; the tooltip looks up the exact entry
  int64_t rows = 0, cols = 0;
  const Mat* mask = nullptr;    // 1 = allowed: masked cells are grey
  const Mat* scores = nullptr;  // the screen's tooltip only
  // Values are category indices (headColor), named in a legend; < 0 or NaN: none.
  bool categories = false;
  const std::vector<std::string>* category_names = nullptr;
  const std::vector<std::string>* row_labels = nullptr;  // null: row indices
  const std::vector<std::string>* col_labels = nullptr;
  std::string title;  // a formula over the panel (widgets/formula.h); empty: none
  std::string row_axis = "query", col_axis = "key";
  std::string value_label = "weight";  // the colour bar's caption and the tooltip's name of a value; empty: no caption
  std::string score_label = "score";
  const Array* query_position = nullptr;  // [rows]: key position marker per row
  const Array* query_window = nullptr;    // [rows, 2]: first/last allowed key per row, outlined
  const std::vector<KeyBand>* key_bands = nullptr;      // dividers and wrapped labels above the columns
  const std::vector<std::string>* set_names = nullptr;  // sparse: names of SparseRows::sets bits (tooltip)
  // A category per row / column (headColor), a colour strip beside the axis (LSH buckets).
  const std::vector<int32_t>* row_categories = nullptr;
  const std::vector<int32_t>* col_categories = nullptr;
  std::string category_axis = "category";
  const std::vector<int64_t>* row_dividers = nullptr;  // a line before each of these rows (chunk boundaries)
  const std::vector<int64_t>* col_dividers = nullptr;  // and columns
  // > 0: a sliding window of this many keys (Mistral: row i keeps keys j
  // with i − j < W): a staircase line along its far edge, left of key i − W + 1.
  int64_t sliding_window = 0;
  bool window_centered = false;  // the window is bidirectional (ModernBERT): keys with |i − j| ≤ W/2, both edges drawn

  static MatrixSpec of(const Mat& m);
  static MatrixSpec of(const SparseRows& s);
  float value(int64_t r, int64_t c) const { return data[r * cols + c]; }
};

struct MatrixStyle {
  ValueRange range;
  Colormap colormap = Colormap::Viridis;
  bool labels = true;    // token labels and axis titles
  // Of those, the rows' and the columns' (a grid of small multiples labels
  // only its left column's rows and its top row's columns).
  bool row_labels = true, col_labels = true;
  // The column axis title in the corner left of the column labels where it
  // fits ("key →"); off: always above them (a grid's top row, whose panels
  // right of the first have no corner, keeps its cells level).
  bool corner_title = true;
  bool colorbar = true;  // or the legend, for categories
  bool tooltip = true;   // the screen's
  float max_cell_aspect = 1.0f;  // 1: square cells; larger lets a thin matrix stretch its cells
  // Labels on small cells are set smaller, down to this many units (the
  // screen keeps its font's size: kLabelScale); long ones shrink to fit their margin.
  float min_label = 0.6f;
  bool highlight = false;  // a focus frame (the selected thumbnail)
  float u0 = 0, v0 = 0, u1 = 1, v1 = 1;  // the window of the data shown (zoom), ⊂ [0, 1]²
  int64_t hover_row = -1, hover_col = -1;  // outlined cell and highlighted labels
};

// Lays `m` out in `area` and appends its primitives; returns where the cells
// are (the screen's input, a lesson's marks). An empty placement (rows = 0)
// when nothing fits.
MatrixPlacement matrixPanelPrimitives(Primitives& out, const Canvas& c, const Box& area, const MatrixSpec& m,
                                      const MatrixStyle& s);
// The height the panel takes at `width` with square cells filling that
// width (a figure whose height follows its content).
float matrixPanelHeight(const Canvas& c, float width, const MatrixSpec& m, const MatrixStyle& s);

// Head `head` of a result's main weights (dense, or sparse), with scores,
// mask, tokens, axis titles, key bands and the query overlays.
MatrixSpec weightsSpec(const Result& r, int head);

// Label `i` of an axis: its token, or its index without labels.
std::string axisLabel(const std::vector<std::string>* labels, int64_t i);

}  // namespace attn
