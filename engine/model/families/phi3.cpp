// Phi-3 (Abdin et al. 2024), with the Hugging Face semantics of
// Phi3ForCausalLM (transformers' models/phi3/modeling_phi3.py): Llama with
// the projections fused, partial rotary, and a sliding window on every layer
// when the config gives one:
//   x = embed_tokens[ids]
//   per layer:  a = RMSNorm(x) · w_in                                        [L, d]
//               [q | k | v] = a W_qkvᵀ,  W_qkv rows [q (H·dh); k (Hkv·dh); v (Hkv·dh)]
//               q, k: RoPE on the first rotary_dims = int(dh · partial_rotary_factor)
//                     of each head (rotate_half within them), the rest unrotated
//               head_h = softmax(q_h k_gᵀ / √dh + causal (+ window)) v_g,  g = h / (H / Hkv)
//               x = x + Concat(head_1 … head_H) W_oᵀ
//               a = RMSNorm(x) · w_post
//               [gate | up] = a W_gate_upᵀ,  W_gate_up rows [gate (d_ff); up (d_ff)]
//               x = x + (up ⊙ SiLU(gate)) W_downᵀ
//   hidden = RMSNorm(x) · w_norm;  logits = hidden lm_headᵀ (tied: embed_tokens)
// The window: transformers builds the sliding-window causal mask for every
// layer when config.sliding_window is set (key j kept while i − j < window).
// longrope / su rope_scaling (Phi-3 128k) is refused where RoPE is read.
#include "engine/attention_math.h"
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// nn.Linear layouts [out, in], no biases.
struct Phi3Layer {
  Weight in_norm, qkv_w, o_w, post_norm, gate_up_w, down_w;
};
struct Phi3Weights : FamilyWeights {
  Weight embed, final_norm;
  std::vector<Phi3Layer> layers;
  std::vector<double> rope_theta;  // θ_i of the rotary_dims / 2 rotated pairs
};

// transformers' Phi3Config, both generations, with its defaults.
void phi3Parse(const ConfigReader& r, ModelConfig& c) {
  // Phi3Attention: getattr(config, "head_dim", hidden_size // num_attention_heads)
  readDecoderSizes(r, c);
  c.rms_eps = r.epsilon("rms_norm_eps", 1e-5);
  c.uses_rope = true;
  // partial_rotary_factor: top level (4.x), or inside rope_parameters (5).
  c.rope = readRope(r, "", 10000.0, "partial_rotary_factor");
  // transformers rotates int(head_dim · factor) dimensions in pairs: an odd count has no rotate_half layout.
  if (static_cast<int64_t>(static_cast<double>(c.head_dim) * c.rope.partial) % 2 != 0)
    r.fail("partial_rotary_factor", "gives an odd number of rotary dimensions (head_dim " + std::to_string(c.head_dim) +
                                        " · " + nlohmann::json(c.rope.partial).dump() + "), which is not supported");
  if (c.rope.rotaryDims(c.head_dim) < 2)
    r.fail("partial_rotary_factor", "leaves no dimension pair to rotate (head_dim " + std::to_string(c.head_dim) + ")");
  c.activation = r.oneOf("hidden_act", "silu", {"silu"});
  c.tie_embeddings = r.flag("tie_word_embeddings", false);
  // Phi-3 mini configs carry sliding_window (2047); Phi3Model then masks every layer with it.
  c.sliding_window = r.has("sliding_window") ? r.positive("sliding_window", kMaxCount) : 0;
  if (c.sliding_window > 0) c.layer_window.assign(static_cast<size_t>(c.layers), c.sliding_window);
  const std::string eps = formatNumber(c.rms_eps);
  c.blocks = std::string("RMSNorm (ε ") + eps + ") / fused qkv / SwiGLU (fused gate-up)" +
             (c.rope.partial < 1.0 ? ", partial rotary" : "") +
             (c.sliding_window > 0 ? ", sliding window " + std::to_string(c.sliding_window) : "") +
             (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::unique_ptr<FamilyWeights> phi3Load(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, ff = c.d_ff, qd = c.heads * c.head_dim, kvd = c.kv_heads * c.head_dim;
  auto w = std::make_unique<Phi3Weights>();
  w->embed = s.lazy("embed_tokens.weight", {c.vocab, d});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("layers.", l, "");
    Phi3Layer& y = w->layers.emplace_back();
    y.in_norm = s.take(p + "input_layernorm.weight", {d});
    y.qkv_w = s.lazy(p + "self_attn.qkv_proj.weight", {qd + 2 * kvd, d});  // [out, in]
    y.o_w = s.lazy(p + "self_attn.o_proj.weight", {d, qd});
    y.post_norm = s.take(p + "post_attention_layernorm.weight", {d});
    y.gate_up_w = s.lazy(p + "mlp.gate_up_proj.weight", {2 * ff, d});
    y.down_w = s.lazy(p + "mlp.down_proj.weight", {d, ff});
    progress(l);
  }
  w->final_norm = s.take("norm.weight", {d});
  m.lm_head = lmHeadUnlessTied(s, c, w->embed);  // tied: Phi-4-mini
  m.predicts = true;
  w->rope_theta = c.rope.frequencies(c.head_dim);
  return w;
}

void phi3Forward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const Phi3Weights& W = m.as<Phi3Weights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  const int64_t H = c.heads, Hkv = c.kv_heads, dh = c.head_dim, ff = c.d_ff;
  Mat x = embedRows(W.embed, run.ids);
  // Causal, aligned to the bottom right; with a window W, key j kept while p0 + i − j < W.
  const AttentionSpec att{.heads = H, .kv_heads = Hkv, .keys = KeyRange{p0, T, true, c.sliding_window},
                          .scale = 1.0f / std::sqrt(static_cast<float>(dh)), .rope = &W.rope_theta};
  std::vector<float> scratch;  // the 16-bit matrix being used, as floats
  Mat a, qkv, q, k, v, concat, proj, gate_up, gate, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const Phi3Layer& w = W.layers[static_cast<size_t>(l)];
    // a = RMSNorm(x) · w_in; [q | k | v] = a W_qkvᵀ                  [L, H·dh + 2·Hkv·dh]
    rmsNorm(x, w.in_norm, c.rms_eps, a);
    linearT(a, w.qkv_w, Weight{}, scratch, &run.flops, qkv);
    q = qkv.leftCols(H * dh);
    k = qkv.middleCols(H * dh, Hkv * dh);
    v = qkv.rightCols(Hkv * dh);
    // RoPE on the first rotary_dims of each head (positions p0 … p0 + L − 1), the rest unrotated
    attend(run, l, att, q, k, v, cache, ctx, concat);
    // x = x + Concat(head_1 … head_H) W_oᵀ                          [L, d]
    linearT(concat, w.o_w, Weight{}, scratch, &run.flops, proj);
    headWrites(run, l, concat, proj, [&](const Mat& in, Mat& o) { linearT(in, w.o_w, Weight{}, scratch, &run.flops, o); });
    x += proj;
    // [gate | up] = a W_gate_upᵀ, a = RMSNorm(x) · w_post; x = x + (up ⊙ SiLU(gate)) W_downᵀ     [L, 2·d_ff] → [L, d]
    rmsNorm(x, w.post_norm, c.rms_eps, a);
    linearT(a, w.gate_up_w, Weight{}, scratch, &run.flops, gate_up);
    gate = gate_up.leftCols(ff);
    activate(gate, Activation::Silu);
    gate = gate.cwiseProduct(gate_up.rightCols(ff));
    linearT(gate, w.down_w, Weight{}, scratch, &run.flops, down);
    x += down;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  enterLayer(run, c.layers, x);  // the stream the final norm reads
  finalRmsNorm(run, x, W.final_norm, c.rms_eps, run.hidden);
}

// llama.cpp's names for Phi-3's tensors: the fused projections kept fused
// (attn_qkv [q; k; v], ffn_up [gate; up]), nothing permuted. The 128k
// models' rope_factors_long / rope_factors_short (longrope) are not among
// them: such a file is refused naming the tensor.
std::vector<GgufTensorName> phi3GgufTensors() {
  const std::string l = "model.layers.#.";
  return {{"token_embd.weight", "model.embed_tokens.weight"},
          {"output_norm.weight", "model.norm.weight"},
          {"output.weight", "lm_head.weight"},
          {"blk.#.attn_norm.weight", l + "input_layernorm.weight"},
          {"blk.#.attn_qkv.weight", l + "self_attn.qkv_proj.weight"},
          {"blk.#.attn_output.weight", l + "self_attn.o_proj.weight"},
          {"blk.#.ffn_norm.weight", l + "post_attention_layernorm.weight"},
          {"blk.#.ffn_up.weight", l + "mlp.gate_up_proj.weight"},
          {"blk.#.ffn_down.weight", l + "mlp.down_proj.weight"}};
}

// Phi3MiniModel's keys: rope.dimension_count the rotary part of a head,
// attention.sliding_window (0: none) as transformers reads sliding_window
// (llama.cpp itself runs Phi-3 without its window), and the original context
// length, which only longrope reads (refused with its scaling factors).
void phi3GgufConfig(GgufKeys& k, nlohmann::json& c) {
  ggufDecoderConfig(k, c, true);
  k.count("rope.scaling.original_context_length", kMaxCount, 1);
  if (k.has("rope.scaling.attn_factor"))
    k.fail("rope.scaling.attn_factor", "is set: longrope (rope_factors_long / rope_factors_short, Phi-3 128k) is not implemented");
  if (const int64_t window = k.whole("attention.sliding_window", kMaxCount, 0); window > 0) c["sliding_window"] = window;
}

}  // namespace

Family makePhi3Family() {
  Family f;
  f.model_type = "phi3";
  f.label = "Phi-3";
  f.architectures = {"Phi3ForCausalLM", "Phi3Model"};
  f.paper = "Abdin et al. 2024";
  f.prefix = "model.";
  f.probe = "embed_tokens.weight";
  f.parse = phi3Parse;
  f.load = phi3Load;
  f.forward = phi3Forward;
  f.gguf = {{"phi3", "Phi3ForCausalLM", phi3GgufConfig, phi3GgufTensors()}};
  return f;
}

}  // namespace attn
