// The LLaMA family of engine/model/families/llama.cpp (Llama, Mistral, Qwen2)
// against a plain-loop double reference written here: RMSNorm, q/k/v, RoPE
// (q and k before and after, transformers' float32 angles at long positions,
// linear and llama3 scaling), GQA, SwiGLU, Mistral's and Qwen2's windows
// (while decoding too), and the config fields refused. The checks every
// family needs are in conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace fs = std::filesystem;

namespace attn::llama_test {
namespace {

using test::TinyModel;
using test::TinyOptions;
using namespace mref;

struct LlamaReference : Reference {
  std::vector<Rows> q_unrotated, k_unrotated;  // [layer], k repeated per query head
};

LlamaReference llamaRef(const TinyModel& m, const std::vector<int32_t>& ids) {
  const ModelConfig& c = m.config;
  const size_t L = ids.size(), d = static_cast<size_t>(c.d_model), ff = static_cast<size_t>(c.d_ff);
  const size_t H = static_cast<size_t>(c.heads), Hkv = static_cast<size_t>(c.kv_heads), dh = static_cast<size_t>(c.head_dim);
  const std::vector<double> theta = ropeThetaRef(c);
  LlamaReference r;
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] = m.w("embed_tokens.weight")[ids[i] * d + e];
  for (int64_t l = 0; l < c.layers; ++l) {
    auto W = [&](const std::string& n) { return m.w("layers." + std::to_string(l) + "." + n); };
    auto B = [&](const std::string& n) { return c.qkv_bias ? W(n) : std::vector<float>{}; };
    Rows a = x;
    rmsNormRef(a, W("input_layernorm.weight"), c.rms_eps);
    const Rows q0 = linearRef(a, W("self_attn.q_proj.weight"), B("self_attn.q_proj.bias"), d, H * dh, true);
    const Rows k0 = linearRef(a, W("self_attn.k_proj.weight"), B("self_attn.k_proj.bias"), d, Hkv * dh, true);
    const Rows v = linearRef(a, W("self_attn.v_proj.weight"), B("self_attn.v_proj.bias"), d, Hkv * dh, true);
    const Rows q = ropeRef(q0, dh, theta), k = ropeRef(k0, dh, theta);
    std::vector<Rows> maps;
    Rows out;
    attentionRef(q, k, v, H, true, maps, out, Hkv, static_cast<size_t>(c.windowOf(l)));  // Mistral's, Qwen2's layers
    r.attention.push_back(maps);
    r.q.push_back(q), r.k.push_back(repeatHeadsRef(k, H, Hkv, dh)), r.v.push_back(repeatHeadsRef(v, H, Hkv, dh));
    r.q_unrotated.push_back(q0), r.k_unrotated.push_back(repeatHeadsRef(k0, H, Hkv, dh));
    addInto(x, linearRef(out, W("self_attn.o_proj.weight"), {}, H * dh, d, true));
    a = x;
    rmsNormRef(a, W("post_attention_layernorm.weight"), c.rms_eps);
    Rows g = linearRef(a, W("mlp.gate_proj.weight"), {}, d, ff, true);
    const Rows u = linearRef(a, W("mlp.up_proj.weight"), {}, d, ff, true);
    for (size_t i = 0; i < L; ++i)
      for (size_t e = 0; e < ff; ++e) g[i][e] = silu(g[i][e]) * u[i][e];
    addInto(x, linearRef(g, W("mlp.down_proj.weight"), {}, ff, d, true));
  }
  rmsNormRef(x, m.w("norm.weight"), c.rms_eps);
  r.hidden = x;
  const std::vector<float>& head = m.has("lm_head.weight") ? m.w("lm_head.weight") : m.w("embed_tokens.weight");
  r.logits = linearRef(x, head, {}, d, static_cast<size_t>(c.vocab), true);
  return r;
}

// [SECTION] The LLaMA family against the reference
// RMSNorm, q/k/v, RoPE (q and k before and after), GQA's head mapping,
// SwiGLU and every layer's maps and hidden states, on each architecture.
void expectLlamaMatches(const TinyOptions& o, const std::string& text) {
  test::TempDir dir;
  TinyOptions with_prefix = o;
  with_prefix.arch = test::Fixture::Llama;
  with_prefix.prefix = "model.";
  const TinyModel tm = test::writeTinyModel(dir.path, with_prefix);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModel(*model, text, {.top_k = 3});
  ASSERT_GE(run.ids.size(), 2u);
  EXPECT_EQ(run.ids[0], tm.config.vocab - 2) << "tokenizer_config.json's add_bos_token puts <s> first";
  EXPECT_EQ(run.tokens[0], "<s>");
  EXPECT_TRUE(run.rope && run.causal);
  EXPECT_EQ(run.kv_heads, o.kv_heads);
  EXPECT_EQ(run.sliding_window, tm.config.sliding_window);
  EXPECT_EQ(run.layer_window, tm.config.layer_window);
  const LlamaReference ref = llamaRef(tm, run.ids);
  ASSERT_EQ(run.rope_theta.size(), 2u);
  const std::vector<double> theta = ropeThetaRef(tm.config);
  for (size_t i = 0; i < theta.size(); ++i) EXPECT_NEAR(run.rope_theta[i], theta[i], 1e-12 * theta[i]);
  expectMatches(run, ref, 3);
  for (size_t l = 0; l < ref.q_unrotated.size(); ++l)
    for (size_t i = 0; i < run.ids.size(); ++i)
      for (size_t e = 0; e < ref.q_unrotated[l][i].size(); ++e) {
        ASSERT_NEAR(run.q_unrotated[l](i, e), ref.q_unrotated[l][i][e], mref::kModelTol);
        ASSERT_NEAR(run.k_unrotated[l](i, e), ref.k_unrotated[l][i][e], mref::kModelTol);
      }
}

TEST(ModelForward, LlamaMatchesLoopReference) {
  expectLlamaMatches({.kv_heads = 2}, "the cat sat on the mat");
}

TEST(ModelForward, LlamaMultiQueryTiedLlama3ScalingBf16) {
  // One key/value head for all four query heads, the head tied to the
  // embeddings, llama3 rope_scaling, and BF16 weights converted only while used.
  expectLlamaMatches({.dtype = DType::BF16, .seed = 4, .kv_heads = 1, .tied = true, .llama3_scaling = true},
                     "then the hat");
}

// transformers 5 saves RoPE as rope_parameters and no rope_theta / rope_scaling:
// a Llama 3 checkpoint (θ = 500,000, llama3 scaling) must use both, not fall back to θ = 10,000.
TEST(ModelForward, Llama3WithTransformers5RopeParameters) {
  expectLlamaMatches({.seed = 8, .kv_heads = 2, .llama3_scaling = true, .transformers5 = true, .rope_theta = 500000.0},
                     "the cat sat on the mat");
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(
      dir.path, {.arch = test::Fixture::Llama, .llama3_scaling = true, .transformers5 = true, .rope_theta = 500000.0});
  // The folder is in transformers 5's form: RoPE only inside rope_parameters.
  const nlohmann::json config = nlohmann::json::parse(test::slurp(dir / "config.json"));
  EXPECT_FALSE(config.contains("rope_theta") || config.contains("rope_scaling") || config.contains("torch_dtype"));
  EXPECT_EQ(config["rope_parameters"]["rope_theta"], 500000.0);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelConfig& c = modelInfo(*model).config;
  EXPECT_EQ(c.rope.theta, 500000.0);
  EXPECT_EQ(c.rope.type, "llama3");
  EXPECT_EQ(c.rope.factor, 8.0);
  EXPECT_EQ(c.rope.original_positions, 64);
  EXPECT_EQ(c.dtype, "float32");
}

// [SECTION] RoPE angles as transformers forms them, at 4,096+ positions
// A Llama 3 shape (θ = 500,000, head_dim 64) over 4,374 tokens: transformers
// turns q and k by float32 angles (float32 inv_freq, float32 m·θ_i, then
// cos/sin), which at these positions differ from the exact angles by up to
// ~3·10⁻⁴ rad. The engine agrees with the float32 reference, and not with the
// exact one, in θ_i, in the rotated q and k, and in the last row's weights.
struct LongRope {
  double q = 0, k = 0, weight = 0;  // the largest |engine − reference| over rows ≥ 4,096
};

Rows rowsOf(const Mat& m) {
  Rows r = zeros(static_cast<size_t>(m.rows()), static_cast<size_t>(m.cols()));
  for (int64_t i = 0; i < m.rows(); ++i)
    for (int64_t e = 0; e < m.cols(); ++e) r[static_cast<size_t>(i)][static_cast<size_t>(e)] = m(i, e);
  return r;
}

// Head 0's weights of query i over keys 0 … i, in double.
std::vector<double> lastRowRef(const Rows& q, const Rows& k, size_t dh) {
  const size_t i = q.size() - 1;
  std::vector<double> s(i + 1);
  double mx = -1e300, z = 0;
  for (size_t j = 0; j <= i; ++j) {
    double dot = 0;
    for (size_t e = 0; e < dh; ++e) dot += q[i][e] * k[j][e];
    mx = std::max(mx, s[j] = dot / std::sqrt(static_cast<double>(dh)));
  }
  for (double& v : s) z += (v = std::exp(v - mx));
  for (double& v : s) v /= z;
  return s;
}

TEST(ModelForward, RopeAnglesAreTransformersFloat32AtLongPositions) {
  const int64_t dh = 64, d = 32, L = 4374;
  const nlohmann::json plain = {{"rope_type", "default"}, {"rope_theta", 500000.0}};
  const nlohmann::json llama3 = {{"rope_type", "llama3"}, {"rope_theta", 500000.0}, {"factor", 8.0},
                                 {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                                 {"original_max_position_embeddings", 8192}};
  for (const nlohmann::json& rope : {plain, llama3}) {
    SCOPED_TRACE(rope.dump());
    const nlohmann::json config = {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"},
                                   {"num_hidden_layers", 1}, {"num_attention_heads", 2}, {"num_key_value_heads", 1},
                                   {"hidden_size", d}, {"head_dim", dh}, {"intermediate_size", 16},
                                   {"max_position_embeddings", 8192}, {"vocab_size", test::kTokenizerVocab},
                                   {"rms_norm_eps", 1e-5}, {"hidden_act", "silu"}, {"tie_word_embeddings", true},
                                   {"bos_token_id", 259}, {"eos_token_id", 260}, {"dtype", "float32"},
                                   {"rope_parameters", rope}};
    const std::string l0 = "model.layers.0.";
    test::TempDir dir;
    test::writeCheckpoint(
        dir.path, config,
        {{"model.embed_tokens.weight", {test::kTokenizerVocab, d}, 1.0f}, {l0 + "input_layernorm.weight", {d}, 0.1f, 1.0f},
         {l0 + "self_attn.q_proj.weight", {2 * dh, d}, 0.6f}, {l0 + "self_attn.k_proj.weight", {dh, d}, 0.6f},
         {l0 + "self_attn.v_proj.weight", {dh, d}}, {l0 + "self_attn.o_proj.weight", {d, 2 * dh}},
         {l0 + "post_attention_layernorm.weight", {d}, 0.1f, 1.0f}, {l0 + "mlp.gate_proj.weight", {16, d}},
         {l0 + "mlp.up_proj.weight", {16, d}}, {l0 + "mlp.down_proj.weight", {d, 16}}, {"model.norm.weight", {d}, 0.1f, 1.0f}},
        {.seed = 21});
    std::vector<int32_t> ids(static_cast<size_t>(L));
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 37 + 11) % 259);
    const auto model = loadModel(filesOnDisk(dir.path.string()));
    const ModelRun run = runModelIds(*model, ids, {.top_k = 0, .maps = {MapsChoice::Mode::All}});  // 2 maps of 4,374²
    const RopeSpec& spec = modelInfo(*model).config.rope;
    const std::vector<double> theta = ropeThetaRef(spec, dh), exact_theta = ropeThetaRef(spec, dh, true);
    ASSERT_EQ(run.rope_theta, theta) << "θ_i: transformers' float32 inv_freq, bit for bit";
    ASSERT_EQ(run.q_unrotated.size(), 1u);
    ASSERT_EQ(run.q[0].rows(), L);
    ASSERT_EQ(run.q[0].cols(), 2 * dh);
    ASSERT_EQ(run.k[0].cols(), 2 * dh);  // the one key head repeated for both query heads
    // The references turn the engine's own unrotated q and k, head 0, as transformers turns them, and exactly.
    const Rows q0 = rowsOf(run.q_unrotated[0].leftCols(dh)), k0 = rowsOf(run.k_unrotated[0].leftCols(dh));
    const Rows q = ropeRef(q0, dh, theta), k = ropeRef(k0, dh, theta);
    const Rows q_exact = ropeRef(q0, dh, exact_theta, 0, true), k_exact = ropeRef(k0, dh, exact_theta, 0, true);
    const Mat& map = run.attention[0][0];
    const std::vector<double> w = lastRowRef(q, k, dh), w_exact = lastRowRef(q_exact, k_exact, dh);
    LongRope f32_gap, exact_gap;
    for (size_t i = 4096; i < static_cast<size_t>(L); ++i)
      for (size_t e = 0; e < static_cast<size_t>(dh); ++e) {
        const int64_t r = static_cast<int64_t>(i), c = static_cast<int64_t>(e);
        f32_gap.q = std::max(f32_gap.q, std::abs(run.q[0](r, c) - q[i][e]));
        f32_gap.k = std::max(f32_gap.k, std::abs(run.k[0](r, c) - k[i][e]));
        exact_gap.q = std::max(exact_gap.q, std::abs(run.q[0](r, c) - q_exact[i][e]));
        exact_gap.k = std::max(exact_gap.k, std::abs(run.k[0](r, c) - k_exact[i][e]));
      }
    for (size_t j = 0; j < w.size(); ++j) {
      const double got = map(L - 1, static_cast<int64_t>(j));
      f32_gap.weight = std::max(f32_gap.weight, std::abs(got - w[j]));
      exact_gap.weight = std::max(exact_gap.weight, std::abs(got - w_exact[j]));
    }
    std::printf("  %s: engine − float32 reference: q %.2e, k %.2e, weight %.2e; engine − exact angles: q %.2e, k %.2e, weight %.2e\n",
                spec.type.c_str(), f32_gap.q, f32_gap.k, f32_gap.weight, exact_gap.q, exact_gap.k, exact_gap.weight);
    // Against the float32 angles: q and k to float32 rounding, the weights to the float32 scores' (~10⁻⁶).
    EXPECT_LT(f32_gap.q, 2e-6);
    EXPECT_LT(f32_gap.k, 2e-6);
    EXPECT_LT(f32_gap.weight, 1e-5);
    // The exact angles are another computation: q and k off by ~10⁻³, the weights by an order more than the above
    // (measured: 1.2e-4 plain, 1.1e-5 with llama3's slowed frequencies).
    EXPECT_GT(exact_gap.q, 1e-4);
    EXPECT_GT(exact_gap.k, 1e-4);
    EXPECT_GT(exact_gap.weight, 10 * f32_gap.weight);
  }
}

// rope_type "linear" divides every frequency by the factor, in both config forms.
TEST(ModelForward, LinearRopeScalingBothConfigForms) {
  for (const bool v5 : {false, true}) {
    test::TempDir dir;
    TinyModel tm = test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama, .seed = 9, .transformers5 = v5});
    const std::string scaled = R"({"rope_type": "linear", "rope_theta": 50.0, "factor": 4.0})";
    test::setConfigField(tm, v5 ? "rope_parameters" : "rope_scaling", scaled);
    tm.config.rope.type = "linear", tm.config.rope.factor = 4.0;
    const std::vector<int32_t> ids = {259, 5, 6, 7, 8, 9};
    const ModelRun run = runModelIds(*loadModel(filesOnDisk(dir.path.string())), ids, {.top_k = 0});
    const auto ref = llamaRef(tm, ids);
    for (size_t h = 0; h < 4; ++h)
      for (size_t i = 0; i < ids.size(); ++i)
        for (size_t j = 0; j <= i; ++j)
          ASSERT_NEAR(run.attention[1][h](i, j), ref.attention[1][h][i][j], mref::kModelTol) << (v5 ? "rope_parameters" : "rope_scaling");
    EXPECT_NEAR(run.rope_theta[0], 1.0 / 4.0, 1e-12);
  }
}

TEST(ModelForward, Qwen2BiasesOnQkv) {
  expectLlamaMatches({.seed = 5, .family = "qwen2", .kv_heads = 2}, "the the the");
}

// transformers 5 saves layer_types (all "full_attention" without use_sliding_window) and a null sliding_window.
TEST(ModelForward, Qwen2AsTransformers5SavesIt) {
  expectLlamaMatches({.seed = 11, .family = "qwen2", .kv_heads = 2, .transformers5 = true}, "the cat sat on the mat");
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama, .family = "qwen2", .transformers5 = true});
  const nlohmann::json config = nlohmann::json::parse(test::slurp(dir / "config.json"));
  EXPECT_EQ(config["layer_types"], nlohmann::json({"full_attention", "full_attention"}));
  EXPECT_TRUE(config["sliding_window"].is_null());
}

// Qwen2's own windows (use_sliding_window): the layers from max_window_layers on keep keys j with
// i − j < sliding_window, in 4.x's config (use_sliding_window, max_window_layers) and in
// transformers 5's (layer_types, as Qwen2Config builds it).
TEST(ModelForward, Qwen2SlidingWindowLayersBothConfigForms) {
  for (const bool v5 : {false, true}) {
    SCOPED_TRACE(v5 ? "layer_types" : "max_window_layers");
    const TinyOptions o = {.seed = 12, .family = "qwen2", .kv_heads = 2, .sliding_window = 3, .max_window_layers = 1,
                           .transformers5 = v5};
    expectLlamaMatches(o, "a b c d e f g");
    test::TempDir dir;
    test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama, .family = "qwen2", .sliding_window = 3,
                                    .max_window_layers = 1, .transformers5 = v5});
    const ModelRun run = runModel(*loadModel(filesOnDisk(dir.path.string())), "a b c d e f", {.top_k = 0});
    EXPECT_EQ(run.layer_window, (std::vector<int64_t>{0, 3}));
    for (size_t l = 0; l < 2; ++l) {
      const Mat& a = run.attention[l][1];
      for (int64_t i = 0; i < a.rows(); ++i)
        for (int64_t j = 0; j < a.cols(); ++j) {
          if (j > i || (l == 1 && i - j >= 3)) EXPECT_EQ(a(i, j), 0.0f) << l << ": " << i << "," << j;
          else EXPECT_GT(a(i, j), 0.0f) << l << ": " << i << "," << j;
        }
    }
  }
  // max_window_layers at or past the last layer: no layer slides.
  expectLlamaMatches({.seed = 13, .family = "qwen2", .kv_heads = 2, .sliding_window = 3, .max_window_layers = 2},
                     "a b c d e f g");
}

TEST(ModelForward, MistralSlidingWindow) {
  expectLlamaMatches({.seed = 6, .family = "mistral", .kv_heads = 4, .sliding_window = 3}, "the cat sat on the mat");
  // The window itself: row i keeps keys i−2 … i only.
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama, .family = "mistral", .sliding_window = 3});
  const ModelRun run = runModel(*loadModel(filesOnDisk(dir.path.string())), "a b c d e f", {.top_k = 0});
  const Mat& a = run.attention[1][2];
  for (int64_t i = 0; i < a.rows(); ++i)
    for (int64_t j = 0; j < a.cols(); ++j) {
      if (j > i || i - j >= 3) EXPECT_EQ(a(i, j), 0.0f) << i << "," << j;
      else EXPECT_GT(a(i, j), 0.0f) << i << "," << j;
    }
}

TEST(Generate, MistralWindowSlidesDuringDecoding) {
  // Window 3 over 4 prompt tokens and 6 new: decode steps drop keys that fall out of the window.
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama, .seed = 3, .family = "mistral", .sliding_window = 3});
  test::expectGenerationMatchesFullForward(dir.path, "a cat");
}

TEST(Generate, Qwen2WindowLayerSlidesDuringDecoding) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama, .seed = 4, .family = "qwen2", .sliding_window = 3,
                                  .max_window_layers = 1, .transformers5 = true});
  test::expectGenerationMatchesFullForward(dir.path, "a cat");
}

TEST(ModelErrors, LlamaConfigProblems) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::expectFieldRefused(tm, "num_key_value_heads", "3",
                           {"config.json", "num_key_value_heads (3) must divide num_attention_heads (4)"});
  test::expectFieldRefused(tm, "rope_scaling", R"({"rope_type": "yarn", "factor": 4.0})",
                           {"config.json rope_scaling: field 'rope_type' is 'yarn', which is not implemented"});
  test::expectFieldRefused(tm, "rope_scaling", R"({"type": "dynamic", "factor": 4.0})",
                           {"config.json rope_scaling: field 'type' is 'dynamic', which is not implemented"});
  // transformers 5 writes rope_parameters instead: read, and refused alike.
  test::expectFieldRefused(tm, "rope_parameters", R"({"rope_type": "yarn", "rope_theta": 500000.0, "factor": 4.0})",
                           {"config.json rope_parameters: field 'rope_type' is 'yarn', which is not implemented"});
  test::expectFieldRefused(tm, "rope_parameters", R"({"rope_type": "longrope", "rope_theta": 10000.0})",
                           {"config.json rope_parameters: field 'rope_type' is 'longrope'"});
  test::expectFieldRefused(tm, "rope_parameters", R"({"rope_type": "linear", "rope_theta": 10000.0, "factor": 2.0, "attention_factor": 0.5})",
                           {"config.json rope_parameters: field 'attention_factor' is 0.5, which is not implemented"});
  test::expectFieldRefused(tm, "rope_parameters", R"("big")", {"config.json: field 'rope_parameters' must be an object"});
  // A field that changes the computation and that Llama does not implement is refused, never ignored.
  test::expectFieldRefused(tm, "partial_rotary_factor", "0.5",
                           {"config.json: field 'partial_rotary_factor' is 0.5, which Llama does not implement (expected 1.0)"});
  test::expectFieldRefused(tm, "layer_types", R"(["sliding_attention", "full_attention"])",
                           {"config.json: field 'layer_types'", "which Llama does not implement"});
  // Only full_attention changes nothing for Llama, which has no window: read, not refused.
  test::setConfigField(tm, "layer_types", R"(["full_attention", "full_attention"])");
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::setConfigField(tm, "layer_types", "null");
  test::expectFieldRefused(tm, "use_qk_norm", "true", {"field 'use_qk_norm' is true, which Llama does not implement"});
  test::expectFieldRefused(tm, "rope_scaling", R"({"rope_type": "llama3", "factor": 8.0})",
                           {"config.json", "field 'low_freq_factor' is missing"});
  // A GGUF file's rope_freqs as config.json holds them: one positive divisor per frequency (d_head 4: two).
  test::expectFieldRefused(tm, "rope_scaling", R"({"freq_factors": [1.0]})",
                           {"config.json", "freq_factors has 1 factors, but RoPE turns 2 frequencies"});
  test::expectFieldRefused(tm, "rope_scaling", R"({"freq_factors": [1.0, 0]})",
                           {"config.json rope_scaling: field 'freq_factors' has 0", "positive"});
  test::expectFieldRefused(tm, "rope_theta", "-1", {"config.json", "field 'rope_theta' must be a number from"});
  test::expectFieldRefused(tm, "hidden_act", R"("gelu")", {"config.json", "field 'hidden_act' is 'gelu'"});
  test::expectFieldRefused(tm, "model_type", R"("mistral")",
                           {"config.json", "field 'model_type' is 'mistral'", "LlamaForCausalLM"});
  test::expectFieldRefused(tm, "head_dim", "3", {"config.json", "field 'head_dim' must be even"});
  test::expectFieldRefused(tm, "mlp_bias", "true", {"config.json", "mlp_bias"});
  // Tied: a saved lm_head.weight would go unused.
  test::expectFieldRefused(tm, "tie_word_embeddings", "true", {"lm_head.weight", "does not use"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  fs::remove(dir / "tokenizer.json");
  test::expectHas(test::loadError(dir.path), {"tokenizer.json", "missing", "Llama's tokenizer needs tokenizer.json"});
}

// Qwen2's windows: a sliding layer needs use_sliding_window (transformers has no window otherwise), and
// a window on a family that does not read layer_types keeps it refused.
TEST(ModelErrors, Qwen2AndMistralWindowProblems) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama, .family = "qwen2", .transformers5 = true});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  const std::string full = R"(["full_attention", "full_attention"])";
  test::expectFieldRefused(tm, "layer_types", R"(["full_attention", "sliding_attention"])",
                           {"config.json: field 'layer_types' makes layer 1 sliding_attention, but Qwen2 has no "
                           "sliding_window to mask it with (use_sliding_window is not true"});
  test::expectFieldRefused(tm, "layer_types", R"(["full_attention", "chunked_attention"])",
                           {"field 'layer_types' has \"chunked_attention\", which is not implemented"});
  test::expectFieldRefused(tm, "layer_types", R"(["full_attention"])", {"field 'layer_types' must list one type per layer (2)"});
  test::setConfigField(tm, "use_sliding_window", "true");
  test::setConfigField(tm, "layer_types", "null");
  test::expectFieldRefused(tm, "max_window_layers", "0.5", {"field 'max_window_layers' must be an integer, got 0.5"});
  test::expectFieldRefused(tm, "sliding_window", "0", {"field 'sliding_window' must be an integer from 1"});
  test::TempDir mistral;
  const TinyModel tmm =
      test::writeTinyModel(mistral.path, {.arch = test::Fixture::Llama, .family = "mistral", .sliding_window = 3});
  test::expectFieldRefused(tmm, "layer_types", full, {"field 'layer_types'", "which Mistral does not implement"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(mistral.path.string())));
}

}  // namespace
}  // namespace attn::llama_test
