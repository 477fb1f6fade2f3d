// BERT (engine/model/families/bert.cpp) against a plain-loop double reference
// written here: [CLS] … [SEP], the MLM head tied and untied, and the body
// alone. The checks every family needs are in conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

namespace attn::bert_test {
namespace {

using test::TinyModel;
using namespace mref;

Reference bertRef(const TinyModel& m, const std::vector<int32_t>& ids) {
  const ModelConfig& c = m.config;
  const size_t L = ids.size(), d = static_cast<size_t>(c.d_model), ff = static_cast<size_t>(c.d_ff);
  Reference r;
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e)
      x[i][e] = m.w("embeddings.word_embeddings.weight")[ids[i] * d + e] +
                m.w("embeddings.position_embeddings.weight")[i * d + e] +
                m.w("embeddings.token_type_embeddings.weight")[e];
  layerNormRef(x, m.w("embeddings.LayerNorm.weight"), m.w("embeddings.LayerNorm.bias"), c.ln_eps);
  for (int64_t l = 0; l < c.layers; ++l) {
    auto W = [&](const std::string& n) { return m.w("encoder.layer." + std::to_string(l) + "." + n); };
    const Rows q = linearRef(x, W("attention.self.query.weight"), W("attention.self.query.bias"), d, d, true);
    const Rows k = linearRef(x, W("attention.self.key.weight"), W("attention.self.key.bias"), d, d, true);
    const Rows v = linearRef(x, W("attention.self.value.weight"), W("attention.self.value.bias"), d, d, true);
    const Rows out = attendAndKeep(r, q, k, v, static_cast<size_t>(c.heads), false);
    const Rows o = linearRef(out, W("attention.output.dense.weight"), W("attention.output.dense.bias"), d, d, true);
    addInto(x, o);
    layerNormRef(x, W("attention.output.LayerNorm.weight"), W("attention.output.LayerNorm.bias"), c.ln_eps);
    Rows f = linearRef(x, W("intermediate.dense.weight"), W("intermediate.dense.bias"), d, ff, true);
    for (auto& row : f)
      for (double& u : row) u = geluErf(u);
    const Rows f2 = linearRef(f, W("output.dense.weight"), W("output.dense.bias"), ff, d, true);
    addInto(x, f2);
    layerNormRef(x, W("output.LayerNorm.weight"), W("output.LayerNorm.bias"), c.ln_eps);
  }
  r.hidden = x;
  if (m.has("cls.predictions.bias")) {
    Rows t = linearRef(x, m.w("cls.predictions.transform.dense.weight"), m.w("cls.predictions.transform.dense.bias"),
                       d, d, true);
    for (auto& row : t)
      for (double& u : row) u = geluErf(u);
    layerNormRef(t, m.w("cls.predictions.transform.LayerNorm.weight"),
                 m.w("cls.predictions.transform.LayerNorm.bias"), c.ln_eps);
    const std::vector<float>& dec = m.has("cls.predictions.decoder.weight") ? m.w("cls.predictions.decoder.weight")
                                                                            : m.w("embeddings.word_embeddings.weight");
    r.logits = linearRef(t, dec, m.w("cls.predictions.bias"), d, static_cast<size_t>(c.vocab), true);
  }
  return r;
}

TEST(ModelForward, BertMatchesLoopReference) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path, {.arch = test::Fixture::Bert, .prefix = "bert.", .seed = 5});
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModel(*model, "The cat sat on the mat.", {.top_k = 5});
  ASSERT_GE(run.ids.size(), 4u);
  EXPECT_FALSE(run.causal);
  EXPECT_EQ(run.tokens.front(), "[CLS]");
  EXPECT_EQ(run.tokens.back(), "[SEP]");
  expectMatches(run, bertRef(tm, run.ids), 5);
}

TEST(ModelForward, BertUntiedDecoderAndWithoutMlmHead) {
  test::TempDir a, b;
  const TinyModel with = test::writeTinyModel(a.path, {.arch = test::Fixture::Bert, .untied_head = true, .seed = 6});
  const std::vector<int32_t> ids = {2, 5, 6, 7, 13, 3};
  expectMatches(runModelIds(*loadModel(filesOnDisk(a.path.string())), ids, {.top_k = 2}), bertRef(with, ids), 2);
  const TinyModel bare = test::writeTinyModel(b.path, {.arch = test::Fixture::Bert, .mlm = false, .seed = 7});
  const ModelRun run = runModelIds(*loadModel(filesOnDisk(b.path.string())), ids);
  EXPECT_TRUE(run.top_k.empty());
  expectMatches(run, bertRef(bare, ids), 0);
}

}  // namespace
}  // namespace attn::bert_test
