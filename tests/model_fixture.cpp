#include "tests/model_fixture.h"

#include "engine/attention_math.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace fs = std::filesystem;

namespace attn::test {

namespace {

void writeText(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

float roundTo(DType t, float v) {
  if (t == DType::F16) return static_cast<float>(Eigen::half(v));
  if (t == DType::BF16) return static_cast<float>(Eigen::bfloat16(v));
  return v;
}

}  // namespace

const std::vector<float>& TinyModel::w(const std::string& name) const {
  const auto it = weights.find(options.prefix + name);
  return it != weights.end() ? it->second : weights.at(name);
}
bool TinyModel::has(const std::string& name) const { return weights.count(options.prefix + name) || weights.count(name); }

void writeWeights(const TinyModel& m) {
  std::vector<std::vector<TensorToWrite>> shards(static_cast<size_t>(m.options.shards));
  nlohmann::json map = nlohmann::json::object();
  size_t i = 0;
  for (const auto& [name, values] : m.weights) {
    const size_t s = i++ % shards.size();
    shards[s].push_back(tensorFromValues(name, m.options.dtype, m.shapes.at(name), values));
    char file[64];
    std::snprintf(file, sizeof file, "model-%05zu-of-%05zu.safetensors", s + 1, shards.size());
    map[name] = file;
  }
  if (shards.size() == 1) {
    writeSafetensors(m.dir / "model.safetensors", shards[0], {{"format", "pt"}});
    return;
  }
  for (size_t s = 0; s < shards.size(); ++s) {
    char file[64];
    std::snprintf(file, sizeof file, "model-%05zu-of-%05zu.safetensors", s + 1, shards.size());
    writeSafetensors(m.dir / file, shards[s]);
  }
  writeText(m.dir / "model.safetensors.index.json", nlohmann::json{{"metadata", {}}, {"weight_map", map}}.dump(1));
}

void setConfigField(const TinyModel& m, const std::string& key, const std::string& json_value) {
  std::ifstream in(m.dir / "config.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j[key] = nlohmann::json::parse(json_value);
  writeText(m.dir / "config.json", j.dump(1));
}

TinyModel writeTinyModel(const fs::path& dir, const TinyOptions& o) {
  fs::create_directories(dir);
  TinyModel m;
  m.dir = dir;
  m.options = o;
  ModelConfig& c = m.config;
  c.arch = o.arch;
  c.layers = 2, c.heads = 2, c.d_model = 8, c.positions = 16;
  int stream = 0;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float scale, float offset = 0.0f) {
    int64_t n = 1;
    for (const int64_t s : shape) n *= s;
    const Mat r = randomNormal(1, n, o.seed, "fixture." + std::to_string(stream++), scale);
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = roundTo(o.dtype, offset + r(0, k));
    m.weights[name] = std::move(v);
    m.shapes[name] = std::move(shape);
  };
  const int64_t d = c.d_model;
  const std::string& P = o.prefix;
  if (o.arch == Architecture::Gpt2) {
    c.arch_name = "GPT2LMHeadModel";
    c.d_ff = 4 * d;
    c.ln_eps = 1e-5;
    // Vocabulary: the 256 byte symbols, then the merges' results.
    const std::array<std::string, 256> bytes = gpt2ByteSymbols();
    nlohmann::json vocab = nlohmann::json::object();
    for (size_t b = 0; b < bytes.size(); ++b) vocab[bytes[b]] = b;
    const std::vector<std::pair<std::string, std::string>> merges = {{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}};
    std::string merges_txt = "#version: 0.2\n";
    for (const auto& [a, b] : merges) {
      const size_t id = vocab.size();
      vocab[a + b] = id;
      merges_txt += a + " " + b + "\n";
    }
    const size_t eot = vocab.size();
    vocab["<|endoftext|>"] = eot;
    c.vocab = static_cast<int64_t>(vocab.size());
    writeText(dir / "vocab.json", vocab.dump());
    writeText(dir / "merges.txt", merges_txt);
    writeText(dir / "config.json", nlohmann::json{{"architectures", {c.arch_name}}, {"model_type", "gpt2"},
                                                  {"n_layer", c.layers}, {"n_head", c.heads}, {"n_embd", d},
                                                  {"n_positions", c.positions}, {"n_ctx", c.positions},
                                                  {"vocab_size", c.vocab}, {"n_inner", nullptr},
                                                  {"activation_function", "gelu_new"},
                                                  {"layer_norm_epsilon", c.ln_eps}}
                                           .dump(1));
    add(P + "wte.weight", {c.vocab, d}, 0.5f);
    add(P + "wpe.weight", {c.positions, d}, 0.3f);
    for (int64_t l = 0; l < c.layers; ++l) {
      const std::string h = P + "h." + std::to_string(l) + ".";
      add(h + "ln_1.weight", {d}, 0.1f, 1.0f), add(h + "ln_1.bias", {d}, 0.1f);
      add(h + "attn.c_attn.weight", {d, 3 * d}, 0.6f), add(h + "attn.c_attn.bias", {3 * d}, 0.1f);
      add(h + "attn.c_proj.weight", {d, d}, 0.3f), add(h + "attn.c_proj.bias", {d}, 0.1f);
      add(h + "ln_2.weight", {d}, 0.1f, 1.0f), add(h + "ln_2.bias", {d}, 0.1f);
      add(h + "mlp.c_fc.weight", {d, 4 * d}, 0.3f), add(h + "mlp.c_fc.bias", {4 * d}, 0.1f);
      add(h + "mlp.c_proj.weight", {4 * d, d}, 0.2f), add(h + "mlp.c_proj.bias", {d}, 0.1f);
    }
    add(P + "ln_f.weight", {d}, 0.1f, 1.0f), add(P + "ln_f.bias", {d}, 0.1f);
    if (o.untied_head) add("lm_head.weight", {c.vocab, d}, 0.5f);
  } else {
    c.arch_name = "BertForMaskedLM";
    c.d_ff = 3 * d;
    c.type_vocab = 2;
    c.ln_eps = 1e-12;
    const std::vector<std::string> words = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat",  "sat",
                                            "on",    "mat",   "a",     "dog",   "ran",    ".",   ",",    "##s",
                                            "big",   "red",   "hat",   "in",    "it",     "is",  "was",  "##ing"};
    std::string vocab_txt;
    for (const std::string& w : words) vocab_txt += w + "\n";
    c.vocab = static_cast<int64_t>(words.size());
    writeText(dir / "vocab.txt", vocab_txt);
    writeText(dir / "tokenizer_config.json", R"({"do_lower_case": true})");
    writeText(dir / "config.json", nlohmann::json{{"architectures", {c.arch_name}}, {"model_type", "bert"},
                                                  {"num_hidden_layers", c.layers}, {"num_attention_heads", c.heads},
                                                  {"hidden_size", d}, {"intermediate_size", c.d_ff},
                                                  {"max_position_embeddings", c.positions}, {"vocab_size", c.vocab},
                                                  {"type_vocab_size", c.type_vocab}, {"hidden_act", "gelu"},
                                                  {"layer_norm_eps", c.ln_eps}}
                                           .dump(1));
    add(P + "embeddings.word_embeddings.weight", {c.vocab, d}, 0.5f);
    add(P + "embeddings.position_embeddings.weight", {c.positions, d}, 0.3f);
    add(P + "embeddings.token_type_embeddings.weight", {c.type_vocab, d}, 0.3f);
    add(P + "embeddings.LayerNorm.weight", {d}, 0.1f, 1.0f), add(P + "embeddings.LayerNorm.bias", {d}, 0.1f);
    for (int64_t l = 0; l < c.layers; ++l) {
      const std::string h = P + "encoder.layer." + std::to_string(l) + ".";
      for (const char* p : {"attention.self.query", "attention.self.key", "attention.self.value"})
        add(h + p + ".weight", {d, d}, 0.6f), add(h + p + ".bias", {d}, 0.1f);
      add(h + "attention.output.dense.weight", {d, d}, 0.3f), add(h + "attention.output.dense.bias", {d}, 0.1f);
      add(h + "attention.output.LayerNorm.weight", {d}, 0.1f, 1.0f);
      add(h + "attention.output.LayerNorm.bias", {d}, 0.1f);
      add(h + "intermediate.dense.weight", {c.d_ff, d}, 0.3f), add(h + "intermediate.dense.bias", {c.d_ff}, 0.1f);
      add(h + "output.dense.weight", {d, c.d_ff}, 0.3f), add(h + "output.dense.bias", {d}, 0.1f);
      add(h + "output.LayerNorm.weight", {d}, 0.1f, 1.0f), add(h + "output.LayerNorm.bias", {d}, 0.1f);
    }
    add(P + "pooler.dense.weight", {d, d}, 0.3f), add(P + "pooler.dense.bias", {d}, 0.1f);
    if (o.mlm) {
      add("cls.predictions.transform.dense.weight", {d, d}, 0.4f);
      add("cls.predictions.transform.dense.bias", {d}, 0.1f);
      add("cls.predictions.transform.LayerNorm.weight", {d}, 0.1f, 1.0f);
      add("cls.predictions.transform.LayerNorm.bias", {d}, 0.1f);
      add("cls.predictions.bias", {c.vocab}, 0.2f);
      if (o.untied_head) add("cls.predictions.decoder.weight", {c.vocab, d}, 0.5f);
    }
  }
  writeWeights(m);
  return m;
}

}  // namespace attn::test
