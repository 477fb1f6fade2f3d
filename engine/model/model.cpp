// Checkpoints in the Hugging Face layout: the files, config.json, the
// tensors each architecture needs, loading, and runs on text. The forward
// passes are in forward.cpp (GPT-2, BERT) and llama.cpp (the LLaMA family).
//
// [SECTION] Files on disk
// [SECTION] config.json
// [SECTION] Tensors: what each architecture needs, with shapes from the config
// [SECTION] Loading
// [SECTION] Runs on text
#include "engine/model/model.h"

#include "engine/attention_math.h"
#include "engine/model/model_impl.h"
#include "engine/model/tokenizer_json.h"
#include "engine/parallel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace attn {

// [SECTION] Files on disk
ModelFiles filesOnDisk(const std::string& path) {
  std::error_code ec;
  fs::path folder = path;
  std::string weights = "model.safetensors";  // the file asked for as "model.safetensors"
  if (fs::is_regular_file(path, ec)) {
    if (fs::path(path).extension() != ".safetensors")
      throw InputError(path + ": expected a model folder or a .safetensors file");
    folder = fs::path(path).parent_path();
    if (folder.empty()) folder = ".";
    weights = fs::path(path).filename().string();
  } else if (!fs::is_directory(path, ec)) {
    throw InputError(path + ": no such model folder or .safetensors file");
  }
  ModelFiles f;
  f.label = folder.string();
  // Only plain names inside the folder: a shard name from an index file must not walk out of it.
  auto inside = [folder](const std::string& name) -> std::optional<fs::path> {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") return std::nullopt;
    return folder / name;
  };
  f.read_text = [inside](const std::string& name) -> std::optional<std::string> {
    const std::optional<fs::path> p = inside(name);
    std::error_code e;
    if (!p || !fs::is_regular_file(*p, e)) return std::nullopt;
    std::ifstream in(*p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    if (!in) throw InputError(p->string() + ": cannot read the file");
    return s.str();
  };
  f.open_safetensors = [inside, weights](const std::string& name) -> std::shared_ptr<const SafetensorsFile> {
    const std::optional<fs::path> p = inside(name == "model.safetensors" ? weights : name);
    std::error_code e;
    if (!p || !fs::exists(*p, e)) return nullptr;
    return SafetensorsFile::open(p->string());
  };
  return f;
}

namespace {

std::string fileIn(const ModelFiles& files, const std::string& name) { return (fs::path(files.label) / name).string(); }

// [SECTION] config.json
// Bounds on a config's sizes, far above any released model (GPT-2 XL: 48
// layers, d = 1600; the largest open models: d = 16,384, vocabularies of
// 256k): layers, widths (heads, d, d_ff), and counts (positions, vocabulary).
constexpr int64_t kMaxLayers = 1024, kMaxWidth = int64_t{1} << 20, kMaxCount = int64_t{1} << 24;

struct ConfigReader {
  const nlohmann::json& j;
  std::string where;  // ".../config.json"

  const nlohmann::json* find(const std::string& key) const {
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  }
  // A size from 1 to `max`: the bound keeps every shape product the loader
  // forms (3·d·d, V·d) inside int64 and refuses a lying config before it
  // drives an allocation or a loop over 10¹⁸ layers.
  int64_t positive(const std::string& key, int64_t max, std::optional<int64_t> def = std::nullopt) const {
    const nlohmann::json* v = find(key);
    if (!v) {
      if (def) return *def;
      throw InputError(where + ": field '" + key + "' is missing (expected a positive integer)");
    }
    if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(max)) ||
        v->get<int64_t>() <= 0 || v->get<int64_t>() > max)
      throw InputError(where + ": field '" + key + "' must be an integer from 1 to " + std::to_string(max) +
                       ", got " + v->dump());
    return v->get<int64_t>();
  }
  // A positive number below 1 (the LayerNorm ε).
  double epsilon(const std::string& key, double def) const {
    const nlohmann::json* v = find(key);
    if (!v) return def;
    if (!v->is_number() || !(v->get<double>() > 0) || v->get<double>() >= 1)
      throw InputError(where + ": field '" + key + "' must be a number between 0 and 1, got " + v->dump());
    return v->get<double>();
  }
  // A number in [lo, hi] (rope_theta, rope_scaling's factors); required without `def`.
  double number(const std::string& key, std::optional<double> def, double lo, double hi) const {
    const nlohmann::json* v = find(key);
    if (!v) {
      if (def) return *def;
      throw InputError(where + ": field '" + key + "' is missing (expected a number)");
    }
    if (!v->is_number() || !(v->get<double>() >= lo) || !(v->get<double>() <= hi))
      throw InputError(where + ": field '" + key + "' must be a number from " + nlohmann::json(lo).dump() + " to " +
                       nlohmann::json(hi).dump() + ", got " + v->dump());
    return v->get<double>();
  }
  bool flag(const std::string& key, bool def) const {
    const nlohmann::json* v = find(key);
    if (!v) return def;
    if (!v->is_boolean()) throw InputError(where + ": field '" + key + "' must be true or false, got " + v->dump());
    return v->get<bool>();
  }
  std::string text(const std::string& key, const std::string& def) const {
    const nlohmann::json* v = find(key);
    if (!v) return def;
    if (!v->is_string()) throw InputError(where + ": field '" + key + "' must be a string, got " + v->dump());
    return v->get<std::string>();
  }
  void expect(const std::string& key, const std::string& def, const std::vector<std::string>& allowed) const {
    const std::string got = text(key, def);
    if (std::find(allowed.begin(), allowed.end(), got) != allowed.end()) return;
    std::string list;
    for (const std::string& a : allowed) list += (list.empty() ? "'" : ", '") + a + "'";
    throw InputError(where + ": field '" + key + "' is '" + got + "', but only " + list + " is supported");
  }
};

// "llama", "mistral" or "qwen2" for the LLaMA family's architecture names
// (or model_type, in configs saved without architectures); "" otherwise.
std::string llamaFamily(const std::string& arch) {
  if (arch == "LlamaForCausalLM" || arch == "LlamaModel" || arch == "llama") return "llama";
  if (arch == "MistralForCausalLM" || arch == "MistralModel" || arch == "mistral") return "mistral";
  if (arch == "Qwen2ForCausalLM" || arch == "Qwen2Model" || arch == "qwen2") return "qwen2";
  return "";
}

// The LLaMA family's fields (transformers' LlamaConfig, MistralConfig,
// Qwen2Config), with their defaults where the config may leave them out.
void parseLlama(const ConfigReader& r, ModelConfig& c) {
  c.layers = r.positive("num_hidden_layers", kMaxLayers);
  c.heads = r.positive("num_attention_heads", kMaxWidth);
  c.kv_heads = r.positive("num_key_value_heads", kMaxWidth, c.heads);
  c.d_model = r.positive("hidden_size", kMaxWidth);
  c.d_ff = r.positive("intermediate_size", kMaxWidth);
  c.positions = r.positive("max_position_embeddings", kMaxCount);
  c.vocab = r.positive("vocab_size", kMaxCount);
  if (c.heads % c.kv_heads != 0)
    throw InputError(r.where + ": num_key_value_heads (" + std::to_string(c.kv_heads) +
                     ") must divide num_attention_heads (" + std::to_string(c.heads) + ")");
  if (!r.find("head_dim") && c.d_model % c.heads != 0)
    throw InputError(r.where + ": the heads (" + std::to_string(c.heads) + ") must divide hidden_size (" +
                     std::to_string(c.d_model) + "), or the config must give head_dim");
  c.head_dim = r.positive("head_dim", kMaxWidth, c.d_model / c.heads);
  if (c.head_dim % 2 != 0 || c.heads * c.head_dim > kMaxWidth)
    throw InputError(r.where + ": field 'head_dim' must be even (RoPE turns pairs of dimensions) and heads · head_dim at most " +
                     std::to_string(kMaxWidth) + ", got " + std::to_string(c.head_dim));
  c.rms_eps = r.epsilon("rms_norm_eps", 1e-6);
  c.rope_theta = r.number("rope_theta", 10000.0, 1.0, 1e12);
  r.expect("hidden_act", "silu", {"silu"});
  c.tie_embeddings = r.flag("tie_word_embeddings", false);
  // Qwen2 always has q, k and v biases; Llama when attention_bias is set.
  c.qkv_bias = c.family == "qwen2" || r.flag("attention_bias", false);
  if (r.flag("mlp_bias", false)) throw InputError(r.where + ": field 'mlp_bias' is true, which is not supported (expected false)");
  if (c.family == "mistral") {
    c.sliding_window = r.find("sliding_window") ? r.positive("sliding_window", kMaxCount) : 0;
  } else if (c.family == "qwen2" && r.flag("use_sliding_window", false)) {
    throw InputError(r.where + ": field 'use_sliding_window' is true, which is not supported for Qwen2 (expected false)");
  }
  if (const nlohmann::json* s = r.find("rope_scaling")) {
    const std::string what = r.where + ": field 'rope_scaling'";
    if (!s->is_object()) throw InputError(what + " must be an object, got " + s->dump());
    const ConfigReader sr{*s, r.where + " rope_scaling"};
    const std::string type = sr.text("rope_type", sr.text("type", ""));
    if (type == "default") return;
    if (type != "llama3")
      throw InputError(what + " has type '" + type + "', but only 'llama3' (or 'default') is supported");
    c.rope_factor = sr.number("factor", std::nullopt, 1.0, 1e6);
    c.rope_low_freq = sr.number("low_freq_factor", std::nullopt, 1e-6, 1e6);
    c.rope_high_freq = sr.number("high_freq_factor", std::nullopt, 1e-6, 1e6);
    c.rope_original_positions = sr.positive("original_max_position_embeddings", kMaxCount);
    if (!(c.rope_high_freq > c.rope_low_freq))
      throw InputError(what + ": high_freq_factor must be greater than low_freq_factor");
  }
}

}  // namespace

ModelConfig parseConfig(const std::string& text, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw InputError(where + ": expected a JSON object");
  const ConfigReader r{j, where};
  ModelConfig c;
  const nlohmann::json* archs = r.find("architectures");
  if (archs) {
    if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string())
      throw InputError(where + ": field 'architectures' must be a list of names, got " + archs->dump());
    c.arch_name = (*archs)[0].get<std::string>();
  } else {
    c.arch_name = r.text("model_type", "");  // configs saved without architectures name the family
    if (c.arch_name.empty()) throw InputError(where + ": field 'architectures' (or 'model_type') is missing");
  }
  if (c.arch_name == "GPT2LMHeadModel" || c.arch_name == "GPT2Model" || c.arch_name == "gpt2") {
    c.arch = Architecture::Gpt2;
    c.layers = r.positive("n_layer", kMaxLayers);
    c.heads = r.positive("n_head", kMaxWidth);
    c.d_model = r.positive("n_embd", kMaxWidth);
    c.d_ff = r.positive("n_inner", kMaxWidth, 4 * c.d_model);
    c.positions = r.find("n_positions") ? r.positive("n_positions", kMaxCount) : r.positive("n_ctx", kMaxCount);
    c.vocab = r.positive("vocab_size", kMaxCount);
    c.ln_eps = r.epsilon("layer_norm_epsilon", 1e-5);
    r.expect("activation_function", "gelu_new", {"gelu_new", "gelu_pytorch_tanh"});
  } else if (c.arch_name == "BertModel" || c.arch_name == "BertForMaskedLM" || c.arch_name == "bert") {
    c.arch = Architecture::Bert;
    c.layers = r.positive("num_hidden_layers", kMaxLayers);
    c.heads = r.positive("num_attention_heads", kMaxWidth);
    c.d_model = r.positive("hidden_size", kMaxWidth);
    c.d_ff = r.positive("intermediate_size", kMaxWidth);
    c.positions = r.positive("max_position_embeddings", kMaxCount);
    c.vocab = r.positive("vocab_size", kMaxCount);
    c.type_vocab = r.positive("type_vocab_size", kMaxCount, 2);
    c.ln_eps = r.epsilon("layer_norm_eps", 1e-12);
    r.expect("hidden_act", "gelu", {"gelu"});
    r.expect("position_embedding_type", "absolute", {"absolute"});
  } else if (const auto llama = llamaFamily(c.arch_name); !llama.empty()) {
    c.arch = Architecture::Llama;
    c.family = llama;
    parseLlama(r, c);
  } else {
    throw InputError(where + ": architecture '" + c.arch_name +
                     "' is not supported (expected GPT2LMHeadModel, GPT2Model, BertModel, BertForMaskedLM, "
                     "LlamaForCausalLM, MistralForCausalLM or Qwen2ForCausalLM)");
  }
  if (c.family.empty()) c.family = c.arch == Architecture::Gpt2 ? "gpt2" : "bert";
  // A config names its family twice: the two must agree, or the tensors
  // were saved for one model and described as another.
  if (const std::string type = r.text("model_type", c.family); archs && type != c.family)
    throw InputError(where + ": field 'model_type' is '" + type + "', but 'architectures' names " + c.arch_name +
                     " (expected model_type '" + c.family + "')");
  if (c.arch != Architecture::Llama) {
    if (c.d_model % c.heads != 0)
      throw InputError(where + ": the heads (" + std::to_string(c.heads) + ") must divide the model width (" +
                       std::to_string(c.d_model) + ")");
    c.kv_heads = c.heads;
    c.head_dim = c.d_model / c.heads;
  }
  return c;
}

namespace {

// [SECTION] Tensors: what each architecture needs, with shapes from the config
struct Expected {
  std::string name;  // without the checkpoint's prefix
  std::vector<int64_t> shape;
  bool required = true;
};

std::string layerName(const std::string& stem, int64_t layer, const std::string& rest) {
  return stem + std::to_string(layer) + "." + rest;
}

std::vector<Expected> expectedTensors(const ModelConfig& c) {
  const int64_t d = c.d_model, ff = c.d_ff, V = c.vocab;
  std::vector<Expected> e;
  if (c.arch == Architecture::Gpt2) {
    e.push_back({"wte.weight", {V, d}});
    e.push_back({"wpe.weight", {c.positions, d}});
    for (int64_t l = 0; l < c.layers; ++l) {
      auto add = [&](const std::string& rest, std::vector<int64_t> shape) {
        e.push_back({layerName("h.", l, rest), std::move(shape)});
      };
      add("ln_1.weight", {d}), add("ln_1.bias", {d});
      add("attn.c_attn.weight", {d, 3 * d}), add("attn.c_attn.bias", {3 * d});  // Conv1D [in, out]
      add("attn.c_proj.weight", {d, d}), add("attn.c_proj.bias", {d});
      add("ln_2.weight", {d}), add("ln_2.bias", {d});
      add("mlp.c_fc.weight", {d, ff}), add("mlp.c_fc.bias", {ff});
      add("mlp.c_proj.weight", {ff, d}), add("mlp.c_proj.bias", {d});
    }
    e.push_back({"ln_f.weight", {d}});
    e.push_back({"ln_f.bias", {d}});
    return e;
  }
  if (c.arch == Architecture::Llama) {
    const int64_t qd = c.heads * c.head_dim, kvd = c.kv_heads * c.head_dim;
    e.push_back({"embed_tokens.weight", {V, d}});
    for (int64_t l = 0; l < c.layers; ++l) {
      auto add = [&](const std::string& rest, std::vector<int64_t> shape) {
        e.push_back({layerName("layers.", l, rest), std::move(shape)});
      };
      add("input_layernorm.weight", {d});
      add("self_attn.q_proj.weight", {qd, d}), add("self_attn.k_proj.weight", {kvd, d});  // nn.Linear [out, in]
      add("self_attn.v_proj.weight", {kvd, d}), add("self_attn.o_proj.weight", {d, qd});
      if (c.qkv_bias)
        add("self_attn.q_proj.bias", {qd}), add("self_attn.k_proj.bias", {kvd}), add("self_attn.v_proj.bias", {kvd});
      add("post_attention_layernorm.weight", {d});
      add("mlp.gate_proj.weight", {ff, d}), add("mlp.up_proj.weight", {ff, d}), add("mlp.down_proj.weight", {d, ff});
    }
    e.push_back({"norm.weight", {d}});
    return e;
  }
  e.push_back({"embeddings.word_embeddings.weight", {V, d}});
  e.push_back({"embeddings.position_embeddings.weight", {c.positions, d}});
  e.push_back({"embeddings.token_type_embeddings.weight", {c.type_vocab, d}});
  e.push_back({"embeddings.LayerNorm.weight", {d}});
  e.push_back({"embeddings.LayerNorm.bias", {d}});
  for (int64_t l = 0; l < c.layers; ++l) {
    auto add = [&](const std::string& rest, std::vector<int64_t> shape) {
      e.push_back({layerName("encoder.layer.", l, rest), std::move(shape)});
    };
    for (const char* p : {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"})
      add(std::string(p) + ".weight", {d, d}), add(std::string(p) + ".bias", {d});  // nn.Linear [out, in]
    add("attention.output.LayerNorm.weight", {d}), add("attention.output.LayerNorm.bias", {d});
    add("intermediate.dense.weight", {ff, d}), add("intermediate.dense.bias", {ff});
    add("output.dense.weight", {d, ff}), add("output.dense.bias", {d});
    add("output.LayerNorm.weight", {d}), add("output.LayerNorm.bias", {d});
  }
  // Optional heads: the pooler (unused here) and the masked-LM head.
  e.push_back({"pooler.dense.weight", {d, d}, false});
  e.push_back({"pooler.dense.bias", {d}, false});
  return e;
}

// Tensors outside the prefix: GPT-2's untied LM head, BERT's pre-training heads.
std::vector<Expected> headTensors(const ModelConfig& c) {
  const int64_t d = c.d_model, V = c.vocab;
  if (c.arch == Architecture::Gpt2) return {{"lm_head.weight", {V, d}, false}};
  if (c.arch == Architecture::Llama) {  // tied: the head is embed_tokens, and a saved lm_head would go unused
    if (c.tie_embeddings) return {};
    return {{"lm_head.weight", {V, d}}};
  }
  return {{"cls.predictions.transform.dense.weight", {d, d}, false},
          {"cls.predictions.transform.dense.bias", {d}, false},
          {"cls.predictions.transform.LayerNorm.weight", {d}, false},
          {"cls.predictions.transform.LayerNorm.bias", {d}, false},
          {"cls.predictions.bias", {V}, false},
          {"cls.predictions.decoder.weight", {V, d}, false},  // tied to the word embeddings when absent
          {"cls.predictions.decoder.bias", {V}, false},
          {"cls.seq_relationship.weight", {2, d}, false},  // next-sentence head (unused)
          {"cls.seq_relationship.bias", {2}, false}};
}

// Buffers some checkpoints carry that are not weights: GPT-2's causal-mask
// "h.N.attn.bias" / "h.N.attn.masked_bias", BERT's "embeddings.position_ids",
// older LLaMA checkpoints' "layers.N.self_attn.rotary_emb.inv_freq".
bool isBuffer(const ModelConfig& c, const std::string& name) {
  if (c.arch == Architecture::Bert) return name == "embeddings.position_ids";
  if (c.arch == Architecture::Llama)  // older LLaMA checkpoints saved RoPE's inverse frequencies
    return name.rfind("layers.", 0) == 0 && name.ends_with(".self_attn.rotary_emb.inv_freq");
  if (name.rfind("h.", 0) != 0) return false;
  const size_t dot = name.find('.', 2);
  if (dot == std::string::npos) return false;
  const std::string rest = name.substr(dot + 1);
  return rest == "attn.bias" || rest == "attn.masked_bias";
}

}  // namespace

namespace {

struct Located {
  std::shared_ptr<const SafetensorsFile> file;
  const TensorEntry* entry = nullptr;
  std::string file_name;
};

// Every tensor of the checkpoint by name; `opened` gets each file (the maps
// the weights will point into) and its name.
std::map<std::string, Located> openTensors(const ModelFiles& files,
                                           std::vector<std::shared_ptr<const SafetensorsFile>>& opened,
                                           std::vector<std::string>& shard_names) {
  std::map<std::string, Located> all;
  auto addFile = [&](const std::string& name) {
    std::shared_ptr<const SafetensorsFile> f = files.open_safetensors(name);
    if (!f) throw InputError(fileIn(files, name) + ": missing");
    for (const TensorEntry& t : f->header().tensors) {
      if (all.count(t.name))
        throw InputError(fileIn(files, name) + ": tensor '" + t.name + "' is also in " + all[t.name].file_name);
      all[t.name] = {f, &t, name};
    }
    opened.push_back(f);
    shard_names.push_back(name);
  };
  const std::string index_name = "model.safetensors.index.json";
  const std::optional<std::string> index = files.read_text(index_name);
  if (!index) {
    if (!files.open_safetensors("model.safetensors"))
      throw InputError(files.label + ": no model.safetensors (nor model.safetensors.index.json for shards)");
    addFile("model.safetensors");
    return all;
  }
  const std::string where = fileIn(files, index_name);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*index);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    throw InputError(where + ": field 'weight_map' missing or not an object of tensor → shard file");
  std::map<std::string, std::string> wanted;
  std::set<std::string> shards;
  for (const auto& [tensor, shard] : j["weight_map"].items()) {
    if (!shard.is_string()) throw InputError(where + ": weight_map '" + tensor + "' must name a shard file");
    const std::string s = shard.get<std::string>();
    if (s.empty() || s.find('/') != std::string::npos || s == "..")
      throw InputError(where + ": weight_map '" + tensor + "' names '" + s + "', not a file in the model folder");
    wanted[tensor] = s;
    shards.insert(s);
  }
  for (const std::string& s : shards) addFile(s);
  for (const auto& [tensor, shard] : wanted) {
    const auto it = all.find(tensor);
    if (it == all.end() || it->second.file_name != shard)
      throw InputError(where + ": weight_map puts '" + tensor + "' in " + shard + ", which does not hold it");
  }
  return all;
}

std::string shapeText(const std::vector<int64_t>& shape) { return Array{shape, {}}.shapeString(); }

std::string archLabel(const ModelConfig& c) {
  if (c.arch == Architecture::Gpt2) return "GPT-2";
  if (c.arch == Architecture::Bert) return "BERT";
  return c.family == "mistral" ? "Mistral" : c.family == "qwen2" ? "Qwen2" : "Llama";
}

void loadTokenizer(const ModelFiles& files, Model& m) {
  const ModelConfig& c = m.info.config;
  auto need = [&](const std::string& name, const std::string& why) {
    std::optional<std::string> t = files.read_text(name);
    if (!t) throw InputError(fileIn(files, name) + ": missing (" + why + ")");
    return *t;
  };
  if (c.arch == Architecture::Llama) {
    const std::string json = need("tokenizer.json", archLabel(c) + "'s tokenizer needs tokenizer.json beside config.json");
    HfTokenizer t = makeHfTokenizer(json, files.read_text("tokenizer_config.json"), fileIn(files, "tokenizer.json"),
                                    fileIn(files, "tokenizer_config.json"));
    m.tokenizer = std::move(t.tokenizer);
    m.bos = t.bos, m.eos = t.eos, m.add_bos = t.add_bos;
  } else if (c.arch == Architecture::Gpt2) {
    const std::string why = "GPT-2's tokenizer needs vocab.json and merges.txt beside config.json";
    const std::string vocab = need("vocab.json", why), merges = need("merges.txt", why);
    m.tokenizer = makeGpt2Tokenizer(vocab, merges, fileIn(files, "vocab.json"), fileIn(files, "merges.txt"));
    m.eos = m.bos = m.tokenizer->specialId("<|endoftext|>");
  } else {
    WordPieceOptions o;
    o.lower_case = m.info.config.lower_case;
    o.strip_accents = o.lower_case;
    const std::string vocab = need("vocab.txt", "BERT's tokenizer needs vocab.txt beside config.json");
    m.tokenizer = makeWordPieceTokenizer(vocab, o, fileIn(files, "vocab.txt"));
    m.cls = m.tokenizer->specialId("[CLS]");
    m.sep = m.tokenizer->specialId("[SEP]");
    if (m.cls < 0 || m.sep < 0) throw InputError(fileIn(files, "vocab.txt") + ": has no [CLS] or [SEP] token");
  }
  if (m.tokenizer->vocabSize() > c.vocab)
    throw InputError(fileIn(files, c.arch == Architecture::Gpt2 ? "vocab.json"
                                   : c.arch == Architecture::Bert ? "vocab.txt"
                                                                  : "tokenizer.json") +
                     ": " +
                     std::to_string(m.tokenizer->vocabSize()) + " tokens, more than the model's vocab_size " +
                     std::to_string(c.vocab));
}

// BERT's tokenizer_config.json: do_lower_case (default true, as bert-base-uncased).
bool bertLowerCase(const ModelFiles& files) {
  const std::optional<std::string> text = files.read_text("tokenizer_config.json");
  if (!text) return true;
  const std::string where = fileIn(files, "tokenizer_config.json");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("do_lower_case")) return true;
  if (!j["do_lower_case"].is_boolean()) throw InputError(where + ": field 'do_lower_case' must be true or false");
  return j["do_lower_case"].get<bool>();
}

}  // namespace

std::shared_ptr<const Model> loadModel(const ModelFiles& files, const RunContext& ctx) {
  auto m = std::make_shared<Model>();
  const std::optional<std::string> config_text = files.read_text("config.json");
  if (!config_text) throw InputError(fileIn(files, "config.json") + ": missing (a model folder needs config.json)");
  ModelConfig c = parseConfig(*config_text, fileIn(files, "config.json"));
  if (c.arch == Architecture::Bert) c.lower_case = bertLowerCase(files);
  m->info.label = files.label;
  m->info.config = c;
  ctx.progress(0.0f);

  std::vector<std::string> shard_names;
  const std::map<std::string, Located> all = openTensors(files, m->files, shard_names);
  for (const auto& f : m->files) m->info.bytes_on_disk += f->sizeBytes();

  // The checkpoint's prefix: GPT2LMHeadModel saves "transformer.", BertForMaskedLM "bert.", LlamaForCausalLM "model.".
  const bool gpt2 = c.arch == Architecture::Gpt2, bert = c.arch == Architecture::Bert;
  const std::string probe = gpt2 ? "wte.weight" : bert ? "embeddings.word_embeddings.weight" : "embed_tokens.weight";
  const std::string prefix_name = gpt2 ? "transformer." : bert ? "bert." : "model.";
  const std::string prefix = all.count(prefix_name + probe) ? prefix_name : "";

  std::map<std::string, const Expected*> known;  // full name → expectation
  const std::vector<Expected> body = expectedTensors(c), heads = headTensors(c);
  for (const Expected& e : body) known[prefix + e.name] = &e;
  for (const Expected& e : heads) known[e.name] = &e;
  std::vector<std::string> extra;
  std::set<std::string> dtypes;
  for (const auto& [name, loc] : all) {
    const bool buffer = name.rfind(prefix, 0) == 0 && isBuffer(c, name.substr(prefix.size()));
    if (!buffer && !known.count(name)) extra.push_back(name);
    m->info.tensors.push_back({name, dtypeName(loc.entry->dtype), loc.file_name, loc.entry->shape});
    if (!buffer) {
      m->info.parameters += loc.entry->elements();
      dtypes.insert(dtypeName(loc.entry->dtype));
    }
  }
  m->info.dtype = dtypes.size() == 1 ? *dtypes.begin() : dtypes.empty() ? "" : "mixed";
  if (!extra.empty()) {
    std::string list;
    for (size_t i = 0; i < extra.size() && i < 5; ++i) list += (i ? ", '" : "'") + extra[i] + "'";
    if (extra.size() > 5) list += " and " + std::to_string(extra.size() - 5) + " more";
    throw InputError(all.at(extra[0]).file_name + ": " + std::to_string(extra.size()) + " tensor" +
                     (extra.size() > 1 ? "s" : "") + " that " + c.arch_name + " with this config does not use: " +
                     list);
  }
  for (const auto& [name, e] : known) {
    const auto it = all.find(name);
    if (it == all.end()) {
      if (e->required)
        throw InputError(fileIn(files, shard_names[0]) + ": tensor '" + name + "' is missing (" + c.arch_name +
                         " needs it, shape " + shapeText(e->shape) + ")");
      continue;
    }
    if (it->second.entry->shape != e->shape)
      throw InputError(fileIn(files, it->second.file_name) + ": tensor '" + name + "' has shape " +
                       shapeText(it->second.entry->shape) + ", but config.json implies " + shapeText(e->shape));
  }

  Model& model = *m;
  // A view of tensor `name` (empty Weight when absent and optional).
  auto take = [&](const std::string& name) -> Weight {
    const auto it = all.find(name);
    if (it == all.end()) return {};
    const Located& loc = it->second;
    model.converted.emplace_back();
    const float* p = loc.file->floats(*loc.entry, model.converted.back());
    if (model.converted.back().empty()) model.converted.pop_back();
    const std::vector<int64_t>& s = loc.entry->shape;
    return {.data = p, .rows = s[0], .cols = s.size() > 1 ? s[1] : 1};
  };
  // A 16-bit matrix left in the map, converted when used (F32: as take).
  auto takeLazy = [&](const std::string& name) -> Weight {
    const auto it = all.find(name);
    if (it == all.end() || it->second.entry->dtype == DType::F32) return take(name);
    const TensorEntry& e = *it->second.entry;
    return {.file = it->second.file.get(), .entry = &e, .rows = e.shape[0], .cols = e.shape.size() > 1 ? e.shape[1] : 1};
  };
  const std::string& P = prefix;
  if (c.arch == Architecture::Gpt2) {
    model.wte = take(P + "wte.weight");
    model.wpe = take(P + "wpe.weight");
    for (int64_t l = 0; l < c.layers; ++l) {
      auto w = [&](const std::string& rest) { return take(P + layerName("h.", l, rest)); };
      model.gpt2.push_back({w("ln_1.weight"), w("ln_1.bias"), w("attn.c_attn.weight"), w("attn.c_attn.bias"),
                            w("attn.c_proj.weight"), w("attn.c_proj.bias"), w("ln_2.weight"), w("ln_2.bias"),
                            w("mlp.c_fc.weight"), w("mlp.c_fc.bias"), w("mlp.c_proj.weight"), w("mlp.c_proj.bias")});
      ctx.progress(0.1f + 0.8f * static_cast<float>(l + 1) / static_cast<float>(c.layers));
    }
    model.ln_f_w = take(P + "ln_f.weight");
    model.ln_f_b = take(P + "ln_f.bias");
    model.lm_head = all.count("lm_head.weight") ? take("lm_head.weight") : model.wte;  // tied to wte
  } else if (c.arch == Architecture::Llama) {
    model.embed = takeLazy(P + "embed_tokens.weight");
    for (int64_t l = 0; l < c.layers; ++l) {
      auto w = [&](const std::string& rest) { return take(P + layerName("layers.", l, rest)); };
      auto lazy = [&](const std::string& rest) { return takeLazy(P + layerName("layers.", l, rest)); };
      model.llama.push_back({w("input_layernorm.weight"), lazy("self_attn.q_proj.weight"), w("self_attn.q_proj.bias"),
                             lazy("self_attn.k_proj.weight"), w("self_attn.k_proj.bias"),
                             lazy("self_attn.v_proj.weight"), w("self_attn.v_proj.bias"),
                             lazy("self_attn.o_proj.weight"), w("post_attention_layernorm.weight"),
                             lazy("mlp.gate_proj.weight"), lazy("mlp.up_proj.weight"), lazy("mlp.down_proj.weight")});
      ctx.progress(0.1f + 0.8f * static_cast<float>(l + 1) / static_cast<float>(c.layers));
    }
    model.final_norm = take(P + "norm.weight");
    model.lm_head = c.tie_embeddings ? model.embed : takeLazy("lm_head.weight");
    model.rope_theta = llamaRopeFrequencies(c);
  } else {
    model.word = take(P + "embeddings.word_embeddings.weight");
    model.position = take(P + "embeddings.position_embeddings.weight");
    model.token_type = take(P + "embeddings.token_type_embeddings.weight");
    model.emb_ln_w = take(P + "embeddings.LayerNorm.weight");
    model.emb_ln_b = take(P + "embeddings.LayerNorm.bias");
    for (int64_t l = 0; l < c.layers; ++l) {
      auto w = [&](const std::string& rest) { return take(P + layerName("encoder.layer.", l, rest)); };
      model.bert.push_back({w("attention.self.query.weight"), w("attention.self.query.bias"),
                            w("attention.self.key.weight"), w("attention.self.key.bias"),
                            w("attention.self.value.weight"), w("attention.self.value.bias"),
                            w("attention.output.dense.weight"), w("attention.output.dense.bias"),
                            w("attention.output.LayerNorm.weight"), w("attention.output.LayerNorm.bias"),
                            w("intermediate.dense.weight"), w("intermediate.dense.bias"), w("output.dense.weight"),
                            w("output.dense.bias"), w("output.LayerNorm.weight"), w("output.LayerNorm.bias")});
      ctx.progress(0.1f + 0.8f * static_cast<float>(l + 1) / static_cast<float>(c.layers));
    }
    // The masked-LM head is all there or not used at all.
    const std::vector<std::string> mlm = {"cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias",
                                          "cls.predictions.transform.LayerNorm.weight",
                                          "cls.predictions.transform.LayerNorm.bias", "cls.predictions.bias"};
    const int64_t have = std::count_if(mlm.begin(), mlm.end(), [&](const std::string& n) { return all.count(n) > 0; });
    if (have > 0 && have < static_cast<int64_t>(mlm.size())) {
      for (const std::string& n : mlm)
        if (!all.count(n))
          throw InputError(fileIn(files, shard_names[0]) + ": tensor '" + n +
                           "' is missing (the masked-LM head cls.predictions.* is incomplete)");
    }
    if (have > 0) {
      model.mlm = true;
      model.mlm_dense_w = take(mlm[0]);
      model.mlm_dense_b = take(mlm[1]);
      model.mlm_ln_w = take(mlm[2]);
      model.mlm_ln_b = take(mlm[3]);
      model.mlm_bias = take(mlm[4]);
      model.mlm_decoder = all.count("cls.predictions.decoder.weight") ? take("cls.predictions.decoder.weight")
                                                                        : model.word;  // tied
    }
  }
  loadTokenizer(files, model);
  ctx.progress(1.0f);
  return m;
}

const ModelInfo& modelInfo(const Model& m) { return m.info; }
const Tokenizer& modelTokenizer(const Model& m) { return *m.tokenizer; }

nlohmann::json modelInfoToJson(const ModelInfo& info) {
  const ModelConfig& c = info.config;
  nlohmann::json tensors = nlohmann::json::array();
  for (const TensorSummary& t : info.tensors)
    tensors.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}, {"file", t.file}});
  nlohmann::json j = {{"label", info.label},
                      {"architecture", c.arch_name},
                      {"family", c.family},
                      {"layers", c.layers},
                      {"heads", c.heads},
                      {"d_model", c.d_model},
                      {"d_ff", c.d_ff},
                      {"positions", c.positions},
                      {"vocab", c.vocab},
                      {"parameters", info.parameters},
                      {"dtype", info.dtype},
                      {"bytes_on_disk", info.bytes_on_disk},
                      {"tensors", tensors}};
  if (c.arch == Architecture::Llama) {
    j["kv_heads"] = c.kv_heads;
    j["head_dim"] = c.head_dim;
    j["rms_norm_eps"] = c.rms_eps;
    j["rope_theta"] = c.rope_theta;
    if (c.rope_factor > 0)
      j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", c.rope_factor}, {"low_freq_factor", c.rope_low_freq},
                           {"high_freq_factor", c.rope_high_freq},
                           {"original_max_position_embeddings", c.rope_original_positions}};
    j["qkv_bias"] = c.qkv_bias;
    j["tie_word_embeddings"] = c.tie_embeddings;
    j["sliding_window"] = c.sliding_window;
  }
  if (c.arch == Architecture::Bert) {
    j["type_vocab"] = c.type_vocab;
    j["lower_case"] = c.lower_case;
  }
  return j;
}

namespace {

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The positions ModelRunOptions::predict_at names, checked; all when empty.
std::vector<int64_t> predictionRows(const ModelRunOptions& o, int64_t L) {
  if (o.predict_at.empty()) {
    std::vector<int64_t> all(static_cast<size_t>(L));
    std::iota(all.begin(), all.end(), int64_t{0});
    return all;
  }
  std::vector<int64_t> rows;
  for (const int64_t i : o.predict_at) {
    if (i < -L || i >= L)
      throw InputError("--predict-at: position " + std::to_string(i) + " is outside the " + std::to_string(L) +
                       " tokens (0 … " + std::to_string(L - 1) + ", or −1 … −" + std::to_string(L) + " from the end)");
    rows.push_back(i < 0 ? L + i : i);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

}  // namespace

// [SECTION] Runs on text
ModelRun runForward(const Model& m, const std::vector<int32_t>& ids, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  ModelRun run;
  run.ids = ids;
  run.layers = c.layers;
  run.heads = c.heads;
  run.kv_heads = c.kv_heads;
  run.d_head = c.head_dim;
  run.causal = c.arch != Architecture::Bert;
  run.rope = c.arch == Architecture::Llama;
  run.rope_theta = m.rope_theta;
  run.sliding_window = c.sliding_window;
  run.first_position = cache ? cache->length : 0;
  run.attention.resize(static_cast<size_t>(c.layers));
  run.q.resize(static_cast<size_t>(c.layers));
  run.k.resize(static_cast<size_t>(c.layers));
  run.v.resize(static_cast<size_t>(c.layers));
  for (const int32_t id : ids) run.tokens.push_back(tokenText(*m.tokenizer, id));
  if (c.arch == Architecture::Gpt2) gpt2Forward(m, run, cache, ctx);
  else if (c.arch == Architecture::Bert) bertForward(m, run, ctx);
  else llamaForward(m, run, cache, ctx);
  if (cache) cache->length += static_cast<int64_t>(ids.size());
  return run;
}

void checkIds(const Model& m, const std::vector<int32_t>& ids, int64_t first_position) {
  const ModelConfig& c = m.info.config;
  const int64_t L = static_cast<int64_t>(ids.size());
  if (L == 0) throw InputError("text: no tokens to run the model on");
  if (first_position + L > c.positions)
    throw TooLongError("text: " + std::to_string(first_position + L) + " tokens, but " + archLabel(c) +
                           " has only " + std::to_string(c.positions) + " positions",
                       first_position + L, c.positions);
  for (const int32_t id : ids)
    if (id < 0 || id >= c.vocab)
      throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(c.vocab) +
                       ")");
}

int passThreads(const Model& m, int64_t tokens) {
  // About 2 FLOP per parameter per token: below half a GFLOP (~10 ms on one
  // core, the default model's whole range) the pass runs on one thread, as
  // waking a second costs more than it saves; above, on the cores free now.
  constexpr double kSerialFlops = 5e8;
  const bool small = 2.0 * static_cast<double>(tokens) * static_cast<double>(m.info.parameters) < kSerialFlops;
  return small ? 1 : threadsAvailable();
}

ModelRun runModelIds(const Model& m, const std::vector<int32_t>& ids, const ModelRunOptions& options,
                     const RunContext& ctx) {
  checkIds(m, ids, 0);
  const ThreadScope threads(passThreads(m, static_cast<int64_t>(ids.size())));
  const auto t0 = std::chrono::steady_clock::now();
  ModelRun run = runForward(m, ids, nullptr, ctx);
  const bool head = m.info.config.arch != Architecture::Bert || m.mlm;
  if (head && options.top_k > 0)
    run.top_k = predictTokens(m, run.hidden, predictionRows(options, static_cast<int64_t>(ids.size())), options.top_k,
                              ctx, &run.flops);
  run.compute_seconds = seconds(t0);
  run.threads = omp_get_max_threads();
  ctx.progress(1.0f);
  return run;
}

std::vector<int32_t> promptIds(const Model& m, const std::string& text, int64_t max_tokens, bool truncate,
                               bool* truncated) {
  const ModelConfig& c = m.info.config;
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError("text: empty (type some text for the model to read)");
  std::vector<int32_t> ids = m.tokenizer->encode(text);
  if (ids.empty()) throw InputError("text: no tokens after tokenizing (type some words for the model to read)");
  const bool bert = c.arch == Architecture::Bert, bos = !bert && m.add_bos && m.bos >= 0;
  const int64_t added = bert ? 2 : bos ? 1 : 0;  // BERT adds [CLS] and [SEP]; the LLaMA family <s>
  const int64_t limit = max_tokens - added;
  const int64_t n = static_cast<int64_t>(ids.size());
  if (n > limit) {
    const std::string specials = bert ? " (plus [CLS] and [SEP])" : bos ? " (plus " + tokenText(*m.tokenizer, m.bos) + ")" : "";
    if (!truncate)
      throw TooLongError("text: " + std::to_string(n) + " tokens" + specials + ", but " + archLabel(c) +
                             " has only " + std::to_string(max_tokens) + " positions" +
                             (max_tokens < c.positions ? " left" : "") + "; shorten the text, or truncate it to the first " +
                             std::to_string(std::max<int64_t>(limit, 0)) + " tokens (--truncate on the command line)",
                         n, limit);
    if (limit <= 0) throw InputError("text: no positions are left for the text");
    ids.resize(static_cast<size_t>(limit));
    *truncated = true;
  }
  if (bert) {
    ids.insert(ids.begin(), m.cls);
    ids.push_back(m.sep);
  } else if (bos) {
    ids.insert(ids.begin(), m.bos);
  }
  return ids;
}

ModelRun runModel(const Model& m, const std::string& text, const ModelRunOptions& options, const RunContext& ctx) {
  bool truncated = false;
  const std::vector<int32_t> ids = promptIds(m, text, m.info.config.positions, options.truncate, &truncated);
  ModelRun run = runModelIds(m, ids, options, ctx);
  run.truncated = truncated;
  return run;
}

}  // namespace attn
