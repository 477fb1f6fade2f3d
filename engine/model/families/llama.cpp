// The LLaMA family (Touvron et al. 2023), with the Hugging Face semantics of
// LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM and Qwen3ForCausalLM:
//   x = embed_tokens[ids]
//   per layer:  a = RMSNorm(x) · w_in
//               q = a W_qᵀ (+ b_q), k = a W_kᵀ (+ b_k), v = a W_vᵀ (+ b_v)   Qwen2's biases
//               q_h = RMSNorm(q_h) · w_qnorm,  k_g = RMSNorm(k_g) · w_knorm     Qwen3's QK-norm, per head, w [dh]
//               q, k turned by RoPE at their positions (rotate_half layout)
//               head_h = softmax(q_h k_gᵀ / √d_head + causal (+ window)) v_g,  g = h / (H / H_kv)
//               x = x + Concat(head_1 … head_H) W_oᵀ (+ b_o)                  Qwen3's attention_bias
//               a = RMSNorm(x) · w_post
//               x = x + (SiLU(a W_gateᵀ) ⊙ a W_upᵀ) W_downᵀ
//   hidden = RMSNorm(x) · w_norm;  logits = hidden lm_headᵀ
// Mistral is Llama with a sliding window on every layer, Qwen2 Llama with
// biases on q, k, v and, with use_sliding_window, a window on the layers
// from max_window_layers on (or those layer_types names "sliding_attention").
// Qwen3 (transformers' models/qwen3/modeling_qwen3.py) is Qwen2 with QK-norm,
// a head_dim of its own (default 128, not hidden_size / heads) and, with
// attention_bias, biases on q, k, v and o.
// 16-bit weights stay in the map and are converted one matrix at a time.
#include "engine/attention_math.h"
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// The biases are Qwen2's and Qwen3's, the QK-norm weights Qwen3's (absent: empty Weights).
struct LlamaLayer {
  Weight in_norm, q_norm, k_norm, post_norm;
  AttentionWeights attn;
  GatedMlpWeights mlp;
};
struct LlamaWeights : FamilyWeights {
  Weight embed, final_norm;
  std::vector<LlamaLayer> layers;
  std::vector<double> rope_theta;  // θ_i after rope_scaling
};

// transformers' LlamaConfig, MistralConfig and Qwen2Config, both generations
// (rope_parameters or rope_theta / rope_scaling), with their defaults.
void llamaParse(const ConfigReader& r, ModelConfig& c) {
  readSwiGluDecoder(r, c, 1e-6);
  // Qwen2 always has q, k and v biases; Llama when attention_bias is set.
  c.qkv_bias = c.family == "qwen2" || r.flag("attention_bias", false);
  if (r.flag("mlp_bias", false)) r.fail("mlp_bias", "is true, which is not supported (expected false)");
  if (c.family == "mistral") {
    c.sliding_window = r.has("sliding_window") ? r.positive("sliding_window", kMaxCount) : 0;
    if (c.sliding_window > 0) c.layer_window.assign(static_cast<size_t>(c.layers), c.sliding_window);
  } else if (c.family == "qwen2") {
    readQwenWindows(r, c, c.label);
  }
  const std::string eps = formatNumber(c.rms_eps);
  c.blocks = std::string("RMSNorm (ε ") + eps + ") / SwiGLU" + (c.qkv_bias ? ", q/k/v biases" : "") +
             (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

// transformers' Qwen3Config, both generations, with its defaults (head_dim 128).
void qwen3Parse(const ConfigReader& r, ModelConfig& c) {
  // Qwen3Config's head_dim defaults to 128 whatever the width (Qwen3Attention reads config.head_dim).
  readSwiGluDecoder(r, c, 1e-6, 128);
  c.qkv_bias = r.flag("attention_bias", false);
  c.qk_norm = true;
  readQwenWindows(r, c, c.label);
  const std::string eps = formatNumber(c.rms_eps);
  c.blocks = std::string("RMSNorm (ε ") + eps + ") / QK-norm per head / SwiGLU" +
             (c.qkv_bias ? ", q/k/v/o biases" : "") + (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::unique_ptr<FamilyWeights> llamaLoad(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  auto w = std::make_unique<LlamaWeights>();
  w->embed = s.lazy("embed_tokens.weight", {c.vocab, c.d_model});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("layers.", l, "");
    LlamaLayer& y = w->layers.emplace_back();
    y.in_norm = s.take(p + "input_layernorm.weight", {c.d_model});
    y.attn = takeProjections(s, p + "self_attn.", "o_proj", c, c.qkv_bias, c.qk_norm && c.qkv_bias);
    if (c.qk_norm) {
      y.q_norm = s.take(p + "self_attn.q_norm.weight", {c.head_dim});  // one weight for every head
      y.k_norm = s.take(p + "self_attn.k_norm.weight", {c.head_dim});
    }
    y.post_norm = s.take(p + "post_attention_layernorm.weight", {c.d_model});
    y.mlp = takeGatedMlp(s, p + "mlp.", c);
    progress(l);
  }
  w->final_norm = s.take("norm.weight", {c.d_model});
  m.lm_head = lmHeadUnlessTied(s, c, w->embed);
  m.predicts = true;
  w->rope_theta = c.rope.frequencies(c.head_dim);
  return w;
}

void llamaForward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const LlamaWeights& W = m.as<LlamaWeights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  Mat x = embedRows(W.embed, run.ids);
  AttentionSpec att{.heads = c.heads, .kv_heads = c.kv_heads,
                    .scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim)), .rope = &W.rope_theta};
  std::vector<float> scratch;  // the 16-bit matrix being used, as floats
  Mat a, q, k, v, concat, proj, gate, up, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const LlamaLayer& w = W.layers[static_cast<size_t>(l)];
    // a = RMSNorm(x) · w_in; q, k, v                                [L, H·dh], [L, Hkv·dh] × 2
    rmsNorm(x, w.in_norm, c.rms_eps, a);
    linearT(a, w.attn.q_w, w.attn.q_b, scratch, &run.flops, q);
    linearT(a, w.attn.k_w, w.attn.k_b, scratch, &run.flops, k);
    linearT(a, w.attn.v_w, w.attn.v_b, scratch, &run.flops, v);
    if (c.qk_norm) {  // Qwen3: each head's dh columns RMS-normalised, one weight [dh] for all heads
      record(run, l, QkStage::Projected, att, q, k);
      rmsNormHeads(q, c.heads, w.q_norm, c.rms_eps);
      rmsNormHeads(k, c.kv_heads, w.k_norm, c.rms_eps);
    }
    // RoPE at positions p0 … p0 + L − 1; causal, aligned to the bottom right (query i is position p0 + i);
    // on a layer with a window W, key j is kept while p0 + i − j < W (transformers' rule)
    att.keys = KeyRange{p0, T, true, c.windowOf(l)};
    attend(run, l, att, q, k, v, cache, ctx, concat);
    // x = x + Concat(head_1 … head_H) W_oᵀ (+ b_o)                  [L, d]
    linearT(concat, w.attn.o_w, w.attn.o_b, scratch, &run.flops, proj);
    headWrites(run, l, concat, proj, [&](const Mat& in, Mat& o) { linearT(in, w.attn.o_w, w.attn.o_b, scratch, &run.flops, o); });
    x += proj;
    // x = x + (SiLU(a W_gateᵀ) ⊙ a W_upᵀ) W_downᵀ,  a = RMSNorm(x) · w_post     [L, d_ff] → [L, d]
    rmsNorm(x, w.post_norm, c.rms_eps, a);
    gatedMlp(a, w.mlp.gate, w.mlp.up, w.mlp.down, Activation::Silu, scratch, &run.flops, gate, up, down);
    x += down;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  enterLayer(run, c.layers, x);  // the stream the final norm reads
  finalRmsNorm(run, x, W.final_norm, c.rms_eps, run.hidden);
}

Family llamaLike(const std::string& model_type, const std::string& label, const std::string& arch,
                 const std::string& paper, std::function<void(const ConfigReader&, ModelConfig&)> parse = llamaParse) {
  Family f;
  f.model_type = model_type;
  f.label = label;
  f.architectures = {arch + "ForCausalLM", arch + "Model"};
  f.paper = paper;
  f.prefix = "model.";
  f.probe = "embed_tokens.weight";
  f.parse = std::move(parse);
  // Older checkpoints saved RoPE's inverse frequencies.
  f.buffer = [](const std::string& name) {
    return name.rfind("layers.", 0) == 0 && name.ends_with(".self_attn.rotary_emb.inv_freq");
  };
  f.load = llamaLoad;
  f.forward = llamaForward;
  return f;
}

}  // namespace

Family makeLlamaFamily() { return llamaLike("llama", "Llama", "Llama", "Touvron et al. 2023"); }
Family makeMistralFamily() { return llamaLike("mistral", "Mistral", "Mistral", "Jiang et al. 2023"); }
Family makeQwen2Family() { return llamaLike("qwen2", "Qwen2", "Qwen2", "Yang et al. 2024"); }
Family makeQwen3Family() { return llamaLike("qwen3", "Qwen3", "Qwen3", "Yang et al. 2025", qwen3Parse); }

}  // namespace attn
