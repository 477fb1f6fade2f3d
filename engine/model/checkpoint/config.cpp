#include "engine/model/checkpoint/config.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace attn {

// [SECTION] Fields
const nlohmann::json* ConfigReader::find(const std::string& key) const {
  read.insert(key);
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

void ConfigReader::fail(const std::string& key, const std::string& message) const {
  throw InputError(where + ": field '" + key + "' " + message);
}

// A size from 1 to `max`: the bound keeps every shape product the loader
// forms (3·d·d, V·d) inside int64 and refuses a lying config before it
// drives an allocation or a loop over 10¹⁸ layers.
int64_t ConfigReader::positive(const std::string& key, int64_t max, std::optional<int64_t> def) const {
  const nlohmann::json* v = find(key);
  if (!v) {
    if (def) return *def;
    fail(key, "is missing (expected a positive integer)");
  }
  if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(max)) ||
      v->get<int64_t>() <= 0 || v->get<int64_t>() > max)
    fail(key, "must be an integer from 1 to " + std::to_string(max) + ", got " + v->dump());
  return v->get<int64_t>();
}

double ConfigReader::epsilon(const std::string& key, double def) const {
  const nlohmann::json* v = find(key);
  if (!v) return def;
  if (!v->is_number() || !(v->get<double>() > 0) || v->get<double>() >= 1)
    fail(key, "must be a number between 0 and 1, got " + v->dump());
  return v->get<double>();
}

double ConfigReader::number(const std::string& key, std::optional<double> def, double lo, double hi) const {
  const nlohmann::json* v = find(key);
  if (!v) {
    if (def) return *def;
    fail(key, "is missing (expected a number)");
  }
  if (!v->is_number() || !(v->get<double>() >= lo) || !(v->get<double>() <= hi))
    fail(key, "must be a number from " + nlohmann::json(lo).dump() + " to " + nlohmann::json(hi).dump() + ", got " +
                  v->dump());
  return v->get<double>();
}

nlohmann::json parseJsonObject(const std::string& text, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw InputError(where + ": expected a JSON object");
  return j;
}

int64_t ConfigReader::tokenId(const std::string& key, int64_t def, int64_t vocab) const {
  const nlohmann::json* v = find(key);
  if (!v) return def;
  if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() >= uint64_t(vocab)) ||
      v->get<int64_t>() < 0 || v->get<int64_t>() >= vocab)
    fail(key, "must be a token id from 0 to " + std::to_string(vocab - 1) + ", got " + v->dump());
  return v->get<int64_t>();
}

bool ConfigReader::flag(const std::string& key, bool def) const {
  const nlohmann::json* v = find(key);
  if (!v) return def;
  if (!v->is_boolean()) fail(key, "must be true or false, got " + v->dump());
  return v->get<bool>();
}

std::string ConfigReader::text(const std::string& key, const std::string& def) const {
  const nlohmann::json* v = find(key);
  if (!v) return def;
  if (!v->is_string()) fail(key, "must be a string, got " + v->dump());
  return v->get<std::string>();
}

std::string ConfigReader::oneOf(const std::string& key, const std::string& def,
                                const std::vector<std::string>& allowed) const {
  const std::string got = text(key, def);
  if (std::find(allowed.begin(), allowed.end(), got) != allowed.end()) return got;
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "'" : ", '") + a + "'";
  fail(key, "is '" + got + "', but only " + list + " is supported");
}

// [SECTION] RoPE
int64_t RopeSpec::rotaryDims(int64_t head_dim) const {
  const int64_t dims = static_cast<int64_t>(static_cast<double>(head_dim) * partial);  // transformers: int(head_dim · factor)
  return dims - dims % 2;
}

// θ_i as transformers computes inv_freq: float32 tensors, each operation
// rounded to float32 (the build is ISO C++, so GCC does not fuse a product
// into a sum: -ffp-contract=off). A float32 +, −, ·, / equals the double
// result rounded once to float (53 ≥ 2·24 + 2 bits), so f32(double op) is it.
//   inv_freq = 1.0 / base ** (arange(0, dims, 2).float() / dims)
//   linear:  inv_freq / factor
//   llama3:  wavelen = (1 / inv_freq) · f32(2π)   (a Python number over a tensor: reciprocal, then ·)
//            above original/low_freq: inv_freq / factor; below original/high_freq: kept;
//            between: s = ((1 / wavelen) · original − low) / (high − low),
//                     (1 − s) · inv_freq / factor + s · inv_freq
//   freq_factors: then θ_i / f_i, in float32 (ggml's rope: theta_base / freq_factor)
// The power is the correctly rounded float32 one; torch's SLEEF powf (≤ 1
// ulp) agrees with it on the usual bases and widths (10⁴, 5·10⁵ at 64 and
// 128 dims: every θ_i equal).
std::vector<double> RopeSpec::frequencies(int64_t head_dim) const {
  const auto f32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  const int64_t dims = rotaryDims(head_dim);
  const double base = f32(theta), fac = f32(factor);
  std::vector<double> out(static_cast<size_t>(dims / 2));
  for (size_t i = 0; i < out.size(); ++i) {
    const double exponent = f32(static_cast<double>(2 * i) / static_cast<double>(dims));
    double t = f32(1.0 / f32(std::pow(base, exponent)));
    if (type == "linear") {
      t = f32(t / fac);
    } else if (type == "llama3") {
      // transformers' _compute_llama3_parameters
      const double original = static_cast<double>(original_positions);
      const double wavelen = f32(f32(1.0 / t) * f32(2.0 * std::numbers::pi));
      if (wavelen > f32(original / low_freq)) {
        t = f32(t / fac);
      } else if (!(wavelen < f32(original / high_freq))) {
        const double smooth =
            f32(f32(f32(f32(1.0 / wavelen) * f32(original)) - f32(low_freq)) / f32(high_freq - low_freq));
        t = f32(f32(f32(f32(1.0 - smooth) * t) / fac) + f32(smooth * t));
      }
    }
    if (!freq_factors.empty()) t = f32(t / freq_factors.at(i));
    out[i] = t;
  }
  return out;
}

nlohmann::json RopeSpec::toJson() const {
  nlohmann::json j = {{"rope_type", type}, {"rope_theta", theta}};
  if (type != "default") j["factor"] = factor;
  if (type == "llama3") {
    j["low_freq_factor"] = low_freq;
    j["high_freq_factor"] = high_freq;
    j["original_max_position_embeddings"] = original_positions;
  }
  if (partial != 1.0) j["partial_rotary_factor"] = partial;
  if (!freq_factors.empty()) j["freq_factors"] = freq_factors;
  return j;
}

namespace {

// The scaling fields of one rope_parameters / rope_scaling object into `spec`.
void readRopeType(const ConfigReader& s, RopeSpec& spec) {
  if (const nlohmann::json* f = s.find("freq_factors")) {
    // Not transformers': a GGUF file's rope_freqs (gguf_model.cpp), checked against the rotated pairs by parseConfig.
    if (!f->is_array() || f->empty() || f->size() > static_cast<size_t>(kMaxWidth))
      s.fail("freq_factors", "must be a list of numbers, one per rotated frequency, got " + f->dump());
    for (const nlohmann::json& v : *f) {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
        s.fail("freq_factors", "has " + v.dump() + " (expected positive numbers)");
      spec.freq_factors.push_back(v.get<double>());
    }
  }
  const std::string key = s.has("rope_type") ? "rope_type" : "type";
  spec.type = s.text(key, "default");
  if (spec.type == "default") return;
  if (spec.type != "linear" && spec.type != "llama3")
    s.fail(key, "is '" + spec.type + "', which is not implemented (expected 'default', 'linear' or 'llama3')");
  spec.factor = s.number("factor", std::nullopt, 1.0, 1e6);
  if (spec.type == "llama3") {
    spec.low_freq = s.number("low_freq_factor", std::nullopt, 1e-6, 1e6);
    spec.high_freq = s.number("high_freq_factor", std::nullopt, 1e-6, 1e6);
    spec.original_positions = s.positive("original_max_position_embeddings", kMaxCount);
    if (!(spec.high_freq > spec.low_freq)) s.fail("high_freq_factor", "must be greater than low_freq_factor");
  }
}

// Fields of a rope object that change the computation and are not implemented.
void refuseRopeExtras(const ConfigReader& s) {
  for (const char* key : {"attention_factor", "beta_fast", "beta_slow", "short_factor", "long_factor", "mrope_section"})
    if (s.has(key)) s.fail(key, "is " + s.find(key)->dump() + ", which is not implemented");
}

}  // namespace

RopeSpec readRope(const ConfigReader& r, const std::string& layer_type, double default_theta,
                  const std::string& partial_field) {
  RopeSpec spec;
  spec.theta = default_theta;
  auto readPartial = [&](const ConfigReader& s) {
    if (!partial_field.empty() && s.has(partial_field)) spec.partial = s.number(partial_field, 1.0, 1e-6, 1.0);
  };
  readPartial(r);
  if (const nlohmann::json* p = r.find("rope_parameters")) {
    if (!p->is_object()) r.fail("rope_parameters", "must be an object, got " + p->dump());
    // Flat ({"rope_type": …, "rope_theta": …}) or nested per layer type ({"full_attention": {…}, …}).
    const bool nested = !p->empty() && std::all_of(p->begin(), p->end(), [](const nlohmann::json& v) { return v.is_object(); });
    const nlohmann::json* obj = p;
    std::string where = r.where + " rope_parameters";
    if (nested) {
      const std::string kind = layer_type.empty() ? "full_attention" : layer_type;
      const auto it = p->find(kind);
      if (it == p->end()) r.fail("rope_parameters", "has no entry for the layer type '" + kind + "'");
      obj = &*it;
      where += "." + kind;
    }
    const ConfigReader s{*obj, where};
    spec.theta = s.number("rope_theta", default_theta, 1.0, 1e12);
    readRopeType(s, spec);
    readPartial(s);
    refuseRopeExtras(s);
    r.read.insert({"rope_theta", "rope_scaling"});  // superseded by rope_parameters
    return spec;
  }
  spec.theta = r.number("rope_theta", default_theta, 1.0, 1e12);
  if (const nlohmann::json* s = r.find("rope_scaling")) {
    if (!s->is_object()) r.fail("rope_scaling", "must be an object, got " + s->dump());
    const ConfigReader sr{*s, r.where + " rope_scaling"};
    readRopeType(sr, spec);
    refuseRopeExtras(sr);
  }
  return spec;
}

// [SECTION] Layer types
std::vector<std::string> readLayerTypes(const ConfigReader& r, int64_t layers,
                                        const std::function<std::string(int64_t)>& fallback) {
  std::vector<std::string> types;
  const nlohmann::json* t = r.find("layer_types");
  if (!t) {
    for (int64_t l = 0; l < layers; ++l) types.push_back(fallback(l));
    return types;
  }
  if (!t->is_array() || static_cast<int64_t>(t->size()) != layers)
    r.fail("layer_types", "must list one type per layer (" + std::to_string(layers) + "), got " + t->dump());
  for (const nlohmann::json& v : *t) {
    if (!v.is_string() || (v != "full_attention" && v != "sliding_attention"))
      r.fail("layer_types", "has " + v.dump() + ", which is not implemented (expected \"full_attention\" or \"sliding_attention\")");
    types.push_back(v.get<std::string>());
  }
  return types;
}

void readQwenWindows(const ConfigReader& r, ModelConfig& c, const std::string& label) {
  // transformers: sliding_window = sliding_window if use_sliding_window else None; a null
  // in the file is None too (the class default 4096 stands only for an absent field)
  const bool use = r.flag("use_sliding_window", false);
  r.read.insert({"sliding_window", "max_window_layers"});
  const auto given = r.j.find("sliding_window");
  const bool none = given != r.j.end() && given->is_null();
  const int64_t window = use && !none ? r.positive("sliding_window", kMaxCount, 4096) : 0;
  const double first = use ? r.number("max_window_layers", 28.0, 0.0, static_cast<double>(kMaxLayers)) : 0.0;
  if (first != std::floor(first)) r.fail("max_window_layers", "must be an integer, got " + r.find("max_window_layers")->dump());
  const std::vector<std::string> types = readLayerTypes(r, c.layers, [&](int64_t l) {
    return window > 0 && static_cast<double>(l) >= first ? "sliding_attention" : "full_attention";
  });
  c.layer_window.clear();
  for (size_t l = 0; l < types.size(); ++l) {
    const bool sliding = types[l] == "sliding_attention";
    if (sliding && window == 0)
      r.fail("layer_types", "makes layer " + std::to_string(l) + " sliding_attention, but " + label +
                                " has no sliding_window to mask it with (use_sliding_window is not true, or "
                                "sliding_window is null)");
    c.layer_window.push_back(sliding ? window : 0);
  }
  const bool any = std::any_of(c.layer_window.begin(), c.layer_window.end(), [](int64_t w) { return w > 0; });
  c.sliding_window = any ? window : 0;
  if (!any) c.layer_window.clear();
}

// [SECTION] Sizes
void readSwiGluDecoder(const ConfigReader& r, ModelConfig& c, double eps, std::optional<int64_t> head_dim_default) {
  readDecoderSizes(r, c, head_dim_default);
  c.rms_eps = r.epsilon("rms_norm_eps", eps);
  c.uses_rope = true;
  c.rope = readRope(r, "", 10000.0);
  c.activation = r.oneOf("hidden_act", "silu", {"silu"});
  c.tie_embeddings = r.flag("tie_word_embeddings", false);
}

void readDecoderSizes(const ConfigReader& r, ModelConfig& c, std::optional<int64_t> head_dim_default) {
  c.layers = r.positive("num_hidden_layers", kMaxLayers);
  c.heads = r.positive("num_attention_heads", kMaxWidth);
  c.kv_heads = r.positive("num_key_value_heads", kMaxWidth, c.heads);
  c.d_model = r.positive("hidden_size", kMaxWidth);
  c.d_ff = r.positive("intermediate_size", kMaxWidth);
  c.positions = r.positive("max_position_embeddings", kMaxCount);
  c.vocab = r.positive("vocab_size", kMaxCount);
  if (c.heads % c.kv_heads != 0)
    throw InputError(r.where + ": num_key_value_heads (" + std::to_string(c.kv_heads) +
                     ") must divide num_attention_heads (" + std::to_string(c.heads) + ")");
  if (!head_dim_default && !r.has("head_dim") && c.d_model % c.heads != 0)
    throw InputError(r.where + ": the heads (" + std::to_string(c.heads) + ") must divide hidden_size (" +
                     std::to_string(c.d_model) + "), or the config must give head_dim");
  c.head_dim = r.positive("head_dim", kMaxWidth, head_dim_default.value_or(c.d_model / c.heads));
  if (c.head_dim % 2 != 0 || c.heads * c.head_dim > kMaxWidth)
    r.fail("head_dim", "must be even (RoPE turns pairs of dimensions) and heads · head_dim at most " +
                           std::to_string(kMaxWidth) + ", got " + std::to_string(c.head_dim));
}

// [SECTION] The policy
namespace {

// Fields that change what a model computes, with the value that changes
// nothing (null: any value counts). A family implementing one reads it.
struct ComputeField {
  const char* key;
  nlohmann::json neutral;
};

const std::vector<ComputeField>& computeFields() {
  static const std::vector<ComputeField> fields = {
      {"attn_logit_softcapping", nullptr},
      // encoder–decoder blocks (T5, BART and their relatives)
      {"scale_embedding", false},
      {"normalize_before", false},
      {"add_final_layer_norm", false},
      {"static_position_embeddings", false},
      {"normalize_embedding", true},
      {"add_bias_logits", false},
      {"feed_forward_proj", nullptr},
      {"relative_attention_num_buckets", nullptr},
      {"relative_attention_max_distance", nullptr},
      {"final_logit_softcapping", nullptr},
      {"query_pre_attn_scalar", nullptr},
      {"sliding_window", nullptr},
      {"use_sliding_window", false},
      {"sliding_window_pattern", nullptr},
      {"layer_types", nullptr},
      {"rope_parameters", nullptr},
      {"rope_scaling", nullptr},
      {"rope_theta", nullptr},
      {"rope_local_base_freq", nullptr},
      {"partial_rotary_factor", 1.0},
      {"rotary_pct", 1.0},
      {"rotary_emb_base", nullptr},
      {"use_parallel_residual", nullptr},
      {"parallel_attn", nullptr},
      {"qk_layernorm", false},
      {"use_qk_norm", false},
      {"attention_bias", false},
      {"mlp_bias", false},
      {"hidden_act", nullptr},
      {"hidden_activation", nullptr},
      {"activation_function", nullptr},
      {"position_embedding_type", "absolute"},
      {"alibi", false},
      {"apply_residual_connection_post_layernorm", false},
      {"clip_qkv", nullptr},
      {"multi_query", nullptr},
      {"do_layer_norm_before", nullptr},
      {"word_embed_proj_dim", nullptr},
      {"scale_attn_weights", true},
      {"scale_attn_by_inverse_layer_idx", false},
      {"embedding_multiplier", nullptr},
      {"residual_multiplier", nullptr},
      {"attention_multiplier", nullptr},
      {"logits_scaling", nullptr},
      {"logit_scale", nullptr},
      {"global_attn_every_n_layers", nullptr},
      {"local_attention", nullptr},
      {"global_rope_theta", nullptr},
      {"local_rope_theta", nullptr},
      {"norm_bias", nullptr},
  };
  return fields;
}

}  // namespace

void refuseUnread(const ConfigReader& r, const ModelConfig& c) {
  const auto allFull = [](const nlohmann::json& types) {
    return types.is_array() && std::all_of(types.begin(), types.end(), [](const nlohmann::json& t) { return t == "full_attention"; });
  };
  for (const ComputeField& f : computeFields()) {
    if (r.read.count(f.key)) continue;
    const auto it = r.j.find(f.key);
    if (it == r.j.end() || it->is_null()) continue;
    if (!f.neutral.is_null() && *it == f.neutral) continue;
    if (std::string(f.key) == "layer_types" && c.layer_window.empty() && allFull(*it)) continue;
    r.fail(f.key, "is " + it->dump() + ", which " + c.label + " does not implement" +
                      (f.neutral.is_null() ? "" : " (expected " + f.neutral.dump() + ")"));
  }
}

}  // namespace attn
