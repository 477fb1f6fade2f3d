// Core family against plain-loop references: scaled dot-product (with
// scale, causal and a mask file), multi-head self-attention and
// encoder–decoder cross-attention; multi-head with h = 1 and identity
// weights is scaled dot-product.
#include "engine/attention_math.h"
#include "engine/multi_head.h"
#include "engine/npy.h"
#include "tests/engine_reference.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>

namespace attn {
namespace {

using ref::DMat;

using ref::kScoreRel, ref::kWeightTol, ref::kOutputRel;

void expectHead(const Result& r, int64_t head, const ref::HeadRef& want, const std::string& what) {
  ref::expectClose(r.scores[head], want.scores, ref::scaledTol(want.scores, kScoreRel), what + " scores");
  ref::expectClose(r.weights[head], want.weights, kWeightTol, what + " weights");
}

TEST(ScaledDotProduct, MatchesReference) {
  const Inputs in = ref::gaussianInputs(1, 9, 13, 16, 4);
  for (const bool scale : {true, false})
    for (const bool causal : {false, true}) {
      const std::string what = std::string("scale=") + (scale ? "1" : "0") + " causal=" + (causal ? "1" : "0");
      const Result r = ref::run("scaled-dot-product", in,
                                {{"scale", scale ? "true" : "false"}, {"causal", causal ? "true" : "false"}});
      ASSERT_EQ(r.heads(), 1);
      // Self-attention: keys are x itself, not the source x_kv the input also carries.
      ASSERT_EQ(r.keys(), 9) << what;
      EXPECT_EQ(r.k_tokens, in.tokens);
      const DMat x = ref::fromMat(in.x);
      const ref::HeadRef want = ref::attendHead(x, x, x, scale ? 0.25 : 1.0, causal ? ref::causalMask(9, 9) : DMat());
      expectHead(r, 0, want, what);
      ref::expectClose(r.output, want.out, ref::scaledTol(want.out, kOutputRel), what + " output");
      EXPECT_EQ(r.flops, 2.0 * 9 * 9 * 16 * 2);
    }
}

TEST(ScaledDotProduct, GivenQkvAndMaskFile) {
  const Inputs in = ref::givenQkv(randomNormal(5, 8, 3, "tq"), randomNormal(7, 8, 3, "tk"), randomNormal(7, 3, 3, "tv"));
  // Random 0/1 mask, row 2 fully masked; combined with the causal mask (offset Lk − Lq = 2).
  Mat mask = (randomNormal(5, 7, 3, "tm").array() > 0.0f).cast<float>();
  mask.row(2).setZero();
  const ref::TempPath file("mask.npy");
  writeNpy(file.path, Array::fromMat(mask * 3.0f));  // nonzero means allowed, not just 1
  const Result r = ref::run("scaled-dot-product", in, {{"mask", file.path.string()}, {"causal", "true"}});
  DMat m = ref::fromMat(mask);
  const DMat c = ref::causalMask(5, 7);
  for (size_t i = 0; i < m.a.size(); ++i) m.a[i] *= c.a[i];
  const ref::HeadRef want = ref::attendHead(ref::fromMat(*in.q), ref::fromMat(*in.k), ref::fromMat(*in.v), 1 / std::sqrt(8.0), m);
  expectHead(r, 0, want, "masked");
  ref::expectClose(r.output, want.out, ref::scaledTol(want.out, kOutputRel), "masked output");
  ref::expectClose(r.mask, m, 0.0, "mask");
  EXPECT_EQ(r.weights[0].row(2).cwiseAbs().maxCoeff(), 0.0f);  // nothing allowed: attends to nothing
  EXPECT_EQ(r.k_tokens, in.source_tokens);
}

// Concat(head_1 … head_h) W^o with head_i = softmax(X W^q_i (X_kv W^k_i)ᵀ/√d_k) X_kv W^v_i.
void expectMultiHead(const Result& r, const Mat& xq, const Mat& xkv, int64_t heads, bool causal) {
  const ref::MultiHeadRef want = ref::multiHead(ref::fromMat(xq), ref::fromMat(xkv), r, heads,
                                                causal ? ref::causalMask(xq.rows(), xkv.rows()) : DMat());
  ASSERT_EQ(r.heads(), heads);
  for (int64_t h = 0; h < heads; ++h)
    expectHead(r, h, want.heads[static_cast<size_t>(h)], r.variant + " head " + std::to_string(h));
  ref::expectClose(r.output, want.out, ref::scaledTol(want.out, kOutputRel), r.variant + " output");
}

TEST(MultiHead, MatchesReference) {
  const Inputs in = ref::gaussianInputs(2, 10, 6, 32, 4);
  for (const bool causal : {false, true}) {
    const Result r = ref::run("multi-head", in, {{"causal", causal ? "true" : "false"}});
    EXPECT_EQ(r.keys(), 10);
    expectMultiHead(r, in.x, in.x, 4, causal);
    EXPECT_EQ(ref::recorded(r, "x"), in.x);
  }
}

TEST(CrossAttention, MatchesReference) {
  const Inputs in = ref::gaussianInputs(3, 7, 11, 24, 3);
  for (const bool causal : {false, true}) {
    const Result r = ref::run("cross-attention", in, {{"causal", causal ? "true" : "false"}});
    EXPECT_EQ(r.keys(), 11);
    EXPECT_EQ(r.k_tokens, in.source_tokens);
    expectMultiHead(r, in.x, in.x_kv, 3, causal);
    EXPECT_EQ(ref::recorded(r, "x_kv"), in.x_kv);
  }
}

// W^q = W^k = W^v = W^o = I and h = 1 reduce multi-head to eq. 1. The
// products with I are exact in float (x·1 + Σ 0·y adds exact zeros) and
// both paths then run the same attendHead, so the results are bitwise equal.
TEST(MultiHead, OneHeadIdentityWeightsIsScaledDotProduct) {
  const Inputs in = ref::gaussianInputs(4, 12, 12, 16, 1);
  const Mat eye = Mat::Identity(16, 16);
  const MultiHeadWeights w{eye, eye, eye, eye};
  for (const bool causal : {false, true}) {
    Result mh;
    multiHeadAttention(in.x, in.x, in.x, w, 1, causal, true, RunContext{}, mh);
    const Result sdp = ref::run("scaled-dot-product", in, {{"causal", causal ? "true" : "false"}});
    EXPECT_EQ(mh.weights[0], sdp.weights[0]);
    EXPECT_EQ(mh.scores[0], sdp.scores[0]);
    EXPECT_EQ(mh.output, sdp.output);
  }
  // …and the comparison can fail: a non-identity W^o changes the output.
  MultiHeadWeights w2 = w;
  w2.w_o(0, 1) = 0.5f;
  Result mh;
  multiHeadAttention(in.x, in.x, in.x, w2, 1, false, true, RunContext{}, mh);
  EXPECT_NE(mh.output, ref::run("scaled-dot-product", in).output);
}

// The tests' one comparison of two arrays: their largest difference when
// their shapes agree, else a failure naming both shapes and NaN, which no
// tolerance passes (Eigen itself checks nothing under NDEBUG).
TEST(Reference, MaxAbsDiffComparesOnlyArraysOfOneShape) {
  Mat a(2, 3), b(2, 3);
  a << 1, 2, 3, 4, 5, 6;
  b << 1, 2.5f, 3, 4, 5, 5;
  EXPECT_EQ(ref::maxAbsDiff(a, b), 1.0);
  EXPECT_EQ(ref::maxAbsDiff(a.row(1), b.row(1)), 1.0);
  EXPECT_EQ(ref::maxAbsDiff(Mat(), Mat()), 0.0);
  b(0, 0) = std::nanf("");
  EXPECT_TRUE(std::isnan(ref::maxAbsDiff(a, b)));
  static double got = 0;
  EXPECT_NONFATAL_FAILURE(got = ref::maxAbsDiff(Mat::Zero(2, 3), Mat::Zero(3, 2)), "shapes differ: 2 × 3 and 3 × 2");
  EXPECT_TRUE(std::isnan(got));
  EXPECT_NONFATAL_FAILURE(got = ref::maxAbsDiff(Vec::Zero(4), RowVec::Zero(4)), "shapes differ: 4 × 1 and 1 × 4");
  EXPECT_TRUE(std::isnan(got));
  EXPECT_NONFATAL_FAILURE(got = ref::maxAbsDiff(std::vector<double>{1, 2}, std::vector<double>{1}), "lengths differ: 2 and 1");
  EXPECT_TRUE(std::isnan(got));
  EXPECT_EQ(ref::maxAbsDiff(std::vector<double>{1, 2}, std::vector<double>{1, 4}), 2.0);
}

}  // namespace
}  // namespace attn
