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

// nn.Linear layouts [out, in]; biases absent unless attention_bias.
struct Qwen3Layer {
  Weight in_norm, q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b, q_norm, k_norm, post_norm, gate_w, up_w, down_w;
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

std::vector<Expected> qwen3Body(const ModelConfig& c) {
  const int64_t d = c.d_model, ff = c.d_ff, dh = c.head_dim, qd = c.heads * dh, kvd = c.kv_heads * dh;
  std::vector<Expected> e = {{"embed_tokens.weight", {c.vocab, d}}};
  for (int64_t l = 0; l < c.layers; ++l) {
    auto add = [&](const std::string& rest, std::vector<int64_t> shape) {
      e.push_back({layerName("layers.", l, rest), std::move(shape)});
    };
    add("input_layernorm.weight", {d});
    add("self_attn.q_proj.weight", {qd, d}), add("self_attn.k_proj.weight", {kvd, d});  // nn.Linear [out, in]
    add("self_attn.v_proj.weight", {kvd, d}), add("self_attn.o_proj.weight", {d, qd});
    if (c.qkv_bias)
      add("self_attn.q_proj.bias", {qd}), add("self_attn.k_proj.bias", {kvd}), add("self_attn.v_proj.bias", {kvd}),
          add("self_attn.o_proj.bias", {d});
    add("self_attn.q_norm.weight", {dh}), add("self_attn.k_norm.weight", {dh});
    add("post_attention_layernorm.weight", {d});
    add("mlp.gate_proj.weight", {ff, d}), add("mlp.up_proj.weight", {ff, d}), add("mlp.down_proj.weight", {d, ff});
  }
  e.push_back({"norm.weight", {d}});
  return e;
}

std::unique_ptr<FamilyWeights> qwen3Load(const WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  auto w = std::make_unique<Qwen3Weights>();
  w->embed = s.lazy("embed_tokens.weight");
  for (int64_t l = 0; l < c.layers; ++l) {
    auto t = [&](const std::string& rest) { return s.take(layerName("layers.", l, rest)); };
    auto lazy = [&](const std::string& rest) { return s.lazy(layerName("layers.", l, rest)); };
    w->layers.push_back({t("input_layernorm.weight"), lazy("self_attn.q_proj.weight"), t("self_attn.q_proj.bias"),
                         lazy("self_attn.k_proj.weight"), t("self_attn.k_proj.bias"), lazy("self_attn.v_proj.weight"),
                         t("self_attn.v_proj.bias"), lazy("self_attn.o_proj.weight"), t("self_attn.o_proj.bias"),
                         t("self_attn.q_norm.weight"), t("self_attn.k_norm.weight"),
                         t("post_attention_layernorm.weight"), lazy("mlp.gate_proj.weight"),
                         lazy("mlp.up_proj.weight"), lazy("mlp.down_proj.weight")});
    progress(l);
  }
  w->final_norm = s.take("norm.weight");
  m.lm_head = c.tie_embeddings ? w->embed : s.lazyFull("lm_head.weight");
  m.predicts = true;
  w->rope_theta = c.rope.frequencies(c.head_dim);
  return w;
}

void qwen3Forward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const Qwen3Weights& W = m.as<Qwen3Weights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  const int64_t H = c.heads, Hkv = c.kv_heads, dh = c.head_dim;
  const size_t layers = static_cast<size_t>(c.layers);
  Mat x = embedRows(W.embed, run.ids);
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  run.q_unrotated.resize(layers), run.k_unrotated.resize(layers);
  run.q_prenorm.resize(layers), run.k_prenorm.resize(layers);
  std::vector<float> scratch;  // the 16-bit matrix being used, as floats
  Mat a, q, k, v, concat, proj, gate, up, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    const size_t li = static_cast<size_t>(l);
    const Qwen3Layer& w = W.layers[li];
    // a = RMSNorm(x) · w_in; q, k, v                                [L, H·dh], [L, Hkv·dh] × 2
    rmsNorm(x, w.in_norm, c.rms_eps, a);
    linearT(a, w.q_w, w.q_b, scratch, &run.flops, q);
    linearT(a, w.k_w, w.k_b, scratch, &run.flops, k);
    linearT(a, w.v_w, w.v_b, scratch, &run.flops, v);
    if (run.keep_projections) {
      run.q_prenorm[li] = q;
      run.k_prenorm[li] = repeatKvHeads(k, H, Hkv, dh);
    }
    // QK-norm: each head's dh columns RMS-normalised, one weight [dh] for all heads
    rmsNormHeads(q, H, w.q_norm, c.rms_eps);
    rmsNormHeads(k, Hkv, w.k_norm, c.rms_eps);
    if (run.keep_projections) {
      run.q_unrotated[li] = q;
      run.k_unrotated[li] = repeatKvHeads(k, H, Hkv, dh);
    }
    // RoPE: positions p0 … p0 + L − 1
    ropeHeads(q, H, dh, W.rope_theta, p0);
    ropeHeads(k, Hkv, dh, W.rope_theta, p0);
    if (run.keep_projections) {
      run.k[li] = repeatKvHeads(k, H, Hkv, dh);
      run.v[li] = repeatKvHeads(v, H, Hkv, dh);
    }
    const auto [K, V] = keysWithCache(cache, l, k, v);
    // Causal, query i at position p0 + i; on a sliding layer key j is kept while p0 + i − j < W.
    attentionLayer(q, *K, *V, KeyRange{p0, T, true, c.windowOf(l)}, H, Hkv, scale, ctx, run, l, concat);
    if (run.keep_projections) run.q[li] = std::move(q);
    // x = x + Concat(head_1 … head_H) W_oᵀ (+ b_o)                  [L, d]
    linearT(concat, w.o_w, w.o_b, scratch, &run.flops, proj);
    x += proj;
    // x = x + (SiLU(a W_gateᵀ) ⊙ a W_upᵀ) W_downᵀ,  a = RMSNorm(x) · w_post     [L, d_ff] → [L, d]
    rmsNorm(x, w.post_norm, c.rms_eps, a);
    gatedMlp(a, w.gate_w, w.up_w, w.down_w, Activation::Silu, scratch, &run.flops, gate, up, down);
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
  f.body = qwen3Body;
  f.heads = lmHeadUnlessTied;
  f.load = qwen3Load;
  f.forward = qwen3Forward;
  return f;
}

}  // namespace attn
