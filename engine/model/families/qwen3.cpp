// Qwen3 (Yang et al. 2025), with the Hugging Face semantics of Qwen3ForCausalLM
// (transformers' models/qwen3/modeling_qwen3.py): Llama with QK-norm, an
// RMSNorm over each head of q and k (one weight [head_dim] each) before RoPE,
// and a head_dim of its own (not hidden_size / heads):
//   x = embed_tokens[ids]
//   per layer:  a = RMSNorm(x) · w_in                                       [L, d]
//               q = a W_qᵀ (+ b_q), k = a W_kᵀ (+ b_k), v = a W_vᵀ (+ b_v)   [L, H·dh], [L, Hkv·dh] × 2
//               q_h = RMSNorm(q_h) · w_qnorm,  k_g = RMSNorm(k_g) · w_knorm  per head, w [dh]
//               q, k turned by RoPE at their positions (rotate_half layout)
//               head_h = softmax(q_h k_gᵀ / √dh + causal (+ window)) v_g,  g = h / (H / Hkv)
//               x = x + Concat(head_1 … head_H) W_oᵀ (+ b_o)
//               a = RMSNorm(x) · w_post
//               x = x + (SiLU(a W_gateᵀ) ⊙ a W_upᵀ) W_downᵀ
//   hidden = RMSNorm(x) · w_norm;  logits = hidden lm_headᵀ (tied: embed_tokens)
// The biases (q, k, v and o) exist when attention_bias is set. With
// use_sliding_window, the layers from max_window_layers on (or those
// layer_types names "sliding_attention") keep keys j with i − j < sliding_window.
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// The projections' biases absent unless attention_bias.
struct Qwen3Layer {
  Weight in_norm, q_norm, k_norm, post_norm;
  AttentionWeights attn;
  GatedMlpWeights mlp;
};
struct Qwen3Weights : FamilyWeights {
  Weight embed, final_norm;
  std::vector<Qwen3Layer> layers;
  std::vector<double> rope_theta;  // θ_i after rope_scaling
};

// transformers' Qwen3Config, both generations, with its defaults (head_dim 128).
void qwen3Parse(const ConfigReader& r, ModelConfig& c) {
  // Qwen3Config's head_dim defaults to 128 whatever the width (Qwen3Attention reads config.head_dim).
  readDecoderSizes(r, c, 128);
  c.rms_eps = r.epsilon("rms_norm_eps", 1e-6);
  c.uses_rope = true;
  c.rope = readRope(r, "", 10000.0);
  c.activation = r.oneOf("hidden_act", "silu", {"silu"});
  c.tie_embeddings = r.flag("tie_word_embeddings", false);
  c.qkv_bias = r.flag("attention_bias", false);
  c.qk_norm = true;
  readQwenWindows(r, c, c.label);
  char eps[32];
  std::snprintf(eps, sizeof eps, "%g", c.rms_eps);
  c.blocks = std::string("RMSNorm (ε ") + eps + ") / QK-norm per head / SwiGLU" +
             (c.qkv_bias ? ", q/k/v/o biases" : "") + (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::unique_ptr<FamilyWeights> qwen3Load(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  auto w = std::make_unique<Qwen3Weights>();
  w->embed = s.lazy("embed_tokens.weight", {c.vocab, c.d_model});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("layers.", l, "");
    Qwen3Layer& y = w->layers.emplace_back();
    y.in_norm = s.take(p + "input_layernorm.weight", {c.d_model});
    y.attn = takeProjections(s, p + "self_attn.", "o_proj", c, c.qkv_bias, c.qkv_bias);
    y.q_norm = s.take(p + "self_attn.q_norm.weight", {c.head_dim});  // one weight for every head
    y.k_norm = s.take(p + "self_attn.k_norm.weight", {c.head_dim});
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

void qwen3Forward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const Qwen3Weights& W = m.as<Qwen3Weights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  Mat x = embedRows(W.embed, run.ids);
  AttentionSpec att{.heads = c.heads, .kv_heads = c.kv_heads,
                    .scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim)), .rope = &W.rope_theta};
  std::vector<float> scratch;  // the 16-bit matrix being used, as floats
  Mat a, q, k, v, concat, proj, gate, up, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    const Qwen3Layer& w = W.layers[static_cast<size_t>(l)];
    // a = RMSNorm(x) · w_in; q, k, v                                [L, H·dh], [L, Hkv·dh] × 2
    rmsNorm(x, w.in_norm, c.rms_eps, a);
    linearT(a, w.attn.q_w, w.attn.q_b, scratch, &run.flops, q);
    linearT(a, w.attn.k_w, w.attn.k_b, scratch, &run.flops, k);
    linearT(a, w.attn.v_w, w.attn.v_b, scratch, &run.flops, v);
    // QK-norm: each head's dh columns RMS-normalised, one weight [dh] for all heads
    record(run, l, QkStage::Projected, att, q, k);
    rmsNormHeads(q, c.heads, w.q_norm, c.rms_eps);
    rmsNormHeads(k, c.kv_heads, w.k_norm, c.rms_eps);
    // RoPE at positions p0 … p0 + L − 1; causal, query i at position p0 + i; on a sliding layer
    // key j is kept while p0 + i − j < W
    att.keys = KeyRange{p0, T, true, c.windowOf(l)};
    attend(run, l, att, q, k, v, cache, ctx, concat);
    // x = x + Concat(head_1 … head_H) W_oᵀ (+ b_o)                  [L, d]
    linearT(concat, w.attn.o_w, w.attn.o_b, scratch, &run.flops, proj);
    x += proj;
    // x = x + (SiLU(a W_gateᵀ) ⊙ a W_upᵀ) W_downᵀ,  a = RMSNorm(x) · w_post     [L, d_ff] → [L, d]
    rmsNorm(x, w.post_norm, c.rms_eps, a);
    gatedMlp(a, w.mlp.gate, w.mlp.up, w.mlp.down, Activation::Silu, scratch, &run.flops, gate, up, down);
    x += down;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  rmsNorm(x, W.final_norm, c.rms_eps, run.hidden);
}

}  // namespace

Family makeQwen3Family() {
  Family f;
  f.model_type = "qwen3";
  f.label = "Qwen3";
  f.architectures = {"Qwen3ForCausalLM", "Qwen3Model"};
  f.paper = "Yang et al. 2025";
  f.prefix = "model.";
  f.probe = "embed_tokens.weight";
  f.parse = qwen3Parse;
  f.load = qwen3Load;
  f.forward = qwen3Forward;
  return f;
}

}  // namespace attn
