#include "tests/gguf_fixture.h"

#include "engine/files.h"
#include "tests/test_support.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>

namespace fs = std::filesystem;

namespace attn::test {

GgufValue ggufInt(GgufType type, int64_t v) {
  GgufValue g;
  g.type = type;
  g.integer = v;
  return g;
}

GgufValue ggufFloat(double v) {
  GgufValue g;
  g.type = GgufType::Float32;
  g.number = v;
  return g;
}

GgufValue ggufString(const std::string& v) {
  GgufValue g;
  g.type = GgufType::String;
  g.text = v;
  return g;
}

GgufValue ggufStrings(const std::vector<std::string>& v) {
  GgufValue g;
  g.type = GgufType::Array;
  g.element = GgufType::String;
  g.count = v.size();
  g.texts = v;
  return g;
}

GgufValue ggufFloats(const std::vector<float>& v) {
  GgufValue g;
  g.type = GgufType::Array;
  g.element = GgufType::Float32;
  g.count = v.size();
  g.numbers.assign(v.begin(), v.end());
  return g;
}

GgufValue ggufInts(GgufType element, const std::vector<int64_t>& v) {
  GgufValue g;
  g.type = GgufType::Array;
  g.element = element;
  g.count = v.size();
  g.integers = v;
  return g;
}

std::string ggufBytes(const std::vector<GgufKv>& kv, const std::vector<GgufTensorOut>& tensors, uint32_t version,
                      uint64_t alignment) {
  const TempDir dir;
  writeGguf(dir / "x.gguf", kv, tensors, version, alignment);
  return slurp(dir / "x.gguf");
}

void writeGguf(const fs::path& path, const std::vector<GgufKv>& kv, const std::vector<GgufTensorOut>& tensors,
               uint32_t version, uint64_t alignment) {
  std::vector<GgufTensorToWrite> out;
  for (const GgufTensorOut& t : tensors) {
    auto held = std::make_shared<const std::vector<float>>(t.values);
    out.push_back({t.name, t.dims, t.type, [held](int64_t first, int64_t count, float* o) {
                     std::copy_n(held->begin() + first, count, o);
                   }});
  }
  attn::writeGguf(path, kv, out, version, alignment);
}

TinyModel writeGgufParent(const fs::path& dir, const std::string& family, DType dtype) {
  constexpr int64_t layers = 2, d = 256, heads = 4, kv = 2, dh = 64, ff = 512, V = kTokenizerVocab;
  const std::string arch = family == "qwen2" ? "Qwen2" : family == "qwen3" ? "Qwen3" : "Llama";
  nlohmann::json config = {{"architectures", {arch + "ForCausalLM"}},
                           {"model_type", family},
                           {"num_hidden_layers", layers},
                           {"hidden_size", d},
                           {"intermediate_size", ff},
                           {"num_attention_heads", heads},
                           {"num_key_value_heads", kv},
                           {"head_dim", dh},
                           {"max_position_embeddings", 64},
                           {"vocab_size", V},
                           {"rms_norm_eps", 1e-5},
                           {"rope_theta", 500.0},
                           {"tie_word_embeddings", false}};
  std::vector<TensorSpec> t = {{"model.embed_tokens.weight", {V, d}}, {"model.norm.weight", {d}, 0.1f, 1.0f},
                               {"lm_head.weight", {V, d}, 0.1f}};
  for (int64_t l = 0; l < layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const float s = 0.1f;  // q and k of σ 1.6: scores of σ about 2.5, maps neither flat nor one-hot
    for (const auto& [name, shape] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
             {"self_attn.q_proj.weight", {heads * dh, d}}, {"self_attn.k_proj.weight", {kv * dh, d}},
             {"self_attn.v_proj.weight", {kv * dh, d}},    {"self_attn.o_proj.weight", {d, heads * dh}},
             {"mlp.gate_proj.weight", {ff, d}},            {"mlp.up_proj.weight", {ff, d}},
             {"mlp.down_proj.weight", {d, ff}}})
      t.push_back({p + name, shape, s});
    t.push_back({p + "input_layernorm.weight", {d}, 0.1f, 1.0f});
    t.push_back({p + "post_attention_layernorm.weight", {d}, 0.1f, 1.0f});
    if (family == "qwen2")
      for (const auto& [name, n] : std::vector<std::pair<std::string, int64_t>>{
               {"q_proj.bias", heads * dh}, {"k_proj.bias", kv * dh}, {"v_proj.bias", kv * dh}})
        t.push_back({p + "self_attn." + name, {n}, 0.2f});
    if (family == "qwen3") {
      t.push_back({p + "self_attn.q_norm.weight", {dh}, 0.1f, 1.0f});
      t.push_back({p + "self_attn.k_norm.weight", {dh}, 0.1f, 1.0f});
    }
  }
  if (family != "llama") config["use_sliding_window"] = false;
  TinyOptions o;
  o.dtype = dtype;
  return writeCheckpoint(dir, config, t, o);
}

namespace {

// LlamaModel.permute: each head's rows (first half, second half) interleaved.  [rows, cols]
std::vector<float> permuteRows(const std::vector<float>& w, int64_t rows, int64_t cols, int64_t heads) {
  const int64_t dh = rows / heads, half = dh / 2;
  std::vector<float> out(w.size());
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t s = 0; s < 2; ++s)
      for (int64_t i = 0; i < half; ++i)
        std::copy_n(w.begin() + (h * dh + s * half + i) * cols, cols, out.begin() + (h * dh + 2 * i + s) * cols);
  return out;
}

}  // namespace

fs::path convertToGguf(const TinyModel& m, DType type, const fs::path& out, const GgufEdit& edit) {
  const ModelConfig& c = m.config;
  const std::string arch = c.family;
  std::vector<GgufKv> kv = {
      {"general.architecture", ggufString(arch)},
      {"general.name", ggufString("tiny " + arch)},
      {arch + ".context_length", ggufInt(GgufType::UInt32, c.positions)},
      {arch + ".embedding_length", ggufInt(GgufType::UInt32, c.d_model)},
      {arch + ".block_count", ggufInt(GgufType::UInt32, c.layers)},
      {arch + ".feed_forward_length", ggufInt(GgufType::UInt32, c.d_ff)},
      {arch + ".attention.head_count", ggufInt(GgufType::UInt32, c.heads)},
      {arch + ".attention.head_count_kv", ggufInt(GgufType::UInt32, c.kv_heads)},
      {arch + ".rope.freq_base", ggufFloat(c.rope.theta)},
      {arch + ".attention.layer_norm_rms_epsilon", ggufFloat(c.rms_eps)},
      {arch + ".rope.dimension_count", ggufInt(GgufType::UInt32, c.head_dim)},
      {arch + ".vocab_size", ggufInt(GgufType::UInt32, c.vocab)},
  };
  if (c.head_dim != c.d_model / c.heads) {
    kv.push_back({arch + ".attention.key_length", ggufInt(GgufType::UInt32, c.head_dim)});
    kv.push_back({arch + ".attention.value_length", ggufInt(GgufType::UInt32, c.head_dim)});
  }
  // The tokenizer: tokenizer.json's vocabulary by id, its merges, the added tokens as control tokens.
  const nlohmann::json tok = nlohmann::json::parse(readWholeFile(m.dir / "tokenizer.json", "tokenizer.json"));
  std::vector<std::string> tokens(static_cast<size_t>(c.vocab));
  std::vector<int64_t> types(static_cast<size_t>(c.vocab), 1);
  for (const auto& [piece, id] : tok["model"]["vocab"].items()) tokens[id.get<size_t>()] = piece;
  for (const nlohmann::json& a : tok["added_tokens"]) types[a["id"].get<size_t>()] = 3;
  std::vector<std::string> merges;
  for (const nlohmann::json& mg : tok["model"]["merges"]) merges.push_back(mg.get<std::string>());
  const auto id = [&](const std::string& piece) {
    return static_cast<int64_t>(std::find(tokens.begin(), tokens.end(), piece) - tokens.begin());
  };
  kv.push_back({"tokenizer.ggml.model", ggufString("gpt2")});
  kv.push_back({"tokenizer.ggml.pre", ggufString("gpt-2")});
  kv.push_back({"tokenizer.ggml.tokens", ggufStrings(tokens)});
  kv.push_back({"tokenizer.ggml.token_type", ggufInts(GgufType::Int32, types)});
  kv.push_back({"tokenizer.ggml.merges", ggufStrings(merges)});
  kv.push_back({"tokenizer.ggml.bos_token_id", ggufInt(GgufType::UInt32, id("<s>"))});
  kv.push_back({"tokenizer.ggml.eos_token_id", ggufInt(GgufType::UInt32, id("</s>"))});
  kv.push_back({"tokenizer.ggml.add_bos_token", ggufInt(GgufType::Bool, 1)});

  // Tensors: llama.cpp's names; 1-D as F32, the rest as `type`.
  std::vector<GgufTensorOut> tensors;
  auto add = [&](const std::string& gguf, const std::string& hf, int64_t rope_heads = 0) {
    if (!m.weights.count(hf)) return;
    const std::vector<int64_t>& shape = m.shapes.at(hf);
    std::vector<float> w = m.weights.at(hf);
    const int64_t rows = shape[0], cols = shape.size() > 1 ? shape[1] : 1;
    if (rope_heads > 0) w = permuteRows(w, rows, cols, rope_heads);
    tensors.push_back({gguf, std::vector<int64_t>(shape.rbegin(), shape.rend()), shape.size() > 1 ? type : DType::F32,
                       std::move(w)});
  };
  add("token_embd.weight", "model.embed_tokens.weight");
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".", p = "model.layers." + std::to_string(l) + ".";
    const bool llama = arch == "llama";
    add(b + "attn_norm.weight", p + "input_layernorm.weight");
    add(b + "attn_q.weight", p + "self_attn.q_proj.weight", llama ? c.heads : 0);
    add(b + "attn_k.weight", p + "self_attn.k_proj.weight", llama ? c.kv_heads : 0);
    add(b + "attn_v.weight", p + "self_attn.v_proj.weight");
    add(b + "attn_q.bias", p + "self_attn.q_proj.bias");
    add(b + "attn_k.bias", p + "self_attn.k_proj.bias");
    add(b + "attn_v.bias", p + "self_attn.v_proj.bias");
    add(b + "attn_q_norm.weight", p + "self_attn.q_norm.weight");
    add(b + "attn_k_norm.weight", p + "self_attn.k_norm.weight");
    add(b + "attn_output.weight", p + "self_attn.o_proj.weight");
    add(b + "ffn_norm.weight", p + "post_attention_layernorm.weight");
    add(b + "ffn_gate.weight", p + "mlp.gate_proj.weight");
    add(b + "ffn_up.weight", p + "mlp.up_proj.weight");
    add(b + "ffn_down.weight", p + "mlp.down_proj.weight");
  }
  add("output_norm.weight", "model.norm.weight");
  add("output.weight", "lm_head.weight");
  if (edit) edit(kv, tensors);
  writeGguf(out, kv, tensors);
  return out;
}

}  // namespace attn::test
