// ModernBERT (engine/model/families/modernbert.cpp) against a plain-loop reference
// written from transformers' modeling_modernbert.py: tiny checkpoints in
// ModernBertForMaskedLM's / ModernBertModel's exact tensor names, config.json
// in the 4.x form (global/local_rope_theta, global_attn_every_n_layers) and
// the 5 form (layer_types, rope_parameters nested per layer type, dtype);
// every layer's maps, q/k/v before and after RoPE, hidden states and top-k;
// the local window and the per-kind RoPE base; each refused field. The checks
// every family needs are in conformance_test.cpp.
#include "engine/model/kinds/generate.h"
#include "engine/model/model.h"

#include "tests/engine/model/families/conformance.h"
#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace attn {
namespace {

using namespace mref;
using test::TinyModel;

// [SECTION] Checkpoints
constexpr int64_t kMbVocab = test::kTokenizerVocab + 3;  // + [CLS] 261, [SEP] 262, [MASK] 263
constexpr int32_t kMbCls = 261, kMbSep = 262, kMbMask = 263;
constexpr int64_t kMbD = 16, kMbHeads = 2, kMbFf = 12;

struct MbOptions {
  bool v5 = false;           // transformers 5's config.json
  bool mlm = true;           // ModernBertForMaskedLM (head.*, decoder.*) or ModernBertModel
  bool tied = true;          // decoder.weight tied to the embeddings (not saved)
  std::string prefix = "model.";
  int64_t layers = 4, every = 3, local = 4;
  double global_theta = 160.0, local_theta = 10.0;
  DType dtype = DType::F32;
  uint64_t seed = 1;
  nlohmann::json extra = nlohmann::json::object();  // fields set over the config
};

bool mbIsLocal(const MbOptions& o, int64_t l) { return l % o.every != 0; }

nlohmann::json mbConfig(const MbOptions& o) {
  nlohmann::json c = {{"architectures", {o.mlm ? "ModernBertForMaskedLM" : "ModernBertModel"}},
                      {"model_type", "modernbert"},
                      {"vocab_size", kMbVocab},
                      {"hidden_size", kMbD},
                      {"intermediate_size", kMbFf},
                      {"num_hidden_layers", o.layers},
                      {"num_attention_heads", kMbHeads},
                      {"hidden_activation", "gelu"},
                      {"max_position_embeddings", 32},
                      {"norm_eps", 1e-5},
                      {"norm_bias", false},
                      {"global_attn_every_n_layers", o.every},
                      {"local_attention", o.local},
                      {"attention_bias", false},
                      {"attention_dropout", 0.0},
                      {"embedding_dropout", 0.0},
                      {"mlp_bias", false},
                      {"mlp_dropout", 0.0},
                      {"decoder_bias", true},
                      {"classifier_bias", false},
                      {"classifier_activation", "gelu"},
                      {"classifier_pooling", "cls"},
                      {"classifier_dropout", 0.0},
                      {"initializer_range", 0.02},
                      {"initializer_cutoff_factor", 2.0},
                      {"deterministic_flash_attn", false},
                      {"sparse_prediction", false},
                      {"sparse_pred_ignore_index", -100},
                      {"tie_word_embeddings", o.tied},
                      {"pad_token_id", kMbMask},
                      {"bos_token_id", kMbCls},
                      {"cls_token_id", kMbCls},
                      {"eos_token_id", kMbSep},
                      {"sep_token_id", kMbSep}};
  if (o.v5) {
    nlohmann::json types = nlohmann::json::array();
    for (int64_t l = 0; l < o.layers; ++l) types.push_back(mbIsLocal(o, l) ? "sliding_attention" : "full_attention");
    c["layer_types"] = types;
    c["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}, {"rope_theta", o.global_theta}}},
                            {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", o.local_theta}}}};
    c["dtype"] = "float32";
    c["transformers_version"] = "5.0.0";
  } else {
    c["global_rope_theta"] = o.global_theta;
    c["local_rope_theta"] = o.local_theta;
    c["torch_dtype"] = "float32";
    c["reference_compile"] = nullptr;
    c["transformers_version"] = "4.48.0";
  }
  for (const auto& [k, v] : o.extra.items()) c[k] = v;
  return c;
}

// The tensors as transformers saves them: no attn_norm in layer 0, no biases.
std::vector<test::TensorSpec> mbTensors(const MbOptions& o) {
  const std::string p = o.prefix;
  auto norm = [](const std::string& n) { return test::TensorSpec{n, {kMbD}, 0.1f, 1.0f}; };
  std::vector<test::TensorSpec> t = {{p + "embeddings.tok_embeddings.weight", {kMbVocab, kMbD}, 0.5f},
                                     norm(p + "embeddings.norm.weight")};
  for (int64_t l = 0; l < o.layers; ++l) {
    const std::string s = p + "layers." + std::to_string(l) + ".";
    if (l > 0) t.push_back(norm(s + "attn_norm.weight"));
    t.push_back({s + "attn.Wqkv.weight", {3 * kMbD, kMbD}, 0.35f});
    t.push_back({s + "attn.Wo.weight", {kMbD, kMbD}, 0.3f});
    t.push_back(norm(s + "mlp_norm.weight"));
    t.push_back({s + "mlp.Wi.weight", {2 * kMbFf, kMbD}, 0.35f});
    t.push_back({s + "mlp.Wo.weight", {kMbD, kMbFf}, 0.3f});
  }
  t.push_back(norm(p + "final_norm.weight"));
  if (o.mlm) {
    t.push_back({"head.dense.weight", {kMbD, kMbD}, 0.3f});
    t.push_back(norm("head.norm.weight"));
    if (!o.tied) t.push_back({"decoder.weight", {kMbVocab, kMbD}, 0.5f});
    t.push_back({"decoder.bias", {kMbVocab}, 0.2f});
  }
  return t;
}

TinyModel mbWrite(const fs::path& dir, const MbOptions& o) {
  return test::writeCheckpoint(dir, mbConfig(o), mbTensors(o), {.dtype = o.dtype, .seed = o.seed},
                               {"[CLS]", "[SEP]", "[MASK]"}, R"({"cls_token": "[CLS]", "sep_token": "[SEP]"})");
}

// [SECTION] The reference, from modeling_modernbert.py
struct MbReference : Reference {
  std::vector<Rows> q_unrotated, k_unrotated;
};

void mbLayerNorm(Rows& x, const std::vector<float>& g, double eps) {  // nn.LayerNorm(bias=False)
  layerNormRef(x, g, std::vector<float>(g.size(), 0.0f), eps);
}

MbReference mbRef(const TinyModel& m, const MbOptions& o, const std::vector<int32_t>& ids, const RopeSpec& global,
                  const RopeSpec& local) {
  const size_t L = ids.size(), d = kMbD, ff = kMbFf, H = kMbHeads, dh = d / H, V = kMbVocab;
  const double eps = 1e-5;
  auto W = [&](const std::string& n) { return m.w(o.prefix + n); };
  MbReference r;
  // ModernBertEmbeddings: norm(tok_embeddings(ids)), no positions
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] = W("embeddings.tok_embeddings.weight")[ids[i] * d + e];
  mbLayerNorm(x, W("embeddings.norm.weight"), eps);
  for (int64_t l = 0; l < o.layers; ++l) {
    auto LW = [&](const std::string& n) { return W("layers." + std::to_string(l) + "." + n); };
    const bool is_local = mbIsLocal(o, l);
    // ModernBertEncoderLayer: attn(attn_norm(x)), attn_norm Identity in layer 0
    Rows a = x;
    if (l > 0) mbLayerNorm(a, LW("attn_norm.weight"), eps);
    // Wqkv, viewed [L, 3, H, dh]: q, k, v in that order
    const Rows qkv = linearRef(a, LW("attn.Wqkv.weight"), {}, d, 3 * d, true);
    Rows q0 = zeros(L, d), k0 = zeros(L, d), v = zeros(L, d);
    for (size_t i = 0; i < L; ++i)
      for (size_t e = 0; e < d; ++e) q0[i][e] = qkv[i][e], k0[i][e] = qkv[i][d + e], v[i][e] = qkv[i][2 * d + e];
    const std::vector<double> theta = ropeThetaRef(is_local ? local : global, static_cast<int64_t>(dh));
    const Rows q = ropeRef(q0, dh, theta), k = ropeRef(k0, dh, theta);
    // scaling head_dim^-0.5; local layers: the bidirectional window |i − j| ≤ local_attention // 2
    AttnOpts opts;
    opts.causal = false;
    opts.window = is_local ? static_cast<size_t>(o.local) : 0;
    std::vector<Rows> maps;
    Rows out;
    attentionRefOpts(q, k, v, H, opts, maps, out);
    r.attention.push_back(maps), r.q.push_back(q), r.k.push_back(k), r.v.push_back(v);
    r.q_unrotated.push_back(q0), r.k_unrotated.push_back(k0);
    addInto(x, linearRef(out, LW("attn.Wo.weight"), {}, d, d, true));
    // ModernBertMLP: input, gate = Wi(mlp_norm(x)).chunk(2); Wo(act(input) * gate)
    a = x;
    mbLayerNorm(a, LW("mlp_norm.weight"), eps);
    const Rows wi = linearRef(a, LW("mlp.Wi.weight"), {}, d, 2 * ff, true);
    Rows g = zeros(L, ff);
    for (size_t i = 0; i < L; ++i)
      for (size_t e = 0; e < ff; ++e) g[i][e] = geluErf(wi[i][e]) * wi[i][ff + e];
    addInto(x, linearRef(g, LW("mlp.Wo.weight"), {}, ff, d, true));
  }
  mbLayerNorm(x, W("final_norm.weight"), eps);
  r.hidden = x;
  if (o.mlm) {
    // decoder(head(x)), head = norm(gelu(dense(x)))
    Rows t = linearRef(x, m.w("head.dense.weight"), {}, d, d, true);
    for (auto& row : t)
      for (double& u : row) u = geluErf(u);
    mbLayerNorm(t, m.w("head.norm.weight"), eps);
    const std::vector<float>& dec = o.tied ? W("embeddings.tok_embeddings.weight") : m.w("decoder.weight");
    r.logits = linearRef(t, dec, m.w("decoder.bias"), d, V, true);
  }
  return r;
}

RopeSpec mbRope(double theta) {
  RopeSpec s;
  s.theta = theta;
  return s;
}

const std::vector<int32_t> kMbIds = {kMbCls, 72, 101, 108, 108, kMbMask, 32, 119, 111, 114, kMbSep};

void expectMbMatches(const MbOptions& o, const RopeSpec& global, const RopeSpec& local) {
  test::TempDir dir;
  const TinyModel tm = mbWrite(dir.path, o);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModelIds(*model, kMbIds, {.top_k = o.mlm ? 3 : 0});
  EXPECT_FALSE(run.causal);
  EXPECT_TRUE(run.rope);
  ASSERT_EQ(run.layer_window.size(), static_cast<size_t>(o.layers));
  for (int64_t l = 0; l < o.layers; ++l)
    EXPECT_EQ(run.layer_window[static_cast<size_t>(l)], mbIsLocal(o, l) ? o.local : 0) << "layer " << l;
  // The θ of each layer: global layers the global base, local layers the local one.
  ASSERT_EQ(run.layer_rope_theta.size(), static_cast<size_t>(o.layers));
  for (int64_t l = 0; l < o.layers; ++l) {
    const std::vector<double> theta = ropeThetaRef(mbIsLocal(o, l) ? local : global, kMbD / kMbHeads);
    ASSERT_EQ(run.layer_rope_theta[static_cast<size_t>(l)].size(), theta.size());
    for (size_t i = 0; i < theta.size(); ++i)
      EXPECT_NEAR(run.layer_rope_theta[static_cast<size_t>(l)][i], theta[i], 1e-12 * theta[i]) << "layer " << l;
  }
  const MbReference ref = mbRef(tm, o, kMbIds, global, local);
  expectMatches(run, ref, o.mlm ? 3 : 0);
  for (size_t l = 0; l < ref.q_unrotated.size(); ++l)
    for (size_t i = 0; i < kMbIds.size(); ++i)
      for (size_t e = 0; e < static_cast<size_t>(kMbD); ++e) {
        ASSERT_NEAR(run.q_unrotated[l](i, e), ref.q_unrotated[l][i][e], mref::kModelTol);
        ASSERT_NEAR(run.k_unrotated[l](i, e), ref.k_unrotated[l][i][e], mref::kModelTol);
      }
  // The local window itself: row i keeps keys i − local/2 … i + local/2 only.
  for (int64_t l = 0; l < o.layers; ++l)
    for (int64_t h = 0; h < kMbHeads; ++h) {
      const Mat& a = run.attention[static_cast<size_t>(l)][static_cast<size_t>(h)];
      for (int64_t i = 0; i < a.rows(); ++i)
        for (int64_t j = 0; j < a.cols(); ++j) {
          if (mbIsLocal(o, l) && std::abs(i - j) > o.local / 2) EXPECT_EQ(a(i, j), 0.0f) << l << ":" << i << "," << j;
          else EXPECT_GT(a(i, j), 0.0f) << l << ":" << i << "," << j;
        }
    }
}

// [SECTION] Forward pass against the reference
TEST(ModernBertForward, MaskedLmTransformers4Config) {
  expectMbMatches({}, mbRope(160.0), mbRope(10.0));
}

// transformers 5: layer_types and rope_parameters per layer type, another
// global pattern (every 2nd layer), an untied decoder, BF16 weights converted while used.
TEST(ModernBertForward, MaskedLmTransformers5ConfigUntiedBf16) {
  expectMbMatches({.v5 = true, .tied = false, .layers = 5, .every = 2, .local = 6, .global_theta = 300.0,
                   .local_theta = 20.0, .dtype = DType::BF16, .seed = 2},
                  mbRope(300.0), mbRope(20.0));
}

// ModernBertModel: no prefix, no head, no predictions.
TEST(ModernBertForward, BaseModelWithoutHeadOrPrefix) {
  expectMbMatches({.mlm = false, .prefix = "", .seed = 3}, mbRope(160.0), mbRope(10.0));
}

// 4.x: local_rope_theta null gives local layers the global base; a
// rope_scaling applies to both kinds (as transformers 5 converts it).
TEST(ModernBertForward, LocalThetaNullAndLinearScalingOnBothKinds) {
  expectMbMatches({.seed = 4, .extra = {{"local_rope_theta", nullptr}}}, mbRope(160.0), mbRope(160.0));
  RopeSpec g = mbRope(160.0), l = mbRope(10.0);
  g.type = l.type = "linear";
  g.factor = l.factor = 2.0;
  expectMbMatches({.seed = 5, .extra = {{"rope_scaling", {{"rope_type", "linear"}, {"factor", 2.0}}}}}, g, l);
}

TEST(ModernBertForward, ModelInfoAndNoGeneration) {
  test::TempDir dir;
  mbWrite(dir.path, {.v5 = true});
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelConfig& c = modelInfo(*model).config;
  EXPECT_EQ(c.family, "modernbert");
  EXPECT_FALSE(c.causal);
  EXPECT_EQ(c.rope.theta, 160.0);
  EXPECT_EQ(c.rope_local.theta, 10.0);
  EXPECT_TRUE(c.local_rope);
  EXPECT_EQ(c.sliding_window, 4);
  EXPECT_EQ(c.dtype, "float32");
  try {
    generate(*model, "the cat", {.max_new = 2});
    ADD_FAILURE() << "generated with a bidirectional model";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("both directions"), std::string::npos) << e.what();
  }
}

void mbExpectRefused(const MbOptions& base, const nlohmann::json& fields, const std::vector<std::string>& parts) {
  test::TempDir dir;
  MbOptions o = base;
  for (const auto& [k, v] : fields.items()) o.extra[k] = v;
  mbWrite(dir.path, base);  // the tensors of the good config
  std::ofstream(dir.path / "config.json") << mbConfig(o).dump(1);
  test::expectHas(test::loadError(dir.path), parts);
}

TEST(ModernBertErrors, UnimplementedFieldsAreRefused) {
  const MbOptions v4, v5{.v5 = true};
  for (const char* f : {"attention_bias", "mlp_bias", "norm_bias", "classifier_bias"})
    mbExpectRefused(v4, {{f, true}}, {"config.json", std::string("field '") + f + "' is true", "ModernBERT does not implement"});
  mbExpectRefused(v4, {{"decoder_bias", false}}, {"config.json", "field 'decoder_bias' is false", "does not implement"});
  mbExpectRefused(v4, {{"classifier_activation", "relu"}}, {"config.json", "field 'classifier_activation' is 'relu'"});
  mbExpectRefused(v4, {{"hidden_activation", "mish"}}, {"config.json", "field 'hidden_activation' is 'mish'"});
  mbExpectRefused(v4, {{"rope_theta", 10000.0}}, {"config.json", "field 'rope_theta' is 10000.0", "global_rope_theta"});
  mbExpectRefused(v4, {{"rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}}}},
                  {"config.json rope_scaling: field 'rope_type' is 'yarn', which is not implemented"});
  mbExpectRefused(v4, {{"partial_rotary_factor", 0.5}}, {"config.json", "field 'partial_rotary_factor' is 0.5"});
  mbExpectRefused(v4, {{"sliding_window", 5}}, {"config.json", "field 'sliding_window' is 5", "local_attention 4"});
  mbExpectRefused(v4, {{"head_dim", 4}}, {"config.json", "field 'head_dim' is 4"});
  mbExpectRefused(v4, {{"num_attention_heads", 3}}, {"config.json", "the heads (3) must divide hidden_size (16)"});
  mbExpectRefused(v4, {{"num_attention_heads", 16}}, {"config.json", "(1) must be even"});
  mbExpectRefused(v4, {{"layer_types", {"full_attention", "full_attention", "sliding_attention", "full_attention"}}},
                  {"config.json", "field 'layer_types' makes layer 1 full_attention", "global_attn_every_n_layers (3)"});
  mbExpectRefused(v4, {{"layer_types", {"full_attention", "chunked_attention", "sliding_attention", "full_attention"}}},
                  {"config.json", "field 'layer_types' has \"chunked_attention\""});
  mbExpectRefused(v5, {{"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000.0}}}},
                  {"config.json", "field 'rope_parameters' must be nested per layer type"});
  mbExpectRefused(v5,
                  {{"rope_parameters",
                    {{"full_attention", {{"rope_type", "default"}, {"rope_theta", 160.0}}},
                     {"sliding_attention", {{"rope_type", "yarn"}, {"rope_theta", 10.0}, {"factor", 4.0}}}}}},
                  {"config.json rope_parameters.sliding_attention: field 'rope_type' is 'yarn'"});
  mbExpectRefused(v5,
                  {{"rope_parameters",
                    {{"full_attention", {{"rope_type", "default"}, {"rope_theta", 160.0}, {"partial_rotary_factor", 0.5}}},
                     {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10.0}}}}}},
                  {"config.json rope_parameters.full_attention: field 'partial_rotary_factor' is 0.5"});
  mbExpectRefused(v5, {{"rope_scaling", {{"rope_type", "linear"}, {"factor", 2.0}}}},
                  {"config.json", "field 'rope_scaling'", "beside rope_parameters"});
}

TEST(ModernBertErrors, TensorsAsTransformersSavesThem) {
  test::TempDir dir;
  const MbOptions o;
  TinyModel tm = mbWrite(dir.path, o);
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  // Layer 0's attn_norm is Identity: a saved weight for it would go unused.
  tm.weights["model.layers.0.attn_norm.weight"] = std::vector<float>(kMbD, 1.0f);
  tm.shapes["model.layers.0.attn_norm.weight"] = {kMbD};
  test::writeWeights(tm);
  test::expectHas(test::loadError(dir.path), {"'model.layers.0.attn_norm.weight'", "does not use"});
  tm.weights.erase("model.layers.0.attn_norm.weight"), tm.shapes.erase("model.layers.0.attn_norm.weight");
  // The masked-LM head is all there or not at all.
  const std::vector<float> bias = tm.weights.at("decoder.bias");
  tm.weights.erase("decoder.bias"), tm.shapes.erase("decoder.bias");
  test::writeWeights(tm);
  test::expectHas(test::loadError(dir.path), {"'decoder.bias' is missing", "masked-LM head"});
  tm.weights["decoder.bias"] = bias, tm.shapes["decoder.bias"] = {kMbVocab};
  // Wqkv is fused [3·d, d].
  tm.shapes["model.layers.1.attn.Wqkv.weight"] = {kMbD, 3 * kMbD};
  test::writeWeights(tm);
  test::expectHas(test::loadError(dir.path), {"'model.layers.1.attn.Wqkv.weight' has shape", "[48, 16]"});
}

// The tokenizer's post-processor puts [CLS] and [SEP] around the text (opening through the
// binary is in conformance_test.cpp).
TEST(ModernBertForward, ClsAndSepAroundTheText) {
  test::TempDir dir;
  mbWrite(dir.path, {});
  const ModelRun run = runModel(*loadModel(filesOnDisk(dir.path.string())), "the cat", {.top_k = 0});
  EXPECT_EQ(run.tokens.front(), "[CLS]");
  EXPECT_EQ(run.tokens.back(), "[SEP]");
}

// The folder's post-processor decides what goes around a text, whatever the
// tokens are called: RoBERTa-style <s> … </s> (as TemplateProcessing with
// its special_tokens, or RobertaProcessing), or <s> alone.
TEST(ModernBertForward, SpecialTokensComeFromThePostProcessor) {
  const nlohmann::json s = {{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}};
  const nlohmann::json e = {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}};
  const nlohmann::json a = {{"Sequence", {{"id", "A"}, {"type_id", 0}}}};
  const nlohmann::json specials = {{"<s>", {{"id", "<s>"}, {"ids", {259}}, {"tokens", {"<s>"}}}},
                                   {"</s>", {{"id", "</s>"}, {"ids", {260}}, {"tokens", {"</s>"}}}}};
  const std::vector<std::pair<nlohmann::json, std::vector<int32_t>>> cases = {
      {{{"type", "TemplateProcessing"}, {"single", {s, a, e}}, {"pair", {s, a, e, e, a, e}}, {"special_tokens", specials}},
       {259, 260}},
      {{{"type", "RobertaProcessing"}, {"sep", {"</s>", 260}}, {"cls", {"<s>", 259}}, {"trim_offsets", true},
        {"add_prefix_space", false}},
       {259, 260}},
      {{{"type", "TemplateProcessing"}, {"single", {s, a}}, {"pair", {s, a, a}}, {"special_tokens", specials}}, {259}},
  };
  for (const auto& [processor, around] : cases) {
    SCOPED_TRACE(processor.dump());
    test::TempDir dir;
    mbWrite(dir.path, {});
    nlohmann::json tokenizer = nlohmann::json::parse(test::slurp(dir / "tokenizer.json"));
    tokenizer["post_processor"] = processor;
    std::ofstream(dir / "tokenizer.json") << tokenizer.dump();
    std::ofstream(dir / "tokenizer_config.json") << R"({"bos_token": "<s>", "eos_token": "</s>", "cls_token": "<s>", "sep_token": "</s>"})";
    const auto model = loadModel(filesOnDisk(dir.path.string()));
    const ModelRun run = runModel(*model, "the cat", {.top_k = 0});
    ASSERT_EQ(run.ids.size(), modelTokenizer(*model).encode("the cat").size() + around.size());
    EXPECT_EQ(run.ids.front(), 259) << "<s> first";
    if (around.size() == 2) EXPECT_EQ(run.ids.back(), 260) << "</s> last";
    else EXPECT_NE(run.ids.back(), 260) << "nothing after the text";
    EXPECT_EQ(std::count(run.ids.begin(), run.ids.end(), kMbCls) + std::count(run.ids.begin(), run.ids.end(), kMbSep), 0)
        << "no [CLS] or [SEP] the post-processor did not put";
  }
}

}  // namespace

TinyModel test::writeModernBertFixture(const fs::path& dir, const test::FamilyFixture& f) {
  return mbWrite(dir, {.dtype = f.dtype, .seed = f.seed});
}

}  // namespace attn
