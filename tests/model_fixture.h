// Tiny GPT-2, BERT and LLaMA-family checkpoints in the exact Hugging Face layout
// (config.json, model.safetensors or shards + index, tokenizer files) with
// seeded random weights, for the engine and CLI tests of real models.
#pragma once

#include "engine/model/model.h"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace attn::test {

struct TinyOptions {
  Architecture arch = Architecture::Gpt2;
  std::string prefix;        // "transformer." / "bert." as GPT2LMHeadModel / BertForMaskedLM save them
  bool untied_head = false;  // GPT-2: its own lm_head.weight; BERT: cls.predictions.decoder.weight
  bool mlm = true;           // BERT: the cls.predictions.* head
  DType dtype = DType::F32;  // F16/BF16: the weights are rounded to it before they are kept
  int shards = 1;            // > 1: model-0000i-of-0000n.safetensors + model.safetensors.index.json
  uint64_t seed = 1;
  // The LLaMA family (arch Llama): "llama", "mistral" or "qwen2" (biases on q, k, v)
  std::string family = "llama";
  int64_t kv_heads = 2;        // of 4 query heads
  int64_t sliding_window = 0;  // Mistral's window (0: none in config.json)
  bool tied = false;           // tie_word_embeddings: no lm_head.weight
  bool llama3_scaling = false; // rope_scaling {"rope_type": "llama3", …}
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

}  // namespace attn::test
