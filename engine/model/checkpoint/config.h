// Reading config.json as both generations of transformers write it, for the
// model families (each family's parse):
//   - every field with its type and range checked, naming file and field;
//   - RoPE from `rope_parameters` (transformers 5: flat, or nested per layer
//     type as Gemma 3 writes it) or from `rope_theta` / `rope_scaling` (4.x);
//   - the attention kind of each layer from `layer_types` (5) or the older
//     per-family fields;
//   - the policy: a field that changes the computation and that the family
//     did not read is refused in one line naming file, field and value.
#pragma once

#include "engine/error.h"
#include "engine/model/checkpoint/checkpoint.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace attn {

// Bounds on a config's sizes, far above any released model (GPT-2 XL: 48
// layers, d = 1600; the largest open models: d = 16,384, vocabularies of
// 256k): layers, widths (heads, d, d_ff), and counts (positions, vocabulary).
inline constexpr int64_t kMaxLayers = 1024, kMaxWidth = int64_t{1} << 20, kMaxCount = int64_t{1} << 24;

// A model folder's JSON file (config.json, preprocessor_config.json) as an
// object; InputError naming `where` when it is not valid JSON or not an object.
nlohmann::json parseJsonObject(const std::string& text, const std::string& where);

// One JSON object of config.json (the whole file, or a nested object such
// as rope_parameters). Each field read is remembered, for refuseUnread().
struct ConfigReader {
  const nlohmann::json& j;
  std::string where;  // ".../config.json", or ".../config.json rope_parameters"
  mutable std::set<std::string> read;

  // The field, or nullptr when absent or null (transformers writes null for "not set").
  const nlohmann::json* find(const std::string& key) const;
  bool has(const std::string& key) const { return find(key) != nullptr; }
  // An integer in [1, max]; `def` when absent (no default: the field is required).
  int64_t positive(const std::string& key, int64_t max, std::optional<int64_t> def = std::nullopt) const;
  // A number in [lo, hi]; `def` when absent.
  double number(const std::string& key, std::optional<double> def, double lo, double hi) const;
  // A token id: an integer in [0, vocab); `def` when absent.
  int64_t tokenId(const std::string& key, int64_t def, int64_t vocab) const;
  double epsilon(const std::string& key, double def) const;  // a number in (0, 1): a norm's ε
  bool flag(const std::string& key, bool def) const;
  std::string text(const std::string& key, const std::string& def) const;
  // The field must be one of `allowed` (absent: def): "field 'hidden_act' is 'relu', but only 'silu' is supported".
  std::string oneOf(const std::string& key, const std::string& def, const std::vector<std::string>& allowed) const;
  // An InputError "<where>: field '<key>' <message>".
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
};

// The RoPE of layers of kind `layer_type` ("full_attention",
// "sliding_attention"; "" for models with one kind): from rope_parameters
// (flat, or the entry for the layer type), else rope_theta (default
// `default_theta`) and rope_scaling; partial_rotary_factor (top level, or
// inside rope_parameters) when `partial_field` names the family's field
// ("partial_rotary_factor", "rotary_pct"; "" when the family has none).
RopeSpec readRope(const ConfigReader& r, const std::string& layer_type, double default_theta,
                  const std::string& partial_field = "");

// The attention kind of each of `layers` layers as `layer_types` lists it
// ("full_attention" or "sliding_attention"; any other kind is refused), or,
// without it, `fallback(l)`.
std::vector<std::string> readLayerTypes(const ConfigReader& r, int64_t layers,
                                        const std::function<std::string(int64_t)>& fallback);

// Qwen2's and Qwen3's sliding windows into c.layer_window / c.sliding_window,
// as their configs in transformers read them (both generations):
// sliding_window (default 4096 when absent; null: None) counts only with
// use_sliding_window (else None); layer_types, when absent, makes layer l "sliding_attention" when
// that window is set and l >= max_window_layers (default 28). A
// "sliding_attention" layer without the window is refused (transformers
// has no window to mask it with). `label` names the family in errors.
void readQwenWindows(const ConfigReader& r, ModelConfig& c, const std::string& label);

// The sizes transformers' decoder configs name alike: num_hidden_layers,
// num_attention_heads, num_key_value_heads (default: the heads; must divide
// them), hidden_size, intermediate_size, max_position_embeddings, vocab_size,
// and head_dim (default `head_dim_default`, or hidden_size / heads, which
// must then divide), even (RoPE turns pairs).
void readDecoderSizes(const ConfigReader& r, ModelConfig& c, std::optional<int64_t> head_dim_default = std::nullopt);
// What the LLaMA-shaped decoders (Llama, Mistral, Qwen2, Qwen3, OLMo 2) read
// alike: the sizes, rms_norm_eps (default `eps`), the RoPE (θ 10,000 unless
// set), hidden_act (silu alone: SwiGLU) and tie_word_embeddings.
void readSwiGluDecoder(const ConfigReader& r, ModelConfig& c, double eps,
                       std::optional<int64_t> head_dim_default = std::nullopt);

// The policy: fields of config.json known to change the computation, which
// the family's reader did not read, are refused unless they hold their
// neutral value ("field 'attn_logit_softcapping' is 50.0, which Llama does
// not implement"). layer_types listing only "full_attention" changes
// nothing for a family without a window (c.layer_window empty), so it is
// read there: transformers 5 writes it into configs it saves. c.label names
// the family.
void refuseUnread(const ConfigReader& r, const ModelConfig& c);

}  // namespace attn
