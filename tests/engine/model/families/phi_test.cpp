// Phi (engine/model/families/phi.cpp) against a plain-loop double reference written
// from transformers' modeling_phi.py: one input_layernorm feeding attention
// and MLP in parallel, q/k/v/dense biases, partial rotary (default 0.5),
// GQA, gelu_new, the final LayerNorm and the biased lm_head; both config
// generations and the refusals. The checks every family needs are in
// conformance_test.cpp.
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

constexpr int64_t kPhiLayers = 2, kPhiHeads = 4, kPhiD = 32, kPhiFf = 24, kPhiPositions = 32;

struct PhiCase {
  bool v5 = false;      // rope_parameters and dtype
  double pct = 0.75;    // partial_rotary_factor; ≤ 0: not in config.json (transformers' default 0.5)
  double theta = 60.0;
  int64_t kv_heads = 2;  // of 4
  bool tied = false;
  uint64_t seed = 1;
  DType dtype = DType::F32;
  int64_t d = kPhiD, ff = kPhiFf;
};

nlohmann::json phiConfig(const PhiCase& o) {
  nlohmann::json j = {{"architectures", {"PhiForCausalLM"}},
                      {"model_type", "phi"},
                      {"num_hidden_layers", kPhiLayers},
                      {"num_attention_heads", kPhiHeads},
                      {"num_key_value_heads", o.kv_heads},
                      {"hidden_size", o.d},
                      {"intermediate_size", o.ff},
                      {"max_position_embeddings", kPhiPositions},
                      {"vocab_size", test::kTokenizerVocab},
                      {"layer_norm_eps", 1e-5},
                      {"hidden_act", "gelu_new"},
                      {"qk_layernorm", false},
                      {"tie_word_embeddings", o.tied},
                      {"resid_pdrop", 0.1},
                      {"embd_pdrop", 0.0},
                      {"attention_dropout", 0.0},
                      {"bos_token_id", 259},
                      {"eos_token_id", 260}};
  if (o.v5) {
    j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", o.theta}};
    if (o.pct > 0) j["rope_parameters"]["partial_rotary_factor"] = o.pct;
    j["dtype"] = "float32";
  } else {
    j["rope_theta"] = o.theta;
    j["rope_scaling"] = nullptr;
    if (o.pct > 0) j["partial_rotary_factor"] = o.pct;
    j["torch_dtype"] = "float32";
  }
  return j;
}

std::vector<test::TensorSpec> phiTensors(const PhiCase& o) {
  const int64_t d = o.d, ff = o.ff, V = test::kTokenizerVocab, kvd = o.kv_heads * (o.d / kPhiHeads);
  std::vector<test::TensorSpec> t = {{"model.embed_tokens.weight", {V, d}}};
  for (int64_t l = 0; l < kPhiLayers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.push_back({p + "input_layernorm.weight", {d}, 0.2f, 1.0f});
    t.push_back({p + "input_layernorm.bias", {d}, 0.1f});
    t.push_back({p + "self_attn.q_proj.weight", {d, d}});
    t.push_back({p + "self_attn.q_proj.bias", {d}, 0.2f});
    t.push_back({p + "self_attn.k_proj.weight", {kvd, d}});
    t.push_back({p + "self_attn.k_proj.bias", {kvd}, 0.2f});
    t.push_back({p + "self_attn.v_proj.weight", {kvd, d}});
    t.push_back({p + "self_attn.v_proj.bias", {kvd}, 0.2f});
    t.push_back({p + "self_attn.dense.weight", {d, d}});
    t.push_back({p + "self_attn.dense.bias", {d}, 0.2f});
    t.push_back({p + "mlp.fc1.weight", {ff, d}});
    t.push_back({p + "mlp.fc1.bias", {ff}, 0.2f});
    t.push_back({p + "mlp.fc2.weight", {d, ff}});
    t.push_back({p + "mlp.fc2.bias", {d}, 0.2f});
  }
  t.push_back({"model.final_layernorm.weight", {d}, 0.2f, 1.0f});
  t.push_back({"model.final_layernorm.bias", {d}, 0.1f});
  if (!o.tied) t.push_back({"lm_head.weight", {V, d}});
  t.push_back({"lm_head.bias", {V}, 0.5f});
  return t;
}

TinyModel phiCheckpoint(const std::filesystem::path& dir, const PhiCase& o) {
  return test::writeCheckpoint(dir, phiConfig(o), phiTensors(o), {.dtype = o.dtype, .seed = o.seed});
}

struct PhiReference : Reference {
  std::vector<Rows> q_unrotated, k_unrotated;
};

// transformers' PhiForCausalLM.forward, one scalar loop at a time.
PhiReference phiRef(const TinyModel& m, const std::vector<int32_t>& ids, const PhiCase& o) {
  const size_t L = ids.size(), d = static_cast<size_t>(o.d), H = kPhiHeads, Hkv = static_cast<size_t>(o.kv_heads), dh = d / H,
               ff = static_cast<size_t>(o.ff), V = test::kTokenizerVocab;
  const double eps = 1e-5;
  RopeSpec spec;
  spec.theta = o.theta;
  spec.partial = o.pct > 0 ? o.pct : 0.5;  // PhiConfig's default partial_rotary_factor
  const std::vector<double> theta = ropeThetaRef(spec, static_cast<int64_t>(dh));
  PhiReference r;
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] = m.w("model.embed_tokens.weight")[static_cast<size_t>(ids[i]) * d + e];
  for (int64_t l = 0; l < kPhiLayers; ++l) {
    auto W = [&](const std::string& n) -> const std::vector<float>& {
      return m.w("model.layers." + std::to_string(l) + "." + n);
    };
    // residual = x; a = input_layernorm(x), read by both branches
    Rows a = x;
    layerNormRef(a, W("input_layernorm.weight"), W("input_layernorm.bias"), eps);
    const Rows q = linearRef(a, W("self_attn.q_proj.weight"), W("self_attn.q_proj.bias"), d, d, true);
    const Rows k = linearRef(a, W("self_attn.k_proj.weight"), W("self_attn.k_proj.bias"), d, Hkv * dh, true);
    const Rows v = linearRef(a, W("self_attn.v_proj.weight"), W("self_attn.v_proj.bias"), d, Hkv * dh, true);
    const Rows qr = ropeRef(q, dh, theta), kr = ropeRef(k, dh, theta);
    std::vector<Rows> maps;
    Rows out;
    attentionRefOpts(qr, kr, v, H, {.kv_heads = Hkv}, maps, out);
    r.attention.push_back(maps);
    r.q.push_back(qr);
    r.k.push_back(repeatHeadsRef(kr, H, Hkv, dh));
    r.v.push_back(repeatHeadsRef(v, H, Hkv, dh));
    r.q_unrotated.push_back(q);
    r.k_unrotated.push_back(repeatHeadsRef(k, H, Hkv, dh));
    const Rows attn = linearRef(out, W("self_attn.dense.weight"), W("self_attn.dense.bias"), d, d, true);
    Rows u = linearRef(a, W("mlp.fc1.weight"), W("mlp.fc1.bias"), d, ff, true);
    for (auto& row : u)
      for (double& z : row) z = geluTanh(z);
    const Rows f = linearRef(u, W("mlp.fc2.weight"), W("mlp.fc2.bias"), ff, d, true);
    addInto(x, attn);  // x = attn + mlp + residual
    addInto(x, f);
  }
  layerNormRef(x, m.w("model.final_layernorm.weight"), m.w("model.final_layernorm.bias"), eps);
  r.hidden = x;
  r.logits = linearRef(x, o.tied ? m.w("model.embed_tokens.weight") : m.w("lm_head.weight"), m.w("lm_head.bias"), d,
                       V, true);
  return r;
}

void expectPhiMatches(const PhiCase& o) {
  test::TempDir dir;
  const TinyModel tm = phiCheckpoint(dir.path, o);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const std::vector<int32_t> ids = {259, 116, 104, 101, 32, 104, 97, 116, 32, 111, 110};
  const ModelRun run = runModelIds(*model, ids, {.top_k = 3});
  const double pct = o.pct > 0 ? o.pct : 0.5;
  EXPECT_EQ(run.rotary_dims, static_cast<int64_t>(8 * pct));
  EXPECT_EQ(run.kv_heads, o.kv_heads);
  EXPECT_TRUE(modelInfo(*model).config.parallel_residual);
  const PhiReference ref = phiRef(tm, ids, o);
  expectMatches(run, ref, 3);
  for (size_t l = 0; l < ref.q_unrotated.size(); ++l)
    for (size_t i = 0; i < ids.size(); ++i)
      for (size_t e = 0; e < ref.q_unrotated[l][i].size(); ++e) {
        ASSERT_NEAR(run.q_unrotated[l](i, e), ref.q_unrotated[l][i][e], mref::kModelTol) << "layer " << l;
        ASSERT_NEAR(run.k_unrotated[l](i, e), ref.k_unrotated[l][i][e], mref::kModelTol) << "layer " << l;
      }
}

TEST(PhiFamily, Transformers4ConfigMatchesLoopReference) {
  // rope_theta + partial_rotary_factor 0.75 at the top level, GQA (2 key/value heads for 4).
  expectPhiMatches({});
}

TEST(PhiFamily, Transformers5DefaultPartialTiedMatchesLoopReference) {
  // rope_parameters without partial_rotary_factor: Phi's default 0.5; MHA; lm_head tied but biased.
  expectPhiMatches({.v5 = true, .pct = 0, .theta = 90.0, .kv_heads = 4, .tied = true, .seed = 2});
}

TEST(PhiFamily, Bf16MatchesLoopReference) {
  expectPhiMatches({.pct = 0.5, .kv_heads = 1, .seed = 3, .dtype = DType::BF16});
}

TEST(PhiFamily, RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = phiCheckpoint(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::expectFieldRefused(tm, "rope_scaling", R"({"type": "dynamic", "factor": 2.0})",
                           {"config.json rope_scaling: field 'type' is 'dynamic', which is not implemented"});
  test::expectFieldRefused(tm, "partial_rotary_factor", "0.375",
                           {"config.json: field 'partial_rotary_factor' gives int(head_dim · 0.375) = 3 rotary dimensions"});
  test::expectFieldRefused(tm, "hidden_act", R"("gelu_10")", {"config.json: field 'hidden_act' is 'gelu_10'"});
  test::expectFieldRefused(tm, "num_key_value_heads", "3", {"num_key_value_heads (3) must divide num_attention_heads (4)"});
  test::expectFieldRefused(tm, "sliding_window", "4",
                           {"config.json: field 'sliding_window' is 4, which Phi does not implement"});
  test::expectFieldRefused(tm, "tie_word_embeddings", "true", {"does not use", "'lm_head.weight'"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

}  // namespace

TinyModel test::writePhiFixture(const std::filesystem::path& dir, const test::FamilyFixture& f) {
  return phiCheckpoint(dir, {.seed = f.seed, .dtype = f.dtype});
}

// Rows of 256: d 256 (4 heads of 64, three quarters of each rotating), d_ff
// 4 · d and no GQA (Phi2Model writes 4 · n_embd and head_count_kv = heads),
// matrices of σ 0.1; RoPE's base llama.cpp's 10,000 (the converter writes
// none); Phi-2's tokenizer adds no <s>.
TinyModel test::writePhiGgufParent(const std::filesystem::path& dir) {
  const PhiCase o{.pct = 0.75, .theta = 10000.0, .kv_heads = kPhiHeads, .d = 256, .ff = 1024};
  std::vector<test::TensorSpec> t = phiTensors(o);
  for (test::TensorSpec& s : t)
    if (s.shape.size() > 1) s.scale = 0.1f;
  return test::writeCheckpoint(dir, phiConfig(o), t, {}, {}, R"({"add_bos_token": false, "eos_token": "</s>"})");
}

}  // namespace attn
