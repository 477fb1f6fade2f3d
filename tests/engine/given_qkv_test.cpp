// Given q, k, v (--q/--k/--v, makeFromMatrices) are the projected queries,
// keys and values: every variant that takes them uses them as they are, head
// h in columns [h·d_head, (h+1)·d_head), with no seeded W^q, W^k, W^v and no
// W^o. Each pattern's weights are checked against softmax(Q_h K_hᵀ/√d_head)
// restricted to the pattern, with the pattern's rule and the softmax written
// here as plain loops; variants that read an input sequence refuse them.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/inputs.h"
#include "engine/registry.h"
#include "engine/variants/alibi.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace attn {
namespace {

constexpr int64_t kL = 24, kHeads = 2, kDh = 4, kD = kHeads * kDh;

struct Given {
  Mat q, k, v;
  Inputs in;
};

Given given(uint64_t seed) {
  Given g{randomNormal(kL, kD, seed, "given.q"), randomNormal(kL, kD, seed, "given.k"),
          randomNormal(kL, kD, seed, "given.v"), {}};
  g.in = makeFromMatrices(Mat(), g.q, g.k, g.v, kHeads, 99);
  return g;
}

// m_h(i, j) ≥ 0: the pattern's mask of head h (0: key j not in query i's pattern; soft masks in between).
using MaskRule = std::function<double(int64_t h, int64_t i, int64_t j)>;

// w_ij = m_ij exp(s_ij) / Σ_j′ m_ij′ exp(s_ij′) with s_ij = q_h,i · k_h,j / √d_head, and
// head_h = W_h V_h with the heads side by side: the output, since there is no W^o.
void expectPatternOnGiven(const Result& r, const Given& g, const MaskRule& m, const std::string& what) {
  ASSERT_EQ(r.heads(), kHeads) << what;
  ASSERT_EQ(r.weights.size(), static_cast<size_t>(kHeads)) << what << ": dense weights at L = 24";
  ref::DMat out(kL, kD);
  for (int64_t h = 0; h < kHeads; ++h) {
    ref::DMat w(kL, kL);
    for (int64_t i = 0; i < kL; ++i) {
      double top = -std::numeric_limits<double>::infinity(), sum = 0;
      std::vector<double> s(static_cast<size_t>(kL));
      for (int64_t j = 0; j < kL; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < kDh; ++c) dot += static_cast<double>(g.q(i, h * kDh + c)) * g.k(j, h * kDh + c);
        s[static_cast<size_t>(j)] = dot / std::sqrt(static_cast<double>(kDh));
        if (m(h, i, j) > 0) top = std::max(top, s[static_cast<size_t>(j)]);
      }
      for (int64_t j = 0; j < kL; ++j)
        if (m(h, i, j) > 0) sum += w(i, j) = m(h, i, j) * std::exp(s[static_cast<size_t>(j)] - top);
      for (int64_t j = 0; j < kL; ++j) {
        if (sum > 0) w(i, j) /= sum;
        for (int64_t c = 0; c < kDh; ++c) out(i, h * kDh + c) += w(i, j) * g.v(j, h * kDh + c);
      }
    }
    ref::expectClose(r.weights[static_cast<size_t>(h)], w, 1e-5, what + " weights, head " + std::to_string(h));
  }
  ref::expectClose(r.output, out, 1e-5, what + " output");
  // What was used is recorded, and nothing was generated.
  EXPECT_EQ(ref::recorded(r, "q"), g.q) << what;
  EXPECT_EQ(ref::recorded(r, "v"), g.v) << what;
  for (const char* seeded : {"x", "w_q", "w_k", "w_v", "w_o"}) EXPECT_EQ(r.inputs.count(seeded), 0u) << what << " " << seeded;
}

TEST(GivenQkv, SparsePatternsAttendWithTheGivenProjections) {
  const Given g = given(1);
  const int64_t l = 5, c = 2;
  // Strided A¹ ∪ A²: j ≤ i with i − j ≤ ℓ or (i − j) mod ℓ = 0.
  expectPatternOnGiven(ref::run("sparse-strided", g.in, {{"stride", "5"}, {"set", "union"}}), g,
                       [&](int64_t, int64_t i, int64_t j) { return j <= i && (i - j <= l || (i - j) % l == 0); },
                       "sparse-strided");
  // Fixed A¹ ∪ A²: j ≤ i in i's block, or in the last c columns of a block.
  expectPatternOnGiven(ref::run("sparse-fixed", g.in, {{"block", "5"}, {"c", "2"}, {"set", "union"}}), g,
                       [&](int64_t, int64_t i, int64_t j) { return j <= i && (j / l == i / l || j % l >= l - c); },
                       "sparse-fixed");
  // layout = split: head h uses A^{(h mod 2)+1}.
  expectPatternOnGiven(ref::run("sparse-strided", g.in, {{"stride", "5"}, {"layout", "split"}}), g,
                       [&](int64_t h, int64_t i, int64_t j) { return j <= i && (h == 0 ? i - j <= l : (i - j) % l == 0); },
                       "sparse-strided split");
}

TEST(GivenQkv, LocalAttendsWithTheGivenProjections) {
  const Given g = given(2);
  const int64_t lq = 4, lm = 6;
  // Query i of block b = ⌊i/l_q⌋ attends to j ∈ [max(0, b·l_q − l_m), i].
  expectPatternOnGiven(ref::run("local-1d", g.in, {{"l_q", "4"}, {"l_m", "6"}}), g,
                       [&](int64_t, int64_t i, int64_t j) { return j <= i && j >= std::max<int64_t>(0, i / lq * lq - lm); },
                       "local-1d");
}

TEST(GivenQkv, AdaptiveSpanMasksTheGivenProjections) {
  const Given g = given(3);
  const double R = 2, z[] = {3, 6};
  const int64_t S = 8;
  // m_z(x) = clamp((R + z − x)/R, 0, 1) over the distances x = i − j = 1 … S.
  expectPatternOnGiven(ref::run("adaptive-span", g.in, {{"max_span", "8"}, {"ramp", "2"}, {"z", "3,6"}}), g,
                       [&](int64_t h, int64_t i, int64_t j) {
                         const int64_t x = i - j;
                         return x < 1 || x > S ? 0.0 : std::clamp((R + z[h] - static_cast<double>(x)) / R, 0.0, 1.0);
                       },
                       "adaptive-span");
}

TEST(GivenQkv, AlibiBiasesTheGivenProjections) {
  // softmax_j(s_ij − m_h (i − j)) over j ≤ i is the soft mask exp(−m_h (i − j)) on softmax(s).
  const Given g = given(4);
  const std::vector<double> m = alibiSlopes(kHeads);
  expectPatternOnGiven(ref::run("alibi", g.in), g,
                       [&](int64_t h, int64_t i, int64_t j) {
                         return j <= i ? std::exp(-m[static_cast<size_t>(h)] * static_cast<double>(i - j)) : 0.0;
                       },
                       "alibi");
}

TEST(GivenQkv, MultiHeadAndCrossAttentionUseThemWithoutWo) {
  const Given g = given(4);
  expectPatternOnGiven(ref::run("multi-head", g.in), g, [](int64_t, int64_t, int64_t) { return 1.0; }, "multi-head");
  expectPatternOnGiven(ref::run("multi-head", g.in, {{"causal", "true"}}), g,
                       [](int64_t, int64_t i, int64_t j) { return j <= i ? 1.0 : 0.0; }, "multi-head causal");
  expectPatternOnGiven(ref::run("cross-attention", g.in), g, [](int64_t, int64_t, int64_t) { return 1.0; },
                       "cross-attention");
}

TEST(GivenQkv, VariantsThatReadASequenceRefuseThemInOneLine) {
  const Given g = given(5);
  // Each variant's registry mark holds both ways: a refusing one refuses in
  // one line naming itself, any other runs on them (no count kept by hand).
  for (const VariantInfo& v : variants()) {
    SCOPED_TRACE(v.name);
    const auto run = [&] { return runVariant(v, g.in, Params::defaults(v.params)); };
    // Positions, a picture, a memory or a sequence of its own: nothing to take q, k, v into.
    if (v.input != InputKind::SelfAttention && v.input != InputKind::CrossAttention) {
      EXPECT_EQ(v.given_qkv, GivenQkv::Refused);
    }
    if (v.given_qkv == GivenQkv::Refused) {
      ref::expectInputError(run, {"--q/--k/--v: " + v.name});
    } else {
      EXPECT_NO_THROW(run());
    }
  }
  ref::expectInputError([&] { ref::run("sinusoidal-pe", g.in); }, {"--q/--k/--v: sinusoidal-pe", "reads no queries"});
  ref::expectInputError([&] { ref::run("act", g.in); }, {"--q/--k/--v: act", "--x"});
  // Each kind says what it reads instead.
  ref::expectInputError([&] { ref::run("sagan", g.in); }, {"--q/--k/--v: sagan", "a picture of its own"});
  ref::expectInputError([&] { ref::run("ntm", g.in); }, {"--q/--k/--v: ntm", "a memory M", "--x"});
  for (const std::string name : {"ntm-copy", "pointer-sort"})
    ref::expectInputError([&] { ref::run(name, g.in); }, {"--q/--k/--v: " + name, "a sequence of its own"});
  // A one-head variant takes [L, d]; files of H > 1 heads are refused.
  Inputs per_head = g.in;
  per_head.per_head_files = true;
  ref::expectInputError([&] { ref::run("scaled-dot-product", per_head); }, {"scaled-dot-product", "one head", "2 heads"});
  EXPECT_NO_THROW(ref::run("sparse-strided", per_head));
}

}  // namespace
}  // namespace attn
