// Tiny GPT-2 and BERT checkpoints in the exact Hugging Face layout
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
// positions, a 24-token WordPiece vocabulary.
TinyModel writeTinyModel(const std::filesystem::path& dir, const TinyOptions& options = {});
// (Re)writes the weights of `m` (after a test changed them) as its options say.
void writeWeights(const TinyModel& m);
// Sets one field of config.json (bad-input tests).
void setConfigField(const TinyModel& m, const std::string& key, const std::string& json_value);

}  // namespace attn::test
