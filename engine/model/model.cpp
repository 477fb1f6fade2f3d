// Checkpoints in the Hugging Face layout: the files, config.json, the
// tensors each family needs, loading, and runs on text. The families (their
// fields, tensors and passes) are in family.h and one file each.
//
// [SECTION] Files on disk
// [SECTION] config.json
// [SECTION] Tensors: what each family needs (family.h), checked against the checkpoint
// [SECTION] Loading
// [SECTION] Runs on text
#include "engine/model/model.h"

#include "engine/attention_math.h"
#include "engine/model/blocks/head_metrics.h"
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/families/family.h"
#include "engine/model/tokenizers/tokenizer_gguf.h"
#include "engine/model/tokenizers/tokenizer_json.h"
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
    if (isGgufPath(path)) return ggufModelFiles(path);
    if (fs::path(path).extension() != ".safetensors")
      throw InputError(path + ": expected a model folder, a .safetensors file or a .gguf file");
    folder = fs::path(path).parent_path();
    if (folder.empty()) folder = ".";
    weights = fs::path(path).filename().string();
  } else if (!fs::is_directory(path, ec)) {
    throw InputError(path + ": no such model folder, .safetensors or .gguf file");
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

// A GGUF file holds what a folder's files would: errors name the file.
std::string fileIn(const ModelFiles& files, const std::string& name) {
  return files.gguf ? files.label : (fs::path(files.label) / name).string();
}

// [SECTION] config.json
// The family config.json names: architectures[0], or model_type when saved without.
const Family& familyOf(const ConfigReader& r, ModelConfig& c) {
  const nlohmann::json* archs = r.find("architectures");
  if (archs) {
    if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string())
      r.fail("architectures", "must be a list of names, got " + archs->dump());
    c.arch_name = (*archs)[0].get<std::string>();
  } else {
    c.arch_name = r.text("model_type", "");  // configs saved without architectures name the family
    if (c.arch_name.empty()) throw InputError(r.where + ": field 'architectures' (or 'model_type') is missing");
  }
  if (const Family* f = findFamily(c.arch_name)) return *f;
  std::string list;
  for (const Family& f : modelFamilies())
    for (const std::string& a : f.architectures) list += (list.empty() ? "" : ", ") + a;
  throw InputError(r.where + ": architecture '" + c.arch_name + "' is not supported (expected one of " + list + ")");
}

}  // namespace

ModelConfig parseConfig(const std::string& text, const std::string& where) {
  const nlohmann::json j = parseJsonObject(text, where);
  const ConfigReader r{j, where};
  ModelConfig c;
  const Family& f = familyOf(r, c);
  c.family = f.model_type;
  c.label = f.label;
  c.causal = f.causal;
  // A config names its family twice: the two must agree, or the tensors
  // were saved for one model and described as another.
  if (const std::string type = r.text("model_type", c.family); r.has("architectures") && type != c.family)
    r.fail("model_type", "is '" + type + "', but 'architectures' names " + c.arch_name + " (expected model_type '" +
                             c.family + "')");
  // What the checkpoint was saved as (transformers 5: dtype; 4.x: torch_dtype). The pass runs in float32 either way.
  c.dtype = r.text("dtype", r.text("torch_dtype", ""));
  f.parse(r, c);
  if (c.kv_heads == 0) c.kv_heads = c.heads;
  if (c.head_dim == 0) {
    if (c.d_model % c.heads != 0)
      throw InputError(where + ": the heads (" + std::to_string(c.heads) + ") must divide the model width (" +
                       std::to_string(c.d_model) + ")");
    c.head_dim = c.d_model / c.heads;
  }
  for (const RopeSpec* rope : {&c.rope, &c.rope_local}) {
    const int64_t pairs = rope->rotaryDims(c.head_dim) / 2;
    if (!rope->freq_factors.empty() && static_cast<int64_t>(rope->freq_factors.size()) != pairs)
      throw InputError(where + ": freq_factors has " + std::to_string(rope->freq_factors.size()) +
                       " factors, but RoPE turns " + std::to_string(pairs) + " frequencies of a head (one factor each)");
  }
  refuseUnread(r, c);
  return c;
}

// [SECTION] Tensors: what each family needs, with shapes from the config (family.h)
namespace {

using Located = WeightSource::Located;

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

// Weights are admitted like inputs: NaN, ±Inf, or a magnitude no trained
// model has and whose products would overflow float32 are refused, naming
// the tensor and the first bad element, before any pass runs on them.
// Checks elements [first, first + count) of the tensor.
void checkWeightValues(const std::string& where, const std::string& name, const SafetensorsFile& file,
                       const TensorEntry& t, int64_t first, int64_t count) {
  const auto admitted = [](float x) { return std::abs(x) <= 1e6f; };  // false for NaN and ±Inf too
  constexpr int64_t kChunk = int64_t{1} << 16;
  // F32 is read where it is mapped, other types a chunk at a time converted.
  const uint8_t* bytes = file.data(t);
  const bool in_place = t.dtype == DType::F32 && t.asStored() && reinterpret_cast<uintptr_t>(bytes) % alignof(float) == 0;
  std::vector<float> chunk(in_place ? 0 : static_cast<size_t>(std::min(kChunk, std::max<int64_t>(count, 1))));
  for (int64_t at = first; at < first + count; at += kChunk) {
    const int64_t n = std::min(kChunk, first + count - at);
    const float* v = in_place ? reinterpret_cast<const float*>(bytes) + at : chunk.data();
    if (!in_place) file.floatsAt(t, at, n, chunk.data());
    // One pass without a branch per value, so it vectorises; the bad value
    // is looked for only in a chunk that has one.
    bool bad = false;
    for (int64_t i = 0; i < n; ++i) bad |= !admitted(v[i]);
    if (!bad) continue;
    const int64_t i = std::find_if_not(v, v + n, admitted) - v;
    const float x = v[i];
    const std::string what = std::isnan(x) ? "NaN" : std::isinf(x) ? (x > 0 ? "+Inf" : "-Inf") : nlohmann::json(x).dump();
    throw InputError(where + ": tensor '" + name + "' holds " + what + " at element " + std::to_string(at + i) +
                     " (expected finite weights of magnitude at most 1e6)");
  }
}

// BERT's tokenizer_config.json: do_lower_case (default true, as bert-base-uncased).
bool bertLowerCase(const ModelFiles& files) {
  const std::optional<std::string> text = files.read_text("tokenizer_config.json");
  if (!text) return true;
  const nlohmann::json j = parseJsonObject(*text, fileIn(files, "tokenizer_config.json"));
  const std::string where = fileIn(files, "tokenizer_config.json");
  if (!j.contains("do_lower_case")) return true;
  if (!j["do_lower_case"].is_boolean()) throw InputError(where + ": field 'do_lower_case' must be true or false");
  return j["do_lower_case"].get<bool>();
}

// A tokenizer.json's (or a GGUF file's) tokenizer as the model reads text
// with it; `where` names its file.
void adoptHfTokenizer(HfTokenizer t, const std::string& where, Model& m) {
  const ModelConfig& c = m.info.config;
  m.tokenizer = std::move(t.tokenizer);
  m.bos = t.bos, m.eos = t.eos, m.add_bos = t.add_bos;
  if (t.before.size() == 1 && t.after.size() == 1) m.cls = t.before[0], m.sep = t.after[0];  // [CLS] $A [SEP]
  if (t.before.empty() && t.after.size() == 1) m.sep = t.after[0];                              // $A </s> (T5)
  if (!c.causal && !c.encoderDecoder()) {
    // A bidirectional encoder (ModernBERT) reads the text between the special tokens
    // the post-processor puts around it, whatever their names ([CLS] … [SEP], <s> … </s>,
    // <s> … alone); a tokenizer.json that puts none: the vocabulary's [CLS] and [SEP].
    m.cls = t.before.empty() ? -1 : t.before[0];
    m.sep = t.after.empty() ? -1 : t.after[0];
    m.add_bos = false;
    if (t.before.empty() && t.after.empty()) {
      m.cls = m.tokenizer->specialId("[CLS]");
      m.sep = m.tokenizer->specialId("[SEP]");
      if (m.cls < 0 || m.sep < 0)
        throw InputError(where + ": its post_processor puts no special token around a text, and " +
                         "it has no [CLS] or [SEP] token (" + c.label + " reads [CLS] text [SEP])");
    }
  }
}

void loadTokenizer(const ModelFiles& files, Model& m) {
  const ModelConfig& c = m.info.config;
  auto need = [&](const std::string& name, const std::string& why) {
    std::optional<std::string> t = files.read_text(name);
    if (!t) throw InputError(fileIn(files, name) + ": missing (" + why + ")");
    return *t;
  };
  std::string vocab_file;
  switch (files.gguf ? TokenizerFiles::Json : m.family->tokenizer) {
    case TokenizerFiles::None:
      return;
    case TokenizerFiles::Json: {
      if (files.gguf) {
        adoptHfTokenizer(makeGgufTokenizer(*files.gguf, files.label), files.label, m);
        break;
      }
      vocab_file = "tokenizer.json";
      std::optional<std::string> json = files.read_text(vocab_file), spm;
      // SentencePiece only: tokenizer.model (Llama), spiece.model (T5, whose text ends with </s>)
      for (const char* name : {"tokenizer.model", "spiece.model"})
        if (!json && !spm && (spm = files.read_text(name))) vocab_file = name;
      if (!json && !spm)
        need(vocab_file, c.label + "'s tokenizer needs tokenizer.json (or tokenizer.model, spiece.model) beside config.json");
      adoptHfTokenizer(json ? makeHfTokenizer(*json, files.read_text("tokenizer_config.json"), fileIn(files, vocab_file),
                                              fileIn(files, "tokenizer_config.json"))
                            : makeSentencePieceTokenizer(*spm, files.read_text("tokenizer_config.json"),
                                                         fileIn(files, vocab_file),
                                                         fileIn(files, "tokenizer_config.json"), vocab_file == "spiece.model"),
                       fileIn(files, vocab_file), m);
      break;
    }
    case TokenizerFiles::Gpt2: {
      vocab_file = "vocab.json";
      const std::string why = c.label + "'s tokenizer needs vocab.json and merges.txt beside config.json";
      const std::string vocab = need(vocab_file, why), merges = need("merges.txt", why);
      m.tokenizer = makeGpt2Tokenizer(vocab, merges, fileIn(files, vocab_file), fileIn(files, "merges.txt"));
      m.eos = m.bos = m.tokenizer->specialId("<|endoftext|>");
      break;
    }
    case TokenizerFiles::WordPiece: {
      vocab_file = "vocab.txt";
      WordPieceOptions o;
      o.lower_case = bertLowerCase(files);
      o.strip_accents = o.lower_case;
      m.info.config.lower_case = o.lower_case;
      const std::string vocab = need(vocab_file, c.label + "'s tokenizer needs vocab.txt beside config.json");
      m.tokenizer = makeWordPieceTokenizer(vocab, o, fileIn(files, vocab_file));
      m.cls = m.tokenizer->specialId("[CLS]");
      m.sep = m.tokenizer->specialId("[SEP]");
      if (m.cls < 0 || m.sep < 0) throw InputError(fileIn(files, vocab_file) + ": has no [CLS] or [SEP] token");
      break;
    }
  }
  if (m.tokenizer->vocabSize() > c.vocab)
    throw InputError(fileIn(files, vocab_file) + ": " + std::to_string(m.tokenizer->vocabSize()) +
                     " tokens, more than the model's vocab_size " + std::to_string(c.vocab));
}

}  // namespace

std::shared_ptr<const Model> loadModel(const ModelFiles& files, const RunContext& ctx) {
  auto m = std::make_shared<Model>();
  const std::optional<std::string> config_text = files.read_text("config.json");
  if (!config_text) throw InputError(fileIn(files, "config.json") + ": missing (a model folder needs config.json)");
  const ModelConfig c = parseConfig(*config_text, fileIn(files, "config.json"));
  const Family& family = *findFamily(c.family);
  m->family = &family;
  m->info.label = files.label;
  m->info.config = c;
  ctx.progress(0.0f);

  std::vector<std::string> shard_names;
  const std::map<std::string, Located> all = openTensors(files, m->files, shard_names);
  for (const auto& f : m->files) m->info.bytes_on_disk += f->sizeBytes();

  // The checkpoint's prefix: GPT2LMHeadModel saves "transformer.", BertForMaskedLM "bert.", LlamaForCausalLM "model.".
  const std::string prefix = all.count(family.prefix + family.probe) ? family.prefix : "";

  // The family takes its weights, declaring each tensor; the checkpoint is
  // then held to what it declared before any pass reads a weight.
  Model& model = *m;
  WeightSource source(all, prefix, fileIn(files, shard_names[0]), model);
  model.weights = family.load(source, model, [&](int64_t l) {
    ctx.progress(0.1f + 0.8f * static_cast<float>(l + 1) / static_cast<float>(c.layers + c.decoder_layers));
  });
  std::map<std::string, const Expected*> known;  // full name → expectation
  for (const Expected& e : source.declared()) known[e.name] = &e;
  std::vector<std::string> extra;
  std::set<std::string> dtypes;
  std::map<std::string, StorageSummary> storage;
  for (const auto& [name, loc] : all) {
    const bool buffer = name.rfind(prefix, 0) == 0 && family.buffer(name.substr(prefix.size()));
    if (!buffer && !known.count(name)) extra.push_back(name);
    // A GGUF file's tensors are in it, under their names in the checkpoint it was converted from.
    const std::string file = files.gguf ? fs::path(files.label).filename().string() : loc.file_name;
    m->info.tensors.push_back({name, dtypeName(loc.entry->dtype), file, loc.entry->shape});
    if (!buffer) {
      m->info.parameters += loc.entry->elements();
      dtypes.insert(dtypeName(loc.entry->dtype));
      StorageSummary& by = storage[dtypeName(loc.entry->dtype)];
      by.dtype = dtypeName(loc.entry->dtype);
      ++by.tensors;
      by.parameters += loc.entry->elements();
      by.bytes += loc.entry->end - loc.entry->begin;
    }
  }
  m->info.dtype = dtypes.size() == 1 ? *dtypes.begin() : dtypes.empty() ? "" : "mixed";
  uint64_t weight_bytes = 0;
  for (const auto& [name, by] : storage) {
    m->info.storage.push_back(by);
    weight_bytes += by.bytes;
  }
  std::stable_sort(m->info.storage.begin(), m->info.storage.end(),
                   [](const StorageSummary& a, const StorageSummary& b) { return a.parameters > b.parameters; });
  if (m->info.parameters > 0)
    m->info.bits_per_weight = static_cast<double>(weight_bytes) * 8 / static_cast<double>(m->info.parameters);
  if (!extra.empty()) {
    std::string list;
    for (size_t i = 0; i < extra.size() && i < 5; ++i) list += (i ? ", '" : "'") + extra[i] + "'";
    if (extra.size() > 5) list += " and " + std::to_string(extra.size() - 5) + " more";
    throw InputError(all.at(extra[0]).file_name + ": " + std::to_string(extra.size()) + " tensor" +
                     (extra.size() > 1 ? "s" : "") + " that " + c.arch_name + " with this config does not use: " +
                     list);
  }
  // The values, on every thread in pieces of 1 Mi: reading each weight once
  // is most of a load's time. Errors come in name order as before, a
  // tensor's shape before its values.
  struct Piece {
    const std::string* name;
    const Located* at;
    int64_t first, count;
  };
  constexpr int64_t kPiece = int64_t{1} << 20;
  std::vector<Piece> pieces;
  for (const auto& [name, e] : known) {
    const auto it = all.find(name);
    if (it == all.end()) continue;
    const int64_t n = it->second.entry->elements();
    for (int64_t first = 0; first < n; first += kPiece)
      pieces.push_back({&name, &it->second, first, std::min(kPiece, n - first)});
  }
  std::vector<std::exception_ptr> failed(pieces.size());
  parallelFor(static_cast<int64_t>(pieces.size()), ctx, [&](int64_t i) {
    const Piece& p = pieces[static_cast<size_t>(i)];
    try {
      checkWeightValues(fileIn(files, p.at->file_name), *p.name, *p.at->file, *p.at->entry, p.first, p.count);
    } catch (...) {
      failed[static_cast<size_t>(i)] = std::current_exception();
    }
  });
  size_t piece = 0;
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
    for (; piece < pieces.size() && pieces[piece].name == &name; ++piece)
      if (failed[piece]) std::rethrow_exception(failed[piece]);
  }

  loadTokenizer(files, model);
  ctx.progress(1.0f);
  return m;
}

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
  nlohmann::json storage = nlohmann::json::array();
  for (const StorageSummary& s : info.storage)
    storage.push_back({{"dtype", s.dtype}, {"tensors", s.tensors}, {"parameters", s.parameters}, {"bytes", s.bytes}});
  j["storage"] = storage;
  j["bits_per_weight"] = info.bits_per_weight;
  j["label"] = c.label;
  j["causal"] = c.causal;
  j["kv_heads"] = c.kv_heads;
  j["head_dim"] = c.head_dim;
  if (!c.dtype.empty()) j["config_dtype"] = c.dtype;
  if (!c.activation.empty()) j["activation"] = c.activation;
  if (!c.blocks.empty()) j["blocks"] = c.blocks;
  if (c.uses_rope) {
    j["rope"] = c.rope.toJson();
    if (c.local_rope) j["rope_local"] = c.rope_local.toJson();
  }
  if (c.family == "llama" || c.family == "mistral" || c.family == "qwen2") {
    j["rms_norm_eps"] = c.rms_eps;
    j["qkv_bias"] = c.qkv_bias;
    j["tie_word_embeddings"] = c.tie_embeddings;
    j["sliding_window"] = c.sliding_window;
  }
  if (c.encoderDecoder()) {
    j["encoder_decoder"] = true;
    j["decoder_layers"] = c.decoder_layers;
    j["decoder_start_token_id"] = c.decoder_start;
  }
  if (c.relative_buckets > 0) {
    j["relative_attention_num_buckets"] = c.relative_buckets;
    j["relative_attention_max_distance"] = c.relative_max_distance;
  }
  if (!c.layer_window.empty()) j["layer_window"] = c.layer_window;
  if (c.score_scale > 0) j["score_scale"] = c.score_scale;
  if (c.attn_softcap > 0) j["attn_logit_softcapping"] = c.attn_softcap;
  if (c.final_softcap > 0) j["final_logit_softcapping"] = c.final_softcap;
  if (c.qk_norm) j["qk_norm"] = true;
  if (c.alibi) j["alibi"] = true;
  if (c.parallel_residual) j["parallel_residual"] = true;
  if (c.family == "bert") {
    j["type_vocab"] = c.type_vocab;
    j["lower_case"] = c.lower_case;
  }
  return j;
}

namespace {

// The positions ModelRunOptions::predict_at names, checked; all when empty.
std::vector<int64_t> predictionRows(const ModelRunOptions& o, int64_t L) {
  if (o.predict_at.empty()) {
    std::vector<int64_t> all(static_cast<size_t>(L));
    std::iota(all.begin(), all.end(), int64_t{0});
    return all;
  }
  std::vector<int64_t> rows;
  for (const int64_t i : o.predict_at) rows.push_back(checkPosition("--predict-at", i, L));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// The options with the maps decided (Auto: all when they fit in memory,
// else pooled; *note says why), the heads checked, and the run's memory
// checked: a run that will not fit is refused before it allocates, naming
// the length, the estimate and the memory available.
ModelRunOptions checkRunFits(const Model& m, int64_t L, const ModelRunOptions& options, size_t predict_rows,
                             std::string* note) {
  const ModelConfig& c = m.info.config;
  ModelRunOptions o = options;
  checkLayerHeads(o.maps.heads, c.layers, c.heads, "--maps");
  const double available = memoryForARun();
  const int64_t every = c.layers * c.heads;
  auto need = [&](int64_t kept) {
    return estimateRunMemory(m, L, kept, o.keep_projections, static_cast<int64_t>(predict_rows));
  };
  if (o.maps.mode == MapsChoice::Mode::Auto) {
    const RunMemory all = need(every);
    o.maps.mode = all.total() <= available ? MapsChoice::Mode::All : MapsChoice::Mode::Pooled;
    if (o.maps.mode == MapsChoice::Mode::Pooled)
      *note = "every map would take " + formatBytes(all.maps) + " and the pass " + formatBytes(all.total()) +
              ", more than the " + formatBytes(available) + " of memory available: the maps are pooled";
  }
  const int64_t kept = o.maps.mode == MapsChoice::Mode::All    ? (o.map_rows ? 0 : every)
                       : o.maps.mode == MapsChoice::Mode::Heads ? static_cast<int64_t>(o.maps.heads.size())
                                                                : 0;
  const RunMemory r = need(kept);
  if (r.total() > available) {
    std::string parts = "activations " + formatBytes(r.activations);
    if (r.kept > 0) parts += ", q, k, v for the views " + formatBytes(r.kept);
    if (r.maps > 0) parts += ", maps " + formatBytes(r.maps);
    if (r.logits > 0) parts += ", LM head rows " + formatBytes(r.logits);
    throw InputError("text: " + std::to_string(L) + " tokens would need about " + formatBytes(r.total()) +
                     " beyond the " + formatBytes(r.weights) + " of weights (" + parts + "), more than the " +
                     formatBytes(available) + " of memory available; " +
                     (kept > 0 || r.logits > 0 ? "keep fewer maps (--maps pooled), predict fewer positions (--predict-at last) or "
                                               : "") +
                     "shorten the text");
  }
  return o;
}

}  // namespace

// [SECTION] Runs on text

ModelRun runModelIds(const Model& m, const std::vector<int32_t>& ids, const ModelRunOptions& options,
                     const RunContext& ctx) {
  checkIds(m, ids, 0);
  const int64_t L = static_cast<int64_t>(ids.size());
  const std::vector<int64_t> rows = predictionRows(options, L);
  std::string note;
  const ModelRunOptions o = checkRunFits(m, L, options, m.predicts && options.top_k > 0 ? rows.size() : 0, &note);
  PassThreads threads = passThreads(m, L, ctx);
  RunContext pass_ctx = ctx;
  pass_ctx.pass_threads = &threads;
  const auto t0 = std::chrono::steady_clock::now();
  ModelRun run = runForward(m, ids, nullptr, pass_ctx, o);
  run.maps_note = note;
  threads.between();  // the LM head likewise
  if (m.predicts && options.top_k > 0) run.top_k = predictTokens(m, run.hidden, rows, options.top_k, ctx, &run.flops);
  run.compute_seconds = secondsSince(t0);
  ctx.progress(1.0f);
  return run;
}

ModelRun runModel(const Model& m, const std::string& text, const ModelRunOptions& options, const RunContext& ctx) {
  bool truncated = false;
  const std::vector<int32_t> ids = promptIds(m, text, m.info.config.positions, options.truncate, &truncated);
  ModelRun run = runModelIds(m, ids, options, ctx);
  run.truncated = truncated;
  return run;
}

ModelRun inductionRun(const Model& m, const RunContext& ctx) {
  // Two copies of t tokens, and room for [CLS] and [SEP] around them (bidirectional models).
  const int64_t t = std::max<int64_t>(2, std::min(kInductionTokens, (modelInfo(m).config.positions - 2) / 2));
  ModelRunOptions maps_only;  // the induction score reads the maps alone
  maps_only.top_k = 0;
  maps_only.maps.mode = MapsChoice::Mode::All;
  maps_only.keep_projections = false;
  return runModelIds(m, repeatedRandomIds(m, t, kInductionSeed), maps_only, ctx);
}

}  // namespace attn
