#include "engine/model/checkpoint/gguf_model.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/files.h"
#include "engine/model/families/family.h"
#include "engine/model/model.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

namespace fs = std::filesystem;

namespace attn {

// [SECTION] The architecture's keys
const GgufValue* GgufKeys::get(const std::string& key) {
  read_.insert(key);
  return h_.find(arch_ + "." + key);
}

const GgufTensor* GgufKeys::tensor(const std::string& name) const {
  const auto t = std::find_if(h_.tensors.begin(), h_.tensors.end(), [&](const GgufTensor& x) { return x.name == name; });
  return t == h_.tensors.end() ? nullptr : &*t;
}

void GgufKeys::fail(const std::string& key, const std::string& message) const {
  throw InputError(what_ + ": metadata '" + arch_ + "." + key + "' " + message);
}

int64_t GgufKeys::count(const std::string& key, int64_t max, std::optional<int64_t> def) {
  return integer(key, 1, max, def);
}

int64_t GgufKeys::integer(const std::string& key, int64_t min, int64_t max, std::optional<int64_t> def) {
  const GgufValue* v = get(key);
  if (!v) {
    if (!def) fail(key, "is missing");
    return *def;
  }
  if (!v->isInteger() || v->type == GgufType::Bool) fail(key, "must be an integer, got " + ggufTypeName(v->type));
  if (v->integer < min || v->integer > max)
    fail(key, "is " + std::to_string(v->integer) + " (expected " + std::to_string(min) + " to " + std::to_string(max) + ")");
  return v->integer;
}

double GgufKeys::number(const std::string& key, std::optional<double> def) {
  const GgufValue* v = get(key);
  if (!v) {
    if (!def) fail(key, "is missing");
    return *def;
  }
  if (v->isFloat()) {
    if (!std::isfinite(v->number)) fail(key, "is not finite");
    return v->number;
  }
  if (v->isInteger() && v->type != GgufType::Bool) return static_cast<double>(v->integer);
  fail(key, "must be a number, got " + ggufTypeName(v->type));
}

bool GgufKeys::flag(const std::string& key, bool def) {
  const GgufValue* v = get(key);
  if (!v) return def;
  if (v->type != GgufType::Bool) fail(key, "must be a bool, got " + ggufTypeName(v->type));
  return v->integer != 0;
}

std::string GgufKeys::text(const std::string& key, const std::string& def) {
  const GgufValue* v = get(key);
  if (!v) return def;
  if (v->type != GgufType::String) fail(key, "must be a string, got " + ggufTypeName(v->type));
  return v->text;
}

void ggufDecoderSizes(GgufKeys& k, nlohmann::json& c) {
  const int64_t heads = k.count("attention.head_count", kMaxWidth);
  c["num_hidden_layers"] = k.count("block_count", kMaxLayers);
  c["hidden_size"] = k.count("embedding_length", kMaxWidth);
  c["intermediate_size"] = k.count("feed_forward_length", kMaxWidth);
  c["num_attention_heads"] = heads;
  c["num_key_value_heads"] = k.count("attention.head_count_kv", kMaxWidth, heads);
  c["max_position_embeddings"] = k.count("context_length", kMaxCount);
}

void ggufDecoderConfig(GgufKeys& k, nlohmann::json& c, bool partial_rotary) {
  ggufDecoderSizes(k, c);
  const int64_t d = c["hidden_size"].get<int64_t>(), heads = c["num_attention_heads"].get<int64_t>();
  c["rms_norm_eps"] = k.number("attention.layer_norm_rms_epsilon");
  // head_dim: key_length (Qwen3, Gemma), else the width over the heads.
  const int64_t head_dim = k.count("attention.key_length", kMaxWidth, d / heads);
  if (k.count("attention.value_length", kMaxWidth, head_dim) != head_dim)
    k.fail("attention.value_length", "differs from attention.key_length " + std::to_string(head_dim) +
                                         " (values of another width than keys are not implemented)");
  c["head_dim"] = head_dim;
  ggufRope(k, c, head_dim, partial_rotary);
}

void ggufRope(GgufKeys& k, nlohmann::json& c, int64_t head_dim, bool partial_rotary) {
  c["rope_theta"] = k.number("rope.freq_base", 10000.0);
  // RoPE turns all of a head's dimensions, or the first rot (transformers:
  // int(head_dim · partial_rotary_factor), the factor nudged up where the quotient rounds below rot).
  const int64_t rot = k.count("rope.dimension_count", kMaxWidth, head_dim);
  if (partial_rotary && rot <= head_dim && rot % 2 == 0) {
    double factor = static_cast<double>(rot) / static_cast<double>(head_dim);
    if (static_cast<int64_t>(static_cast<double>(head_dim) * factor) < rot) factor = std::nextafter(factor, 2.0);
    c["partial_rotary_factor"] = factor;
  } else if (rot != head_dim) {
    k.fail("rope.dimension_count", "is " + std::to_string(rot) + ", but this family turns " +
                                       (partial_rotary ? "an even number of the " : "all ") + std::to_string(head_dim) +
                                       " dimensions of a head");
  }
  const std::string scaling = k.text("rope.scaling.type", "none");
  if (scaling == "linear") {
    c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", k.number("rope.scaling.factor")}};
  } else if (scaling != "none") {
    k.fail("rope.scaling.type", "is '" + scaling + "', which is not implemented (expected none or linear)");
  } else if (const double f = k.number("rope.scaling.factor", 1.0); f != 1.0) {
    k.fail("rope.scaling.factor", "is " + formatNumber(f) + " without a rope.scaling.type");
  }
}

int64_t ggufHeadsAllKv(GgufKeys& k, const std::string& label) {
  const int64_t heads = k.count("attention.head_count", kMaxWidth);
  if (const int64_t kv = k.count("attention.head_count_kv", kMaxWidth, heads); kv != heads)
    k.fail("attention.head_count_kv", "is " + std::to_string(kv) + ", but " + label + "'s keys and values have all " +
                                          std::to_string(heads) + " heads");
  return heads;
}

// [SECTION] The file as a folder
bool isGgufPath(const std::string& path) { return fs::path(path).extension() == ".gguf"; }

namespace {

// The family and the spec of general.architecture.
std::pair<const Family*, const GgufSpec*> specOf(const GgufHeader& h, const std::string& what) {
  const GgufValue* a = h.find("general.architecture");
  if (!a) throw InputError(what + ": metadata 'general.architecture' is missing");
  if (a->type != GgufType::String)
    throw InputError(what + ": metadata 'general.architecture' must be a string, got " + ggufTypeName(a->type));
  std::string list;
  for (const Family& f : modelFamilies())
    for (const GgufSpec& s : f.gguf) {
      if (s.arch == a->text) return {&f, &s};
      list += (list.empty() ? "" : ", ") + s.arch;
    }
  throw InputError(what + ": metadata 'general.architecture' is '" + a->text +
                   "', which is not supported (expected one of " + list + ")");
}

// general.file_type (llama.cpp's llama_ftype): what the file was quantized as, for model info.
std::string fileTypeName(int64_t t) {
  static const std::map<int64_t, std::string> names = {
      {0, "F32"},     {1, "F16"},     {2, "Q4_0"},   {3, "Q4_1"},    {7, "Q8_0"},    {8, "Q5_0"},   {9, "Q5_1"},
      {10, "Q2_K"},   {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"}, {15, "Q4_K_M"}, {16, "Q5_K_S"},
      {17, "Q5_K_M"}, {18, "Q6_K"},   {19, "IQ2_XXS"}, {20, "IQ2_XS"}, {21, "Q2_K_S"}, {22, "IQ3_XS"}, {23, "IQ3_XXS"},
      {24, "IQ1_S"},  {25, "IQ4_NL"}, {26, "IQ3_S"},  {27, "IQ3_M"},  {28, "IQ2_S"},  {29, "IQ2_M"}, {30, "IQ4_XS"},
      {31, "IQ1_M"},  {32, "BF16"}};
  const auto it = names.find(t);
  return it == names.end() ? "file type " + std::to_string(t) : it->second;
}

// Keys of the architecture that describe the file, not the computation.
bool informational(const std::string& key) { return key == "vocab_size"; }

// The other keys the loader reads, or that change nothing it computes.
void refuseUnread(const GgufHeader& h, const GgufKeys& k, const std::string& label, const std::string& what) {
  const std::string prefix = k.arch() + ".";
  for (const auto& [key, v] : h.metadata) {
    if (key.rfind(prefix, 0) == 0) {
      const std::string rest = key.substr(prefix.size());
      if (!k.read().count(rest) && !informational(rest))
        throw InputError(what + ": metadata '" + key + "' is not implemented for " + label +
                         " (it changes the computation; this file cannot be run as it was meant)");
    } else if (key == "split.count" && v.isInteger() && v.integer > 1) {
      throw InputError(what + ": metadata 'split.count' is " + std::to_string(v.integer) +
                       ": a model split into several GGUF files is not supported (merge them with llama-gguf-split --merge)");
    }
  }
}

// The GGUF name's template ('#' for the layer) and layer.
std::pair<std::string, std::string> layerTemplate(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return {name, ""};
  const size_t dot = name.find('.', 4);
  if (dot == std::string::npos || dot == 4) return {name, ""};
  const std::string layer = name.substr(4, dot - 4);
  if (!std::all_of(layer.begin(), layer.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) return {name, ""};
  return {"blk.#" + name.substr(dot), layer};
}

// llama.cpp's per-frequency RoPE divisors (LLM_TENSOR_ROPE_FREQS; ggml_rope_ext's freq_factors, which must be F32).
const std::string kRopeFreqs = "rope_freqs.weight";

std::vector<double> ropeFreqs(const GgufTensor& t, const GgufHeader& h, const uint8_t* bytes, const ModelConfig& c,
                              const std::string& what) {
  const int64_t pairs = c.rope.rotaryDims(c.head_dim) / 2;
  if (t.type != DType::F32)
    throw InputError(what + ": tensor '" + kRopeFreqs + "' is " + dtypeName(t.type) + " (llama.cpp reads the RoPE factors as F32)");
  if (t.dims != std::vector<int64_t>{pairs})
    throw InputError(what + ": tensor '" + kRopeFreqs + "' has shape " + shapeText(t.dims) + ", expected [" +
                     std::to_string(pairs) + "] (one factor per frequency of a head's " +
                     std::to_string(2 * pairs) + " rotated dimensions)");
  std::vector<float> f(static_cast<size_t>(pairs));
  std::memcpy(f.data(), bytes + h.data_start + t.offset, f.size() * sizeof(float));
  for (size_t i = 0; i < f.size(); ++i)
    if (!std::isfinite(f[i]) || f[i] <= 0)
      throw InputError(what + ": tensor '" + kRopeFreqs + "' has " + formatNumber(f[i]) + " at element " +
                       std::to_string(i) + " (expected positive factors)");
  return {f.begin(), f.end()};
}

// Where the converter stores row r of a fused query_key_value (weight or
// bias) of `heads` heads: transformers' rows go per head (q_h, k_h, v_h), the
// file's as [Q; K; V] (GPTNeoXModel's and BloomModel's modify_tensors).
std::vector<int64_t> qkvStoredRows(int64_t rows, int64_t heads, const std::string& what, const std::string& name) {
  if (heads <= 0 || rows % (3 * heads) != 0)
    throw InputError(what + ": tensor '" + name + "' has " + std::to_string(rows) + " rows, not q, k and v of " +
                     std::to_string(heads) + " heads");
  const int64_t dh = rows / (3 * heads);
  std::vector<int64_t> stored(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = r / (3 * dh), part = r / dh % 3, j = r % dh;  // head, q/k/v, row within
    stored[static_cast<size_t>(r)] = part * heads * dh + h * dh + j;
  }
  return stored;
}

}  // namespace

std::vector<int64_t> ropeStoredRows(int64_t rows, int64_t heads, const std::string& what, const std::string& name) {
  if (heads <= 0 || rows % heads != 0 || (rows / heads) % 2 != 0)
    throw InputError(what + ": tensor '" + name + "' has " + std::to_string(rows) + " rows, not " +
                     std::to_string(heads) + " heads of an even width");
  const int64_t dh = rows / heads, half = dh / 2;
  std::vector<int64_t> stored(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = r / dh, j = r % dh;
    stored[static_cast<size_t>(r)] = h * dh + (j < half ? 2 * j : 2 * (j - half) + 1);
  }
  return stored;
}

std::pair<std::string, const GgufTensorName*> ggufNameOf(const std::vector<GgufTensorName>& names,
                                                         const std::string& hf) {
  for (const GgufTensorName& n : names) {
    const size_t at = n.hf.find('#');
    if (at == std::string::npos) {
      if (n.hf == hf) return {n.gguf, &n};
      continue;
    }
    // The template's parts around '#' with a layer number between them.
    const std::string before = n.hf.substr(0, at), after = n.hf.substr(at + 1);
    if (hf.size() <= before.size() + after.size() || hf.rfind(before, 0) != 0 || !hf.ends_with(after)) continue;
    const std::string layer = hf.substr(before.size(), hf.size() - before.size() - after.size());
    if (!std::all_of(layer.begin(), layer.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) continue;
    std::string gguf = n.gguf;
    gguf.replace(gguf.find('#'), 1, layer);
    return {gguf, &n};
  }
  throw InputError("tensor '" + hf + "' has no GGUF name in this family's spec");
}

ModelFiles ggufModelFiles(const std::string& path) {
  std::shared_ptr<const MappedFile> map = MappedFile::open(path, path);
  static const uint8_t kEmpty[1] = {0};
  return ggufModelFiles(map->data() ? map->data() : kEmpty, map->size(), map, path);
}

ModelFiles ggufModelFiles(const uint8_t* bytes, uint64_t size, std::shared_ptr<const MappedFile> map,
                          const std::string& path) {
  auto header = std::make_shared<GgufHeader>(parseGgufHeader(bytes, size, path));
  const GgufHeader& h = *header;
  const auto [family, spec] = specOf(h, path);

  // config.json from the architecture's keys.
  nlohmann::json config = {{"architectures", {spec->architecture}}, {"model_type", family->model_type}};
  GgufKeys keys(h, spec->arch, path);
  spec->config(keys, config);
  if (const GgufValue* ft = h.find("general.file_type"); ft && ft->isInteger()) config["torch_dtype"] = fileTypeName(ft->integer);
  refuseUnread(h, keys, family->label, path);
  const auto embd = std::find_if(h.tensors.begin(), h.tensors.end(),
                                 [](const GgufTensor& t) { return t.name == "token_embd.weight"; });
  if (embd == h.tensors.end()) throw InputError(path + ": tensor 'token_embd.weight' (the token embeddings) is missing");
  if (embd->dims.size() != 2) throw InputError(path + ": tensor 'token_embd.weight' must have 2 dimensions");
  config["vocab_size"] = embd->dims[1];
  if (!config.contains("tie_word_embeddings")) config["tie_word_embeddings"] = keys.tensor("output.weight") == nullptr;
  ModelConfig c = parseConfig(config.dump(), path);  // the sizes the row orders below read, checked
  if (const GgufTensor* freqs = spec->rope_freqs ? keys.tensor(kRopeFreqs) : nullptr) {
    config["rope_scaling"]["freq_factors"] = ropeFreqs(*freqs, h, bytes, c, path);  // beside linear's factor, or alone
    c = parseConfig(config.dump(), path);
  }

  // The tensors under their names in transformers.
  SafetensorsHeader st;
  st.data_start = h.data_start;
  for (const GgufTensor& t : h.tensors) {
    if (spec->rope_freqs && t.name == kRopeFreqs) continue;  // in config.json
    const std::pair<std::string, std::string> at = layerTemplate(t.name);  // (template, layer)
    const std::string &templ = at.first, &layer = at.second;
    const auto name = std::find_if(spec->tensors.begin(), spec->tensors.end(),
                                   [&](const GgufTensorName& n) { return n.gguf == templ; });
    if (name == spec->tensors.end())
      throw InputError(path + ": tensor '" + t.name + "' is not one of " + family->label +
                       "'s tensors as llama.cpp's converter names them");
    TensorEntry e;
    e.name = name->hf;
    if (const size_t at = e.name.find('#'); at != std::string::npos) e.name.replace(at, 1, layer);
    e.dtype = t.type;
    e.shape.assign(t.dims.rbegin(), t.dims.rend());
    e.begin = t.offset;
    e.end = t.offset + t.bytes;
    switch (name->undo) {
      case GgufUndo::None: break;
      case GgufUndo::RopeRowsQ:
      case GgufUndo::RopeRowsK: {
        e.stored_rows = ropeStoredRows(e.shape[0], name->undo == GgufUndo::RopeRowsQ ? c.heads : c.kv_heads, path, t.name);
        break;
      }
      case GgufUndo::QkvPerHead: e.stored_rows = qkvStoredRows(e.shape[0], c.heads, path, t.name); break;
      case GgufUndo::NormPlusOne: e.add = -1.0f; break;
      case GgufUndo::Transposed: {
        if (e.shape.size() != 2) throw InputError(path + ": tensor '" + t.name + "' must have 2 dimensions");
        std::swap(e.shape[0], e.shape[1]);
        e.transposed = true;
        break;
      }
    }
    st.tensors.push_back(std::move(e));
  }
  std::sort(st.tensors.begin(), st.tensors.end(),
            [](const TensorEntry& a, const TensorEntry& b) { return a.begin < b.begin; });
  std::shared_ptr<const SafetensorsFile> file = SafetensorsFile::fromHeader(bytes, size, std::move(map), path, std::move(st));

  ModelFiles f;
  f.label = path;
  f.gguf = header;
  const std::string config_text = config.dump();
  f.read_text = [config_text](const std::string& name) -> std::optional<std::string> {
    if (name == "config.json") return config_text;
    return std::nullopt;
  };
  f.open_safetensors = [file](const std::string& name) -> std::shared_ptr<const SafetensorsFile> {
    return name == "model.safetensors" ? file : nullptr;
  };
  return f;
}

// [SECTION] Writing
std::vector<GgufKeyToWrite> ggufLlamaKeys(const GgufLlamaSizes& s, const std::vector<std::string>& pieces) {
  std::vector<int64_t> types(pieces.size(), 1);
  std::fill_n(types.begin(), std::min<size_t>(3, types.size()), 3);  // <unk>, <s>, </s>: control tokens
  const auto count = [](int64_t v) { return ggufInt(GgufType::UInt32, v); };
  return {{"general.architecture", ggufString("llama")},
          {"llama.context_length", count(s.positions)},
          {"llama.embedding_length", count(s.d)},
          {"llama.block_count", count(s.layers)},
          {"llama.feed_forward_length", count(s.ff)},
          {"llama.attention.head_count", count(s.heads)},
          {"llama.attention.head_count_kv", count(s.kv_heads)},
          {"llama.rope.freq_base", ggufFloat(10000.0)},
          {"llama.attention.layer_norm_rms_epsilon", ggufFloat(1e-5)},
          {"llama.rope.dimension_count", count(s.d / s.heads)},
          {"tokenizer.ggml.model", ggufString("gpt2")},
          {"tokenizer.ggml.pre", ggufString("gpt-2")},
          {"tokenizer.ggml.tokens", ggufStrings(pieces)},
          {"tokenizer.ggml.token_type", ggufInts(GgufType::Int32, types)},
          {"tokenizer.ggml.merges", ggufStrings({})},
          {"tokenizer.ggml.bos_token_id", count(1)},
          {"tokenizer.ggml.eos_token_id", count(2)},
          {"tokenizer.ggml.add_bos_token", ggufInt(GgufType::Bool, 1)}};
}

}  // namespace attn
