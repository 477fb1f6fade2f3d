// GPT-NeoX / Pythia (engine/model/families/gpt_neox.cpp) against a plain-loop double
// reference written from transformers' modeling_gpt_neox.py: the fused
// query_key_value viewed [L, heads, 3·head_dim] (q, k, v per head), partial
// rotary on the first int(head_dim · rotary_pct) dims, parallel and
// sequential residuals, LayerNorm with biases, the untied embed_out head;
// both config generations, sequential KV-cache generation and the refusals.
// The checks every family needs are in conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/engine/model/families/conformance.h"
#include "tests/gguf_fixture.h"
#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace attn {
namespace {

using namespace mref;
using test::TinyModel;

constexpr int64_t kNeoxLayers = 2, kNeoxHeads = 2, kNeoxD = 16, kNeoxFf = 24, kNeoxPositions = 32;

struct NeoxCase {
  bool v5 = false;        // transformers 5's config.json: rope_parameters, dtype
  bool parallel = true;   // use_parallel_residual
  bool bias = true;       // attention_bias
  bool tied = false;      // tie_word_embeddings
  std::string act = "gelu";
  double theta = 50.0;    // a small base: the tiny head's frequencies turn visibly
  double pct = 0.5;       // of head_dim 8: 4 rotary dims, 4 passing
  uint64_t seed = 1;
  DType dtype = DType::F32;
  int64_t d = kNeoxD, ff = kNeoxFf;
};

nlohmann::json neoxConfig(const NeoxCase& o) {
  nlohmann::json j = {{"architectures", {"GPTNeoXForCausalLM"}},
                      {"model_type", "gpt_neox"},
                      {"num_hidden_layers", kNeoxLayers},
                      {"num_attention_heads", kNeoxHeads},
                      {"hidden_size", o.d},
                      {"intermediate_size", o.ff},
                      {"max_position_embeddings", kNeoxPositions},
                      {"vocab_size", test::kTokenizerVocab},
                      {"layer_norm_eps", 1e-5},
                      {"hidden_act", o.act},
                      {"use_parallel_residual", o.parallel},
                      {"attention_bias", o.bias},
                      {"tie_word_embeddings", o.tied},
                      {"hidden_dropout", 0.0},
                      {"attention_dropout", 0.0},
                      {"bos_token_id", 259},
                      {"eos_token_id", 260}};
  if (o.v5) {
    j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", o.theta}, {"partial_rotary_factor", o.pct}};
    j["dtype"] = "float32";
  } else {
    j["rotary_pct"] = o.pct;
    j["rotary_emb_base"] = o.theta;
    j["torch_dtype"] = "float32";
  }
  return j;
}

TinyModel neoxCheckpoint(const std::filesystem::path& dir, const NeoxCase& o) {
  return test::writeCheckpoint(dir, neoxConfig(o), test::gptNeoxTensors(kNeoxLayers, o.d, o.ff, o.bias, o.tied),
                               {.dtype = o.dtype, .seed = o.seed});
}

struct NeoxReference : Reference {
  std::vector<Rows> q_unrotated, k_unrotated;
};

// transformers' GPTNeoXForCausalLM.forward, one scalar loop at a time.
NeoxReference neoxRef(const TinyModel& m, const std::vector<int32_t>& ids, const NeoxCase& o) {
  const size_t L = ids.size(), d = static_cast<size_t>(o.d), H = kNeoxHeads, dh = d / H, ff = static_cast<size_t>(o.ff), V = test::kTokenizerVocab;
  const double eps = 1e-5;
  auto act = [&](double u) { return o.act == "gelu" ? geluErf(u) : geluTanh(u); };
  RopeSpec spec;  // θ_i = base^(−2i/rotary_dims) over rotary_dims = int(head_dim · pct)
  spec.theta = o.theta;
  spec.partial = o.pct;
  const std::vector<double> theta = ropeThetaRef(spec, static_cast<int64_t>(dh));
  NeoxReference r;
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] = m.w("gpt_neox.embed_in.weight")[static_cast<size_t>(ids[i]) * d + e];
  const std::vector<float> none;
  for (int64_t l = 0; l < kNeoxLayers; ++l) {
    auto W = [&](const std::string& n) -> const std::vector<float>& {
      return m.w("gpt_neox.layers." + std::to_string(l) + "." + n);
    };
    Rows a = x;
    layerNormRef(a, W("input_layernorm.weight"), W("input_layernorm.bias"), eps);
    const Rows qkv = linearRef(a, W("attention.query_key_value.weight"),
                               o.bias ? W("attention.query_key_value.bias") : none, d, 3 * d, true);
    // qkv.view(L, H, 3·dh).chunk(3, −1): head h's q, k, v are consecutive
    Rows q = zeros(L, d), k = zeros(L, d), v = zeros(L, d);
    for (size_t i = 0; i < L; ++i)
      for (size_t h = 0; h < H; ++h)
        for (size_t e = 0; e < dh; ++e) {
          q[i][h * dh + e] = qkv[i][h * 3 * dh + e];
          k[i][h * dh + e] = qkv[i][h * 3 * dh + dh + e];
          v[i][h * dh + e] = qkv[i][h * 3 * dh + 2 * dh + e];
        }
    r.q_unrotated.push_back(q), r.k_unrotated.push_back(k);
    const Rows qr = ropeRef(q, dh, theta), kr = ropeRef(k, dh, theta);
    std::vector<Rows> maps;
    Rows out;
    attentionRefOpts(qr, kr, v, H, {}, maps, out);
    r.attention.push_back(maps), r.q.push_back(qr), r.k.push_back(kr), r.v.push_back(v);
    const Rows attn = linearRef(out, W("attention.dense.weight"), o.bias ? W("attention.dense.bias") : none, d, d, true);
    auto mlp = [&](Rows in) {
      layerNormRef(in, W("post_attention_layernorm.weight"), W("post_attention_layernorm.bias"), eps);
      Rows u = linearRef(in, W("mlp.dense_h_to_4h.weight"), W("mlp.dense_h_to_4h.bias"), d, ff, true);
      for (auto& row : u)
        for (double& z : row) z = act(z);
      return linearRef(u, W("mlp.dense_4h_to_h.weight"), W("mlp.dense_4h_to_h.bias"), ff, d, true);
    };
    if (o.parallel) {  // x = x + attn(ln1(x)) + mlp(ln2(x))
      const Rows f = mlp(x);
      addInto(x, attn);
      addInto(x, f);
    } else {  // x = x + attn(ln1(x)); x = x + mlp(ln2(x))
      addInto(x, attn);
      addInto(x, mlp(x));
    }
  }
  layerNormRef(x, m.w("gpt_neox.final_layer_norm.weight"), m.w("gpt_neox.final_layer_norm.bias"), eps);
  r.hidden = x;
  r.logits = linearRef(x, o.tied ? m.w("gpt_neox.embed_in.weight") : m.w("embed_out.weight"), none, d, V, true);
  return r;
}

void expectNeoxMatches(const NeoxCase& o) {
  test::TempDir dir;
  const TinyModel tm = neoxCheckpoint(dir.path, o);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const std::vector<int32_t> ids = {259, 116, 104, 101, 32, 99, 97, 116, 32, 115, 97, 116};
  const ModelRun run = runModelIds(*model, ids, {.top_k = 3});
  EXPECT_TRUE(run.rope && run.causal);
  // Partial rotary: the first int(8 · pct) dims of each head turn (0: all of them).
  EXPECT_EQ(run.rotary_dims, o.pct < 1.0 ? static_cast<int64_t>(8 * o.pct) : 0);
  ASSERT_EQ(run.rope_theta.size(), static_cast<size_t>(4 * o.pct));
  const ModelConfig& c = modelInfo(*model).config;
  EXPECT_EQ(c.parallel_residual, o.parallel);
  EXPECT_EQ(c.rope.theta, o.theta);
  EXPECT_EQ(c.rope.partial, o.pct);
  const NeoxReference ref = neoxRef(tm, ids, o);
  expectMatches(run, ref, 3);
  ASSERT_EQ(run.q_unrotated.size(), ref.q_unrotated.size());
  for (size_t l = 0; l < ref.q_unrotated.size(); ++l)
    for (size_t i = 0; i < ids.size(); ++i)
      for (size_t e = 0; e < ref.q_unrotated[l][i].size(); ++e) {
        ASSERT_NEAR(run.q_unrotated[l](i, e), ref.q_unrotated[l][i][e], mref::kModelTol) << "layer " << l;
        ASSERT_NEAR(run.k_unrotated[l](i, e), ref.k_unrotated[l][i][e], mref::kModelTol) << "layer " << l;
      }
}

TEST(GptNeoxFamily, PythiaConfigMatchesLoopReference) {
  // 4.x: rotary_pct / rotary_emb_base, parallel residual, attention biases, untied embed_out.
  expectNeoxMatches({});
}

TEST(GptNeoxFamily, Transformers5SequentialNoBiasTiedMatchesLoopReference) {
  // transformers 5: rope_parameters {rope_theta, partial_rotary_factor}; the
  // sequential residual; no attention biases; the head tied to embed_in; gelu_new.
  expectNeoxMatches({.v5 = true, .parallel = false, .bias = false, .tied = true, .act = "gelu_new", .theta = 80.0,
                     .pct = 0.25, .seed = 2});
}

TEST(GptNeoxFamily, FullRotaryBf16MatchesLoopReference) {
  // rotary_pct 1 (every dim turns) and BF16 weights converted while used.
  expectNeoxMatches({.pct = 1.0, .seed = 3, .dtype = DType::BF16});
}

// [SECTION] Generation with the KV cache = the full forward
// The parallel residual (the default) is in conformance_test.cpp; the sequential one here.
TEST(GptNeoxFamily, KvCacheGenerationMatchesFullForward) {
  test::TempDir dir;
  neoxCheckpoint(dir.path, {.parallel = false, .seed = 4});
  test::expectGenerationMatchesFullForward(dir.path, "the cat", 5);
}

TEST(GptNeoxFamily, RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = neoxCheckpoint(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::expectFieldRefused(tm, "rope_scaling", R"({"type": "dynamic", "factor": 2.0})",
                           {"config.json rope_scaling: field 'type' is 'dynamic', which is not implemented"});
  test::expectFieldRefused(tm, "rope_parameters", R"({"rope_type": "yarn", "rope_theta": 50.0, "factor": 2.0})",
                           {"config.json rope_parameters: field 'rope_type' is 'yarn'"});
  // The two generations' fields disagreeing: neither is silently preferred.
  test::expectFieldRefused(tm, "partial_rotary_factor", "0.25",
                           {"config.json: field 'rotary_pct' is 0.5, but partial_rotary_factor says 0.25"});
  test::expectFieldRefused(tm, "rope_theta", "10000.0",
                           {"config.json: field 'rotary_emb_base' is 50.0, but rope_theta says 10000.0"});
  // int(8 · 0.375) = 3 rotary dims: transformers' rotate_half cannot split it.
  test::expectFieldRefused(tm, "rotary_pct", "0.375",
                           {"config.json: field 'rotary_pct' gives int(head_dim · 0.375) = 3 rotary dimensions, an odd number"});
  test::expectFieldRefused(tm, "hidden_act", R"("quick_gelu")",
                           {"config.json: field 'hidden_act' is 'quick_gelu'"});
  test::expectFieldRefused(tm, "layer_types", R"(["full_attention", "sliding_attention"])",
                           {"config.json: field 'layer_types'", "which GPT-NeoX does not implement"});
  // Without attention biases the saved ones go unused: refused naming them.
  test::expectFieldRefused(tm, "attention_bias", "false", {"does not use", "attention.dense.bias"});
  // Tied: embed_out would go unused.
  test::expectFieldRefused(tm, "tie_word_embeddings", "true", {"does not use", "'embed_out.weight'"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

}  // namespace

TinyModel test::writeGptNeoxFixture(const std::filesystem::path& dir, const test::FamilyFixture& f) {
  return neoxCheckpoint(dir, {.seed = f.seed, .dtype = f.dtype});
}

// Rows of 256: d 256 (2 heads of 128, a quarter of each rotating), d_ff 512,
// matrices of σ 0.1 (scores of σ about 2.5); RoPE's base llama.cpp's 10,000
// (the converter writes none). Sequential: without attention biases too.
TinyModel test::writeGptNeoxGgufParent(const std::filesystem::path& dir, bool parallel) {
  const NeoxCase o{.parallel = parallel, .bias = parallel, .theta = 10000.0, .pct = 0.25, .d = 256, .ff = 512};
  std::vector<test::TensorSpec> t = test::gptNeoxTensors(kNeoxLayers, o.d, o.ff, o.bias, o.tied);
  for (test::TensorSpec& s : t)
    if (s.shape.size() > 1) s.scale = 0.1f;
  return test::writeCheckpoint(dir, neoxConfig(o), t);
}

}  // namespace attn
