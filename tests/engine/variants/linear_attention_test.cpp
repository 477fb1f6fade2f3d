// Linear attention (Katharopoulos et al. 2020, §3.2–3.3) against the paper's
// quadratic form, written here as plain loops in double: the engine computes
// each output the linear way, φ(q_i)ᵀ (Σ_j φ(k_j) v_jᵀ) / φ(q_i)ᵀ Σ_j φ(k_j),
// the reference the way the sum reads before it is factored,
//   V'_i = Σ_j φ(q_i)·φ(k_j) v_j / Σ_j φ(q_i)·φ(k_j),   φ(x) = elu(x) + 1,
// so the factoring (and the causal recurrence) is checked, not repeated. The
// ε = 1e-6 the engine adds to each denominator (the authors' code) moves
// these weights by under 1e-6 of their row sums, inside the tolerances.
#include "engine/attention_math.h"
#include "engine/inputs.h"
#include "engine/registry.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace attn {
namespace {

using ref::DMat;

// elu(x) + 1 = x + 1 for x > 0, eˣ otherwise (§3.2, the feature map).
double eluPlusOne(double x) { return x > 0 ? x + 1 : std::exp(x); }

struct LinearAttentionRef {
  std::vector<DMat> kernel, weights;  // per head: φ(q_i)·φ(k_j) and w_ij        [L, L]
  DMat out;                           // Concat(V'_1 … V'_H)                       [L, d]
};

// From the q, k, v the run recorded: head h in columns [h·d_head, (h+1)·d_head).
LinearAttentionRef linearAttentionRef(const Mat& q32, const Mat& k32, const Mat& v32, int64_t heads, bool causal) {
  const DMat q = ref::fromMat(q32), k = ref::fromMat(k32), v = ref::fromMat(v32);
  const int64_t L = q.rows, d = q.cols, dh = d / heads;
  LinearAttentionRef out;
  out.out = DMat(L, d);
  for (int64_t h = 0; h < heads; ++h) {
    DMat kernel(L, L), w(L, L);
    for (int64_t i = 0; i < L; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < L; ++j) {
        double s = 0;
        for (int64_t c = h * dh; c < (h + 1) * dh; ++c) s += eluPlusOne(q(i, c)) * eluPlusOne(k(j, c));
        kernel(i, j) = s;
        if (!causal || j <= i) sum += s;
      }
      for (int64_t j = 0; j < L; ++j) w(i, j) = !causal || j <= i ? kernel(i, j) / sum : 0.0;
      for (int64_t c = h * dh; c < (h + 1) * dh; ++c)
        for (int64_t j = 0; j < L; ++j) out.out(i, c) += w(i, j) * v(j, c);
    }
    out.kernel.push_back(kernel);
    out.weights.push_back(w);
  }
  return out;
}

void expectMatchesReference(const Result& r, int64_t heads, bool causal, const std::string& what) {
  const LinearAttentionRef want =
      linearAttentionRef(ref::recorded(r, "q"), ref::recorded(r, "k"), ref::recorded(r, "v"), heads, causal);
  ASSERT_EQ(r.weights.size(), static_cast<size_t>(heads)) << what;
  for (int64_t h = 0; h < heads; ++h) {
    const auto hs = static_cast<size_t>(h);
    const std::string head = what + " head " + std::to_string(h);
    ref::expectClose(r.scores[hs], want.kernel[hs], ref::scaledTol(want.kernel[hs], ref::kScoreRel), head + " kernel");
    ref::expectClose(r.weights[hs], want.weights[hs], ref::kWeightTol, head + " weights");
  }
  ref::expectClose(r.output, want.out, ref::scaledTol(want.out, ref::kOutputRel), what + " output");
}

TEST(LinearAttention, MatchesThePapersSumFromX) {
  const Inputs in = ref::gaussianInputs(11, 20, 20, 16, 4);
  for (const bool causal : {false, true}) {
    const std::string what = causal ? "causal" : "bidirectional";
    const Result r = ref::run("linear-attention", in, {{"causal", causal ? "true" : "false"}});
    expectMatchesReference(r, 4, causal, what);
    // Q = X W^q, K = X W^k, V = X W^v with the weights the run recorded.
    const DMat x = ref::fromMat(in.x);
    for (const char* p : {"q", "k", "v"}) {
      const DMat want = ref::matmul(x, ref::fromMat(ref::recorded(r, std::string("w_") + p)));
      ref::expectClose(ref::recorded(r, p), want, ref::scaledTol(want, ref::kScoreRel), what + " " + p);
    }
    EXPECT_EQ(r.mask.size(), causal ? 20 * 20 : 0) << what;
  }
}

TEST(LinearAttention, UsesGivenProjectionsAsTheyAre) {
  const Mat q = randomNormal(12, 8, 5, "q"), k = randomNormal(12, 8, 5, "k"), v = randomNormal(12, 8, 5, "v");
  Inputs in = ref::givenQkv(q, k, v);
  in.heads = 2;
  const Result r = ref::run("linear-attention", in, {{"causal", "true"}});
  EXPECT_EQ(ref::recorded(r, "q"), q);
  EXPECT_EQ(r.inputs.count("w_q"), 0u) << "no seeded projection";
  expectMatchesReference(r, 2, true, "given");
}

// Rows sum to 1 over the keys a query sees, every seen key has weight > 0
// (φ > 0: no key is ever ignored), an unseen one 0; and asking for the output
// alone forms no L × L matrix and gives the same output.
TEST(LinearAttention, WeightsArePositiveRowsSumToOneAndTheOutputNeedsNone) {
  const Inputs in = ref::gaussianInputs(12, 32, 32, 16, 2);
  for (const bool causal : {false, true}) {
    const std::map<std::string, std::string> set = {{"causal", causal ? "true" : "false"}};
    const Result r = ref::run("linear-attention", in, set);
    for (const Mat& w : r.weights)
      for (int64_t i = 0; i < w.rows(); ++i) {
        EXPECT_NEAR(w.row(i).sum(), 1.0, 1e-5) << "row " << i;
        for (int64_t j = 0; j < w.cols(); ++j) {
          if (causal && j > i) EXPECT_EQ(w(i, j), 0.0f) << i << ", " << j;
          else EXPECT_GT(w(i, j), 0.0f) << i << ", " << j;
        }
      }
    RunContext output_only;
    output_only.keep_weights = false;
    const Result o = ref::run("linear-attention", in, set, output_only);
    EXPECT_TRUE(o.weights.empty() && o.scores.empty());
    EXPECT_EQ(o.heads(), 2);
    EXPECT_EQ(ref::maxAbsDiff(o.output, r.output), 0.0);
  }
}

}  // namespace
}  // namespace attn
