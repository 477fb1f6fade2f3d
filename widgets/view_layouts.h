// The composite views laid out once, as primitives (widgets/primitives.h),
// for the screen and the figures alike: token lines, the image view (the
// pattern on the raster image and the connectivity matrix), the LSH
// walkthrough's arrangement of stages and pictures, and the comparison with
// full attention (its numbers table and mass strip). Each layout takes an
// area and the data, appends primitives and returns the geometry the screen
// needs for hover and clicks. Matrices and extras plots inside these views
// stay calls to their own functions (heatmap / drawMatrixPanel, the plots):
// a layout hands out the rects they go into.
//
// Index
//   [SECTION] Pieces (legend, axes of a cell picture)
//   [SECTION] Token lines
//   [SECTION] Image view
//   [SECTION] Walkthrough
//   [SECTION] Compare
#pragma once

#include "engine/compare.h"
#include "engine/result.h"
#include "widgets/primitives.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// [SECTION] Pieces

// A colour as a Raster's pixel (0xAABBGGRR, opaque).
uint32_t packRgba(Rgb8 c);
// A picture's pixel (r, g, b in [0, 1]) under a weight t ∈ [0, 1] (of the
// map's largest): the pixel in grey, the colour map's colour over it with
// opacity √t, so a weight shows where it is small and the picture where none is.
uint32_t heatOverPicture(float r, float g, float b, float t, Colormap cmap);

// A panel's title: a bold formula at the base size, wrapped to `width`, from
// (x, y); returns its height with the gap under it (0 for none). `draw`
// false only measures.
float panelTitle(Primitives& out, const Canvas& c, const std::string& title, float x, float y, float width, bool draw = true);

// Ticks and captions along the left and bottom of a picture of rows × cols
// cells (positions 0 … n−1 at cell centres): nice ticks, every row where
// few rows are tall enough. The space they take beside the picture:
struct AxesMargins {
  float left = 0, bottom = 0;
};
AxesMargins cellAxesMargins(const Canvas& c, int64_t rows, bool row_caption);
void cellAxesPrimitives(Primitives& out, const Canvas& c, const Box& picture, int64_t rows, int64_t cols,
                        const std::string& row_caption, const std::string& col_caption);

// [SECTION] Token lines

// Queries in a left column, keys in a right one, a line per (query, key,
// head) whose opacity is lineOpacity() of the weight, a colour per head;
// each line is a mark, "h2[5→3]" (head 2, query 5, key 3) with its weight.
struct TokenLinesLayout {
  float xq = 0, xk = 0;          // the ends of the lines: right of the query labels, left of the key labels
  float y0q = 0, sq = 1;         // query i's row centre: y0q + sq · (i + ½)
  float y0k = 0, sk = 1;
  float label_px = 0;
  std::vector<Box> head_boxes;   // each head's legend entry (the screen toggles a head there)
  bool too_many = false;         // more lines than are drawn: a message in their place
  int64_t queryAt(float y) const;  // −1 outside the rows
  int64_t keyAt(float y) const;
};
// `visible`: heads shown (empty: all). `hidden_in_legend`: hidden heads stay
// in the legend, faded (the screen, where a click brings them back); a
// figure lists the shown ones. `hover_q` / `hover_k` (≥ 0) isolate that
// token's lines and highlight its label.
TokenLinesLayout tokenLinesPrimitives(Primitives& out, const Canvas& c, const Box& area, const Result& r,
                                      const std::vector<bool>& visible, bool hidden_in_legend, int64_t hover_q = -1,
                                      int64_t hover_k = -1);

// [SECTION] Image view

// The Sparse Transformer paper's figure: the sequence as a w × h raster image
// with query q's keys coloured by the sub-pattern that admits them (Image
// Transformer: the query's block outlined, its memory shaded), beside the
// rows × cols connectivity coloured by set with q's row marked. Both from
// the CSR rows; nothing is L×L.
struct ImageViewLayout {
  Box image, matrix;         // the pictures' cell areas
  int64_t width = 1, height = 1;  // the image's pixels
  int64_t rows = 0, cols = 0;     // the connectivity's
  int64_t pixelAt(float x, float y) const;  // position under (x, y) in the image, −1 outside
  int64_t rowAt(float x, float y) const;    // query row under (x, y) in the matrix, −1 outside
  int64_t colAt(float x) const;
};
// `groups`: [rows] block id per query, or null. `key` names the pictures
// across frames (the screen's texture cache).
ImageViewLayout imageViewPrimitives(Primitives& out, const Canvas& c, const Box& area, const SparseRows& s,
                                    const std::vector<std::string>& set_names, int64_t image_width, int64_t query,
                                    const Extra* groups, const std::string& key);
// Width of the raster image a sequence is drawn as: Result::image_width, or
// the smallest square that holds the keys.
int64_t imageWidth(const Result& r);
// The query the image view shows (screen and figure) until one is picked: the
// middle of the image's full rows, so a causal pattern shows its reach above
// and to the left; with query blocks (QueryGroup extra), the middle query of
// the block holding it.
int64_t defaultImageQuery(const Result& r);

// [SECTION] Picture view

// The SAGAN paper's figure: the picture (a Picture extra, [h, w, 3]) with
// several query pixels marked, each in its own colour, beside one panel per
// query: the picture in grey under that query's weights, a key cell (the
// keys may be a coarser grid, Result::key_image_width) colouring the pixels
// it covers, scaled to the map's largest weight. Weights are [Lq, Lk] with
// Lq = w·h queries in raster order.
struct PictureViewLayout {
  Box image;               // the marked picture's pixels
  std::vector<Box> maps;   // each query's map, in `queries` order
  int64_t width = 1, height = 1;
  // The pixel under (x, y) in the picture or any map, −1 outside; `panel`
  // gets the map's index (−1: the picture).
  int64_t pixelAt(float x, float y, int* panel = nullptr) const;
};
// `active`: the query a click moves (drawn with a thicker mark). `key` names
// the rasters across frames (the screen's texture cache).
PictureViewLayout pictureViewPrimitives(Primitives& out, const Canvas& c, const Box& area, const Array& picture,
                                        const Mat& weights, int64_t key_width, const std::vector<int64_t>& queries,
                                        int active, const std::string& key);

// [SECTION] Walkthrough

// The stages in a grid, each under its title and typeset caption, one
// colour bar for all; the points pictures and the category bars and token
// strips beside the grid (a wide area) or under it. The matrices and plots
// go into the returned rects (their callers draw them).
struct WalkthroughLayout {
  std::vector<Box> stages;    // each stage's matrix panel, under its header; room for no colour bar
  std::vector<Box> pictures;  // each Points extra, its title included
  std::vector<Box> others;    // each CategoryValues / TokenCategories extra, its title included
  std::vector<const Extra*> picture_extras, other_extras;
};
WalkthroughLayout walkthroughPrimitives(Primitives& out, const Canvas& c, const Box& area, const Result& r,
                                        const ValueRange& range, Colormap cmap);

// [SECTION] Table

// A table of text (the model's head summaries): a bold header row, a rule
// under it, alternate rows shaded, each column right-aligned and as wide as
// its widest cell; rows `row_h` = min(1.8 units, the area's height / rows)
// apart, the text 0.6 of that and smaller where the columns would not fit the
// width. Returns the height taken.
float columnsTablePrimitives(Primitives& out, const Canvas& c, const Box& area, const std::vector<std::string>& columns,
                             const std::vector<std::vector<std::string>>& rows);

// [SECTION] Compare

// Full attention and the pattern on top, their difference below left, the
// numbers and the per-query mass strip below right (the 2 × 2 the screen
// had); without the L×L matrices (long L) a line saying so, the numbers and
// the strip.
struct CompareLayout {
  std::vector<Box> panels;      // full, pattern, difference: matrix panels under their titles (empty at long L)
  std::vector<Box> table_rows;  // the numbers table's rows, header first
  Box strip;                    // the mass strip's cells
  int64_t strip_rows = 0, strip_cols = 0;  // heads × queries
  int columns = 0;                         // the matrices' arrangement: 1, 2 or 3 in a row
};
// The three matrices in 1, 2 (a 2 × 2 with the numbers in the fourth cell)
// or 3 columns: the arrangement whose matrices come out largest in `w` × `h`
// (h ≤ 0: a figure whose height follows its content, where the widest
// arrangement whose matrices are at least 16 units is taken), and the
// height that arrangement wants at width `w`.
int compareColumns(float w, float h, float unit);
float compareHeight(float w, float unit);
// `cmap`: the mass strip's colours (0 … 1).
CompareLayout comparePrimitives(Primitives& out, const Canvas& c, const Box& area, const Comparison& cmp, Colormap cmap);
// What each row of the numbers table means (the screen's tooltips), in table_rows order after the header.
const std::vector<std::string>& comparisonNotes();

}  // namespace attn
