// The analyses of engine/model/analysis/interventions.h against GPT-2's
// traced double-precision reference (families/gpt2_reference.h), each edit
// applied there by hand: ablation, the importance grid, activation patching,
// the logit lens, direct logit attribution and value-weighted attention.
#include "engine/model/analysis/interventions.h"

#include "engine/model/model.h"

#include "tests/engine/model/families/gpt2_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attn::interventions_test {
namespace {

using test::TinyModel;
using namespace mref;

constexpr double kTol = 1e-4;

// log softmax(logits)[id] of one reference row, in double
double logProb(const std::vector<double>& row, int32_t id) {
  const double mx = *std::max_element(row.begin(), row.end());
  double z = 0;
  for (const double v : row) z += std::exp(v - mx);
  return row[static_cast<size_t>(id)] - mx - std::log(z);
}

int32_t argmax(const std::vector<double>& row) {
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

struct Fixture {
  test::TempDir dir;
  TinyModel tm = test::writeTinyModel(dir.path, {.seed = 11});
  std::shared_ptr<const Model> model = loadModel(filesOnDisk(dir.path.string()));
  const ModelConfig& c = modelInfo(*model).config;
};

const std::vector<int32_t> kIds = {40, 120, 7, 200, 33, 120, 7};
const std::vector<int32_t> kCorrupted = {40, 121, 7, 200, 33, 120, 7};  // position 1 differs

TEST(Interventions, TargetIsTheModelsTopTokenOrTheOneAsked) {
  Fixture f;
  const Gpt2Trace t = gpt2Trace(f.tm, kIds);
  const Target own = chooseTarget(*f.model, kIds, -1, -1);
  EXPECT_EQ(own.position, 6);
  EXPECT_EQ(own.id, argmax(t.ref.logits[6]));
  const Target asked = chooseTarget(*f.model, kIds, 2, 17);
  EXPECT_EQ(asked.position, 2);
  EXPECT_EQ(asked.id, 17);
  test::expectHas(test::errorOf([&] { chooseTarget(*f.model, kIds, 7, -1); }), {"--position: position 7 is outside the 7 tokens"});
  const int32_t V = static_cast<int32_t>(f.c.vocab);
  test::expectHas(test::errorOf([&] { chooseTarget(*f.model, kIds, 0, V); }),
                  {"--token-id: " + std::to_string(V) + " is outside the vocabulary [0, " + std::to_string(V) + ")"});
  test::expectHas(test::errorOf([&] { tokenIdOf(*f.model, "the cat"); }), {"--token: ‹the cat› is", "tokens", "not one"});
  EXPECT_EQ(tokenIdOf(*f.model, "t"), modelTokenizer(*f.model).encode("t").at(0));
}

TEST(Interventions, AblationEffectMatchesTheReferenceWithTheHeadsReplaced) {
  Fixture f;
  const Target target = chooseTarget(*f.model, kIds, -2, 9);
  const Gpt2Trace base = gpt2Trace(f.tm, kIds);
  for (const bool mean : {false, true}) {
    SCOPED_TRACE(mean ? "mean" : "zero");
    const HeadAblation ab{mean ? HeadAblation::Mode::Mean : HeadAblation::Mode::Zero, {{0, 1}, {1, 0}}};
    const AblationEffect e = ablationEffect(*f.model, kIds, ab, target, 3);
    const Gpt2Trace after = gpt2Trace(f.tm, kIds, {.ablate = ab.heads, .mean = mean});
    const auto& before_row = base.ref.logits[5];
    const auto& after_row = after.ref.logits[5];
    EXPECT_NEAR(e.before.logit, before_row[9], kTol);
    EXPECT_NEAR(e.before.log_prob, logProb(before_row, 9), kTol);
    EXPECT_NEAR(e.after.logit, after_row[9], kTol);
    EXPECT_NEAR(e.after.log_prob, logProb(after_row, 9), kTol);
    EXPECT_GT(std::abs(e.after.log_prob - e.before.log_prob), 1e-3) << "ablating two heads moved nothing";
    ASSERT_EQ(e.top_after.size(), 3u);
    EXPECT_EQ(e.top_after[0].id, argmax(after_row));
    EXPECT_NEAR(e.top_after[0].probability, std::exp(logProb(after_row, argmax(after_row))), kTol);
    EXPECT_EQ(e.top_before[0].id, argmax(before_row));
  }
}

// Each cell: the reference with that head alone ablated, a whole pass from the embeddings.
TEST(Interventions, ImportanceGridEqualsEachHeadAblatedInAFullPass) {
  Fixture f;
  const Target target = chooseTarget(*f.model, kIds, -1, -1);
  for (const bool mean : {false, true}) {
    const ImportanceGrid g =
        importanceGrid(*f.model, kIds, mean ? HeadAblation::Mode::Mean : HeadAblation::Mode::Zero, target);
    const double base = logProb(gpt2Trace(f.tm, kIds).ref.logits[6], target.id);
    EXPECT_NEAR(g.base.log_prob, base, kTol);
    ASSERT_EQ(g.delta.rows(), f.c.layers);
    ASSERT_EQ(g.delta.cols(), f.c.heads);
    double moved = 0;
    for (int64_t l = 0; l < f.c.layers; ++l)
      for (int64_t h = 0; h < f.c.heads; ++h) {
        const double ref = logProb(gpt2Trace(f.tm, kIds, {.ablate = {{l, h}}, .mean = mean}).ref.logits[6], target.id);
        EXPECT_NEAR(g.delta(l, h), ref - base, kTol) << l << ":" << h;
        moved = std::max(moved, std::abs(ref - base));
      }
    EXPECT_GT(moved, 1e-3);
    // the base pass, then each head's pass from its own layer on: 2 + 2·(2 + 1)
    EXPECT_EQ(g.layer_passes, f.c.layers + f.c.heads * (f.c.layers * (f.c.layers + 1) / 2));
    // every pass from the embeddings: the same grid
    const ImportanceGrid whole =
        importanceGrid(*f.model, kIds, mean ? HeadAblation::Mode::Mean : HeadAblation::Mode::Zero, target, {}, false);
    EXPECT_LT((whole.delta - g.delta).cwiseAbs().maxCoeff(), 1e-6f);
    EXPECT_EQ(whole.layer_passes, f.c.layers * (1 + f.c.layers * f.c.heads));
  }
}

// Patching the clean run's value into the corrupted one, against the
// corrupted reference with that value written in by hand.
TEST(Interventions, PatchingEqualsTheCorruptedPassWithTheCleanValueWrittenIn) {
  Fixture f;
  const Target target = chooseTarget(*f.model, kIds, -1, -1);
  const PatchingResult r = activationPatching(*f.model, kIds, kCorrupted, target, {});
  const Gpt2Trace clean = gpt2Trace(f.tm, kIds), corrupted = gpt2Trace(f.tm, kCorrupted);
  EXPECT_NEAR(r.clean.log_prob, logProb(clean.ref.logits[6], target.id), kTol);
  EXPECT_NEAR(r.corrupted.log_prob, logProb(corrupted.ref.logits[6], target.id), kTol);
  const size_t dh = static_cast<size_t>(f.c.head_dim);
  for (int64_t l = 0; l < f.c.layers; ++l)
    for (int64_t h = 0; h < f.c.heads; ++h) {
      Rows out = zeros(kIds.size(), dh);
      for (size_t i = 0; i < kIds.size(); ++i)
        for (size_t e = 0; e < dh; ++e) out[i][e] = clean.heads[static_cast<size_t>(l)][i][static_cast<size_t>(h) * dh + e];
      const Gpt2Trace p = gpt2Trace(f.tm, kCorrupted, {.patch_heads = {{{l, h}, out}}});
      EXPECT_NEAR(r.heads(l, h), logProb(p.ref.logits[6], target.id), kTol) << l << ":" << h;
    }
  for (int64_t l = 0; l < f.c.layers; ++l)
    for (int64_t pos = 0; pos < 7; ++pos) {
      const Gpt2Trace p = gpt2Trace(f.tm, kCorrupted,
                                    {.patch_layer = l, .patch_position = pos,
                                     .patch_value = clean.resid[static_cast<size_t>(l)][static_cast<size_t>(pos)]});
      EXPECT_NEAR(r.residual(l, pos), logProb(p.ref.logits[6], target.id), kTol) << l << ":" << pos;
    }
  // The prompts differ at position 1 only: the clean embedding there makes the corrupted pass the clean one.
  EXPECT_NEAR(r.restoredResidual()(0, 1), 1.0, 1e-3);
  EXPECT_NEAR(r.restoredResidual()(0, 3), 0.0, 1e-3);
  test::expectHas(test::errorOf([&] { activationPatching(*f.model, kIds, {1, 2, 3}, target, {}); }),
                  {"--corrupted: 3 tokens, but the clean text has 7", "same number of tokens"});
}

// Each layer's stream through ln_f and the unembedding by hand.
TEST(Interventions, LogitLensEqualsTheFinalNormAndUnembeddingByHand) {
  Fixture f;
  const LogitLens lens = logitLens(*f.model, kIds, 3);
  const Gpt2Trace t = gpt2Trace(f.tm, kIds);
  ASSERT_EQ(lens.top.size(), static_cast<size_t>(f.c.layers + 1));
  const size_t d = static_cast<size_t>(f.c.d_model);
  for (size_t l = 0; l <= static_cast<size_t>(f.c.layers); ++l) {
    Rows x = t.resid[l];
    layerNormRef(x, f.tm.w("ln_f.weight"), f.tm.w("ln_f.bias"), f.c.ln_eps);
    const Rows logits = linearRef(x, unembedding(f.tm), {}, d, static_cast<size_t>(f.c.vocab), true);
    for (size_t i = 0; i < kIds.size(); ++i) {
      const int32_t best = argmax(logits[i]);
      ASSERT_EQ(lens.top[l][i].size(), 3u);
      EXPECT_EQ(lens.top[l][i][0].id, best) << l << ":" << i;
      EXPECT_NEAR(lens.top[l][i][0].probability, std::exp(logProb(logits[i], best)), kTol);
      EXPECT_NEAR(lens.final_token(static_cast<int64_t>(l), static_cast<int64_t>(i)),
                  std::exp(logProb(logits[i], argmax(t.ref.logits[i]))), kTol);
    }
  }
}

// Some positions only: the same cells.
TEST(Interventions, LogitLensOnSomePositionsIsThoseColumns) {
  Fixture f;
  const LogitLens all = logitLens(*f.model, kIds, 2), some = logitLens(*f.model, kIds, 2, {}, {5, 2});
  ASSERT_EQ(some.positions, (std::vector<int64_t>{5, 2}));
  for (int64_t l = 0; l <= f.c.layers; ++l) {
    EXPECT_NEAR(some.final_token(l, 0), all.final_token(l, 5), 1e-6);
    EXPECT_NEAR(some.final_token(l, 1), all.final_token(l, 2), 1e-6);
    EXPECT_EQ(some.top[static_cast<size_t>(l)][1][0].id, all.top[static_cast<size_t>(l)][2][0].id);
  }
}

// Every part against the reference's own (the MLPs as computed, not as what is left),
// and their sum against the logit.
TEST(Interventions, DirectLogitAttributionAddsUpToTheLogit) {
  Fixture f;
  const Target target = chooseTarget(*f.model, kIds, 4, -1);
  const LogitAttribution a = directLogitAttribution(*f.model, kIds, target);
  const Gpt2Trace t = gpt2Trace(f.tm, kIds);
  const size_t d = static_cast<size_t>(f.c.d_model), p = 4;
  const std::vector<float>& U = unembedding(f.tm);
  const std::vector<float>& g = f.tm.w("ln_f.weight");
  const std::vector<double>& x = t.resid.back()[p];
  double mu = 0, var = 0;
  for (const double v : x) mu += v / static_cast<double>(d);
  for (const double v : x) var += (v - mu) * (v - mu) / static_cast<double>(d);
  const double sigma = std::sqrt(var + f.c.ln_eps);
  auto part = [&](const std::vector<double>& c) {  // γ ⊙ (c − mean c) / σ · u
    double m = 0, s = 0;
    for (const double v : c) m += v / static_cast<double>(d);
    for (size_t e = 0; e < d; ++e) s += g[e] * (c[e] - m) / sigma * U[static_cast<size_t>(target.id) * d + e];
    return s;
  };
  std::map<std::string, double> want;
  want["embeddings"] = part(t.resid[0][p]);
  for (size_t l = 0; l < static_cast<size_t>(f.c.layers); ++l) {
    const std::string L = "L" + std::to_string(l);
    for (size_t h = 0; h < static_cast<size_t>(f.c.heads); ++h) want[L + "H" + std::to_string(h)] = part(t.writes[l][h][p]);
    want[L + " attention bias"] = part(std::vector<double>(t.proj_b[l].begin(), t.proj_b[l].end()));
    want[L + " MLP"] = part(t.mlp[l][p]);
  }
  double beta = 0;
  for (size_t e = 0; e < d; ++e) beta += f.tm.w("ln_f.bias")[e] * U[static_cast<size_t>(target.id) * d + e];
  want["final norm bias"] = beta;
  ASSERT_EQ(a.parts.size(), want.size());
  for (const LogitAttribution::Part& part_ : a.parts) {
    ASSERT_TRUE(want.count(part_.name)) << part_.name;
    EXPECT_NEAR(part_.value, want[part_.name], kTol) << part_.name;
  }
  EXPECT_NEAR(a.logit, t.ref.logits[p][static_cast<size_t>(target.id)], kTol);
  EXPECT_NEAR(a.sum(), a.logit, 1e-4);
  EXPECT_NEAR(a.heads(1, 0), want["L1H0"], kTol);
}

// ‖α_ij v_j W_O^h‖ as the norm of the whole vector α_ij · v_j^h W_proj[h rows], by hand.
TEST(Interventions, ValueWeightedMapsEqualTheNormByHand) {
  Fixture f;
  ModelRunOptions o;
  o.edit.value_norms = true;
  const ModelRun run = runModelIds(*f.model, kIds, o);
  const Gpt2Trace t = gpt2Trace(f.tm, kIds);
  const size_t d = static_cast<size_t>(f.c.d_model), dh = static_cast<size_t>(f.c.head_dim);
  for (int64_t l = 0; l < f.c.layers; ++l) {
    const std::vector<float>& wp = f.tm.w("h." + std::to_string(l) + ".attn.c_proj.weight");
    for (int64_t h = 0; h < f.c.heads; ++h) {
      const Mat vw = valueWeightedMap(run, l, h);
      const Rows& A = t.ref.attention[static_cast<size_t>(l)][static_cast<size_t>(h)];
      const Rows& v = t.ref.v[static_cast<size_t>(l)];
      for (size_t i = 0; i < kIds.size(); ++i)
        for (size_t j = 0; j < kIds.size(); ++j) {
          double sq = 0;
          for (size_t o2 = 0; o2 < d; ++o2) {
            double y = 0;
            for (size_t e = 0; e < dh; ++e) y += A[i][j] * v[j][static_cast<size_t>(h) * dh + e] * wp[(static_cast<size_t>(h) * dh + e) * d + o2];
            sq += y * y;
          }
          EXPECT_NEAR(vw(static_cast<int64_t>(i), static_cast<int64_t>(j)), std::sqrt(sq), kTol) << l << ":" << h;
        }
    }
  }
}

}  // namespace
}  // namespace attn::interventions_test
