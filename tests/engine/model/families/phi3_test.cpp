// Phi-3 (engine/model/families/phi3.cpp) against a plain-loop double reference
// written from transformers' models/phi3/modeling_phi3.py: tiny random checkpoints with the
// exact tensor names and shapes, config.json in both transformers
// generations, every layer's maps, q/k/v, the RoPE inputs, hidden states and top-k;
// and the fields it does not implement refused. The checks every family
// needs are in conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/engine/model/families/conformance.h"
#include "tests/engine/model/families/llama_like.h"
#include "tests/engine_reference.h"
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

namespace attn::phi3_test {
namespace {

using namespace llama_like;
using test::TensorSpec;

// [SECTION] Phi-3: fused qkv and gate-up, partial rotary, the window on every layer
struct Phi3Options {
  bool v5 = false;
  bool tied = false;
  double partial = 1.0;
  int64_t window = 0;  // sliding_window (0: null)
  size_t kv_heads = kKvHeads;
  uint64_t seed = 31;
  DType dtype = DType::F32;
  int64_t d = 32, ff = kFf;  // other sizes than the reference's (GGUF parents)
  float scale = 0.4f;        // the matrices' spread
};

TinyModel writePhi3(const fs::path& dir, const Phi3Options& o) {
  // head_dim 8 (d 32 / 4 heads): partial 0.5 rotates 4 of the 8, two pairs.
  const int64_t d = o.d, ff = o.ff, dh = d / kHeads, Hkv = static_cast<int64_t>(o.kv_heads), qd = kHeads * dh,
                kvd = Hkv * dh;
  json c = baseConfig("Phi3ForCausalLM", "phi3", o.v5, 50.0);
  c["hidden_size"] = d;
  c["intermediate_size"] = ff;
  c["num_key_value_heads"] = Hkv;
  c["tie_word_embeddings"] = o.tied;
  c["sliding_window"] = o.window > 0 ? json(o.window) : json(nullptr);
  c["original_max_position_embeddings"] = kPositions;
  c["resid_pdrop"] = 0.0;
  c["embd_pdrop"] = 0.0;
  if (o.partial != 1.0) {
    if (o.v5) c["rope_parameters"]["partial_rotary_factor"] = o.partial;
    else c["partial_rotary_factor"] = o.partial;
  }
  std::vector<TensorSpec> t = {{"model.embed_tokens.weight", {test::kTokenizerVocab, d}}};
  for (size_t l = 0; l < kLayers; ++l) {
    t.push_back({layer(l, "input_layernorm.weight"), {d}, 0.2f, 1.0f});
    t.push_back({layer(l, "self_attn.qkv_proj.weight"), {qd + 2 * kvd, d}, o.scale});
    t.push_back({layer(l, "self_attn.o_proj.weight"), {d, qd}, o.scale});
    t.push_back({layer(l, "post_attention_layernorm.weight"), {d}, 0.2f, 1.0f});
    t.push_back({layer(l, "mlp.gate_up_proj.weight"), {2 * ff, d}, o.scale});
    t.push_back({layer(l, "mlp.down_proj.weight"), {d, ff}, o.scale});
  }
  t.push_back({"model.norm.weight", {d}, 0.2f, 1.0f});
  if (!o.tied) t.push_back({"lm_head.weight", {test::kTokenizerVocab, d}});
  return test::writeCheckpoint(dir, c, t, {.dtype = o.dtype, .seed = o.seed});
}

// Phi3Attention: qkv = qkv_proj(x), q = qkv[:H·dh], k = next Hkv·dh, v = the rest; apply_rotary_pos_emb
// rotates the first rotary_dim = int(dh · partial) of each head. Phi3MLP: gate, up = gate_up_proj(x).chunk(2);
// down(up · act(gate)). Phi3Model: the sliding-window causal mask on every layer when sliding_window is set.
LikeReference phi3Ref(const TinyModel& m, const std::vector<int32_t>& ids) {
  const ModelConfig& c = m.config;
  const size_t d = static_cast<size_t>(c.d_model), ff = kFf, H = kHeads, Hkv = static_cast<size_t>(c.kv_heads),
               dh = d / H;
  const size_t rot = static_cast<size_t>(static_cast<double>(dh) * c.rope.partial);
  std::vector<double> theta;  // inv_freq = 1 / base^(2i / rot) over the rotated dimensions
  for (size_t i = 0; i < rot / 2; ++i)
    theta.push_back(1.0 / std::pow(c.rope.theta, 2.0 * static_cast<double>(i) / static_cast<double>(rot)));
  LikeReference r;
  Rows x = embedRef(m, ids, d);
  for (size_t l = 0; l < kLayers; ++l) {
    auto W = [&](const std::string& n) { return m.w(layer(l, n)); };
    Rows a = x;
    rmsNormRef(a, W("input_layernorm.weight"), c.rms_eps);
    const Rows qkv = linearRef(a, W("self_attn.qkv_proj.weight"), {}, d, (H + 2 * Hkv) * dh, true);
    Rows q0 = zeros(ids.size(), H * dh), k0 = zeros(ids.size(), Hkv * dh), v = zeros(ids.size(), Hkv * dh);
    for (size_t i = 0; i < ids.size(); ++i) {
      for (size_t e = 0; e < H * dh; ++e) q0[i][e] = qkv[i][e];
      for (size_t e = 0; e < Hkv * dh; ++e) k0[i][e] = qkv[i][H * dh + e], v[i][e] = qkv[i][(H + Hkv) * dh + e];
    }
    const Rows q = ropeRef(q0, dh, theta), k = ropeRef(k0, dh, theta);
    std::vector<Rows> maps;
    Rows out;
    attentionRefOpts(q, k, v, H, {.kv_heads = Hkv, .window = static_cast<size_t>(c.sliding_window)}, maps, out);
    r.attention.push_back(maps);
    r.q.push_back(q), r.k.push_back(repeatHeadsRef(k, H, Hkv, dh)), r.v.push_back(repeatHeadsRef(v, H, Hkv, dh));
    r.q_unrotated.push_back(q0), r.k_unrotated.push_back(repeatHeadsRef(k0, H, Hkv, dh));
    addInto(x, linearRef(out, W("self_attn.o_proj.weight"), {}, H * dh, d, true));
    a = x;
    rmsNormRef(a, W("post_attention_layernorm.weight"), c.rms_eps);
    const Rows gu = linearRef(a, W("mlp.gate_up_proj.weight"), {}, d, 2 * ff, true);
    Rows g = zeros(ids.size(), ff), u = zeros(ids.size(), ff);
    for (size_t i = 0; i < ids.size(); ++i)
      for (size_t e = 0; e < ff; ++e) g[i][e] = gu[i][e], u[i][e] = gu[i][ff + e];
    addInto(x, linearRef(swigluRef(g, u), W("mlp.down_proj.weight"), {}, ff, d, true));
  }
  rmsNormRef(x, m.w("model.norm.weight"), c.rms_eps);
  r.hidden = x;
  r.logits = lmHeadRef(m, x, d);
  return r;
}

ModelRun expectPhi3Matches(const Phi3Options& o, const std::string& text) {
  test::TempDir dir;
  const TinyModel tm = writePhi3(dir.path, o);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModel(*model, text, {.top_k = 3});
  EXPECT_GE(run.ids.size(), 3u);
  EXPECT_EQ(run.ids[0], 259) << "<s> first";
  EXPECT_EQ(run.kv_heads, static_cast<int64_t>(o.kv_heads));
  EXPECT_TRUE(run.rope && run.causal);
  EXPECT_EQ(run.rotary_dims, o.partial < 1.0 ? static_cast<int64_t>(8 * o.partial) : 0);
  EXPECT_EQ(run.rope_theta.size(), static_cast<size_t>(8 * o.partial / 2));
  EXPECT_EQ(run.sliding_window, o.window);
  if (o.window > 0) {
    EXPECT_EQ(run.layer_window, std::vector<int64_t>(kLayers, o.window));
  }
  expectRunMatches(run, phi3Ref(tm, run.ids), false);
  return run;
}

TEST(Phi3Family, Transformers4ConfigMatchesReference) {
  expectPhi3Matches({}, "the cat sat on the mat");
}

TEST(Phi3Family, PartialRotaryBothConfigForms) {
  expectPhi3Matches({.partial = 0.5, .seed = 32}, "the cat sat on the mat");
  expectPhi3Matches({.v5 = true, .tied = true, .partial = 0.5, .kv_heads = 1, .seed = 33}, "then the hat");
  // The unrotated half of each head passes RoPE unchanged.
  test::TempDir dir;
  writePhi3(dir.path, {.v5 = true, .partial = 0.5});
  const ModelRun run = runModel(*loadModel(filesOnDisk(dir.path.string())), "the cat sat", {.top_k = 0});
  for (int64_t h = 0; h < 4; ++h)
    EXPECT_TRUE(run.q[0].middleCols(h * 8 + 4, 4) == run.q_unrotated[0].middleCols(h * 8 + 4, 4)) << "head " << h;
  EXPECT_GT(ref::maxAbsDiff(run.q[0].middleCols(0, 4), run.q_unrotated[0].middleCols(0, 4)), 1e-3f)
      << "the rotated half turns";
}

TEST(Phi3Family, SlidingWindowOnEveryLayer) {
  const ModelRun run = expectPhi3Matches({.window = 3, .seed = 34}, "a b c d e f");
  for (size_t l = 0; l < kLayers; ++l) {
    const Mat& a = run.attention[l][1];
    for (int64_t i = 0; i < a.rows(); ++i)
      for (int64_t j = 0; j < a.cols(); ++j) {
        if (j > i || i - j >= 3) EXPECT_EQ(a(i, j), 0.0f) << l << ": " << i << "," << j;
        else EXPECT_GT(a(i, j), 0.0f) << l << ": " << i << "," << j;
      }
  }
}

TEST(Phi3Family, KvCacheGenerationMatchesFullForward) {
  test::TempDir dir;
  writePhi3(dir.path, {.partial = 0.5, .window = 3, .seed = 35});
  test::expectGenerationMatchesFullForward(dir.path, "the cat");  // the window slides during decoding
}

TEST(Phi3Family, RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = writePhi3(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  // Phi-3 128k's longrope (and its older name su): short/long factors per dimension, not implemented.
  test::expectFieldRefused(tm, "rope_scaling", R"({"type": "longrope", "short_factor": [1.0, 1.0], "long_factor": [2.0, 2.0]})", {"rope_scaling: field 'type' is 'longrope', which is not implemented"});
  test::expectFieldRefused(tm, "rope_scaling", R"({"type": "su", "short_factor": [1.0], "long_factor": [2.0]})",
                           {"rope_scaling: field 'type' is 'su', which is not implemented"});
  test::expectFieldRefused(tm, "partial_rotary_factor", "0.375",
                           {"field 'partial_rotary_factor' gives an odd number of rotary dimensions"});
  test::expectFieldRefused(tm, "hidden_act", R"("gelu_new")", {"field 'hidden_act' is 'gelu_new'"});
  test::expectFieldRefused(tm, "attention_bias", "true", {"field 'attention_bias' is true, which Phi-3 does not implement"});
  test::expectFieldRefused(tm, "layer_types", R"(["sliding_attention", "full_attention"])",
                           {"field 'layer_types'", "which Phi-3 does not implement"});
  test::expectFieldRefused(tm, "sliding_window", "0", {"field 'sliding_window' must be an integer from 1"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

}  // namespace
}  // namespace attn::phi3_test

namespace attn {

test::TinyModel test::writePhi3Fixture(const fs::path& dir, const test::FamilyFixture& f) {
  return phi3_test::writePhi3(dir, {.seed = f.seed, .dtype = f.dtype});
}

// Rows of 256: d 256 (4 heads of 64, half of each rotating), d_ff 512, a window of 3 on every layer.
test::TinyModel test::writePhi3GgufParent(const fs::path& dir) {
  return phi3_test::writePhi3(dir, {.partial = 0.5, .window = 3, .d = 256, .ff = 512, .scale = 0.05f});
}

}  // namespace attn
