// Positional encodings: sinusoidal PE against the formula, its Toeplitz
// similarity, learned PE tables from files, ALiBi's slopes and biases and
// RoPE's rotation against transformers' formula.
#include "engine/error.h"
#include "engine/npy.h"
#include "engine/attention_math.h"
#include "engine/inputs.h"
#include "engine/variants/alibi.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace attn {
namespace {

using ref::DMat;

// PE(pos, 2i) = sin(pos / base^(2i/d)),  PE(pos, 2i+1) = cos(pos / base^(2i/d))
DMat sinusoidRef(int64_t l, int64_t d, double base) {
  DMat pe(l, d);
  for (int64_t pos = 0; pos < l; ++pos)
    for (int64_t i = 0; 2 * i < d; ++i) {
      const double angle = pos / std::pow(base, 2.0 * i / d);
      pe(pos, 2 * i) = std::sin(angle);
      if (2 * i + 1 < d) pe(pos, 2 * i + 1) = std::cos(angle);
    }
  return pe;
}

// max |G(i, j) − G(|i − j|, 0)|: 0 for a symmetric Toeplitz matrix.
double toeplitzDeviation(const Mat& g) {
  double worst = 0;
  for (int64_t i = 0; i < g.rows(); ++i)
    for (int64_t j = 0; j < g.cols(); ++j) worst = std::max(worst, std::abs(double(g(i, j)) - g(std::abs(i - j), 0)));
  return worst;
}

const Extra& peExtra(const Result& r) {
  const Extra* e = r.findExtra("pe");
  if (!e) throw std::logic_error("no pe extra");
  return *e;
}

// PE entries are float-rounded (≤ 6e-8 each), so PE·PEᵀ over d = 64 terms
// is within ~1e-5 of the double reference; 1e-4 leaves margin.
constexpr double kGramTol = 1e-4;

TEST(SinusoidalPe, MatchesFormula) {
  const Inputs in = ref::gaussianInputs(1, 30, 4, 64, 4);
  for (const double base : {10000.0, 100.0}) {
    const Result r = ref::run("sinusoidal-pe", in, {{"base", std::to_string(base)}});
    const DMat pe = sinusoidRef(30, 64, base);
    const Extra& e = peExtra(r);
    EXPECT_EQ(e.kind, ExtraKind::Matrix);
    EXPECT_EQ(e.row_axis, "position");
    EXPECT_EQ(e.col_axis, "dimension");
    EXPECT_TRUE(e.signed_values);
    ref::expectClose(e.value.toMat("pe"), pe, 1e-6, "PE base=" + std::to_string(base));
    ref::expectClose(r.weights[0], ref::matmulT(pe, pe), kGramTol, "PE·PEᵀ");
    EXPECT_EQ(r.scores[0], r.weights[0]);
    EXPECT_FALSE(r.weights_are_probabilities);
    EXPECT_EQ(r.weights_label, "PE·PEᵀ");
    EXPECT_EQ(r.output.size(), 0);
    EXPECT_EQ(r.q_tokens, in.tokens);
    EXPECT_EQ(r.k_tokens, in.tokens);
  }
}

TEST(SinusoidalPe, SimilarityIsToeplitzAndValuesBounded) {
  for (const int64_t d : {16, 64}) {
    const Result r = ref::run("sinusoidal-pe", ref::gaussianInputs(2, 50, 4, d, 4));
    EXPECT_LE(toeplitzDeviation(r.weights[0]), kGramTol) << "d=" << d;
    const Mat pe = peExtra(r).value.toMat("pe");
    EXPECT_LE(pe.cwiseAbs().maxCoeff(), 1.0f);
    EXPECT_NEAR(r.weights[0](0, 0), d / 2.0, 1e-5);  // PE(0) = (0, 1, 0, 1, …)
  }
  // The check can fail: a random table is far from Toeplitz.
  Mat g = randomNormal(20, 8, 3, "g");
  EXPECT_GT(toeplitzDeviation(g * g.transpose()), 0.1);
}

// §3.5: PE_{pos+k} = M_k·PE_pos with M_k a rotation by k·ω_i on each pair.
DMat rotationRef(int64_t d, int64_t k, double base) {
  DMat m(d, d);
  for (int64_t i = 0; 2 * i + 1 < d; ++i) {
    const double a = k / std::pow(base, 2.0 * i / d);
    m(2 * i, 2 * i) = std::cos(a);
    m(2 * i, 2 * i + 1) = std::sin(a);
    m(2 * i + 1, 2 * i) = -std::sin(a);
    m(2 * i + 1, 2 * i + 1) = std::cos(a);
  }
  return m;
}

// ‖PE_{pos+k} − M·PE_pos‖ over the first `paired` dimensions, plain loops.
double shiftResidual(const DMat& pe, const DMat& m, int64_t pos, int64_t k, int64_t paired) {
  double sq = 0;
  for (int64_t r = 0; r < paired; ++r) {
    double moved = 0;
    for (int64_t c = 0; c < paired; ++c) moved += m(r, c) * pe(pos, c);
    sq += (pe(pos + k, r) - moved) * (pe(pos + k, r) - moved);
  }
  return std::sqrt(sq);
}

TEST(SinusoidalPe, ShiftIsARotationOfTheEncoding) {
  for (const int64_t d : {64, 15}) {
    for (const int64_t k : {0, 1, 7, 300}) {
      const int64_t l = 40;
      const Result r = ref::run("sinusoidal-pe", ref::gaussianInputs(3, l, 4, d, 1), {{"k", std::to_string(k)}});
      const DMat m = rotationRef(d, k, 10000.0);
      const Extra* mk = r.findExtra("m_k");
      const Extra* res = r.findExtra("shift_residual");
      const Extra* worst = r.findExtra("max_shift_residual");
      ASSERT_TRUE(mk && res && worst);
      ref::expectClose(mk->value.toMat("m_k"), m, 1e-6, "M_k d=" + std::to_string(d) + " k=" + std::to_string(k));
      // The plain-loop residual on the reference table, pairs only.
      const DMat pe = sinusoidRef(l + k, d, 10000.0);
      const int64_t paired = d - d % 2;
      double ref_worst = 0;
      for (int64_t pos = 0; pos < l; ++pos) ref_worst = std::max(ref_worst, shiftResidual(pe, m, pos, k, paired));
      EXPECT_LT(ref_worst, 1e-9);                         // the identity itself, in double
      EXPECT_LT(worst->value.data[0], 2e-5) << "d=" << d << " k=" << k;  // the float table keeps it
      ASSERT_EQ(res->value.size(), l);
      for (int64_t pos = 0; pos < l; ++pos) EXPECT_LE(res->value.data[static_cast<size_t>(pos)], worst->value.data[0]);
      // The check can fail: M_{k+1} does not move PE_pos to PE_{pos+k}.
      const DMat wrong = rotationRef(d, k + 1, 10000.0);
      EXPECT_GT(shiftResidual(pe, wrong, 5, k, paired), 1e-3);
    }
  }
}

TEST(LearnedPe, FileDecidesLengthAndLabels) {
  const Mat table = randomNormal(9, 6, 4, "table");
  const ref::TempPath file("pe.npy");
  writeNpy(file.path, Array::fromMat(table));
  // Same length as the input: the input's tokens label the positions.
  const Inputs same = ref::gaussianInputs(3, 9, 4, 16, 4);
  const Result r = ref::run("learned-pe", same, {{"pe", file.path.string()}});
  EXPECT_EQ(r.q_tokens, same.tokens);
  const DMat pe = ref::fromMat(table);
  ref::expectClose(r.weights[0], ref::matmulT(pe, pe), ref::scaledTol(ref::matmulT(pe, pe), 1e-5), "learned PE·PEᵀ");
  EXPECT_EQ(peExtra(r).value.toMat("pe"), table);
  EXPECT_EQ(ref::recorded(r, "pe"), table);
  EXPECT_FALSE(r.weights_are_probabilities);
  // Another length: the file's L and d win, positions are labelled p0…p8.
  const Result other = ref::run("learned-pe", ref::gaussianInputs(3, 5, 4, 16, 4), {{"pe", file.path.string()}});
  EXPECT_EQ(other.queries(), 9);
  EXPECT_EQ(other.keys(), 9);
  EXPECT_EQ(other.q_tokens, positionTokens(9, "p"));
  EXPECT_EQ(other.weights[0], r.weights[0]);
}

using ref::expectInputError;

TEST(LearnedPe, BadFilesNameTheParameter) {
  const Inputs in = ref::gaussianInputs(3, 5, 4, 16, 4);
  expectInputError([&] { ref::run("learned-pe", in); }, {"'pe'", "[L, d]"});
  const ref::TempPath flat("flat.npy"), cube("cube.npy"), empty("empty.npy");
  writeNpy(flat.path, Array::fromVector({1, 2, 3}));
  writeNpy(cube.path, Array{{2, 2, 2}, std::vector<float>(8, 1.0f)});
  writeNpy(empty.path, Array{{0, 4}, {}});
  for (const auto* f : {&flat, &cube, &empty})
    expectInputError([&] { ref::run("learned-pe", in, {{"pe", f->path.string()}}); },
                     {f->path.string(), "(pe)", "[L, d]"});
  expectInputError([&] { ref::run("learned-pe", in, {{"pe", "/nonexistent/pe.npy"}}); },
                   {"/nonexistent/pe.npy (pe)", "no such file"});
}

// [SECTION] ALiBi and RoPE (issue 15: position signals of current models)

TEST(Alibi, SlopesAreThePapersGeometricSequence) {
  // Powers of two: m_h = 2^(−8h/H).
  auto powers = [](std::initializer_list<double> exponents) {
    std::vector<double> v;
    for (const double e : exponents) v.push_back(std::exp2(e));
    return v;
  };
  EXPECT_EQ(alibiSlopes(8), powers({-1, -2, -3, -4, -5, -6, -7, -8}));
  EXPECT_EQ(alibiSlopes(1), powers({-8}));
  EXPECT_EQ(alibiSlopes(4), powers({-2, -4, -6, -8}));
  // Not a power of two: the slopes of n = 8, then every other slope of 16 (2^−0.5, 2^−1.5, …), as the
  // authors' get_slopes(12) gives; H = 6: those of 4, then 2^−1 and 2^−3 from 8's.
  const std::vector<double> twelve = alibiSlopes(12), six = alibiSlopes(6);
  const std::vector<double> want12 = powers({-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5});
  const std::vector<double> want6 = powers({-2, -4, -6, -8, -1, -3});
  ASSERT_EQ(twelve.size(), 12u);
  ASSERT_EQ(six.size(), 6u);
  for (size_t h = 0; h < 12; ++h) EXPECT_NEAR(twelve[h], want12[h], 1e-15) << "H = 12, head " << h;
  for (size_t h = 0; h < 6; ++h) EXPECT_NEAR(six[h], want6[h], 1e-15) << "H = 6, head " << h;
}

TEST(Alibi, BidirectionalBiasIsSymmetricInTheDistance) {
  // Without causal: w_ij = softmax_j(s_ij − m_h |i − j|) over every key, written here as plain loops.
  const Inputs in = ref::gaussianInputs(5, 10, 10, 16, 2);
  const Result r = ref::run("alibi", in, {{"causal", "false"}});
  const Mat& q = ref::recorded(r, "q");
  const Mat& k = ref::recorded(r, "k");
  const std::vector<double> m = alibiSlopes(2);
  for (int64_t h = 0; h < 2; ++h) {
    DMat s(10, 10);
    for (int64_t i = 0; i < 10; ++i)
      for (int64_t j = 0; j < 10; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < 8; ++c) dot += double(q(i, h * 8 + c)) * k(j, h * 8 + c);
        s(i, j) = dot / std::sqrt(8.0) - m[static_cast<size_t>(h)] * std::abs(i - j);
      }
    ref::expectClose(r.weights[static_cast<size_t>(h)], ref::softmaxRows(s), 1e-5, "alibi head " + std::to_string(h));
  }
  const Extra* bias = r.findExtra("bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_FLOAT_EQ(bias->value.data[3], -3.0f / 16);  // head 0 of 2, i = 0, j = 3: −2^(−8·1/2) · 3
}

// HF `transformers`' apply_rotary_pos_emb, written out: q·cos + rotate_half(q)·sin with
// rotate_half(x) = [−x₂, x₁] and cos, sin of m θ_i repeated over both halves; columns
// [first, first + n) of x, row r at position m = first_position + r.
DMat rotateHalfRef(const DMat& x, int64_t first, int64_t n, double base, int64_t first_position = 0) {
  DMat out(x.rows, n);
  const int64_t half = n / 2;
  for (int64_t r = 0; r < x.rows; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const double m = static_cast<double>(first_position + r);
      const double theta = std::pow(base, -2.0 * static_cast<double>(c % half) / static_cast<double>(n));
      const double rotated = c < half ? -x(r, first + c + half) : x(r, first + c - half);
      out(r, c) = x(r, first + c) * std::cos(m * theta) + rotated * std::sin(m * theta);
    }
  return out;
}

namespace rope_refs {

// Tolerances, float32 engine vs double reference (as in tests/engine/variants/core_test.cpp):
// projections, rotated q and k, scores and outputs are sums of ≤ 32 products of
// O(1) values, rounded to ~d·2⁻²⁴ relative; 2e-5 of max(1, max |want|) is a
// 10× margin and still far below any wrong term or wrong sign (those are O(1)).
// Weights are in [0, 1] and inherit the score error.
constexpr double kRel = 2e-5, kWeightTol = 2e-5;
// m θ_i mod 2π is taken in double and rounded to float: ≤ 2π·2⁻²⁴ ≈ 4e-7.
constexpr double kAngleTol = 1e-6;
// The distance curves' query position D (docs/variants.md: "as a query at position 255").
constexpr int64_t kCurveQueryPosition = 255;

DMat causalMaskRef(int64_t l) {
  DMat m(l, l);
  for (int64_t i = 0; i < l; ++i)
    for (int64_t j = 0; j <= i; ++j) m(i, j) = 1.0;
  return m;
}

// q, k, v [L, d] as the heads see them before the rotation. Per head h (no W^o):
//   q' = R(m) q_h, k' = R(n) k_h,  s = q' k'ᵀ / √d_head,  w = softmax_n(s, causal),  out_h = w v_h
void expectHeadsMatch(const Result& r, const DMat& q, const DMat& k, const DMat& v, int64_t heads, double base,
                      bool causal, const std::string& what) {
  const int64_t l = q.rows, d = q.cols, dh = d / heads;
  const DMat mask = causal ? causalMaskRef(l) : DMat();
  if (causal) ref::expectClose(r.mask, mask, 0.0, what + " mask");
  else EXPECT_EQ(r.mask.size(), 0) << what << ": no mask without causal";
  ASSERT_EQ(r.heads(), heads) << what;
  DMat q_rot(l, d), k_rot(l, d), out(l, d);
  for (int64_t h = 0; h < heads; ++h) {
    const std::string head = what + " head " + std::to_string(h);
    const DMat qr = rotateHalfRef(q, h * dh, dh, base), kr = rotateHalfRef(k, h * dh, dh, base);
    DMat s = ref::matmulT(qr, kr);
    for (double& x : s.a) x /= std::sqrt(static_cast<double>(dh));
    const DMat w = ref::softmaxRows(s, mask), o = ref::matmul(w, ref::cols(v, h * dh, dh));
    ref::expectClose(r.scores[static_cast<size_t>(h)], s, ref::scaledTol(s, kRel), head + " scores");
    ref::expectClose(r.weights[static_cast<size_t>(h)], w, kWeightTol, head + " weights");
    for (int64_t i = 0; i < l; ++i)
      for (int64_t c = 0; c < dh; ++c) {
        q_rot(i, h * dh + c) = qr(i, c);
        k_rot(i, h * dh + c) = kr(i, c);
        out(i, h * dh + c) = o(i, c);
      }
  }
  ref::expectClose(ref::recorded(r, "q_rot"), q_rot, ref::scaledTol(q_rot, kRel), what + " q_rot");
  ref::expectClose(ref::recorded(r, "k_rot"), k_rot, ref::scaledTol(k_rot, kRel), what + " k_rot");
  ref::expectClose(r.output, out, ref::scaledTol(out, kRel), what + " output = Concat(head_1 … head_H)");
}

// angle(m, i) = m θ_i mod 2π, θ_i = base^(−2i/d_head)                          [L, d_head/2]
DMat angleRef(int64_t l, int64_t dh, double base) {
  DMat a(l, dh / 2);
  for (int64_t m = 0; m < l; ++m)
    for (int64_t i = 0; i < dh / 2; ++i)
      a(m, i) = std::fmod(static_cast<double>(m) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(dh)),
                          2 * std::numbers::pi);
  return a;
}

// RoFormer §3.4.3: (1/(d_head/2)) Σ_{j=1}^{d_head/2} |S_j|, S_j = Σ_{i<j} e^{iΔθ_i}      [1, D + 1]
DMat boundRef(int64_t dh, double base) {
  DMat b(1, kCurveQueryPosition + 1);
  for (int64_t delta = 0; delta <= kCurveQueryPosition; ++delta) {
    double re = 0, im = 0, sum = 0;
    for (int64_t i = 0; i < dh / 2; ++i) {
      const double a = static_cast<double>(delta) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(dh));
      re += std::cos(a);
      im += std::sin(a);
      sum += std::hypot(re, im);
    }
    b(0, delta) = sum / static_cast<double>(dh / 2);
  }
  return b;
}

// score_by_distance, head 0, one content u as the query at D and as the key at D − Δ:
//   RoPE:        R(D) u_q · R(D − Δ) u_k / √d_head
//   sinusoidal:  (x_u + PE_D) P_q · (x_u + PE_{D−Δ}) P_k / √d_head
// Projected here: x_u is the last token's x, P = head 0's columns of W^q, W^k,
// u_q = x_u P_q, u_k = x_u P_k. Given q, k: the last token's head-0 q (k) is
// x_u, P = I, PE of width d_head. The seeded head 0 has W^k = W^q, which makes
// its RoPE curve even in Δ; only given q ≠ k tell D − Δ from D + Δ.          [2, D + 1]
DMat curvesRef(const Result& r, int64_t dh, double base) {
  const bool here = r.inputs.count("w_q") > 0;
  auto last = [&](const char* name, int64_t width) {
    const DMat all = ref::fromMat(ref::recorded(r, name));
    DMat row(1, width);
    for (int64_t c = 0; c < width; ++c) row(0, c) = all(all.rows - 1, c);
    return row;
  };
  auto headZero = [&](const char* name, int64_t width) {  // P [width, d_head]
    if (here) return ref::cols(ref::fromMat(ref::recorded(r, name)), 0, dh);
    DMat eye(width, dh);
    for (int64_t c = 0; c < dh; ++c) eye(c, c) = 1.0;
    return eye;
  };
  const int64_t width = here ? ref::recorded(r, "x").cols() : dh;
  const DMat xq = last(here ? "x" : "q", width), xk = last(here ? "x" : "k", width);
  const DMat pq = headZero("w_q", width), pk = headZero("w_k", width);
  const DMat pe = sinusoidRef(kCurveQueryPosition + 1, width, base);
  auto plusPe = [&](const DMat& x, int64_t pos) {
    DMat y = x;
    for (int64_t c = 0; c < width; ++c) y(0, c) += pe(pos, c);
    return y;
  };
  const double scale = 1 / std::sqrt(static_cast<double>(dh));
  const DMat qd = rotateHalfRef(ref::matmul(xq, pq), 0, dh, base, kCurveQueryPosition);
  const DMat q_abs = ref::matmul(plusPe(xq, kCurveQueryPosition), pq);
  DMat curves(2, kCurveQueryPosition + 1);
  for (int64_t delta = 0; delta <= kCurveQueryPosition; ++delta) {
    const int64_t n = kCurveQueryPosition - delta;
    curves(0, delta) = ref::matmulT(qd, rotateHalfRef(ref::matmul(xk, pk), 0, dh, base, n))(0, 0) * scale;
    curves(1, delta) = ref::matmulT(q_abs, ref::matmul(plusPe(xk, n), pk))(0, 0) * scale;
  }
  return curves;
}

// The extras: angle, score_by_distance and rope_bound.
void expectExtrasMatch(const Result& r, int64_t l, int64_t dh, double base, const std::string& what) {
  const Extra* angle = r.findExtra("angle");
  const Extra* curves = r.findExtra("score_by_distance");
  const Extra* bound = r.findExtra("rope_bound");
  ASSERT_TRUE(angle && curves && bound) << what;
  EXPECT_EQ(r.extras.size(), 3u) << what;
  ref::expectClose(angle->value.toMat("angle"), angleRef(l, dh, base), kAngleTol, what + " angle");
  const DMat c = curvesRef(r, dh, base), b = boundRef(dh, base);
  ref::expectClose(curves->value.toMat("score_by_distance"), c, ref::scaledTol(c, kRel), what + " score_by_distance");
  ref::expectClose(bound->value.toMat("rope_bound"), b, ref::scaledTol(b, kRel), what + " rope_bound");
}

}  // namespace rope_refs

TEST(Rope, RotatesGivenQueriesAndKeysAsTransformersDoes) {
  const int64_t L = 12, H = 2, dh = 8;
  const Mat q = randomNormal(L, H * dh, 3, "rope.q"), k = randomNormal(L, H * dh, 3, "rope.k");
  const Mat v = randomNormal(L, H * dh, 3, "rope.v");
  const Inputs in = makeFromMatrices(Mat(), q, k, v, H, 1);
  for (const bool causal : {true, false}) {
    const std::string what = std::string("given q, k, v, causal=") + (causal ? "1" : "0");
    const Result r = ref::run("rope", in, {{"base", "500"}, {"causal", causal ? "true" : "false"}});
    rope_refs::expectHeadsMatch(r, ref::fromMat(q), ref::fromMat(k), ref::fromMat(v), H, 500, causal, what);
    rope_refs::expectExtrasMatch(r, L, dh, 500, what);
    EXPECT_EQ(ref::recorded(r, "q"), q);
    EXPECT_EQ(ref::recorded(r, "k"), k);
    EXPECT_EQ(ref::recorded(r, "v"), v);
    EXPECT_EQ(r.inputs.count("w_q"), 0u) << "given projections: no W^q";
  }
}

// From x: Q = X W^q, K = X W^k, V = X W^v with the seeded weights the run records.
TEST(Rope, EveryOutputFromXMatchesTheReference) {
  const int64_t L = 11, H = 4, d = 32;
  const Inputs in = ref::gaussianInputs(6, L, L, d, H);
  for (const double base : {10000.0, 50.0})
    for (const bool causal : {true, false}) {
      const std::string what = "base=" + std::to_string(base) + " causal=" + (causal ? "1" : "0");
      const Result r = ref::run("rope", in, {{"base", std::to_string(base)}, {"causal", causal ? "true" : "false"}});
      EXPECT_EQ(ref::recorded(r, "x"), in.x);
      const DMat x = ref::fromMat(in.x);
      const DMat q = ref::matmul(x, ref::fromMat(ref::recorded(r, "w_q")));
      const DMat k = ref::matmul(x, ref::fromMat(ref::recorded(r, "w_k")));
      const DMat v = ref::matmul(x, ref::fromMat(ref::recorded(r, "w_v")));
      ref::expectClose(ref::recorded(r, "q"), q, ref::scaledTol(q, rope_refs::kRel), what + " q = x W^q");
      ref::expectClose(ref::recorded(r, "k"), k, ref::scaledTol(k, rope_refs::kRel), what + " k = x W^k");
      ref::expectClose(ref::recorded(r, "v"), v, ref::scaledTol(v, rope_refs::kRel), what + " v = x W^v");
      rope_refs::expectHeadsMatch(r, q, k, v, H, base, causal, what);
      rope_refs::expectExtrasMatch(r, L, d / H, base, what);
      EXPECT_EQ(r.q_tokens, in.tokens);
      EXPECT_EQ(r.k_tokens, in.tokens);
    }
}

TEST(Rope, ScoresDependOnTheDistanceOnly) {
  // (R(m) q)·(R(n) k) = (R(m + t) q)·(R(n + t) k), to float precision, far into long contexts.
  const std::vector<double> theta = ropeFrequencies(64, 10000);
  const Mat q = randomNormal(1, 64, 9, "q"), k = randomNormal(1, 64, 9, "k");
  auto score = [&](int64_t m, int64_t n) {
    Mat a = q, b = k;
    rotateHalf(a, theta, m);
    rotateHalf(b, theta, n);
    return double(a.row(0).dot(b.row(0)));
  };
  for (const int64_t t : {1, 100, 5000})
    for (const int64_t delta : {0, 3, 40}) EXPECT_NEAR(score(50 + t, 50 - delta + t), score(50, 50 - delta), 2e-3) << t;
  // The variant's curve of RoPE scores starts at q·k/√d_head of head 0's projection of one content.
  const Result r = ref::run("rope", ref::gaussianInputs(2, 8, 8, 128, 2));  // d_head = 64
  const Extra* curves = r.findExtra("score_by_distance");
  ASSERT_NE(curves, nullptr);
  ASSERT_EQ(curves->value.shape, (std::vector<int64_t>{2, 256}));
  const Mat& x = ref::recorded(r, "x");
  const Mat qh = x.row(7) * ref::recorded(r, "w_q").leftCols(64), kh = x.row(7) * ref::recorded(r, "w_k").leftCols(64);
  EXPECT_NEAR(curves->value.data[0], qh.row(0).dot(kh.row(0)) / 8.0, 1e-3);
  const Extra* bound = r.findExtra("rope_bound");
  ASSERT_NE(bound, nullptr);
  EXPECT_NEAR(bound->value.data[0], (32 + 1) / 2.0, 1e-5);  // Δ = 0: |S_j| = j, mean over j = 1 … 32
  EXPECT_LT(bound->value.data[255], bound->value.data[0] / 4);  // the long-term decay (3.69 against 16.5)
}

TEST(Rope, OddHeadWidthIsRefusedInOneLine) {
  ref::expectInputError([] { ref::run("rope", ref::gaussianInputs(1, 6, 6, 12, 4)); }, {"rope", "d_head", "even"});
}

}  // namespace
}  // namespace attn
