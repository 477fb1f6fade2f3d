// OLMo 2 (engine/model/families/olmo2.cpp) against a plain-loop double reference
// written from transformers' models/olmo2/modeling_olmo2.py: tiny random checkpoints with the
// exact tensor names and shapes, config.json in both transformers
// generations, every layer's maps, q/k/v, the RoPE and QK-norm inputs, hidden states and top-k;
// and the fields it does not implement refused. The checks every family
// needs are in conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/engine/model/families/conformance.h"
#include "tests/engine/model/families/llama_like.h"
#include "tests/gguf_fixture.h"
#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace fs = std::filesystem;

namespace attn::olmo2_test {
namespace {

using namespace llama_like;
using test::TensorSpec;

// [SECTION] OLMo 2: norms after the sublayers, QK-norm over the whole q and k
struct Olmo2Options {
  bool v5 = false;
  bool tied = false;
  bool bias = false;
  uint64_t seed = 21;
  DType dtype = DType::F32;
  int64_t d = kD, ff = kFf;  // other sizes than the reference's (GGUF parents)
  double theta = 50.0;
};

TinyModel writeOlmo2(const fs::path& dir, const Olmo2Options& o) {
  json c = baseConfig("Olmo2ForCausalLM", "olmo2", o.v5, o.theta);
  c["tie_word_embeddings"] = o.tied;
  c["attention_bias"] = o.bias;
  c["pad_token_id"] = 1;
  c["hidden_size"] = o.d;
  c["intermediate_size"] = o.ff;
  const int64_t d = o.d, ff = o.ff, dh = d / kHeads, qd = kHeads * dh, kvd = kKvHeads * dh;
  std::vector<TensorSpec> t = {{"model.embed_tokens.weight", {test::kTokenizerVocab, d}}};
  for (size_t l = 0; l < kLayers; ++l) {
    attentionTensors(t, l, d, qd, kvd, o.bias);
    t.push_back({layer(l, "self_attn.q_norm.weight"), {qd}, 0.3f, 1.0f});
    t.push_back({layer(l, "self_attn.k_norm.weight"), {kvd}, 0.3f, 1.0f});
    t.push_back({layer(l, "post_attention_layernorm.weight"), {d}, 0.2f, 1.0f});
    mlpTensors(t, l, d, ff);
    t.push_back({layer(l, "post_feedforward_layernorm.weight"), {d}, 0.2f, 1.0f});
  }
  t.push_back({"model.norm.weight", {d}, 0.2f, 1.0f});
  if (!o.tied) t.push_back({"lm_head.weight", {test::kTokenizerVocab, d}});
  return test::writeCheckpoint(dir, c, t, {.dtype = o.dtype, .seed = o.seed});
}

// Olmo2DecoderLayer: x += post_attention_layernorm(attn(x)); x += post_feedforward_layernorm(mlp(x)),
// Olmo2Attention: q = q_norm(q_proj(x)) over all H·dh columns, k = k_norm(k_proj(x)) over Hkv·dh, then RoPE.
LikeReference olmo2Ref(const TinyModel& m, const std::vector<int32_t>& ids) {
  const ModelConfig& c = m.config;
  const size_t d = kD, ff = kFf, H = kHeads, Hkv = kKvHeads, dh = kD / kHeads;
  const std::vector<double> theta = ropeThetaRef(c);
  LikeReference r;
  Rows x = embedRef(m, ids, d);
  for (size_t l = 0; l < kLayers; ++l) {
    auto W = [&](const std::string& n) { return m.w(layer(l, n)); };
    auto B = [&](const std::string& n) { return c.qkv_bias ? W(n) : std::vector<float>{}; };
    const Rows q0 = linearRef(x, W("self_attn.q_proj.weight"), B("self_attn.q_proj.bias"), d, H * dh, true);
    const Rows k0 = linearRef(x, W("self_attn.k_proj.weight"), B("self_attn.k_proj.bias"), d, Hkv * dh, true);
    const Rows v = linearRef(x, W("self_attn.v_proj.weight"), B("self_attn.v_proj.bias"), d, Hkv * dh, true);
    Rows qn = q0, kn = k0;
    rmsNormRef(qn, W("self_attn.q_norm.weight"), c.rms_eps);
    rmsNormRef(kn, W("self_attn.k_norm.weight"), c.rms_eps);
    const Rows q = ropeRef(qn, dh, theta), k = ropeRef(kn, dh, theta);
    std::vector<Rows> maps;
    Rows out;
    attentionRefOpts(q, k, v, H, {.kv_heads = Hkv}, maps, out);
    r.attention.push_back(maps);
    r.q.push_back(q), r.k.push_back(repeatHeadsRef(k, H, Hkv, dh)), r.v.push_back(repeatHeadsRef(v, H, Hkv, dh));
    r.q_prenorm.push_back(q0), r.k_prenorm.push_back(repeatHeadsRef(k0, H, Hkv, dh));
    r.q_unrotated.push_back(qn), r.k_unrotated.push_back(repeatHeadsRef(kn, H, Hkv, dh));
    Rows attn = linearRef(out, W("self_attn.o_proj.weight"), B("self_attn.o_proj.bias"), H * dh, d, true);
    rmsNormRef(attn, W("post_attention_layernorm.weight"), c.rms_eps);
    addInto(x, attn);
    const Rows g = swigluRef(linearRef(x, W("mlp.gate_proj.weight"), {}, d, ff, true),
                             linearRef(x, W("mlp.up_proj.weight"), {}, d, ff, true));
    Rows mlp = linearRef(g, W("mlp.down_proj.weight"), {}, ff, d, true);
    rmsNormRef(mlp, W("post_feedforward_layernorm.weight"), c.rms_eps);
    addInto(x, mlp);
  }
  rmsNormRef(x, m.w("model.norm.weight"), c.rms_eps);
  r.hidden = x;
  r.logits = lmHeadRef(m, x, d);
  return r;
}

void expectOlmo2Matches(const Olmo2Options& o, const std::string& text) {
  test::TempDir dir;
  const TinyModel tm = writeOlmo2(dir.path, o);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  EXPECT_TRUE(modelInfo(*model).config.qk_norm);
  const ModelRun run = runModel(*model, text, {.top_k = 3});
  ASSERT_GE(run.ids.size(), 3u);
  EXPECT_EQ(run.ids[0], 259) << "<s> first";
  EXPECT_EQ(run.kv_heads, static_cast<int64_t>(kKvHeads));
  EXPECT_TRUE(run.rope && run.causal);
  expectRunMatches(run, olmo2Ref(tm, run.ids), true);
}

TEST(Olmo2Family, Transformers4ConfigMatchesReference) {
  expectOlmo2Matches({}, "the cat sat on the mat");
}

TEST(Olmo2Family, Transformers5TiedWithBiasesMatchesReference) {
  expectOlmo2Matches({.v5 = true, .tied = true, .bias = true, .seed = 22}, "then the hat");
}

TEST(Olmo2Family, RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = writeOlmo2(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::expectFieldRefused(tm, "clip_qkv", "8.0", {"field 'clip_qkv' is 8.0, which OLMo 2 does not implement"});
  test::expectFieldRefused(tm, "rope_scaling", R"({"rope_type": "dynamic", "factor": 2.0})",
                           {"rope_scaling: field 'rope_type' is 'dynamic', which is not implemented"});
  test::expectFieldRefused(tm, "hidden_act", R"("relu")", {"field 'hidden_act' is 'relu'"});
  test::expectFieldRefused(tm, "sliding_window", "4", {"field 'sliding_window' is 4, which OLMo 2 does not implement"});
  test::expectFieldRefused(tm, "layer_types", R"(["sliding_attention", "full_attention"])",
                           {"field 'layer_types'", "which OLMo 2 does not implement"});
  test::expectFieldRefused(tm, "mlp_bias", "true", {"field 'mlp_bias' is true, which OLMo 2 does not implement"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

}  // namespace
}  // namespace attn::olmo2_test

namespace attn {

test::TinyModel test::writeOlmo2Fixture(const fs::path& dir, const test::FamilyFixture& f) {
  return olmo2_test::writeOlmo2(dir, {.seed = f.seed, .dtype = f.dtype});
}

// Rows of 256: d 256 (4 heads of 64), d_ff 512.
test::TinyModel test::writeOlmo2GgufParent(const fs::path& dir) {
  return olmo2_test::writeOlmo2(dir, {.d = 256, .ff = 512, .theta = 500.0});
}

}  // namespace attn
