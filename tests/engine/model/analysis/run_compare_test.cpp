// Two runs compared (engine/model/analysis/run_compare.h): the alignment on
// hand-made ids, and the difference maps, the JS of the rows and the ranking
// against plain double-precision loops written here, numpy-style.
#include "engine/model/analysis/run_compare.h"

#include "engine/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace attn::run_compare_test {
namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// A run of `ids` whose every map is a random causal softmax (rows sum to 1 over keys j ≤ i).
ModelRun randomRun(const std::vector<int32_t>& ids, int64_t layers, int64_t heads, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> score(0.0f, 2.0f);
  ModelRun r;
  r.ids = ids;
  for (int32_t id : ids) {
    char token[16];
    std::snprintf(token, sizeof token, "t%d", id);
    r.tokens.push_back(token);
  }
  r.layers = layers, r.heads = heads;
  const auto L = static_cast<int64_t>(ids.size());
  r.attention.assign(static_cast<size_t>(layers), std::vector<Mat>(static_cast<size_t>(heads)));
  for (auto& layer : r.attention)
    for (Mat& m : layer) {
      m = Mat::Zero(L, L);
      for (int64_t i = 0; i < L; ++i) {
        for (int64_t j = 0; j <= i; ++j) m(i, j) = std::exp(score(rng));
        m.row(i) /= m.row(i).sum();
      }
    }
  return r;
}

TEST(RunCompare, AlignsTheLongestCommonSubsequenceOfTheIds) {
  // A: 5 9 1 2 3 7 4   B: 5 1 2 8 3 4   common 5 1 2 3 4 (difflib finds the same)
  const TokenAlignment t = alignTokens({5, 9, 1, 2, 3, 7, 4}, {5, 1, 2, 8, 3, 4});
  EXPECT_EQ(t.pairs, (Pairs{{0, 0}, {2, 1}, {3, 2}, {4, 4}, {6, 5}}));
  EXPECT_FALSE(t.positional());
  EXPECT_EQ(t.describe(), "aligned by token: 5 of 7 / 6 matched");
  // A repeated token matches its earliest partner (difflib, which takes the longest
  // contiguous block first, would pair A's second 1 with B's, beside the 2).
  EXPECT_EQ(alignTokens({1, 1, 2}, {1, 2}).pairs, (Pairs{{0, 0}, {2, 1}}));
  const TokenAlignment same = alignTokens({3, 4, 3}, {3, 4, 3});
  EXPECT_TRUE(same.positional());
  EXPECT_EQ(same.describe(), "position by position (3 tokens)");
  // Same length, one token changed: a pair is missing, so it is not position by position.
  EXPECT_EQ(alignTokens({1, 2, 3}, {1, 7, 3}).pairs, (Pairs{{0, 0}, {2, 2}}));
  EXPECT_TRUE(alignTokens({1, 2}, {3, 4}).pairs.empty());
}

// Difference, JS and ranking against loops in double: rows restricted to the
// pairs, renormalised, then ½ Σ p log₂(p/m) + ½ Σ q log₂(q/m).
TEST(RunCompare, DifferenceAndJsEqualPlainLoops) {
  const std::vector<int32_t> ida = {5, 9, 1, 2, 3, 7, 4}, idb = {5, 1, 2, 8, 3, 4};
  const Pairs pairs = {{0, 0}, {2, 1}, {3, 2}, {4, 4}, {6, 5}};
  const ModelRun a = randomRun(ida, 3, 4, 1), b = randomRun(idb, 3, 4, 2);
  const RunComparison c = compareRuns(a, b);
  ASSERT_EQ(c.alignment.pairs, pairs);
  EXPECT_EQ(c.tokens, (std::vector<std::string>{"t5", "t1", "t2", "t3", "t4"}));
  const auto n = static_cast<int64_t>(pairs.size());
  std::vector<double> js;
  for (int64_t l = 0; l < 3; ++l)
    for (int64_t h = 0; h < 4; ++h) {
      const Mat& ma = a.attention[static_cast<size_t>(l)][static_cast<size_t>(h)];
      const Mat& mb = b.attention[static_cast<size_t>(l)][static_cast<size_t>(h)];
      const Mat& diff = c.difference[static_cast<size_t>(l)][static_cast<size_t>(h)];
      ASSERT_EQ(diff.rows(), n);
      ASSERT_EQ(diff.cols(), n);
      double sum_js = 0;
      for (int64_t i = 0; i < n; ++i) {
        std::vector<double> p(static_cast<size_t>(n)), q(static_cast<size_t>(n));
        double sp = 0, sq = 0;
        for (int64_t j = 0; j < n; ++j) {
          p[static_cast<size_t>(j)] = ma(pairs[static_cast<size_t>(i)].first, pairs[static_cast<size_t>(j)].first);
          q[static_cast<size_t>(j)] = mb(pairs[static_cast<size_t>(i)].second, pairs[static_cast<size_t>(j)].second);
          sp += p[static_cast<size_t>(j)], sq += q[static_cast<size_t>(j)];
        }
        double row_js = 0;
        for (int64_t j = 0; j < n; ++j) {
          const double pj = p[static_cast<size_t>(j)] / sp, qj = q[static_cast<size_t>(j)] / sq, m = 0.5 * (pj + qj);
          EXPECT_NEAR(diff(i, j), pj - qj, 1e-6) << l << ":" << h << " [" << i << ", " << j << "]";
          if (pj > 0) row_js += 0.5 * pj * std::log2(pj / m);
          if (qj > 0) row_js += 0.5 * qj * std::log2(qj / m);
        }
        sum_js += row_js;
      }
      js.push_back(sum_js / static_cast<double>(n));
      EXPECT_NEAR(c.js[static_cast<size_t>(l * 4 + h)], js.back(), 1e-5) << l << ":" << h;
    }
  // The ranking: the heads by the reference JS, largest first.
  std::vector<int64_t> order(js.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int64_t>(k);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return js[static_cast<size_t>(x)] > js[static_cast<size_t>(y)]; });
  EXPECT_EQ(c.ranking, order);
  EXPECT_GT(js[static_cast<size_t>(order.front())], js[static_cast<size_t>(order.back())]);
}

// The same ids are compared position by position, nothing renormalised: the
// difference is A − B itself; a run against itself diverges nowhere.
TEST(RunCompare, SameTokensComparePositionByPosition) {
  const std::vector<int32_t> ids = {4, 8, 15, 16, 23, 42};
  const ModelRun a = randomRun(ids, 2, 2, 3), b = randomRun(ids, 2, 2, 4);
  const RunComparison c = compareRuns(a, b);
  EXPECT_TRUE(c.alignment.positional());
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t h = 0; h < 2; ++h) {
      const Mat expected = a.attention[static_cast<size_t>(l)][static_cast<size_t>(h)] - b.attention[static_cast<size_t>(l)][static_cast<size_t>(h)];
      EXPECT_LT((c.difference[static_cast<size_t>(l)][static_cast<size_t>(h)] - expected).cwiseAbs().maxCoeff(), 1e-6f);
    }
  const RunComparison self = compareRuns(a, a);
  for (double v : self.js) EXPECT_NEAR(v, 0.0, 1e-6);
}

TEST(RunCompare, RefusesRunsOfDifferentShapesOrWithoutEveryMap) {
  const ModelRun a = randomRun({1, 2, 3}, 2, 4, 1);
  try {
    compareRuns(a, randomRun({1, 2, 3}, 3, 4, 2));
    FAIL() << "different layers compared";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "compare: the runs differ in shape (A: 2 layers \xC3\x97 4 heads, B: 3 layers \xC3\x97 4 heads); "
                           "compare needs one architecture");
  }
  ModelRun pooled = randomRun({1, 2, 3}, 2, 4, 2);
  pooled.maps = MapsChoice::Mode::Pooled;
  EXPECT_THROW(compareRuns(a, pooled), InputError);
  EXPECT_THROW(compareRuns(a, randomRun({7, 8}, 2, 4, 2)), InputError);  // no common token
  ModelInfo x, y;
  x.label = "gpt2", y.label = "gpt2-medium";
  x.config.arch_name = y.config.arch_name = "GPT2LMHeadModel";
  x.config.layers = 12, y.config.layers = 24, x.config.heads = 12, y.config.heads = 16;
  EXPECT_NO_THROW(checkComparable(x, 50257, x, 50257));
  try {
    checkComparable(x, 50257, y, 50257);
    FAIL() << "different checkpoints compared";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "compare: the checkpoints differ in shape: A gpt2 (GPT2LMHeadModel, 12 layers \xC3\x97 12 heads, "
                           "vocabulary 50257), B gpt2-medium (GPT2LMHeadModel, 24 layers \xC3\x97 16 heads, vocabulary 50257); "
                           "compare needs one architecture and tokenizer");
  }
  EXPECT_THROW(checkComparable(x, 50257, x, 50000), InputError);
}

}  // namespace
}  // namespace attn::run_compare_test
