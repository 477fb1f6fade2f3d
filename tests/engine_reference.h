// Plain-loop references for the engine tests (ggml test-backend-ops style):
// double precision, triple loops, no Eigen products, written from the
// papers' formulas. Each variant's test compares against these with an
// explicit tolerance.
#pragma once

#include "engine/inputs.h"
#include "engine/registry.h"
#include "engine/result.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attn::ref {

// A dense row-major double matrix.
struct DMat {
  int64_t rows = 0, cols = 0;
  std::vector<double> a;
  DMat() = default;
  DMat(int64_t r, int64_t c) : rows(r), cols(c), a(static_cast<size_t>(r * c), 0.0) {}
  double& operator()(int64_t i, int64_t j) { return a[static_cast<size_t>(i * cols + j)]; }
  double operator()(int64_t i, int64_t j) const { return a[static_cast<size_t>(i * cols + j)]; }
};

DMat fromMat(const Mat& m);
DMat matmul(const DMat& x, const DMat& y);       // x y
DMat transpose(const DMat& x);
DMat matmulT(const DMat& x, const DMat& y);      // x yᵀ
DMat cols(const DMat& x, int64_t first, int64_t n);
// Row-wise softmax over mask != 0 (empty mask: all allowed); masked and
// fully-masked rows are 0.
DMat softmaxRows(const DMat& s, const DMat& mask = {});
double maxAbs(const DMat& x);
// LayerNorm without gain or bias (Ba et al. 2016), per row: (x_i − mean x_i) / √(var x_i + eps),
// eps = 1e-5 as PyTorch's default and the engine's layerNormRows.
DMat layerNorm(const DMat& x, double eps = 1e-5);
// Sinusoidal PE (Vaswani et al. 2017, §3.5), positions from 0:
// PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))   [length, d]
DMat sinusoidal(int64_t length, int64_t d);
// mask(i, j) = 1 where j ≤ i + (lk − lq): causal with the ends aligned.
DMat causalMask(int64_t lq, int64_t lk);

// Attention(Q, K, V) = softmax(Q Kᵀ · scale, mask) V, one head.
struct HeadRef {
  DMat scores, weights, out;
};
HeadRef attendHead(const DMat& q, const DMat& k, const DMat& v, double scale, const DMat& mask = {});
// MultiHead = Concat(head_1 … head_h) W^o, head_i = Attention(X W^q_i, X_kv W^k_i, X_kv W^v_i) with
// scale 1/√d_k, d_k = d/h, and the W^q, W^k, W^v, W^o the run recorded as w_q, w_k, w_v, w_o.
struct MultiHeadRef {
  std::vector<HeadRef> heads;
  DMat out;
};
MultiHeadRef multiHead(const DMat& xq, const DMat& xkv, const Result& r, int64_t heads, const DMat& mask = {});

// score(s_t, h_i) for the named score, with the weights the run recorded.
DMat scores(const std::string& kind, const DMat& s, const DMat& h, const Result& r, double beta);

// Float32 engine against these double references. Scores are sums of d
// products of O(1) values, so their rounding is ~d·2⁻²⁴·max|score| ≈ 1e-6
// relative for d ≤ 64 (additive adds d_a tanh terms, each within a few
// ulps); 2e-5 leaves a 10× margin and still catches any wrong term (those
// are O(1)). Weights are in [0, 1] and inherit the score error, outputs
// average O(1) values by those weights.
constexpr double kScoreRel = 2e-5, kWeightTol = 2e-5, kOutputRel = 2e-5;

// max |got − want|; fails the test naming `what` when above `tol`.
void expectClose(const Mat& got, const DMat& want, double tol, const std::string& what);
// max |a − b| over two arrays of one shape, in double (NaN when either holds
// a NaN). Where the shapes differ: a test failure naming both shapes, and NaN,
// so that any comparison of the result fails too. Every test build defines
// NDEBUG, where Eigen checks no shapes: compare two arrays through this, not
// through Eigen's a − b.
double maxAbsDiff(const MatRef& a, const MatRef& b);
double maxAbsDiff(const std::vector<double>& a, const std::vector<double>& b);
// Tolerance for values of this magnitude: rel · max(1, max |want|).
double scaledTol(const DMat& want, double rel);

// Synthetic Gaussian inputs: x [lq, d], x_kv [lk, d].
Inputs gaussianInputs(uint64_t seed, int64_t lq, int64_t lk, int64_t d, int64_t heads);
// Inputs given as --q/--k/--v files would give them (x = q, position tokens).
Inputs givenQkv(const Mat& q, const Mat& k, const Mat& v);
// Runs `name` through the registry with KEY=VALUE settings.
Result run(const std::string& name, const Inputs& in, const std::map<std::string, std::string>& set = {},
           const RunContext& ctx = {});
// Runs f, which must throw InputError whose message contains every needle.
void expectInputError(const std::function<void()>& f, const std::vector<std::string>& needles);
const Mat& recorded(const Result& r, const std::string& symbol);  // r.inputs[symbol], failing if absent
const Array& extra(const Result& r, const std::string& name);      // r.findExtra(name)->value, failing if absent
Mat asMat(const Array& a);  // a rank-2 array as it is, a rank-1 [n] as [1, n]
Mat slice(const Array& a, int64_t first);  // a[first] of a rank-3 array, e.g. one head of [H, Lq, Lk]

// A file path under the temp dir, removed by the destructor.
struct TempPath {
  explicit TempPath(const std::string& stem);
  ~TempPath();
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  std::filesystem::path path;
};

// Sets an environment variable for the scope, restoring the old value after.
struct ScopedEnv {
  ScopedEnv(const char* key, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  std::string key, old;
  bool had = false;
};

}  // namespace attn::ref
