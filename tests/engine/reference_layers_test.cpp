// Layer stacks against double-precision plain-loop references run through the
// registry, every output and extra compared: Reformer's reversible residual
// layers (LSH attention hashed, sorted and chunked by a plain loop), the GTrXL
// gate and the Universal Transformer with per-position ACT halting. The
// references use only the tensors the runs record (ref::recorded), never the
// engine's helpers.
#include "engine/sparse.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace attn::reference_layers_test {

using ref::DMat;

// [SECTION] Shared pieces

double sigmoidOf(double a) { return 1.0 / (1.0 + std::exp(-a)); }

// ‖a − b‖_F / ‖b‖_F
double relativeDistanceOf(const DMat& a, const DMat& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.a.size(); ++i) num += (a.a[i] - b.a[i]) * (a.a[i] - b.a[i]), den += b.a[i] * b.a[i];
  return std::sqrt(num) / std::sqrt(den);
}

DMat addOf(const DMat& a, const DMat& b) {
  DMat s = a;
  for (size_t i = 0; i < s.a.size(); ++i) s.a[i] += b.a[i];
  return s;
}

// A [1, n] row of scalars, for comparing rank-1 and scalar extras.
DMat rowOf(const std::vector<double>& v) {
  DMat m(1, static_cast<int64_t>(v.size()));
  m.a = v;
  return m;
}

// [SECTION] Reversible residual layers (Kitaev et al. 2020, §2 and §3)

// Float32 stack vs double: two or three layers of O(1) activations that grow
// additively (pre-LN) through d-term products and softmaxes; the worst error
// seen over 15 seeds and the three settings is 1e-6 relative, so 2e-5 leaves a
// 20× margin while any wrong term, key or wiring is O(0.1) or more.
constexpr double kRevRel = 2e-5;
// The engine's own float32 reconstruction ‖X′ − X‖/‖X‖; exactly 0 in exact arithmetic
// (docs/variants.md: ≈ 1e-6 over 12 layers).
constexpr double kRevReconstructionTol = 1e-5;
// FF computed in c row blocks vs one: the same formula per row, but not bit for
// bit (up to 5e-7 seen: the GEMM's blocking follows the row count); a dropped
// or misplaced row is O(1).
constexpr double kRevChunkTol = 1e-5;
// MiB figures are sums of exact byte counts rounded to float32 (2⁻²⁴ relative).
constexpr double kRevMemoryRel = 1e-6;
// A bucket decided by less than this (the gap between the two largest of
// [xR; −xR]) could flip between float and double; the scene must not have one.
constexpr double kRevBucketMargin = 1e-4;

struct RevLshOptions {
  int64_t n_buckets = 4, chunk = 4;
  bool causal = true, across_buckets = false, wrap = false;
};

struct RevLshHeadRef {
  std::vector<std::vector<int64_t>> keys;  // P_i, ascending
  DMat weights, scores, out;               // dense [L, L] weights, q_i·k_j/√d_head for all pairs, [L, d_v]
  double min_margin = std::numeric_limits<double>::infinity();
};

// One round of LSH attention, docs/variants.md "Reformer" and Kitaev et al. §2:
//   k_j = q_j/‖q_j‖; h(x) = argmax([xR; −xR]); positions sorted stably by
//   (bucket, position) and cut into chunks of m = min(chunk, L); query i attends
//   to keys j of its chunk and the previous one (with wrap chunk 0's previous is
//   the last), of its bucket (unless across_buckets), j ≤ i when causal, and to
//   itself only when it has no other key; w_ij = softmax_{j∈P_i}(q_i·k_j/√d_head).
// One round: with rounds = 1, N_ij = 1 and the duplicate correction −ln N_ij is
// 0, and `wrap` has one meaning whatever the multi-round look-back becomes.
RevLshHeadRef revLshHead(const DMat& q, const DMat& v, const DMat& rot, const RevLshOptions& o) {
  const int64_t L = q.rows, dh = q.cols, half = rot.cols;
  RevLshHeadRef h;
  DMat k = q;
  for (int64_t j = 0; j < L; ++j) {
    double n = 0;
    for (int64_t c = 0; c < dh; ++c) n += q(j, c) * q(j, c);
    for (int64_t c = 0; c < dh; ++c) k(j, c) /= std::sqrt(n);
  }
  const DMat xr = ref::matmul(q, rot);
  std::vector<int64_t> bucket(static_cast<size_t>(L));
  for (int64_t i = 0; i < L; ++i) {
    std::vector<double> cand;
    for (int64_t c = 0; c < half; ++c) cand.push_back(xr(i, c));
    for (int64_t c = 0; c < half; ++c) cand.push_back(-xr(i, c));
    const auto best = std::max_element(cand.begin(), cand.end());
    bucket[static_cast<size_t>(i)] = best - cand.begin();
    double second = -std::numeric_limits<double>::infinity();
    for (auto it = cand.begin(); it != cand.end(); ++it)
      if (it != best) second = std::max(second, *it);
    h.min_margin = std::min(h.min_margin, *best - second);
  }
  std::vector<int64_t> order, where(static_cast<size_t>(L));
  for (int64_t b = 0; b < o.n_buckets; ++b)
    for (int64_t i = 0; i < L; ++i)
      if (bucket[static_cast<size_t>(i)] == b) order.push_back(i);
  for (int64_t s = 0; s < L; ++s) where[static_cast<size_t>(order[static_cast<size_t>(s)])] = s;
  const int64_t m = std::min(o.chunk, L), chunks = (L + m - 1) / m;
  auto previous = [&](int64_t c) -> int64_t { return chunks == 1 ? -1 : c > 0 ? c - 1 : o.wrap ? chunks - 1 : -1; };
  auto admits = [&](int64_t i, int64_t j) {
    const int64_t ci = where[static_cast<size_t>(i)] / m, cj = where[static_cast<size_t>(j)] / m;
    return (!o.causal || j <= i) && (o.across_buckets || bucket[static_cast<size_t>(i)] == bucket[static_cast<size_t>(j)]) &&
           (cj == ci || cj == previous(ci));
  };
  h.scores = ref::matmulT(q, k);
  for (double& s : h.scores.a) s /= std::sqrt(static_cast<double>(dh));
  DMat allowed(L, L);
  for (int64_t i = 0; i < L; ++i) {
    std::vector<int64_t> keys;
    for (int64_t j = 0; j < L; ++j)
      if (j != i && admits(i, j)) keys.push_back(j);
    if (keys.empty()) keys.push_back(i);
    for (const int64_t j : keys) allowed(i, j) = 1;
    h.keys.push_back(keys);
  }
  h.weights = ref::softmaxRows(h.scores, allowed);
  h.out = ref::matmul(h.weights, v);
  return h;
}

struct RevStackRef {
  std::vector<RevLshHeadRef> layer0;  // per head
  DMat y1, y2;                        // the top layer's output
  std::vector<double> attn_bytes;     // per layer: the CSR bytes of its heads' weights
  double min_margin = std::numeric_limits<double>::infinity();
};

// N layers of Y₁ = X₁ + F(X₂), Y₂ = X₂ + G(Y₁) from X₁ = X₂ = x (§3), pre-LN:
//   F(X) = Concat_h LSH_h(LN(X) W^q, LN(X) W^v) W^o,  G(Y) = max(0, LN(Y) W₁ + b₁) W₂ + b₂
RevStackRef revStack(const Result& r, const RevLshOptions& o, int64_t layers, int64_t heads) {
  RevStackRef s;
  const DMat x = ref::fromMat(ref::recorded(r, "x"));
  const int64_t L = x.rows, d = x.cols, dh = d / heads;
  DMat x1 = x, x2 = x;
  for (int64_t l = 0; l < layers; ++l) {
    auto w = [&](const std::string& sym) { return ref::fromMat(ref::recorded(r, "layer" + std::to_string(l) + "_" + sym)); };
    const DMat ln2 = ref::layerNorm(x2);
    const DMat q = ref::matmul(ln2, w("w_q")), v = ref::matmul(ln2, w("w_v")), rot = w("R");
    DMat concat(L, d);
    double bytes = 0;
    for (int64_t hd = 0; hd < heads; ++hd) {
      RevLshHeadRef head = revLshHead(ref::cols(q, hd * dh, dh), ref::cols(v, hd * dh, dh), rot, o);
      s.min_margin = std::min(s.min_margin, head.min_margin);
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < dh; ++j) concat(i, hd * dh + j) = head.out(i, j);
      // CSR: indptr int64 [L + 1], indices int32 and values float32 [nnz].
      int64_t nnz = 0;
      for (const auto& keys : head.keys) nnz += static_cast<int64_t>(keys.size());
      bytes += 8.0 * static_cast<double>(L + 1) + 8.0 * static_cast<double>(nnz);
      if (l == 0) s.layer0.push_back(std::move(head));
    }
    s.attn_bytes.push_back(bytes);
    const DMat y1 = addOf(x1, ref::matmul(concat, w("w_o")));
    const DMat ln1 = ref::layerNorm(y1), w1 = w("w_1"), b1 = w("b_1"), w2 = w("w_2"), b2 = w("b_2");
    DMat y2 = x2;
    for (int64_t i = 0; i < L; ++i)
      for (int64_t c = 0; c < d; ++c) {
        double acc = b2(c, 0);
        for (int64_t f = 0; f < w1.cols; ++f) {
          double hid = b1(f, 0);
          for (int64_t t = 0; t < d; ++t) hid += ln1(i, t) * w1(t, f);
          acc += std::max(0.0, hid) * w2(f, c);
        }
        y2(i, c) += acc;
      }
    x1 = y1;
    x2 = y2;
  }
  s.y1 = x1;
  s.y2 = x2;
  return s;
}

void expectReversibleMatches(const Inputs& in, const RevLshOptions& o, int64_t layers, int64_t ff_mult, int64_t c) {
  const std::string what = "reversible causal=" + std::to_string(o.causal) + " across=" + std::to_string(o.across_buckets) +
                           " wrap=" + std::to_string(o.wrap) + " L=" + std::to_string(in.x.rows());
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  const Result r = ref::run("reversible", in,
                            {{"layers", std::to_string(layers)}, {"ff_mult", std::to_string(ff_mult)}, {"ff_chunks", std::to_string(c)},
                             {"n_buckets", std::to_string(o.n_buckets)}, {"chunk", std::to_string(o.chunk)}, {"rounds", "1"},
                             {"causal", flag(o.causal)}, {"across_buckets", flag(o.across_buckets)}, {"wrap", flag(o.wrap)}});
  const int64_t L = in.x.rows(), d = in.x.cols(), H = in.heads, d_ff = ff_mult * d;
  const RevStackRef want = revStack(r, o, layers, H);
  ASSERT_GT(want.min_margin, kRevBucketMargin) << what << ": a bucket is decided within rounding; pick another seed";

  // Layer 0's weights (dense and CSR) and its scores q_i·k_j/√d_head over all pairs.
  ASSERT_EQ(r.heads(), H);
  ASSERT_EQ(static_cast<int64_t>(r.sparse.size()), H);
  for (int64_t h = 0; h < H; ++h) {
    const RevLshHeadRef& head = want.layer0[static_cast<size_t>(h)];
    const std::string hw = what + " head " + std::to_string(h);
    ref::expectClose(r.weights[h], head.weights, ref::scaledTol(head.weights, kRevRel), hw + " weights");
    ref::expectClose(r.scores[h], head.scores, ref::scaledTol(head.scores, kRevRel), hw + " scores");
    const SparseRows& sp = r.sparse[static_cast<size_t>(h)];
    for (int64_t i = 0; i < L; ++i) {
      const std::vector<int64_t> got(sp.indices.begin() + sp.rowBegin(i), sp.indices.begin() + sp.rowEnd(i));
      EXPECT_EQ(got, head.keys[static_cast<size_t>(i)]) << hw << " keys of query " << i;
    }
    ref::expectClose(toDenseValues(sp), head.weights, ref::scaledTol(head.weights, kRevRel), hw + " CSR weights");
  }
  EXPECT_EQ(r.mask.size(), 0) << what << ": the pattern is the CSR, no dense mask";

  // Output [Y₁ | Y₂] of the top layer.
  DMat out(L, 2 * d);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < d; ++j) out(i, j) = want.y1(i, j), out(i, d + j) = want.y2(i, j);
  ref::expectClose(r.output, out, ref::scaledTol(out, kRevRel), what + " output");

  // Reconstruction error [2, N + 1]: 0 in exact arithmetic, and 0 exactly for the top layer's input.
  const Mat err = ref::asMat(ref::extra(r, "reconstruction_error"));
  ref::expectClose(err, DMat(2, layers + 1), kRevReconstructionTol, what + " reconstruction_error");
  EXPECT_EQ(err(0, layers), 0.0f);
  EXPECT_EQ(err(1, layers), 0.0f);
  ref::expectClose(ref::asMat(ref::extra(r, "max_reconstruction_error")), rowOf({err.maxCoeff()}), 0.0,
                   what + " max_reconstruction_error");

  // Activations kept for the backward pass (MiB), n = 0 … N layers, float32:
  //   normal: n · [(2·L·d + L·d_ff)·4 + mean attention CSR bytes per layer]
  //   reversible: Y₁, Y₂ (2·L·d·4), one FF hidden block (⌈L/c⌉·d_ff·4), the largest layer's CSR
  double sum = 0, mx = 0;
  for (const double b : want.attn_bytes) sum += b, mx = std::max(mx, b);
  const double mib = 1.0 / (1 << 20), per_layer = (2.0 * L * d + static_cast<double>(L) * d_ff) * 4 + sum / static_cast<double>(layers);
  const double ff_peak_c = static_cast<double>((L + c - 1) / c * d_ff) * 4;
  DMat memory(2, layers + 1);
  for (int64_t n = 1; n <= layers; ++n)
    memory(0, n) = static_cast<double>(n) * per_layer * mib, memory(1, n) = (2.0 * L * d * 4 + ff_peak_c + mx) * mib;
  ref::expectClose(ref::asMat(ref::extra(r, "activation_memory")), memory, ref::scaledTol(memory, kRevMemoryRel),
                   what + " activation_memory");

  ref::expectClose(ref::asMat(ref::extra(r, "ff_chunked_difference")), rowOf({0.0}), kRevChunkTol,
                   what + " ff_chunked_difference");
  ref::expectClose(ref::asMat(ref::extra(r, "ff_peak_bytes_1")), rowOf({static_cast<double>(L * d_ff) * 4}), 0.0,
                   what + " ff_peak_bytes_1");
  ref::expectClose(ref::asMat(ref::extra(r, "ff_peak_bytes_c")), rowOf({ff_peak_c}), 0.0, what + " ff_peak_bytes_c");
  std::set<std::string> names;
  for (const Extra& e : r.extras) names.insert(e.name);
  EXPECT_EQ(names, (std::set<std::string>{"reconstruction_error", "activation_memory", "max_reconstruction_error",
                                          "ff_chunked_difference", "ff_peak_bytes_1", "ff_peak_bytes_c"}))
      << what << ": an extra without a reference here";
}

TEST(ReferenceLayers, ReversibleMatchesPlainLoopStack) {
  // Two heads of d_head = 8 over 32 positions: 8 chunks of 4 (3 layers, d_ff = 2d, FF in 4
  // blocks), and a last chunk shorter than the others (7 chunks of 5, 6 buckets, 2 layers, d_ff = 3d).
  const Inputs in = ref::gaussianInputs(7, 32, 32, 16, 2);
  expectReversibleMatches(in, {}, 3, 2, 4);
  expectReversibleMatches(in, {.causal = false, .across_buckets = true}, 3, 2, 4);
  expectReversibleMatches(in, {.n_buckets = 6, .chunk = 5, .wrap = true}, 2, 3, 3);
}

// [SECTION] GTrXL gate (Parisotto et al. 2020, §3.2)

// Float32 MHA then six d-term GEMMs through σ and tanh: at most 3e-6 seen (the
// scores, relative) over 15 seeds; 2e-5 as the core MHA tests (kScoreRel in
// engine/variants/core_test.cpp), while a wrong wire or a dropped bias is O(0.1).
constexpr double kGateRel = 2e-5;

void expectGtrxlMatches(const Inputs& in, double b_g, bool causal) {
  const std::string what = "gtrxl-gate b_g=" + std::to_string(b_g) + " causal=" + std::to_string(causal);
  const Result r = ref::run("gtrxl-gate", in, {{"b_g", std::to_string(b_g)}, {"causal", causal ? "true" : "false"}});
  const DMat x = ref::fromMat(ref::recorded(r, "x"));
  const int64_t L = x.rows, d = x.cols, H = in.heads;
  const DMat mask = causal ? ref::causalMask(L, L) : DMat();
  // y = MHA(x): the sublayer whose output the gate takes.
  const ref::MultiHeadRef mha = ref::multiHead(x, x, r, H, mask);
  ASSERT_EQ(r.heads(), H);
  for (int64_t h = 0; h < H; ++h) {
    const ref::HeadRef& want = mha.heads[static_cast<size_t>(h)];
    ref::expectClose(r.scores[h], want.scores, ref::scaledTol(want.scores, kGateRel), what + " scores " + std::to_string(h));
    ref::expectClose(r.weights[h], want.weights, kGateRel, what + " weights " + std::to_string(h));
  }
  if (causal) ref::expectClose(r.mask, mask, 0.0, what + " mask");
  else EXPECT_EQ(r.mask.size(), 0) << what;
  const DMat& y = mha.out;
  ref::expectClose(ref::recorded(r, "y"), y, ref::scaledTol(y, kGateRel), what + " recorded y");

  // r = σ(y W_r + x U_r),  z = σ(y W_z + x U_z − b_g),  ĥ = tanh(y W_g + (r ⊙ x) U_g),  g = (1 − z) ⊙ x + z ⊙ ĥ
  // (rows are positions, so the paper's W y is y W).
  const DMat w_r = ref::fromMat(ref::recorded(r, "w_r")), u_r = ref::fromMat(ref::recorded(r, "u_r"));
  const DMat w_z = ref::fromMat(ref::recorded(r, "w_z")), u_z = ref::fromMat(ref::recorded(r, "u_z"));
  const DMat w_g = ref::fromMat(ref::recorded(r, "w_g")), u_g = ref::fromMat(ref::recorded(r, "u_g"));
  DMat z(L, d), h_hat(L, d), g(L, d);
  double z_sum = 0;
  for (int64_t i = 0; i < L; ++i) {
    std::vector<double> reset(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j) {
      double a = 0;
      for (int64_t k = 0; k < d; ++k) a += y(i, k) * w_r(k, j) + x(i, k) * u_r(k, j);
      reset[static_cast<size_t>(j)] = sigmoidOf(a);
    }
    for (int64_t j = 0; j < d; ++j) {
      double az = -b_g, ah = 0;
      for (int64_t k = 0; k < d; ++k) {
        az += y(i, k) * w_z(k, j) + x(i, k) * u_z(k, j);
        ah += y(i, k) * w_g(k, j) + reset[static_cast<size_t>(k)] * x(i, k) * u_g(k, j);
      }
      z(i, j) = sigmoidOf(az);
      h_hat(i, j) = std::tanh(ah);
      g(i, j) = (1 - z(i, j)) * x(i, j) + z(i, j) * h_hat(i, j);
      z_sum += z(i, j);
    }
  }
  // The placements the gate replaces: x + y, and pre-LN x + MHA(LN(x)) with the same weights.
  const DMat residual = addOf(x, y);
  const DMat ln = ref::layerNorm(x);
  const DMat pre_ln = addOf(x, ref::multiHead(ln, ln, r, H, mask).out);

  ref::expectClose(r.output, g, ref::scaledTol(g, kGateRel), what + " output g");
  ref::expectClose(ref::asMat(ref::extra(r, "g")), g, ref::scaledTol(g, kGateRel), what + " g");
  ref::expectClose(ref::asMat(ref::extra(r, "z")), z, kGateRel, what + " z");
  ref::expectClose(ref::asMat(ref::extra(r, "h_hat")), h_hat, kGateRel, what + " h_hat");
  ref::expectClose(ref::asMat(ref::extra(r, "residual")), residual, ref::scaledTol(residual, kGateRel), what + " residual");
  ref::expectClose(ref::asMat(ref::extra(r, "pre_ln")), pre_ln, ref::scaledTol(pre_ln, kGateRel), what + " pre_ln");
  ref::expectClose(ref::asMat(ref::extra(r, "z_mean")), rowOf({z_sum / static_cast<double>(L * d)}), kGateRel, what + " z_mean");
  ref::expectClose(ref::asMat(ref::extra(r, "gate_from_x")), rowOf({relativeDistanceOf(g, x)}), kGateRel, what + " gate_from_x");
  ref::expectClose(ref::asMat(ref::extra(r, "residual_from_x")), rowOf({relativeDistanceOf(residual, x)}), kGateRel,
                   what + " residual_from_x");
  ref::expectClose(ref::asMat(ref::extra(r, "pre_ln_from_x")), rowOf({relativeDistanceOf(pre_ln, x)}), kGateRel,
                   what + " pre_ln_from_x");
  EXPECT_EQ(r.extras.size(), 9u) << what << ": an extra without a reference here";
}

TEST(ReferenceLayers, GtrxlGateMatchesPlainLoops) {
  const Inputs in = ref::gaussianInputs(11, 10, 10, 16, 2);
  expectGtrxlMatches(in, 2.0, false);  // the default: near the identity
  expectGtrxlMatches(in, -1.5, true);  // z mostly open, causal sublayer
}

// [SECTION] Universal Transformer (Dehghani et al. 2019, §2.1–2.2) with ACT (Graves 2016)

// Float32 recurrence of up to M steps, each two LayerNorms (which divide by a
// row's spread) after an MHA and a 2d-wide transition: the worst error seen
// over 30 runs of up to 8 steps is 5e-6 (a late step's weights); 5e-5 leaves
// a 10× margin, a wrong step, skipped update or halting weight is O(0.1).
constexpr double kUtRel = 5e-5;
// A halting decision Σ h ≥ 1 − ε closer than this could flip between float
// and double; the scene must not have one.
constexpr double kUtHaltMargin = 1e-4;
// PE values in [−1, 1] rounded to float32 (2⁻²⁴ ≈ 6e-8), angles computed in double.
constexpr double kUtPeTol = 1e-6;

struct UtRef {
  std::vector<std::vector<ref::HeadRef>> steps;  // per step t = 1 … T, per head
  DMat state;                                    // H^T
  std::vector<int64_t> n;                        // N_i
  std::vector<double> remainder;                 // R_i
  DMat p;                                        // [L, T]
  double min_margin = std::numeric_limits<double>::infinity();
};

// H^0 = x; for t = 1 … M while some position runs:
//   P^t = PE(position) + PE(t);  h_i^t = σ((H_i^{t−1} + P_i^t) w_h + b_h) for running i
//   ACT per position: N_i = min(min{n : Σ_{t≤n} h_i^t ≥ 1 − ε}, M),  R_i = 1 − Σ_{t<N_i} h_i^t,
//   p_i^t = h_i^t (t < N_i), R_i (t = N_i)
//   A^t = LN(H^{t−1} + MHA(H^{t−1} + P^t)),  H^t = LN(A^t + ReLU(A^t W_1) W_2),
//   taken by the positions that ran step t (t ≤ N_i); the others keep their state.
UtRef utReference(const Result& r, int64_t heads, double eps, int64_t M, double b_h) {
  DMat h = ref::fromMat(ref::recorded(r, "x"));
  const int64_t L = h.rows, d = h.cols;
  const DMat w_1 = ref::fromMat(ref::recorded(r, "w_1")), w_2 = ref::fromMat(ref::recorded(r, "w_2"));
  const DMat w_h = ref::fromMat(ref::recorded(r, "w_h"));
  const DMat pos = ref::sinusoidal(L, d), time = ref::sinusoidal(M + 1, d);
  UtRef u;
  u.n.assign(static_cast<size_t>(L), 0);
  u.remainder.assign(static_cast<size_t>(L), 0.0);
  std::vector<double> sum(static_cast<size_t>(L), 0.0);
  std::vector<std::vector<double>> p(static_cast<size_t>(L));
  for (int64_t t = 1; t <= M && std::count(u.n.begin(), u.n.end(), 0) > 0; ++t) {
    DMat in(L, d);
    for (int64_t i = 0; i < L; ++i)
      for (int64_t c = 0; c < d; ++c) in(i, c) = h(i, c) + pos(i, c) + time(t, c);
    std::vector<bool> runs(static_cast<size_t>(L));
    for (int64_t i = 0; i < L; ++i) {
      const auto iu = static_cast<size_t>(i);
      runs[iu] = u.n[iu] == 0;
      if (!runs[iu]) continue;
      double logit = b_h;
      for (int64_t c = 0; c < d; ++c) logit += in(i, c) * w_h(c, 0);
      const double hi = sigmoidOf(logit);
      if (t < M) u.min_margin = std::min(u.min_margin, std::abs(sum[iu] + hi - (1 - eps)));
      if (sum[iu] + hi >= 1 - eps || t == M) {
        u.n[iu] = t;
        u.remainder[iu] = 1 - sum[iu];
        p[iu].push_back(u.remainder[iu]);
      } else {
        sum[iu] += hi;
        p[iu].push_back(hi);
      }
    }
    ref::MultiHeadRef mha = ref::multiHead(in, in, r, heads);
    const DMat a = ref::layerNorm(addOf(h, mha.out));
    DMat next = a;
    for (int64_t i = 0; i < L; ++i)
      for (int64_t c = 0; c < d; ++c)
        for (int64_t f = 0; f < w_1.cols; ++f) {
          double hid = 0;
          for (int64_t k = 0; k < d; ++k) hid += a(i, k) * w_1(k, f);
          next(i, c) += std::max(0.0, hid) * w_2(f, c);
        }
    next = ref::layerNorm(next);
    for (int64_t i = 0; i < L; ++i)
      if (runs[static_cast<size_t>(i)])
        for (int64_t c = 0; c < d; ++c) h(i, c) = next(i, c);
    u.steps.push_back(std::move(mha.heads));
  }
  const auto T = static_cast<int64_t>(u.steps.size());
  u.state = h;
  u.p = DMat(L, T);
  for (int64_t i = 0; i < L; ++i)
    for (size_t t = 0; t < p[static_cast<size_t>(i)].size(); ++t) u.p(i, static_cast<int64_t>(t)) = p[static_cast<size_t>(i)][t];
  return u;
}

void expectUtMatches(const Inputs& in, double eps, int64_t M, double b_h) {
  const std::string what = "universal-transformer ε=" + std::to_string(eps) + " M=" + std::to_string(M) +
                           " b_h=" + std::to_string(b_h) + " seed=" + std::to_string(in.seed);
  const Result r = ref::run("universal-transformer", in,
                            {{"epsilon", std::to_string(eps)}, {"max_steps", std::to_string(M)}, {"halt_bias", std::to_string(b_h)}});
  const int64_t L = in.x.rows(), d = in.x.cols(), H = in.heads;
  const UtRef want = utReference(r, H, eps, M, b_h);
  ASSERT_GT(want.min_margin, kUtHaltMargin) << what << ": a halt is decided within rounding; pick another seed";
  const auto T = static_cast<int64_t>(want.steps.size());
  ASSERT_EQ(ref::extra(r, "steps_run").data, std::vector<float>{static_cast<float>(T)}) << what;

  // The last step's weights and scores per head; every step's head-0 weights.
  ASSERT_EQ(r.heads(), H);
  for (int64_t h = 0; h < H; ++h) {
    const ref::HeadRef& last = want.steps.back()[static_cast<size_t>(h)];
    ref::expectClose(r.weights[h], last.weights, kUtRel, what + " weights head " + std::to_string(h));
    ref::expectClose(r.scores[h], last.scores, ref::scaledTol(last.scores, kUtRel), what + " scores head " + std::to_string(h));
  }
  EXPECT_EQ(r.mask.size(), 0) << what << ": every position sees every other";
  const Array& steps = ref::extra(r, "attention_steps");
  ASSERT_EQ(steps.shape, (std::vector<int64_t>{T, L, L})) << what;
  for (int64_t t = 0; t < T; ++t)
    ref::expectClose(ref::slice(steps, t), want.steps[static_cast<size_t>(t)][0].weights, kUtRel,
                     what + " attention_steps step " + std::to_string(t + 1));
  ref::expectClose(r.output, want.state, ref::scaledTol(want.state, kUtRel), what + " output H^T");

  // Halting: N_i exact, p_i^t, the ponder map (0 updating, 1 halts here, 2 halted), N + R, Σ (N + R).
  std::vector<double> n(want.n.begin(), want.n.end()), ponder;
  DMat map(L, T);
  double cost = 0;
  for (int64_t i = 0; i < L; ++i) {
    const auto iu = static_cast<size_t>(i);
    for (int64_t t = 1; t <= T; ++t) map(i, t - 1) = t < want.n[iu] ? 0 : t == want.n[iu] ? 1 : 2;
    ponder.push_back(static_cast<double>(want.n[iu]) + want.remainder[iu]);
    cost += ponder.back();
  }
  ref::expectClose(ref::asMat(ref::extra(r, "halting_step")), rowOf(n), 0.0, what + " halting_step");
  ref::expectClose(ref::asMat(ref::extra(r, "ponder_map")), map, 0.0, what + " ponder_map");
  ref::expectClose(ref::asMat(ref::extra(r, "p")), want.p, kUtRel, what + " p");
  ref::expectClose(ref::asMat(ref::extra(r, "ponder_time")), rowOf(ponder), ref::scaledTol(rowOf(ponder), kUtRel),
                   what + " ponder_time");
  ref::expectClose(ref::asMat(ref::extra(r, "ponder_cost")), rowOf({cost}), cost * kUtRel, what + " ponder_cost");
  // PE(t) for t = 1 … T.
  DMat time(T, d);
  const DMat pe = ref::sinusoidal(T + 1, d);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < d; ++c) time(t, c) = pe(t + 1, c);
  ref::expectClose(ref::asMat(ref::extra(r, "time_signal")), time, kUtPeTol, what + " time_signal");
  EXPECT_EQ(r.extras.size(), 8u) << what << ": an extra without a reference here";
  EXPECT_GT(std::set<int64_t>(want.n.begin(), want.n.end()).size(), 1u) << what << ": positions should halt at different steps";
}

TEST(ReferenceLayers, UniversalTransformerMatchesAllStepsWithHalting) {
  expectUtMatches(ref::gaussianInputs(1, 12, 12, 16, 2), 0.01, 8, 1.5);  // the defaults
  expectUtMatches(ref::gaussianInputs(5, 9, 9, 24, 3), 0.1, 6, -0.5);    // longer pondering
  expectUtMatches(ref::gaussianInputs(3, 10, 10, 16, 4), 0.01, 3, -2.0);  // M cuts positions off
}

}  // namespace attn::reference_layers_test
