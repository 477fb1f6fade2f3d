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
#include "engine/attention_math.h"
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// The projections' biases absent unless attention_bias.
struct Olmo2Layer {
  Weight q_norm, k_norm, post_attn_norm, post_ff_norm;
  AttentionWeights attn;
  GatedMlpWeights mlp;
};
struct Olmo2Weights : FamilyWeights {
  Weight embed, final_norm;
  std::vector<Olmo2Layer> layers;
  std::vector<double> rope_theta;  // θ_i after rope_scaling
};

// transformers' Olmo2Config, both generations, with its defaults.
void olmo2Parse(const ConfigReader& r, ModelConfig& c) {
  // Olmo2Attention: getattr(config, "head_dim", hidden_size // num_attention_heads)
  readSwiGluDecoder(r, c, 1e-5);
  c.qkv_bias = r.flag("attention_bias", false);
  c.qk_norm = true;
  const std::string eps = formatNumber(c.rms_eps);
  c.blocks = std::string("post-norm RMSNorm (ε ") + eps + ") after attention and MLP / QK-norm over all heads / SwiGLU" +
             (c.qkv_bias ? ", q/k/v/o biases" : "") + (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::unique_ptr<FamilyWeights> olmo2Load(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  auto w = std::make_unique<Olmo2Weights>();
  w->embed = s.lazy("embed_tokens.weight", {c.vocab, c.d_model});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("layers.", l, "");
    Olmo2Layer& y = w->layers.emplace_back();
    y.attn = takeProjections(s, p + "self_attn.", "o_proj", c, c.qkv_bias, c.qkv_bias);
    // over the whole projections, not per head
    y.q_norm = s.take(p + "self_attn.q_norm.weight", {c.heads * c.head_dim});
    y.k_norm = s.take(p + "self_attn.k_norm.weight", {c.kv_heads * c.head_dim});
    y.post_attn_norm = s.take(p + "post_attention_layernorm.weight", {c.d_model});
    y.mlp = takeGatedMlp(s, p + "mlp.", c);
    y.post_ff_norm = s.take(p + "post_feedforward_layernorm.weight", {c.d_model});
    progress(l);
  }
  w->final_norm = s.take("norm.weight", {c.d_model});
  m.lm_head = lmHeadUnlessTied(s, c, w->embed);
  m.predicts = true;
  w->rope_theta = c.rope.frequencies(c.head_dim);
  return w;
}

void olmo2Forward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const Olmo2Weights& W = m.as<Olmo2Weights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position;
  Mat x = embedRows(W.embed, run.ids);
  // causal, query i at position p0 + i
  const AttentionSpec att{.heads = c.heads, .kv_heads = c.kv_heads, .keys = KeyRange{p0, p0 + L, true, 0},
                          .scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim)), .rope = &W.rope_theta};
  std::vector<float> scratch;  // the 16-bit matrix being used, as floats
  Mat q, k, v, qn, kn, concat, proj, normed, gate, up, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const Olmo2Layer& w = W.layers[static_cast<size_t>(l)];
    // q, k, v straight from the residual stream (no pre-norm)      [L, H·dh], [L, Hkv·dh] × 2
    linearT(x, w.attn.q_w, w.attn.q_b, scratch, &run.flops, q);
    linearT(x, w.attn.k_w, w.attn.k_b, scratch, &run.flops, k);
    linearT(x, w.attn.v_w, w.attn.v_b, scratch, &run.flops, v);
    // QK-norm over all heads at once: one RMS per row of q [H·dh] and of k [Hkv·dh]
    record(run, l, QkStage::Projected, att, q, k);
    rmsNorm(q, w.q_norm, c.rms_eps, qn);
    rmsNorm(k, w.k_norm, c.rms_eps, kn);
    // RoPE at positions p0 … p0 + L − 1, attention over the cached and new keys
    attend(run, l, att, qn, kn, v, cache, ctx, concat);
    // x = x + RMSNorm(Concat(head_1 … head_H) W_oᵀ) · w_post_attn     [L, d]
    linearT(concat, w.attn.o_w, w.attn.o_b, scratch, &run.flops, proj);
    headWrites(run, l, concat, proj, [&](const Mat& in, Mat& o) { linearT(in, w.attn.o_w, w.attn.o_b, scratch, &run.flops, o); });
    rmsNorm(proj, w.post_attn_norm, c.rms_eps, normed);
    x += normed;
    // x = x + RMSNorm((SiLU(x W_gateᵀ) ⊙ x W_upᵀ) W_downᵀ) · w_post_ff     [L, d_ff] → [L, d]
    gatedMlp(x, w.mlp.gate, w.mlp.up, w.mlp.down, Activation::Silu, scratch, &run.flops, gate, up, down);
    rmsNorm(down, w.post_ff_norm, c.rms_eps, normed);
    x += normed;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  enterLayer(run, c.layers, x);  // the stream the final norm reads
  rmsNorm(x, W.final_norm, c.rms_eps, run.hidden);
}

// llama.cpp's names for OLMo 2's tensors (no permutation: ggml turns them as
// transformers does); it has no biases, and no sliding window (Olmo 3's keys
// attention.sliding_window and its pattern are refused as unread).
std::vector<GgufTensorName> olmo2GgufTensors() {
  const std::string l = "model.layers.#.", a = l + "self_attn.", m = l + "mlp.";
  return {{"token_embd.weight", "model.embed_tokens.weight"},
          {"output_norm.weight", "model.norm.weight"},
          {"output.weight", "lm_head.weight"},
          {"blk.#.attn_q.weight", a + "q_proj.weight"},
          {"blk.#.attn_k.weight", a + "k_proj.weight"},
          {"blk.#.attn_v.weight", a + "v_proj.weight"},
          {"blk.#.attn_output.weight", a + "o_proj.weight"},
          {"blk.#.attn_q_norm.weight", a + "q_norm.weight"},
          {"blk.#.attn_k_norm.weight", a + "k_norm.weight"},
          {"blk.#.post_attention_norm.weight", l + "post_attention_layernorm.weight"},
          {"blk.#.ffn_gate.weight", m + "gate_proj.weight"},
          {"blk.#.ffn_up.weight", m + "up_proj.weight"},
          {"blk.#.ffn_down.weight", m + "down_proj.weight"},
          {"blk.#.post_ffw_norm.weight", l + "post_feedforward_layernorm.weight"}};
}

void olmo2GgufConfig(GgufKeys& k, nlohmann::json& c) {
  ggufDecoderConfig(k, c);
  c["attention_bias"] = false;
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
  f.load = olmo2Load;
  f.forward = olmo2Forward;
  f.gguf = {{"olmo2", "Olmo2ForCausalLM", olmo2GgufConfig, olmo2GgufTensors()}};
  return f;
}

}  // namespace attn
