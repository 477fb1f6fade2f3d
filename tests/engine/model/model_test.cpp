// Real checkpoints: the safetensors reader, GPT-2 and BERT loading and the
// forward pass against a plain-loop reference written here, head summaries,
// rollout, patterns on a real head, and every bad input of issue 4.
#include "engine/model/kinds/generate.h"
#include "engine/model/blocks/head_metrics.h"
#include "engine/model/analysis/head_patterns.h"
#include "engine/model/blocks/maps.h"
#include "engine/model/model.h"
#include "engine/model/blocks/model_impl.h"
#include "engine/model/checkpoint/safetensors.h"
#include "engine/parallel.h"

#include "tests/engine_reference.h"
#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <set>

namespace fs = std::filesystem;

namespace attn {
namespace {

using test::TinyModel;
using test::TinyOptions;

// [SECTION] Plain-loop references of GPT-2, BERT and the LLaMA family (tests/model_reference.h)
using namespace mref;

Reference gpt2Ref(const TinyModel& m, const std::vector<int32_t>& ids) {
  const ModelConfig& c = m.config;
  const size_t L = ids.size(), d = static_cast<size_t>(c.d_model), ff = static_cast<size_t>(c.d_ff);
  Reference r;
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] = m.w("wte.weight")[ids[i] * d + e] + m.w("wpe.weight")[i * d + e];
  for (int64_t l = 0; l < c.layers; ++l) {
    auto W = [&](const std::string& n) { return m.w("h." + std::to_string(l) + "." + n); };
    Rows a = x;
    layerNormRef(a, W("ln_1.weight"), W("ln_1.bias"), c.ln_eps);
    const Rows qkv = linearRef(a, W("attn.c_attn.weight"), W("attn.c_attn.bias"), d, 3 * d, false);
    Rows q = zeros(L, d), k = zeros(L, d), v = zeros(L, d);
    for (size_t i = 0; i < L; ++i)
      for (size_t e = 0; e < d; ++e) q[i][e] = qkv[i][e], k[i][e] = qkv[i][d + e], v[i][e] = qkv[i][2 * d + e];
    const Rows out = attendAndKeep(r, q, k, v, static_cast<size_t>(c.heads), true);
    const Rows proj = linearRef(out, W("attn.c_proj.weight"), W("attn.c_proj.bias"), d, d, false);
    addInto(x, proj);
    a = x;
    layerNormRef(a, W("ln_2.weight"), W("ln_2.bias"), c.ln_eps);
    Rows f = linearRef(a, W("mlp.c_fc.weight"), W("mlp.c_fc.bias"), d, ff, false);
    for (auto& row : f)
      for (double& u : row) u = 0.5 * u * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (u + 0.044715 * u * u * u)));
    const Rows f2 = linearRef(f, W("mlp.c_proj.weight"), W("mlp.c_proj.bias"), ff, d, false);
    addInto(x, f2);
  }
  layerNormRef(x, m.w("ln_f.weight"), m.w("ln_f.bias"), c.ln_eps);
  r.hidden = x;
  const std::vector<float>& head = m.has("lm_head.weight") ? m.w("lm_head.weight") : m.w("wte.weight");
  r.logits = linearRef(x, head, {}, d, static_cast<size_t>(c.vocab), true);
  return r;
}


Reference bertRef(const TinyModel& m, const std::vector<int32_t>& ids) {
  const ModelConfig& c = m.config;
  const size_t L = ids.size(), d = static_cast<size_t>(c.d_model), ff = static_cast<size_t>(c.d_ff);
  Reference r;
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e)
      x[i][e] = m.w("embeddings.word_embeddings.weight")[ids[i] * d + e] +
                m.w("embeddings.position_embeddings.weight")[i * d + e] +
                m.w("embeddings.token_type_embeddings.weight")[e];
  layerNormRef(x, m.w("embeddings.LayerNorm.weight"), m.w("embeddings.LayerNorm.bias"), c.ln_eps);
  for (int64_t l = 0; l < c.layers; ++l) {
    auto W = [&](const std::string& n) { return m.w("encoder.layer." + std::to_string(l) + "." + n); };
    const Rows q = linearRef(x, W("attention.self.query.weight"), W("attention.self.query.bias"), d, d, true);
    const Rows k = linearRef(x, W("attention.self.key.weight"), W("attention.self.key.bias"), d, d, true);
    const Rows v = linearRef(x, W("attention.self.value.weight"), W("attention.self.value.bias"), d, d, true);
    const Rows out = attendAndKeep(r, q, k, v, static_cast<size_t>(c.heads), false);
    const Rows o = linearRef(out, W("attention.output.dense.weight"), W("attention.output.dense.bias"), d, d, true);
    addInto(x, o);
    layerNormRef(x, W("attention.output.LayerNorm.weight"), W("attention.output.LayerNorm.bias"), c.ln_eps);
    Rows f = linearRef(x, W("intermediate.dense.weight"), W("intermediate.dense.bias"), d, ff, true);
    for (auto& row : f)
      for (double& u : row) u = geluErf(u);
    const Rows f2 = linearRef(f, W("output.dense.weight"), W("output.dense.bias"), ff, d, true);
    addInto(x, f2);
    layerNormRef(x, W("output.LayerNorm.weight"), W("output.LayerNorm.bias"), c.ln_eps);
  }
  r.hidden = x;
  if (m.has("cls.predictions.bias")) {
    Rows t = linearRef(x, m.w("cls.predictions.transform.dense.weight"), m.w("cls.predictions.transform.dense.bias"),
                       d, d, true);
    for (auto& row : t)
      for (double& u : row) u = geluErf(u);
    layerNormRef(t, m.w("cls.predictions.transform.LayerNorm.weight"),
                 m.w("cls.predictions.transform.LayerNorm.bias"), c.ln_eps);
    const std::vector<float>& dec = m.has("cls.predictions.decoder.weight") ? m.w("cls.predictions.decoder.weight")
                                                                            : m.w("embeddings.word_embeddings.weight");
    r.logits = linearRef(t, dec, m.w("cls.predictions.bias"), d, static_cast<size_t>(c.vocab), true);
  }
  return r;
}

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

// [SECTION] Forward pass against the reference
// The LM head runs on the asked positions only; their predictions equal the
// all-positions run's, and the other rows stay empty.
TEST(ModelForward, PredictAtRunsTheHeadOnTheAskedPositionsOnly) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun all = runModel(*model, "the cat sat on", {.top_k = 3});
  const int64_t L = static_cast<int64_t>(all.ids.size());
  ASSERT_GE(L, 4);
  const ModelRun some = runModel(*model, "the cat sat on", {.top_k = 3, .predict_at = {1, -1}});
  ASSERT_EQ(some.top_k.size(), static_cast<size_t>(L));
  for (int64_t i = 0; i < L; ++i) {
    const auto& row = some.top_k[static_cast<size_t>(i)];
    if (i != 1 && i != L - 1) {
      EXPECT_TRUE(row.empty()) << "position " << i;
      continue;
    }
    ASSERT_EQ(row.size(), 3u) << "position " << i;
    for (size_t t = 0; t < 3; ++t) {
      EXPECT_EQ(row[t].id, all.top_k[static_cast<size_t>(i)][t].id);
      EXPECT_NEAR(row[t].probability, all.top_k[static_cast<size_t>(i)][t].probability, 1e-6);
    }
  }
  EXPECT_LT(some.flops, all.flops);  // the head's FLOPs for 2 rows, not L
  EXPECT_EQ(some.attention[0][0], all.attention[0][0]);
  // predictTokens on the run's hidden states is the same function.
  const auto again = predictTokens(*model, all.hidden, {2}, 3);
  ASSERT_EQ(again[2].size(), 3u);
  EXPECT_EQ(again[2][0].id, all.top_k[2][0].id);
  try {
    runModel(*model, "the cat sat on", {.predict_at = {L}});
    ADD_FAILURE() << "position L was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--predict-at: position " + std::to_string(L)), std::string::npos) << e.what();
  }
}

TEST(ModelForward, Gpt2MatchesLoopReference) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModel(*model, "the cat sat", {.top_k = 4});
  ASSERT_GE(run.ids.size(), 3u);
  EXPECT_TRUE(run.causal);
  EXPECT_EQ(run.tokens.size(), run.ids.size());
  EXPECT_GT(run.flops, 0);
  expectMatches(run, gpt2Ref(tm, run.ids), 4);
  // Causal: nothing above the diagonal; every row sums to 1.
  for (const auto& layer : run.attention)
    for (const Mat& a : layer)
      for (int64_t i = 0; i < a.rows(); ++i) {
        EXPECT_NEAR(a.row(i).sum(), 1.0f, 1e-5f);
        for (int64_t j = i + 1; j < a.cols(); ++j) EXPECT_EQ(a(i, j), 0.0f);
      }
}

// A pass of a few MFLOP runs on one thread (waking a second costs more), and
// the caller's OpenMP thread count is what it was afterwards.
TEST(ModelForward, SmallPassRunsOnOneThreadAndRestoresTheThreadCount) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ThreadScope two(2);
  const ModelRun run = runModel(*model, "the cat sat");
  EXPECT_EQ(run.threads, 1);
  EXPECT_EQ(omp_get_max_threads(), 2);
  {
    const ThreadScope one(1);
    EXPECT_EQ(omp_get_max_threads(), 1);
    EXPECT_EQ(threadsAvailable(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 2);
  const int available = threadsAvailable();
  EXPECT_GE(available, 1);
  EXPECT_LE(available, 2);
}

// The dense layers' OpenBLAS must be its OpenMP build: only that one follows
// the engine's thread count (ThreadScope) instead of starting its own pool.
extern "C" int openblas_get_parallel();
TEST(ModelForward, OpenBlasIsTheOpenMpBuild) {
  EXPECT_EQ(openblas_get_parallel(), 2) << "0: sequential, 1: pthreads, 2: OpenMP (install libopenblas-openmp-dev)";
}

TEST(ModelForward, Gpt2WithPrefixAndUntiedHead) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path, {.prefix = "transformer.", .untied_head = true, .seed = 3});
  const auto model = loadModel(filesOnDisk((dir.path / "model.safetensors").string()));
  const std::vector<int32_t> ids = {5, 70, 256, 258, 100, 0, 44};
  expectMatches(runModelIds(*model, ids, {.top_k = 3}), gpt2Ref(tm, ids), 3);
}

TEST(ModelForward, BertMatchesLoopReference) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path, {.arch = test::Fixture::Bert, .prefix = "bert.", .seed = 5});
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModel(*model, "The cat sat on the mat.", {.top_k = 5});
  ASSERT_GE(run.ids.size(), 4u);
  EXPECT_FALSE(run.causal);
  EXPECT_EQ(run.tokens.front(), "[CLS]");
  EXPECT_EQ(run.tokens.back(), "[SEP]");
  expectMatches(run, bertRef(tm, run.ids), 5);
}

TEST(ModelForward, BertUntiedDecoderAndWithoutMlmHead) {
  test::TempDir a, b;
  const TinyModel with = test::writeTinyModel(a.path, {.arch = test::Fixture::Bert, .untied_head = true, .seed = 6});
  const std::vector<int32_t> ids = {2, 5, 6, 7, 13, 3};
  expectMatches(runModelIds(*loadModel(filesOnDisk(a.path.string())), ids, {.top_k = 2}), bertRef(with, ids), 2);
  const TinyModel bare = test::writeTinyModel(b.path, {.arch = test::Fixture::Bert, .mlm = false, .seed = 7});
  const ModelRun run = runModelIds(*loadModel(filesOnDisk(b.path.string())), ids);
  EXPECT_TRUE(run.top_k.empty());
  expectMatches(run, bertRef(bare, ids), 0);
}

TEST(ModelForward, ShardedCheckpoint) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path, {.shards = 3, .seed = 8});
  ASSERT_TRUE(fs::exists(dir / "model.safetensors.index.json"));
  ASSERT_FALSE(fs::exists(dir / "model.safetensors"));
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  EXPECT_EQ(modelInfo(*model).bytes_on_disk,
            fs::file_size(dir / "model-00001-of-00003.safetensors") +
                fs::file_size(dir / "model-00002-of-00003.safetensors") +
                fs::file_size(dir / "model-00003-of-00003.safetensors"));
  const std::vector<int32_t> ids = {1, 2, 3, 4};
  expectMatches(runModelIds(*model, ids, {.top_k = 2}), gpt2Ref(tm, ids), 2);
}

TEST(ModelForward, F16AndBf16Checkpoints) {
  for (const DType t : {DType::F16, DType::BF16}) {
    test::TempDir dir;
    const TinyModel tm = test::writeTinyModel(dir.path, {.dtype = t, .seed = 9});
    const auto model = loadModel(filesOnDisk(dir.path.string()));
    EXPECT_EQ(modelInfo(*model).dtype, dtypeName(t));
    const std::vector<int32_t> ids = {7, 8, 9, 10, 11};
    expectMatches(runModelIds(*model, ids, {.top_k = 2}), gpt2Ref(tm, ids), 2);  // reference on the rounded values
  }
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

// [SECTION] Generation with a KV cache against a full forward
// Each decode step's single query sees every cached key: the prompt's maps
// plus each step's row equal a full forward over the same tokens, and each
// greedy token is the full forward's arg-max at the position before it.
void expectGenerationMatchesFullForward(const TinyOptions& o, const std::string& prompt) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, o);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const Generation g = generate(*model, prompt, {.max_new = 6});
  ASSERT_EQ(g.tokens.size(), 6u);
  const size_t P = g.prompt.ids.size();
  for (size_t s = 0; s < g.tokens.size(); ++s) {
    const ModelRun& st = g.tokens[s].step;
    EXPECT_EQ(st.first_position, static_cast<int64_t>(P + s));
    ASSERT_EQ(st.attention[1].back().rows(), 1);
    EXPECT_EQ(st.attention[1].back().cols(), static_cast<int64_t>(P + s + 1)) << "the new token sees itself and all before";
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

TEST(Generate, Gpt2KvCacheMatchesFullForward) {
  TinyOptions o;
  expectGenerationMatchesFullForward(o, "the cat");
}

TEST(Generate, LlamaGqaKvCacheMatchesFullForward) {
  expectGenerationMatchesFullForward({.arch = test::Fixture::Llama, .kv_heads = 2}, "the cat sat");
}

TEST(Generate, MistralWindowSlidesDuringDecoding) {
  // Window 3 over 4 prompt tokens and 6 new: decode steps drop keys that fall out of the window.
  expectGenerationMatchesFullForward({.arch = test::Fixture::Llama, .seed = 3, .family = "mistral", .sliding_window = 3},
                                     "a cat");
}

TEST(Generate, Qwen2WindowLayerSlidesDuringDecoding) {
  expectGenerationMatchesFullForward({.arch = test::Fixture::Llama, .seed = 4, .family = "qwen2", .sliding_window = 3,
                                      .max_window_layers = 1, .transformers5 = true},
                                     "a cat");
}

TEST(Generate, SamplingIsSeededAndTopOneIsGreedy) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama});
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  auto ids = [&](const GenerateOptions& o) {
    std::vector<int32_t> out;
    for (const GeneratedToken& t : generate(*model, "the", o).tokens) out.push_back(t.id);
    return out;
  };
  EXPECT_EQ(ids({.max_new = 8, .top_k = 50, .temperature = 2.0f, .seed = 7}),
            ids({.max_new = 8, .top_k = 50, .temperature = 2.0f, .seed = 7}));
  std::set<std::vector<int32_t>> draws;
  for (uint64_t seed = 0; seed < 5; ++seed) draws.insert(ids({.max_new = 8, .top_k = 50, .temperature = 2.0f, .seed = seed}));
  EXPECT_GT(draws.size(), 1u) << "five seeds at τ = 2 over 50 tokens all drew the same 8 tokens";
  EXPECT_EQ(ids({.max_new = 8, .top_k = 1, .seed = 3}), ids({.max_new = 8}));
  // Every sampled token is among the K most probable at its step.
  const Generation g = generate(*model, "the", {.max_new = 8, .top_k = 3, .temperature = 5.0f, .seed = 1});
  const ModelRun full = runModelIds(*model, generationRun(g, g.tokens.size()).ids, {.top_k = 3});
  for (size_t s = 0; s < g.tokens.size(); ++s) {
    const auto& best = full.top_k[g.prompt.ids.size() - 1 + s];
    EXPECT_TRUE(std::any_of(best.begin(), best.end(), [&](const Prediction& p) { return p.id == g.tokens[s].id; }))
        << "step " << s;
  }
}

TEST(Generate, RefusesWhatItCannotDo) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama});
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  auto message = [&](const GenerateOptions& o, const std::string& text = "the cat") {
    try {
      generate(*model, text, o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({.max_new = 0}).find("--max-new: expected 1 to 31"), std::string::npos);
  EXPECT_NE(message({.max_new = 40}).find("--max-new"), std::string::npos);
  EXPECT_NE(message({.top_k = -1}).find("--top-k"), std::string::npos);
  EXPECT_NE(message({.top_k = 5, .temperature = 0.0f}).find("--temperature"), std::string::npos);
  EXPECT_NE(message({.max_new = 30}, "the cat sat on the mat").find("positions left"), std::string::npos);
  test::TempDir bert;
  test::writeTinyModel(bert.path, {.arch = test::Fixture::Bert});
  try {
    generate(*loadModel(filesOnDisk(bert.path.string())), "the cat", {});
    ADD_FAILURE() << "BERT generated";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("generation needs a causal language model"), std::string::npos);
  }
}

TEST(ModelForward, InfoDescribesTheCheckpoint) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelInfo& info = modelInfo(*model);
  EXPECT_EQ(info.config.arch_name, "GPT2LMHeadModel");
  EXPECT_EQ(info.config.layers, 2);
  EXPECT_EQ(info.config.heads, 2);
  EXPECT_EQ(info.config.d_model, 8);
  EXPECT_EQ(info.config.vocab, tm.config.vocab);
  int64_t params = 0;
  for (const auto& [name, v] : tm.weights) params += static_cast<int64_t>(v.size());
  EXPECT_EQ(info.parameters, params);
  EXPECT_EQ(info.dtype, "F32");
  EXPECT_EQ(info.bytes_on_disk, fs::file_size(dir / "model.safetensors"));
  EXPECT_EQ(info.tensors.size(), tm.weights.size());
  const nlohmann::json j = modelInfoToJson(info);
  EXPECT_EQ(j["architecture"], "GPT2LMHeadModel");
  EXPECT_EQ(j["tensors"].size(), tm.weights.size());
}

// [SECTION] safetensors
std::string fileBytes(const std::string& header, const std::string& data) {
  std::string s(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(s.data(), &n, 8);
  return s + header + data;
}

std::string headerError(const std::string& bytes) {
  try {
    parseSafetensorsHeader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "x.safetensors");
  } catch (const InputError& e) {
    EXPECT_EQ(test::countLines(e.what()), 0);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(Safetensors, RoundTripAndZeroCopy) {
  test::TempDir dir;
  const std::vector<float> a = {1, -2, 3.5f, 4, 5, 6}, b = {0.5f, -0.25f, 1024.0f};
  writeSafetensors(dir / "t.safetensors",
                   {tensorFromValues("a", DType::F32, {2, 3}, a), tensorFromValues("b", DType::F16, {3}, b),
                    tensorFromValues("c", DType::BF16, {3}, b), tensorFromValues("e", DType::F32, {0}, {})},
                   {{"format", "pt"}});
  const auto f = SafetensorsFile::open((dir / "t.safetensors").string());
  EXPECT_EQ(f->header().data_start % 8, 0u);
  EXPECT_EQ(f->header().metadata.at("format"), "pt");
  std::vector<float> storage;
  const float* pa = f->floats(*f->find("a"), storage);
  EXPECT_TRUE(storage.empty());  // F32, aligned: a pointer into the map
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(pa), f->data(*f->find("a")));
  EXPECT_EQ(std::vector<float>(pa, pa + 6), a);
  for (const char* n : {"b", "c"}) {
    std::vector<float> st;
    const float* p = f->floats(*f->find(n), st);
    EXPECT_EQ(std::vector<float>(p, p + 3), b) << n;  // exactly representable in both
  }
  EXPECT_EQ(f->find("e")->elements(), 0);
  EXPECT_EQ(f->find("missing"), nullptr);
}

// The bench's TinyLlama-shaped checkpoint is BF16 written chunk by chunk:
// a tensor longer than the writer's 2^20-float chunk is filled at both
// offsets, and values between two BF16 numbers round to the nearest, ties
// to the even mantissa (bf16 keeps 8 significant bits: 1 + 2^-7 is 1's neighbour).
TEST(Safetensors, Bf16RoundsToNearestEvenAcrossChunks) {
  test::TempDir dir;
  const int64_t n = (int64_t{1} << 20) + 4;
  const std::vector<float> given = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-8f + 0x1p-16f, -(1.0f + 3 * 0x1p-8f)};
  const std::vector<float> stored = {1.0f, 1.0f + 0x1p-6f, 1.0f + 0x1p-7f, -(1.0f + 0x1p-6f)};
  const int64_t tail = n - static_cast<int64_t>(given.size());
  auto value = [&](int64_t e) { return e >= tail ? given[static_cast<size_t>(e - tail)] : static_cast<float>(e % 256); };
  writeSafetensors(dir / "t.safetensors", {{"t", DType::BF16, {n}, [&](int64_t first, int64_t count, float* out) {
                                              for (int64_t i = 0; i < count; ++i) out[i] = value(first + i);
                                            }}});
  const auto f = SafetensorsFile::open((dir / "t.safetensors").string());
  EXPECT_EQ(f->find("t")->end - f->find("t")->begin, static_cast<uint64_t>(2 * n));
  std::vector<float> storage;
  const float* p = f->floats(*f->find("t"), storage);
  int64_t wrong = 0;
  for (int64_t e = 0; e < tail; ++e) wrong += p[e] != static_cast<float>(e % 256);  // exact in bf16
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(std::vector<float>(p + tail, p + n), stored);
}

TEST(Safetensors, BadHeadersNameTheProblem) {
  const std::string ok = R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";
  EXPECT_NO_THROW(parseSafetensorsHeader(reinterpret_cast<const uint8_t*>(fileBytes(ok, std::string(8, 'x')).data()),
                                         fileBytes(ok, std::string(8, 'x')).size(), "x"));
  EXPECT_NE(headerError("abc").find("shorter than the 8-byte header length"), std::string::npos);
  // header longer than the file
  std::string longer = fileBytes(ok, "");
  longer.resize(longer.size() - 5);
  EXPECT_NE(headerError(longer).find("runs past the end of the file"), std::string::npos);
  // absurd header length
  std::string absurd(16, '\0');
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(absurd.data(), &huge, 8);
  EXPECT_NE(headerError(absurd).find("over the limit"), std::string::npos);
  EXPECT_NE(headerError(fileBytes("{\"t\": ", "")).find("not valid JSON"), std::string::npos);
  EXPECT_NE(headerError(fileBytes("[1, 2]", "")).find("must be a JSON object"), std::string::npos);
  // offsets outside the data
  EXPECT_NE(headerError(fileBytes(ok, std::string(4, 'x'))).find("run past the end of the data section"),
            std::string::npos);
  // overlapping offsets
  const std::string overlap = R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                  "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})";
  const std::string e = headerError(fileBytes(overlap, std::string(12, 'x')));
  EXPECT_NE(e.find("overlap"), std::string::npos);
  EXPECT_NE(e.find("'a'"), std::string::npos);
  // dtype / shape / byte count
  const std::string count = R"({"h.0.attn.c_attn.weight": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 100]}})";
  EXPECT_EQ(headerError(fileBytes(count, std::string(100, 'x'))),
            "x.safetensors: tensor 'h.0.attn.c_attn.weight': data_offsets [0, 100] hold 100 bytes, but F32 [3, 4] "
            "needs 48");
  const std::string dtype = R"({"t": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 8]}})";
  EXPECT_NE(headerError(fileBytes(dtype, std::string(8, 'x'))).find("dtype 'Q4' is not supported"), std::string::npos);
  const std::string shape = R"({"t": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})";
  EXPECT_NE(headerError(fileBytes(shape, std::string(8, 'x'))).find("non-negative"), std::string::npos);
  const std::string big = R"({"t": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]}})";
  EXPECT_NE(headerError(fileBytes(big, std::string(8, 'x'))).find("too large"), std::string::npos);
  const std::string backwards = R"({"t": {"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}})";
  EXPECT_NE(headerError(fileBytes(backwards, std::string(8, 'x'))).find("end before they begin"), std::string::npos);
}

// [SECTION] Bad checkpoints: every message names the file and the problem
void expectHas(const std::string& msg, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

// config.json's `field` set to `bad` is refused naming `parts`; then set back to `good`.
void expectFieldRefused(const TinyModel& tm, const std::string& field, const std::string& bad, const std::string& good,
                        const std::vector<std::string>& parts) {
  test::setConfigField(tm, field, bad);
  expectHas(test::loadError(tm.dir), parts);
  test::setConfigField(tm, field, good);
}

TEST(ModelErrors, TruncatedWeights) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  fs::resize_file(dir / "model.safetensors", fs::file_size(dir / "model.safetensors") - 100);
  expectHas(test::loadError(dir.path), {"model.safetensors", "past the end of the data section", "truncated"});
  fs::resize_file(dir / "model.safetensors", 5);
  expectHas(test::loadError(dir.path), {"model.safetensors", "shorter than the 8-byte header"});
}

TEST(ModelErrors, MissingExtraAndMisshapenTensors) {
  test::TempDir dir;
  TinyModel tm = test::writeTinyModel(dir.path);
  const std::vector<float> kept = tm.weights.at("h.1.mlp.c_fc.bias");
  tm.weights.erase("h.1.mlp.c_fc.bias");
  test::writeWeights(tm);
  expectHas(test::loadError(dir.path), {"model.safetensors", "'h.1.mlp.c_fc.bias' is missing", "[32]"});

  tm.weights["h.1.mlp.c_fc.bias"] = kept;
  tm.weights["h.1.attn.rotary.weight"] = {1, 2};
  tm.shapes["h.1.attn.rotary.weight"] = {2};
  test::writeWeights(tm);
  expectHas(test::loadError(dir.path), {"model.safetensors", "does not use", "'h.1.attn.rotary.weight'"});

  tm.weights.erase("h.1.attn.rotary.weight");
  tm.weights["wpe.weight"].resize(static_cast<size_t>(8 * 8));
  tm.shapes["wpe.weight"] = {8, 8};
  test::writeWeights(tm);
  expectHas(test::loadError(dir.path), {"model.safetensors", "'wpe.weight' has shape [8, 8]", "config.json implies [16, 8]"});
}

TEST(ModelErrors, GptBuffersAreNotExtraTensors) {
  test::TempDir dir;
  TinyModel tm = test::writeTinyModel(dir.path);
  tm.weights["h.0.attn.bias"] = std::vector<float>(16 * 16, 1.0f);
  tm.shapes["h.0.attn.bias"] = {1, 1, 16, 16};
  test::writeWeights(tm);
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  EXPECT_EQ(modelInfo(*m).parameters + 256, [&] {
    int64_t n = 0;
    for (const auto& [k, v] : tm.weights) n += static_cast<int64_t>(v.size());
    return n;
  }());
}

TEST(ModelErrors, ConfigProblems) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path);
  test::setConfigField(tm, "architectures", R"(["MambaForCausalLM"])");
  expectHas(test::loadError(dir.path), {"config.json", "architecture 'MambaForCausalLM' is not supported"});
  test::setConfigField(tm, "architectures", R"(["GPT2LMHeadModel"])");
  test::setConfigField(tm, "n_head", "3");
  expectHas(test::loadError(dir.path), {"config.json", "heads (3) must divide the model width (8)"});
  test::setConfigField(tm, "n_head", R"("two")");
  expectHas(test::loadError(dir.path), {"config.json", "field 'n_head' must be an integer from 1 to"});
  // A lying config is refused before its sizes drive a loop or an allocation.
  test::setConfigField(tm, "n_head", "2");
  test::setConfigField(tm, "n_layer", "1000000000000000000");
  expectHas(test::loadError(dir.path), {"config.json", "field 'n_layer' must be an integer from 1 to 1024"});
  test::setConfigField(tm, "n_layer", "18446744073709551615");
  expectHas(test::loadError(dir.path), {"config.json", "field 'n_layer' must be an integer from 1 to 1024"});
  test::setConfigField(tm, "n_layer", "2");
  test::setConfigField(tm, "layer_norm_epsilon", "1e300");
  expectHas(test::loadError(dir.path), {"config.json", "field 'layer_norm_epsilon' must be a number between 0 and 1"});
  test::setConfigField(tm, "layer_norm_epsilon", "1e-5");
  test::setConfigField(tm, "activation_function", R"("relu")");
  expectHas(test::loadError(dir.path), {"config.json", "field 'activation_function' is 'relu'"});
  std::ofstream(dir / "config.json") << "{\"n_layer\": 2,";
  expectHas(test::loadError(dir.path), {"config.json", "not valid JSON"});
  fs::remove(dir / "config.json");
  expectHas(test::loadError(dir.path), {"config.json", "missing"});
}

TEST(ModelErrors, LlamaConfigProblems) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  expectFieldRefused(tm, "num_key_value_heads", "3", "2",
                     {"config.json", "num_key_value_heads (3) must divide num_attention_heads (4)"});
  expectFieldRefused(tm, "rope_scaling", R"({"rope_type": "yarn", "factor": 4.0})", "null",
                     {"config.json rope_scaling: field 'rope_type' is 'yarn', which is not implemented"});
  expectFieldRefused(tm, "rope_scaling", R"({"type": "dynamic", "factor": 4.0})", "null",
                     {"config.json rope_scaling: field 'type' is 'dynamic', which is not implemented"});
  // transformers 5 writes rope_parameters instead: read, and refused alike.
  expectFieldRefused(tm, "rope_parameters", R"({"rope_type": "yarn", "rope_theta": 500000.0, "factor": 4.0})", "null",
                     {"config.json rope_parameters: field 'rope_type' is 'yarn', which is not implemented"});
  expectFieldRefused(tm, "rope_parameters", R"({"rope_type": "longrope", "rope_theta": 10000.0})", "null",
                     {"config.json rope_parameters: field 'rope_type' is 'longrope'"});
  expectFieldRefused(tm, "rope_parameters", R"({"rope_type": "linear", "rope_theta": 10000.0, "factor": 2.0, "attention_factor": 0.5})", "null",
                     {"config.json rope_parameters: field 'attention_factor' is 0.5, which is not implemented"});
  expectFieldRefused(tm, "rope_parameters", R"("big")", "null", {"config.json: field 'rope_parameters' must be an object"});
  // A field that changes the computation and that Llama does not implement is refused, never ignored.
  expectFieldRefused(tm, "attn_logit_softcapping", "50.0", "null",
                     {"config.json: field 'attn_logit_softcapping' is 50.0, which Llama does not implement"});
  expectFieldRefused(tm, "partial_rotary_factor", "0.5", "1.0",
                     {"config.json: field 'partial_rotary_factor' is 0.5, which Llama does not implement (expected 1.0)"});
  expectFieldRefused(tm, "layer_types", R"(["sliding_attention", "full_attention"])", "null",
                     {"config.json: field 'layer_types'", "which Llama does not implement"});
  // Only full_attention changes nothing for Llama, which has no window: read, not refused.
  test::setConfigField(tm, "layer_types", R"(["full_attention", "full_attention"])");
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::setConfigField(tm, "layer_types", "null");
  expectFieldRefused(tm, "use_qk_norm", "true", "false", {"field 'use_qk_norm' is true, which Llama does not implement"});
  expectFieldRefused(tm, "rope_scaling", R"({"rope_type": "llama3", "factor": 8.0})", "null",
                     {"config.json", "field 'low_freq_factor' is missing"});
  expectFieldRefused(tm, "rope_theta", "-1", "10000", {"config.json", "field 'rope_theta' must be a number from"});
  expectFieldRefused(tm, "hidden_act", R"("gelu")", R"("silu")", {"config.json", "field 'hidden_act' is 'gelu'"});
  expectFieldRefused(tm, "model_type", R"("mistral")", R"("llama")",
                     {"config.json", "field 'model_type' is 'mistral'", "LlamaForCausalLM"});
  expectFieldRefused(tm, "head_dim", "3", "4", {"config.json", "field 'head_dim' must be even"});
  expectFieldRefused(tm, "mlp_bias", "true", "false", {"config.json", "mlp_bias"});
  // Tied: a saved lm_head.weight would go unused.
  expectFieldRefused(tm, "tie_word_embeddings", "true", "false", {"lm_head.weight", "does not use"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  fs::remove(dir / "tokenizer.json");
  expectHas(test::loadError(dir.path), {"tokenizer.json", "missing", "Llama's tokenizer needs tokenizer.json"});
}

// Qwen2's windows: a sliding layer needs use_sliding_window (transformers has no window otherwise), and
// a window on a family that does not read layer_types keeps it refused.
TEST(ModelErrors, Qwen2AndMistralWindowProblems) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama, .family = "qwen2", .transformers5 = true});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  const std::string full = R"(["full_attention", "full_attention"])";
  expectFieldRefused(tm, "layer_types", R"(["full_attention", "sliding_attention"])", full,
                     {"config.json: field 'layer_types' makes layer 1 sliding_attention, but Qwen2 has no "
                      "sliding_window to mask it with (use_sliding_window is not true"});
  expectFieldRefused(tm, "layer_types", R"(["full_attention", "chunked_attention"])", full,
                     {"field 'layer_types' has \"chunked_attention\", which is not implemented"});
  expectFieldRefused(tm, "layer_types", R"(["full_attention"])", full, {"field 'layer_types' must list one type per layer (2)"});
  test::setConfigField(tm, "use_sliding_window", "true");
  test::setConfigField(tm, "layer_types", "null");
  expectFieldRefused(tm, "max_window_layers", "0.5", "28", {"field 'max_window_layers' must be an integer, got 0.5"});
  expectFieldRefused(tm, "sliding_window", "0", "4", {"field 'sliding_window' must be an integer from 1"});
  test::TempDir mistral;
  const TinyModel tmm =
      test::writeTinyModel(mistral.path, {.arch = test::Fixture::Llama, .family = "mistral", .sliding_window = 3});
  expectFieldRefused(tmm, "layer_types", full, "null", {"field 'layer_types'", "which Mistral does not implement"});
  ASSERT_NO_THROW(loadModel(filesOnDisk(mistral.path.string())));
}

TEST(ModelErrors, TokenizerFiles) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const std::string vocab = test::slurp(dir / "vocab.json");
  fs::remove(dir / "merges.txt");
  expectHas(test::loadError(dir.path), {"merges.txt", "missing"});
  std::ofstream(dir / "merges.txt") << "#version: 0.2\nĠ t\n";
  std::ofstream(dir / "vocab.json") << "{\"a\": 0, ";
  expectHas(test::loadError(dir.path), {"vocab.json"});
  fs::remove(dir / "vocab.json");
  expectHas(test::loadError(dir.path), {"vocab.json", "missing"});

  test::TempDir bert;
  test::writeTinyModel(bert.path, {.arch = test::Fixture::Bert});
  fs::remove(bert / "vocab.txt");
  expectHas(test::loadError(bert.path), {"vocab.txt", "missing"});
  std::ofstream(bert / "vocab.txt") << "the\ncat\n";
  expectHas(test::loadError(bert.path), {"vocab.txt"});
}

TEST(ModelErrors, ShardIndexProblems) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.shards = 2});
  std::ofstream(dir / "model.safetensors.index.json") << R"({"weight_map": {"wte.weight": "../x.safetensors"}})";
  expectHas(test::loadError(dir.path), {"model.safetensors.index.json", "not a file in the model folder"});
  std::ofstream(dir / "model.safetensors.index.json") << R"({"weight_map": {"wte.weight": "model-00009.safetensors"}})";
  expectHas(test::loadError(dir.path), {"model-00009.safetensors", "missing"});
  fs::remove(dir / "model.safetensors.index.json");
  expectHas(test::loadError(dir.path), {"no model.safetensors"});
}

TEST(ModelErrors, EmptyAndTooLongText) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  EXPECT_THROW(runModel(*m, ""), InputError);
  // whitespace is text (byte-level BPE gives it tokens); tests/engine/model/tokenizers/tokenizer_split_test.cpp
  EXPECT_EQ(runModel(*m, "  \n ").ids.size(), 4u);
  const std::string text = "abcdefghijklmnopqrstuvwxyz";  // one token per letter: 26 > 16 positions
  try {
    runModel(*m, text);
    ADD_FAILURE() << "no TooLongError";
  } catch (const TooLongError& e) {
    EXPECT_EQ(e.limit, 16);
    EXPECT_GT(e.tokens, 16);
    expectHas(e.what(), {"16 positions", "--truncate"});
  }
  const ModelRun run = runModel(*m, text, {.truncate = true});
  EXPECT_TRUE(run.truncated);
  EXPECT_EQ(run.ids.size(), 16u);
  EXPECT_THROW(runModelIds(*m, {1, 99999}), InputError);

  test::TempDir bert;
  test::writeTinyModel(bert.path, {.arch = test::Fixture::Bert});
  const auto b = loadModel(filesOnDisk(bert.path.string()));
  const ModelRun cut = runModel(*b, "the cat sat on the mat the dog ran on the mat a big red hat", {.truncate = true});
  EXPECT_EQ(cut.ids.size(), 16u);
  EXPECT_EQ(cut.tokens.back(), "[SEP]");
  EXPECT_THROW(runModel(*b, "the cat sat on the mat the dog ran on the mat a big red hat"), TooLongError);
}

// [SECTION] Head summaries, rollout, patterns on a head
// One causal layer of constructed q [L, heads·dh] and k = v [L, kv·dh]
// through the attention kernel and its stream of summaries.
ModelRun streamedRun(const Mat& q, const Mat& k, int64_t heads, int64_t kv_heads) {
  const int64_t L = q.rows();
  ModelRun r;
  r.layers = 1, r.heads = heads, r.kv_heads = kv_heads, r.d_head = q.cols() / heads;
  for (int64_t i = 0; i < L; ++i) r.ids.push_back(static_cast<int32_t>(i + 1)), r.tokens.push_back("t");
  r.attention.resize(1);
  MapStream stream(r, L, MapsChoice::Mode::All, {}, {});
  r.stream = &stream;
  Mat concat;
  attentionLayer(q, k, k, KeyRange{0, L, true, 0}, heads, kv_heads, 1.0f, RunContext{}, r, 0, concat);
  r.stream = nullptr;
  stream.finish(r);
  return r;
}

// 2 heads over L = 4. Head 0's scores are 100 on key i − 1 (key 0 for query
// 0) and 0 elsewhere: a previous-token head to within e⁻¹⁰⁰; head 1's query
// is 0: uniform over keys 0 … i.
ModelRun constructedRun() {
  constexpr int64_t L = 4, dh = 4;
  Mat q = Mat::Zero(L, 2 * dh), k = Mat::Zero(L, 2 * dh);
  for (int64_t i = 0; i < L; ++i) {
    q(i, std::max<int64_t>(i - 1, 0)) = 10;  // head 0: q_i = 10 e_{i−1}, k_j = 10 e_j
    k(i, i) = 10;
  }
  return streamedRun(q, k, 2, 2);
}

TEST(HeadMetrics, HandComputedSummaries) {
  const ModelRun run = constructedRun();
  // The repeated run: T = 2, ids t1 t2 t1 t2; head 0 looks at i − T + 1 on the second copy.
  ModelRun rep;
  rep.layers = 1, rep.heads = 2, rep.ids = run.ids;
  Mat ind = Mat::Zero(4, 4);
  ind(0, 0) = 1, ind(1, 0) = 1;
  ind(2, 1) = 1;                     // i = 2: i − T + 1 = 1
  ind(3, 2) = 0.5f, ind(3, 0) = 0.5f;  // i = 3: half on 2
  rep.attention = {{ind, run.attention[0][1]}};
  const std::vector<HeadSummary> s = summarizeHeads(run, rep);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NEAR(s[0].previous_token, 1.0, 1e-9);
  EXPECT_NEAR(s[0].sink, 1.0 / 3.0, 1e-9);                       // of queries 1..3, query 1 puts 1 on token 0
  EXPECT_NEAR(s[0].mean_distance, (0 + 1 + 1 + 1) / 4.0, 1e-9);
  EXPECT_NEAR(s[0].entropy, 0.0, 1e-9);
  EXPECT_EQ(s[0].group_size, 1);
  EXPECT_EQ(s[0].group_divergence, 0.0);  // no key/value head shared
  EXPECT_NEAR(s[0].induction, (1.0 + 0.5) / 2.0, 1e-9);
  // Uniform causal head: A[i, i−1] = 1/(i+1) for i = 1..3
  EXPECT_NEAR(s[1].previous_token, (1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 3.0, 1e-6);
  EXPECT_NEAR(s[1].sink, (1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 3.0, 1e-6);
  EXPECT_NEAR(s[1].mean_distance, (0.0 + 0.5 + 1.0 + 1.5) / 4.0, 1e-6);  // mean of 0..i
  EXPECT_NEAR(s[1].entropy, (0 + std::log(2.0) + std::log(3.0) + std::log(4.0)) / 4.0, 1e-6);
  EXPECT_NEAR(s[1].induction, (1.0 / 3 + 1.0 / 4) / 2.0, 1e-6);  // A[2,1] = 1/3, A[3,2] = 1/4
}

TEST(HeadMetrics, GroupDivergenceOfIdenticalAndSingleHeads) {
  // 4 query heads over 2 key/value heads: heads 0 and 1 have the same
  // queries (the same maps), heads 2 and 3 different ones.
  constexpr int64_t L = 6, dh = 3;
  Mat q(L, 4 * dh), k(L, 2 * dh);
  for (int64_t i = 0; i < q.size(); ++i) q.data()[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)));
  for (int64_t i = 0; i < k.size(); ++i) k.data()[i] = static_cast<float>(std::cos(1.3 * static_cast<double>(i)));
  q.middleCols(dh, dh) = q.middleCols(0, dh);
  std::vector<HeadSummary> s = streamedRun(q, k, 4, 2).summaries;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].group_divergence, 0.0);
  EXPECT_EQ(s[1].group_divergence, 0.0);
  EXPECT_GT(s[2].group_divergence, 0.0);
  EXPECT_EQ(s[2].group_divergence, s[3].group_divergence);
  // Without GQA every group is one head.
  Mat k4(L, 4 * dh);
  k4 << k, k;
  s = streamedRun(q, k4, 4, 4).summaries;
  for (const HeadSummary& x : s) {
    EXPECT_EQ(x.group_size, 1);
    EXPECT_EQ(x.kv_head, x.head);
    EXPECT_EQ(x.group_divergence, 0.0);
  }
}

TEST(HeadMetrics, RolloutAgainstLoopAndRowsSumToOne) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModelIds(*m, {3, 1, 4, 1, 5, 9, 2, 6});
  const std::vector<Mat> R = attentionRollout(run.attention);
  ASSERT_EQ(R.size(), 2u);
  const int64_t L = 8;
  std::vector<Rows> hat;
  for (int l = 0; l < 2; ++l) {
    Rows a = zeros(L, L);
    for (int64_t i = 0; i < L; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < L; ++j) {
        a[i][j] = 0.5 * (run.attention[l][0](i, j) + run.attention[l][1](i, j)) / 2.0 + (i == j ? 0.5 : 0.0);
        sum += a[i][j];
      }
      for (int64_t j = 0; j < L; ++j) a[i][j] /= sum;
    }
    hat.push_back(a);
  }
  for (int64_t i = 0; i < L; ++i) {
    EXPECT_NEAR(R[0].row(i).sum(), 1.0f, 1e-5f);
    EXPECT_NEAR(R[1].row(i).sum(), 1.0f, 1e-5f);
    for (int64_t j = 0; j < L; ++j) {
      EXPECT_NEAR(R[0](i, j), hat[0][i][j], 1e-5);
      double r1 = 0;
      for (int64_t t = 0; t < L; ++t) r1 += hat[1][i][t] * hat[0][t][j];
      EXPECT_NEAR(R[1](i, j), r1, 1e-5);
      if (j > i) {
        EXPECT_EQ(R[1](i, j), 0.0f);  // causal stays causal
      }
    }
  }
}

TEST(HeadMetrics, RepeatedIdsAvoidSpecials) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Bert});
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  const std::vector<int32_t> ids = repeatedRandomIds(*m, 5, 42);
  ASSERT_EQ(ids.size(), 12u);
  EXPECT_EQ(ids.front(), 2);  // [CLS]
  EXPECT_EQ(ids.back(), 3);   // [SEP]
  for (int i = 1; i <= 5; ++i) {
    EXPECT_EQ(ids[i], ids[i + 5]);
    EXPECT_GE(ids[i], 5);  // not [PAD] [UNK] [CLS] [SEP] [MASK]
  }
  EXPECT_EQ(ids, repeatedRandomIds(*m, 5, 42));
  const ModelRun rep = runModelIds(*m, ids);
  for (const HeadSummary& s : summarizeHeads(rep, rep)) {
    EXPECT_GE(s.induction, 0.0);
    EXPECT_LE(s.induction, 1.0);
  }
}

TEST(HeadPatterns, MassKeptAgainstLoop) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModel(*m, "the fox ran");
  const std::vector<const VariantInfo*> vs = headPatternVariants();
  ASSERT_FALSE(vs.empty());
  for (const VariantInfo* v : vs) {
    Params p = Params::defaults(v->params);
    if (v->name == "local-1d") p.set(v->params, "l_q", "2");
    const HeadPattern hp = applyPatternToHead(*v, p, run, 1, 1);
    const Mat& real = run.attention[1][1];
    EXPECT_EQ(hp.real, real);
    // The head's own projections went in untouched (no seeded W).
    EXPECT_EQ(hp.result.inputs.count("w_q"), 0u) << v->name;
    EXPECT_EQ(hp.result.inputs.at("q"), run.q[1].middleCols(4, 4)) << v->name;
    ASSERT_TRUE(hp.result.isSparse()) << v->name;
    const SparseRows& s = hp.result.sparse[0];
    double mean = 0;
    for (int64_t i = 0; i < real.rows(); ++i) {
      double kept = 0;
      for (int64_t e = s.indptr[i]; e < s.indptr[i + 1]; ++e) kept += real(i, s.indices[e]);
      EXPECT_NEAR(hp.mass_kept(0, i), kept, 1e-6) << v->name;
      mean += kept;
    }
    EXPECT_NEAR(hp.mass_kept_mean, mean / static_cast<double>(real.rows()), 1e-6) << v->name;
  }
  EXPECT_THROW(applyPatternToHead(*vs[0], Params::defaults(vs[0]->params), run, 2, 0), InputError);
  EXPECT_THROW(applyPatternToHead(variantOrThrow("multi-head"), Params::defaults(variantOrThrow("multi-head").params),
                                  run, 0, 0),
               InputError);
}

}  // namespace
}  // namespace attn
