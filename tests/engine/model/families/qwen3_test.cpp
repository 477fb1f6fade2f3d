// The Llama-like families of engine/model/families/qwen3.cpp, olmo2.cpp and phi3.cpp
// against plain-loop double references written from transformers' modelling
// code (models/qwen3/modeling_qwen3.py, olmo2/modeling_olmo2.py,
// phi3/modeling_phi3.py): tiny random checkpoints with the exact tensor names
// and shapes, config.json in both transformers generations, every layer's
// maps, q/k/v, the RoPE and QK-norm inputs, hidden states and top-k; KV-cache
// generation against a full forward; and each unimplemented field refused.
#include "engine/model/kinds/generate.h"
#include "engine/model/model.h"

#include "tests/engine_reference.h"
#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace fs = std::filesystem;

// A namespace of its own: unity builds put this file in one batch with
// engine/model/model_test.cpp and others whose anonymous namespaces hold the same helper names.
namespace attn::llamalike_test {
namespace {

using namespace mref;
using test::TensorSpec;
using test::TinyModel;
using nlohmann::json;

// [SECTION] Shared pieces of the three references
struct LikeReference : Reference {
  std::vector<Rows> q_unrotated, k_unrotated, q_prenorm, k_prenorm;  // [layer], k repeated per query head
};

constexpr size_t kLayers = 2, kHeads = 4, kKvHeads = 2, kD = 16, kFf = 24, kPositions = 32;

Rows embedRef(const TinyModel& m, const std::vector<int32_t>& ids, size_t d) {
  Rows x = zeros(ids.size(), d);
  for (size_t i = 0; i < ids.size(); ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] = m.w("model.embed_tokens.weight")[static_cast<size_t>(ids[i]) * d + e];
  return x;
}

// RMSNorm on each head's dh columns with one weight [dh] (Qwen3RMSNorm on view(…, −1, head_dim)).
Rows rmsNormHeadsRef(const Rows& x, size_t dh, const std::vector<float>& w, double eps) {
  Rows y = x;
  for (auto& row : y)
    for (size_t h = 0; h < row.size() / dh; ++h) {
      double ms = 0;
      for (size_t e = 0; e < dh; ++e) ms += row[h * dh + e] * row[h * dh + e];
      ms /= static_cast<double>(dh);
      for (size_t e = 0; e < dh; ++e) row[h * dh + e] = row[h * dh + e] / std::sqrt(ms + eps) * w[e];
    }
  return y;
}

// The MLP: down(act(gate) ⊙ up).
Rows swigluRef(const Rows& gate, const Rows& up) {
  Rows g = gate;
  for (size_t i = 0; i < g.size(); ++i)
    for (size_t e = 0; e < g[i].size(); ++e) g[i][e] = silu(g[i][e]) * up[i][e];
  return g;
}

Rows lmHeadRef(const TinyModel& m, const Rows& hidden, size_t d) {
  const std::vector<float>& head = m.has("lm_head.weight") ? m.w("lm_head.weight") : m.w("model.embed_tokens.weight");
  return linearRef(hidden, head, {}, d, static_cast<size_t>(m.config.vocab), true);
}

void expectRows(const std::vector<Mat>& got, const std::vector<Rows>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t l = 0; l < want.size(); ++l) {
    ASSERT_EQ(got[l].rows(), static_cast<int64_t>(want[l].size())) << what;
    for (size_t i = 0; i < want[l].size(); ++i) {
      ASSERT_EQ(got[l].cols(), static_cast<int64_t>(want[l][i].size())) << what;
      for (size_t e = 0; e < want[l][i].size(); ++e)
        ASSERT_NEAR(got[l](static_cast<int64_t>(i), static_cast<int64_t>(e)), want[l][i][e], mref::kModelTol)
            << what << " layer " << l << " row " << i << " col " << e;
    }
  }
}

// Every map, q/k/v, hidden and top-3, and the extras the family fills.
void expectRunMatches(const ModelRun& run, const LikeReference& ref, bool qk_norm) {
  expectMatches(run, ref, 3);
  expectRows(run.q_unrotated, ref.q_unrotated, "q_unrotated");
  expectRows(run.k_unrotated, ref.k_unrotated, "k_unrotated");
  if (qk_norm) {
    expectRows(run.q_prenorm, ref.q_prenorm, "q_prenorm");
    expectRows(run.k_prenorm, ref.k_prenorm, "k_prenorm");
  } else {
    EXPECT_TRUE(run.q_prenorm.empty() && run.k_prenorm.empty());
  }
}

// Each decode step with the KV cache equals a full forward over the same tokens.
void expectGenerationMatchesFullForward(const fs::path& dir, const std::string& prompt) {
  const auto model = loadModel(filesOnDisk(dir.string()));
  const Generation g = generate(*model, prompt, {.max_new = 6});
  ASSERT_EQ(g.tokens.size(), 6u);
  const size_t P = g.prompt.ids.size();
  for (size_t s = 0; s < g.tokens.size(); ++s) {
    const ModelRun& st = g.tokens[s].step;
    EXPECT_EQ(st.first_position, static_cast<int64_t>(P + s));
    ASSERT_EQ(st.attention[1].back().rows(), 1);
    EXPECT_EQ(st.attention[1].back().cols(), static_cast<int64_t>(P + s + 1));
  }
  const ModelRun grown = generationRun(g, g.tokens.size());
  const ModelRun full = runModelIds(*model, grown.ids, {.top_k = 1});
  ASSERT_EQ(full.ids, grown.ids);
  for (size_t l = 0; l < full.attention.size(); ++l) {
    for (size_t h = 0; h < full.attention[l].size(); ++h)
      EXPECT_LT(ref::maxAbsDiff(full.attention[l][h], grown.attention[l][h]), 1e-5) << l << "/" << h;
    EXPECT_LT(ref::maxAbsDiff(full.q[l], grown.q[l]), 1e-4);
    EXPECT_LT(ref::maxAbsDiff(full.k[l], grown.k[l]), 1e-4);
    EXPECT_LT(ref::maxAbsDiff(full.v[l], grown.v[l]), 1e-4);
  }
  EXPECT_LT(ref::maxAbsDiff(full.hidden, grown.hidden), 1e-4);
  for (size_t s = 0; s < g.tokens.size(); ++s) {
    EXPECT_EQ(g.tokens[s].id, full.top_k[P - 1 + s][0].id) << "step " << s;
    EXPECT_NEAR(g.tokens[s].probability, full.top_k[P - 1 + s][0].probability, 1e-4);
  }
}

// config.json's `field` set to `bad` is refused in one line naming the file, the field and `parts`; then set back.
void expectRefused(const TinyModel& tm, const std::string& field, const std::string& bad, const std::string& good,
                   const std::vector<std::string>& parts) {
  test::setConfigField(tm, field, bad);
  const std::string msg = test::loadError(tm.dir);
  EXPECT_NE(msg.find("config.json"), std::string::npos) << msg;
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  test::setConfigField(tm, field, good);
}

// The fields both generations share; v5 writes rope_parameters and dtype, 4.x rope_theta and torch_dtype.
json baseConfig(const std::string& arch, const std::string& type, bool v5, double theta) {
  json c = {{"architectures", {arch}},
            {"model_type", type},
            {"num_hidden_layers", kLayers},
            {"num_attention_heads", kHeads},
            {"num_key_value_heads", kKvHeads},
            {"hidden_size", kD},
            {"intermediate_size", kFf},
            {"max_position_embeddings", kPositions},
            {"vocab_size", test::kTokenizerVocab},
            {"rms_norm_eps", 1e-5},
            {"hidden_act", "silu"},
            {"bos_token_id", 259},
            {"eos_token_id", 260},
            {"attention_dropout", 0.0},
            {"initializer_range", 0.02},
            {"use_cache", true},
            {"transformers_version", v5 ? "5.0.0" : "4.51.3"}};
  if (v5) {
    c["dtype"] = "float32";
    c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", theta}};
  } else {
    c["torch_dtype"] = "float32";
    c["rope_theta"] = theta;
    c["rope_scaling"] = nullptr;
  }
  return c;
}

std::string layer(size_t l, const std::string& rest) { return "model.layers." + std::to_string(l) + "." + rest; }

// [SECTION] Qwen3: QK-norm per head before RoPE, head_dim apart from the width
struct Qwen3Options {
  bool v5 = false;
  bool tied = false;
  bool bias = false;
  size_t head_dim = 6;  // 16 / 4 = 4 would be the width's; Qwen3 sets it apart
  uint64_t seed = 11;
  int64_t window = 0;  // use_sliding_window with this sliding_window (0: false)
  int64_t max_window_layers = 28;
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
    t.push_back({layer(l, "self_attn.q_proj.weight"), {qd, d}});
    t.push_back({layer(l, "self_attn.k_proj.weight"), {kvd, d}});
    t.push_back({layer(l, "self_attn.v_proj.weight"), {kvd, d}});
    t.push_back({layer(l, "self_attn.o_proj.weight"), {d, qd}});
    if (o.bias) {
      t.push_back({layer(l, "self_attn.q_proj.bias"), {qd}});
      t.push_back({layer(l, "self_attn.k_proj.bias"), {kvd}});
      t.push_back({layer(l, "self_attn.v_proj.bias"), {kvd}});
      t.push_back({layer(l, "self_attn.o_proj.bias"), {d}});
    }
    t.push_back({layer(l, "self_attn.q_norm.weight"), {dh}, 0.3f, 1.0f});
    t.push_back({layer(l, "self_attn.k_norm.weight"), {dh}, 0.3f, 1.0f});
    t.push_back({layer(l, "post_attention_layernorm.weight"), {d}, 0.2f, 1.0f});
    t.push_back({layer(l, "mlp.gate_proj.weight"), {ff, d}});
    t.push_back({layer(l, "mlp.up_proj.weight"), {ff, d}});
    t.push_back({layer(l, "mlp.down_proj.weight"), {d, ff}});
  }
  t.push_back({"model.norm.weight", {d}, 0.2f, 1.0f});
  if (!o.tied) t.push_back({"lm_head.weight", {test::kTokenizerVocab, d}});
  return test::writeCheckpoint(dir, c, t, {.seed = o.seed});
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

TEST(Qwen3Family, KvCacheGenerationMatchesFullForward) {
  test::TempDir dir;
  writeQwen3(dir.path, {.seed = 13});
  expectGenerationMatchesFullForward(dir.path, "the cat");
  test::TempDir windowed;
  writeQwen3(windowed.path, {.v5 = true, .seed = 16, .window = 3, .max_window_layers = 1});
  expectGenerationMatchesFullForward(windowed.path, "the cat");
}

TEST(Qwen3Family, RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = writeQwen3(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  expectRefused(tm, "layer_types", R"(["full_attention", "sliding_attention"])", "null",
                {"field 'layer_types' makes layer 1 sliding_attention, but Qwen3 has no sliding_window"});
  expectRefused(tm, "rope_scaling", R"({"rope_type": "yarn", "factor": 4.0})", "null",
                {"rope_scaling: field 'rope_type' is 'yarn', which is not implemented"});
  expectRefused(tm, "hidden_act", R"("gelu")", R"("silu")", {"field 'hidden_act' is 'gelu'"});
  expectRefused(tm, "attn_logit_softcapping", "30.0", "null",
                {"field 'attn_logit_softcapping' is 30.0, which Qwen3 does not implement"});
  expectRefused(tm, "mlp_bias", "true", "false", {"field 'mlp_bias' is true, which Qwen3 does not implement"});
  expectRefused(tm, "partial_rotary_factor", "0.5", "1.0", {"field 'partial_rotary_factor' is 0.5"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

// [SECTION] OLMo 2: norms after the sublayers, QK-norm over the whole q and k
struct Olmo2Options {
  bool v5 = false;
  bool tied = false;
  bool bias = false;
  uint64_t seed = 21;
};

TinyModel writeOlmo2(const fs::path& dir, const Olmo2Options& o) {
  json c = baseConfig("Olmo2ForCausalLM", "olmo2", o.v5, 50.0);
  c["tie_word_embeddings"] = o.tied;
  c["attention_bias"] = o.bias;
  c["pad_token_id"] = 1;
  const int64_t d = kD, ff = kFf, dh = kD / kHeads, qd = kHeads * dh, kvd = kKvHeads * dh;
  std::vector<TensorSpec> t = {{"model.embed_tokens.weight", {test::kTokenizerVocab, d}}};
  for (size_t l = 0; l < kLayers; ++l) {
    t.push_back({layer(l, "self_attn.q_proj.weight"), {qd, d}});
    t.push_back({layer(l, "self_attn.k_proj.weight"), {kvd, d}});
    t.push_back({layer(l, "self_attn.v_proj.weight"), {kvd, d}});
    t.push_back({layer(l, "self_attn.o_proj.weight"), {d, qd}});
    if (o.bias) {
      t.push_back({layer(l, "self_attn.q_proj.bias"), {qd}});
      t.push_back({layer(l, "self_attn.k_proj.bias"), {kvd}});
      t.push_back({layer(l, "self_attn.v_proj.bias"), {kvd}});
      t.push_back({layer(l, "self_attn.o_proj.bias"), {d}});
    }
    t.push_back({layer(l, "self_attn.q_norm.weight"), {qd}, 0.3f, 1.0f});
    t.push_back({layer(l, "self_attn.k_norm.weight"), {kvd}, 0.3f, 1.0f});
    t.push_back({layer(l, "post_attention_layernorm.weight"), {d}, 0.2f, 1.0f});
    t.push_back({layer(l, "mlp.gate_proj.weight"), {ff, d}});
    t.push_back({layer(l, "mlp.up_proj.weight"), {ff, d}});
    t.push_back({layer(l, "mlp.down_proj.weight"), {d, ff}});
    t.push_back({layer(l, "post_feedforward_layernorm.weight"), {d}, 0.2f, 1.0f});
  }
  t.push_back({"model.norm.weight", {d}, 0.2f, 1.0f});
  if (!o.tied) t.push_back({"lm_head.weight", {test::kTokenizerVocab, d}});
  return test::writeCheckpoint(dir, c, t, {.seed = o.seed});
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

TEST(Olmo2Family, KvCacheGenerationMatchesFullForward) {
  test::TempDir dir;
  writeOlmo2(dir.path, {.seed = 23});
  expectGenerationMatchesFullForward(dir.path, "the cat");
}

TEST(Olmo2Family, RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = writeOlmo2(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  expectRefused(tm, "clip_qkv", "8.0", "null", {"field 'clip_qkv' is 8.0, which OLMo 2 does not implement"});
  expectRefused(tm, "rope_scaling", R"({"rope_type": "dynamic", "factor": 2.0})", "null",
                {"rope_scaling: field 'rope_type' is 'dynamic', which is not implemented"});
  expectRefused(tm, "hidden_act", R"("relu")", R"("silu")", {"field 'hidden_act' is 'relu'"});
  expectRefused(tm, "sliding_window", "4", "null", {"field 'sliding_window' is 4, which OLMo 2 does not implement"});
  expectRefused(tm, "layer_types", R"(["sliding_attention", "full_attention"])", "null",
                {"field 'layer_types'", "which OLMo 2 does not implement"});
  expectRefused(tm, "mlp_bias", "true", "false", {"field 'mlp_bias' is true, which OLMo 2 does not implement"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

// [SECTION] Phi-3: fused qkv and gate-up, partial rotary, the window on every layer
struct Phi3Options {
  bool v5 = false;
  bool tied = false;
  double partial = 1.0;
  int64_t window = 0;  // sliding_window (0: null)
  size_t kv_heads = kKvHeads;
  uint64_t seed = 31;
};

TinyModel writePhi3(const fs::path& dir, const Phi3Options& o) {
  // head_dim 8 (d 32 / 4 heads): partial 0.5 rotates 4 of the 8, two pairs.
  const int64_t d = 32, ff = kFf, dh = d / kHeads, Hkv = static_cast<int64_t>(o.kv_heads), qd = kHeads * dh,
                kvd = Hkv * dh;
  json c = baseConfig("Phi3ForCausalLM", "phi3", o.v5, 50.0);
  c["hidden_size"] = d;
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
    t.push_back({layer(l, "self_attn.qkv_proj.weight"), {qd + 2 * kvd, d}});
    t.push_back({layer(l, "self_attn.o_proj.weight"), {d, qd}});
    t.push_back({layer(l, "post_attention_layernorm.weight"), {d}, 0.2f, 1.0f});
    t.push_back({layer(l, "mlp.gate_up_proj.weight"), {2 * ff, d}});
    t.push_back({layer(l, "mlp.down_proj.weight"), {d, ff}});
  }
  t.push_back({"model.norm.weight", {d}, 0.2f, 1.0f});
  if (!o.tied) t.push_back({"lm_head.weight", {test::kTokenizerVocab, d}});
  return test::writeCheckpoint(dir, c, t, {.seed = o.seed});
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
  expectGenerationMatchesFullForward(dir.path, "the cat");  // the window slides during decoding
}

TEST(Phi3Family, RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = writePhi3(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  // Phi-3 128k's longrope (and its older name su): short/long factors per dimension, not implemented.
  expectRefused(tm, "rope_scaling", R"({"type": "longrope", "short_factor": [1.0, 1.0], "long_factor": [2.0, 2.0]})",
                "null", {"rope_scaling: field 'type' is 'longrope', which is not implemented"});
  expectRefused(tm, "rope_scaling", R"({"type": "su", "short_factor": [1.0], "long_factor": [2.0]})", "null",
                {"rope_scaling: field 'type' is 'su', which is not implemented"});
  expectRefused(tm, "partial_rotary_factor", "0.375", "1.0",
                {"field 'partial_rotary_factor' gives an odd number of rotary dimensions"});
  expectRefused(tm, "hidden_act", R"("gelu_new")", R"("silu")", {"field 'hidden_act' is 'gelu_new'"});
  expectRefused(tm, "attention_bias", "true", "false", {"field 'attention_bias' is true, which Phi-3 does not implement"});
  expectRefused(tm, "layer_types", R"(["sliding_attention", "full_attention"])", "null",
                {"field 'layer_types'", "which Phi-3 does not implement"});
  expectRefused(tm, "sliding_window", "0", "null", {"field 'sliding_window' must be an integer from 1"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}


TEST(Qwen3Family, EachLlamaLikeFamilyOpensThroughTheCli) {
  test::TempDir a, b, c;
  writeQwen3(a.path, {});
  test::expectOpensThroughTheCli(a.path, "the cat sat", "Qwen3");
  writeOlmo2(b.path, {});
  test::expectOpensThroughTheCli(b.path, "the cat sat", "OLMo 2");
  writePhi3(c.path, {});
  test::expectOpensThroughTheCli(c.path, "the cat sat", "Phi-3");
}

}  // namespace
}  // namespace attn::llamalike_test
