// The checks every model family needs, run on each registered family
// (engine/model/families/families.def) from one table row: generation with the
// KV cache equals a full forward; a config.json field the family does not
// implement is refused, and a missing tensor is named; F16 and BF16
// checkpoints load to the values they hold; the folder opens through the real
// binary (`attnlab model info` and `model run`). A family without a row fails
// EveryRegisteredFamilyHasARow. Its own test file keeps the double-precision
// loop reference and what only it does.
//
// A check that does not apply to a family says why in the row, and the test
// reports itself skipped with that reason. The thread count is held to one
// check: the same outputs on 1 and 3 threads (RunContext::adapt_threads off,
// or a pass this small would run on one thread whatever was asked).
#include "engine/model/analysis/interventions.h"
#include "engine/model/kinds/seq2seq.h"
#include "engine/model/kinds/vision.h"
#include "engine/model/model.h"
#include "engine/npy.h"
#include "engine/parallel.h"

#include "tests/engine/model/families/conformance.h"
#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <random>
#include <set>

namespace fs = std::filesystem;

namespace attn::conformance_test {
namespace {

using test::FamilyFixture;
using test::TinyModel;

struct Refusal {
  std::string field, value;        // config.json's field set to a value the family does not compute
  std::vector<std::string> parts;  // what the one-line error says
};

struct FamilyCase {
  std::string model_type;  // as families.def registers it
  std::function<TinyModel(const fs::path&, const FamilyFixture&)> write;
  Refusal refused;
  std::string required;   // a body tensor (without the checkpoint's prefix) whose absence is named in full
  std::string no_cache;   // why generation with the KV cache does not apply (empty: it does)
};

const std::string kText = "the cat sat";  // the prompt, or an encoder–decoder's source
const std::string kTarget = "a hat";      // an encoder–decoder's target

std::string label(const std::string& model_type) {
  for (const FamilySummary& f : modelFamilySummaries())
    if (f.model_type == model_type) return f.label;
  return "";
}

// The hand-written fixtures of tests/model_fixture.h (GPT-2, BERT, the LLaMA family).
TinyModel handWritten(const fs::path& dir, const FamilyFixture& f, test::TinyOptions o) {
  o.dtype = f.dtype, o.seed = f.seed;
  return test::writeTinyModel(dir, o);
}

const std::string kBidirectional = "bidirectional: an encoder does not generate";
const std::string kSeq2Seq = "encoder–decoder: generateSeq2Seq runs the decoder over the whole target each step, "
                             "with no cache (kinds/seq2seq_test.cpp GreedyGenerationTakesTheReferencesArgmaxAtEachStep)";
const std::string kVision = "vision: a ViT reads one picture and generates nothing";

// One row per family, in families.def's order.
const std::vector<FamilyCase>& familyCases() {
  static const std::vector<FamilyCase> cases = {
      {.model_type = "gpt2",
       .write = [](const fs::path& d, const FamilyFixture& f) { return handWritten(d, f, {}); },
       .refused = {"attn_logit_softcapping", "30.0", {"'attn_logit_softcapping' is 30.0", "GPT-2"}},
       .required = "h.1.attn.c_proj.weight"},
      {.model_type = "bert",
       .write = [](const fs::path& d, const FamilyFixture& f) { return handWritten(d, f, {.arch = test::Fixture::Bert}); },
       .refused = {"attn_logit_softcapping", "30.0", {"'attn_logit_softcapping' is 30.0", "BERT"}},
       .required = "encoder.layer.1.attention.self.key.bias",
       .no_cache = kBidirectional},
      {.model_type = "modernbert",
       .write = test::writeModernBertFixture,
       .refused = {"attn_logit_softcapping", "30.0", {"'attn_logit_softcapping' is 30.0", "ModernBERT"}},
       .required = "layers.1.attn.Wqkv.weight",
       .no_cache = kBidirectional},
      {.model_type = "llama",
       .write = [](const fs::path& d, const FamilyFixture& f) { return handWritten(d, f, {.arch = test::Fixture::Llama}); },
       .refused = {"attn_logit_softcapping", "50.0", {"'attn_logit_softcapping' is 50.0, which Llama does not implement"}},
       .required = "layers.1.self_attn.k_proj.weight"},
      {.model_type = "mistral",
       .write = [](const fs::path& d, const FamilyFixture& f) {
         return handWritten(d, f, {.arch = test::Fixture::Llama, .family = "mistral", .sliding_window = 3});
       },
       .refused = {"attn_logit_softcapping", "30.0", {"'attn_logit_softcapping' is 30.0", "Mistral"}},
       .required = "layers.1.mlp.up_proj.weight"},
      {.model_type = "qwen2",
       .write = [](const fs::path& d, const FamilyFixture& f) {
         return handWritten(d, f, {.arch = test::Fixture::Llama, .family = "qwen2"});
       },
       .refused = {"attn_logit_softcapping", "30.0", {"'attn_logit_softcapping' is 30.0", "Qwen2"}},
       .required = "layers.1.self_attn.q_proj.bias"},
      {.model_type = "qwen3",
       .write = test::writeQwen3Fixture,
       .refused = {"attn_logit_softcapping", "30.0", {"'attn_logit_softcapping' is 30.0", "Qwen3"}},
       .required = "layers.1.self_attn.k_norm.weight"},
      {.model_type = "gemma",
       .write = [](const fs::path& d, const FamilyFixture& f) { return test::writeGemmaFixture(d, f, 1); },
       .refused = {"use_bidirectional_attention", "true", {"field 'use_bidirectional_attention' is true", "Gemma"}},
       .required = "layers.1.post_attention_layernorm.weight"},
      {.model_type = "gemma2",
       .write = [](const fs::path& d, const FamilyFixture& f) { return test::writeGemmaFixture(d, f, 2); },
       .refused = {"use_bidirectional_attention", "true", {"field 'use_bidirectional_attention' is true", "Gemma 2"}},
       .required = "layers.1.pre_feedforward_layernorm.weight"},
      {.model_type = "gemma3_text",
       .write = [](const fs::path& d, const FamilyFixture& f) { return test::writeGemmaFixture(d, f, 3); },
       .refused = {"use_bidirectional_attention", "true", {"field 'use_bidirectional_attention' is true", "Gemma 3"}},
       .required = "layers.1.self_attn.k_norm.weight"},
      {.model_type = "phi",
       .write = test::writePhiFixture,
       .refused = {"qk_layernorm", "true", {"field 'qk_layernorm' is true, which Phi here does not implement"}},
       .required = "layers.1.self_attn.dense.bias"},
      {.model_type = "phi3",
       .write = test::writePhi3Fixture,
       .refused = {"attn_logit_softcapping", "30.0", {"'attn_logit_softcapping' is 30.0", "Phi-3"}},
       .required = "layers.1.self_attn.qkv_proj.weight"},
      {.model_type = "gpt_neox",
       .write = test::writeGptNeoxFixture,
       .refused = {"attn_logit_softcapping", "30.0",
                   {"field 'attn_logit_softcapping' is 30.0, which GPT-NeoX does not implement"}},
       .required = "layers.1.attention.query_key_value.weight"},
      {.model_type = "olmo2",
       .write = test::writeOlmo2Fixture,
       .refused = {"attn_logit_softcapping", "30.0", {"'attn_logit_softcapping' is 30.0", "OLMo 2"}},
       .required = "layers.1.post_feedforward_layernorm.weight"},
      {.model_type = "starcoder2",
       .write = test::writeStarcoder2Fixture,
       .refused = {"attn_logit_softcapping", "30.0", {"'attn_logit_softcapping' is 30.0", "StarCoder2"}},
       .required = "layers.1.mlp.c_fc.bias"},
      {.model_type = "gpt_bigcode",
       .write = test::writeGptBigcodeFixture,
       .refused = {"add_cross_attention", "true",
                   {"field 'add_cross_attention' is true, which GPT-BigCode here does not implement"}},
       .required = "h.1.attn.c_attn.weight"},
      {.model_type = "opt",
       .write = test::writeOptFixture,
       .refused = {"layer_norm_elementwise_affine", "false", {"field 'layer_norm_elementwise_affine' is false", "OPT"}},
       .required = "decoder.layers.1.fc1.weight"},
      {.model_type = "bloom",
       .write = test::writeBloomFixture,
       .refused = {"apply_residual_connection_post_layernorm", "true",
                   {"field 'apply_residual_connection_post_layernorm' is true", "BLOOM"}},
       .required = "h.1.self_attention.query_key_value.weight"},
      {.model_type = "t5",
       .write = test::writeT5Fixture,
       .refused = {"feed_forward_proj", R"("gated-gelu-fast")", {"feed_forward_proj"}},
       .required = "decoder.block.1.layer.1.EncDecAttention.k.weight",
       .no_cache = kSeq2Seq},
      {.model_type = "bart",
       .write = test::writeBartFixture,
       .refused = {"normalize_before", "true", {"'normalize_before' is true, which BART here does not implement"}},
       .required = "encoder.layers.1.self_attn.k_proj.weight",
       .no_cache = kSeq2Seq},
      {.model_type = "vit",
       .write = test::writeVitFixture,
       .refused = {"attn_logit_softcapping", "30.0", {"'attn_logit_softcapping' is 30.0", "ViT"}},
       .required = "encoder.layer.1.attention.attention.value.weight",
       .no_cache = kVision},
  };
  return cases;
}

// [SECTION] Running a family of any kind
// A picture of the model's size: seeded N(0, 1) pixel values, as the processor would give them.
Array pictureFor(const Model& m) {
  const int64_t s = modelInfo(m).config.image_size;
  Array a{{3, s, s}, std::vector<float>(static_cast<size_t>(3 * s * s))};
  std::mt19937_64 rng(3);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (float& v : a.data) v = n(rng);
  return a;
}

// Every map and hidden state one pass gives, whatever the model's kind.
struct Outputs {
  std::vector<Mat> maps, hidden;
  std::vector<int> layer_threads;  // text models: the threads each layer ran on
};
void add(Outputs& o, const std::vector<std::vector<Mat>>& maps) {
  for (const auto& layer : maps) o.maps.insert(o.maps.end(), layer.begin(), layer.end());
}
Outputs outputsOf(const fs::path& dir, const RunContext& ctx = {}) {
  const auto m = loadModel(filesOnDisk(dir.string()));
  Outputs o;
  if (isVisionModel(*m)) {
    const VisionRun r = runVision(*m, pictureFor(*m), 0, ctx);
    add(o, r.attention);
    o.hidden = {r.hidden};
  } else if (isEncoderDecoder(*m)) {
    const Seq2SeqRun r = runSeq2Seq(*m, kText, kTarget, 0, ctx);
    add(o, r.encoder_attention), add(o, r.decoder_attention), add(o, r.cross_attention);
    o.hidden = {r.encoder_hidden, r.decoder_hidden};
  } else {
    const ModelRun r = runModel(*m, kText, {.top_k = 0}, ctx);
    add(o, r.attention);
    o.hidden = {r.hidden};
    o.layer_threads = r.layer_threads;
  }
  return o;
}

// The .npy of [layers, heads, rows, cols] maps holds `maps` as they are.
void expectNpyHolds(const fs::path& npy, const std::vector<std::vector<Mat>>& maps) {
  const Array a = readNpy(npy, npy.filename().string());
  ASSERT_EQ(a.shape.size(), 4u) << npy;
  ASSERT_EQ(a.shape[0], static_cast<int64_t>(maps.size())) << npy;
  size_t e = 0;
  for (const auto& layer : maps) {
    ASSERT_EQ(a.shape[1], static_cast<int64_t>(layer.size())) << npy;
    for (const Mat& map : layer) {
      ASSERT_EQ(a.shape[2], map.rows()) << npy;
      ASSERT_EQ(a.shape[3], map.cols()) << npy;
      for (int64_t i = 0; i < map.rows(); ++i)
        for (int64_t j = 0; j < map.cols(); ++j) ASSERT_FLOAT_EQ(a.data[e++], map(i, j)) << npy;
    }
  }
}

// gtest lists a case by its family.
void PrintTo(const FamilyCase& c, std::ostream* os) { *os << c.model_type; }

class FamilyConformance : public ::testing::TestWithParam<FamilyCase> {};

// [SECTION] The checks
TEST(FamilyConformanceTable, EveryRegisteredFamilyHasARow) {
  std::vector<std::string> registered;
  for (const FamilySummary& f : modelFamilySummaries()) registered.push_back(f.model_type);
  std::vector<std::string> rows;
  for (const FamilyCase& c : familyCases()) rows.push_back(c.model_type);
  EXPECT_EQ(rows, registered) << "each family of families.def needs its row in familyCases(), in the same order";
}

TEST_P(FamilyConformance, KvCacheGenerationEqualsFullForward) {
  const FamilyCase& c = GetParam();
  if (!c.no_cache.empty()) GTEST_SKIP() << c.no_cache;
  test::TempDir dir;
  c.write(dir.path, {.seed = 4});
  test::expectGenerationMatchesFullForward(dir.path, kText);
}

TEST_P(FamilyConformance, RefusesAFieldItDoesNotImplement) {
  const FamilyCase& c = GetParam();
  test::TempDir dir;
  const TinyModel tm = c.write(dir.path, {});
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string())));
  std::vector<std::string> parts = c.refused.parts;
  parts.push_back("config.json");
  test::expectFieldRefused(tm, c.refused.field, c.refused.value, parts);
  ASSERT_NO_THROW(loadModel(filesOnDisk(dir.path.string()))) << "config.json put back";
}

TEST_P(FamilyConformance, NamesAMissingTensor) {
  const FamilyCase& c = GetParam();
  test::TempDir dir;
  TinyModel tm = c.write(dir.path, {});
  std::string saved;  // the name in the checkpoint: the body's name after the family's prefix, if any
  for (const auto& [name, values] : tm.weights)
    if (name.size() >= c.required.size() && name.compare(name.size() - c.required.size(), c.required.size(), c.required) == 0 &&
        (name.size() == c.required.size() || name[name.size() - c.required.size() - 1] == '.'))
      saved = name;
  ASSERT_FALSE(saved.empty()) << c.required << " is not in the fixture";
  tm.weights.erase(saved);
  test::writeWeights(tm);
  test::expectHas(test::loadError(dir.path), {"'" + saved + "' is missing"});
}

// F16 and BF16 tensors are converted exactly: the checkpoint runs as an F32 one of the same (rounded) values.
TEST_P(FamilyConformance, LoadsF16AndBf16Checkpoints) {
  const FamilyCase& c = GetParam();
  for (const DType t : {DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtypeName(t));
    test::TempDir half, full;
    TinyModel tm = c.write(half.path, {.dtype = t, .seed = 5});
    fs::copy(half.path, full.path, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    tm.dir = full.path;
    tm.options.dtype = DType::F32;
    test::writeWeights(tm);
    EXPECT_EQ(modelInfo(*loadModel(filesOnDisk(half.path.string()))).dtype, dtypeName(t));
    const Outputs a = outputsOf(half.path), b = outputsOf(full.path);
    ASSERT_EQ(a.maps.size(), b.maps.size());
    ASSERT_FALSE(a.maps.empty());
    for (size_t i = 0; i < a.maps.size(); ++i) EXPECT_LT((a.maps[i] - b.maps[i]).cwiseAbs().maxCoeff(), 1e-6f) << i;
    ASSERT_EQ(a.hidden.size(), b.hidden.size());
    for (size_t i = 0; i < a.hidden.size(); ++i) EXPECT_LT((a.hidden[i] - b.hidden[i]).cwiseAbs().maxCoeff(), 1e-5f) << i;
  }
}

// Every map and hidden state the same on one thread and on three; a text
// model's every layer ran on the count set (each family's layers enter
// through enterLayer, where a long pass re-decides its threads).
TEST_P(FamilyConformance, IndependentOfTheThreadCount) {
  const FamilyCase& c = GetParam();
  test::TempDir dir;
  c.write(dir.path, {.seed = 6});
  RunContext ctx;
  ctx.adapt_threads = false;  // exactly the count set here
  auto on = [&](int threads) {
    const ThreadScope scope(threads);
    return outputsOf(dir.path, ctx);
  };
  const Outputs one = on(1), three = on(3);
  const size_t layers = three.layer_threads.size();
  EXPECT_EQ(one.layer_threads, std::vector<int>(layers, 1));
  EXPECT_EQ(three.layer_threads, std::vector<int>(layers, 3));
  ASSERT_EQ(one.maps.size(), three.maps.size());
  ASSERT_FALSE(one.maps.empty());
  for (size_t i = 0; i < one.maps.size(); ++i) EXPECT_LT((one.maps[i] - three.maps[i]).cwiseAbs().maxCoeff(), 1e-6f) << i;
  ASSERT_EQ(one.hidden.size(), three.hidden.size());
  for (size_t i = 0; i < one.hidden.size(); ++i)
    EXPECT_LT((one.hidden[i] - three.hidden[i]).cwiseAbs().maxCoeff(), 1e-5f) << i;
}

// `model info` names the family; `model run` writes the maps this process computes.
TEST_P(FamilyConformance, OpensThroughTheCli) {
  const FamilyCase& c = GetParam();
  test::TempDir dir, out;
  c.write(dir.path, {.seed = 4});
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  if (!isVisionModel(*m) && !isEncoderDecoder(*m)) {
    test::expectOpensThroughTheCli(dir.path, kText, label(c.model_type));
    return;
  }
  const test::RunResult info = test::runAttnlab({"model", "info", dir.path.string(), "--json"});
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(nlohmann::json::parse(info.out)["label"], label(c.model_type));
  const fs::path o = out.path / "run";
  if (isVisionModel(*m)) {
    const Array px = pictureFor(*m);
    writeNpy(out.path / "px.npy", px);
    const test::RunResult r = test::runAttnlab(
        {"model", "run", dir.path.string(), "--pixels", (out.path / "px.npy").string(), "--out", o.string()});
    ASSERT_EQ(r.status, 0) << r.err;
    expectNpyHolds(o / "attention.npy", runVision(*m, px, 0).attention);
    return;
  }
  const test::RunResult r =
      test::runAttnlab({"model", "run", dir.path.string(), "--text", kText, "--target", kTarget, "--out", o.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const Seq2SeqRun run = runSeq2Seq(*m, kText, kTarget, 0);
  expectNpyHolds(o / "encoder_attention.npy", run.encoder_attention);
  expectNpyHolds(o / "decoder_attention.npy", run.decoder_attention);
  expectNpyHolds(o / "cross_attention.npy", run.cross_attention);
}

// The hooks every text family's pass calls for the interventions (model_impl.h):
// a pass resumed at any layer from the stream the whole pass kept there ends
// where the whole pass did (l = layers: the final norm alone); ablating a
// head resumed at its layer equals ablating it from the embeddings; and the
// logit splits into parts that add up to it, or the family refuses by name.
TEST_P(FamilyConformance, InterventionsResumeWhereTheWholePassWas) {
  const FamilyCase& c = GetParam();
  test::TempDir dir;
  c.write(dir.path, {.seed = 7});
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  if (isVisionModel(*m) || isEncoderDecoder(*m)) GTEST_SKIP() << "the interventions edit a text model's one stack";
  const std::vector<int32_t> ids = runModel(*m, kText, {.top_k = 0}).ids;
  const int64_t layers = modelInfo(*m).config.layers;
  ModelRunOptions keep{.top_k = 0};
  keep.edit.keep_residual = true;
  const ModelRun whole = runModelIds(*m, ids, keep);
  ASSERT_EQ(whole.residual.size(), static_cast<size_t>(layers + 1));
  for (int64_t l = 0; l <= layers; ++l) {
    ModelRunOptions o{.top_k = 0};
    o.edit.resume_layer = l;
    o.edit.resume = &whole.residual[static_cast<size_t>(l)];
    EXPECT_LT((runModelIds(*m, ids, o).hidden - whole.hidden).cwiseAbs().maxCoeff(), 1e-5f) << "resumed at " << l;
  }
  // What each head writes through its rows of the output projection, plus the projection's bias, is the
  // attention's output the pass added: the family's headWrites projects with the weights its pass used.
  ModelRunOptions writes{.top_k = 0};
  writes.edit.write_positions = {static_cast<int64_t>(ids.size()) - 1, 0};
  const ModelRun w = runModelIds(*m, ids, writes);
  const int64_t heads = modelInfo(*m).config.heads;
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t p = 0; p < 2; ++p) {
      RowVec sum = w.head_bias[static_cast<size_t>(l)];
      for (int64_t h = 0; h < heads; ++h) sum += w.head_writes[static_cast<size_t>(l)].row(h * 2 + p);
      const RowVec& out = w.attention_out[static_cast<size_t>(l)].row(p);
      EXPECT_LT((sum - out).cwiseAbs().maxCoeff(), 1e-5f * std::max(1.0f, out.cwiseAbs().maxCoeff())) << l << ":" << p;
      EXPECT_GT(out.cwiseAbs().maxCoeff(), 0.0f);
    }
  ModelRunOptions ablated{.top_k = 0};
  ablated.edit.ablate.heads = {{layers - 1, 1}};
  const Mat full = runModelIds(*m, ids, ablated).hidden;
  EXPECT_GT((full - whole.hidden).cwiseAbs().maxCoeff(), 1e-5f) << "ablating a head moved nothing";
  ablated.edit.resume_layer = layers - 1;
  ablated.edit.resume = &whole.residual[static_cast<size_t>(layers - 1)];
  EXPECT_LT((runModelIds(*m, ids, ablated).hidden - full).cwiseAbs().maxCoeff(), 1e-5f);
  // post-norm layers, or an LM head beyond the final norm and one matrix
  static const std::set<std::string> refuses = {"bert", "modernbert", "gemma", "gemma2", "gemma3_text", "olmo2", "opt", "phi"};
  const Target t = chooseTarget(*m, ids, -1, -1);  // every text fixture has an LM head
  if (refuses.count(c.model_type)) {
    test::expectHas(test::errorOf([&] { directLogitAttribution(*m, ids, t); }),
                    {"direct logit attribution: " + label(c.model_type)});
    return;
  }
  const LogitAttribution a = directLogitAttribution(*m, ids, t);
  EXPECT_NEAR(a.sum(), a.logit, 1e-4 * std::max(1.0, std::abs(a.logit)));
  EXPECT_EQ(a.heads.rows(), layers);
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyConformance, ::testing::ValuesIn(familyCases()),
                         [](const ::testing::TestParamInfo<FamilyCase>& info) { return info.param.model_type; });

}  // namespace
}  // namespace attn::conformance_test
