#include "tests/gguf_fixture.h"

#include "engine/files.h"
#include "engine/model/checkpoint/safetensors.h"
#include "engine/model/model.h"
#include "tests/test_support.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <numbers>
#include <optional>
#include <sstream>
#include <tuple>

namespace fs = std::filesystem;

namespace attn::test {

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

// One layer of the parents below under `p`: nn.Linear weights [out, in]
// with their biases, and LayerNorms (weight about 1, bias) of width d.
void addLayer(std::vector<TensorSpec>& t, const std::string& p,
              const std::vector<std::tuple<std::string, int64_t, int64_t>>& linears,
              const std::vector<std::string>& norms, int64_t d) {
  for (const auto& [name, out, in] : linears) {
    t.push_back({p + name + ".weight", {out, in}, 0.1f});
    t.push_back({p + name + ".bias", {out}, 0.1f});
  }
  for (const std::string& ln : norms) {
    t.push_back({p + ln + ".weight", {d}, 0.1f, 1.0f});
    t.push_back({p + ln + ".bias", {d}, 0.1f});
  }
}

}  // namespace

TinyModel writeStarcoderGgufParent(const fs::path& dir, DType dtype) {
  constexpr int64_t layers = 2, d = 256, heads = 4, dh = 64, ff = 4 * d, V = kTokenizerVocab;
  const nlohmann::json config = {{"architectures", {"GPTBigCodeForCausalLM"}},
                                 {"model_type", "gpt_bigcode"},
                                 {"n_layer", layers},
                                 {"n_head", heads},
                                 {"n_embd", d},
                                 {"n_positions", 64},
                                 {"vocab_size", V},
                                 {"layer_norm_epsilon", 1e-5},
                                 {"activation_function", "gelu_pytorch_tanh"},
                                 {"multi_query", true}};
  // wte, the tied head too, of σ 0.1 as the other parents' heads: logits of
  // σ about 1.6 as theirs (the trained GPT-2's: 2.2). At σ 0.4 they were of
  // σ 6.4, and every small change in the last state moved the probabilities four times as much.
  std::vector<TensorSpec> t = {{"transformer.wte.weight", {V, d}, 0.1f}, {"transformer.wpe.weight", {64, d}, 0.1f},
                               {"transformer.ln_f.weight", {d}, 0.1f, 1.0f}, {"transformer.ln_f.bias", {d}, 0.1f}};
  for (int64_t l = 0; l < layers; ++l) {
    addLayer(t, "transformer.h." + std::to_string(l) + ".",
             {{"attn.c_attn", d + 2 * dh, d}, {"attn.c_proj", d, d}, {"mlp.c_fc", ff, d}, {"mlp.c_proj", d, ff}},
             {"ln_1", "ln_2"}, d);
  }
  TinyOptions o;
  o.dtype = dtype;
  TinyModel m = writeCheckpoint(dir, config, t, o);
  m.options.prefix = "transformer.";  // GPTBigCodeForCausalLM's body, as the converter's names take it
  return m;
}

TinyModel writeBertGgufParent(const fs::path& dir, DType dtype) {
  constexpr int64_t layers = 2, d = 256, heads = 4, ff = 512, positions = 32;
  const std::vector<std::string> words = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on",
                                          "mat",   ",",     "then",  "hat",   "a",      "##s", "dog", "ran", "."};
  const auto V = static_cast<int64_t>(words.size());
  const nlohmann::json config = {{"architectures", {"BertModel"}}, {"model_type", "bert"},
                                 {"num_hidden_layers", layers},    {"num_attention_heads", heads},
                                 {"hidden_size", d},               {"intermediate_size", ff},
                                 {"max_position_embeddings", positions}, {"vocab_size", V},
                                 {"type_vocab_size", 2},           {"hidden_act", "gelu"},
                                 {"layer_norm_eps", 1e-12}};
  std::vector<TensorSpec> t = {{"embeddings.word_embeddings.weight", {V, d}},
                               {"embeddings.position_embeddings.weight", {positions, d}, 0.1f},
                               {"embeddings.token_type_embeddings.weight", {2, d}, 0.1f},
                               {"embeddings.LayerNorm.weight", {d}, 0.1f, 1.0f},
                               {"embeddings.LayerNorm.bias", {d}, 0.1f},
                               {"pooler.dense.weight", {d, d}, 0.1f},
                               {"pooler.dense.bias", {d}, 0.1f}};
  for (int64_t l = 0; l < layers; ++l) {
    addLayer(t, "encoder.layer." + std::to_string(l) + ".",
             {{"attention.self.query", d, d}, {"attention.self.key", d, d}, {"attention.self.value", d, d},
              {"attention.output.dense", d, d}, {"intermediate.dense", ff, d}, {"output.dense", d, ff}},
             {"attention.output.LayerNorm", "output.LayerNorm"}, d);
  }
  TinyOptions o;
  o.dtype = dtype;
  TinyModel m = writeCheckpoint(dir, config, t, o);
  // BERT's tokenizer: WordPiece from vocab.txt, lower-cased.
  fs::remove(dir / "tokenizer.json");
  std::string vocab;
  for (const std::string& w : words) vocab += w + "\n";
  std::ofstream(dir / "vocab.txt", std::ios::binary) << vocab;
  std::ofstream(dir / "tokenizer_config.json", std::ios::binary) << R"({"do_lower_case": true})";
  return m;
}

namespace {

// The converter's output as it is written: "{arch}.*" keys, and each
// tensor under llama.cpp's name as the class's modify_tensors leaves it.
struct Conversion {
  const TinyModel& m;
  nlohmann::json hparams;  // config.json
  DType type;
  std::string arch;
  std::vector<GgufKv> kv;
  std::string strip = m.options.prefix;  // dropped from the names before they are mapped
  // filter_tensors: whether a tensor (its name in the checkpoint) is converted at all.
  std::function<bool(const std::string& hf)> keep = [](const std::string&) { return true; };
  // The class's modify_tensors: the tensors written for one of the checkpoint
  // (given by its name there, values and ggml dims as saved): none drops it.
  std::function<std::vector<GgufTensorOut>(const std::string& hf, GgufTensorOut)> modify =
      [](const std::string&, GgufTensorOut t) -> std::vector<GgufTensorOut> { return {t}; };
  // Tensors the class's generate_extra_tensors writes, after the checkpoint's.
  std::vector<GgufTensorOut> added;
  // tokenizer.ggml.add_bos_token: tokenizer_config.json's add_bos_token (gguf-py's SpecialVocab), or the class's.
  std::optional<bool> add_bos;

  void key(const std::string& name, const GgufValue& v) { kv.push_back({arch + "." + name, v}); }
  void count(const std::string& name, int64_t v) { key(name, ggufInt(GgufType::UInt32, v)); }
  void number(const std::string& name, double v) { key(name, ggufFloat(v)); }
};

// The name with its layer as '#' (the body's prefix dropped), and the layer.
std::pair<std::string, std::string> layerTemplate(std::string name, const std::string& prefix) {
  if (!prefix.empty() && name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  for (const std::string stem : {"model.layers.", "gpt_neox.layers.", "h.", "encoder.layer."}) {
    if (name.rfind(stem, 0) != 0) continue;
    const size_t dot = name.find('.', stem.size());
    return {stem + "#" + name.substr(dot), name.substr(stem.size(), dot - stem.size())};
  }
  return {name, ""};
}

// gguf-py's TensorNameMap for these families: the checkpoint's names (less
// .weight / .bias, kept as they are) → llama.cpp's.
std::string ggufName(const std::string& arch, const std::string& hf, const std::string& strip) {
  static const std::map<std::string, std::string> kNames = {
      {"model.embed_tokens", "token_embd"},
      {"model.norm", "output_norm"},
      {"lm_head", "output"},
      {"model.layers.#.input_layernorm", "blk.#.attn_norm"},
      {"model.layers.#.self_attn.q_proj", "blk.#.attn_q"},
      {"model.layers.#.self_attn.k_proj", "blk.#.attn_k"},
      {"model.layers.#.self_attn.v_proj", "blk.#.attn_v"},
      {"model.layers.#.self_attn.qkv_proj", "blk.#.attn_qkv"},
      {"model.layers.#.self_attn.o_proj", "blk.#.attn_output"},
      {"model.layers.#.self_attn.q_norm", "blk.#.attn_q_norm"},
      {"model.layers.#.self_attn.k_norm", "blk.#.attn_k_norm"},
      {"model.layers.#.post_attention_layernorm", "blk.#.ffn_norm"},
      {"model.layers.#.pre_feedforward_layernorm", "blk.#.ffn_norm"},
      {"model.layers.#.post_feedforward_layernorm", "blk.#.post_ffw_norm"},
      {"model.layers.#.mlp.gate_proj", "blk.#.ffn_gate"},
      {"model.layers.#.mlp.up_proj", "blk.#.ffn_up"},
      {"model.layers.#.mlp.gate_up_proj", "blk.#.ffn_up"},
      {"model.layers.#.mlp.down_proj", "blk.#.ffn_down"},
      // Phi (phi2)
      {"model.final_layernorm", "output_norm"},
      {"model.layers.#.self_attn.dense", "blk.#.attn_output"},
      {"model.layers.#.mlp.fc1", "blk.#.ffn_up"},
      {"model.layers.#.mlp.fc2", "blk.#.ffn_down"},
      // GPT-2, BLOOM ("transformer." dropped)
      {"wte", "token_embd"},
      {"wpe", "position_embd"},
      {"ln_f", "output_norm"},
      {"h.#.ln_1", "blk.#.attn_norm"},
      {"h.#.attn.c_attn", "blk.#.attn_qkv"},
      {"h.#.attn.c_proj", "blk.#.attn_output"},
      {"h.#.ln_2", "blk.#.ffn_norm"},
      {"h.#.mlp.c_fc", "blk.#.ffn_up"},
      {"h.#.mlp.c_proj", "blk.#.ffn_down"},
      {"word_embeddings", "token_embd"},
      {"word_embeddings_layernorm", "token_embd_norm"},
      {"h.#.input_layernorm", "blk.#.attn_norm"},
      {"h.#.self_attention.query_key_value", "blk.#.attn_qkv"},
      {"h.#.self_attention.dense", "blk.#.attn_output"},
      {"h.#.post_attention_layernorm", "blk.#.ffn_norm"},
      {"h.#.mlp.dense_h_to_4h", "blk.#.ffn_up"},
      {"h.#.mlp.dense_4h_to_h", "blk.#.ffn_down"},
      // GPT-NeoX
      {"gpt_neox.embed_in", "token_embd"},
      {"embed_out", "output"},
      {"gpt_neox.final_layer_norm", "output_norm"},
      {"gpt_neox.layers.#.input_layernorm", "blk.#.attn_norm"},
      {"gpt_neox.layers.#.attention.query_key_value", "blk.#.attn_qkv"},
      {"gpt_neox.layers.#.attention.dense", "blk.#.attn_output"},
      {"gpt_neox.layers.#.post_attention_layernorm", "blk.#.ffn_norm"},
      {"gpt_neox.layers.#.mlp.dense_h_to_4h", "blk.#.ffn_up"},
      {"gpt_neox.layers.#.mlp.dense_4h_to_h", "blk.#.ffn_down"},
      // BERT
      {"embeddings.word_embeddings", "token_embd"},
      {"embeddings.token_type_embeddings", "token_types"},
      {"embeddings.position_embeddings", "position_embd"},
      {"embeddings.LayerNorm", "token_embd_norm"},
      {"encoder.layer.#.attention.self.query", "blk.#.attn_q"},
      {"encoder.layer.#.attention.self.key", "blk.#.attn_k"},
      {"encoder.layer.#.attention.self.value", "blk.#.attn_v"},
      {"encoder.layer.#.attention.output.dense", "blk.#.attn_output"},
      {"encoder.layer.#.attention.output.LayerNorm", "blk.#.attn_output_norm"},
      {"encoder.layer.#.intermediate.dense", "blk.#.ffn_up"},
      {"encoder.layer.#.output.dense", "blk.#.ffn_down"},
      {"encoder.layer.#.output.LayerNorm", "blk.#.layer_output_norm"},
  };
  const auto [templ, layer] = layerTemplate(hf, strip);
  const size_t dot = templ.rfind('.');
  const std::string base = templ.substr(0, dot), suffix = templ.substr(dot);  // ".weight" / ".bias"
  const auto it = kNames.find(base);
  if (it == kNames.end()) throw std::logic_error("convertToGguf: no llama.cpp name for " + hf);
  std::string name = it->second + suffix;
  // The architectures with a norm after attention (ATTN_POST_NORM) name it so; the others' is the MLP's (FFN_NORM).
  if (base == "model.layers.#.post_attention_layernorm" && (arch == "gemma2" || arch == "gemma3" || arch == "olmo2"))
    name = "blk.#.post_attention_norm" + suffix;
  if (const size_t at = name.find('#'); at != std::string::npos) name.replace(at, 1, layer);
  return name;
}

// LlamaModel.permute: each head's rows (first half, second half) interleaved.  dims [cols, rows]
void permuteRows(GgufTensorOut& t, int64_t heads) {
  const int64_t rows = t.dims[1], cols = t.dims[0], dh = rows / heads, half = dh / 2;
  std::vector<float> out(t.values.size());
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t s = 0; s < 2; ++s)
      for (int64_t i = 0; i < half; ++i)
        std::copy_n(t.values.begin() + (h * dh + s * half + i) * cols, cols, out.begin() + (h * dh + 2 * i + s) * cols);
  t.values = std::move(out);
}

// TextModel.set_gguf_parameters' keys for these families (Gemma and Gemma 2
// write the same ones themselves, less the RoPE base): head_count_kv and the
// base only where config.json has them (BERT's has neither), the ε of its norm.
void textModelKeys(Conversion& v, bool rope_base = true) {
  const ModelConfig& c = v.m.config;
  const bool bert = v.arch == "bert";
  v.count("block_count", c.layers);
  v.count("context_length", c.positions);
  v.count("embedding_length", c.d_model);
  v.count("feed_forward_length", c.d_ff);
  v.count("attention.head_count", c.heads);
  if (bert) {
    v.number("attention.layer_norm_epsilon", c.ln_eps);
    return;
  }
  v.count("attention.head_count_kv", c.kv_heads);
  if (rope_base) v.number("rope.freq_base", c.rope.theta);
  v.number("attention.layer_norm_rms_epsilon", c.rms_eps);
}

// LlamaModel (Llama's q and k permuted), Qwen2Model, Qwen3Model: TextModel's keys and the rotary width.
void convertLlama(Conversion& v) {
  const ModelConfig& c = v.m.config;
  textModelKeys(v);
  v.count("rope.dimension_count", c.head_dim);
  v.count("vocab_size", c.vocab);
  if (c.head_dim != c.d_model / c.heads) {
    v.count("attention.key_length", c.head_dim);
    v.count("attention.value_length", c.head_dim);
  }
  // LlamaModel.generate_extra_tensors: rope_scaling llama3 as each frequency's
  // divisor, from the base θ (float32 tensors; the original context read from
  // the config's top level, 8192 when absent), no rope.scaling keys.
  const nlohmann::json rope = v.hparams.value("rope_scaling", nlohmann::json::object());
  if (v.arch == "llama" && rope.value("rope_type", "") == "llama3") {
    const float factor = rope.value("factor", 8.0f), low = rope.value("low_freq_factor", 1.0f),
                high = rope.value("high_freq_factor", 4.0f), original = v.hparams.value("original_max_position_embeddings", 8192.0f);
    const float low_wavelen = original / low, high_wavelen = original / high;
    std::vector<float> factors;
    for (int64_t i = 0; i < c.head_dim; i += 2) {
      const float freq = 1.0f / std::pow(static_cast<float>(c.rope.theta), static_cast<float>(i) / static_cast<float>(c.head_dim));
      const float wavelen = 2.0f * std::numbers::pi_v<float> / freq;
      if (wavelen < high_wavelen) {
        factors.push_back(1.0f);
      } else if (wavelen > low_wavelen) {
        factors.push_back(factor);
      } else {
        const float smooth = (original / wavelen - low) / (high - low);
        factors.push_back(1.0f / ((1.0f - smooth) / factor + smooth));
      }
    }
    v.added.push_back({"rope_freqs.weight", {static_cast<int64_t>(factors.size())}, DType::F32, factors});
  }
  if (v.arch == "llama")
    v.modify = [&c](const std::string& hf, GgufTensorOut t) -> std::vector<GgufTensorOut> {
      if (hf.ends_with("q_proj.weight")) permuteRows(t, c.heads);
      if (hf.ends_with("k_proj.weight")) permuteRows(t, c.kv_heads);
      return {t};
    };
}

// GemmaModel, Gemma2Model, Gemma3Model: every "*norm.weight" saved as w + 1,
// lm_head dropped (tied); Gemma and Gemma 2 write no RoPE base, Gemma 3
// TextModel's keys (its local base as rope.freq_base_swa) and a final soft-cap only when set.
void convertGemma(Conversion& v) {
  const ModelConfig& c = v.m.config;
  const int gen = v.arch == "gemma" ? 1 : v.arch == "gemma2" ? 2 : 3;
  textModelKeys(v, gen == 3);
  v.count("attention.key_length", c.head_dim);
  v.count("attention.value_length", c.head_dim);
  if (gen == 2) {
    v.number("attn_logit_softcapping", c.attn_softcap);
    v.number("final_logit_softcapping", c.final_softcap);
    v.count("attention.sliding_window", c.sliding_window);
  } else if (gen == 3) {
    v.number("rope.freq_base_swa", c.rope_local.theta);
    if (c.final_softcap > 0) v.number("final_logit_softcapping", c.final_softcap);
    v.count("attention.sliding_window", c.sliding_window);
  }
  v.modify = [](const std::string& hf, GgufTensorOut t) -> std::vector<GgufTensorOut> {
    if (hf == "lm_head.weight") return {};
    if (hf.ends_with("norm.weight"))
      for (float& x : t.values) x += 1.0f;
    return {t};
  };
}

// Phi3MiniModel: rope.dimension_count = int(partial · d) // heads, the window
// (0 for none); the fused qkv_proj and gate_up_proj kept fused.
void convertPhi3(Conversion& v) {
  const ModelConfig& c = v.m.config;
  textModelKeys(v);  // the same keys, written by the class itself
  v.count("rope.scaling.original_context_length", c.positions);
  v.count("rope.dimension_count", static_cast<int64_t>(c.rope.partial * static_cast<double>(c.d_model)) / c.heads);
  v.key("attention.sliding_window", ggufInt(GgufType::UInt32, c.sliding_window));
}

// GPT2Model: n_* keys, feed_forward_length always 4 · n_embd, the Conv1D
// weights (c_attn, c_proj, c_fc, mlp.c_proj) transposed to [out, in], and
// the tied output written out as a copy of token_embd ("GPT2 output is tied to wte").
void convertGpt2(Conversion& v) {
  const ModelConfig& c = v.m.config;
  v.count("block_count", c.layers);
  v.count("context_length", c.positions);
  v.count("embedding_length", c.d_model);
  v.count("feed_forward_length", 4 * c.d_model);
  v.count("attention.head_count", c.heads);
  v.number("attention.layer_norm_epsilon", c.ln_eps);
  v.modify = [](const std::string& hf, GgufTensorOut t) -> std::vector<GgufTensorOut> {
    if (t.name == "token_embd.weight") {
      GgufTensorOut output = t;
      output.name = "output.weight";
      return {t, output};
    }
    if (!hf.ends_with(".c_attn.weight") && !hf.ends_with(".c_proj.weight") && !hf.ends_with(".c_fc.weight")) return {t};
    const int64_t rows = t.dims[1], cols = t.dims[0];  // as saved: [in, out]
    std::vector<float> out(t.values.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k) out[k * rows + r] = t.values[r * cols + k];
    t.values = std::move(out);
    std::swap(t.dims[0], t.dims[1]);
    return {t};
  };
}

// StarCoderModel: GPT-2's keys less the rotations, feed_forward_length
// always 4 · n_embd, head_count_kv always 1; nn.Linear's weights as saved.
void convertStarcoder(Conversion& v) {
  const ModelConfig& c = v.m.config;
  v.count("context_length", c.positions);
  v.count("embedding_length", c.d_model);
  v.count("feed_forward_length", 4 * c.d_model);
  v.count("block_count", c.layers);
  v.count("attention.head_count", c.heads);
  v.count("attention.head_count_kv", 1);
  v.number("attention.layer_norm_epsilon", c.ln_eps);
}

// BertModel: TextModel's keys, attention.causal false; the pooler, position_ids and cls.* dropped.
void convertBert(Conversion& v) {
  textModelKeys(v);
  v.key("attention.causal", ggufInt(GgufType::Bool, 0));
  v.keep = [](const std::string& hf) {
    return hf != "embeddings.position_ids" && hf.rfind("pooler.", 0) != 0 && hf.rfind("cls.", 0) != 0;
  };
}

// BertModel.set_vocab: vocab.txt's tokens by id, the special ones (control)
// as they are, "##ing" as "ing", the others as "▁word"; SpecialVocab's ids
// ([CLS] as cls_token_id: BERT's tokenizer has no bos).
void bertVocabulary(const fs::path& dir, std::vector<GgufKv>& kv) {
  std::istringstream lines(readWholeFile(dir / "vocab.txt", "vocab.txt"));
  std::vector<std::string> tokens;
  std::vector<int64_t> types;
  std::map<std::string, int64_t> ids;
  for (std::string w; std::getline(lines, w);) {
    const bool control = w.size() > 2 && w.front() == '[' && w.back() == ']';
    ids[w] = static_cast<int64_t>(tokens.size());
    tokens.push_back(control ? w : w.rfind("##", 0) == 0 ? w.substr(2) : "\xE2\x96\x81" + w);
    types.push_back(control ? 3 : 1);
  }
  kv.push_back({"tokenizer.ggml.model", ggufString("bert")});
  kv.push_back({"tokenizer.ggml.pre", ggufString("default")});
  kv.push_back({"tokenizer.ggml.tokens", ggufStrings(tokens)});
  kv.push_back({"tokenizer.ggml.token_type", ggufInts(GgufType::Int32, types)});
  kv.push_back({"tokenizer.ggml.token_type_count", ggufInt(GgufType::UInt32, 2)});
  for (const auto& [key, token] : std::vector<std::pair<std::string, std::string>>{
           {"unknown_token_id", "[UNK]"}, {"seperator_token_id", "[SEP]"}, {"padding_token_id", "[PAD]"},
           {"cls_token_id", "[CLS]"}, {"mask_token_id", "[MASK]"}})
    kv.push_back({"tokenizer.ggml." + key, ggufInt(GgufType::UInt32, ids.at(token))});
}

// GPTNeoXModel's and BloomModel's modify_tensors: query_key_value's rows (or
// bias), reshaped (n_head, 3, head_dim, …), concatenated as [Q; K; V].   dims [cols, rows] or [rows]
void regroupQkv(GgufTensorOut& t, int64_t heads) {
  const int64_t rows = t.dims.back(), cols = t.dims.size() > 1 ? t.dims[0] : 1, dh = rows / (3 * heads);
  std::vector<float> out(t.values.size());
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t part = 0; part < 3; ++part)
      std::copy_n(t.values.begin() + (h * 3 + part) * dh * cols, dh * cols, out.begin() + (part * heads + h) * dh * cols);
  t.values = std::move(out);
}

// GPTNeoXModel: rope.dimension_count = int(rotary_pct · head_dim), no RoPE
// base, use_parallel_residual (default true), query_key_value regrouped.
void convertGptNeox(Conversion& v) {
  const ModelConfig& c = v.m.config;
  v.count("context_length", c.positions);
  v.count("embedding_length", c.d_model);
  v.count("block_count", c.layers);
  v.count("feed_forward_length", c.d_ff);
  v.count("rope.dimension_count", static_cast<int64_t>(c.rope.partial * static_cast<double>(c.d_model / c.heads)));
  v.count("attention.head_count", c.heads);
  v.key("use_parallel_residual", ggufInt(GgufType::Bool, v.hparams.value("use_parallel_residual", true)));
  v.number("attention.layer_norm_epsilon", c.ln_eps);
  v.modify = [&c](const std::string& hf, GgufTensorOut t) -> std::vector<GgufTensorOut> {
    if (hf.ends_with(".attention.query_key_value.weight") || hf.ends_with(".attention.query_key_value.bias"))
      regroupQkv(t, c.heads);
    return {t};
  };
}

// The keys BloomModel and Phi2Model write alike: the MLP 4 · n_embd wide,
// every head for keys and values, LayerNorm's ε.
void layerNormModelKeys(Conversion& v, int64_t context_length) {
  const ModelConfig& c = v.m.config;
  v.count("context_length", context_length);
  v.count("embedding_length", c.d_model);
  v.count("feed_forward_length", 4 * c.d_model);
  v.count("block_count", c.layers);
  v.count("attention.head_count", c.heads);
  v.count("attention.head_count_kv", c.heads);
  v.number("attention.layer_norm_epsilon", c.ln_eps);
}

// BloomModel: context_length = seq_length (else n_embed),
// "transformer." dropped from the names, query_key_value regrouped, and with
// no lm_head.weight the embeddings written again as output.weight.
void convertBloom(Conversion& v) {
  const ModelConfig& c = v.m.config;
  layerNormModelKeys(v, v.hparams.value("seq_length", c.d_model));
  v.strip = "transformer.";
  const bool head = v.m.weights.count("lm_head.weight") > 0;
  v.modify = [&c, head](const std::string& hf, GgufTensorOut t) -> std::vector<GgufTensorOut> {
    if (hf.ends_with(".self_attention.query_key_value.weight") || hf.ends_with(".self_attention.query_key_value.bias"))
      regroupQkv(t, c.heads);
    if (hf != "transformer.word_embeddings.weight" || head) return {t};
    GgufTensorOut output = t;
    output.name = "output.weight";
    return {t, output};
  };
}

// Phi2Model: rope.dimension_count = int(partial_rotary_factor · n_embd) //
// n_head, no RoPE base, add_bos_token false; the tensors as saved.
void convertPhi2(Conversion& v) {
  const ModelConfig& c = v.m.config;
  layerNormModelKeys(v, c.positions);
  v.count("rope.dimension_count", static_cast<int64_t>(c.rope.partial * static_cast<double>(c.d_model)) / c.heads);
  v.add_bos = false;
}

// The vocabulary by id, the merges and the control tokens' ids: tokenizer.json's
// (its added tokens), or GPT-2's vocab.json and merges.txt (<|endoftext|>).
struct Vocabulary {
  std::vector<std::string> tokens, merges;
  std::vector<int64_t> control;
};
Vocabulary readVocabulary(const fs::path& dir) {
  Vocabulary v;
  nlohmann::json vocab;
  if (fs::exists(dir / "tokenizer.json")) {
    const nlohmann::json tok = nlohmann::json::parse(readWholeFile(dir / "tokenizer.json", "tokenizer.json"));
    vocab = tok["model"]["vocab"];
    for (const nlohmann::json& mg : tok["model"]["merges"]) v.merges.push_back(mg.get<std::string>());
    for (const nlohmann::json& a : tok["added_tokens"]) {
      vocab[a["content"].get<std::string>()] = a["id"];
      v.control.push_back(a["id"].get<int64_t>());
    }
  } else {
    vocab = nlohmann::json::parse(readWholeFile(dir / "vocab.json", "vocab.json"));
    std::istringstream lines(readWholeFile(dir / "merges.txt", "merges.txt"));
    for (std::string line; std::getline(lines, line);)
      if (!line.empty() && line[0] != '#') v.merges.push_back(line);
    v.control.push_back(vocab["<|endoftext|>"].get<int64_t>());
  }
  v.tokens.resize(vocab.size());
  for (const auto& [piece, id] : vocab.items()) v.tokens.at(id.get<size_t>()) = piece;
  return v;
}

// The tokenizer: the vocabulary by id, its merges, the added tokens as control
// tokens; StarCoder's pre-tokenizer named as its converter names it; add_bos_token where known.
void byteLevelVocabulary(const fs::path& dir, const std::string& arch, std::optional<bool> add_bos,
                         std::vector<GgufKv>& kv) {
  const Vocabulary vocab = readVocabulary(dir);
  std::vector<int64_t> types(vocab.tokens.size(), 1);
  for (const int64_t id : vocab.control) types[static_cast<size_t>(id)] = 3;
  const auto id = [&](const std::string& piece) {
    return static_cast<int64_t>(std::find(vocab.tokens.begin(), vocab.tokens.end(), piece) - vocab.tokens.begin());
  };
  kv.push_back({"tokenizer.ggml.model", ggufString("gpt2")});
  kv.push_back({"tokenizer.ggml.pre", ggufString(arch == "starcoder" ? "starcoder" : "gpt-2")});
  kv.push_back({"tokenizer.ggml.tokens", ggufStrings(vocab.tokens)});
  kv.push_back({"tokenizer.ggml.token_type", ggufInts(GgufType::Int32, types)});
  kv.push_back({"tokenizer.ggml.merges", ggufStrings(vocab.merges)});
  if (arch == "gpt2") {  // <|endoftext|> both; GPT-2 adds no bos
    kv.push_back({"tokenizer.ggml.bos_token_id", ggufInt(GgufType::UInt32, id("<|endoftext|>"))});
    kv.push_back({"tokenizer.ggml.eos_token_id", ggufInt(GgufType::UInt32, id("<|endoftext|>"))});
  } else {
    kv.push_back({"tokenizer.ggml.bos_token_id", ggufInt(GgufType::UInt32, id("<s>"))});
    kv.push_back({"tokenizer.ggml.eos_token_id", ggufInt(GgufType::UInt32, id("</s>"))});
  }
  if (add_bos) kv.push_back({"tokenizer.ggml.add_bos_token", ggufInt(GgufType::Bool, *add_bos)});
}

}  // namespace

TinyModel readTinyModel(const fs::path& dir) {
  TinyModel m;
  m.dir = dir;
  m.config = parseConfig(readWholeFile(dir / "config.json", "config.json"), (dir / "config.json").string());
  const auto file = SafetensorsFile::open((dir / "model.safetensors").string());
  for (const TensorEntry& t : file->header().tensors) {
    std::vector<float>& values = m.weights[t.name];
    values.resize(static_cast<size_t>(t.elements()));
    file->floatsAt(t, 0, t.elements(), values.data());
    m.shapes[t.name] = t.shape;
  }
  return m;
}

namespace {

// The converter's class for `m` (config.json's architectures[0]) as it
// stands before the checkpoint's tensors: its keys, filter_tensors,
// modify_tensors and extra tensors.
Conversion conversionOf(const TinyModel& m, DType type) {
  // The class's gguf-py MODEL_ARCH_NAMES name.
  static const std::map<std::string, std::string> kArch = {
      {"LlamaForCausalLM", "llama"},
      {"Qwen2ForCausalLM", "qwen2"},
      {"Qwen3ForCausalLM", "qwen3"},
      {"GemmaForCausalLM", "gemma"},
      {"Gemma2ForCausalLM", "gemma2"},
      {"Gemma3ForCausalLM", "gemma3"},
      {"Olmo2ForCausalLM", "olmo2"},
      {"Phi3ForCausalLM", "phi3"},
      {"GPT2LMHeadModel", "gpt2"},
      {"GPTBigCodeForCausalLM", "starcoder"},
      {"BertModel", "bert"},
      {"GPTNeoXForCausalLM", "gptneox"},
      {"BloomForCausalLM", "bloom"},
      {"PhiForCausalLM", "phi2"},
  };
  nlohmann::json config = nlohmann::json::parse(readWholeFile(m.dir / "config.json", "config.json"));
  const std::string cls = config["architectures"][0].get<std::string>();
  if (!kArch.count(cls)) throw std::logic_error("convertToGguf: no converter class for " + cls);
  Conversion v{m, std::move(config), type, kArch.at(cls), {}};
  v.kv = {{"general.architecture", ggufString(v.arch)}, {"general.name", ggufString("tiny " + v.arch)}};
  if (fs::exists(m.dir / "tokenizer_config.json")) {
    const nlohmann::json tc = nlohmann::json::parse(readWholeFile(m.dir / "tokenizer_config.json", "tokenizer_config.json"));
    if (tc.contains("add_bos_token")) v.add_bos = tc["add_bos_token"].get<bool>();
  }
  if (v.arch.rfind("gemma", 0) == 0) convertGemma(v);
  else if (v.arch == "olmo2") textModelKeys(v);  // Olmo2Model: TextModel's keys, the tensors as saved
  else if (v.arch == "phi3") convertPhi3(v);
  else if (v.arch == "gpt2") convertGpt2(v);
  else if (v.arch == "starcoder") convertStarcoder(v);
  else if (v.arch == "bert") convertBert(v);
  else if (v.arch == "gptneox") convertGptNeox(v);
  else if (v.arch == "bloom") convertBloom(v);
  else if (v.arch == "phi2") convertPhi2(v);
  else convertLlama(v);
  return v;
}

// The type prepare_tensors stores checkpoint tensor `hf` as: llama.cpp's
// rule (attn::ggufStoredType) under the name TensorNameMap gives it. These
// classes' modify_tensors keep a tensor's kind (a matrix, a norm, a table).
DType storedType(const Conversion& v, const std::string& hf) {
  return ggufStoredType(ggufName(v.arch, hf, v.strip), v.m.shapes.at(hf).size(), v.type);
}

}  // namespace

std::map<std::string, DType> ggufStoredTypes(const TinyModel& m, DType type, const GgufEdit& edit) {
  Conversion v = conversionOf(m, type);
  std::vector<std::string> kept;
  std::vector<GgufTensorOut> tensors;  // names, dims and types: what an edit that retypes reads
  for (const auto& [hf, values] : m.weights) {
    if (!v.keep(hf)) continue;
    const std::vector<int64_t>& shape = m.shapes.at(hf);
    kept.push_back(hf);
    tensors.push_back({ggufName(v.arch, hf, v.strip), std::vector<int64_t>(shape.rbegin(), shape.rend()), storedType(v, hf), {}});
  }
  for (const GgufTensorOut& t : v.added) tensors.push_back({t.name, t.dims, t.type, {}});
  if (edit) edit(v.kv, tensors);
  std::map<std::string, DType> types;
  for (size_t i = 0; i < kept.size(); ++i) types[kept[i]] = tensors[i].type;
  return types;
}

GgufEdit asQ4KM() {
  return [](std::vector<GgufKv>& kv, std::vector<GgufTensorOut>& tensors) {
    int64_t layers = 0;
    bool has_output = false;
    for (const GgufTensorOut& t : tensors) {
      if (t.name.rfind("blk.", 0) == 0) layers = std::max<int64_t>(layers, std::stoll(t.name.substr(4)) + 1);
      has_output |= t.name == "output.weight";
    }
    for (GgufTensorOut& t : tensors)
      if (t.type == DType::Q4_K) t.type = ggufQ4KMType(t.name, t.dims.size(), layers, has_output);
    kv.push_back({"general.file_type", ggufInt(GgufType::UInt32, 15)});
  };
}

fs::path convertToGguf(const TinyModel& m, DType type, const fs::path& out, const GgufEdit& edit) {
  Conversion v = conversionOf(m, type);
  if (v.arch == "bert") bertVocabulary(m.dir, v.kv);
  else byteLevelVocabulary(m.dir, v.arch, v.add_bos, v.kv);

  // The tensors in the checkpoint's order of names.
  std::vector<GgufTensorOut> tensors;
  for (const auto& [hf, values] : m.weights) {
    if (!v.keep(hf)) continue;
    const std::vector<int64_t>& shape = m.shapes.at(hf);
    GgufTensorOut t{ggufName(v.arch, hf, v.strip), std::vector<int64_t>(shape.rbegin(), shape.rend()), storedType(v, hf),
                    values};
    for (GgufTensorOut& out : v.modify(hf, std::move(t))) tensors.push_back(std::move(out));
  }
  for (GgufTensorOut& t : v.added) tensors.push_back(std::move(t));

  if (edit) edit(v.kv, tensors);
  writeGguf(out, v.kv, tensors);
  return out;
}

}  // namespace attn::test
