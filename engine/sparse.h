// Compressed sparse rows (CSR): an attention pattern's connections and their
// weights, for lengths where an [Lq, Lk] matrix no longer fits (the Sparse
// Transformer trained at L = 16,384: one dense head is 1 GiB of float32).
//
// Patterns are index rules. A sparse variant builds one SparseRows per head
// from its rule and computes scores, softmax and output for those entries
// only. Views and figures draw a SparseRows through rasterize(), which
// max-pools any tile of it to screen resolution without materialising L×L.
#pragma once

#include "engine/run_context.h"
#include "engine/tensor.h"

#include <cstdint>
#include <vector>

namespace attn {

struct SparseRows {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> indptr;   // [rows + 1]: row i's entries are [indptr[i], indptr[i + 1])
  std::vector<int32_t> indices;  // [nnz]: key (column) of each entry, ascending within a row
  std::vector<float> values;     // [nnz]: attention weight after softmax; empty for a bare pattern
  std::vector<uint8_t> sets;     // [nnz]: bit s set when sub-pattern s admits the entry
                                 //        (Result::set_names names the bits); empty: one set

  int64_t nnz() const { return static_cast<int64_t>(indices.size()); }
  int64_t rowBegin(int64_t i) const { return indptr[static_cast<size_t>(i)]; }
  int64_t rowEnd(int64_t i) const { return indptr[static_cast<size_t>(i) + 1]; }
  double bytes() const;  // memory the arrays hold
};

// Largest heads · Lq · Lk for which a sparse variant also fills the dense
// weights, scores and mask of its Result, so the dense views (token lines,
// family, exact tooltips) keep working: 2^24 floats, 64 MiB per copy.
constexpr int64_t kDenseViewLimit = int64_t{1} << 24;
bool denseFits(int64_t heads, int64_t lq, int64_t lk);
// Whether a sparse variant should fill its dense copies: the run wants them
// (RunContext::keep_weights), denseFits(), and weights, scores and mask fit
// in three quarters of the memory available.
bool denseViewsFit(const RunContext& ctx, int64_t heads, int64_t lq, int64_t lk);

// Dense [rows, cols] copies of a SparseRows (only where denseFits()).
Mat toDenseValues(const SparseRows& s);  // weight where an entry exists, 0 elsewhere
Mat toDenseMask(const SparseRows& s);    // 1 where an entry exists, 0 elsewhere

// The pattern of a dense [rows, cols] result as CSR: entries where `mask` is
// non-zero (where `values` is non-zero when `mask` is empty), with `values`
// as weights and no set bits. Lets the pattern views (image, connectivity)
// treat dense-only results like sparse ones.
SparseRows sparseFromDense(const Mat& values, const Mat& mask);

// What rasterize() puts in a cell.
enum class RasterValue {
  Values,  // the largest weight of the entries in the cell
  Sets,    // the bitwise OR of the entries' set bits (1 when `sets` is empty)
};

// Source cells per output cell along an axis of n cells drawn in at most
// `at_most` cells: k = ⌈n / at_most⌉ (at least 1), so the output has ⌈n / k⌉.
int64_t blockSize(int64_t n, int64_t at_most);

// Max-pools the entries of rows [r0, r1) × columns [c0, c1) into an image
// of at most [out_rows, out_cols] cells, each pooling a whole block of
// blockSize() rows × columns (never more cells than the tile has: a
// zoomed-in tile comes back at data resolution and is drawn stretched;
// ranges are clamped to the matrix). Cells no entry falls in
// hold `empty` (NaN allowed). Costs O(nnz of rows r0..r1) and never allocates L×L: this is
// how views draw the visible tile of a huge pattern at screen resolution.
// The same rule for a dense [rows, cols] matrix, the one way the screen and
// the figures shrink a matrix larger than its pixels: whole blockSize()
// blocks, each keeping its value of largest magnitude (the max for weights;
// a signed matrix keeps its extremes of either sign), so no peak is ever
// skipped. Masked cells (`mask` 0) are left out; a cell with nothing left
// holds `empty`.
Mat poolDense(const Mat& v, const Mat* mask, int64_t out_rows, int64_t out_cols, float empty);

Mat rasterize(const SparseRows& s, int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t out_rows,
              int64_t out_cols, RasterValue what, float empty = 0.0f);

}  // namespace attn
