// Gemma, Gemma 2 and Gemma 3 (text) against a plain-loop double-precision
// reference written from transformers' modeling_gemma.py, modeling_gemma2.py
// and modeling_gemma3.py: tiny checkpoints in the exact tensor names and
// config.json of both transformers generations, every layer's maps, q/k/v
// (before and after RoPE, before the QK-norm), hidden states and top-k;
// generation with a KV cache while the windows slide; and each config value
// the engine does not implement refused in one line. The checks every family
// needs are in conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/engine/model/families/conformance.h"
#include "tests/gguf_fixture.h"
#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace fs = std::filesystem;

namespace attn {
namespace {

using namespace mref;
using test::TinyModel;

// [SECTION] Tiny checkpoints
// What a test knows about its checkpoint, independently of the engine's parser.
struct GemmaSpec {
  int gen = 1;          // Gemma 1, 2 or 3
  bool v5 = false;      // config.json as transformers 5 writes it (rope_parameters, dtype, layer_types)
  int64_t layers = 2, heads = 4, kv_heads = 2, head_dim = 8, d = 16, ff = 24;  // head_dim · heads ≠ d
  bool tied = true;
  int64_t window = 3;
  double query_pre_attn_scalar = 16;
  double attn_cap = 0, final_cap = 0;  // written as null when 0 (Gemma 2/3)
  double theta = 50, local_theta = 20;  // small bases: the tiny heads' frequencies turn visibly
  double global_linear = 0;             // Gemma 3: linear RoPE factor on global layers (0: none)
  int64_t pattern = 0;                  // Gemma 3 4.x: sliding_window_pattern (0: not written)
  // The kind of each layer, as the test means it: written as layer_types (v5),
  // or what the 4.x rules give (Gemma 2: even layers sliding; Gemma 3: (l + 1) % pattern ≠ 0).
  std::vector<bool> sliding;
  DType dtype = DType::F32;
  uint64_t seed = 1;
  float scale = 0.4f;  // the matrices' spread
};

nlohmann::json gemmaConfig(const GemmaSpec& s) {
  static const char* arch[] = {"", "GemmaForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM"};
  static const char* type[] = {"", "gemma", "gemma2", "gemma3_text"};
  nlohmann::json j = {{"architectures", {arch[s.gen]}},
                      {"model_type", type[s.gen]},
                      {"num_hidden_layers", s.layers},
                      {"num_attention_heads", s.heads},
                      {"num_key_value_heads", s.kv_heads},
                      {"head_dim", s.head_dim},
                      {"hidden_size", s.d},
                      {"intermediate_size", s.ff},
                      {"max_position_embeddings", 64},
                      {"vocab_size", test::kTokenizerVocab},
                      {"rms_norm_eps", 1e-6},
                      {"attention_bias", false},
                      {"attention_dropout", 0.0},
                      {"tie_word_embeddings", s.tied},
                      {"bos_token_id", 259},
                      {"eos_token_id", 260},
                      {"pad_token_id", 0},
                      {"initializer_range", 0.02},
                      {"use_cache", true}};
  j[s.v5 ? "dtype" : "torch_dtype"] = "float32";
  if (s.gen == 1) {
    // Gemma 1.0 configs: hidden_act "gelu", and hidden_activation since 4.39; transformers 5: hidden_act only.
    if (s.v5) j["hidden_act"] = "gelu_pytorch_tanh";
    else j["hidden_act"] = "gelu", j["hidden_activation"] = "gelu_pytorch_tanh";
  } else {
    j["hidden_activation"] = "gelu_pytorch_tanh";
    if (!s.v5) j["hidden_act"] = "gelu_pytorch_tanh";  // 4.x Gemma 2 configs carry both
    j["query_pre_attn_scalar"] = s.query_pre_attn_scalar;
    j["sliding_window"] = s.window;
    j["attn_logit_softcapping"] = s.attn_cap > 0 ? nlohmann::json(s.attn_cap) : nlohmann::json(nullptr);
    j["final_logit_softcapping"] = s.final_cap > 0 ? nlohmann::json(s.final_cap) : nlohmann::json(nullptr);
    if (!s.v5) j["cache_implementation"] = "hybrid";
  }
  nlohmann::json global = {{"rope_type", "default"}, {"rope_theta", s.theta}};
  if (s.global_linear > 0) global = {{"rope_type", "linear"}, {"rope_theta", s.theta}, {"factor", s.global_linear}};
  if (s.v5) {
    if (s.gen >= 2) {
      nlohmann::json types = nlohmann::json::array();
      for (const bool sl : s.sliding) types.push_back(sl ? "sliding_attention" : "full_attention");
      j["layer_types"] = types;
    }
    if (s.gen == 3)
      j["rope_parameters"] = {{"full_attention", global},
                              {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", s.local_theta}}}};
    else
      j["rope_parameters"] = global;
    j["use_bidirectional_attention"] = nullptr;
  } else {
    j["rope_theta"] = s.theta;
    j["rope_scaling"] = s.global_linear > 0 ? nlohmann::json{{"rope_type", "linear"}, {"factor", s.global_linear}}
                                            : nlohmann::json(nullptr);
    if (s.gen == 3) {
      j["rope_local_base_freq"] = s.local_theta;
      if (s.pattern > 0) j["sliding_window_pattern"] = s.pattern;
    }
  }
  return j;
}

// The tensors as Gemma*ForCausalLM saves them ("model." + the base model's names; lm_head when untied).
std::vector<test::TensorSpec> gemmaTensors(const GemmaSpec& s) {
  const int64_t d = s.d, ff = s.ff, qd = s.heads * s.head_dim, kvd = s.kv_heads * s.head_dim;
  std::vector<test::TensorSpec> t = {{"model.embed_tokens.weight", {test::kTokenizerVocab, d}}};
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.push_back({p + "input_layernorm.weight", {d}});
    t.push_back({p + "self_attn.q_proj.weight", {qd, d}, s.scale});
    t.push_back({p + "self_attn.k_proj.weight", {kvd, d}, s.scale});
    t.push_back({p + "self_attn.v_proj.weight", {kvd, d}, s.scale});
    t.push_back({p + "self_attn.o_proj.weight", {d, qd}, s.scale});
    if (s.gen == 3) {
      t.push_back({p + "self_attn.q_norm.weight", {s.head_dim}});
      t.push_back({p + "self_attn.k_norm.weight", {s.head_dim}});
    }
    t.push_back({p + "post_attention_layernorm.weight", {d}});
    if (s.gen >= 2) {
      t.push_back({p + "pre_feedforward_layernorm.weight", {d}});
      t.push_back({p + "post_feedforward_layernorm.weight", {d}});
    }
    t.push_back({p + "mlp.gate_proj.weight", {ff, d}, s.scale});
    t.push_back({p + "mlp.up_proj.weight", {ff, d}, s.scale});
    t.push_back({p + "mlp.down_proj.weight", {d, ff}, s.scale});
  }
  t.push_back({"model.norm.weight", {d}});
  if (!s.tied) t.push_back({"lm_head.weight", {test::kTokenizerVocab, d}});
  return t;
}

TinyModel writeGemma(const fs::path& dir, const GemmaSpec& s) {
  return test::writeCheckpoint(dir, gemmaConfig(s), gemmaTensors(s), {.dtype = s.dtype, .seed = s.seed});
}

// [SECTION] The reference, from transformers' modelling code
struct GemmaReference : Reference {
  std::vector<Rows> q_unrotated, k_unrotated, q_prenorm, k_prenorm;
};

// Gemma3RMSNorm(head_dim) on each head's columns: x / √(mean(x²) + ε) · (1 + w).
void gemmaHeadNormRef(Rows& x, size_t heads, size_t dh, const std::vector<float>& w, double eps) {
  for (auto& row : x)
    for (size_t h = 0; h < heads; ++h) {
      Rows part = {std::vector<double>(row.begin() + static_cast<long>(h * dh), row.begin() + static_cast<long>((h + 1) * dh))};
      rmsNormRef(part, w, eps, 1.0);
      std::copy(part[0].begin(), part[0].end(), row.begin() + static_cast<long>(h * dh));
    }
}

RopeSpec gemmaRopeRef(const GemmaSpec& s, bool sliding) {
  RopeSpec r;
  if (s.gen == 3 && sliding) {
    r.theta = s.local_theta;  // the local rotary embedding: rope_local_base_freq, rope_type default
    return r;
  }
  r.theta = s.theta;
  if (s.global_linear > 0) r.type = "linear", r.factor = s.global_linear;
  return r;
}

GemmaReference gemmaRef(const TinyModel& m, const GemmaSpec& s, const std::vector<int32_t>& ids) {
  const size_t L = ids.size(), d = static_cast<size_t>(s.d), ff = static_cast<size_t>(s.ff);
  const size_t H = static_cast<size_t>(s.heads), Hkv = static_cast<size_t>(s.kv_heads), dh = static_cast<size_t>(s.head_dim);
  const double eps = 1e-6;
  GemmaReference r;
  // hidden = embed_tokens(ids) · hidden_size**0.5 (GemmaModel / Gemma2Model / Gemma3TextScaledWordEmbedding)
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e)
      x[i][e] = m.w("model.embed_tokens.weight")[static_cast<size_t>(ids[i]) * d + e] * std::sqrt(static_cast<double>(d));
  for (size_t l = 0; l < static_cast<size_t>(s.layers); ++l) {
    auto W = [&](const std::string& n) { return m.w("model.layers." + std::to_string(l) + "." + n); };
    const bool sliding = s.gen >= 2 && s.sliding[l];
    Rows a = x;
    rmsNormRef(a, W("input_layernorm.weight"), eps, 1.0);
    Rows q = linearRef(a, W("self_attn.q_proj.weight"), {}, d, H * dh, true);
    Rows k = linearRef(a, W("self_attn.k_proj.weight"), {}, d, Hkv * dh, true);
    const Rows v = linearRef(a, W("self_attn.v_proj.weight"), {}, d, Hkv * dh, true);
    if (s.gen == 3) {  // Gemma3Attention: q_norm, k_norm before RoPE
      r.q_prenorm.push_back(q), r.k_prenorm.push_back(repeatHeadsRef(k, H, Hkv, dh));
      gemmaHeadNormRef(q, H, dh, W("self_attn.q_norm.weight"), eps);
      gemmaHeadNormRef(k, Hkv, dh, W("self_attn.k_norm.weight"), eps);
    }
    r.q_unrotated.push_back(q), r.k_unrotated.push_back(repeatHeadsRef(k, H, Hkv, dh));
    const std::vector<double> theta = ropeThetaRef(gemmaRopeRef(s, sliding), s.head_dim);
    const Rows qr = ropeRef(q, dh, theta), kr = ropeRef(k, dh, theta);
    // eager_attention_forward: (q kᵀ) · scaling, soft-cap, + mask, softmax
    AttnOpts o;
    o.kv_heads = Hkv;
    o.window = sliding ? static_cast<size_t>(s.window) : 0;
    o.scale = s.gen == 1 ? 1.0 / std::sqrt(static_cast<double>(dh)) : std::pow(s.query_pre_attn_scalar, -0.5);
    o.softcap = s.gen >= 2 ? s.attn_cap : 0.0;
    std::vector<Rows> maps;
    Rows out;
    attentionRefOpts(qr, kr, v, H, o, maps, out);
    r.attention.push_back(maps), r.q.push_back(qr);
    r.k.push_back(repeatHeadsRef(kr, H, Hkv, dh)), r.v.push_back(repeatHeadsRef(v, H, Hkv, dh));
    Rows attn = linearRef(out, W("self_attn.o_proj.weight"), {}, H * dh, d, true);
    auto mlp = [&](const Rows& in) {
      Rows g = linearRef(in, W("mlp.gate_proj.weight"), {}, d, ff, true);
      const Rows u = linearRef(in, W("mlp.up_proj.weight"), {}, d, ff, true);
      for (size_t i = 0; i < L; ++i)
        for (size_t e = 0; e < ff; ++e) g[i][e] = geluTanh(g[i][e]) * u[i][e];
      return linearRef(g, W("mlp.down_proj.weight"), {}, ff, d, true);
    };
    if (s.gen == 1) {  // LlamaDecoderLayer with GemmaRMSNorm
      addInto(x, attn);
      a = x;
      rmsNormRef(a, W("post_attention_layernorm.weight"), eps, 1.0);
      addInto(x, mlp(a));
    } else {  // Gemma2DecoderLayer / Gemma3DecoderLayer: the sandwich norms
      rmsNormRef(attn, W("post_attention_layernorm.weight"), eps, 1.0);
      addInto(x, attn);
      a = x;
      rmsNormRef(a, W("pre_feedforward_layernorm.weight"), eps, 1.0);
      Rows f = mlp(a);
      rmsNormRef(f, W("post_feedforward_layernorm.weight"), eps, 1.0);
      addInto(x, f);
    }
  }
  rmsNormRef(x, m.w("model.norm.weight"), eps, 1.0);
  r.hidden = x;
  // logits = lm_head(hidden) (tied: embed_tokens), then final_logit_softcapping
  const std::vector<float>& head = s.tied ? m.w("model.embed_tokens.weight") : m.w("lm_head.weight");
  r.logits = linearRef(x, head, {}, d, static_cast<size_t>(test::kTokenizerVocab), true);
  if (s.gen >= 2 && s.final_cap > 0)
    for (auto& row : r.logits)
      for (double& z : row) z = s.final_cap * std::tanh(z / s.final_cap);
  return r;
}

// [SECTION] The engine against the reference
const std::vector<int32_t> kGemmaIds = {259, 84, 104, 101, 32, 99, 97, 116, 32, 115, 97, 116};  // 12 tokens: windows of 3 bite

// `out`, when given, receives the run for further checks.
void expectGemmaMatches(const GemmaSpec& s, ModelRun* out = nullptr) {
  test::TempDir dir;
  const TinyModel tm = writeGemma(dir.path, s);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModelIds(*model, kGemmaIds, {.top_k = 3});
  if (out) *out = run;
  const GemmaReference ref = gemmaRef(tm, s, kGemmaIds);
  EXPECT_TRUE(run.rope && run.causal);
  EXPECT_EQ(run.kv_heads, s.kv_heads);
  EXPECT_EQ(run.d_head, s.head_dim);
  expectMatches(run, ref, 3);
  expectRows(run.q_unrotated, ref.q_unrotated, "q before RoPE");
  expectRows(run.k_unrotated, ref.k_unrotated, "k before RoPE");
  expectRows(run.q_prenorm, ref.q_prenorm, "q before the QK-norm");
  expectRows(run.k_prenorm, ref.k_prenorm, "k before the QK-norm");
  // The views' fields: each layer's window, its RoPE frequencies, the soft-cap.
  std::vector<int64_t> windows;
  if (s.gen >= 2)
    for (const bool sl : s.sliding) windows.push_back(sl ? s.window : 0);
  EXPECT_EQ(run.layer_window, windows);
  EXPECT_EQ(run.softcap, s.gen >= 2 ? s.attn_cap : 0.0);
  const std::vector<double> global = ropeThetaRef(gemmaRopeRef(s, false), s.head_dim);
  ASSERT_EQ(run.rope_theta.size(), global.size());
  for (size_t i = 0; i < global.size(); ++i) EXPECT_NEAR(run.rope_theta[i], global[i], 1e-12);
  if (s.gen == 3) {
    ASSERT_EQ(run.layer_rope_theta.size(), static_cast<size_t>(s.layers));
    for (size_t l = 0; l < run.layer_rope_theta.size(); ++l) {
      const std::vector<double> want = ropeThetaRef(gemmaRopeRef(s, s.sliding[l]), s.head_dim);
      ASSERT_EQ(run.layer_rope_theta[l].size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(run.layer_rope_theta[l][i], want[i], 1e-12) << "layer " << l;
    }
  } else {
    EXPECT_TRUE(run.layer_rope_theta.empty());
  }
}

TEST(GemmaFamily, GemmaTransformers4Config) {
  // hidden_act "gelu" beside hidden_activation "gelu_pytorch_tanh", as Gemma 1.0 configs say it; tied head.
  expectGemmaMatches({.gen = 1});
}

TEST(GemmaFamily, GemmaTransformers5ConfigMultiQueryUntiedBf16) {
  expectGemmaMatches({.gen = 1, .v5 = true, .kv_heads = 1, .tied = false, .theta = 80, .dtype = DType::BF16, .seed = 2});
}

TEST(GemmaFamily, Gemma2Transformers4EvenLayersSlideWithSoftCaps) {
  ModelRun run;
  expectGemmaMatches({.gen = 2, .layers = 3, .attn_cap = 1.5, .final_cap = 2.0, .sliding = {true, false, true}, .seed = 3},
                     &run);
  ASSERT_EQ(run.attention.size(), 3u);
  // Layer 0 slides (keys 9 … 11 for query 11), layer 1 sees every key before.
  EXPECT_EQ(run.attention[0][0](11, 8), 0.0f);
  EXPECT_GT(run.attention[0][0](11, 9), 0.0f);
  EXPECT_GT(run.attention[1][0](11, 0), 0.0f);
}

TEST(GemmaFamily, Gemma2Transformers5LayerTypesBf16) {
  // layer_types that are not the 4.x alternation, a different query_pre_attn_scalar, an untied head.
  expectGemmaMatches({.gen = 2,
                      .v5 = true,
                      .layers = 3,
                      .kv_heads = 4,
                      .tied = false,
                      .query_pre_attn_scalar = 8,
                      .attn_cap = 3.0,
                      .final_cap = 1.0,
                      .sliding = {false, true, true},
                      .dtype = DType::BF16,
                      .seed = 4});
}

TEST(GemmaFamily, Gemma3Transformers4PatternLocalBaseLinearGlobal) {
  // sliding_window_pattern 3 over 4 layers: 0, 1 and 3 slide; global layers' RoPE scaled (linear ×2), local base 20.
  expectGemmaMatches({.gen = 3,
                      .layers = 4,
                      .global_linear = 2.0,
                      .pattern = 3,
                      .sliding = {true, true, false, true},
                      .seed = 5});
}

TEST(GemmaFamily, Gemma3Transformers5NestedRopeParametersAndSoftCap) {
  // rope_parameters per layer type, layer_types, and Gemma 3 with the soft-caps set (they are null in released configs).
  expectGemmaMatches({.gen = 3,
                      .v5 = true,
                      .layers = 4,
                      .kv_heads = 1,
                      .attn_cap = 2.0,
                      .final_cap = 2.5,
                      .global_linear = 4.0,
                      .sliding = {false, true, true, false},
                      .seed = 6});
}

TEST(GemmaFamily, Gemma3DefaultPatternIsFiveSlidingToOneGlobal) {
  // No sliding_window_pattern and no layer_types: transformers' default 6.
  expectGemmaMatches({.gen = 3, .layers = 7, .sliding = {true, true, true, true, true, false, true}, .seed = 7});
}

// transformers' defaults where a config leaves a field out, and null as "none".
TEST(GemmaFamily, DefaultsOfAbsentFields) {
  GemmaSpec s{.gen = 2, .layers = 2, .sliding = {true, false}};
  nlohmann::json j = gemmaConfig(s);
  for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar", "sliding_window",
                          "head_dim", "tie_word_embeddings"})
    j.erase(key);
  j["head_dim"] = 256;  // head_dim's default is 256 whatever the width: written back to keep sizes apart
  ModelConfig c = parseConfig(j.dump(), "config.json");
  EXPECT_EQ(c.attn_softcap, 50.0);
  EXPECT_EQ(c.final_softcap, 30.0);
  EXPECT_DOUBLE_EQ(c.score_scale, 1.0 / 16.0);
  EXPECT_EQ(c.layer_window, (std::vector<int64_t>{4096, 0}));
  EXPECT_TRUE(c.tie_embeddings);
  j.erase("head_dim");
  EXPECT_EQ(parseConfig(j.dump(), "config.json").head_dim, 256);
  j["attn_logit_softcapping"] = nullptr, j["final_logit_softcapping"] = nullptr;
  c = parseConfig(j.dump(), "config.json");
  EXPECT_EQ(c.attn_softcap, 0.0);
  EXPECT_EQ(c.final_softcap, 0.0);
  // Gemma 3: soft-caps none by default, rope_theta 10⁶ and the local base 10⁴.
  GemmaSpec s3{.gen = 3, .layers = 6, .sliding = {true, true, true, true, true, false}};
  nlohmann::json j3 = gemmaConfig(s3);
  for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping", "rope_theta", "rope_local_base_freq"})
    j3.erase(key);
  c = parseConfig(j3.dump(), "config.json");
  EXPECT_EQ(c.attn_softcap, 0.0);
  EXPECT_EQ(c.final_softcap, 0.0);
  EXPECT_EQ(c.rope.theta, 1e6);
  EXPECT_EQ(c.rope_local.theta, 1e4);
  EXPECT_EQ(c.layer_window, (std::vector<int64_t>{3, 3, 3, 3, 3, 0}));
}

// Each generation's default is in conformance_test.cpp; here the windows slide while decoding
// (a prompt of 4 tokens, window 3, 8 new).
TEST(GemmaFamily, KvCacheGenerationMatchesFullForward) {
  for (const GemmaSpec& s :
       {GemmaSpec{.gen = 2, .layers = 3, .attn_cap = 1.5, .final_cap = 2.0, .sliding = {true, false, true}, .seed = 9},
        GemmaSpec{.gen = 3, .v5 = true, .layers = 4, .kv_heads = 1, .global_linear = 2.0,
                  .sliding = {true, true, false, true}, .seed = 10}}) {
    test::TempDir dir;
    writeGemma(dir.path, s);
    test::expectGenerationMatchesFullForward(dir.path, "a cat", 8);
  }
}

TEST(GemmaErrors, GemmaRefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = writeGemma(dir.path, {.gen = 1});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::expectFieldRefused(tm, "hidden_act", R"("relu")", {"config.json", "field 'hidden_act' is 'relu'"});
  test::expectFieldRefused(tm, "hidden_activation", R"("gelu")", {"config.json", "field 'hidden_activation' is 'gelu'"});
  test::expectFieldRefused(tm, "attention_bias", "true", {"config.json", "field 'attention_bias' is true"});
  // Gemma 2's and 3's fields mean nothing to Gemma: refused, never ignored.
  test::expectFieldRefused(tm, "attn_logit_softcapping", "50.0",
                           {"config.json", "field 'attn_logit_softcapping' is 50.0, which Gemma does not implement"});
  test::expectFieldRefused(tm, "final_logit_softcapping", "30.0", {"config.json", "field 'final_logit_softcapping' is 30.0"});
  test::expectFieldRefused(tm, "query_pre_attn_scalar", "256", {"config.json", "field 'query_pre_attn_scalar' is 256"});
  test::expectFieldRefused(tm, "sliding_window", "4096", {"config.json", "field 'sliding_window' is 4096"});
  test::expectFieldRefused(tm, "layer_types", R"(["sliding_attention", "full_attention"])", {"config.json", "field 'layer_types'"});
  test::expectFieldRefused(tm, "rope_scaling", R"({"rope_type": "yarn", "factor": 4.0})",
                           {"config.json rope_scaling: field 'rope_type' is 'yarn', which is not implemented"});
  test::expectFieldRefused(tm, "partial_rotary_factor", "0.5", {"config.json", "field 'partial_rotary_factor' is 0.5"});
  test::expectFieldRefused(tm, "head_dim", "7", {"config.json", "field 'head_dim' must be even"});
  // Tied: a saved lm_head.weight would go unused.
  test::expectFieldRefused(tm, "tie_word_embeddings", "false", {"lm_head.weight"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

TEST(GemmaErrors, Gemma2RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = writeGemma(dir.path, {.gen = 2, .layers = 3, .attn_cap = 50.0, .final_cap = 30.0,
                                             .sliding = {true, false, true}});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::expectFieldRefused(tm, "hidden_activation", R"("silu")", {"config.json", "field 'hidden_activation' is 'silu'"});
  test::expectFieldRefused(tm, "attention_bias", "true", {"config.json", "field 'attention_bias' is true"});
  test::expectFieldRefused(tm, "attn_logit_softcapping", "-1", {"config.json", "field 'attn_logit_softcapping' must be a number"});
  test::expectFieldRefused(tm, "final_logit_softcapping", "0", {"config.json", "field 'final_logit_softcapping' must be a number"});
  test::expectFieldRefused(tm, "sliding_window", "null", {"config.json", "field 'sliding_window' is null"});
  test::expectFieldRefused(tm, "layer_types", R"(["sliding_attention", "chunked_attention", "full_attention"])",
                           {"config.json", "field 'layer_types' has \"chunked_attention\""});
  test::expectFieldRefused(tm, "layer_types", R"(["sliding_attention"])", {"config.json", "field 'layer_types' must list one type per layer (3)"});
  test::expectFieldRefused(tm, "sliding_window_pattern", "6", {"config.json", "field 'sliding_window_pattern' is 6, which Gemma 2 does not implement"});
  test::expectFieldRefused(tm, "rope_local_base_freq", "10000", {"config.json", "field 'rope_local_base_freq'", "Gemma 2 does not implement"});
  test::expectFieldRefused(tm, "rope_parameters",
                           R"({"full_attention": {"rope_type": "default", "rope_theta": 50.0}, "sliding_attention": {"rope_type": "default", "rope_theta": 10.0}})",
                           {"config.json", "field 'rope_parameters' gives sliding_attention layers their own RoPE"});
  test::expectFieldRefused(tm, "rope_parameters", R"({"rope_type": "dynamic", "rope_theta": 50.0, "factor": 2.0})",
                           {"config.json rope_parameters: field 'rope_type' is 'dynamic', which is not implemented"});
  test::expectFieldRefused(tm, "use_qk_norm", "true", {"config.json", "field 'use_qk_norm' is true, which Gemma 2 does not implement"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

TEST(GemmaErrors, Gemma3RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = writeGemma(dir.path, {.gen = 3, .v5 = true, .layers = 4, .sliding = {true, true, false, true}});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::expectFieldRefused(tm, "rope_parameters", R"({"rope_type": "default", "rope_theta": 1000000.0})",
                           {"config.json", "field 'rope_parameters' must give an entry per layer type"});
  test::expectFieldRefused(tm, "rope_parameters", R"({"full_attention": {"rope_type": "default", "rope_theta": 50.0}})",
                           {"config.json", "field 'rope_parameters' has no entry for the layer type 'sliding_attention'"});
  test::expectFieldRefused(tm, "rope_parameters",
                           R"({"full_attention": {"rope_type": "default", "rope_theta": 50.0}, "sliding_attention": {"rope_type": "yarn", "rope_theta": 10.0, "factor": 2.0}})",
                           {"config.json rope_parameters.sliding_attention: field 'rope_type' is 'yarn', which is not implemented"});
  test::expectFieldRefused(tm, "hidden_activation", R"("gelu")", {"config.json", "field 'hidden_activation' is 'gelu'"});
  test::expectFieldRefused(tm, "attention_bias", "true", {"config.json", "field 'attention_bias' is true"});
  test::expectFieldRefused(tm, "sliding_window", "null", {"config.json", "field 'sliding_window' is null"});
  test::expectFieldRefused(tm, "attn_logit_softcapping", R"("big")", {"config.json", "field 'attn_logit_softcapping' must be a number"});
  test::expectFieldRefused(tm, "sliding_window_pattern", "0", {"config.json", "field 'sliding_window_pattern' must be an integer"});
  // Gemma3ForConditionalGeneration (the vision-language model) is not a family here.
  test::expectFieldRefused(tm, "architectures", R"(["Gemma3ForConditionalGeneration"])",
                           {"config.json", "architecture 'Gemma3ForConditionalGeneration' is not supported", "Gemma3ForCausalLM"});
  test::expectFieldRefused(tm, "model_type", R"("gemma3")", {"config.json", "field 'model_type' is 'gemma3'"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

}  // namespace

TinyModel test::writeGemmaFixture(const fs::path& dir, const test::FamilyFixture& f, int generation) {
  return writeGemma(dir, {.gen = generation, .dtype = f.dtype, .seed = f.seed});
}

// What llama.cpp's converter keeps and its loader hard-codes: the RoPE base
// 10000 (Gemma, Gemma 2) and 10000 on Gemma 3's sliding layers, the score
// scale 1/√head_dim, soft-caps on Gemma 2, Gemma 3's pattern of five sliding
// layers to one global (six layers); a window of 3 tokens that slides.
TinyModel test::writeGemmaGgufParent(const fs::path& dir, int generation) {
  GemmaSpec s{.gen = generation, .layers = generation == 3 ? 6 : 2, .head_dim = 64, .d = 256, .ff = 512,
              .query_pre_attn_scalar = 64, .theta = generation == 3 ? 1000.0 : 10000.0, .local_theta = 10000};
  if (generation == 2) s.attn_cap = 2.0, s.final_cap = 3.0;
  s.scale = 0.05f;  // about 1/√d: scores of order one
  return writeGemma(dir, s);
}

}  // namespace attn
