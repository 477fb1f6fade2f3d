// Tiny GPT-2, BERT and LLaMA-family checkpoints in the exact Hugging Face layout
// (config.json, model.safetensors or shards + index, tokenizer files) with
// seeded random weights, for the engine and CLI tests of real models.
#pragma once

#include "engine/model/model.h"
#include "engine/model/checkpoint/safetensors.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attn::test {

// The three hand-written fixtures; other families use writeCheckpoint().
enum class Fixture { Gpt2, Bert, Llama };

struct TinyOptions {
  Fixture arch = Fixture::Gpt2;
  std::string prefix;        // "transformer." / "bert." as GPT2LMHeadModel / BertForMaskedLM save them
  bool untied_head = false;  // GPT-2: its own lm_head.weight; BERT: cls.predictions.decoder.weight
  bool mlm = true;           // BERT: the cls.predictions.* head
  DType dtype = DType::F32;  // F16/BF16: the weights are rounded to it before they are kept
  int shards = 1;            // > 1: model-0000i-of-0000n.safetensors + model.safetensors.index.json
  uint64_t seed = 1;
  // The LLaMA family (arch Llama): "llama", "mistral" or "qwen2" (biases on q, k, v)
  std::string family = "llama";
  int64_t kv_heads = 2;        // of 4 query heads
  // Mistral's window (0: none in config.json); Qwen2's with use_sliding_window
  // (0: use_sliding_window false), on the layers from max_window_layers on
  int64_t sliding_window = 0;
  int64_t max_window_layers = 28;
  bool tied = false;           // tie_word_embeddings: no lm_head.weight
  bool llama3_scaling = false; // rope_scaling {"rope_type": "llama3", …}
  // config.json as transformers 5 writes it: rope_parameters {"rope_type", "rope_theta", …}
  // and dtype, no rope_theta / rope_scaling / torch_dtype; Qwen2's layer_types.
  bool transformers5 = false;
  double rope_theta = 50.0;    // a small base: the tiny head's two frequencies turn visibly
};

struct TinyModel {
  std::filesystem::path dir;
  TinyOptions options;
  ModelConfig config;
  // By the name in the checkpoint (prefix included), values as stored.
  std::map<std::string, std::vector<float>> weights;
  std::map<std::string, std::vector<int64_t>> shapes;
  // The tensor `name` of the body (the prefix added) or of a head.
  const std::vector<float>& w(const std::string& name) const;
  bool has(const std::string& name) const;
};

// GPT-2: 2 layers, 2 heads, d = 8, 16 positions, byte-level vocabulary of
// the 256 byte symbols plus 3 merges. BERT: 2 layers, 2 heads, d = 8, 16
// positions, a 24-token WordPiece vocabulary. LLaMA family: 2 layers, 4
// query heads over options.kv_heads key/value heads, d = 16 (d_head 4),
// d_ff 24, 32 positions, tokenizer.json (byte-level BPE, the GPT-2 fixture's
// vocabulary, <s> and </s>) and tokenizer_config.json adding <s>.
TinyModel writeTinyModel(const std::filesystem::path& dir, const TinyOptions& options = {});
// (Re)writes the weights of `m` (after a test changed them) as its options say.
void writeWeights(const TinyModel& m);
// Sets one field of config.json (bad-input tests).
void setConfigField(const TinyModel& m, const std::string& key, const std::string& json_value);

// [SECTION] Any family: a config, tensors and a tokenizer.json
// One tensor of a generic checkpoint: seeded N(offset, scale²) values.
struct TensorSpec {
  std::string name;  // the full name in the checkpoint
  std::vector<int64_t> shape;
  float scale = 0.4f, offset = 0.0f;
};
// Writes config.json as given, a tokenizer.json (byte-level BPE over the
// GPT-2 fixture's vocabulary; ids 0–258, then <s> = 259 and </s> = 260,
// and, with `specials`, [CLS] … as further added tokens), a
// tokenizer_config.json (`tokenizer_config`, default: adds <s>) and the
// tensors with seeded random values (options: dtype, shards, seed).
// m.config is config.json as parseConfig reads it; the vocabulary size the
// config must give is kTokenizerVocab (+ specials.size()).
inline constexpr int64_t kTokenizerVocab = 261;
TinyModel writeCheckpoint(const std::filesystem::path& dir, const nlohmann::json& config,
                          const std::vector<TensorSpec>& tensors, const TinyOptions& options = {},
                          const std::vector<std::string>& specials = {},
                          const std::string& tokenizer_config = R"({"add_bos_token": true, "bos_token": "<s>", "eos_token": "</s>"})");

// GPTNeoXForCausalLM's tensors as transformers saves them (nn.Linear [out, in]),
// over the vocabulary of writeCheckpoint; `bias`: attention_bias; `tied`: no embed_out.
std::vector<TensorSpec> gptNeoxTensors(int64_t layers, int64_t d, int64_t ff, bool bias, bool tied);
// A GPT-NeoX of `layers` × `heads` heads of d_head 2 (a model too large for a
// thumbnail per head, in a few megabytes): seeded random weights, the
// tokenizer of writeCheckpoint.
TinyModel writeManyHeadsCheckpoint(const std::filesystem::path& dir, int64_t layers, int64_t heads);

// Loading `dir` fails: the error's one line (ADD_FAILUREs when it loads, or when the message has more lines).
std::string loadError(const std::filesystem::path& dir);
// The one-line InputError `f` throws (a failure when it throws none).
std::string errorOf(const std::function<void()>& f);

// Each of `parts` is in the message `msg`.
void expectHas(const std::string& msg, const std::vector<std::string>& parts);
// config.json's `field` set to `bad` is refused in one line naming `parts`; then config.json is put back as it was.
void expectFieldRefused(const TinyModel& m, const std::string& field, const std::string& bad,
                        const std::vector<std::string>& parts);
// Generating up to `max_new` tokens (fewer only at the end token) with the KV cache equals a full forward over the same tokens: each decode
// step's one query sees every cached key, the steps' maps, q/k/v and final hidden states stacked are the
// full pass's, and each greedy token is the full pass's arg-max at the position before it.
void expectGenerationMatchesFullForward(const std::filesystem::path& dir, const std::string& prompt,
                                        int64_t max_new = 6);

// The checkpoint in `dir` opens through the real binary as a user would:
// `model info --json` names `label`, `model run` writes tokens.json and an
// attention.npy equal to this process's run of the same text, and, for a
// causal family, `model generate` writes its steps. ADD_FAILUREs otherwise.
void expectOpensThroughTheCli(const std::filesystem::path& dir, const std::string& text, const std::string& label);

}  // namespace attn::test
