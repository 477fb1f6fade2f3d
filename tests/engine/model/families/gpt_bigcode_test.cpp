// GPT-BigCode / StarCoder (engine/model/families/gpt_bigcode.cpp) against a
// plain-loop double reference written from transformers'
// modeling_gpt_bigcode.py: learned positions, nn.Linear layouts, the fused
// c_attn split as [q (d) | k (d_head) | v (d_head)] with multi_query (one
// key/value head) or viewed [L, heads, 3·d_head] without, scale_attn_weights,
// the head tied to wte or its own lm_head; both config generations,
// multi-head KV-cache generation and the refusals. The checks every family
// needs are in conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/engine/model/families/conformance.h"
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

struct BigcodeCase {
  bool v5 = false;          // dtype and num_key_value_heads saved (newer configs)
  bool multi_query = true;  // MQA: one key/value head
  bool scale = true;        // scale_attn_weights
  bool tied = true;         // tie_word_embeddings (false: lm_head.weight saved)
  bool save_head = false;   // tied, but lm_head.weight saved anyway (it equals wte in real checkpoints)
  std::string act = "gelu_pytorch_tanh";
  uint64_t seed = 1;
  DType dtype = DType::F32;
};

constexpr int64_t kBigcodeLayers = 2, kBigcodeHeads = 4, kBigcodeD = 16, kBigcodeFf = 40, kBigcodePositions = 32;

nlohmann::json bigcodeConfig(const BigcodeCase& o) {
  nlohmann::json j = {{"architectures", {"GPTBigCodeForCausalLM"}},
                      {"model_type", "gpt_bigcode"},
                      {"n_layer", kBigcodeLayers},
                      {"n_head", kBigcodeHeads},
                      {"n_embd", kBigcodeD},
                      {"n_inner", kBigcodeFf},
                      {"n_positions", kBigcodePositions},
                      {"vocab_size", test::kTokenizerVocab},
                      {"layer_norm_epsilon", 1e-5},
                      {"activation_function", o.act},
                      {"multi_query", o.multi_query},
                      {"scale_attn_weights", o.scale},
                      {"attention_softmax_in_fp32", true},
                      {"scale_attention_softmax_in_fp32", true},
                      {"tie_word_embeddings", o.tied},
                      {"resid_pdrop", 0.1},
                      {"embd_pdrop", 0.1},
                      {"attn_pdrop", 0.1},
                      {"bos_token_id", 259},
                      {"eos_token_id", 260}};
  if (o.v5) {
    j["dtype"] = "float32";
    j["num_key_value_heads"] = o.multi_query ? 1 : kBigcodeHeads;
  } else {
    j["torch_dtype"] = "float32";
  }
  return j;
}

std::vector<test::TensorSpec> bigcodeTensors(const BigcodeCase& o) {
  const int64_t d = kBigcodeD, ff = kBigcodeFf, V = test::kTokenizerVocab;
  const int64_t out = d + 2 * (o.multi_query ? 1 : kBigcodeHeads) * (d / kBigcodeHeads);
  std::vector<test::TensorSpec> t = {{"transformer.wte.weight", {V, d}}, {"transformer.wpe.weight", {kBigcodePositions, d}}};
  for (int64_t l = 0; l < kBigcodeLayers; ++l) {
    const std::string p = "transformer.h." + std::to_string(l) + ".";
    t.push_back({p + "ln_1.weight", {d}, 0.2f, 1.0f});
    t.push_back({p + "ln_1.bias", {d}, 0.1f});
    t.push_back({p + "attn.c_attn.weight", {out, d}});
    t.push_back({p + "attn.c_attn.bias", {out}, 0.2f});
    t.push_back({p + "attn.c_proj.weight", {d, d}});
    t.push_back({p + "attn.c_proj.bias", {d}, 0.2f});
    t.push_back({p + "ln_2.weight", {d}, 0.2f, 1.0f});
    t.push_back({p + "ln_2.bias", {d}, 0.1f});
    t.push_back({p + "mlp.c_fc.weight", {ff, d}});
    t.push_back({p + "mlp.c_fc.bias", {ff}, 0.2f});
    t.push_back({p + "mlp.c_proj.weight", {d, ff}});
    t.push_back({p + "mlp.c_proj.bias", {d}, 0.2f});
  }
  t.push_back({"transformer.ln_f.weight", {d}, 0.2f, 1.0f});
  t.push_back({"transformer.ln_f.bias", {d}, 0.1f});
  if (!o.tied || o.save_head) t.push_back({"lm_head.weight", {V, d}});
  return t;
}

TinyModel bigcodeCheckpoint(const std::filesystem::path& dir, const BigcodeCase& o) {
  return test::writeCheckpoint(dir, bigcodeConfig(o), bigcodeTensors(o), {.dtype = o.dtype, .seed = o.seed});
}

// transformers' GPTBigCodeForCausalLM.forward, one scalar loop at a time.
Reference bigcodeRef(const TinyModel& m, const std::vector<int32_t>& ids, const BigcodeCase& o) {
  const size_t L = ids.size(), d = kBigcodeD, H = kBigcodeHeads, dh = d / H, ff = kBigcodeFf,
               V = test::kTokenizerVocab, Hkv = o.multi_query ? 1 : H;
  const double eps = 1e-5;
  auto act = [&](double u) { return o.act == "gelu" ? geluErf(u) : geluTanh(u); };
  Reference r;
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e)
      x[i][e] = m.w("transformer.wte.weight")[static_cast<size_t>(ids[i]) * d + e] + m.w("transformer.wpe.weight")[i * d + e];
  for (int64_t l = 0; l < kBigcodeLayers; ++l) {
    auto W = [&](const std::string& n) -> const std::vector<float>& {
      return m.w("transformer.h." + std::to_string(l) + "." + n);
    };
    Rows a = x;
    layerNormRef(a, W("ln_1.weight"), W("ln_1.bias"), eps);
    const size_t out_dim = d + 2 * Hkv * dh;
    const Rows c = linearRef(a, W("attn.c_attn.weight"), W("attn.c_attn.bias"), d, out_dim, true);
    Rows q = zeros(L, d), k = zeros(L, Hkv * dh), v = zeros(L, Hkv * dh);
    for (size_t i = 0; i < L; ++i) {
      if (o.multi_query) {  // c.split((d, 2·kv_dim)); key_value.split((dh, dh))
        for (size_t e = 0; e < d; ++e) q[i][e] = c[i][e];
        for (size_t e = 0; e < dh; ++e) k[i][e] = c[i][d + e], v[i][e] = c[i][d + dh + e];
      } else {  // c.view(L, H, 3·dh).split((dh, 2·dh)); key_value.split((dh, dh))
        for (size_t h = 0; h < H; ++h)
          for (size_t e = 0; e < dh; ++e) {
            q[i][h * dh + e] = c[i][h * 3 * dh + e];
            k[i][h * dh + e] = c[i][h * 3 * dh + dh + e];
            v[i][h * dh + e] = c[i][h * 3 * dh + 2 * dh + e];
          }
      }
    }
    std::vector<Rows> maps;
    Rows out;
    attentionRefOpts(q, k, v, H, {.kv_heads = Hkv, .scale = o.scale ? 1.0 / std::sqrt(double(dh)) : 1.0}, maps, out);
    r.attention.push_back(maps);
    r.q.push_back(q);
    r.k.push_back(repeatHeadsRef(k, H, Hkv, dh));
    r.v.push_back(repeatHeadsRef(v, H, Hkv, dh));
    addInto(x, linearRef(out, W("attn.c_proj.weight"), W("attn.c_proj.bias"), d, d, true));
    a = x;
    layerNormRef(a, W("ln_2.weight"), W("ln_2.bias"), eps);
    Rows u = linearRef(a, W("mlp.c_fc.weight"), W("mlp.c_fc.bias"), d, ff, true);
    for (auto& row : u)
      for (double& z : row) z = act(z);
    addInto(x, linearRef(u, W("mlp.c_proj.weight"), W("mlp.c_proj.bias"), ff, d, true));
  }
  layerNormRef(x, m.w("transformer.ln_f.weight"), m.w("transformer.ln_f.bias"), eps);
  r.hidden = x;
  const std::vector<float> none;
  r.logits = linearRef(x, o.tied && !o.save_head ? m.w("transformer.wte.weight") : m.w("lm_head.weight"), none, d, V, true);
  return r;
}

void expectBigcodeMatches(const BigcodeCase& o) {
  test::TempDir dir;
  const TinyModel tm = bigcodeCheckpoint(dir.path, o);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const std::vector<int32_t> ids = {259, 100, 101, 102, 32, 102, 40, 120, 41, 58};
  const ModelRun run = runModelIds(*model, ids, {.top_k = 3});
  EXPECT_FALSE(run.rope);
  EXPECT_EQ(run.kv_heads, o.multi_query ? 1 : kBigcodeHeads);
  expectMatches(run, bigcodeRef(tm, ids, o), 3);
}

TEST(GptBigcodeFamily, MultiQueryTiedMatchesLoopReference) {
  // StarCoder's form: multi_query, the head tied to wte (no lm_head.weight saved).
  expectBigcodeMatches({});
}

TEST(GptBigcodeFamily, MultiHeadUnscaledUntiedTransformers5MatchesLoopReference) {
  // multi_query false (per head q | k | v), scale_attn_weights false, an own lm_head, gelu, newer config form.
  expectBigcodeMatches({.v5 = true, .multi_query = false, .scale = false, .tied = false, .act = "gelu", .seed = 2});
}

TEST(GptBigcodeFamily, TiedWithSavedHeadBf16MatchesLoopReference) {
  expectBigcodeMatches({.save_head = true, .seed = 3, .dtype = DType::BF16});
}

// The multi-query default is in conformance_test.cpp; multi-head here.
TEST(GptBigcodeFamily, KvCacheGenerationMatchesFullForward) {
  test::TempDir dir;
  bigcodeCheckpoint(dir.path, {.multi_query = false, .seed = 4});
  test::expectGenerationMatchesFullForward(dir.path, "def f", 5);
}

TEST(GptBigcodeFamily, RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = bigcodeCheckpoint(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::expectFieldRefused(tm, "num_key_value_heads", "4",
                           {"config.json: field 'num_key_value_heads' is 4, but multi_query true means 1"});
  test::expectFieldRefused(tm, "scale_attn_by_inverse_layer_idx", "true",
                           {"config.json: field 'scale_attn_by_inverse_layer_idx' is true, which GPT-BigCode does not implement"});
  test::expectFieldRefused(tm, "activation_function", R"("gelu_10")",
                           {"config.json: field 'activation_function' is 'gelu_10'"});
  test::expectFieldRefused(tm, "rope_theta", "10000.0",
                           {"config.json: field 'rope_theta' is 10000.0, which GPT-BigCode does not implement"});
  // multi_query false changes c_attn's shape: the checkpoint's [d + 2·d_head, d] is refused.
  test::expectFieldRefused(tm, "multi_query", "false", {"attn.c_attn.", "has shape [24", "config.json implies [48"});
  // Untied, the head must be saved.
  test::expectFieldRefused(tm, "tie_word_embeddings", "false", {"'lm_head.weight' is missing"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

}  // namespace

TinyModel test::writeGptBigcodeFixture(const std::filesystem::path& dir, const test::FamilyFixture& f) {
  return bigcodeCheckpoint(dir, {.seed = f.seed, .dtype = f.dtype});
}

}  // namespace attn
