// BLOOM (engine/model/families/bloom.cpp) against a plain-loop double reference
// written from transformers' models/bloom/modeling_bloom.py: tiny checkpoints
// in BloomForCausalLM's exact tensor names and shapes (the fused
// query_key_value interleaved per head), ALiBi's slopes for a head count that
// is not a power of two, both config generations and the refused fields. The
// checks every family needs are in conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/engine/model/families/conformance.h"
#include "tests/gguf_fixture.h"
#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace fs = std::filesystem;

namespace attn {
namespace {

using namespace mref;
using test::TinyModel;

struct BloomCase {
  bool transformers5 = true;  // dtype, hidden_size, n_layer / n_head; 4.x: torch_dtype, n_embed, num_attention_heads
  int64_t heads = 6;
  int64_t d = 24;
  bool tied = true;
  DType dtype = DType::F32;
  uint64_t seed = 1;
  float scale = 0.4f;  // the matrices' σ
};

constexpr int64_t kBloomLayers = 2;

TinyModel writeBloom(const fs::path& dir, const BloomCase& o) {
  const int64_t V = test::kTokenizerVocab, d = o.d, ff = 4 * d;
  nlohmann::json config = {{"architectures", {"BloomForCausalLM"}},
                           {"model_type", "bloom"},
                           {"n_layer", kBloomLayers},
                           {"vocab_size", V},
                           {"layer_norm_epsilon", 1e-5},
                           {"apply_residual_connection_post_layernorm", false},
                           {"pretraining_tp", 1},
                           {"slow_but_exact", false},
                           {"tie_word_embeddings", o.tied},
                           {"bos_token_id", 259},
                           {"eos_token_id", 260}};
  if (o.transformers5) {
    config["hidden_size"] = d;
    config["n_head"] = o.heads;
    config["dtype"] = "float32";
    config["transformers_version"] = "5.0.0";
  } else {  // as bigscience/bloom's config.json names its fields
    config["n_embed"] = d;
    config["num_attention_heads"] = o.heads;
    config["n_inner"] = nullptr;
    config["masked_softmax_fusion"] = true;
    config["offset_alibi"] = 100;
    config["seq_length"] = 64;
    config["torch_dtype"] = "bfloat16";
    config["transformers_version"] = "4.21.0";
  }
  std::vector<test::TensorSpec> t = {{"transformer.word_embeddings.weight", {V, d}},
                                     {"transformer.word_embeddings_layernorm.weight", {d}, 0.2f, 1.0f},
                                     {"transformer.word_embeddings_layernorm.bias", {d}, 0.2f}};
  for (int64_t l = 0; l < kBloomLayers; ++l) {
    const std::string p = "transformer.h." + std::to_string(l) + ".";
    t.push_back({p + "input_layernorm.weight", {d}, 0.2f, 1.0f});
    t.push_back({p + "input_layernorm.bias", {d}, 0.2f});
    t.push_back({p + "self_attention.query_key_value.weight", {3 * d, d}});
    t.push_back({p + "self_attention.query_key_value.bias", {3 * d}, 0.2f});
    t.push_back({p + "self_attention.dense.weight", {d, d}});
    t.push_back({p + "self_attention.dense.bias", {d}, 0.2f});
    t.push_back({p + "post_attention_layernorm.weight", {d}, 0.2f, 1.0f});
    t.push_back({p + "post_attention_layernorm.bias", {d}, 0.2f});
    t.push_back({p + "mlp.dense_h_to_4h.weight", {ff, d}});
    t.push_back({p + "mlp.dense_h_to_4h.bias", {ff}, 0.2f});
    t.push_back({p + "mlp.dense_4h_to_h.weight", {d, ff}});
    t.push_back({p + "mlp.dense_4h_to_h.bias", {d}, 0.2f});
  }
  t.push_back({"transformer.ln_f.weight", {d}, 0.2f, 1.0f});
  t.push_back({"transformer.ln_f.bias", {d}, 0.2f});
  if (!o.tied) t.push_back({"lm_head.weight", {V, d}});
  for (test::TensorSpec& s : t)
    if (s.shape.size() > 1) s.scale = o.scale;
  test::TinyOptions options;
  options.dtype = o.dtype;
  options.seed = o.seed;
  // BLOOM's tokenizer adds no <s>.
  return test::writeCheckpoint(dir, config, t, options, {}, R"({"add_bos_token": false, "eos_token": "</s>"})");
}

// build_alibi_tensor's slopes, written out: the closest power of two P ≤ n
// with base 2^(−2^−(log2 P − 3)), powers 1 … P; the remaining heads from
// 2P's base at odd powers 1, 3, 5, …
std::vector<double> bloomSlopesRef(int64_t n) {
  int64_t P = 1;
  while (P * 2 <= n) P *= 2;
  std::vector<double> s;
  const double base = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(P)) - 3)));
  for (int64_t i = 1; i <= P; ++i) s.push_back(std::pow(base, static_cast<double>(i)));
  if (P != n) {
    const double extra = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(2 * P)) - 3)));
    for (int64_t i = 0; i < std::min(P, n - P); ++i) s.push_back(std::pow(extra, static_cast<double>(2 * i + 1)));
  }
  return s;
}

// transformers' BloomModel / BloomBlock / BloomAttention, in double precision.
Reference bloomRef(const TinyModel& m, const BloomCase& o, const std::vector<int32_t>& ids) {
  const size_t L = ids.size(), d = static_cast<size_t>(o.d), H = static_cast<size_t>(o.heads), dh = d / H, ff = 4 * d;
  const std::vector<float> none;
  auto w = [&](const std::string& name) -> const std::vector<float>& { return m.w(name); };
  Reference r;
  // hidden = word_embeddings_layernorm(word_embeddings(ids))
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] = w("transformer.word_embeddings.weight")[ids[i] * d + e];
  layerNormRef(x, w("transformer.word_embeddings_layernorm.weight"), w("transformer.word_embeddings_layernorm.bias"),
               1e-5);
  const std::vector<double> slopes = bloomSlopesRef(o.heads);
  for (int64_t l = 0; l < kBloomLayers; ++l) {
    const std::string p = "transformer.h." + std::to_string(l) + ".";
    Rows a = x;
    layerNormRef(a, w(p + "input_layernorm.weight"), w(p + "input_layernorm.bias"), 1e-5);
    // fused_qkv [L, 3d] viewed (L, H, 3·dh), split into q, k, v of dh each
    const Rows fused = linearRef(a, w(p + "self_attention.query_key_value.weight"),
                                 w(p + "self_attention.query_key_value.bias"), d, 3 * d, true);
    Rows q = zeros(L, d), k = zeros(L, d), v = zeros(L, d);
    for (size_t i = 0; i < L; ++i)
      for (size_t h = 0; h < H; ++h)
        for (size_t e = 0; e < dh; ++e) {
          q[i][h * dh + e] = fused[i][h * 3 * dh + e];
          k[i][h * dh + e] = fused[i][h * 3 * dh + dh + e];
          v[i][h * dh + e] = fused[i][h * 3 * dh + 2 * dh + e];
        }
    // baddbmm(alibi, q, kᵀ, beta = 1, alpha = 1/√dh), alibi = slope_h · key position; causal; softmax
    std::vector<Rows> maps;
    Rows ctx;
    attentionRefOpts(q, k, v, H, {.alibi = slopes}, maps, ctx);
    r.attention.push_back(maps), r.q.push_back(q), r.k.push_back(k), r.v.push_back(v);
    addInto(x, linearRef(ctx, w(p + "self_attention.dense.weight"), w(p + "self_attention.dense.bias"), d, d, true));
    a = x;
    layerNormRef(a, w(p + "post_attention_layernorm.weight"), w(p + "post_attention_layernorm.bias"), 1e-5);
    Rows f = linearRef(a, w(p + "mlp.dense_h_to_4h.weight"), w(p + "mlp.dense_h_to_4h.bias"), d, ff, true);
    for (auto& row : f)  // bloom_gelu_forward: x · 0.5 · (1 + tanh(0.79788456 · x · (1 + 0.044715 · x²)))
      for (double& e : row) e = e * 0.5 * (1.0 + std::tanh(0.79788456 * e * (1 + 0.044715 * e * e)));
    addInto(x, linearRef(f, w(p + "mlp.dense_4h_to_h.weight"), w(p + "mlp.dense_4h_to_h.bias"), ff, d, true));
  }
  layerNormRef(x, w("transformer.ln_f.weight"), w("transformer.ln_f.bias"), 1e-5);
  r.hidden = x;
  r.logits = linearRef(x, o.tied ? w("transformer.word_embeddings.weight") : w("lm_head.weight"), none, d,
                       static_cast<size_t>(test::kTokenizerVocab), true);
  return r;
}

void expectBloomMatches(const BloomCase& o, const std::string& text) {
  test::TempDir dir;
  const TinyModel tm = writeBloom(dir.path, o);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModel(*model, text, {.top_k = 3});
  ASSERT_GE(run.ids.size(), 3u);
  EXPECT_NE(run.ids[0], 259) << "BLOOM's tokenizer adds no <s>";
  EXPECT_TRUE(run.causal);
  EXPECT_FALSE(run.rope);
  const std::vector<double> slopes = bloomSlopesRef(o.heads);
  ASSERT_EQ(run.alibi_slopes.size(), slopes.size());
  for (size_t h = 0; h < slopes.size(); ++h) EXPECT_NEAR(run.alibi_slopes[h], slopes[h], 1e-12) << h;
  expectMatches(run, bloomRef(tm, o, run.ids), 3);
  const ModelConfig& c = modelInfo(*model).config;
  EXPECT_TRUE(c.alibi);
  EXPECT_EQ(c.d_ff, 4 * o.d);
  EXPECT_EQ(c.positions, o.transformers5 ? 2048 : 64);
}

TEST(BloomFamily, SlopesOfBuildAlibiTensor) {
  // Written out by hand from build_alibi_tensor: 6 heads = 4 (base 1/4) + 2 of 8's (base 1/2, odd powers).
  const std::vector<double> six = {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
  EXPECT_EQ(bloomSlopesRef(6), six);
  // 8 heads: base 2^−1, powers 1 … 8.
  const std::vector<double> eight = {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625};
  EXPECT_EQ(bloomSlopesRef(8), eight);
  // 12 heads: 8's eight, then 16's base 2^−0.5 at powers 1, 3, 5, 7.
  const std::vector<double> twelve = bloomSlopesRef(12);
  ASSERT_EQ(twelve.size(), 12u);
  EXPECT_NEAR(twelve[8], std::pow(2.0, -0.5), 1e-15);
  EXPECT_NEAR(twelve[11], std::pow(2.0, -3.5), 1e-15);
  for (const int64_t heads : {6, 8, 12, 3}) {
    test::TempDir dir;
    writeBloom(dir.path, {.heads = heads, .d = 4 * heads});
    const ModelRun run = runModelIds(*loadModel(filesOnDisk(dir.path.string())), {5, 6}, {.top_k = 0});
    const std::vector<double> want = bloomSlopesRef(heads);
    ASSERT_EQ(run.alibi_slopes.size(), want.size());
    for (size_t h = 0; h < want.size(); ++h) EXPECT_NEAR(run.alibi_slopes[h], want[h], 1e-12) << heads << "/" << h;
  }
}

TEST(BloomFamily, SixHeadsTransformers5MatchesReference) {
  expectBloomMatches({}, "the cat sat on the mat");
}

TEST(BloomFamily, FourHeadsTransformers4Bf16MatchesReference) {
  expectBloomMatches({.transformers5 = false, .heads = 4, .d = 16, .dtype = DType::BF16, .seed = 2}, "then the hat");
}

TEST(BloomFamily, UntiedHead) {
  expectBloomMatches({.heads = 3, .d = 12, .tied = false, .seed = 3}, "a cat a hat");
}

TEST(BloomFamily, RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = writeBloom(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  // Compute fields of other families are refused, never ignored.
  test::expectFieldRefused(tm, "rope_theta", "10000.0", {"config.json", "field 'rope_theta' is 10000.0", "BLOOM"});
  test::expectFieldRefused(tm, "hidden_act", R"("relu")", {"config.json", "field 'hidden_act' is \"relu\"", "BLOOM"});
  test::expectFieldRefused(tm, "n_head", "5", {"config.json", "heads (5) must divide hidden_size (24)"});
  test::expectFieldRefused(tm, "tie_word_embeddings", "false", {"lm_head.weight", "is missing"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
}

}  // namespace

// Rows of 256: d 256 (4 heads of 64), matrices of σ 0.1; tied (the converter writes the head again).
TinyModel test::writeBloomGgufParent(const fs::path& dir) {
  return writeBloom(dir, {.heads = 4, .d = 256, .scale = 0.1f});
}

TinyModel test::writeBloomFixture(const fs::path& dir, const test::FamilyFixture& f) {
  return writeBloom(dir, {.dtype = f.dtype, .seed = f.seed});
}

}  // namespace attn
