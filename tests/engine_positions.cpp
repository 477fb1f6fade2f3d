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
// rotate_half(x) = [−x₂, x₁] and cos, sin of m θ_i repeated over both halves.
DMat rotateHalfRef(const Mat& x, int64_t first, int64_t n, double base) {
  DMat out(x.rows(), n);
  const int64_t half = n / 2;
  for (int64_t m = 0; m < x.rows(); ++m)
    for (int64_t c = 0; c < n; ++c) {
      const double theta = std::pow(base, -2.0 * static_cast<double>(c % half) / static_cast<double>(n));
      const double rotated = c < half ? -double(x(m, first + c + half)) : double(x(m, first + c - half));
      out(m, c) = double(x(m, first + c)) * std::cos(m * theta) + rotated * std::sin(m * theta);
    }
  return out;
}

TEST(Rope, RotatesGivenQueriesAndKeysAsTransformersDoes) {
  const int64_t L = 12, H = 2, dh = 8;
  const Mat q = randomNormal(L, H * dh, 3, "rope.q"), k = randomNormal(L, H * dh, 3, "rope.k");
  const Mat v = randomNormal(L, H * dh, 3, "rope.v");
  const Inputs in = makeFromMatrices(Mat(), q, k, v, H, 1);
  const Result r = ref::run("rope", in, {{"base", "500"}});
  for (int64_t h = 0; h < H; ++h) {
    const DMat qr = rotateHalfRef(q, h * dh, dh, 500), kr = rotateHalfRef(k, h * dh, dh, 500);
    ref::expectClose(ref::recorded(r, "q_rot").middleCols(h * dh, dh), qr, 1e-5, "q' head " + std::to_string(h));
    DMat s = ref::matmulT(qr, kr), mask(L, L);
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < L; ++j) {
        s(i, j) /= std::sqrt(double(dh));
        mask(i, j) = j <= i;
      }
    ref::expectClose(r.weights[static_cast<size_t>(h)], ref::softmaxRows(s, mask), 1e-5, "rope head " + std::to_string(h));
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
