// Score functions and the alignment family (global, local-p, hard) against
// plain-loop references written from the papers, plus their invariants.
#include "engine/attention_math.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace attn {
namespace {

using ref::DMat;

using ref::kScoreRel, ref::kWeightTol, ref::kOutputRel;

const std::vector<std::string> kScores = {"additive", "general", "dot", "scaled-dot", "cosine", "location"};

struct SoftRef {
  DMat scores, weights, out;
};

SoftRef softRef(const std::string& score, const Inputs& in, const Result& r, double beta) {
  SoftRef s;
  s.scores = ref::scores(score, ref::fromMat(in.query()), ref::fromMat(in.key()), r, beta);
  s.weights = ref::softmaxRows(s.scores);
  s.out = ref::matmul(s.weights, ref::fromMat(in.value()));
  return s;
}

void expectSoft(const Result& r, const SoftRef& want, const std::string& what) {
  ASSERT_EQ(r.heads(), 1) << what;
  ref::expectClose(r.scores[0], want.scores, ref::scaledTol(want.scores, kScoreRel), what + " scores");
  ref::expectClose(r.weights[0], want.weights, kWeightTol, what + " weights");
  ref::expectClose(r.output, want.out, ref::scaledTol(want.out, kOutputRel), what + " output");
}

TEST(ScoreFunctions, EachMatchesReference) {
  const Inputs in = ref::gaussianInputs(5, 6, 9, 16, 4);
  for (const std::string& name : kScores) {
    std::map<std::string, std::string> set;
    if (name == "additive") set["d_a"] = "7";
    if (name == "cosine") set["beta"] = "3.5";
    const Result r = ref::run(name, in, set);
    expectSoft(r, softRef(name, in, r, 3.5), name);
    EXPECT_EQ(r.q_tokens, in.tokens);
    EXPECT_EQ(r.k_tokens, in.source_tokens);
    EXPECT_EQ(ref::recorded(r, "x"), in.x) << name;
    EXPECT_EQ(ref::recorded(r, "x_kv"), in.x_kv) << name;
    EXPECT_GT(r.flops, 2.0 * 6 * 9 * 16) << name;
    if (name == "additive") {
      EXPECT_EQ(ref::recorded(r, "w_a").rows(), 7);
    }
  }
}

// The Family view puts the six side by side: same queries, keys and shapes.
TEST(ScoreFunctions, ShareOneFamilyAndShape) {
  const Inputs in = ref::gaussianInputs(6, 5, 8, 16, 4);
  for (const std::string& name : kScores) {
    const VariantInfo& info = variantOrThrow(name);
    EXPECT_EQ(info.family, "score functions");
    EXPECT_EQ(info.input, InputKind::CrossAttention);
    EXPECT_NE(std::find(info.views.begin(), info.views.end(), "family"), info.views.end());
    const Result r = ref::run(name, in);
    EXPECT_EQ(r.queries(), 5);
    EXPECT_EQ(r.keys(), 8);
    EXPECT_EQ(r.output.rows(), 5);
    EXPECT_EQ(r.output.cols(), 16);
  }
}

TEST(ScoreFunctions, CosineZeroStateAndBetaZero) {
  Inputs in = ref::gaussianInputs(7, 4, 6, 8, 1);
  in.x.row(1).setZero();  // ‖s_t‖ = 0: cosine 0, uniform weights
  const Result r = ref::run("cosine", in);
  EXPECT_TRUE(r.scores[0].row(1).isZero(0));
  EXPECT_TRUE(r.weights[0].row(1).isApproxToConstant(1.0f / 6, 1e-6f));
  const Result flat = ref::run("cosine", in, {{"beta", "0"}});
  EXPECT_TRUE(flat.weights[0].isApproxToConstant(1.0f / 6, 1e-6f));
  EXPECT_THROW(ref::run("cosine", in, {{"beta", "-1"}}), InputError);
}

// Luong's location score depends on the query only, one W_a row per source
// position; runs with a longer source share the first rows of W_a.
TEST(ScoreFunctions, LocationIgnoresKeysAndSharesRowsAcrossLengths) {
  Inputs a = ref::gaussianInputs(8, 5, 6, 16, 4);
  Inputs b = a;
  b.x_kv = ref::gaussianInputs(99, 5, 6, 16, 4).x_kv;  // other keys, same length
  EXPECT_EQ(ref::run("location", a).scores[0], ref::run("location", b).scores[0]);
  const Inputs longer = ref::gaussianInputs(8, 5, 10, 16, 4);
  EXPECT_EQ(ref::recorded(ref::run("location", longer), "w_a").topRows(6), ref::recorded(ref::run("location", a), "w_a"));
}

TEST(Global, EveryScoreMatchesItsScoreFunction) {
  const Inputs in = ref::gaussianInputs(9, 6, 9, 16, 4);
  for (const std::string& name : kScores) {
    const Result g = ref::run("global", in, {{"score", name}});
    expectSoft(g, softRef(name, in, g, 5.0), "global/" + name);
    const Result s = ref::run(name, in);
    EXPECT_EQ(g.weights[0], s.weights[0]) << name;
  }
}

// [SECTION] local-p
struct LocalRef {
  std::vector<double> p_t;
  DMat mask, weights, out, global;
};

// p_t = S·σ(v_pᵀ tanh(W_p h_t)); a_t(s) = softmax_window(score) · exp(−(s − p_t)²/(2σ²)), σ = D/2.
// The window uses the engine's float p_t (checked against p_t here first),
// so a key lying within float rounding of the window edge cannot flip.
LocalRef localRef(const Inputs& in, const Result& r, int64_t D, const std::string& score) {
  LocalRef l;
  const DMat s = ref::fromMat(in.query()), w_p = ref::fromMat(ref::recorded(r, "w_p")),
             v_p = ref::fromMat(ref::recorded(r, "v_p"));
  const int64_t lq = s.rows, lk = in.key().rows(), d = s.cols;
  const Extra* p_extra = r.findExtra("p_t");
  if (!p_extra) throw std::logic_error("local-p: no p_t extra");
  l.mask = DMat(lq, lk);
  for (int64_t t = 0; t < lq; ++t) {
    double z = 0;
    for (int64_t a = 0; a < d; ++a) {
      double hidden = 0;
      for (int64_t k = 0; k < d; ++k) hidden += w_p(a, k) * s(t, k);
      z += v_p(a, 0) * std::tanh(hidden);
    }
    l.p_t.push_back(static_cast<double>(lk) / (1.0 + std::exp(-z)));
    const double p = p_extra->value.data[static_cast<size_t>(t)];
    for (int64_t j = 0; j < lk; ++j) l.mask(t, j) = std::abs(j - p) <= static_cast<double>(D) ? 1.0 : 0.0;
  }
  const DMat sc = ref::scores(score, s, ref::fromMat(in.key()), r, 5.0);
  l.global = ref::softmaxRows(sc);
  l.weights = ref::softmaxRows(sc, l.mask);
  const double sigma = D / 2.0;
  for (int64_t t = 0; t < lq; ++t)
    for (int64_t j = 0; j < lk; ++j) {
      const double off = j - static_cast<double>(p_extra->value.data[static_cast<size_t>(t)]);
      l.weights(t, j) *= std::exp(-off * off / (2 * sigma * sigma));
    }
  l.out = ref::matmul(l.weights, ref::fromMat(in.value()));
  return l;
}

TEST(LocalP, MatchesReference) {
  const Inputs in = ref::gaussianInputs(10, 8, 15, 16, 4);
  for (const std::string score : {"general", "dot", "additive"})
    for (const int64_t D : {1, 2, 4}) {
      const std::string what = "local-p score=" + score + " D=" + std::to_string(D);
      const Result r = ref::run("local-p", in, {{"D", std::to_string(D)}, {"score", score}});
      const LocalRef want = localRef(in, r, D, score);
      const Extra* p_t = r.findExtra("p_t");
      ASSERT_EQ(p_t->value.shape, std::vector<int64_t>{8});
      EXPECT_EQ(p_t->kind, ExtraKind::QueryPosition);
      for (int64_t t = 0; t < 8; ++t) {
        EXPECT_NEAR(p_t->value.data[t], want.p_t[t], 1e-5 * 15) << what;
        EXPECT_GE(p_t->value.data[t], 0.0f);
        EXPECT_LE(p_t->value.data[t], 15.0f);
      }
      ref::expectClose(r.mask, want.mask, 0.0, what + " mask");
      ref::expectClose(r.weights[0], want.weights, kWeightTol, what + " weights");
      ref::expectClose(r.output, want.out, ref::scaledTol(want.out, kOutputRel), what + " output");
      const Extra* g = r.findExtra("global");
      ASSERT_EQ(g->value.shape, (std::vector<int64_t>{1, 8, 15}));
      EXPECT_EQ(g->kind, ExtraKind::Weights);
      ref::expectClose(ref::slice(g->value, 0), want.global, kWeightTol, what + " global");
      // The window extra: first and last key inside [p_t − D, p_t + D], clamped.
      const Extra* w = r.findExtra("window");
      ASSERT_EQ(w->value.shape, (std::vector<int64_t>{8, 2}));
      for (int64_t t = 0; t < 8; ++t) {
        int64_t first = -1, last = -1;
        for (int64_t j = 0; j < 15; ++j)
          if (want.mask(t, j) != 0) last = j, first = first < 0 ? j : first;
        ASSERT_GE(first, 0) << what << ": empty window at t=" << t;
        EXPECT_EQ(w->value.data[2 * t], first) << what;
        EXPECT_EQ(w->value.data[2 * t + 1], last) << what;
      }
      // Masked keys are exactly 0, and the Gaussian leaves rows summing below 1.
      for (int64_t t = 0; t < 8; ++t) {
        for (int64_t j = 0; j < 15; ++j)
          if (r.mask(t, j) == 0) {
            EXPECT_EQ(r.weights[0](t, j), 0.0f);
          }
        EXPECT_LT(r.weights[0].row(t).sum(), 1.0f);
      }
    }
}

// D ≥ Lk puts every key in the window and σ = D/2 makes the Gaussian
// exp(−(s − p_t)²/(2σ²)) ≥ exp(−2 Lk²/D²). With Lk = 15 and D = 10⁵ that
// factor differs from 1 by < 5e-8, below float32 rounding, so local-p must
// equal global to the softmax's own rounding: 1e-6 absolute on weights in
// [0, 1]. A moderate D = 2·Lk (factor up to 12%) must not pass that test.
TEST(LocalP, HugeWindowEqualsGlobal) {
  const Inputs in = ref::gaussianInputs(11, 8, 15, 16, 4);
  for (const std::string score : {"general", "cosine"}) {
    const Result local = ref::run("local-p", in, {{"D", "100000"}, {"score", score}});
    const Result global = ref::run("global", in, {{"score", score}});
    EXPECT_TRUE(local.mask.isOnes(0));
    ref::expectClose(local.weights[0], ref::fromMat(global.weights[0]), 1e-6, "local-p D=1e5 vs global " + score);
    ref::expectClose(local.output, ref::fromMat(global.output), 1e-5, "local-p D=1e5 output vs global");
    const Result moderate = ref::run("local-p", in, {{"D", "30"}, {"score", score}});
    EXPECT_GT(ref::maxAbsDiff(moderate.weights[0], global.weights[0]), 1e-3f);
  }
}

// [SECTION] hard
TEST(Hard, ArgmaxPicksSoftArgmax) {
  const Inputs in = ref::gaussianInputs(12, 9, 11, 16, 4);
  for (const std::string score : {"general", "dot", "additive"}) {
    const Result r = ref::run("hard", in, {{"mode", "argmax"}, {"score", score}});
    const SoftRef soft = softRef(score, in, r, 5.0);
    const Extra* s = r.findExtra("soft");
    ASSERT_NE(s, nullptr);
    ref::expectClose(ref::slice(s->value, 0), soft.weights, kWeightTol, "hard soft " + score);  // [1, Lq, Lk]
    ref::expectClose(r.scores[0], soft.scores, ref::scaledTol(soft.scores, kScoreRel), "hard scores");
    const Extra* pos = r.findExtra("position");
    for (int64_t t = 0; t < 9; ++t) {
      int64_t best = 0;
      for (int64_t j = 1; j < 11; ++j)
        if (soft.weights(t, j) > soft.weights(t, best)) best = j;
      EXPECT_EQ(pos->value.data[t], best) << score << " t=" << t;
      EXPECT_EQ(r.weights[0](t, best), 1.0f);
      EXPECT_EQ(r.weights[0].row(t).sum(), 1.0f);
      EXPECT_EQ(r.output.row(t), in.x_kv.row(best));  // c_t = h_{ĩ_t}
    }
  }
}

// ĩ_t = first i with Σ_{j≤i} α_tj > u_t Σ_j α_tj, u_t = Φ(z_t), z from randomNormal(seed, "u").
TEST(Hard, SampleFollowsInverseCdfAndSeed) {
  const Inputs in = ref::gaussianInputs(13, 40, 12, 16, 4);
  const Result r = ref::run("hard", in, {{"mode", "sample"}, {"score", "scaled-dot"}});
  const Mat soft = ref::slice(r.findExtra("soft")->value, 0);
  const Mat z = randomNormal(40, 1, in.seed, "u");
  const Extra* pos = r.findExtra("position");
  for (int64_t t = 0; t < 40; ++t) {
    const double u = 0.5 * std::erfc(-z(t, 0) / std::sqrt(2.0));
    EXPECT_NEAR(ref::recorded(r, "u")(t, 0), u, 1e-6);
    const double u_used = ref::recorded(r, "u")(t, 0);  // float-rounded, as the engine drew with it
    double total = 0, cum = 0;
    for (int64_t j = 0; j < 12; ++j) total += soft(t, j);
    int64_t pick = 11;
    for (int64_t j = 0; j < 12; ++j)
      if ((cum += soft(t, j)) > u_used * total) {
        pick = j;
        break;
      }
    EXPECT_EQ(pos->value.data[t], pick) << "t=" << t;
    // One-hot rows.
    EXPECT_EQ(r.weights[0].row(t).sum(), 1.0f);
    EXPECT_EQ(r.weights[0].row(t).maxCoeff(), 1.0f);
    EXPECT_EQ((r.weights[0].row(t).array() != 0.0f).count(), 1);
  }
  // Deterministic for a fixed seed; another seed changes some picks.
  EXPECT_EQ(ref::run("hard", in, {{"mode", "sample"}, {"score", "scaled-dot"}}).weights[0], r.weights[0]);
  Inputs other = in;
  other.seed = 14;
  EXPECT_NE(ref::run("hard", other, {{"mode", "sample"}, {"score", "scaled-dot"}}).weights[0], r.weights[0]);
  // Over 40 queries of a spread-out distribution, sampling differs from argmax somewhere.
  EXPECT_NE(ref::run("hard", in, {{"mode", "argmax"}, {"score", "scaled-dot"}}).weights[0], r.weights[0]);
}

}  // namespace
}  // namespace attn
