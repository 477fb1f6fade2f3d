// GGUF files read as the checkpoints they were converted from
// (engine/model/checkpoint/gguf_model.h): a LLaMA-family checkpoint converted
// as llama.cpp's converter does (tests/gguf_fixture.h: q and k permuted for
// Llama, names, metadata, tokenizer) runs as its safetensors parent — the
// same ids, maps, q and k, logits — and every file this engine cannot run as
// it was meant is refused in one line naming the key or tensor.
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/checkpoint/quants.h"
#include "engine/model/model.h"

#include "tests/gguf_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

namespace fs = std::filesystem;

namespace attn::gguf_model_test {
namespace {

using namespace attn::test;

const std::string kText = "the cat sat on the mat, then the hat";

double maxDiff(const Mat& a, const Mat& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return static_cast<double>((a - b).cwiseAbs().maxCoeff());
}

// The largest differences between two runs of the same text: maps, q, k,
// final hidden states, and the next token's top probabilities (rank by rank) at the last position.
struct RunDiff {
  double maps = 0, q = 0, k = 0, hidden = 0, next = 0;
  int top = 0;  // 1 when the most likely next token differs
};
RunDiff compareRuns(const std::string& parent, const std::string& gguf, const std::string& text = kText) {
  const std::shared_ptr<const Model> a = loadModel(filesOnDisk(parent)), b = loadModel(filesOnDisk(gguf));
  // A BERT file has no masked-LM head (nor its parent here): the encoder's maps and states alone.
  const bool predicts = a->predicts;
  EXPECT_EQ(b->predicts, predicts);
  const ModelRunOptions o = predicts ? ModelRunOptions{.top_k = 5, .predict_at = {-1}} : ModelRunOptions{};
  const ModelRun ra = runModel(*a, text, o), rb = runModel(*b, text, o);
  EXPECT_EQ(ra.ids, rb.ids) << "the GGUF file's tokenizer reads the text as its parent's does";
  RunDiff d;
  for (size_t l = 0; l < ra.attention.size(); ++l) {
    for (size_t h = 0; h < ra.attention[l].size(); ++h) d.maps = std::max(d.maps, maxDiff(ra.attention[l][h], rb.attention[l][h]));
    d.q = std::max(d.q, maxDiff(ra.q[l], rb.q[l]));
    d.k = std::max(d.k, maxDiff(ra.k[l], rb.k[l]));
  }
  d.hidden = maxDiff(ra.hidden, rb.hidden);
  if (!predicts) return d;
  EXPECT_TRUE(!ra.top_k.back().empty() && !rb.top_k.back().empty());
  d.top = ra.top_k.back()[0].id != rb.top_k.back()[0].id;
  for (size_t i = 0; i < ra.top_k.back().size(); ++i)
    d.next = std::max(d.next, static_cast<double>(std::abs(ra.top_k.back()[i].probability - rb.top_k.back()[i].probability)));
  return d;
}

TEST(GgufModel, AnF32FileRunsExactlyAsItsSafetensorsParent) {
  for (const std::string family : {"llama", "qwen2", "qwen3"}) {
    TempDir dir;
    const TinyModel m = writeGgufParent(dir / "parent", family);
    const fs::path gguf = convertToGguf(m, DType::F32, dir / "model.gguf");
    const RunDiff d = compareRuns((dir / "parent").string(), gguf.string());
    // The same float32 weights, read where llama.cpp's converter put them.
    EXPECT_LE(d.maps, 1e-6) << family;
    EXPECT_LE(d.q, 1e-5) << family;
    EXPECT_LE(d.k, 1e-5) << family;
    EXPECT_LE(d.hidden, 1e-4) << family;
    EXPECT_LE(d.next, 1e-6) << family;
    EXPECT_EQ(d.top, 0) << family;
    const ModelInfo info = modelInfo(*loadModel(filesOnDisk(gguf.string())));
    EXPECT_EQ(info.config.family, family);
    EXPECT_EQ(info.config.heads, 4);
    EXPECT_EQ(info.config.kv_heads, 2);
  }
}

// The converter stores F16 as it was saved: the same values, the same run.
TEST(GgufModel, AnF16FileRunsExactlyAsItsF16Parent) {
  for (const DType t : {DType::F16, DType::BF16}) {
    TempDir dir;
    const TinyModel m = writeGgufParent(dir / "parent", "llama", t);
    const RunDiff d = compareRuns((dir / "parent").string(), convertToGguf(m, t, dir / "model.gguf").string());
    EXPECT_LE(d.maps, 1e-6) << dtypeName(t);
    EXPECT_LE(d.hidden, 1e-4) << dtypeName(t);
  }
}

// `m`'s tensors as a file of type t (retyped by `edit`) reads them back:
// each it stores quantized through its type's quantizer (a rounding for F16 /
// BF16) and decoder (quants_test holds both to ggml's own), those llama.cpp
// keeps in F32 as saved; written as a checkpoint of its own in `dir`.
TinyModel roundedParent(const TinyModel& m, DType t, const fs::path& dir, const GgufEdit& edit = {}) {
  TinyModel r = m;
  r.dir = dir;
  fs::create_directories(dir);
  for (const fs::directory_entry& f : fs::directory_iterator(m.dir))  // config.json, the tokenizer's files
    if (f.path().extension() != ".safetensors") fs::copy_file(f.path(), dir / f.path().filename());
  for (const auto& [name, stored] : ggufStoredTypes(m, t, edit)) {
    if (stored == DType::F32) continue;
    std::vector<float>& w = r.weights.at(name);
    const std::vector<uint8_t> q = quantize(stored, w.data(), static_cast<int64_t>(w.size()));
    toFloats(stored, q.data(), static_cast<int64_t>(w.size()), w.data());
  }
  writeWeights(r);
  return r;
}

// A quantized file runs as its parent with the weights it stores (the
// quantization's whole effect), whatever the type; from the float32 parent
// itself the ≥ 4-bit types move the next token's probabilities by a few
// hundredths at most on these peaked random maps (measured 0.004 for Q8_0 to
// 0.059 for Q5_0; a map's largest change is printed, 0.09 for Q8_0).
TEST(GgufModel, AQuantizedFileRunsAsItsParentWithTheWeightsItStores) {
  TempDir dir;
  const TinyModel m = writeGgufParent(dir / "parent", "llama");
  for (const DType t : {DType::Q8_0, DType::Q6_K, DType::Q5_K, DType::Q4_K, DType::Q5_1, DType::Q5_0, DType::Q4_1,
                        DType::Q4_0, DType::IQ4_NL, DType::IQ4_XS, DType::Q3_K, DType::Q2_K}) {
    const std::string name = dtypeName(t);
    const fs::path gguf = convertToGguf(m, t, dir / (name + ".gguf"));
    roundedParent(m, t, dir / name);
    const RunDiff same = compareRuns((dir / name).string(), gguf.string());
    EXPECT_LE(same.maps, 1e-4) << name;  // the same weights; the quantized ones multiplied tile by tile
    EXPECT_LE(same.hidden, 1e-4) << name;
    EXPECT_LE(same.next, 1e-5) << name;
    EXPECT_EQ(same.top, 0) << name;
    // Decoding one token at a time (the one-row products decoded in registers) is the full pass.
    if (t == DType::Q4_K || t == DType::Q6_K) expectGenerationMatchesFullForward(gguf, kText, 4);
    if (t == DType::Q3_K || t == DType::Q2_K) continue;
    const RunDiff parent = compareRuns((dir / "parent").string(), gguf.string());
    EXPECT_LE(parent.next, 0.08) << name;
    EXPECT_GT(parent.maps, 0.0) << name << ": the weights were rounded; the maps cannot be the float32 parent's";
    std::printf("%s: maps within %.2g of the float32 parent's, next-token probabilities within %.2g\n", name.c_str(),
                parent.maps, parent.next);
  }
}

// A file as most people have them, llama-quantize's Q4_K_M: Q4_K matrices,
// the head and the second layer's attn_v and ffn_down Q6_K, the norms F32,
// each read by its own type; the products of a decode step (Q4_K's and Q6_K's
// factored sums) are the full pass's.
TEST(GgufModel, AQ4_K_MFileReadsEachTensorByItsOwnType) {
  TempDir dir;
  const TinyModel m = writeGgufParent(dir / "parent", "llama");
  const fs::path gguf = convertToGguf(m, DType::Q4_K, dir / "q4_k_m.gguf", asQ4KM());
  const std::map<std::string, DType> stored = ggufStoredTypes(m, DType::Q4_K, asQ4KM());
  EXPECT_EQ(stored.at("lm_head.weight"), DType::Q6_K);
  EXPECT_EQ(stored.at("model.layers.0.self_attn.v_proj.weight"), DType::Q4_K);  // 2 layers: use_more_bits(0, 2) is false
  EXPECT_EQ(stored.at("model.layers.1.self_attn.v_proj.weight"), DType::Q6_K);
  EXPECT_EQ(stored.at("model.layers.1.mlp.down_proj.weight"), DType::Q6_K);
  EXPECT_EQ(stored.at("model.layers.1.mlp.up_proj.weight"), DType::Q4_K);
  EXPECT_EQ(stored.at("model.norm.weight"), DType::F32);
  roundedParent(m, DType::Q4_K, dir / "rounded", asQ4KM());
  const RunDiff same = compareRuns((dir / "rounded").string(), gguf.string());
  EXPECT_LE(same.maps, 1e-4);
  EXPECT_LE(same.hidden, 1e-4);
  EXPECT_LE(same.next, 1e-5);
  EXPECT_EQ(same.top, 0);
  // Read as a plain Q4_K file, the Q6_K tensors would be another model.
  const RunDiff pure = compareRuns((dir / "rounded").string(), convertToGguf(m, DType::Q4_K, dir / "q4_k.gguf").string());
  EXPECT_GT(pure.hidden, 1e-3);
  expectGenerationMatchesFullForward(gguf, kText, 4);
}

// The issue's own measure: Q8_0 on TinyLlama-1.1B's widths (d = 2048, 32
// query heads over 4 key/value heads of 64, SwiGLU 5632; two of its 22
// layers; weights N(0, 0.02²), its initializer_range) moves no attention
// weight by 1e-2. Held so in the first layer (the rounded embeddings, q and
// k alone: measured 0.0093) and in 99.9 % of the second's weights; there
// the rounding of a whole layer before it moves a dozen of 23,328 by up to
// 0.013, each in an early row whose few keys share it evenly (p ≈ 0.45 over
// 3 keys, where a weight moves most with its score), so the second layer is held to 2e-2.
TEST(GgufModel, Q8_0OnTheTinyLlamaShapeKeepsEveryAttentionWeightClose) {
  constexpr int64_t d = 2048, heads = 32, kv = 4, dh = 64, ff = 5632, V = kTokenizerVocab;
  nlohmann::json config = {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"num_hidden_layers", 2},
                           {"hidden_size", d}, {"intermediate_size", ff}, {"num_attention_heads", heads},
                           {"num_key_value_heads", kv}, {"max_position_embeddings", 64}, {"vocab_size", V},
                           {"rms_norm_eps", 1e-5}, {"rope_theta", 10000.0}, {"tie_word_embeddings", false}};
  std::vector<TensorSpec> t = {{"model.embed_tokens.weight", {V, d}, 0.02f}, {"model.norm.weight", {d}, 0.02f, 1.0f},
                               {"lm_head.weight", {V, d}, 0.02f}};
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    for (const auto& [name, shape] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
             {"self_attn.q_proj.weight", {heads * dh, d}}, {"self_attn.k_proj.weight", {kv * dh, d}},
             {"self_attn.v_proj.weight", {kv * dh, d}},    {"self_attn.o_proj.weight", {d, heads * dh}},
             {"mlp.gate_proj.weight", {ff, d}},            {"mlp.up_proj.weight", {ff, d}},
             {"mlp.down_proj.weight", {d, ff}}})
      t.push_back({p + name, shape, 0.02f});
    t.push_back({p + "input_layernorm.weight", {d}, 0.02f, 1.0f});
    t.push_back({p + "post_attention_layernorm.weight", {d}, 0.02f, 1.0f});
  }
  TempDir dir;
  const TinyModel m = writeCheckpoint(dir / "parent", config, t);
  const fs::path gguf = convertToGguf(m, DType::Q8_0, dir / "q8_0.gguf");
  const ModelRun a = runModel(*loadModel(filesOnDisk((dir / "parent").string())), kText, {});
  const ModelRun b = runModel(*loadModel(filesOnDisk(gguf.string())), kText, {});
  ASSERT_EQ(a.attention.size(), 2u);
  for (size_t l = 0; l < 2; ++l) {
    double worst = 0;
    Eigen::Index over = 0, total = 0;
    for (size_t h = 0; h < a.attention[l].size(); ++h) {
      const Mat diff = (a.attention[l][h] - b.attention[l][h]).cwiseAbs();
      worst = std::max(worst, static_cast<double>(diff.maxCoeff()));
      over += (diff.array() > 1e-2f).count();
      total += diff.size();
    }
    EXPECT_GT(worst, 0.0) << "layer " << l << ": the weights were rounded";
    EXPECT_LE(worst, l == 0 ? 1e-2 : 2e-2) << "layer " << l;
    EXPECT_LE(static_cast<double>(over), 1e-3 * static_cast<double>(total)) << "layer " << l;
    std::printf("Q8_0, TinyLlama's widths, layer %zu: attention weights within %.4f of the float32 parent's, %ld of %ld "
                "moved by more than 1e-2\n", l, worst, static_cast<long>(over), static_cast<long>(total));
  }
}

std::string ggufError(const TinyModel& m, const GgufEdit& edit, const fs::path& out) {
  convertToGguf(m, DType::F32, out, edit);
  return errorOf([&] { loadModel(filesOnDisk(out.string())); });
}

void setKey(std::vector<GgufKv>& kv, const std::string& key, const GgufValue& v) {
  const auto it = std::find_if(kv.begin(), kv.end(), [&](const GgufKv& k) { return k.key == key; });
  if (it == kv.end()) kv.push_back({key, v});
  else it->value = v;
}

std::vector<GgufTensorOut>::iterator tensorNamed(std::vector<GgufTensorOut>& t, const std::string& name) {
  return std::find_if(t.begin(), t.end(), [&](const GgufTensorOut& x) { return x.name == name; });
}

void dropKey(std::vector<GgufKv>& kv, const std::string& key) {
  kv.erase(std::remove_if(kv.begin(), kv.end(), [&](const GgufKv& k) { return k.key == key; }), kv.end());
}

TEST(GgufModel, RefusesWhatItCannotRunAsMeantInOneLine) {
  TempDir dir;
  const TinyModel m = writeGgufParent(dir / "parent", "llama");
  const fs::path out = dir / "bad.gguf";
  expectHas(ggufError(m, [](auto& kv, auto&) { setKey(kv, "general.architecture", ggufString("mamba")); }, out),
            {"bad.gguf", "general.architecture", "'mamba'", "not supported", "llama", "qwen3"});
  expectHas(ggufError(m, [](auto& kv, auto&) { dropKey(kv, "general.architecture"); }, out),
            {"bad.gguf", "'general.architecture' is missing"});
  expectHas(ggufError(m, [](auto& kv, auto&) { setKey(kv, "llama.expert_count", ggufInt(GgufType::UInt32, 8)); }, out),
            {"bad.gguf", "'llama.expert_count'", "not implemented for Llama"});
  expectHas(ggufError(m, [](auto& kv, auto&) { setKey(kv, "llama.rope.scaling.type", ggufString("yarn")); }, out),
            {"'llama.rope.scaling.type'", "'yarn'", "not implemented"});
  expectHas(ggufError(m, [](auto& kv, auto&) { dropKey(kv, "llama.block_count"); }, out),
            {"'llama.block_count' is missing"});
  expectHas(ggufError(m, [](auto& kv, auto&) { setKey(kv, "llama.block_count", ggufString("two")); }, out),
            {"'llama.block_count' must be an integer, got string"});
  expectHas(ggufError(m, [](auto& kv, auto&) { setKey(kv, "llama.attention.head_count_kv", ggufInt(GgufType::UInt32, 3)); }, out),
            {"bad.gguf", "num_key_value_heads", "3"});
  expectHas(ggufError(m, [](auto& kv, auto&) { setKey(kv, "llama.rope.dimension_count", ggufInt(GgufType::UInt32, 32)); }, out),
            {"'llama.rope.dimension_count' is 32", "all 64"});
  expectHas(ggufError(m, [](auto& kv, auto&) { setKey(kv, "split.count", ggufInt(GgufType::UInt16, 3)); }, out),
            {"'split.count' is 3", "llama-gguf-split --merge"});
  expectHas(ggufError(m, [](auto&, auto& t) { t.push_back({"blk.0.ffn_gate_exps.weight", {256, 4}, DType::F32, std::vector<float>(1024)}); }, out),
            {"bad.gguf", "tensor 'blk.0.ffn_gate_exps.weight'", "not one of Llama's tensors"});
  expectHas(ggufError(m, [](auto&, auto& t) { t.erase(t.begin() + 3); }, out), {"bad.gguf", "is missing"});
  expectHas(ggufError(m, [](auto&, auto& t) { t[1].values[5] = NAN; }, out), {"bad.gguf", "NaN at element"});
}

// [SECTION] The other families
// Each family's parent (tests/gguf_fixture.h), converted as that family's
// converter class writes it, runs as its parent: what the converter changed
// (Gemma's norms + 1, …) is undone as the file is read.
struct GgufParent {
  std::string name;
  std::function<TinyModel(const fs::path&)> write;
  std::string text = kText;
};
const std::vector<GgufParent>& ggufParents() {
  static const std::vector<GgufParent> parents = {
      {"gemma", [](const fs::path& d) { return writeGemmaGgufParent(d, 1); }},
      {"gemma2", [](const fs::path& d) { return writeGemmaGgufParent(d, 2); }},
      {"gemma3", [](const fs::path& d) { return writeGemmaGgufParent(d, 3); }},
      {"olmo2", writeOlmo2GgufParent},
      {"phi3", writePhi3GgufParent},
      // The GPT-2 fixture (16 positions): its Conv1D weights transposed in the file.
      {"gpt2", [](const fs::path& d) { return writeTinyModel(d, {.prefix = "transformer."}); }, "the cat sat"},
      {"starcoder", [](const fs::path& d) { return writeStarcoderGgufParent(d); }},
      {"bert", [](const fs::path& d) { return writeBertGgufParent(d); }},
      // query_key_value regrouped [Q; K; V] in the file.
      {"gptneox", [](const fs::path& d) { return writeGptNeoxGgufParent(d, true); }},
      {"gptneox sequential", [](const fs::path& d) { return writeGptNeoxGgufParent(d, false); }},
      {"bloom", writeBloomGgufParent},
      {"phi2", writePhiGgufParent},
  };
  return parents;
}

TEST(GgufModel, OtherFamiliesF32FilesRunExactlyAsTheirParents) {
  for (const GgufParent& p : ggufParents()) {
    SCOPED_TRACE(p.name);
    TempDir dir;
    const TinyModel m = p.write(dir / "parent");
    const fs::path gguf = convertToGguf(m, DType::F32, dir / "model.gguf");
    const RunDiff d = compareRuns((dir / "parent").string(), gguf.string(), p.text);
    // The same float32 weights (a norm's w + 1 − 1 within a rounding).
    EXPECT_LE(d.maps, 1e-5);
    EXPECT_LE(d.q, 1e-4);
    EXPECT_LE(d.k, 1e-4);
    EXPECT_LE(d.hidden, 1e-4);
    EXPECT_LE(d.next, 1e-5);
    const ModelConfig c = modelInfo(*loadModel(filesOnDisk(gguf.string()))).config;
    EXPECT_EQ(c.arch_name, m.config.arch_name);
    EXPECT_EQ(c.layer_window, m.config.layer_window);
    EXPECT_EQ(c.score_scale, m.config.score_scale);
  }
}

// GPT-NeoX's and BLOOM's fused query_key_value, regrouped [Q; K; V] in the
// file, is read per head where each row is stored, tile by tile and one
// decode row at a time: a file of each type runs as its parent with the
// values the file stores (the 16-bit ones exactly), and Phi's the same.
TEST(GgufModel, GptNeoxBloomPhiFilesOfEachTypeRunAsTheirParentsWithTheWeightsTheyStore) {
  for (const GgufParent& p : ggufParents()) {
    if (p.name != "gptneox" && p.name != "gptneox sequential" && p.name != "bloom" && p.name != "phi2") continue;
    TempDir dir;
    const TinyModel m = p.write(dir / "parent");
    for (const DType t : {DType::F16, DType::BF16, DType::Q8_0, DType::Q4_K}) {
      const std::string name = dtypeName(t);
      SCOPED_TRACE(p.name + " " + name);
      const fs::path gguf = convertToGguf(m, t, dir / (name + ".gguf"));
      roundedParent(m, t, dir / name);
      const RunDiff same = compareRuns((dir / name).string(), gguf.string(), p.text);
      // The 16-bit values exactly (multiplied tile by tile: float sums in another order).
      const bool exact = t == DType::F16 || t == DType::BF16;
      EXPECT_LE(same.maps, exact ? 1e-5 : 1e-4);
      EXPECT_LE(same.q, 1e-4);
      EXPECT_LE(same.k, 1e-4);
      EXPECT_LE(same.hidden, 1e-4);
      EXPECT_LE(same.next, 1e-5);
      EXPECT_EQ(same.top, 0);
      if (t == DType::Q4_K) expectGenerationMatchesFullForward(gguf, p.text, 4);
      if (exact) continue;
      const RunDiff parent = compareRuns((dir / "parent").string(), gguf.string(), p.text);
      EXPECT_LE(parent.next, 0.08);
      EXPECT_GT(parent.maps, 0.0) << "the weights were rounded; the maps cannot be the float32 parent's";
    }
  }
}

TEST(GgufModel, RefusesGemmaKeysAndTensorsItCannotRunAsMeant) {
  TempDir dir;
  const TinyModel g1 = writeGemmaGgufParent(dir / "gemma", 1), g3 = writeGemmaGgufParent(dir / "gemma3", 3);
  const fs::path out = dir / "bad.gguf";
  // Gemma 3 has no score soft-cap (its converter asserts none): one in the file is not run.
  expectHas(ggufError(g3, [](auto& kv, auto&) { setKey(kv, "gemma3.attn_logit_softcapping", ggufFloat(50)); }, out),
            {"bad.gguf", "'gemma3.attn_logit_softcapping'", "not implemented for Gemma 3"});
  expectHas(ggufError(g3, [](auto& kv, auto&) { setKey(kv, "gemma3.rope.scaling.type", ggufString("yarn")); }, out),
            {"'gemma3.rope.scaling.type'", "'yarn'"});
  expectHas(ggufError(g3, [](auto& kv, auto&) { setKey(kv, "gemma3.attention.sliding_window", ggufFloat(2.5)); }, out),
            {"'gemma3.attention.sliding_window' must be an integer, got float32"});
  // Gemma 1 has no window; a head of its own is not Gemma's (the converter drops lm_head).
  expectHas(ggufError(g1, [](auto& kv, auto&) { setKey(kv, "gemma.attention.sliding_window", ggufInt(GgufType::UInt32, 8)); }, out),
            {"'gemma.attention.sliding_window'", "not implemented for Gemma"});
  expectHas(ggufError(g1, [](auto&, auto& t) { t.push_back({"output.weight", {256, 261}, DType::F32, std::vector<float>(256 * 261)}); }, out),
            {"tensor 'output.weight'", "not one of Gemma's tensors"});
}

TEST(GgufModel, RefusesOlmo2KeysAndTensorsItCannotRunAsMeant) {
  TempDir dir;
  const TinyModel olmo = writeOlmo2GgufParent(dir / "olmo2");
  const fs::path out = dir / "bad.gguf";
  // Olmo 3's window is converted as the olmo2 architecture; OLMo 2 has none.
  expectHas(ggufError(olmo, [](auto& kv, auto&) { setKey(kv, "olmo2.attention.sliding_window", ggufInt(GgufType::UInt32, 4096)); }, out),
            {"'olmo2.attention.sliding_window'", "not implemented for OLMo 2"});
  expectHas(ggufError(olmo, [](auto& kv, auto&) { setKey(kv, "olmo2.rope.scaling.type", ggufString("yarn")); }, out),
            {"'olmo2.rope.scaling.type'", "'yarn'"});
  expectHas(ggufError(olmo, [](auto&, auto& t) { t.push_back({"blk.0.attn_q.bias", {256}, DType::F32, std::vector<float>(256)}); }, out),
            {"tensor 'blk.0.attn_q.bias'", "not one of OLMo 2's tensors"});
}

TEST(GgufModel, RefusesPhi3KeysAndTensorsItCannotRunAsMeant) {
  TempDir dir;
  const TinyModel phi = writePhi3GgufParent(dir / "phi3");
  const fs::path out = dir / "bad.gguf";
  // Phi-3 128k: longrope's attention factor and its rope factors.
  expectHas(ggufError(phi, [](auto& kv, auto&) { setKey(kv, "phi3.rope.scaling.attn_factor", ggufFloat(1.19)); }, out),
            {"'phi3.rope.scaling.attn_factor'", "longrope", "not implemented"});
  expectHas(ggufError(phi, [](auto&, auto& t) { t.push_back({"rope_factors_long.weight", {16}, DType::F32, std::vector<float>(16, 1.0f)}); }, out),
            {"tensor 'rope_factors_long.weight'", "not one of Phi-3's tensors"});
  expectHas(ggufError(phi, [](auto& kv, auto&) { setKey(kv, "phi3.rope.dimension_count", ggufInt(GgufType::UInt32, 31)); }, out),
            {"'phi3.rope.dimension_count' is 31", "an even number of the 64"});
}

TEST(GgufModel, RefusesGpt2KeysItCannotRunAsMeant) {
  TempDir dir;
  const TinyModel gpt2 = writeTinyModel(dir / "gpt2", {.prefix = "transformer."});
  const fs::path out = dir / "bad.gguf";
  expectHas(ggufError(gpt2, [](auto& kv, auto&) { setKey(kv, "gpt2.attention.head_count_kv", ggufInt(GgufType::UInt32, 1)); }, out),
            {"'gpt2.attention.head_count_kv' is 1", "all 2 heads"});
  expectHas(ggufError(gpt2, [](auto& kv, auto&) { setKey(kv, "gpt2.rope.freq_base", ggufFloat(10000)); }, out),
            {"'gpt2.rope.freq_base'", "not implemented for GPT-2"});
  // A Conv1D weight left as saved ([in, out] where the converter writes [out, in]) has the other shape.
  expectHas(ggufError(gpt2, [](auto&, auto& t) {
              const auto qkv = tensorNamed(t, "blk.0.attn_qkv.weight");
              std::swap(qkv->dims[0], qkv->dims[1]);
            }, out),
            {"bad.gguf", "'transformer.h.0.attn.c_attn.weight' has shape [24, 8]", "[8, 24]"});
}

// [SECTION] StarCoder and BERT
// Their 16-bit parents as the converter saves them (the same values), and
// quantized files as their parents with the weights they store.
TEST(GgufModel, StarcoderAndBertFilesRunAsTheirParentsIn16BitsAndQuantized) {
  for (const auto& [name, write] : std::vector<std::pair<std::string, TinyModel (*)(const fs::path&, DType)>>{
           {"starcoder", writeStarcoderGgufParent}, {"bert", writeBertGgufParent}}) {
    for (const DType t : {DType::F16, DType::BF16}) {
      SCOPED_TRACE(name + " " + dtypeName(t));
      TempDir dir;
      const TinyModel m = write(dir / "parent", t);
      const RunDiff d = compareRuns((dir / "parent").string(), convertToGguf(m, t, dir / "model.gguf").string());
      EXPECT_LE(d.maps, 1e-5);
      EXPECT_LE(d.hidden, 1e-4);
    }
    TempDir dir;
    const TinyModel m = write(dir / "parent", DType::F32);
    for (const DType t : {DType::Q8_0, DType::Q4_K}) {
      SCOPED_TRACE(name + " " + dtypeName(t));
      const fs::path gguf = convertToGguf(m, t, dir / (std::string(dtypeName(t)) + ".gguf"));
      // As a real file: the position (and BERT's token-type) table in F32, the token embeddings quantized.
      const std::string bytes = slurp(gguf);
      const GgufHeader h = parseGgufHeader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), gguf.string());
      int tables = 0;
      for (const GgufTensor& x : h.tensors) {
        if (x.name == "position_embd.weight" || x.name == "token_types.weight") {
          EXPECT_EQ(x.type, DType::F32) << x.name;
          ++tables;
        }
        if (x.name == "token_embd.weight") {
          EXPECT_EQ(x.type, t);
        }
      }
      EXPECT_EQ(tables, name == "bert" ? 2 : 1);
      roundedParent(m, t, dir / dtypeName(t));
      const RunDiff same = compareRuns((dir / dtypeName(t)).string(), gguf.string());
      EXPECT_LE(same.maps, 1e-4);
      EXPECT_LE(same.hidden, 1e-3);
      const RunDiff parent = compareRuns((dir / "parent").string(), gguf.string());
      EXPECT_GT(parent.maps, 0.0) << "the weights were rounded; the maps cannot be the float32 parent's";
      std::printf("%s %s: maps within %.2g of the float32 parent's\n", name.c_str(), dtypeName(t).c_str(), parent.maps);
    }
  }
}

TEST(GgufModel, RefusesStarcoderAndBertKeysTheyCannotRunAsMeant) {
  TempDir dir;
  const TinyModel star = writeStarcoderGgufParent(dir / "starcoder"), bert = writeBertGgufParent(dir / "bert");
  const fs::path out = dir / "bad.gguf";
  // llama.cpp splits c_attn as one key/value head: a file saying more is not StarCoder as it runs.
  expectHas(ggufError(star, [](auto& kv, auto&) { setKey(kv, "starcoder.attention.head_count_kv", ggufInt(GgufType::UInt32, 4)); }, out),
            {"bad.gguf", "'starcoder.attention.head_count_kv' is 4", "one key/value head"});
  expectHas(ggufError(star, [](auto& kv, auto&) { setKey(kv, "starcoder.rope.freq_base", ggufFloat(10000)); }, out),
            {"'starcoder.rope.freq_base'", "not implemented for GPT-BigCode"});
  expectHas(ggufError(bert, [](auto& kv, auto&) { setKey(kv, "bert.attention.causal", ggufInt(GgufType::Bool, 1)); }, out),
            {"bad.gguf", "'bert.attention.causal' is true", "both ways"});
  // Rank pooling is a reranker's classifier head.
  expectHas(ggufError(bert, [](auto& kv, auto&) { setKey(kv, "bert.pooling_type", ggufInt(GgufType::UInt32, 4)); }, out),
            {"'bert.pooling_type' is 4", "0 to 3"});
  expectHas(ggufError(bert, [](auto&, auto& t) { t.push_back({"cls.output.weight", {256, 2}, DType::F32, std::vector<float>(512)}); }, out),
            {"tensor 'cls.output.weight'", "not one of BERT's tensors"});
  // Mean pooling (a sentence-transformers file) sums the states AttnLab shows: read, nothing refused.
  convertToGguf(bert, DType::F32, out, [](auto& kv, auto&) { setKey(kv, "bert.pooling_type", ggufInt(GgufType::UInt32, 1)); });
  EXPECT_FALSE(loadModel(filesOnDisk(out.string()))->predicts);
}

// [SECTION] Llama 3.1's RoPE scaling
// The converter saves rope_scaling llama3 as rope_freqs (each frequency's
// divisor); the parent's factor, low and high bounds put this head's 32
// frequencies in all three of llama3's ranges (kept, smoothed, divided).
TinyModel writeLlama3Parent(const fs::path& dir) {
  const TinyModel m = writeGgufParent(dir, "llama");
  setConfigField(m, "rope_scaling",
                 R"({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 8.0, "high_freq_factor": 64.0, "original_max_position_embeddings": 8192})");
  return m;
}

TEST(GgufModel, ALlama31FileRunsItsRopeFreqsAsItsParentsLlama3Scaling) {
  TempDir dir;
  const TinyModel m = writeLlama3Parent(dir / "parent");
  const RopeSpec scaled = modelInfo(*loadModel(filesOnDisk((dir / "parent").string()))).config.rope;
  RopeSpec plain;
  plain.theta = scaled.theta;
  const std::vector<double> a = scaled.frequencies(64), b = plain.frequencies(64);
  EXPECT_EQ(a.front(), b.front()) << "the fastest frequency is kept";
  EXPECT_NEAR(a.back(), b.back() / 8, 1e-12) << "the slowest is divided by the factor";
  EXPECT_TRUE(a[20] < b[20] && a[20] > b[20] / 8) << "one between is smoothed";

  const fs::path gguf = convertToGguf(m, DType::F32, dir / "model.gguf");
  const ModelConfig c = modelInfo(*loadModel(filesOnDisk(gguf.string()))).config;
  ASSERT_EQ(c.rope.freq_factors.size(), 32u);
  EXPECT_EQ(c.rope.type, "default");
  const std::vector<double> g = c.rope.frequencies(64);
  // The divisor is the float32 of 1 / ((1 − s) / factor + s): θ_i within a few float32 roundings (2⁻²³ ≈ 1.2e-7 each).
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], a[i], 4e-7 * a[i]) << i;
  const RunDiff d = compareRuns((dir / "parent").string(), gguf.string());
  EXPECT_LE(d.maps, 1e-5);
  EXPECT_LE(d.q, 1e-4);
  EXPECT_LE(d.k, 1e-4);
  EXPECT_LE(d.next, 1e-5);
  // Without its rope_freqs the file turns q and k otherwise.
  const fs::path plain_file = dir / "plain.gguf";
  convertToGguf(m, DType::F32, plain_file, [](auto&, auto& t) { t.erase(tensorNamed(t, "rope_freqs.weight")); });
  EXPECT_GT(compareRuns((dir / "parent").string(), plain_file.string()).q, 1e-3);
}

TEST(GgufModel, RefusesARopeFreqsTensorItCannotRunAsMeant) {
  TempDir dir;
  const TinyModel m = writeLlama3Parent(dir / "parent");
  const fs::path out = dir / "bad.gguf";
  expectHas(ggufError(m, [](auto&, auto& t) { tensorNamed(t, "rope_freqs.weight")->dims = {31}; tensorNamed(t, "rope_freqs.weight")->values.pop_back(); }, out),
            {"bad.gguf", "tensor 'rope_freqs.weight' has shape [31], expected [32]"});
  expectHas(ggufError(m, [](auto&, auto& t) { tensorNamed(t, "rope_freqs.weight")->type = DType::F16; }, out),
            {"tensor 'rope_freqs.weight' is F16", "F32"});
  expectHas(ggufError(m, [](auto&, auto& t) { tensorNamed(t, "rope_freqs.weight")->values[3] = 0.0f; }, out),
            {"tensor 'rope_freqs.weight' has 0 at element 3", "positive"});
  // Qwen2's converter writes none.
  const TinyModel qwen = writeGgufParent(dir / "qwen2", "qwen2");
  expectHas(ggufError(qwen, [](auto&, auto& t) { t.push_back({"rope_freqs.weight", {32}, DType::F32, std::vector<float>(32, 2.0f)}); }, out),
            {"tensor 'rope_freqs.weight'", "not one of Qwen2's tensors"});
}

TEST(GgufModel, RefusesGptNeoxKeysItCannotRunAsMeant) {
  TempDir dir;
  const TinyModel neox = writeGptNeoxGgufParent(dir / "neox", true);
  const fs::path out = dir / "bad.gguf";
  expectHas(ggufError(neox, [](auto& kv, auto&) { setKey(kv, "gptneox.attention.head_count_kv", ggufInt(GgufType::UInt32, 1)); }, out),
            {"'gptneox.attention.head_count_kv' is 1", "GPT-NeoX's keys and values have all 2 heads"});
  expectHas(ggufError(neox, [](auto& kv, auto&) { setKey(kv, "gptneox.rope.dimension_count", ggufInt(GgufType::UInt32, 31)); }, out),
            {"'gptneox.rope.dimension_count' is 31", "an even number of the 128"});
  expectHas(ggufError(neox, [](auto& kv, auto&) { setKey(kv, "gptneox.use_parallel_residual", ggufInt(GgufType::UInt32, 0)); }, out),
            {"'gptneox.use_parallel_residual' must be a bool, got uint32"});
  // llama.cpp reads a head width of its own; GPT-NeoX's is the width over the heads.
  expectHas(ggufError(neox, [](auto& kv, auto&) { setKey(kv, "gptneox.attention.key_length", ggufInt(GgufType::UInt32, 64)); }, out),
            {"'gptneox.attention.key_length'", "not implemented for GPT-NeoX"});
}

TEST(GgufModel, RefusesBloomKeysItCannotRunAsMeant) {
  TempDir dir;
  const TinyModel bloom = writeBloomGgufParent(dir / "bloom");
  const fs::path out = dir / "bad.gguf";
  expectHas(ggufError(bloom, [](auto& kv, auto&) { setKey(kv, "bloom.feed_forward_length", ggufInt(GgufType::UInt32, 512)); }, out),
            {"'bloom.feed_forward_length' is 512", "BLOOM's MLP is 4 · 256 = 1024 wide"});
  // ALiBi's largest bias: llama.cpp hard-codes BLOOM's 8 (MPT's files carry one).
  expectHas(ggufError(bloom, [](auto& kv, auto&) { setKey(kv, "bloom.attention.max_alibi_bias", ggufFloat(4)); }, out),
            {"'bloom.attention.max_alibi_bias'", "not implemented for BLOOM"});
  expectHas(ggufError(bloom, [](auto& kv, auto&) { setKey(kv, "bloom.attention.head_count_kv", ggufInt(GgufType::UInt32, 2)); }, out),
            {"'bloom.attention.head_count_kv' is 2", "all 4 heads"});
}

TEST(GgufModel, RefusesPhi2KeysAndTensorsItCannotRunAsMeant) {
  TempDir dir;
  const TinyModel phi = writePhiGgufParent(dir / "phi");
  const fs::path out = dir / "bad.gguf";
  expectHas(ggufError(phi, [](auto& kv, auto&) { setKey(kv, "phi2.rope.dimension_count", ggufInt(GgufType::UInt32, 47)); }, out),
            {"'phi2.rope.dimension_count' is 47", "an even number of the 64"});
  // Phi-2's first checkpoints (mixer.Wqkv) convert to a fused attn_qkv.
  expectHas(ggufError(phi, [](auto&, auto& t) { t.push_back({"blk.0.attn_qkv.weight", {256, 768}, DType::F32, std::vector<float>(256 * 768)}); }, out),
            {"tensor 'blk.0.attn_qkv.weight'", "not one of Phi's tensors"});
  expectHas(ggufError(phi, [](auto& kv, auto&) { setKey(kv, "phi2.rope.scaling.type", ggufString("yarn")); }, out),
            {"'phi2.rope.scaling.type'", "'yarn'"});
}

}  // namespace
}  // namespace attn::gguf_model_test
