// GPT-2 and BERT in Eigen, with the Hugging Face tensor names and semantics.
//
// [SECTION] Files on disk
// [SECTION] config.json
// [SECTION] Tensors: what each architecture needs, with shapes from the config
// [SECTION] Loading
// [SECTION] Forward pass: shared pieces (LayerNorm, gelu, attention, top-k)
// [SECTION] GPT-2 forward
// [SECTION] BERT forward
// [SECTION] Runs on text
#include "engine/model/model.h"

#include "engine/attention_math.h"
#include "engine/gemm.h"
#include "engine/parallel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <numbers>
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
  } else {
    throw InputError(where + ": architecture '" + c.arch_name +
                     "' is not supported (expected GPT2LMHeadModel, GPT2Model, BertModel or BertForMaskedLM)");
  }
  // A config names its family twice: the two must agree, or the tensors
  // were saved for one model and described as another.
  const std::string family = c.arch == Architecture::Gpt2 ? "gpt2" : "bert";
  if (const std::string type = r.text("model_type", family); archs && type != family)
    throw InputError(where + ": field 'model_type' is '" + type + "', but 'architectures' names " + c.arch_name +
                     " (expected model_type '" + family + "')");
  if (c.d_model % c.heads != 0)
    throw InputError(where + ": the heads (" + std::to_string(c.heads) + ") must divide the model width (" +
                     std::to_string(c.d_model) + ")");
  return c;
}

namespace {

// [SECTION] Tensors: what each architecture needs, with shapes from the config
// A weight as a row-major view: into the mapped file (F32) or a converted copy.
struct Weight {
  const float* data = nullptr;
  int64_t rows = 0, cols = 0;
  Eigen::Map<const Mat> mat() const { return {data, rows, cols}; }
  Eigen::Map<const RowVec> vec() const { return {data, rows * cols}; }
};

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
// "h.N.attn.bias" / "h.N.attn.masked_bias", BERT's "embeddings.position_ids".
bool isBuffer(const ModelConfig& c, const std::string& name) {
  if (c.arch == Architecture::Bert) return name == "embeddings.position_ids";
  if (name.rfind("h.", 0) != 0) return false;
  const size_t dot = name.find('.', 2);
  if (dot == std::string::npos) return false;
  const std::string rest = name.substr(dot + 1);
  return rest == "attn.bias" || rest == "attn.masked_bias";
}

struct Gpt2Layer {
  Weight ln1_w, ln1_b, attn_w, attn_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, mproj_w, mproj_b;
};
struct BertLayer {
  Weight q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b, ln1_w, ln1_b, i_w, i_b, out_w, out_b, ln2_w, ln2_b;
};

}  // namespace

// [SECTION] Loading
class Model {
 public:
  ModelInfo info;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<std::shared_ptr<const SafetensorsFile>> files;  // keep the maps alive
  std::deque<std::vector<float>> converted;                    // F16/BF16 (or unaligned F32) copies
  int32_t cls = -1, sep = -1;                                  // BERT specials

  // GPT-2
  Weight wte, wpe, ln_f_w, ln_f_b, lm_head;
  std::vector<Gpt2Layer> gpt2;
  // BERT
  Weight word, position, token_type, emb_ln_w, emb_ln_b;
  std::vector<BertLayer> bert;
  bool mlm = false;
  Weight mlm_dense_w, mlm_dense_b, mlm_ln_w, mlm_ln_b, mlm_bias, mlm_decoder;
};

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

void loadTokenizer(const ModelFiles& files, Model& m) {
  const ModelConfig& c = m.info.config;
  auto need = [&](const std::string& name, const std::string& why) {
    std::optional<std::string> t = files.read_text(name);
    if (!t) throw InputError(fileIn(files, name) + ": missing (" + why + ")");
    return *t;
  };
  if (c.arch == Architecture::Gpt2) {
    const std::string why = "GPT-2's tokenizer needs vocab.json and merges.txt beside config.json";
    const std::string vocab = need("vocab.json", why), merges = need("merges.txt", why);
    m.tokenizer = makeGpt2Tokenizer(vocab, merges, fileIn(files, "vocab.json"), fileIn(files, "merges.txt"));
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
    throw InputError(fileIn(files, c.arch == Architecture::Gpt2 ? "vocab.json" : "vocab.txt") + ": " +
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

  // The checkpoint's prefix: GPT2LMHeadModel saves "transformer.", BertForMaskedLM "bert.".
  const std::string probe = c.arch == Architecture::Gpt2 ? "wte.weight" : "embeddings.word_embeddings.weight";
  const std::string prefix_name = c.arch == Architecture::Gpt2 ? "transformer." : "bert.";
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
    return {p, s[0], s.size() > 1 ? s[1] : 1};
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
                      {"family", c.arch == Architecture::Gpt2 ? "gpt2" : "bert"},
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
  if (c.arch == Architecture::Bert) {
    j["type_vocab"] = c.type_vocab;
    j["lower_case"] = c.lower_case;
  }
  return j;
}

// [SECTION] Forward pass: shared pieces (LayerNorm, gelu, attention, top-k)
namespace {

// y = LN(x) · γ + β, per row (LN: attention_math.h layerNormRows)     [L, d]
void layerNorm(Mat& x, const Weight& gamma, const Weight& beta, double eps) {
  x = layerNormRows(x, static_cast<float>(eps));
  x.array().rowwise() *= gamma.vec().array();
  x.rowwise() += beta.vec();
}

// GPT-2's gelu_new: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
void geluTanh(Mat& x) {
  const float c = std::sqrt(2.0f / std::numbers::pi_v<float>);
  x.array() = 0.5f * x.array() * (1.0f + (c * (x.array() + 0.044715f * x.array().cube())).tanh());
}

// BERT's gelu: 0.5·x·(1 + erf(x / √2))
void geluErf(Mat& x) {
  x = x.unaryExpr([](float v) { return 0.5f * v * (1.0f + std::erf(v / std::numbers::sqrt2_v<float>)); });
}

// y = x W + b (Conv1D, W [in, out]) or y = x Wᵀ + b (nn.Linear, W [out, in])     [L, out]
// Through engine/gemm.h (OpenBLAS): ~1.5× Eigen's GEMM on these
// short-and-wide products (128 tokens × 768 → 3072).
void linear(const Mat& x, const Weight& w, const Weight* b, bool transposed, Mat& y) {
  y.resize(x.rows(), transposed ? w.rows : w.cols);  // shapes were checked against the config at load
  if (b) y.rowwise() = b->vec();
  gemm(x, w.mat(), transposed, 1.0f, b ? 1.0f : 0.0f, y);
}
void linear(const Mat& x, const Weight& w, const Weight& b, bool transposed, Mat& y) {
  linear(x, w, &b, transposed, y);
}

double linearFlops(int64_t rows, const Weight& w) { return 2.0 * static_cast<double>(rows) * w.rows * w.cols; }

// Every head of one layer: A_h = softmax(Q_h K_hᵀ / √d_head + mask), head_h = A_h V_h,
// captured into run.attention[layer]; `concat` [L, d] = Concat(head_1 … head_H).
void attentionLayer(const Mat& q, const Mat& k, const Mat& v, const Mat& mask, int64_t heads, const RunContext& ctx,
                    std::vector<Mat>& attention, Mat& concat) {
  const int64_t L = q.rows(), dh = q.cols() / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  concat.resize(L, q.cols());
  attention.resize(static_cast<size_t>(heads));
  parallelFor(heads, ctx, [&](int64_t h) {
    Mat scores;  // Q_h K_hᵀ / √d_head    [L, L]
    attendHead(q.middleCols(h * dh, dh), k.middleCols(h * dh, dh), v.middleCols(h * dh, dh), scale, mask, scores,
               attention[static_cast<size_t>(h)], concat.middleCols(h * dh, dh));
  });
}

// A token as shown: the tokenizer's string, or "#id" for ids past its
// vocabulary (a model may have more embeddings than tokens).
std::string tokenText(const Tokenizer& tok, int32_t id) {
  if (id < tok.vocabSize()) return tok.display(id);
  std::string s = "#";  // appended piecewise (GCC 12 misreports "#" + string as -Wrestrict)
  s += std::to_string(id);
  return s;
}

// Top-k of softmax(logits) for one row, by a single pass that keeps the k
// best in order (a partial selection: O(V·k) with k ≤ a few, no V-sized sort
// or index array).                                                 row [V]
std::vector<Prediction> topKOfRow(const Eigen::Ref<const RowVec>& row, int k, const Tokenizer& tok) {
  const int64_t V = row.size();
  const int kk = static_cast<int>(std::min<int64_t>(std::max(k, 0), V));
  if (kk == 0) return {};
  const float mx = row.maxCoeff();
  const double z = (row.array() - mx).exp().cast<double>().sum();  // softmax denominator
  std::vector<int32_t> best;  // ids, best first; ties go to the smaller id
  best.reserve(static_cast<size_t>(kk) + 1);
  for (int32_t id = 0; id < V; ++id) {
    if (static_cast<int>(best.size()) == kk && row(id) <= row(best.back())) continue;
    auto at = std::find_if(best.begin(), best.end(), [&](int32_t b) { return row(id) > row(b); });
    best.insert(at, id);
    if (static_cast<int>(best.size()) > kk) best.pop_back();
  }
  std::vector<Prediction> out;
  for (const int32_t id : best)
    out.push_back({id, tokenText(tok, id), static_cast<float>(std::exp(static_cast<double>(row(id) - mx)) / z)});
  return out;
}

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

// [SECTION] GPT-2 forward
// Radford et al. 2019: pre-LN blocks, learned positions, causal.
void gpt2Forward(const Model& m, ModelRun& run, const ModelRunOptions& o, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const int64_t L = static_cast<int64_t>(run.ids.size()), d = c.d_model;
  // x = wte[ids] + wpe[0 … L)                                      [L, d]
  Mat x(L, d);
  for (int64_t i = 0; i < L; ++i) x.row(i) = m.wte.mat().row(run.ids[static_cast<size_t>(i)]) + m.wpe.mat().row(i);
  const Mat mask = causalMask(L, L);
  Mat a, qkv, concat, proj, f, f2;
  double flops = 0;
  for (int64_t l = 0; l < c.layers; ++l) {
    const Gpt2Layer& w = m.gpt2[static_cast<size_t>(l)];
    // a = LN(x; ln_1)                                              [L, d]
    a = x;
    layerNorm(a, w.ln1_w, w.ln1_b, c.ln_eps);
    // qkv = a W_attn + b_attn = [q | k | v]                       [L, 3d]
    linear(a, w.attn_w, w.attn_b, false, qkv);
    run.q[l] = qkv.leftCols(d);
    run.k[l] = qkv.middleCols(d, d);
    run.v[l] = qkv.rightCols(d);
    // head_h = softmax(q_h k_hᵀ / √d_head + causal) v_h          [L, d_head] × H
    attentionLayer(run.q[l], run.k[l], run.v[l], mask, c.heads, ctx, run.attention[l], concat);
    // x = x + Concat(head_1 … head_H) W_proj + b_proj             [L, d]
    linear(concat, w.proj_w, w.proj_b, false, proj);
    x += proj;
    // x = x + gelu(LN(x; ln_2) W_fc + b_fc) W_mproj + b_mproj     [L, d_ff] → [L, d]
    a = x;
    layerNorm(a, w.ln2_w, w.ln2_b, c.ln_eps);
    linear(a, w.fc_w, w.fc_b, false, f);
    geluTanh(f);
    linear(f, w.mproj_w, w.mproj_b, false, f2);
    x += f2;
    flops += linearFlops(L, w.attn_w) + linearFlops(L, w.proj_w) + linearFlops(L, w.fc_w) +
             linearFlops(L, w.mproj_w) + 4.0 * static_cast<double>(L) * L * d;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  // hidden = LN(x; ln_f)                                           [L, d]
  layerNorm(x, m.ln_f_w, m.ln_f_b, c.ln_eps);
  run.hidden = std::move(x);
  if (o.top_k > 0) run.top_k = predictTokens(m, run.hidden, predictionRows(o, L), o.top_k, ctx, &flops);
  run.flops = flops;
}

// [SECTION] BERT forward
// Devlin et al. 2019: post-LN blocks, learned positions and token types, bidirectional.
void bertForward(const Model& m, ModelRun& run, const ModelRunOptions& o, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const int64_t L = static_cast<int64_t>(run.ids.size()), d = c.d_model;
  // x = LN(word[ids] + position[0 … L) + token_type[0])            [L, d]
  Mat x(L, d);
  for (int64_t i = 0; i < L; ++i)
    x.row(i) = m.word.mat().row(run.ids[static_cast<size_t>(i)]) + m.position.mat().row(i) + m.token_type.mat().row(0);
  layerNorm(x, m.emb_ln_w, m.emb_ln_b, c.ln_eps);
  // One unpadded sequence: every key is allowed (the padding mask is all ones).
  const Mat mask;
  Mat concat, proj, f, f2;
  double flops = 0;
  for (int64_t l = 0; l < c.layers; ++l) {
    const BertLayer& w = m.bert[static_cast<size_t>(l)];
    // q = x W_qᵀ + b_q, k = x W_kᵀ + b_k, v = x W_vᵀ + b_v        [L, d] each
    linear(x, w.q_w, w.q_b, true, run.q[l]);
    linear(x, w.k_w, w.k_b, true, run.k[l]);
    linear(x, w.v_w, w.v_b, true, run.v[l]);
    // head_h = softmax(q_h k_hᵀ / √d_head) v_h                   [L, d_head] × H
    attentionLayer(run.q[l], run.k[l], run.v[l], mask, c.heads, ctx, run.attention[l], concat);
    // x = LN(x + Concat(head_1 … head_H) W_oᵀ + b_o)               [L, d]
    linear(concat, w.o_w, w.o_b, true, proj);
    x += proj;
    layerNorm(x, w.ln1_w, w.ln1_b, c.ln_eps);
    // x = LN(x + gelu(x W_iᵀ + b_i) W_outᵀ + b_out)               [L, d_ff] → [L, d]
    linear(x, w.i_w, w.i_b, true, f);
    geluErf(f);
    linear(f, w.out_w, w.out_b, true, f2);
    x += f2;
    layerNorm(x, w.ln2_w, w.ln2_b, c.ln_eps);
    flops += 3 * linearFlops(L, w.q_w) + linearFlops(L, w.o_w) + linearFlops(L, w.i_w) + linearFlops(L, w.out_w) +
             4.0 * static_cast<double>(L) * L * d;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  run.hidden = std::move(x);
  if (m.mlm && o.top_k > 0) run.top_k = predictTokens(m, run.hidden, predictionRows(o, L), o.top_k, ctx, &flops);
  run.flops = flops;
}

std::string archLabel(const ModelConfig& c) { return c.arch == Architecture::Gpt2 ? "GPT-2" : "BERT"; }

}  // namespace

// [SECTION] Runs on text
ModelRun runModelIds(const Model& m, const std::vector<int32_t>& ids, const ModelRunOptions& options,
                     const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const int64_t L = static_cast<int64_t>(ids.size());
  if (L == 0) throw InputError("text: no tokens to run the model on");
  if (L > c.positions)
    throw TooLongError("text: " + std::to_string(L) + " tokens, but " + archLabel(c) + " has only " +
                           std::to_string(c.positions) + " positions",
                       L, c.positions);
  for (const int32_t id : ids)
    if (id < 0 || id >= c.vocab)
      throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(c.vocab) +
                       ")");
  // About 2 FLOP per parameter per token: below half a GFLOP (~10 ms on one
  // core, the default model's whole range) the pass runs on one thread, as
  // waking a second costs more than it saves; above, on the cores free now.
  constexpr double kSerialFlops = 5e8;
  const bool small = 2.0 * static_cast<double>(L) * static_cast<double>(m.info.parameters) < kSerialFlops;
  const ThreadScope threads(small ? 1 : threadsAvailable());
  const auto t0 = std::chrono::steady_clock::now();
  ModelRun run;
  run.ids = ids;
  run.layers = c.layers;
  run.heads = c.heads;
  run.d_head = c.headDim();
  run.causal = c.arch == Architecture::Gpt2;
  run.attention.resize(static_cast<size_t>(c.layers));
  run.q.resize(static_cast<size_t>(c.layers));
  run.k.resize(static_cast<size_t>(c.layers));
  run.v.resize(static_cast<size_t>(c.layers));
  for (const int32_t id : ids)
    run.tokens.push_back(tokenText(*m.tokenizer, id));
  if (c.arch == Architecture::Gpt2) gpt2Forward(m, run, options, ctx);
  else bertForward(m, run, options, ctx);
  run.compute_seconds = seconds(t0);
  run.threads = omp_get_max_threads();
  ctx.progress(1.0f);
  return run;
}

std::vector<std::vector<Prediction>> predictTokens(const Model& m, const Mat& hidden,
                                                   const std::vector<int64_t>& positions, int k,
                                                   const RunContext& ctx, double* flops) {
  const ModelConfig& c = m.info.config;
  const int64_t L = hidden.rows(), P = static_cast<int64_t>(positions.size());
  std::vector<std::vector<Prediction>> out(static_cast<size_t>(L));
  const bool gpt2 = c.arch == Architecture::Gpt2;
  if (k <= 0 || P == 0 || (!gpt2 && !m.mlm)) return out;
  // h = hidden[positions]                                          [P, d]
  Mat h(P, hidden.cols());
  for (int64_t p = 0; p < P; ++p) h.row(p) = hidden.row(positions[static_cast<size_t>(p)]);
  Mat logits;
  double f = 0;
  if (gpt2) {
    // logits = h lm_headᵀ (tied to wte)                            [P, V]: row of position i predicts token i + 1
    linear(h, m.lm_head, nullptr, true, logits);
    f = linearFlops(P, m.lm_head);
  } else {
    // t = LN(gelu(h W_tᵀ + b_t)); logits = t decoderᵀ + bias        [P, V]: row of position i predicts token i
    Mat t;
    linear(h, m.mlm_dense_w, m.mlm_dense_b, true, t);
    geluErf(t);
    layerNorm(t, m.mlm_ln_w, m.mlm_ln_b, c.ln_eps);
    linear(t, m.mlm_decoder, m.mlm_bias, true, logits);
    f = linearFlops(P, m.mlm_dense_w) + linearFlops(P, m.mlm_decoder);
  }
  parallelFor(P, ctx, [&](int64_t p) {
    out[static_cast<size_t>(positions[static_cast<size_t>(p)])] = topKOfRow(logits.row(p), k, *m.tokenizer);
  });
  if (flops) *flops += f;
  return out;
}

ModelRun runModel(const Model& m, const std::string& text, const ModelRunOptions& options, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError("text: empty (type some text for the model to read)");
  std::vector<int32_t> ids = m.tokenizer->encode(text);
  if (ids.empty()) throw InputError("text: no tokens after tokenizing (type some words for the model to read)");
  const bool bert = c.arch == Architecture::Bert;
  const int64_t limit = c.positions - (bert ? 2 : 0);  // BERT adds [CLS] and [SEP]
  const int64_t n = static_cast<int64_t>(ids.size());
  bool truncated = false;
  if (n > limit) {
    if (!options.truncate)
      throw TooLongError("text: " + std::to_string(n) + " tokens" + (bert ? " (plus [CLS] and [SEP])" : "") +
                             ", but " + archLabel(c) + " has only " + std::to_string(c.positions) +
                             " positions; shorten the text, or truncate it to the first " + std::to_string(limit) +
                             " tokens (--truncate on the command line)",
                         n, limit);
    ids.resize(static_cast<size_t>(limit));
    truncated = true;
  }
  if (bert) {
    ids.insert(ids.begin(), m.cls);
    ids.push_back(m.sep);
  }
  ModelRun run = runModelIds(m, ids, options, ctx);
  run.truncated = truncated;
  return run;
}

}  // namespace attn
