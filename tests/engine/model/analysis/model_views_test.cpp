// The numbers behind the model views of the LLaMA family, each against a
// plain loop written here: the first-token share, the GQA group divergence
// of the head table, the RoPE frequency-band split of q·k and the rotation
// angles.
#include "engine/model/blocks/head_metrics.h"
#include "engine/model/analysis/head_patterns.h"
#include "engine/model/model.h"
#include "engine/attention_math.h"
#include "engine/model/analysis/qk_terms.h"
#include "engine/sparse.h"

#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attn {
namespace {

// JS(p ‖ q) in bits, straight from its definition with m = (p + q)/2.
double jsReference(const Mat& A, const Mat& B, int64_t i) {
  double kl_a = 0, kl_b = 0;
  for (int64_t j = 0; j < A.cols(); ++j) {
    const double p = A(i, j), q = B(i, j), m = (p + q) / 2;
    if (p > 0) kl_a += p * std::log(p / m) / std::log(2.0);
    if (q > 0) kl_b += q * std::log(q / m) / std::log(2.0);
  }
  return (kl_a + kl_b) / 2;
}

TEST(HeadMetrics, JensenShannonBitsBounds) {
  const float p[3] = {1, 0, 0}, q[3] = {0, 0.5f, 0.5f}, r[3] = {0.2f, 0.3f, 0.5f};
  // Summed in float (vectorised): within a few float roundings.
  EXPECT_NEAR(jensenShannonBits(p, q, 3), 1.0, 1e-6);  // disjoint supports: 1 bit
  EXPECT_EQ(jensenShannonBits(r, r, 3), 0.0);
  EXPECT_NEAR(jensenShannonBits(p, r, 3), jensenShannonBits(r, p, 3), 1e-7);  // symmetric
}

// A Mistral-style checkpoint, 4 query heads over 2 key/value heads, window 3.
struct GqaRun {
  test::TempDir dir;
  ModelRun run;
  GqaRun() {
    test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama, .seed = 7, .family = "mistral", .kv_heads = 2,
                                    .sliding_window = 3});
    run = runModel(*loadModel(filesOnDisk(dir.path.string())), "the cat sat on the mat");
  }
};

TEST(HeadMetrics, GroupDivergenceAndSinkAgainstLoops) {
  const GqaRun g;
  const ModelRun& run = g.run;
  ASSERT_EQ(run.heads, 4);
  ASSERT_EQ(run.kv_heads, 2);
  const std::vector<HeadSummary> s = summarizeHeads(run, run);
  ASSERT_EQ(s.size(), static_cast<size_t>(run.layers * run.heads));
  for (int64_t l = 0; l < run.layers; ++l) {
    const std::vector<Mat>& A = run.attention[static_cast<size_t>(l)];
    const int64_t L = A[0].rows();
    for (int64_t h = 0; h < run.heads; ++h) {
      const HeadSummary& x = s[static_cast<size_t>(l * run.heads + h)];
      // Heads 0, 1 read kv head 0 and heads 2, 3 kv head 1; each group is one pair.
      EXPECT_EQ(x.kv_head, h / 2);
      EXPECT_EQ(x.group_size, 2);
      const int64_t a = (h / 2) * 2, b = a + 1;
      double js = 0;
      for (int64_t i = 0; i < L; ++i) js += jsReference(A[static_cast<size_t>(a)], A[static_cast<size_t>(b)], i);
      EXPECT_NEAR(x.group_divergence, js / static_cast<double>(L), 1e-6) << "layer " << l << " head " << h;
      EXPECT_GT(x.group_divergence, 0.0);  // random weights: the two heads differ
      double sink = 0;
      for (int64_t i = 1; i < L; ++i) sink += A[static_cast<size_t>(h)](i, 0);
      EXPECT_NEAR(x.sink, sink / static_cast<double>(L - 1), 1e-6);
    }
  }
}

TEST(QkTerms, RopeBandsSumToTheScoreAgainstLoop) {
  const GqaRun g;
  const ModelRun& run = g.run;
  ASSERT_TRUE(run.rope);
  const int64_t d = run.d_head, half = d / 2, L = static_cast<int64_t>(run.tokens.size());
  for (int64_t h = 0; h < run.heads; ++h) {
    const QkTerms t = qkTerms(run, 1, h, L - 1, L - 2);
    ASSERT_EQ(t.band.size(), half);
    const Mat& Q = run.q[1];
    const Mat& K = run.k[1];
    double sum = 0;
    for (int64_t i = 0; i < half; ++i) {
      // q_i k_i + q_{i+d/2} k_{i+d/2} of the rotated q and k
      const double ref = static_cast<double>(Q(L - 1, h * d + i)) * K(L - 2, h * d + i) +
                         static_cast<double>(Q(L - 1, h * d + i + half)) * K(L - 2, h * d + i + half);
      EXPECT_NEAR(t.band.data[static_cast<size_t>(i)], ref, 1e-5);
      sum += t.band.data[static_cast<size_t>(i)];
    }
    EXPECT_NEAR(sum, t.score * std::sqrt(static_cast<double>(d)), 1e-4);
  }
}

// The newer families' score: a hand-made run with partial rotary (the first 4
// of 6 dimensions rotate), a family scale, a soft-cap, ALiBi and QK-norm
// inputs; each term against its definition, computed here in doubles.
TEST(QkTerms, ScaleSoftcapAlibiQkNormAndPartialRotaryAgainstLoop) {
  ModelRun run;
  const int64_t L = 5, H = 2, d = 6;
  run.layers = 1, run.heads = H, run.kv_heads = H, run.d_head = d;
  run.tokens.assign(L, "t");
  run.rope = true;
  run.rope_theta = {1.0, 0.1};
  run.rotary_dims = 4;
  run.score_scale = 0.3;
  run.softcap = 2.0;
  run.alibi_slopes = {-0.5, -0.25};
  run.q = {randomNormal(L, H * d, 3, "q", 2.0f)};
  run.k = {randomNormal(L, H * d, 3, "k", 2.0f)};
  run.q_prenorm = {randomNormal(L, H * d, 3, "qp")};
  run.k_prenorm = {randomNormal(L, H * d, 3, "kp")};
  run.attention = {{causalMask(L, L), causalMask(L, L)}};
  const int64_t h = 1, i = 4, j = 2;
  const QkTerms t = qkTerms(run, 0, h, i, j);
  double dot = 0, unrotated = 0;
  for (int64_t c = 0; c < d; ++c) {
    const double p = static_cast<double>(run.q[0](i, h * d + c)) * run.k[0](j, h * d + c);
    dot += p;
    if (c >= 4) unrotated += p;
    EXPECT_EQ(t.q_prenorm.data[static_cast<size_t>(c)], run.q_prenorm[0](i, h * d + c));
    EXPECT_EQ(t.k_prenorm.data[static_cast<size_t>(c)], run.k_prenorm[0](j, h * d + c));
  }
  EXPECT_EQ(t.rotary_dims, 4);
  ASSERT_EQ(t.band.size(), 2);  // pairs (0, 2) and (1, 3) of the 4 rotated dimensions
  for (int64_t b = 0; b < 2; ++b)
    EXPECT_NEAR(t.band.data[static_cast<size_t>(b)],
                static_cast<double>(run.q[0](i, h * d + b)) * run.k[0](j, h * d + b) +
                    static_cast<double>(run.q[0](i, h * d + b + 2)) * run.k[0](j, h * d + b + 2),
                1e-5);
  EXPECT_NEAR(t.unrotated, unrotated, 1e-5);
  EXPECT_NEAR(t.band.data[0] + t.band.data[1] + t.unrotated, dot, 1e-4);
  EXPECT_NEAR(t.score, dot * 0.3, 1e-5);
  EXPECT_NEAR(t.capped, 2.0 * std::tanh(dot * 0.3 / 2.0), 1e-5);
  EXPECT_EQ(t.bent, std::abs(t.capped - t.score) > 0.05 * std::abs(t.score));
  EXPECT_NEAR(t.bias, -0.25 * 2, 1e-12);
  EXPECT_NEAR(t.logit, t.capped + t.bias, 1e-12);

  // The whole head: the cap's bend and ALiBi's bias where the causal mask allows, 0 above the diagonal.
  const Mat bend = softcapBend(run, 0, h), bias = alibiBias(run, 0, h);
  for (int64_t a = 0; a < L; ++a)
    for (int64_t b = 0; b < L; ++b) {
      double s = 0;
      for (int64_t c = 0; c < d; ++c) s += static_cast<double>(run.q[0](a, h * d + c)) * run.k[0](b, h * d + c);
      s *= 0.3;
      EXPECT_NEAR(bend(a, b), b <= a ? s - 2.0 * std::tanh(s / 2.0) : 0.0, 1e-5) << a << "," << b;
      EXPECT_NEAR(bias(a, b), b <= a ? -0.25 * static_cast<double>(b) : 0.0, 1e-6);
    }
  // Large scores bend: some entry of this head moved by more than 0.1.
  EXPECT_GT(bend.cwiseAbs().maxCoeff(), 0.1f);
}

TEST(QkTerms, NoBandsWithoutRope) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);  // GPT-2
  const ModelRun run = runModelIds(*loadModel(filesOnDisk(dir.path.string())), {3, 1, 4, 1});
  EXPECT_TRUE(qkTerms(run, 0, 0, 3, 1).band.data.empty());
}

TEST(QkTerms, RopeAnglesAgainstLoop) {
  const std::vector<double> theta = {1.0, 0.1, 1e-3};
  const Mat a = ropeAngles(theta, 50);
  ASSERT_EQ(a.rows(), 50);
  ASSERT_EQ(a.cols(), 3);
  const double two_pi = 2 * std::acos(-1.0);
  for (int64_t m = 0; m < 50; ++m)
    for (int64_t i = 0; i < 3; ++i) {
      double ref = m * theta[static_cast<size_t>(i)];
      while (ref >= two_pi) ref -= two_pi;
      EXPECT_NEAR(a(m, i), ref, 1e-5);
      EXPECT_GE(a(m, i), 0.0f);
      EXPECT_LT(a(m, i), two_pi);
    }
}

TEST(HeadPatterns, TheModelsOwnWindowGivesTheRealHeadBack) {
  const GqaRun g;
  const ModelRun& run = g.run;
  const WindowPattern w = slidingWindowPattern(run);
  ASSERT_NE(w.variant, nullptr);
  EXPECT_EQ(w.params.getInt("l_m"), 2);  // W − 1 keys before the query
  const int64_t L = static_cast<int64_t>(run.tokens.size());
  for (int64_t h = 0; h < run.heads; ++h) {
    const HeadPattern p = applyPatternToHead(*w.variant, w.params, run, 1, h);
    EXPECT_NEAR(p.mass_kept_mean, 1.0, 1e-5);
    // The window's keys are exactly those with i − j < W, and softmax over them is the real head.
    ASSERT_TRUE(p.result.isSparse());
    const Mat dense = toDenseValues(p.result.sparse[0]);
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < L; ++j) {
        if (j > i || i - j >= 3) {
          EXPECT_EQ(p.real(i, j), 0.0f);
        }
        EXPECT_NEAR(dense(i, j), p.real(i, j), 1e-5) << "head " << h << " (" << i << ", " << j << ")";
      }
  }
  ModelRun plain = run;
  plain.sliding_window = 0;
  EXPECT_EQ(slidingWindowPattern(plain).variant, nullptr);
}

}  // namespace
}  // namespace attn
