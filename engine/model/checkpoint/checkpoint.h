// What a checkpoint is, as the loader reads it: config.json's fields
// (ModelConfig, RopeSpec), where its files come from (ModelFiles) and the
// summary model info shows (ModelInfo). Types only: the loader is model.h's.
#pragma once

#include "engine/model/checkpoint/safetensors.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn {


// Rotary position embedding of one attention kind (Su et al. 2021), with
// transformers' rope_type rules: θ_i = theta^(−2i/rotary_dims) for the
// rotary_dims/2 pairs, then
//   "linear": θ_i / factor;
//   "llama3": wavelengths 2π/θ_i above original/low_freq divided by factor,
//             below original/high_freq kept, between blended;
// each computed in float32 as transformers computes inv_freq (the angle
// m·θ_i too: rotateHalfHeads' RopeAngle::Float32).
// Every other rope_type (yarn, dynamic, longrope, …) is refused where read.
struct RopeSpec {
  double theta = 10000;
  std::string type = "default";  // "default", "linear" or "llama3"
  double factor = 1, low_freq = 1, high_freq = 4;
  int64_t original_positions = 8192;
  double partial = 1.0;  // partial_rotary_factor: the fraction of each head's dimensions that rotate
  // θ_i / freq_factors[i] after the scaling above, one per frequency (empty:
  // none): llama.cpp's freq_factors, a GGUF file's rope_freqs tensor (Llama 3.1's scaling as the converter saves it).
  std::vector<double> freq_factors;

  int64_t rotaryDims(int64_t head_dim) const;               // even, ≤ head_dim
  std::vector<double> frequencies(int64_t head_dim) const;  // θ_i (float32 values), rotaryDims/2 of them
  nlohmann::json toJson() const;
  bool operator==(const RopeSpec&) const = default;
};

// What config.json says, as the model's family read it. Fields a family does not use keep their defaults.
struct ModelConfig {
  std::string arch_name;    // as config.json names it ("GPT2LMHeadModel")
  std::string family;       // the family's model_type: "gpt2", "bert", "llama", "gemma2", …
  std::string label;        // the family as people say it: "GPT-2", "Gemma 2"
  bool causal = true;       // false: bidirectional (BERT, ModernBERT)
  std::string dtype;        // config's dtype (transformers 5) or torch_dtype: what it was saved as
  int64_t layers = 0;       // n_layer / num_hidden_layers
  int64_t heads = 0;        // n_head / num_attention_heads
  int64_t kv_heads = 0;     // num_key_value_heads (GQA: query heads h share key/value head h / (heads / kv_heads))
  int64_t head_dim = 0;     // head_dim (default d_model / heads)
  int64_t d_model = 0;      // n_embd / hidden_size
  int64_t d_ff = 0;         // n_inner (default 4·d) / intermediate_size
  int64_t positions = 0;    // n_positions / max_position_embeddings
  int64_t vocab = 0;        // vocab_size
  int64_t type_vocab = 0;   // BERT type_vocab_size
  double ln_eps = 1e-5;     // layer_norm_epsilon / layer_norm_eps
  bool lower_case = true;   // BERT tokenizer (tokenizer_config.json do_lower_case)
  double rms_eps = 1e-6;    // rms_norm_eps
  std::string activation;   // the MLP's activation as config.json names it ("silu", "gelu_pytorch_tanh")
  std::string blocks;       // the blocks in words, for model info: "RMSNorm (ε 1e-05) / SwiGLU, q/k/v biases"
  // Positions as rotations of q and k (RoPE): `rope` for full-attention
  // layers, `rope_local` for sliding-window layers where a family gives them
  // their own base (Gemma 3, ModernBERT).
  bool uses_rope = false;
  RopeSpec rope, rope_local;
  bool local_rope = false;  // rope_local is used (set by the family); else every layer uses rope
  bool qkv_bias = false;    // Qwen2; Llama's attention_bias
  bool tie_embeddings = false;
  // Keys a query sees (itself included) per layer; 0: all. Empty: no layer
  // has a window. sliding_window is the window of the windowed layers.
  std::vector<int64_t> layer_window;
  int64_t sliding_window = 0;
  double score_scale = 0;     // the score's factor; 0: 1/√head_dim
  double attn_softcap = 0;    // scores → c·tanh(s/c) before the mask (Gemma 2); 0: none
  double final_softcap = 0;   // logits → c·tanh(z/c) (Gemma 2); 0: none
  bool qk_norm = false;       // q and k normalised per head (Qwen3, Gemma 3) or whole (OLMo 2)
  bool alibi = false;         // linear biases instead of positions (BLOOM)
  bool parallel_residual = false;  // x + attn(LN x) + mlp(LN' x) (GPT-NeoX, Phi-2)
  int64_t embed_dim = 0;      // token embeddings' width when projected in and out (OPT's word_embed_proj_dim); 0: d_model
  bool post_ln = false;       // each block's norms after its residual adds (OPT-350m: do_layer_norm_before false)
  bool final_norm = true;     // a norm after the last block (OPT: absent when post-LN or _remove_final_layer_norm)
  bool linear_bias = true;    // biases on every linear layer (OPT's enable_bias)
  // Encoder–decoder models (T5, BART: encoderDecoder()):
  // `layers` are the encoder's, decoder_layers the decoder's (0: an encoder alone, T5EncoderModel).
  int64_t decoder_layers = 0;
  int64_t decoder_start = -1;        // decoder_start_token_id: the decoder's first token
  double embed_scale = 1;            // token embeddings × this (BART's scale_embedding: √d_model)
  int64_t relative_buckets = 0;      // T5's relative_attention_num_buckets (0: no relative bias)
  int64_t relative_max_distance = 0; // T5's relative_attention_max_distance
  // Vision Transformers (vision()): pictures of image_size² pixels in patch_size² patches.
  int64_t image_size = 0, patch_size = 0, channels = 0;
  std::vector<std::string> labels;  // the classifier's id2label, by id (empty without a classifier)

  // The model's kind, from its family (a family with
  // `seq2seq` is an encoder–decoder, one with `vision` reads pictures), the
  // one place it is kept: false for a config no family read.
  bool encoderDecoder() const;
  bool vision() const;
  // The window of layer l (0: none), and its RoPE.
  int64_t windowOf(int64_t l) const { return layer_window.empty() ? 0 : layer_window[static_cast<size_t>(l)]; }
  const RopeSpec& ropeOf(int64_t l) const { return local_rope && windowOf(l) > 0 ? rope_local : rope; }
};

struct GgufHeader;

// Where the files come from: a folder on disk, or the embedded default.
struct ModelFiles {
  std::string label;  // folder path or "embedded default model"
  // The file's bytes, or nullopt when it does not exist. Called for
  // "config.json", "model.safetensors", "model.safetensors.index.json",
  // shard names, "vocab.json", "merges.txt", "vocab.txt", "tokenizer.json",
  // "tokenizer_config.json".
  std::function<std::optional<std::string>(const std::string& name)> read_text;
  std::function<std::shared_ptr<const SafetensorsFile>(const std::string& name)> open_safetensors;  // null: missing
  // A GGUF file read as a folder (gguf_model.h): config.json and
  // model.safetensors come from it, the tokenizer from this header's metadata.
  std::shared_ptr<const GgufHeader> gguf;
};

struct TensorSummary {
  std::string name, dtype, file;
  std::vector<int64_t> shape;
};

// The weights stored as one type (a GGUF file's quantization: Q4_K, Q6_K, F32 …).
struct StorageSummary {
  std::string dtype;
  int64_t tensors = 0, parameters = 0;
  uint64_t bytes = 0;
};

struct ModelInfo {
  std::string label;
  ModelConfig config;
  int64_t parameters = 0;
  std::string dtype;         // "F32", "F16", "BF16", a block type, or "mixed"
  uint64_t bytes_on_disk = 0;
  std::vector<TensorSummary> tensors;  // by name
  std::vector<StorageSummary> storage;  // by type, most parameters first
  double bits_per_weight = 0;           // the weights' bytes · 8 / parameters
};

}  // namespace attn
