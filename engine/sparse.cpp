#include "engine/sparse.h"

#include "engine/attention_math.h"

#include <algorithm>
#include <cmath>

namespace attn {

double SparseRows::bytes() const {
  return static_cast<double>(indptr.size() * sizeof(int64_t) + indices.size() * sizeof(int32_t) +
                             values.size() * sizeof(float) + sets.size() * sizeof(uint8_t));
}

bool denseFits(int64_t heads, int64_t lq, int64_t lk) {
  return lq > 0 && lk > 0 && heads > 0 && lq <= kDenseViewLimit / lk / heads;
}

bool denseViewsFit(const RunContext& ctx, int64_t heads, int64_t lq, int64_t lk) {
  const double copies = 3.0 * 4.0 * static_cast<double>(heads) * static_cast<double>(lq) * static_cast<double>(lk);
  return ctx.keep_weights && denseFits(heads, lq, lk) && copies <= 0.75 * static_cast<double>(availableMemoryBytes());
}

Mat toDenseValues(const SparseRows& s) {
  Mat m = Mat::Zero(s.rows, s.cols);
  for (int64_t i = 0; i < s.rows; ++i)
    for (int64_t e = s.rowBegin(i); e < s.rowEnd(i); ++e)
      m(i, s.indices[static_cast<size_t>(e)]) = s.values.empty() ? 1.0f : s.values[static_cast<size_t>(e)];
  return m;
}

Mat toDenseMask(const SparseRows& s) {
  Mat m = Mat::Zero(s.rows, s.cols);
  for (int64_t i = 0; i < s.rows; ++i)
    for (int64_t e = s.rowBegin(i); e < s.rowEnd(i); ++e) m(i, s.indices[static_cast<size_t>(e)]) = 1.0f;
  return m;
}

SparseRows sparseFromDense(const Mat& values, const Mat& mask) {
  SparseRows s;
  s.rows = values.rows();
  s.cols = values.cols();
  s.indptr.reserve(static_cast<size_t>(s.rows) + 1);
  s.indptr.push_back(0);
  const bool masked = mask.size() == values.size();
  for (int64_t i = 0; i < s.rows; ++i) {
    for (int64_t j = 0; j < s.cols; ++j)
      if (masked ? mask(i, j) != 0.0f : values(i, j) != 0.0f) {
        s.indices.push_back(static_cast<int32_t>(j));
        s.values.push_back(values(i, j));
      }
    s.indptr.push_back(s.nnz());
  }
  return s;
}

int64_t blockSize(int64_t n, int64_t at_most) {
  const int64_t cells = std::clamp<int64_t>(at_most, 1, std::max<int64_t>(n, 1));
  return (std::max<int64_t>(n, 1) + cells - 1) / cells;
}

Mat poolDense(const Mat& v, const Mat* mask, int64_t out_rows, int64_t out_cols, float empty) {
  const int64_t rows = v.rows(), cols = v.cols();
  const int64_t k_r = blockSize(rows, out_rows), k_c = blockSize(cols, out_cols);
  Mat out = Mat::Constant(std::max<int64_t>(1, (rows + k_r - 1) / k_r), std::max<int64_t>(1, (cols + k_c - 1) / k_c), empty);
  const bool masked = mask && mask->size();
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t y = i / k_r;
    for (int64_t j = 0; j < cols; ++j) {
      if (masked && (*mask)(i, j) == 0.0f) continue;
      float& cell = out(y, j / k_c);
      if (cell == empty || std::isnan(cell) || std::abs(v(i, j)) > std::abs(cell)) cell = v(i, j);
    }
  }
  return out;
}

Mat rasterize(const SparseRows& s, int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t out_rows,
              int64_t out_cols, RasterValue what, float empty) {
  r0 = std::clamp<int64_t>(r0, 0, s.rows);
  r1 = std::clamp<int64_t>(r1, r0, s.rows);
  c0 = std::clamp<int64_t>(c0, 0, s.cols);
  c1 = std::clamp<int64_t>(c1, c0, s.cols);
  // `empty` may be NaN (drawn grey by the heatmap shader), which never compares equal.
  const bool nan_empty = std::isnan(empty);
  const auto unset = [empty, nan_empty](float cell) { return nan_empty ? std::isnan(cell) : cell == empty; };
  const int64_t n_rows = r1 - r0, n_cols = c1 - c0;
  if (n_rows == 0 || n_cols == 0) return Mat::Constant(1, 1, empty);
  // Every output cell pools a whole k_r × k_c block of source cells (the last
  // row and column of blocks may be cut short): blocks of a fractional size
  // would beat against a periodic pattern and draw moiré that is not there.
  const int64_t k_r = blockSize(n_rows, out_rows), k_c = blockSize(n_cols, out_cols);
  Mat out = Mat::Constant((n_rows + k_r - 1) / k_r, (n_cols + k_c - 1) / k_c, empty);
  // Output rows are independent; each thread owns the rows it writes.
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t y = 0; y < out.rows(); ++y) {
    // Source rows [first, last) land in output row y.
    const int64_t first = r0 + y * k_r;
    const int64_t last = std::min(r1, first + k_r);
    for (int64_t i = first; i < last; ++i) {
      // Entries are sorted by column: jump to the first one in [c0, c1).
      const auto begin = s.indices.begin() + s.rowBegin(i), end = s.indices.begin() + s.rowEnd(i);
      for (auto it = std::lower_bound(begin, end, static_cast<int32_t>(c0)); it != end && *it < c1; ++it) {
        const size_t e = static_cast<size_t>(it - s.indices.begin());
        const int64_t x = (*it - c0) / k_c;  // the block holding this column
        float& cell = out(y, x);
        if (what == RasterValue::Values) {
          const float v = s.values.empty() ? 1.0f : s.values[e];
          cell = unset(cell) ? v : std::max(cell, v);
        } else {
          const int bits = s.sets.empty() ? 1 : s.sets[e];
          cell = static_cast<float>((unset(cell) ? 0 : static_cast<int>(cell)) | bits);
        }
      }
    }
  }
  return out;
}

}  // namespace attn
