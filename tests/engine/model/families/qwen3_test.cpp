// Qwen3 (engine/model/families/llama.cpp, the LLaMA family with QK-norm) against a plain-loop double reference
// written from transformers' models/qwen3/modeling_qwen3.py: tiny random checkpoints with the
// exact tensor names and shapes, config.json in both transformers
// generations, every layer's maps, q/k/v, the RoPE and QK-norm inputs, hidden states and top-k;
// and the fields it does not implement refused. The checks every family
// needs are in conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/engine/model/families/conformance.h"
#include "tests/engine/model/families/llama_like.h"
#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace fs = std::filesystem;

namespace attn::qwen3_test {
namespace {

using namespace llama_like;
using test::TensorSpec;

// [SECTION] Qwen3: QK-norm per head before RoPE, head_dim apart from the width
struct Qwen3Options {
  bool v5 = false;
  bool tied = false;
  bool bias = false;
  size_t head_dim = 6;  // 16 / 4 = 4 would be the width's; Qwen3 sets it apart
  uint64_t seed = 11;
  int64_t window = 0;  // use_sliding_window with this sliding_window (0: false)
  int64_t max_window_layers = 28;
  DType dtype = DType::F32;
};

// Qwen3Config: with use_sliding_window, layer l slides when l >= max_window_layers.
size_t qwen3Window(const Qwen3Options& o, size_t l) {
  return o.window > 0 && static_cast<int64_t>(l) >= o.max_window_layers ? static_cast<size_t>(o.window) : 0;
}

TinyModel writeQwen3(const fs::path& dir, const Qwen3Options& o) {
  json c = baseConfig("Qwen3ForCausalLM", "qwen3", o.v5, 50.0);
  c["head_dim"] = o.head_dim;
  c["tie_word_embeddings"] = o.tied;
  c["attention_bias"] = o.bias;
  c["use_sliding_window"] = o.window > 0;
  c["sliding_window"] = o.window > 0 ? json(o.window) : o.v5 ? json(nullptr) : json(4096);
  c["max_window_layers"] = o.max_window_layers;
  if (o.v5) {
    c["layer_types"] = json::array();
    for (size_t l = 0; l < kLayers; ++l) c["layer_types"].push_back(qwen3Window(o, l) > 0 ? "sliding_attention" : "full_attention");
  }
  const int64_t d = kD, ff = kFf, dh = static_cast<int64_t>(o.head_dim), qd = kHeads * dh, kvd = kKvHeads * dh;
  std::vector<TensorSpec> t = {{"model.embed_tokens.weight", {test::kTokenizerVocab, d}}};
  for (size_t l = 0; l < kLayers; ++l) {
    t.push_back({layer(l, "input_layernorm.weight"), {d}, 0.2f, 1.0f});
    attentionTensors(t, l, d, qd, kvd, o.bias);
    t.push_back({layer(l, "self_attn.q_norm.weight"), {dh}, 0.3f, 1.0f});
    t.push_back({layer(l, "self_attn.k_norm.weight"), {dh}, 0.3f, 1.0f});
    t.push_back({layer(l, "post_attention_layernorm.weight"), {d}, 0.2f, 1.0f});
    mlpTensors(t, l, d, ff);
  }
  t.push_back({"model.norm.weight", {d}, 0.2f, 1.0f});
  if (!o.tied) t.push_back({"lm_head.weight", {test::kTokenizerVocab, d}});
  return test::writeCheckpoint(dir, c, t, {.dtype = o.dtype, .seed = o.seed});
}

// Qwen3DecoderLayer: x += o_proj(attn(rope(q_norm(q)), rope(k_norm(k)), v)); x += mlp(post_norm(x)).
LikeReference qwen3Ref(const TinyModel& m, const Qwen3Options& o, const std::vector<int32_t>& ids) {
  const ModelConfig& c = m.config;
  const size_t d = kD, ff = kFf, H = kHeads, Hkv = kKvHeads, dh = static_cast<size_t>(c.head_dim);
  const std::vector<double> theta = ropeThetaRef(c);
  LikeReference r;
  Rows x = embedRef(m, ids, d);
  for (size_t l = 0; l < kLayers; ++l) {
    auto W = [&](const std::string& n) { return m.w(layer(l, n)); };
    auto B = [&](const std::string& n) { return c.qkv_bias ? W(n) : std::vector<float>{}; };
    Rows a = x;
    rmsNormRef(a, W("input_layernorm.weight"), c.rms_eps);
    const Rows q0 = linearRef(a, W("self_attn.q_proj.weight"), B("self_attn.q_proj.bias"), d, H * dh, true);
    const Rows k0 = linearRef(a, W("self_attn.k_proj.weight"), B("self_attn.k_proj.bias"), d, Hkv * dh, true);
    const Rows v = linearRef(a, W("self_attn.v_proj.weight"), B("self_attn.v_proj.bias"), d, Hkv * dh, true);
    const Rows qn = rmsNormHeadsRef(q0, dh, W("self_attn.q_norm.weight"), c.rms_eps);
    const Rows kn = rmsNormHeadsRef(k0, dh, W("self_attn.k_norm.weight"), c.rms_eps);
    const Rows q = ropeRef(qn, dh, theta), k = ropeRef(kn, dh, theta);
    std::vector<Rows> maps;
    Rows out;
    attentionRefOpts(q, k, v, H, {.kv_heads = Hkv, .window = qwen3Window(o, l)}, maps, out);
    r.attention.push_back(maps);
    r.q.push_back(q), r.k.push_back(repeatHeadsRef(k, H, Hkv, dh)), r.v.push_back(repeatHeadsRef(v, H, Hkv, dh));
    r.q_prenorm.push_back(q0), r.k_prenorm.push_back(repeatHeadsRef(k0, H, Hkv, dh));
    r.q_unrotated.push_back(qn), r.k_unrotated.push_back(repeatHeadsRef(kn, H, Hkv, dh));
    addInto(x, linearRef(out, W("self_attn.o_proj.weight"), B("self_attn.o_proj.bias"), H * dh, d, true));
    a = x;
    rmsNormRef(a, W("post_attention_layernorm.weight"), c.rms_eps);
    const Rows g = swigluRef(linearRef(a, W("mlp.gate_proj.weight"), {}, d, ff, true),
                             linearRef(a, W("mlp.up_proj.weight"), {}, d, ff, true));
    addInto(x, linearRef(g, W("mlp.down_proj.weight"), {}, ff, d, true));
  }
  rmsNormRef(x, m.w("model.norm.weight"), c.rms_eps);
  r.hidden = x;
  r.logits = lmHeadRef(m, x, d);
  return r;
}

void expectQwen3Matches(const Qwen3Options& o, const std::string& text) {
  test::TempDir dir;
  const TinyModel tm = writeQwen3(dir.path, o);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  EXPECT_EQ(modelInfo(*model).config.head_dim, static_cast<int64_t>(o.head_dim));
  EXPECT_TRUE(modelInfo(*model).config.qk_norm);
  const ModelRun run = runModel(*model, text, {.top_k = 3});
  ASSERT_GE(run.ids.size(), 3u);
  EXPECT_EQ(run.ids[0], 259) << "<s> first";
  EXPECT_EQ(run.d_head, static_cast<int64_t>(o.head_dim));
  EXPECT_EQ(run.kv_heads, static_cast<int64_t>(kKvHeads));
  EXPECT_TRUE(run.rope && run.causal);
  EXPECT_EQ(run.rotary_dims, 0);
  std::vector<int64_t> windows;
  for (size_t l = 0; l < kLayers; ++l) windows.push_back(static_cast<int64_t>(qwen3Window(o, l)));
  const bool none = static_cast<size_t>(std::count(windows.begin(), windows.end(), 0)) == kLayers;
  EXPECT_EQ(run.layer_window, none ? std::vector<int64_t>{} : windows);
  expectRunMatches(run, qwen3Ref(tm, o, run.ids), true);
}

TEST(Qwen3Family, Transformers4ConfigMatchesReference) {
  expectQwen3Matches({}, "the cat sat on the mat");
}

TEST(Qwen3Family, Transformers5TiedWithBiasesMatchesReference) {
  expectQwen3Matches({.v5 = true, .tied = true, .bias = true, .head_dim = 8, .seed = 12}, "then the hat");
  // The folder is in transformers 5's form.
  test::TempDir dir;
  writeQwen3(dir.path, {.v5 = true});
  const json config = json::parse(test::slurp(dir / "config.json"));
  EXPECT_FALSE(config.contains("rope_theta") || config.contains("torch_dtype"));
  EXPECT_EQ(modelInfo(*loadModel(filesOnDisk(dir.path.string()))).config.rope.theta, 50.0);
}

// use_sliding_window: the layers from max_window_layers on keep keys j with i − j < sliding_window,
// in 4.x's config and in transformers 5's layer_types.
TEST(Qwen3Family, SlidingWindowLayersBothConfigForms) {
  expectQwen3Matches({.seed = 14, .window = 3, .max_window_layers = 1}, "a b c d e f g");
  expectQwen3Matches({.v5 = true, .seed = 15, .window = 2, .max_window_layers = 0}, "a b c d e f g");
}

// The default (no window) is in conformance_test.cpp; a window sliding while decoding here.
TEST(Qwen3Family, KvCacheGenerationMatchesFullForward) {
  test::TempDir windowed;
  writeQwen3(windowed.path, {.v5 = true, .seed = 16, .window = 3, .max_window_layers = 1});
  test::expectGenerationMatchesFullForward(windowed.path, "the cat");
}

TEST(Qwen3Family, RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = writeQwen3(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::expectFieldRefused(tm, "layer_types", R"(["full_attention", "sliding_attention"])",
                           {"field 'layer_types' makes layer 1 sliding_attention, but Qwen3 has no sliding_window"});
  test::expectFieldRefused(tm, "rope_scaling", R"({"rope_type": "yarn", "factor": 4.0})",
                           {"rope_scaling: field 'rope_type' is 'yarn', which is not implemented"});
  test::expectFieldRefused(tm, "hidden_act", R"("gelu")", {"field 'hidden_act' is 'gelu'"});
  test::expectFieldRefused(tm, "mlp_bias", "true", {"field 'mlp_bias' is true, which Qwen3 does not implement"});
  test::expectFieldRefused(tm, "partial_rotary_factor", "0.5", {"field 'partial_rotary_factor' is 0.5"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

}  // namespace
}  // namespace attn::qwen3_test

namespace attn {

test::TinyModel test::writeQwen3Fixture(const fs::path& dir, const test::FamilyFixture& f) {
  return qwen3_test::writeQwen3(dir, {.seed = f.seed, .dtype = f.dtype});
}

}  // namespace attn
