// GPT-2 (engine/model/families/gpt2.cpp) against a plain-loop double reference
// written here: the tiny fixture of tests/model_fixture.h with and without the
// transformer. prefix and an untied head, sharded, and the attention buffers
// some checkpoints carry. The checks every family needs are in
// conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

namespace fs = std::filesystem;

namespace attn::gpt2_test {
namespace {

using test::TinyModel;
using namespace mref;

Reference gpt2Ref(const TinyModel& m, const std::vector<int32_t>& ids) {
  const ModelConfig& c = m.config;
  const size_t L = ids.size(), d = static_cast<size_t>(c.d_model), ff = static_cast<size_t>(c.d_ff);
  Reference r;
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] = m.w("wte.weight")[ids[i] * d + e] + m.w("wpe.weight")[i * d + e];
  for (int64_t l = 0; l < c.layers; ++l) {
    auto W = [&](const std::string& n) { return m.w("h." + std::to_string(l) + "." + n); };
    Rows a = x;
    layerNormRef(a, W("ln_1.weight"), W("ln_1.bias"), c.ln_eps);
    const Rows qkv = linearRef(a, W("attn.c_attn.weight"), W("attn.c_attn.bias"), d, 3 * d, false);
    Rows q = zeros(L, d), k = zeros(L, d), v = zeros(L, d);
    for (size_t i = 0; i < L; ++i)
      for (size_t e = 0; e < d; ++e) q[i][e] = qkv[i][e], k[i][e] = qkv[i][d + e], v[i][e] = qkv[i][2 * d + e];
    const Rows out = attendAndKeep(r, q, k, v, static_cast<size_t>(c.heads), true);
    const Rows proj = linearRef(out, W("attn.c_proj.weight"), W("attn.c_proj.bias"), d, d, false);
    addInto(x, proj);
    a = x;
    layerNormRef(a, W("ln_2.weight"), W("ln_2.bias"), c.ln_eps);
    Rows f = linearRef(a, W("mlp.c_fc.weight"), W("mlp.c_fc.bias"), d, ff, false);
    for (auto& row : f)
      for (double& u : row) u = 0.5 * u * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (u + 0.044715 * u * u * u)));
    const Rows f2 = linearRef(f, W("mlp.c_proj.weight"), W("mlp.c_proj.bias"), ff, d, false);
    addInto(x, f2);
  }
  layerNormRef(x, m.w("ln_f.weight"), m.w("ln_f.bias"), c.ln_eps);
  r.hidden = x;
  const std::vector<float>& head = m.has("lm_head.weight") ? m.w("lm_head.weight") : m.w("wte.weight");
  r.logits = linearRef(x, head, {}, d, static_cast<size_t>(c.vocab), true);
  return r;
}

TEST(ModelForward, Gpt2MatchesLoopReference) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModel(*model, "the cat sat", {.top_k = 4});
  ASSERT_GE(run.ids.size(), 3u);
  EXPECT_TRUE(run.causal);
  EXPECT_EQ(run.tokens.size(), run.ids.size());
  EXPECT_GT(run.flops, 0);
  expectMatches(run, gpt2Ref(tm, run.ids), 4);
  // Causal: nothing above the diagonal; every row sums to 1.
  for (const auto& layer : run.attention)
    for (const Mat& a : layer)
      for (int64_t i = 0; i < a.rows(); ++i) {
        EXPECT_NEAR(a.row(i).sum(), 1.0f, 1e-5f);
        for (int64_t j = i + 1; j < a.cols(); ++j) EXPECT_EQ(a(i, j), 0.0f);
      }
}

TEST(ModelForward, Gpt2WithPrefixAndUntiedHead) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path, {.prefix = "transformer.", .untied_head = true, .seed = 3});
  const auto model = loadModel(filesOnDisk((dir.path / "model.safetensors").string()));
  const std::vector<int32_t> ids = {5, 70, 256, 258, 100, 0, 44};
  expectMatches(runModelIds(*model, ids, {.top_k = 3}), gpt2Ref(tm, ids), 3);
}

TEST(ModelForward, ShardedCheckpoint) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path, {.shards = 3, .seed = 8});
  ASSERT_TRUE(fs::exists(dir / "model.safetensors.index.json"));
  ASSERT_FALSE(fs::exists(dir / "model.safetensors"));
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  EXPECT_EQ(modelInfo(*model).bytes_on_disk,
            fs::file_size(dir / "model-00001-of-00003.safetensors") +
                fs::file_size(dir / "model-00002-of-00003.safetensors") +
                fs::file_size(dir / "model-00003-of-00003.safetensors"));
  const std::vector<int32_t> ids = {1, 2, 3, 4};
  expectMatches(runModelIds(*model, ids, {.top_k = 2}), gpt2Ref(tm, ids), 2);
}

TEST(ModelErrors, GptBuffersAreNotExtraTensors) {
  test::TempDir dir;
  TinyModel tm = test::writeTinyModel(dir.path);
  tm.weights["h.0.attn.bias"] = std::vector<float>(16 * 16, 1.0f);
  tm.shapes["h.0.attn.bias"] = {1, 1, 16, 16};
  test::writeWeights(tm);
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  EXPECT_EQ(modelInfo(*m).parameters + 256, [&] {
    int64_t n = 0;
    for (const auto& [k, v] : tm.weights) n += static_cast<int64_t>(v.size());
    return n;
  }());
}

}  // namespace
}  // namespace attn::gpt2_test
