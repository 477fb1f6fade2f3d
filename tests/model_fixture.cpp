#include "tests/model_fixture.h"

#include "engine/attention_math.h"
#include "engine/model/kinds/generate.h"
#include "engine/npy.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
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

// tokenizer.json: byte-level BPE with the GPT-2 fixture's merges, <s> and </s>
// (and `specials`) as added tokens. Returns the vocabulary size.
int64_t writeByteLevelTokenizer(const fs::path& dir, const std::vector<std::string>& specials) {
  const std::array<std::string, 256> bytes = gpt2ByteSymbols();
  nlohmann::json vocab = nlohmann::json::object();
  for (size_t b = 0; b < bytes.size(); ++b) vocab[bytes[b]] = b;
  nlohmann::json merges = nlohmann::json::array();
  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}}) {
    const size_t id = vocab.size();
    vocab[a + b] = id;
    merges.push_back(a + " " + b);
  }
  auto added = [](int64_t id, const std::string& text) {
    return nlohmann::json{{"id", id}, {"content", text}, {"single_word", false}, {"lstrip", false},
                          {"rstrip", false}, {"normalized", false}, {"special", true}};
  };
  nlohmann::json added_tokens = nlohmann::json::array();
  std::vector<std::string> all = {"<s>", "</s>"};
  all.insert(all.end(), specials.begin(), specials.end());
  for (const std::string& t : all) {
    const int64_t id = static_cast<int64_t>(vocab.size());
    vocab[t] = id;
    added_tokens.push_back(added(id, t));
  }
  const nlohmann::json tokenizer = {
      {"version", "1.0"},
      {"added_tokens", added_tokens},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model", {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
                 {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false},
                 {"ignore_merges", false}, {"vocab", vocab}, {"merges", merges}}}};
  writeText(dir / "tokenizer.json", tokenizer.dump(1));
  return static_cast<int64_t>(vocab.size());
}

// Seeded N(offset, scale²) values for tensor number `stream`, rounded to the dtype.
std::vector<float> randomValues(const TinyOptions& o, int stream, int64_t n, float scale, float offset) {
  const Mat r = randomNormal(1, n, o.seed, "fixture." + std::to_string(stream), scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = roundTo(o.dtype, offset + r(0, k));
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
  c.layers = 2, c.heads = 2, c.kv_heads = 2, c.d_model = o.arch == Fixture::Llama ? 16 : 8, c.positions = 16;
  c.head_dim = c.d_model / c.heads;
  int stream = 0;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float scale, float offset = 0.0f) {
    int64_t n = 1;
    for (const int64_t s : shape) n *= s;
    m.weights[name] = randomValues(o, stream++, n, scale, offset);
    m.shapes[name] = std::move(shape);
  };
  const int64_t d = c.d_model;
  const std::string& P = o.prefix;
  if (o.arch == Fixture::Gpt2) {
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
  } else if (o.arch == Fixture::Llama) {
    c.family = o.family;
    c.arch_name = o.family == "mistral" ? "MistralForCausalLM" : o.family == "qwen2" ? "Qwen2ForCausalLM" : "LlamaForCausalLM";
    c.heads = 4, c.kv_heads = o.kv_heads, c.d_model = d, c.head_dim = 4, c.d_ff = 24, c.positions = 32;
    c.rms_eps = 1e-5, c.uses_rope = true, c.rope.theta = o.rope_theta;
    c.qkv_bias = o.family == "qwen2", c.tie_embeddings = o.tied, c.sliding_window = o.sliding_window;
    const int64_t bos = 259, eos = 260;
    c.vocab = writeByteLevelTokenizer(dir, {});
    writeText(dir / "tokenizer_config.json",
              R"({"add_bos_token": true, "add_eos_token": false, "bos_token": "<s>", "eos_token": "</s>"})");
    nlohmann::json config = {{"architectures", {c.arch_name}}, {"model_type", c.family},
                             {"num_hidden_layers", c.layers}, {"num_attention_heads", c.heads},
                             {"num_key_value_heads", c.kv_heads}, {"hidden_size", d},
                             {"intermediate_size", c.d_ff}, {"max_position_embeddings", c.positions},
                             {"vocab_size", c.vocab}, {"hidden_act", "silu"}, {"rms_norm_eps", c.rms_eps},
                             {"tie_word_embeddings", c.tie_embeddings},
                             {"bos_token_id", bos}, {"eos_token_id", eos}};
    if (o.family == "mistral") {
      config["sliding_window"] = o.sliding_window > 0 ? nlohmann::json(o.sliding_window) : nlohmann::json();
      if (o.sliding_window > 0) c.layer_window.assign(static_cast<size_t>(c.layers), o.sliding_window);
    }
    if (o.family == "qwen2") {
      // Qwen2Config: sliding_window only with use_sliding_window (transformers 5 saves null otherwise);
      // layer l is "sliding_attention" when that window is set and l >= max_window_layers.
      const bool use = o.sliding_window > 0;
      config["use_sliding_window"] = use;
      config["sliding_window"] = use ? nlohmann::json(o.sliding_window) : o.transformers5 ? nlohmann::json() : nlohmann::json(4096);
      config["max_window_layers"] = o.max_window_layers;
      nlohmann::json types = nlohmann::json::array();
      for (int64_t l = 0; l < c.layers; ++l) {
        const bool sliding = use && l >= o.max_window_layers;
        types.push_back(sliding ? "sliding_attention" : "full_attention");
        c.layer_window.push_back(sliding ? o.sliding_window : 0);
      }
      if (o.transformers5) config["layer_types"] = types;
      if (std::count(c.layer_window.begin(), c.layer_window.end(), 0) == c.layers) c.layer_window.clear(), c.sliding_window = 0;
    }
    nlohmann::json rope = {{"rope_type", "default"}, {"rope_theta", o.rope_theta}};
    if (o.llama3_scaling) {
      // The tiny head's wavelengths 2π and 2π·50^½ ≈ 44 fall below 64/4 (kept) and between 64/4 and 64/1 (blended).
      rope = {{"rope_type", "llama3"}, {"rope_theta", o.rope_theta}, {"factor", 8.0}, {"low_freq_factor", 1.0},
              {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 64}};
      c.rope.type = "llama3", c.rope.factor = 8, c.rope.low_freq = 1, c.rope.high_freq = 4, c.rope.original_positions = 64;
    }
    if (o.transformers5) {
      config["rope_parameters"] = rope;
      config["dtype"] = "float32";
    } else {
      config["rope_theta"] = o.rope_theta;
      config["torch_dtype"] = "float32";
      if (o.llama3_scaling) {
        rope.erase("rope_theta");
        config["rope_scaling"] = rope;
      }
    }
    writeText(dir / "config.json", config.dump(1));
    const int64_t qd = c.heads * c.head_dim, kvd = c.kv_heads * c.head_dim;
    add(P + "embed_tokens.weight", {c.vocab, d}, 0.5f);
    for (int64_t l = 0; l < c.layers; ++l) {
      const std::string h = P + "layers." + std::to_string(l) + ".";
      add(h + "input_layernorm.weight", {d}, 0.1f, 1.0f);
      add(h + "self_attn.q_proj.weight", {qd, d}, 0.5f), add(h + "self_attn.k_proj.weight", {kvd, d}, 0.5f);
      add(h + "self_attn.v_proj.weight", {kvd, d}, 0.4f), add(h + "self_attn.o_proj.weight", {d, qd}, 0.3f);
      if (c.qkv_bias)
        add(h + "self_attn.q_proj.bias", {qd}, 0.2f), add(h + "self_attn.k_proj.bias", {kvd}, 0.2f),
            add(h + "self_attn.v_proj.bias", {kvd}, 0.2f);
      add(h + "post_attention_layernorm.weight", {d}, 0.1f, 1.0f);
      add(h + "mlp.gate_proj.weight", {c.d_ff, d}, 0.4f), add(h + "mlp.up_proj.weight", {c.d_ff, d}, 0.4f);
      add(h + "mlp.down_proj.weight", {d, c.d_ff}, 0.3f);
    }
    add(P + "norm.weight", {d}, 0.1f, 1.0f);
    if (!o.tied) add("lm_head.weight", {c.vocab, d}, 0.5f);
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

TinyModel writeCheckpoint(const fs::path& dir, const nlohmann::json& config, const std::vector<TensorSpec>& tensors,
                          const TinyOptions& options, const std::vector<std::string>& specials,
                          const std::string& tokenizer_config) {
  fs::create_directories(dir);
  TinyModel m;
  m.dir = dir;
  m.options = options;
  m.options.prefix.clear();  // names are given in full
  writeByteLevelTokenizer(dir, specials);
  writeText(dir / "tokenizer_config.json", tokenizer_config);
  writeText(dir / "config.json", config.dump(1));
  m.config = parseConfig(config.dump(), (dir / "config.json").string());
  int stream = 0;
  for (const TensorSpec& t : tensors) {
    int64_t n = 1;
    for (const int64_t s : t.shape) n *= s;
    m.weights[t.name] = randomValues(options, stream++, n, t.scale, t.offset);
    m.shapes[t.name] = t.shape;
  }
  writeWeights(m);
  return m;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    EXPECT_EQ(countLines(e.what()), 0) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

std::string loadError(const fs::path& dir) {
  return errorOf([&] { loadModel(filesOnDisk(dir.string())); });
}

void expectHas(const std::string& msg, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

void expectFieldRefused(const TinyModel& m, const std::string& field, const std::string& bad,
                        const std::vector<std::string>& parts) {
  const std::string before = slurp(m.dir / "config.json");
  setConfigField(m, field, bad);
  expectHas(loadError(m.dir), parts);
  writeText(m.dir / "config.json", before);
}

void expectGenerationMatchesFullForward(const fs::path& dir, const std::string& prompt, int64_t max_new) {
  const auto model = loadModel(filesOnDisk(dir.string()));
  const Generation g = generate(*model, prompt, {.max_new = max_new});
  ASSERT_FALSE(g.tokens.empty());
  if (!g.stopped_at_eos) {
    EXPECT_EQ(g.tokens.size(), static_cast<size_t>(max_new));
  }
  const size_t P = g.prompt.ids.size();
  for (size_t s = 0; s < g.tokens.size(); ++s) {
    const ModelRun& step = g.tokens[s].step;
    EXPECT_EQ(step.first_position, static_cast<int64_t>(P + s));
    ASSERT_EQ(step.attention.back().back().rows(), 1);
    EXPECT_EQ(step.attention.back().back().cols(), static_cast<int64_t>(P + s + 1)) << "the new token sees itself and all before";
  }
  const ModelRun grown = generationRun(g, g.tokens.size());
  const ModelRun full = runModelIds(*model, grown.ids, {.top_k = 1});
  ASSERT_EQ(full.ids, grown.ids);
  auto gap = [](const Mat& a, const Mat& b) {
    EXPECT_EQ(a.rows(), b.rows());
    EXPECT_EQ(a.cols(), b.cols());
    return a.rows() == b.rows() && a.cols() == b.cols() ? static_cast<double>((a - b).cwiseAbs().maxCoeff()) : 1e300;
  };
  for (size_t l = 0; l < full.attention.size(); ++l) {
    for (size_t h = 0; h < full.attention[l].size(); ++h)
      EXPECT_LT(gap(full.attention[l][h], grown.attention[l][h]), 1e-5) << l << "/" << h;
    EXPECT_LT(gap(full.q[l], grown.q[l]), 1e-4) << l;
    EXPECT_LT(gap(full.k[l], grown.k[l]), 1e-4) << l;
    EXPECT_LT(gap(full.v[l], grown.v[l]), 1e-4) << l;
  }
  EXPECT_LT(gap(full.hidden, grown.hidden), 1e-4);
  for (size_t s = 0; s < g.tokens.size(); ++s) {
    EXPECT_EQ(g.tokens[s].id, full.top_k[P - 1 + s][0].id) << "step " << s;
    EXPECT_NEAR(g.tokens[s].probability, full.top_k[P - 1 + s][0].probability, 1e-4);
  }
}

void expectOpensThroughTheCli(const fs::path& dir, const std::string& text, const std::string& label) {
  const RunResult info = runAttnlab({"model", "info", dir.string(), "--json"});
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(nlohmann::json::parse(info.out)["label"], label);

  const TempDir out;
  const RunResult run = runAttnlab({"model", "run", dir.string(), "--text", text, "--out", (out / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto model = loadModel(filesOnDisk(dir.string()));
  const ModelRun mine = runModel(*model, text, {.top_k = 0});
  const nlohmann::json tokens = nlohmann::json::parse(slurp(out / "run" / "tokens.json"));
  EXPECT_EQ(tokens["ids"].get<std::vector<int32_t>>(), mine.ids);
  const Array att = readNpy(out / "run" / "attention.npy", "attention");
  const int64_t L = static_cast<int64_t>(mine.ids.size());
  ASSERT_EQ(att.shape, (std::vector<int64_t>{mine.layers, mine.heads, L, L}));
  for (int64_t l = 0; l < mine.layers; ++l)
    for (int64_t h = 0; h < mine.heads; ++h)
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < L; ++j)
          ASSERT_FLOAT_EQ(att.data[static_cast<size_t>(((l * mine.heads + h) * L + i) * L + j)],
                          mine.attention[static_cast<size_t>(l)][static_cast<size_t>(h)](i, j));
  const RunResult gen = runAttnlab({"model", "generate", dir.string(), "--text", text, "--max-new", "3", "--out",
                                    (out / "gen").string()});
  if (!mine.causal) {
    EXPECT_EQ(gen.status, 2) << "a bidirectional model does not generate";
    EXPECT_EQ(countLines(gen.err), 1) << gen.err;
    return;
  }
  ASSERT_EQ(gen.status, 0) << gen.err;
  const nlohmann::json gt = nlohmann::json::parse(slurp(out / "gen" / "tokens.json"));
  EXPECT_EQ(gt["prompt_ids"].get<std::vector<int32_t>>(), mine.ids);
  EXPECT_GE(gt["ids"].size(), 1u) << gt.dump();
}

std::vector<TensorSpec> gptNeoxTensors(int64_t layers, int64_t d, int64_t ff, bool bias, bool tied) {
  const int64_t V = kTokenizerVocab;
  std::vector<TensorSpec> t = {{"gpt_neox.embed_in.weight", {V, d}}};
  for (int64_t l = 0; l < layers; ++l) {
    const std::string p = "gpt_neox.layers." + std::to_string(l) + ".";
    t.push_back({p + "input_layernorm.weight", {d}, 0.2f, 1.0f});
    t.push_back({p + "input_layernorm.bias", {d}, 0.1f});
    t.push_back({p + "post_attention_layernorm.weight", {d}, 0.2f, 1.0f});
    t.push_back({p + "post_attention_layernorm.bias", {d}, 0.1f});
    t.push_back({p + "attention.query_key_value.weight", {3 * d, d}});
    t.push_back({p + "attention.dense.weight", {d, d}});
    if (bias) {
      t.push_back({p + "attention.query_key_value.bias", {3 * d}, 0.2f});
      t.push_back({p + "attention.dense.bias", {d}, 0.2f});
    }
    t.push_back({p + "mlp.dense_h_to_4h.weight", {ff, d}});
    t.push_back({p + "mlp.dense_h_to_4h.bias", {ff}, 0.2f});
    t.push_back({p + "mlp.dense_4h_to_h.weight", {d, ff}});
    t.push_back({p + "mlp.dense_4h_to_h.bias", {d}, 0.2f});
  }
  t.push_back({"gpt_neox.final_layer_norm.weight", {d}, 0.2f, 1.0f});
  t.push_back({"gpt_neox.final_layer_norm.bias", {d}, 0.1f});
  if (!tied) t.push_back({"embed_out.weight", {V, d}});
  return t;
}

TinyModel writeManyHeadsCheckpoint(const std::filesystem::path& dir, int64_t layers, int64_t heads) {
  const int64_t d = 2 * heads, ff = 32;
  const nlohmann::json config = {{"architectures", {"GPTNeoXForCausalLM"}}, {"model_type", "gpt_neox"},
                                 {"num_hidden_layers", layers},              {"num_attention_heads", heads},
                                 {"hidden_size", d},                         {"intermediate_size", ff},
                                 {"max_position_embeddings", 64},            {"vocab_size", kTokenizerVocab},
                                 {"layer_norm_eps", 1e-5},                   {"hidden_act", "gelu"},
                                 {"use_parallel_residual", true},            {"rotary_pct", 1.0},
                                 {"rotary_emb_base", 50.0},                  {"tie_word_embeddings", false},
                                 {"torch_dtype", "float32"},                 {"bos_token_id", 259},
                                 {"eos_token_id", 260}};
  return writeCheckpoint(dir, config, gptNeoxTensors(layers, d, ff, true, false));
}

}  // namespace attn::test
