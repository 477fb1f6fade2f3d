// StarCoder2 (engine/model/families/starcoder2.cpp) against a plain-loop double
// reference written from transformers' modeling_starcoder2.py: LayerNorms
// with biases, q/k/v/o and MLP biases (use_bias), RoPE, GQA, a sliding window
// on every layer, c_fc → gelu_pytorch_tanh → c_proj, the final LayerNorm and
// the head tied to the embeddings by default. The checks every family needs
// are in conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/engine/model/families/conformance.h"
#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace attn {
namespace {

using namespace mref;
using test::TinyModel;

struct Starcoder2Case {
  bool bias = true;       // use_bias
  bool tied = true;       // tie_word_embeddings (absent from config.json when true: Starcoder2Config's default)
  int64_t window = 0;     // sliding_window; 0: null
  int64_t kv_heads = 2;   // of 4
  double theta = 80.0;
  uint64_t seed = 1;
  DType dtype = DType::F32;
};

constexpr int64_t kLayers = 2, kHeads = 4, kD = 32, kFf = 40, kPositions = 32;

nlohmann::json starcoder2Config(const Starcoder2Case& o) {
  nlohmann::json j = {{"architectures", {"Starcoder2ForCausalLM"}},
                      {"model_type", "starcoder2"},
                      {"num_hidden_layers", kLayers},
                      {"num_attention_heads", kHeads},
                      {"num_key_value_heads", o.kv_heads},
                      {"hidden_size", kD},
                      {"intermediate_size", kFf},
                      {"max_position_embeddings", kPositions},
                      {"vocab_size", test::kTokenizerVocab},
                      {"norm_epsilon", 1e-5},
                      {"hidden_act", "gelu_pytorch_tanh"},
                      {"rope_theta", o.theta},
                      {"use_bias", o.bias},
                      {"residual_dropout", 0.1},
                      {"embedding_dropout", 0.1},
                      {"attention_dropout", 0.0},
                      {"bos_token_id", 259},
                      {"eos_token_id", 260},
                      {"torch_dtype", "float32"}};
  j["sliding_window"] = o.window > 0 ? nlohmann::json(o.window) : nlohmann::json(nullptr);
  if (!o.tied) j["tie_word_embeddings"] = false;
  return j;
}

std::vector<test::TensorSpec> starcoder2Tensors(const Starcoder2Case& o) {
  const int64_t d = kD, ff = kFf, V = test::kTokenizerVocab, kvd = o.kv_heads * (kD / kHeads);
  std::vector<test::TensorSpec> t = {{"model.embed_tokens.weight", {V, d}}};
  auto linear = [&](const std::string& name, int64_t out, int64_t in) {
    t.push_back({name + ".weight", {out, in}});
    if (o.bias) t.push_back({name + ".bias", {out}, 0.2f});
  };
  auto norm = [&](const std::string& name) {
    t.push_back({name + ".weight", {d}, 0.2f, 1.0f});
    t.push_back({name + ".bias", {d}, 0.1f});
  };
  for (int64_t l = 0; l < kLayers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    norm(p + "input_layernorm");
    linear(p + "self_attn.q_proj", d, d), linear(p + "self_attn.k_proj", kvd, d);
    linear(p + "self_attn.v_proj", kvd, d), linear(p + "self_attn.o_proj", d, d);
    norm(p + "post_attention_layernorm");
    linear(p + "mlp.c_fc", ff, d), linear(p + "mlp.c_proj", d, ff);
  }
  norm("model.norm");
  if (!o.tied) t.push_back({"lm_head.weight", {V, d}});
  return t;
}

TinyModel starcoder2Checkpoint(const std::filesystem::path& dir, const Starcoder2Case& o) {
  return test::writeCheckpoint(dir, starcoder2Config(o), starcoder2Tensors(o), {.dtype = o.dtype, .seed = o.seed});
}

// transformers' Starcoder2ForCausalLM.forward, one scalar loop at a time.
Reference starcoder2Ref(const TinyModel& m, const std::vector<int32_t>& ids, const Starcoder2Case& o) {
  const size_t L = ids.size(), d = kD, H = kHeads, Hkv = static_cast<size_t>(o.kv_heads), dh = d / H, ff = kFf,
               V = test::kTokenizerVocab;
  const double eps = 1e-5;
  RopeSpec spec;
  spec.theta = o.theta;
  const std::vector<double> theta = ropeThetaRef(spec, static_cast<int64_t>(dh));
  const std::vector<float> none;
  auto bias = [&](const std::string& name) -> const std::vector<float>& { return o.bias ? m.w(name) : none; };
  Reference r;
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] = m.w("model.embed_tokens.weight")[static_cast<size_t>(ids[i]) * d + e];
  for (int64_t l = 0; l < kLayers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    auto linear = [&](const Rows& in, const std::string& name, size_t n_in, size_t n_out) {
      return linearRef(in, m.w(p + name + ".weight"), bias(p + name + ".bias"), n_in, n_out, true);
    };
    // a = input_layernorm(x); attention with RoPE, GQA and the window
    Rows a = x;
    layerNormRef(a, m.w(p + "input_layernorm.weight"), m.w(p + "input_layernorm.bias"), eps);
    const Rows q = linear(a, "self_attn.q_proj", d, d);
    const Rows k = linear(a, "self_attn.k_proj", d, Hkv * dh);
    const Rows v = linear(a, "self_attn.v_proj", d, Hkv * dh);
    const Rows qr = ropeRef(q, dh, theta), kr = ropeRef(k, dh, theta);
    std::vector<Rows> maps;
    Rows out;
    attentionRefOpts(qr, kr, v, H, {.kv_heads = Hkv, .window = static_cast<size_t>(o.window)}, maps, out);
    r.attention.push_back(maps);
    r.q.push_back(qr);
    r.k.push_back(repeatHeadsRef(kr, H, Hkv, dh));
    r.v.push_back(repeatHeadsRef(v, H, Hkv, dh));
    addInto(x, linear(out, "self_attn.o_proj", d, d));  // x = residual + o_proj(attention)
    // x = residual + c_proj(gelu_tanh(c_fc(post_attention_layernorm(x))))
    a = x;
    layerNormRef(a, m.w(p + "post_attention_layernorm.weight"), m.w(p + "post_attention_layernorm.bias"), eps);
    Rows u = linear(a, "mlp.c_fc", d, ff);
    for (auto& row : u)
      for (double& z : row) z = geluTanh(z);
    addInto(x, linear(u, "mlp.c_proj", ff, d));
  }
  layerNormRef(x, m.w("model.norm.weight"), m.w("model.norm.bias"), eps);
  r.hidden = x;
  r.logits = linearRef(x, o.tied ? m.w("model.embed_tokens.weight") : m.w("lm_head.weight"), none, d, V, true);
  return r;
}

void expectStarcoder2Matches(const Starcoder2Case& o) {
  test::TempDir dir;
  const TinyModel tm = starcoder2Checkpoint(dir.path, o);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const std::vector<int32_t> ids = {259, 116, 104, 101, 32, 104, 97, 116, 32, 111, 110};
  const ModelRun run = runModelIds(*model, ids, {.top_k = 3});
  EXPECT_EQ(run.kv_heads, o.kv_heads);
  expectMatches(run, starcoder2Ref(tm, ids, o), 3);
}

TEST(Starcoder2Family, BiasesGqaAndTiedHeadMatchLoopReference) { expectStarcoder2Matches({}); }

TEST(Starcoder2Family, SlidingWindowUntiedNoBiasMatchesLoopReference) {
  // A window of 4 keys on every layer; no biases (use_bias false); MHA; the saved lm_head.
  expectStarcoder2Matches({.bias = false, .tied = false, .window = 4, .kv_heads = 4, .theta = 30.0, .seed = 2});
}

TEST(Starcoder2Family, RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = starcoder2Checkpoint(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::expectFieldRefused(tm, "hidden_act", R"("gelu_10")", {"config.json: field 'hidden_act' is 'gelu_10'"});
  test::expectFieldRefused(tm, "num_key_value_heads", "3", {"num_key_value_heads (3) must divide num_attention_heads (4)"});
  test::expectFieldRefused(tm, "use_bias", "false", {"bias"});  // the checkpoint's biases would go unused
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

}  // namespace

TinyModel test::writeStarcoder2Fixture(const std::filesystem::path& dir, const test::FamilyFixture& f) {
  return starcoder2Checkpoint(dir, {.seed = f.seed, .dtype = f.dtype});
}

}  // namespace attn
