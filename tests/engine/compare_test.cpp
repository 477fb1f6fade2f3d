// compareWithFull() and rasterize() against plain loops: a pattern that is
// full causal attention loses nothing; a sliding window keeps exactly the
// window's share of the full softmax, has KL = ∞ once keys are dropped, and
// the dense and CSR forms of the same pattern compare identically.
#include "engine/attention_math.h"
#include "engine/compare.h"
#include "engine/error.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attn {
namespace {

constexpr int kPatternHeads = 2;
constexpr int64_t kPatternLen = 37, kPatternDk = 5;

// A pattern result by plain loops: per head, softmax(q kᵀ/√d_k) over the
// keys `allowed(i, j)` admits, its output, and both the dense and CSR forms.
Result patternResult(const std::function<bool(int64_t, int64_t)>& allowed) {
  Result r;
  r.variant = "test-pattern";
  const Mat q = randomNormal(kPatternLen, kPatternHeads * kPatternDk, 3, "q"), k = randomNormal(kPatternLen, kPatternHeads * kPatternDk, 3, "k"),
            v = randomNormal(kPatternLen, kPatternHeads * kPatternDk, 3, "v");
  r.inputs = {{"q", q}, {"k", k}, {"v", v}};
  r.output = Mat::Zero(kPatternLen, kPatternHeads * kPatternDk);
  for (int h = 0; h < kPatternHeads; ++h) {
    Mat w = Mat::Zero(kPatternLen, kPatternLen);
    SparseRows s;
    s.rows = s.cols = kPatternLen;
    s.indptr.push_back(0);
    for (int64_t i = 0; i < kPatternLen; ++i) {
      double m = -1e300, sum = 0;
      std::vector<double> sc(kPatternLen);
      for (int64_t j = 0; j < kPatternLen; ++j) {
        if (!allowed(i, j)) continue;
        for (int64_t c = 0; c < kPatternDk; ++c) sc[j] += double(q(i, h * kPatternDk + c)) * k(j, h * kPatternDk + c);
        sc[j] /= std::sqrt(double(kPatternDk));
        m = std::max(m, sc[j]);
      }
      for (int64_t j = 0; j < kPatternLen; ++j)
        if (allowed(i, j)) sum += std::exp(sc[j] - m);
      for (int64_t j = 0; j < kPatternLen; ++j) {
        if (!allowed(i, j)) continue;
        w(i, j) = float(std::exp(sc[j] - m) / sum);
        s.indices.push_back(int32_t(j));
        s.values.push_back(w(i, j));
        for (int64_t c = 0; c < kPatternDk; ++c) r.output(i, h * kPatternDk + c) += w(i, j) * v(j, h * kPatternDk + c);
      }
      s.indptr.push_back(s.nnz());
    }
    r.weights.push_back(w);
    r.sparse.push_back(s);
  }
  return r;
}

// Full causal softmax row i of head h, by plain loops.
std::vector<double> fullRow(const Result& r, int h, int64_t i) {
  const Mat& q = r.inputs.at("q");
  const Mat& k = r.inputs.at("k");
  std::vector<double> p(size_t(i + 1));
  double m = -1e300, sum = 0;
  for (int64_t j = 0; j <= i; ++j) {
    for (int64_t c = 0; c < kPatternDk; ++c) p[j] += double(q(i, h * kPatternDk + c)) * k(j, h * kPatternDk + c);
    p[j] /= std::sqrt(double(kPatternDk));
    m = std::max(m, p[j]);
  }
  for (double& x : p) sum += (x = std::exp(x - m));
  for (double& x : p) x /= sum;
  return p;
}

TEST(Compare, FullCausalPatternLosesNothing) {
  const Result r = patternResult([](int64_t i, int64_t j) { return j <= i; });
  const Comparison c = compareWithFull(r);
  EXPECT_NEAR(c.mass_kept_mean, 1.0, 1e-5);
  EXPECT_EQ(c.kl_finite, kPatternHeads * kPatternLen);
  EXPECT_NEAR(c.kl_mean, 0.0, 1e-5);
  EXPECT_LT(c.output_rel_error, 1e-5);
  EXPECT_EQ(c.pattern_connections, c.full_connections);
  ASSERT_EQ(c.full.size(), size_t(kPatternHeads));
  EXPECT_LT(c.difference[1].cwiseAbs().maxCoeff(), 1e-5f);
}

TEST(Compare, WindowKeepsItsShareAndHasInfiniteKlOnceKeysDrop) {
  constexpr int64_t w = 6;
  const auto window = [](int64_t i, int64_t j) { return j <= i && i - j < w; };
  Result r = patternResult(window);
  for (bool sparse : {true, false}) {
    if (!sparse) r.sparse.clear();
    const Comparison c = compareWithFull(r);
    double kept_sum = 0, err_num = 0, err_den = 0;
    for (int h = 0; h < kPatternHeads; ++h)
      for (int64_t i = 0; i < kPatternLen; ++i) {
        const std::vector<double> p = fullRow(r, h, i);
        double kept = 0;
        for (int64_t j = 0; j <= i; ++j)
          if (window(i, j)) kept += p[j];
        kept_sum += kept;
        EXPECT_NEAR(c.mass_kept(h, i), kept, 1e-5) << "sparse " << sparse << " head " << h << " query " << i;
        if (i < w) {
          // The window holds every causal key: the pattern is the full row.
          EXPECT_NEAR(c.kl(h, i), 0.0, 1e-5);
        } else {
          EXPECT_TRUE(std::isinf(c.kl(h, i)));
        }
        for (int64_t col = 0; col < kPatternDk; ++col) {
          double o = 0;
          for (int64_t j = 0; j <= i; ++j) o += p[j] * r.inputs.at("v")(j, h * kPatternDk + col);
          err_num += std::pow(r.output(i, h * kPatternDk + col) - o, 2);
          err_den += o * o;
        }
      }
    EXPECT_NEAR(c.mass_kept_mean, kept_sum / (kPatternHeads * kPatternLen), 1e-6);
    EXPECT_TRUE(std::isinf(c.kl_mean));
    EXPECT_EQ(c.kl_finite, kPatternHeads * w);
    EXPECT_NEAR(c.output_rel_error, std::sqrt(err_num / err_den), 1e-4);
    EXPECT_EQ(c.pattern_connections, kPatternHeads * (w * (w + 1) / 2 + (kPatternLen - w) * w));
    EXPECT_EQ(c.full_connections, kPatternHeads * kPatternLen * (kPatternLen + 1) / 2);
    EXPECT_LT(c.pattern_flops, c.full_flops);
  }
}

TEST(Compare, RefusesResultsWithoutProjectedInputs) {
  Result r = patternResult([](int64_t i, int64_t j) { return j <= i; });
  r.inputs.erase("k");
  EXPECT_FALSE(canCompare(r));
  EXPECT_THROW(compareWithFull(r), InputError);
}

TEST(Rasterize, MaxPoolsTilesLikeAPlainLoop) {
  const Result r = patternResult([](int64_t i, int64_t j) { return j <= i && (i - j < 4 || j % 5 == 0); });
  SparseRows s = r.sparse[0];
  s.sets.resize(size_t(s.nnz()));
  for (int64_t i = 0; i < s.rows; ++i)
    for (int64_t e = s.rowBegin(i); e < s.rowEnd(i); ++e)
      s.sets[e] = uint8_t((i - s.indices[e] < 4 ? 1 : 0) | (s.indices[e] % 5 == 0 ? 2 : 0));
  struct Case { int64_t r0, r1, c0, c1, out_r, out_c; };
  for (const Case& t : {Case{0, kPatternLen, 0, kPatternLen, 8, 8}, Case{5, 30, 2, 20, 7, 5}, Case{0, kPatternLen, 0, kPatternLen, 100, 100},
                        Case{-3, 99, 10, 11, 4, 4}}) {
    const Mat vals = rasterize(s, t.r0, t.r1, t.c0, t.c1, t.out_r, t.out_c, RasterValue::Values, -1.0f);
    const Mat sets = rasterize(s, t.r0, t.r1, t.c0, t.c1, t.out_r, t.out_c, RasterValue::Sets, 0.0f);
    const int64_t r0 = std::clamp<int64_t>(t.r0, 0, kPatternLen), r1 = std::clamp<int64_t>(t.r1, r0, kPatternLen);
    const int64_t c0 = std::clamp<int64_t>(t.c0, 0, kPatternLen), c1 = std::clamp<int64_t>(t.c1, c0, kPatternLen);
    // Whole blocks of k = ⌈n / requested⌉ source cells per output cell.
    const int64_t k_r = (r1 - r0 + std::min(t.out_r, r1 - r0) - 1) / std::min(t.out_r, r1 - r0);
    const int64_t k_c = (c1 - c0 + std::min(t.out_c, c1 - c0) - 1) / std::min(t.out_c, c1 - c0);
    const int64_t out_r = (r1 - r0 + k_r - 1) / k_r, out_c = (c1 - c0 + k_c - 1) / k_c;
    ASSERT_EQ(vals.rows(), out_r);
    ASSERT_EQ(vals.cols(), out_c);
    ASSERT_LE(out_r, t.out_r);
    ASSERT_LE(out_c, t.out_c);
    const Mat dense = toDenseValues(s);
    for (int64_t y = 0; y < out_r; ++y)
      for (int64_t x = 0; x < out_c; ++x) {
        float best = -1.0f;
        int bits = 0;
        for (int64_t i = r0 + y * k_r; i < std::min(r1, r0 + (y + 1) * k_r); ++i)
          for (int64_t j = c0 + x * k_c; j < std::min(c1, c0 + (x + 1) * k_c); ++j)
            if (dense(i, j) > 0) {
              best = std::max(best, dense(i, j));
              bits |= (i - j < 4 ? 1 : 0) | (j % 5 == 0 ? 2 : 0);
            }
        EXPECT_EQ(vals(y, x), best) << y << "," << x;
        EXPECT_EQ(sets(y, x), float(bits)) << y << "," << x;
      }
  }
}

// A pattern with period 32 pooled at a fractional ratio (1024 keys into at
// most 550 cells) stays periodic: whole 2-key blocks, so every 16th column
// holds the strided key and no beat pattern appears.
TEST(Rasterize, WholeBlocksKeepAPeriodicPatternPeriodic) {
  constexpr int64_t n = 1024;
  SparseRows s;
  s.rows = 1;
  s.cols = n;
  s.indptr = {0};
  for (int32_t j = 0; j < n; j += 32) {
    s.indices.push_back(j);
    s.values.push_back(1.0f);
  }
  s.indptr.push_back(static_cast<int64_t>(s.indices.size()));
  const Mat img = rasterize(s, 0, 1, 0, n, 1, 550, RasterValue::Values, 0.0f);
  ASSERT_EQ(img.cols(), 512);
  for (int64_t x = 0; x < img.cols(); ++x) EXPECT_EQ(img(0, x), x % 16 == 0 ? 1.0f : 0.0f) << x;
}

}  // namespace
}  // namespace attn
