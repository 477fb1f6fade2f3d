// OLMo 2 (OLMo et al. 2024), with the Hugging Face semantics of
// Olmo2ForCausalLM (transformers' models/olmo2/modeling_olmo2.py): norms
// after each sublayer instead of before, and an RMSNorm over the WHOLE q and
// k projections (not per head) before RoPE:
//   x = embed_tokens[ids]
//   per layer:  q = x W_qᵀ, k = x W_kᵀ, v = x W_vᵀ (+ biases with attention_bias)  [L, H·dh], [L, Hkv·dh] × 2
//               q = RMSNorm(q) · w_qnorm [H·dh],  k = RMSNorm(k) · w_knorm [Hkv·dh]
//               q, k turned by RoPE at their positions (rotate_half layout)
//               head_h = softmax(q_h k_gᵀ / √dh + causal) v_g,  g = h / (H / Hkv)
//               x = x + RMSNorm(Concat(head_1 … head_H) W_oᵀ) · w_post_attn
//               x = x + RMSNorm((SiLU(x W_gateᵀ) ⊙ x W_upᵀ) W_downᵀ) · w_post_ff
//   hidden = RMSNorm(x) · w_norm;  logits = hidden lm_headᵀ (tied: embed_tokens)
// OLMo 1's clip_qkv is not part of OLMo 2 and is refused when a config sets it.
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// nn.Linear layouts [out, in]; biases absent unless attention_bias.
struct Olmo2Layer {
  Weight q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b, q_norm, k_norm, post_attn_norm, gate_w, up_w, down_w, post_ff_norm;
};
struct Olmo2Weights : FamilyWeights {
  Weight embed, final_norm;
  std::vector<Olmo2Layer> layers;
  std::vector<double> rope_theta;  // θ_i after rope_scaling
};

// transformers' Olmo2Config, both generations, with its defaults.
void olmo2Parse(const ConfigReader& r, ModelConfig& c) {
  // Olmo2Attention: getattr(config, "head_dim", hidden_size // num_attention_heads)
  readDecoderSizes(r, c);
  c.rms_eps = r.epsilon("rms_norm_eps", 1e-5);
  c.uses_rope = true;
  c.rope = readRope(r, "", 10000.0);
  c.activation = r.oneOf("hidden_act", "silu", {"silu"});
  c.tie_embeddings = r.flag("tie_word_embeddings", false);
  c.qkv_bias = r.flag("attention_bias", false);
  c.qk_norm = true;
  char eps[32];
  std::snprintf(eps, sizeof eps, "%g", c.rms_eps);
  c.blocks = std::string("post-norm RMSNorm (ε ") + eps + ") after attention and MLP / QK-norm over all heads / SwiGLU" +
             (c.qkv_bias ? ", q/k/v/o biases" : "") + (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::vector<Expected> olmo2Body(const ModelConfig& c) {
  const int64_t d = c.d_model, ff = c.d_ff, qd = c.heads * c.head_dim, kvd = c.kv_heads * c.head_dim;
  std::vector<Expected> e = {{"embed_tokens.weight", {c.vocab, d}}};
  for (int64_t l = 0; l < c.layers; ++l) {
    auto add = [&](const std::string& rest, std::vector<int64_t> shape) {
      e.push_back({layerName("layers.", l, rest), std::move(shape)});
    };
    add("self_attn.q_proj.weight", {qd, d}), add("self_attn.k_proj.weight", {kvd, d});  // nn.Linear [out, in]
    add("self_attn.v_proj.weight", {kvd, d}), add("self_attn.o_proj.weight", {d, qd});
    if (c.qkv_bias)
      add("self_attn.q_proj.bias", {qd}), add("self_attn.k_proj.bias", {kvd}), add("self_attn.v_proj.bias", {kvd}),
          add("self_attn.o_proj.bias", {d});
    add("self_attn.q_norm.weight", {qd}), add("self_attn.k_norm.weight", {kvd});  // over the whole projection
    add("post_attention_layernorm.weight", {d});
    add("mlp.gate_proj.weight", {ff, d}), add("mlp.up_proj.weight", {ff, d}), add("mlp.down_proj.weight", {d, ff});
    add("post_feedforward_layernorm.weight", {d});
  }
  e.push_back({"norm.weight", {d}});
  return e;
}

std::unique_ptr<FamilyWeights> olmo2Load(const WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  auto w = std::make_unique<Olmo2Weights>();
  w->embed = s.lazy("embed_tokens.weight");
  for (int64_t l = 0; l < c.layers; ++l) {
    auto t = [&](const std::string& rest) { return s.take(layerName("layers.", l, rest)); };
    auto lazy = [&](const std::string& rest) { return s.lazy(layerName("layers.", l, rest)); };
    w->layers.push_back({lazy("self_attn.q_proj.weight"), t("self_attn.q_proj.bias"), lazy("self_attn.k_proj.weight"),
                         t("self_attn.k_proj.bias"), lazy("self_attn.v_proj.weight"), t("self_attn.v_proj.bias"),
                         lazy("self_attn.o_proj.weight"), t("self_attn.o_proj.bias"), t("self_attn.q_norm.weight"),
                         t("self_attn.k_norm.weight"), t("post_attention_layernorm.weight"),
                         lazy("mlp.gate_proj.weight"), lazy("mlp.up_proj.weight"), lazy("mlp.down_proj.weight"),
                         t("post_feedforward_layernorm.weight")});
    progress(l);
  }
  w->final_norm = s.take("norm.weight");
  m.lm_head = c.tie_embeddings ? w->embed : s.lazyFull("lm_head.weight");
  m.predicts = true;
  w->rope_theta = c.rope.frequencies(c.head_dim);
  return w;
}

void olmo2Forward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const Olmo2Weights& W = m.as<Olmo2Weights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  const int64_t H = c.heads, Hkv = c.kv_heads, dh = c.head_dim;
  const size_t layers = static_cast<size_t>(c.layers);
  Mat x = embedRows(W.embed, run.ids);
  const KeyRange keys{p0, T, true, 0};  // causal, query i at position p0 + i
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  run.q_unrotated.resize(layers), run.k_unrotated.resize(layers);
  run.q_prenorm.resize(layers), run.k_prenorm.resize(layers);
  std::vector<float> scratch;  // the 16-bit matrix being used, as floats
  Mat q, k, v, qn, kn, concat, proj, normed, gate, up, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    const size_t li = static_cast<size_t>(l);
    const Olmo2Layer& w = W.layers[li];
    // q, k, v straight from the residual stream (no pre-norm)      [L, H·dh], [L, Hkv·dh] × 2
    linearT(x, w.q_w, w.q_b, scratch, &run.flops, q);
    linearT(x, w.k_w, w.k_b, scratch, &run.flops, k);
    linearT(x, w.v_w, w.v_b, scratch, &run.flops, v);
    if (run.keep_projections) {
      run.q_prenorm[li] = q;
      run.k_prenorm[li] = repeatKvHeads(k, H, Hkv, dh);
    }
    // QK-norm over all heads at once: one RMS per row of q [H·dh] and of k [Hkv·dh]
    rmsNorm(q, w.q_norm, c.rms_eps, qn);
    rmsNorm(k, w.k_norm, c.rms_eps, kn);
    if (run.keep_projections) {
      run.q_unrotated[li] = qn;
      run.k_unrotated[li] = repeatKvHeads(kn, H, Hkv, dh);
    }
    // RoPE: positions p0 … p0 + L − 1
    ropeHeads(qn, H, dh, W.rope_theta, p0);
    ropeHeads(kn, Hkv, dh, W.rope_theta, p0);
    if (run.keep_projections) {
      run.k[li] = repeatKvHeads(kn, H, Hkv, dh);
      run.v[li] = repeatKvHeads(v, H, Hkv, dh);
    }
    const auto [K, V] = keysWithCache(cache, l, kn, v);
    attentionLayer(qn, *K, *V, keys, H, Hkv, scale, ctx, run, l, concat);
    if (run.keep_projections) run.q[li] = qn;
    // x = x + RMSNorm(Concat(head_1 … head_H) W_oᵀ) · w_post_attn     [L, d]
    linearT(concat, w.o_w, w.o_b, scratch, &run.flops, proj);
    rmsNorm(proj, w.post_attn_norm, c.rms_eps, normed);
    x += normed;
    // x = x + RMSNorm((SiLU(x W_gateᵀ) ⊙ x W_upᵀ) W_downᵀ) · w_post_ff     [L, d_ff] → [L, d]
    gatedMlp(x, w.gate_w, w.up_w, w.down_w, Activation::Silu, scratch, &run.flops, gate, up, down);
    rmsNorm(down, w.post_ff_norm, c.rms_eps, normed);
    x += normed;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  rmsNorm(x, W.final_norm, c.rms_eps, run.hidden);
}

}  // namespace

Family makeOlmo2Family() {
  Family f;
  f.model_type = "olmo2";
  f.label = "OLMo 2";
  f.architectures = {"Olmo2ForCausalLM", "Olmo2Model"};
  f.paper = "OLMo et al. 2024";
  f.prefix = "model.";
  f.probe = "embed_tokens.weight";
  f.parse = olmo2Parse;
  f.body = olmo2Body;
  f.heads = lmHeadUnlessTied;
  f.load = olmo2Load;
  f.forward = olmo2Forward;
  return f;
}

}  // namespace attn
