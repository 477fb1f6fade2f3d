// Output-only runs (RunContext::keep_weights off: compute --no-weights, the
// benchmarks): multi-head, cross-attention and scaled dot-product stream the
// keys in tiles with an online softmax and never form an [Lq, Lk] matrix.
// Checked against the plain-loop reference across several key tiles, with
// and without the causal mask (also Lq > Lk, where early rows see no key),
// for thread-count independence, and against the kept-weights path.
#include "engine/attention_math.h"
#include "engine/multi_head.h"
#include "engine/parallel.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attn {
namespace {

using ref::DMat;

using ref::kOutputRel;

RunContext outputOnly() {
  RunContext ctx;
  ctx.keep_weights = false;
  return ctx;
}

// softmax(q kᵀ · scale, causal) v in double, one head.
DMat attendRef(const DMat& q, const DMat& k, const DMat& v, double scale, bool causal) {
  DMat s = ref::matmulT(q, k);
  for (double& x : s.a) x *= scale;
  DMat mask;
  if (causal) {
    mask = DMat(q.rows, k.rows);
    for (int64_t i = 0; i < q.rows; ++i)
      for (int64_t j = 0; j < k.rows; ++j) mask(i, j) = j <= i + (k.rows - q.rows) ? 1.0 : 0.0;
  }
  return ref::matmul(ref::softmaxRows(s, mask), v);
}

void expectNoLxL(const Result& r, int heads, int64_t lq, int64_t lk) {
  EXPECT_TRUE(r.weights.empty());
  EXPECT_TRUE(r.scores.empty());
  EXPECT_EQ(r.mask.size(), 0);
  EXPECT_EQ(r.heads(), heads);
  EXPECT_EQ(r.queries(), lq);
  EXPECT_EQ(r.keys(), lk);
}

// Lk = 1100 spans three key tiles (kAttendKeyTile = 512), the last partial.
TEST(Streaming, ScaledDotProductMatchesReferenceOverSeveralTiles) {
  static_assert(kAttendKeyTile < 1100 / 2);
  for (const auto& [lq, lk] : {std::pair<int64_t, int64_t>{1100, 1100}, {300, 1100}, {1100, 700}})
    for (const bool causal : {false, true}) {
      const Inputs in = ref::givenQkv(randomNormal(lq, 16, 5, "sq"), randomNormal(lk, 16, 5, "sk"),
                                      randomNormal(lk, 8, 5, "sv"));
      const Result r = ref::run("scaled-dot-product", in, {{"causal", causal ? "true" : "false"}}, outputOnly());
      expectNoLxL(r, 1, lq, lk);
      const DMat want = attendRef(ref::fromMat(*in.q), ref::fromMat(*in.k), ref::fromMat(*in.v), 0.25, causal);
      ref::expectClose(r.output, want, ref::scaledTol(want, kOutputRel),
                       "Lq=" + std::to_string(lq) + " Lk=" + std::to_string(lk) + (causal ? " causal" : ""));
      if (causal && lq > lk) {  // rows i < Lq − Lk have no allowed key: they attend to nothing
        EXPECT_EQ(r.output.topRows(lq - lk).cwiseAbs().maxCoeff(), 0.0f);
      }
    }
}

TEST(Streaming, MultiHeadAndCrossAttentionMatchTheKeptWeightsPath) {
  for (const std::string name : {"multi-head", "cross-attention"})
    for (const bool causal : {false, true}) {
      const Inputs in = ref::gaussianInputs(8, 600, 1100, 32, 4);
      const std::map<std::string, std::string> set = {{"causal", causal ? "true" : "false"}};
      const Result streamed = ref::run(name, in, set, outputOnly());
      const Result kept = ref::run(name, in, set);
      const int64_t lk = name == "multi-head" ? 600 : 1100;
      expectNoLxL(streamed, 4, 600, lk);
      ASSERT_EQ(kept.weights.size(), 4u);
      // The kept path matches the reference (engine/variants/core_test.cpp); both round differently.
      const DMat want = ref::fromMat(kept.output);
      ref::expectClose(streamed.output, want, ref::scaledTol(want, kOutputRel), name + (causal ? " causal" : ""));
      EXPECT_EQ(streamed.flops, kept.flops);
      EXPECT_EQ(ref::recorded(streamed, "w_o"), ref::recorded(kept, "w_o"));
    }
}

TEST(Streaming, IndependentOfThreadCount) {
  const Inputs in = ref::gaussianInputs(9, 700, 700, 32, 2);
  auto runOn = [&](int threads) {
    const ThreadScope t(threads);
    RunContext ctx = outputOnly();
    ctx.adapt_threads = false;  // exactly `threads`, however busy the machine is
    return ref::run("multi-head", in, {{"causal", "true"}}, ctx);
  };
  const Result one = runOn(1), two = runOn(2);
  ASSERT_EQ(one.threads, 1);
  ASSERT_EQ(two.threads, 2);
  EXPECT_EQ(one.output, two.output);  // bitwise: each row's arithmetic is fixed
}

// Scores of ±400 overflow exp() without the running maximum; a tile whose
// scores all lie far below the current maximum must rescale, not vanish or NaN.
TEST(Streaming, LargeScoresStayFiniteAndExact) {
  const int64_t L = 1030;
  Mat q = Mat::Zero(2, 4), k = randomNormal(L, 4, 2, "bk"), v = randomNormal(L, 3, 2, "bv");
  q(0, 0) = 100.0f;   // row 0: scores 100·k_j0, up to ~±300
  q(1, 0) = -100.0f;  // row 1: the mirror image
  k(L - 1, 0) = 4.0f;  // the largest score of row 0 comes in the last tile
  const Inputs in = ref::givenQkv(q, k, v);
  const Result r = ref::run("scaled-dot-product", in, {{"scale", "false"}}, outputOnly());
  ASSERT_TRUE(r.output.allFinite());
  const DMat want = attendRef(ref::fromMat(q), ref::fromMat(k), ref::fromMat(v), 1.0, false);
  ref::expectClose(r.output, want, ref::scaledTol(want, kOutputRel), "large scores");
}

}  // namespace
}  // namespace attn
