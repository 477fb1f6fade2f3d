// OPT (engine/model/families/opt.cpp) against a plain-loop double reference written
// from transformers' models/opt/modeling_opt.py: tiny checkpoints in
// OPTForCausalLM's exact tensor names and shapes, pre-LN (125m …) and
// post-LN with project_in / project_out (350m, its KV cache too), both config
// generations and the refused fields. The checks every family needs are in
// conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/engine/model/families/conformance.h"
#include "tests/engine_reference.h"
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

struct OptCase {
  bool transformers5 = true;  // config.json's dtype (5) or torch_dtype + transformers_version (4.x)
  bool pre_ln = true;         // do_layer_norm_before
  bool remove_final = false;  // _remove_final_layer_norm
  int64_t proj = 16;          // word_embed_proj_dim (≠ 16: project_in / project_out)
  bool bias = true;           // enable_bias
  bool tied = true;           // tie_word_embeddings
  bool saved_head = false;    // tied, but lm_head.weight saved as well (equal to embed_tokens)
  std::string act = "relu";
  DType dtype = DType::F32;
  uint64_t seed = 1;
};

constexpr int64_t kOptD = 16, kOptHeads = 4, kOptFf = 24, kOptLayers = 2, kOptPositions = 32;

// OPT's tokenizer puts </s> first (bos_token "</s>").
const char* kOptTokenizerConfig = R"({"add_bos_token": true, "bos_token": "</s>", "eos_token": "</s>"})";

TinyModel writeOpt(const fs::path& dir, const OptCase& o) {
  const int64_t V = test::kTokenizerVocab, d = kOptD;
  nlohmann::json config = {{"architectures", {"OPTForCausalLM"}},
                           {"model_type", "opt"},
                           {"hidden_size", d},
                           {"num_hidden_layers", kOptLayers},
                           {"num_attention_heads", kOptHeads},
                           {"ffn_dim", kOptFf},
                           {"max_position_embeddings", kOptPositions},
                           {"vocab_size", V},
                           {"word_embed_proj_dim", o.proj},
                           {"do_layer_norm_before", o.pre_ln},
                           {"_remove_final_layer_norm", o.remove_final},
                           {"enable_bias", o.bias},
                           {"layer_norm_elementwise_affine", true},
                           {"activation_function", o.act},
                           {"tie_word_embeddings", o.tied},
                           {"dropout", 0.1},
                           {"pad_token_id", 1},
                           {"bos_token_id", 260},
                           {"eos_token_id", 260}};
  if (o.transformers5) {
    config["dtype"] = "float32";
    config["transformers_version"] = "5.0.0";
  } else {
    config["torch_dtype"] = "float16";
    config["transformers_version"] = "4.21.0.dev0";
  }
  std::vector<test::TensorSpec> t = {{"model.decoder.embed_tokens.weight", {V, o.proj}},
                                     {"model.decoder.embed_positions.weight", {kOptPositions + 2, d}}};
  if (o.proj != d) {
    t.push_back({"model.decoder.project_in.weight", {d, o.proj}});
    t.push_back({"model.decoder.project_out.weight", {o.proj, d}});
  }
  for (int64_t l = 0; l < kOptLayers; ++l) {
    const std::string p = "model.decoder.layers." + std::to_string(l) + ".";
    auto linear = [&](const std::string& name, int64_t out, int64_t in) {
      t.push_back({p + name + ".weight", {out, in}});
      if (o.bias) t.push_back({p + name + ".bias", {out}, 0.2f});
    };
    t.push_back({p + "self_attn_layer_norm.weight", {d}, 0.2f, 1.0f});
    t.push_back({p + "self_attn_layer_norm.bias", {d}, 0.2f});
    linear("self_attn.k_proj", d, d), linear("self_attn.v_proj", d, d), linear("self_attn.q_proj", d, d);
    linear("self_attn.out_proj", d, d);
    t.push_back({p + "final_layer_norm.weight", {d}, 0.2f, 1.0f});
    t.push_back({p + "final_layer_norm.bias", {d}, 0.2f});
    linear("fc1", kOptFf, d), linear("fc2", d, kOptFf);
  }
  if (o.pre_ln && !o.remove_final) {
    t.push_back({"model.decoder.final_layer_norm.weight", {d}, 0.2f, 1.0f});
    t.push_back({"model.decoder.final_layer_norm.bias", {d}, 0.2f});
  }
  if (!o.tied) t.push_back({"lm_head.weight", {V, o.proj}});
  test::TinyOptions options;
  options.dtype = o.dtype;
  options.seed = o.seed;
  TinyModel m = test::writeCheckpoint(dir, config, t, options, {}, kOptTokenizerConfig);
  if (o.tied && o.saved_head) {  // as torch.save of a tied model writes it: the same values
    m.weights["lm_head.weight"] = m.weights.at("model.decoder.embed_tokens.weight");
    m.shapes["lm_head.weight"] = {V, o.proj};
    test::writeWeights(m);
  }
  return m;
}

// transformers' OPTDecoder and OPTDecoderLayer, in double precision.
Reference optRef(const TinyModel& m, const OptCase& o, const std::vector<int32_t>& ids) {
  const size_t L = ids.size(), d = kOptD, P = static_cast<size_t>(o.proj), H = kOptHeads, ff = kOptFf;
  const size_t dh = d / H;
  const std::vector<float> none;
  auto w = [&](const std::string& name) -> const std::vector<float>& { return m.w(name); };
  auto b = [&](const std::string& name) -> const std::vector<float>& { return o.bias ? m.w(name) : none; };
  Reference r;
  // inputs_embeds = embed_tokens(ids); project_in; + embed_positions(positions + 2)
  Rows x = zeros(L, P);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < P; ++e) x[i][e] = w("model.decoder.embed_tokens.weight")[ids[i] * P + e];
  if (P != d) x = linearRef(x, w("model.decoder.project_in.weight"), none, P, d, true);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] += w("model.decoder.embed_positions.weight")[(i + 2) * d + e];
  for (int64_t l = 0; l < kOptLayers; ++l) {
    const std::string p = "model.decoder.layers." + std::to_string(l) + ".";
    // residual = x; pre-LN: x = self_attn_layer_norm(x)
    Rows a = x;
    if (o.pre_ln) layerNormRef(a, w(p + "self_attn_layer_norm.weight"), w(p + "self_attn_layer_norm.bias"), 1e-5);
    // query_states = q_proj(x) * scaling; the attention then runs with scaling 1.0
    const Rows q = linearRef(a, w(p + "self_attn.q_proj.weight"), b(p + "self_attn.q_proj.bias"), d, d, true);
    const Rows k = linearRef(a, w(p + "self_attn.k_proj.weight"), b(p + "self_attn.k_proj.bias"), d, d, true);
    const Rows v = linearRef(a, w(p + "self_attn.v_proj.weight"), b(p + "self_attn.v_proj.bias"), d, d, true);
    Rows q_scaled = q;
    for (auto& row : q_scaled)
      for (double& e : row) e *= std::pow(static_cast<double>(dh), -0.5);
    std::vector<Rows> maps;
    Rows ctx;
    attentionRefOpts(q_scaled, k, v, H, {.scale = 1.0}, maps, ctx);
    r.attention.push_back(maps), r.q.push_back(q), r.k.push_back(k), r.v.push_back(v);
    addInto(x, linearRef(ctx, w(p + "self_attn.out_proj.weight"), b(p + "self_attn.out_proj.bias"), d, d, true));
    if (!o.pre_ln) layerNormRef(x, w(p + "self_attn_layer_norm.weight"), w(p + "self_attn_layer_norm.bias"), 1e-5);
    a = x;
    if (o.pre_ln) layerNormRef(a, w(p + "final_layer_norm.weight"), w(p + "final_layer_norm.bias"), 1e-5);
    Rows f = linearRef(a, w(p + "fc1.weight"), b(p + "fc1.bias"), d, ff, true);
    for (auto& row : f)
      for (double& e : row) e = o.act == "relu" ? std::max(e, 0.0) : geluErf(e);
    addInto(x, linearRef(f, w(p + "fc2.weight"), b(p + "fc2.bias"), ff, d, true));
    if (!o.pre_ln) layerNormRef(x, w(p + "final_layer_norm.weight"), w(p + "final_layer_norm.bias"), 1e-5);
  }
  if (o.pre_ln && !o.remove_final)
    layerNormRef(x, w("model.decoder.final_layer_norm.weight"), w("model.decoder.final_layer_norm.bias"), 1e-5);
  r.hidden = x;
  // lm_head(project_out(hidden)), lm_head tied to embed_tokens
  Rows h = x;
  if (P != d) h = linearRef(h, w("model.decoder.project_out.weight"), none, d, P, true);
  r.logits = linearRef(h, o.tied ? w("model.decoder.embed_tokens.weight") : w("lm_head.weight"), none, P,
                       static_cast<size_t>(test::kTokenizerVocab), true);
  return r;
}

void expectOptMatches(const OptCase& o, const std::string& text) {
  test::TempDir dir;
  const TinyModel tm = writeOpt(dir.path, o);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModel(*model, text, {.top_k = 3});
  ASSERT_GE(run.ids.size(), 3u);
  EXPECT_EQ(run.ids[0], 260) << "</s> first, as OPT's tokenizer adds it";
  EXPECT_TRUE(run.causal);
  EXPECT_FALSE(run.rope);
  EXPECT_TRUE(run.alibi_slopes.empty());
  expectMatches(run, optRef(tm, o, run.ids), 3);
  const ModelConfig& c = modelInfo(*model).config;
  EXPECT_EQ(c.positions, kOptPositions);
  EXPECT_EQ(c.post_ln, !o.pre_ln);
  EXPECT_EQ(c.final_norm, o.pre_ln && !o.remove_final);
}

TEST(OptFamily, PreLnTransformers5MatchesReference) {
  expectOptMatches({}, "the cat sat on the mat");
}

TEST(OptFamily, PostLnWithProjectionsTransformers4MatchesReference) {
  // OPT-350m's shape: post-LN, no final norm, embeddings of width 8 projected to 16 and back.
  expectOptMatches({.transformers5 = false, .pre_ln = false, .proj = 8, .seed = 2}, "then the hat");
}

TEST(OptFamily, NoBiasesUntiedHeadNoFinalNormGeluBf16) {
  expectOptMatches({.remove_final = true, .bias = false, .tied = false, .act = "gelu", .dtype = DType::BF16, .seed = 3},
                   "the the cat");
}

TEST(OptFamily, TiedHeadSavedAlongsideIsAccepted) {
  expectOptMatches({.saved_head = true, .seed = 4}, "a cat");
}

TEST(OptFamily, PositionsAreReadTwoRowsDown) {
  // Rows 0 and 1 of embed_positions are never read (the offset of 2); row p + 2 is position p's.
  test::TempDir dir;
  TinyModel tm = writeOpt(dir.path, {.seed = 5});
  const std::vector<int32_t> ids = {260, 5, 6, 7};
  const ModelRun before = runModelIds(*loadModel(filesOnDisk(dir.path.string())), ids, {.top_k = 0});
  std::vector<float>& pos = tm.weights.at("model.decoder.embed_positions.weight");
  for (size_t e = 0; e < 2 * kOptD; ++e) pos[e] = 9.0f;
  test::writeWeights(tm);
  const ModelRun after = runModelIds(*loadModel(filesOnDisk(dir.path.string())), ids, {.top_k = 0});
  EXPECT_EQ(ref::maxAbsDiff(before.hidden, after.hidden), 0.0f);
  pos[2 * kOptD] += 1.0f;  // position 0
  test::writeWeights(tm);
  const ModelRun moved = runModelIds(*loadModel(filesOnDisk(dir.path.string())), ids, {.top_k = 0});
  EXPECT_GT(ref::maxAbsDiff(before.hidden, moved.hidden), 1e-3f);
}

// Pre-LN (the default) is in conformance_test.cpp; post-LN with its projections here.
TEST(OptFamily, KvCacheGenerationMatchesFullForward) {
  test::TempDir dir;
  writeOpt(dir.path, {.pre_ln = false, .proj = 8, .seed = 7});
  test::expectGenerationMatchesFullForward(dir.path, "the cat");
}

TEST(OptFamily, RefusesWhatItDoesNotImplement) {
  test::TempDir dir;
  const TinyModel tm = writeOpt(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  test::expectFieldRefused(tm, "activation_function", R"("quick_gelu")",
                           {"config.json", "field 'activation_function' is 'quick_gelu'"});
  // Compute fields of other families are refused, never ignored.
  test::expectFieldRefused(tm, "rope_theta", "10000.0", {"config.json", "field 'rope_theta' is 10000.0", "OPT"});
  test::expectFieldRefused(tm, "alibi", "true", {"config.json", "field 'alibi' is true", "OPT"});
  // Shapes follow the config: the position table has max_position_embeddings + 2 rows.
  test::expectFieldRefused(tm, "max_position_embeddings", "33",
                           {"model.decoder.embed_positions.weight", "[34, 16]", "[35, 16]"});
  // Untied: lm_head.weight is required.
  test::expectFieldRefused(tm, "tie_word_embeddings", "false", {"lm_head.weight", "is missing"});
  // Post-LN with its projections: project_in / project_out are required.
  test::expectFieldRefused(tm, "word_embed_proj_dim", "8", {"model.decoder.embed_tokens.weight", "[261, 16]"});
}

TEST(OptFamily, TooLongTextNamesThePositions) {
  test::TempDir dir;
  writeOpt(dir.path, {});
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  EXPECT_THROW(runModel(*model, std::string(40, 'a')), TooLongError);
}

}  // namespace

TinyModel test::writeOptFixture(const fs::path& dir, const test::FamilyFixture& f) {
  return writeOpt(dir, {.dtype = f.dtype, .seed = f.seed});
}

}  // namespace attn
