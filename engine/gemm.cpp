#include "engine/gemm.h"

#include <algorithm>
#include <cassert>
#include <cblas.h>
#include <omp.h>

namespace attn {
namespace {

// One sgemm on a block of C: rows [r0, r0 + rn), columns [c0, c0 + cn).
void sgemmBlock(const MatRef& a, const MatRef& b, bool b_transposed, float alpha, float beta, Eigen::Ref<Mat> out,
                int64_t r0, int64_t rn, int64_t c0, int64_t cn) {
  const int64_t k = a.cols();
  const float* b0 = b_transposed ? b.data() + c0 * b.outerStride() : b.data() + c0;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans, static_cast<int>(rn),
              static_cast<int>(cn), static_cast<int>(k), alpha, a.data() + r0 * a.outerStride(),
              static_cast<int>(a.outerStride()), b0, static_cast<int>(b.outerStride()), beta,
              out.data() + r0 * out.outerStride() + c0, static_cast<int>(out.outerStride()));
}

// Below this many multiply-adds OpenBLAS never threads (it threads above
// SMP_THRESHOLD_MIN · GEMM_MULTITHREAD_THRESHOLD = 65536 · 4 by default).
constexpr double kThreadedProduct = 65536.0;

// About this many tiles per product, rounded so tile edges stay multiples of
// the kernels' widths.
constexpr int64_t kTiles = 16;
int64_t tileSize(int64_t extent, int64_t multiple) {
  return std::max(multiple, (extent + kTiles * multiple - 1) / (kTiles * multiple) * multiple);
}

}  // namespace

void gemmOnce(const MatRef& a, const MatRef& b, bool b_transposed, float alpha, float beta, Eigen::Ref<Mat> out) {
  const int64_t m = a.rows(), k = a.cols(), n = b_transposed ? b.rows() : b.cols();
  assert((b_transposed ? b.cols() : b.rows()) == k && out.rows() == m && out.cols() == n);
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: sgemm would leave beta · out, which is what it is
    out *= beta;
    return;
  }
  sgemmBlock(a, b, b_transposed, alpha, beta, out, 0, m, 0, n);
}

void gemm(const MatRef& a, const MatRef& b, bool b_transposed, float alpha, float beta, Eigen::Ref<Mat> out) {
  const int64_t m = a.rows(), k = a.cols(), n = b_transposed ? b.rows() : b.cols();
  assert((b_transposed ? b.cols() : b.rows()) == k && out.rows() == m && out.cols() == n);
  if (static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) < kThreadedProduct)
    return gemmOnce(a, b, b_transposed, alpha, beta, out);  // empty and small products too
  // Left to itself OpenBLAS splits C among its threads at edges that depend
  // on the thread count, and its AVX-512 edge kernels sum in another order
  // than its main kernel: the same product differed in the last bits between
  // 1 and 2 threads. So C is cut here into tiles that depend on the shape
  // alone (never on the threads, nor on whether the caller is already in a
  // parallel region), and each tile is one sgemm called inside the parallel
  // region, where OpenBLAS's OpenMP build runs on the calling thread alone.
  // Inside a caller's parallel region the loop below runs on that thread.
  // Row tiles of at least half the rows up to 512: each tile packs all of B
  // (a model's weight matrix), and 16 tiles of 128 rows spent 15 % of a
  // 2,048-token prefill packing the same weights again.
  const bool by_rows = m >= 128 || n < 512;
  const int64_t tile = by_rows ? std::max(tileSize(m, 64), std::min<int64_t>(512, (m + 127) / 128 * 64))
                               : tileSize(n, 256);
  const int64_t tiles = ((by_rows ? m : n) + tile - 1) / tile;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t t = 0; t < tiles; ++t) {
    if (by_rows)
      sgemmBlock(a, b, b_transposed, alpha, beta, out, t * tile, std::min(tile, m - t * tile), 0, n);
    else
      sgemmBlock(a, b, b_transposed, alpha, beta, out, 0, m, t * tile, std::min(tile, n - t * tile));
  }
}

Mat product(const MatRef& a, const MatRef& b) {
  Mat out(a.rows(), b.cols());
  gemm(a, b, false, 1.0f, 0.0f, out);
  return out;
}

}  // namespace attn
