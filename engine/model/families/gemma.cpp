// The Gemma family (Gemma Team 2024, 2024b, 2025), with the Hugging Face
// semantics of GemmaForCausalLM, Gemma2ForCausalLM and Gemma3ForCausalLM
// (transformers' modeling_gemma.py, modeling_gemma2.py, modeling_gemma3.py):
//   x = embed_tokens[ids] · √d_model          (the normalizer in the pass's dtype, float32 here)
//   RMSNorm_w(x) = x / √(mean(x²) + ε) · (1 + w)   every norm, the stored w is the offset from 1
//   per layer:  a = RMSNorm_in(x)
//               q = a W_qᵀ, k = a W_kᵀ, v = a W_vᵀ                  [L, H·dh], [L, H_kv·dh] ×2
//               Gemma 3: q, k = RMSNorm_qnorm / RMSNorm_knorm per head   (before RoPE)
//               q, k turned by RoPE (Gemma 3: base rope_local_base_freq on sliding layers)
//               s = q_h k_gᵀ · scale,  scale = 1/√dh (Gemma), query_pre_attn_scalar^−½ (2, 3)
//               Gemma 2 (3 when set): s → c·tanh(s/c), c = attn_logit_softcapping, before the mask
//               head_h = softmax(s + causal (+ window on sliding layers)) v_g,  g = h / (H / H_kv)
//               o = Concat(head_1 … head_H) W_oᵀ
//               Gemma:    x = x + o;               x = x + MLP(RMSNorm_post_attn(x))
//               Gemma 2/3: x = x + RMSNorm_post_attn(o);  x = x + RMSNorm_post_ff(MLP(RMSNorm_pre_ff(x)))
//               MLP(a) = (GELU_tanh(a W_gateᵀ) ⊙ a W_upᵀ) W_downᵀ       (GeGLU)
//   hidden = RMSNorm_norm(x);  logits = hidden lm_headᵀ (tied: embed_tokens)
//   Gemma 2 (3 when set): logits → c·tanh(logits/c), c = final_logit_softcapping
// Sliding and global layers: Gemma 2 alternates (layer_types, or even layers
// sliding), Gemma 3 has five sliding to one global (layer_types, or
// sliding_window_pattern: layer l is global when (l + 1) % pattern == 0).
// A sliding layer keeps key j for query position i while i − j < sliding_window.
// 16-bit weights stay in the map and are converted one matrix at a time.
#include "engine/attention_math.h"
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/families/family.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// Norms [d] (q/k norms [dh]); absent: empty Weight.
struct GemmaLayer {
  Weight in_norm, q_norm, k_norm;
  Weight post_attn_norm, pre_ff_norm, post_ff_norm;  // Gemma: post_attention_layernorm is the MLP's pre-norm
  AttentionWeights attn;
  GatedMlpWeights mlp;
};
struct GemmaWeights : FamilyWeights {
  Weight embed, final_norm;
  std::vector<GemmaLayer> layers;
  std::vector<std::vector<double>> rope_theta;  // [layer] θ_i (Gemma 3's sliding layers: the local base)
};

// 1, 2 or 3.
int gemmaGeneration(const ModelConfig& c) { return c.family == "gemma" ? 1 : c.family == "gemma2" ? 2 : 3; }

// A soft-cap field: transformers' default when absent, none when null, else a positive number.
double gemmaSoftcap(const ConfigReader& r, const std::string& key, double absent) {
  const auto it = r.j.find(key);
  r.read.insert(key);
  if (it == r.j.end()) return absent;
  if (it->is_null()) return 0;
  return r.number(key, std::nullopt, 1e-6, 1e6);
}

// transformers' GemmaConfig, Gemma2Config and Gemma3TextConfig, both
// generations (rope_parameters / layer_types, or rope_theta, rope_scaling,
// rope_local_base_freq, sliding_window_pattern), with their defaults.
void gemmaParse(const ConfigReader& r, ModelConfig& c) {
  const int gen = gemmaGeneration(c);
  c.layers = r.positive("num_hidden_layers", kMaxLayers);
  c.heads = r.positive("num_attention_heads", kMaxWidth);
  c.kv_heads = r.positive("num_key_value_heads", kMaxWidth, gen == 1 ? 16 : 4);
  c.d_model = r.positive("hidden_size", kMaxWidth);
  c.d_ff = r.positive("intermediate_size", kMaxWidth);
  c.vocab = r.positive("vocab_size", kMaxCount);
  c.positions = r.positive("max_position_embeddings", kMaxCount, gen == 3 ? 131072 : 8192);
  if (c.heads % c.kv_heads != 0)
    throw InputError(r.where + ": num_key_value_heads (" + std::to_string(c.kv_heads) +
                     ") must divide num_attention_heads (" + std::to_string(c.heads) + ")");
  // head_dim is its own field (default 256), not hidden_size / heads.
  c.head_dim = r.positive("head_dim", kMaxWidth, 256);
  if (c.head_dim % 2 != 0 || c.heads * c.head_dim > kMaxWidth)
    r.fail("head_dim", "must be even (RoPE turns pairs of dimensions) and heads · head_dim at most " +
                           std::to_string(kMaxWidth) + ", got " + std::to_string(c.head_dim));
  c.rms_eps = r.epsilon("rms_norm_eps", 1e-6);
  c.tie_embeddings = r.flag("tie_word_embeddings", true);
  if (r.flag("attention_bias", false))
    r.fail("attention_bias", "is true, which is not supported for " + c.label + " (expected false)");
  if (r.flag("use_bidirectional_attention", false))
    r.fail("use_bidirectional_attention", "is true, which is not supported for " + c.label + " (expected false or null)");
  r.read.insert("mlp_bias");  // Gemma's MLP has no biases whatever the config says

  // The MLP's GELU. Gemma reads hidden_activation, and configs without it
  // hidden_act; Gemma 1.0 configs say hidden_act "gelu", which transformers
  // 4.39–4.47 (and Google's reference) compute as the tanh GELU. Gemma 2 and
  // 3 read hidden_activation only (their configs also carry hidden_act, unused).
  if (gen == 1) {
    if (r.has("hidden_activation")) r.oneOf("hidden_activation", "gelu_pytorch_tanh", {"gelu_pytorch_tanh"});
    r.oneOf("hidden_act", "gelu_pytorch_tanh", {"gelu_pytorch_tanh", "gelu"});
  } else {
    r.oneOf("hidden_activation", "gelu_pytorch_tanh", {"gelu_pytorch_tanh"});
    r.read.insert("hidden_act");
  }
  c.activation = "gelu_pytorch_tanh";

  // Sliding and global layers, and each one's window.
  std::vector<std::string> types(static_cast<size_t>(c.layers), "full_attention");
  if (gen == 2) {
    types = readLayerTypes(r, c.layers, [](int64_t l) { return l % 2 == 0 ? "sliding_attention" : "full_attention"; });
  } else if (gen == 3) {
    const int64_t pattern = r.positive("sliding_window_pattern", kMaxLayers, 6);
    types = readLayerTypes(r, c.layers, [pattern](int64_t l) {
      return (l + 1) % pattern != 0 ? "sliding_attention" : "full_attention";
    });
  }
  const bool any_sliding = std::find(types.begin(), types.end(), "sliding_attention") != types.end();
  if (gen >= 2) {
    const auto it = r.j.find("sliding_window");
    if (any_sliding && it != r.j.end() && it->is_null())
      r.fail("sliding_window", "is null, but layers are sliding_attention (expected the window)");
    const int64_t window = r.positive("sliding_window", kMaxCount, 4096);
    if (any_sliding) {
      c.sliding_window = window;
      for (const std::string& t : types) c.layer_window.push_back(t == "sliding_attention" ? window : 0);
    }
    c.score_scale = 1.0 / std::sqrt(r.number("query_pre_attn_scalar", 256.0, 1e-6, 1e12));
    c.attn_softcap = gemmaSoftcap(r, "attn_logit_softcapping", gen == 2 ? 50.0 : 0.0);
    c.final_softcap = gemmaSoftcap(r, "final_logit_softcapping", gen == 2 ? 30.0 : 0.0);
  }

  // RoPE: Gemma 3's sliding layers have their own base and no scaling.
  c.uses_rope = true;
  if (gen < 3) {
    c.rope = readRope(r, "", 10000.0);
    // One RoPE for every layer: a per-type rope_parameters must give the same to both kinds.
    const nlohmann::json* p = r.find("rope_parameters");
    if (p && p->is_object() && p->contains("sliding_attention") && p->at("sliding_attention").is_object() &&
        !(readRope(r, "sliding_attention", 10000.0) == c.rope))
      r.fail("rope_parameters", "gives sliding_attention layers their own RoPE, which " + c.label +
                                    " does not implement (expected one for all layers)");
  } else {
    c.qk_norm = true;
    const nlohmann::json* p = r.find("rope_parameters");
    if (p) {
      // transformers 5 writes one entry per layer type.
      const bool nested = p->is_object() && !p->empty() &&
                          std::all_of(p->begin(), p->end(), [](const nlohmann::json& v) { return v.is_object(); });
      if (!nested)
        r.fail("rope_parameters", "must give an entry per layer type ({\"full_attention\": {…}, \"sliding_attention\": "
                                  "{…}}) for Gemma 3, got " + p->dump());
      c.rope = readRope(r, "full_attention", 1e6);
      if (any_sliding) c.rope_local = readRope(r, "sliding_attention", 10000.0);
      r.read.insert("rope_local_base_freq");  // superseded by rope_parameters
    } else {
      c.rope = readRope(r, "", 1e6);  // rope_theta and rope_scaling: the global layers'
      c.rope_local.theta = r.number("rope_local_base_freq", 10000.0, 1.0, 1e12);
    }
    c.local_rope = any_sliding;
  }

  const std::string eps = formatNumber(c.rms_eps);
  c.blocks = std::string("RMSNorm (1 + w, ε ") + eps + ")" + (gen >= 2 ? " before and after attention and MLP" : "") +
             " / GeGLU (tanh GELU), embeddings × √d" + (gen == 3 ? ", q/k RMSNorm per head" : "") +
             (c.attn_softcap > 0 ? ", score soft-cap" : "") + (c.final_softcap > 0 ? ", logit soft-cap" : "") +
             (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::unique_ptr<FamilyWeights> gemmaLoad(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int gen = gemmaGeneration(c);
  const int64_t d = c.d_model;
  auto w = std::make_unique<GemmaWeights>();
  w->embed = s.lazy("embed_tokens.weight", {c.vocab, d});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("layers.", l, "");
    GemmaLayer& y = w->layers.emplace_back();
    y.in_norm = s.take(p + "input_layernorm.weight", {d});
    y.attn = takeProjections(s, p + "self_attn.", "o_proj", c, false, false);
    if (gen == 3) {
      y.q_norm = s.take(p + "self_attn.q_norm.weight", {c.head_dim});
      y.k_norm = s.take(p + "self_attn.k_norm.weight", {c.head_dim});
    }
    y.post_attn_norm = s.take(p + "post_attention_layernorm.weight", {d});
    if (gen >= 2) {
      y.pre_ff_norm = s.take(p + "pre_feedforward_layernorm.weight", {d});
      y.post_ff_norm = s.take(p + "post_feedforward_layernorm.weight", {d});
    }
    y.mlp = takeGatedMlp(s, p + "mlp.", c);
    w->rope_theta.push_back(c.ropeOf(l).frequencies(c.head_dim));
    progress(l);
  }
  w->final_norm = s.take("norm.weight", {d});
  m.lm_head = lmHeadUnlessTied(s, c, w->embed);
  m.predicts = true;
  return w;
}

void gemmaForward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const GemmaWeights& W = m.as<GemmaWeights>();
  const int gen = gemmaGeneration(c);
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  // x = embed_tokens[ids] · √d, the normalizer a float as transformers casts it to the hidden dtype   [L, d]
  Mat x = embedRows(W.embed, run.ids);
  x *= static_cast<float>(std::sqrt(static_cast<double>(c.d_model)));
  // s → c·tanh(s / c) before the mask (Gemma 2; 3 when set)
  AttentionSpec att{.heads = c.heads, .kv_heads = c.kv_heads,
                    .scale = c.score_scale > 0 ? static_cast<float>(c.score_scale)
                                               : 1.0f / std::sqrt(static_cast<float>(c.head_dim)),
                    .mods = {.softcap = c.attn_softcap}};
  std::vector<float> scratch;  // the 16-bit matrix being used, as floats
  Mat a, q, k, v, concat, proj, normed, gate, up, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const size_t li = static_cast<size_t>(l);
    const GemmaLayer& w = W.layers[li];
    // a = RMSNorm_in(x); q, k, v                                   [L, H·dh], [L, Hkv·dh] × 2
    rmsNorm(x, w.in_norm, c.rms_eps, a, 1.0f);
    linearT(a, w.attn.q_w, Weight{}, scratch, &run.flops, q);
    linearT(a, w.attn.k_w, Weight{}, scratch, &run.flops, k);
    linearT(a, w.attn.v_w, Weight{}, scratch, &run.flops, v);
    if (gen == 3) {
      // Gemma 3: each head of q and k RMS-normalised (1 + w, w [dh]) before RoPE
      record(run, l, QkStage::Projected, att, q, k);
      rmsNormHeads(q, c.heads, w.q_norm, c.rms_eps, 1.0f);
      rmsNormHeads(k, c.kv_heads, w.k_norm, c.rms_eps, 1.0f);
    }
    // RoPE at positions p0 … p0 + L − 1 (the layer's base); causal, aligned to the bottom right
    // (query i is position p0 + i); on a sliding layer key j is kept while p0 + i − j < sliding_window
    att.rope = &W.rope_theta[li];
    att.keys = KeyRange{p0, T, true, c.windowOf(l)};
    // softmax(softcap(q kᵀ · scale) + mask) v per head
    attend(run, l, att, q, k, v, cache, ctx, concat);
    // o = Concat(head_1 … head_H) W_oᵀ                             [L, d]
    linearT(concat, w.attn.o_w, Weight{}, scratch, &run.flops, proj);
    headWrites(run, l, concat, proj, [&](const Mat& in, Mat& o) { linearT(in, w.attn.o_w, Weight{}, scratch, &run.flops, o); });
    if (gen == 1) {
      x += proj;  // x = x + o;  a = RMSNorm_post_attn(x)
      rmsNorm(x, w.post_attn_norm, c.rms_eps, a, 1.0f);
    } else {
      rmsNorm(proj, w.post_attn_norm, c.rms_eps, normed, 1.0f);  // x = x + RMSNorm_post_attn(o)
      x += normed;
      rmsNorm(x, w.pre_ff_norm, c.rms_eps, a, 1.0f);  // a = RMSNorm_pre_ff(x)
    }
    // MLP(a) = (GELU_tanh(a W_gateᵀ) ⊙ a W_upᵀ) W_downᵀ              [L, d_ff] → [L, d]
    gatedMlp(a, w.mlp.gate, w.mlp.up, w.mlp.down, Activation::GeluTanh, scratch, &run.flops, gate, up, down);
    if (gen == 1) {
      x += down;  // x = x + MLP(a)
    } else {
      rmsNorm(down, w.post_ff_norm, c.rms_eps, normed, 1.0f);  // x = x + RMSNorm_post_ff(MLP(a))
      x += normed;
    }
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  enterLayer(run, c.layers, x);  // the stream the final norm reads
  rmsNorm(x, W.final_norm, c.rms_eps, run.hidden, 1.0f);
}

// logits = hidden lm_headᵀ, then Gemma 2's final soft-cap c·tanh(z/c)     [rows, V]
Mat gemmaLogits(const Model& m, const Mat& hidden, double* flops) {
  Mat z = lmHeadLogits(m.lm_head, hidden, flops);
  const double cap = m.info.config.final_softcap;
  if (cap > 0) z = z.unaryExpr([cap](float s) { return static_cast<float>(cap * std::tanh(s / cap)); });
  return z;
}

// llama.cpp's names for Gemma's tensors, every norm saved as 1 + w (the
// converter adds the 1 of Gemma's RMSNorm). Gemma's MLP norm is ffn_norm;
// Gemma 2 and 3 name theirs post_attention_norm, ffn_norm (before the MLP)
// and post_ffw_norm. No lm_head: the converter drops it (the head is tied).
std::vector<GgufTensorName> gemmaGgufTensors(int gen) {
  const GgufUndo one = GgufUndo::NormPlusOne;
  const std::string l = "model.layers.#.", a = l + "self_attn.", m = l + "mlp.";
  std::vector<GgufTensorName> t = {{"token_embd.weight", "model.embed_tokens.weight"},
                                   {"output_norm.weight", "model.norm.weight", one},
                                   {"blk.#.attn_norm.weight", l + "input_layernorm.weight", one},
                                   {"blk.#.attn_q.weight", a + "q_proj.weight"},
                                   {"blk.#.attn_k.weight", a + "k_proj.weight"},
                                   {"blk.#.attn_v.weight", a + "v_proj.weight"},
                                   {"blk.#.attn_output.weight", a + "o_proj.weight"},
                                   {"blk.#.ffn_gate.weight", m + "gate_proj.weight"},
                                   {"blk.#.ffn_up.weight", m + "up_proj.weight"},
                                   {"blk.#.ffn_down.weight", m + "down_proj.weight"}};
  if (gen == 1) {
    t.push_back({"blk.#.ffn_norm.weight", l + "post_attention_layernorm.weight", one});
  } else {
    t.push_back({"blk.#.post_attention_norm.weight", l + "post_attention_layernorm.weight", one});
    t.push_back({"blk.#.ffn_norm.weight", l + "pre_feedforward_layernorm.weight", one});
    t.push_back({"blk.#.post_ffw_norm.weight", l + "post_feedforward_layernorm.weight", one});
  }
  if (gen == 3) {
    t.push_back({"blk.#.attn_q_norm.weight", a + "q_norm.weight", one});
    t.push_back({"blk.#.attn_k_norm.weight", a + "k_norm.weight", one});
  }
  return t;
}

// config.json from the GGUF keys, with what llama.cpp hard-codes rather than
// reads (llama-model.cpp): the score scale (query_pre_attn_scalar: head_dim,
// or d / heads for the 27B models, told by their layer count), Gemma 2's
// alternation (even layers sliding, as transformers' default), Gemma 3's five
// sliding layers to one global (pattern 6), and Gemma 1 and 2's RoPE base
// 10000 (their converters write none).
void gemmaGgufConfig(GgufKeys& k, nlohmann::json& c) {
  ggufDecoderConfig(k, c);
  const std::string type = c["model_type"].get<std::string>();
  if (type == "gemma") return;
  const int64_t layers = c["num_hidden_layers"], d = c["hidden_size"], heads = c["num_attention_heads"];
  const bool is_27b = layers == (type == "gemma2" ? 46 : 62);
  c["query_pre_attn_scalar"] = is_27b ? d / heads : c["head_dim"].get<int64_t>();
  if (type == "gemma2") {
    // llama.cpp's defaults where the keys are absent are transformers' (50, 30, 4096).
    c["attn_logit_softcapping"] = k.number("attn_logit_softcapping", 50.0);
    c["final_logit_softcapping"] = k.number("final_logit_softcapping", 30.0);
    c["sliding_window"] = k.count("attention.sliding_window", kMaxCount, 4096);
    return;
  }
  // Gemma 3: no score soft-cap (its converter asserts none); a window of 0 or none: every layer global.
  c["final_logit_softcapping"] = k.has("final_logit_softcapping") ? nlohmann::json(k.number("final_logit_softcapping"))
                                                                  : nlohmann::json(nullptr);
  // The sliding layers' base as the converter wrote it from the checkpoint (llama.cpp runs them at 10000
  // whatever the file says, the base of every released Gemma 3).
  c["rope_local_base_freq"] = k.number("rope.freq_base_swa", 10000.0);
  const int64_t window = k.whole("attention.sliding_window", kMaxCount, 0);
  c["sliding_window_pattern"] = window > 0 ? 6 : 1;
  if (window > 0) c["sliding_window"] = window;
}

Family gemmaLike(const std::string& model_type, const std::string& label, std::vector<std::string> archs,
                 const std::string& paper) {
  Family f;
  f.model_type = model_type;
  f.label = label;
  f.architectures = std::move(archs);
  f.paper = paper;
  f.prefix = "model.";
  f.probe = "embed_tokens.weight";
  f.parse = gemmaParse;
  f.load = gemmaLoad;
  f.forward = gemmaForward;
  f.logits = gemmaLogits;
  return f;
}

}  // namespace

Family makeGemmaFamily() {
  Family f = gemmaLike("gemma", "Gemma", {"GemmaForCausalLM", "GemmaModel"}, "Gemma Team 2024");
  f.gguf = {{"gemma", "GemmaForCausalLM", gemmaGgufConfig, gemmaGgufTensors(1)}};
  return f;
}
Family makeGemma2Family() {
  Family f = gemmaLike("gemma2", "Gemma 2", {"Gemma2ForCausalLM", "Gemma2Model"}, "Gemma Team 2024b");
  f.gguf = {{"gemma2", "Gemma2ForCausalLM", gemmaGgufConfig, gemmaGgufTensors(2)}};
  return f;
}
// Text only: Gemma3ForConditionalGeneration (model_type "gemma3", with the vision tower) is not a family here.
Family makeGemma3Family() {
  Family f = gemmaLike("gemma3_text", "Gemma 3", {"Gemma3ForCausalLM", "Gemma3TextModel"}, "Gemma Team 2025");
  f.gguf = {{"gemma3", "Gemma3ForCausalLM", gemmaGgufConfig, gemmaGgufTensors(3)}};
  return f;
}

}  // namespace attn
