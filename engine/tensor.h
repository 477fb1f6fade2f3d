// Tensor aliases and the N-d float array that crosses file boundaries.
//
// Matrices are row-major on purpose: a row is a token (or a query), which
// matches the C order of .npy files and lets a [L, d] file map straight in.
#pragma once

// The one place Eigen is included. GCC 12 reports -Wmaybe-uninitialized
// (at -O3) or -Wuninitialized (at -O2, and with sanitizers) inside its own
// AVX-512 intrinsics (avx512fintrin.h's _mm512_undefined_ps, `__m512 __Y =
// __Y;`, GCC bug 105593) when Eigen's packet code inlines them, and the
// inlining into our functions defeats the system-header silence.
// Diagnostic pragmas are matched by source location, so ignoring those two
// warnings over this include covers exactly the intrinsics and Eigen, and
// leaves them on for our own code. Every other file reaches Eigen through here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <Eigen/Dense>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace attn {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vec = Eigen::VectorXf;
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;
using MatRef = Eigen::Ref<const Mat>;

// Asks the kernel to back a large matrix with transparent huge pages where
// it offers them (madvise MADV_HUGEPAGE, for THP's "madvise" mode): its
// first write then faults once per 2 MiB instead of once per 4 KiB. Call
// after allocating and before the first write; small matrices are left alone.
void preferHugePages(Mat& m);

// A matrix's values in storage (row-major: C) order, without a copy.
inline std::span<const float> values(const Mat& m) { return {m.data(), static_cast<size_t>(m.size())}; }
// The values of several same-shaped matrices one after the other ([n, r, c] in C order).
std::vector<std::span<const float>> values(const std::vector<Mat>& ms);

// A dense float32 array of any rank in C order: what .npy files hold.
struct Array {
  std::vector<int64_t> shape;
  std::vector<float> data;

  int64_t size() const;
  int rank() const { return static_cast<int>(shape.size()); }
  std::string shapeString() const;  // "[8, 12, 12]"

  static Array fromMat(const Mat& m);                  // [r, c]
  static Array fromMats(const std::vector<Mat>& ms);   // [n, r, c], all the same size
  static Array fromVector(const std::vector<float>& v);  // [n]
  static Array fromVec(const Vec& v);                  // [n]
  // Copies a rank-2 array into a matrix. `what` names it in the error message.
  Mat toMat(const std::string& what) const;
};

}  // namespace attn
