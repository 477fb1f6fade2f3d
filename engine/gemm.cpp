#include "engine/gemm.h"

#include <cassert>
#include <cblas.h>

namespace attn {

void gemm(const MatRef& a, const MatRef& b, bool b_transposed, float alpha, float beta, Eigen::Ref<Mat> out) {
  const int64_t m = a.rows(), k = a.cols(), n = b_transposed ? b.rows() : b.cols();
  assert((b_transposed ? b.cols() : b.rows()) == k && out.rows() == m && out.cols() == n);
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: sgemm would leave beta · out, which is what it is
    out *= beta;
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a.data(), static_cast<int>(a.outerStride()), b.data(),
              static_cast<int>(b.outerStride()), beta, out.data(), static_cast<int>(out.outerStride()));
}

Mat product(const MatRef& a, const MatRef& b) {
  Mat out(a.rows(), b.cols());
  gemm(a, b, false, 1.0f, 0.0f, out);
  return out;
}

}  // namespace attn
