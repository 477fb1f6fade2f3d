// StarCoder2 (Lozhkov et al. 2024), with the Hugging Face semantics of
// Starcoder2ForCausalLM (Mistral's attention with LayerNorms, biases and a
// plain MLP):
//   x = embed_tokens[ids]
//   per layer:  a = LN(x; input_layernorm)
//               q = a W_qᵀ + b_q, k = a W_kᵀ + b_k, v = a W_vᵀ + b_v       (use_bias)
//               q, k turned by RoPE at their positions (rotate_half layout)
//               head_h = softmax(q_h k_gᵀ / √d_head + causal (+ window)) v_g,  g = h / (H / H_kv)
//               x = x + Concat(head_1 … head_H) W_oᵀ + b_o
//               a = LN(x; post_attention_layernorm)
//               x = x + act(a W_fcᵀ + b_fc) W_projᵀ + b_proj             (c_fc, c_proj; gelu_pytorch_tanh)
//   hidden = LN(x; norm);  logits = hidden lm_headᵀ (tied to the embeddings by default)
// sliding_window, when set, is every layer's window (as Mistral's).
#include "engine/attention_math.h"
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

struct Starcoder2Layer {
  Weight in_w, in_b, post_w, post_b, fc_w, fc_b, proj_w, proj_b;
  AttentionWeights attn;  // biases when use_bias
};
struct Starcoder2Weights : FamilyWeights {
  Weight embed, final_w, final_b;
  std::vector<Starcoder2Layer> layers;
  std::vector<double> rope_theta;
  Activation act = Activation::GeluTanh;
};

// transformers' Starcoder2Config, both generations (rope_parameters or rope_theta / rope_scaling).
void starcoder2Parse(const ConfigReader& r, ModelConfig& c) {
  readDecoderSizes(r, c);
  c.ln_eps = r.epsilon("norm_epsilon", 1e-5);
  c.uses_rope = true;
  c.rope = readRope(r, "", 10000.0);
  c.activation = r.text("hidden_act", "gelu_pytorch_tanh");
  readActivation(r, "hidden_act", "gelu_pytorch_tanh");  // refuses the ones not implemented
  c.tie_embeddings = r.flag("tie_word_embeddings", true);
  c.linear_bias = r.flag("use_bias", true);
  c.qkv_bias = c.linear_bias;
  c.sliding_window = r.has("sliding_window") ? r.positive("sliding_window", kMaxCount) : 0;
  if (c.sliding_window > 0) c.layer_window.assign(static_cast<size_t>(c.layers), c.sliding_window);
  const std::string eps = formatNumber(c.ln_eps);
  c.blocks = std::string("LayerNorm (ε ") + eps + ") / " + c.activation + " MLP" +
             (c.linear_bias ? ", biases everywhere" : ", no biases") +
             (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::unique_ptr<FamilyWeights> starcoder2Load(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, ff = c.d_ff;
  const bool bias = c.linear_bias;
  auto w = std::make_unique<Starcoder2Weights>();
  w->embed = s.lazy("embed_tokens.weight", {c.vocab, d});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("layers.", l, "");
    Starcoder2Layer& y = w->layers.emplace_back();
    y.in_w = s.take(p + "input_layernorm.weight", {d}), y.in_b = s.take(p + "input_layernorm.bias", {d});
    y.attn = takeProjections(s, p + "self_attn.", "o_proj", c, bias, bias);
    y.post_w = s.take(p + "post_attention_layernorm.weight", {d});
    y.post_b = s.take(p + "post_attention_layernorm.bias", {d});
    std::tie(y.fc_w, y.fc_b) = takeLinear(s, p + "mlp.c_fc", ff, d, bias);
    std::tie(y.proj_w, y.proj_b) = takeLinear(s, p + "mlp.c_proj", d, ff, bias);
    progress(l);
  }
  w->final_w = s.take("norm.weight", {d}), w->final_b = s.take("norm.bias", {d});
  w->rope_theta = c.rope.frequencies(c.head_dim);
  w->act = activationNamed(c.activation);
  m.lm_head = lmHeadUnlessTied(s, c, w->embed);
  m.predicts = true;
  return w;
}

void starcoder2Forward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const Starcoder2Weights& W = m.as<Starcoder2Weights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  Mat x = embedRows(W.embed, run.ids);  // [L, d]
  AttentionSpec att{.heads = c.heads, .kv_heads = c.kv_heads,
                    .scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim)), .rope = &W.rope_theta};
  std::vector<float> scratch;
  Mat a, q, k, v, concat, proj, up, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const Starcoder2Layer& w = W.layers[static_cast<size_t>(l)];
    // a = LN(x; input_layernorm); q, k, v                          [L, H·dh], [L, Hkv·dh] × 2
    a = x;
    layerNorm(a, w.in_w, w.in_b, c.ln_eps);
    linearT(a, w.attn.q_w, w.attn.q_b, scratch, &run.flops, q);
    linearT(a, w.attn.k_w, w.attn.k_b, scratch, &run.flops, k);
    linearT(a, w.attn.v_w, w.attn.v_b, scratch, &run.flops, v);
    // RoPE at positions p0 … p0 + L − 1; causal, query i at p0 + i; a window W keeps key j while p0 + i − j < W
    att.keys = KeyRange{p0, T, true, c.windowOf(l)};
    attend(run, l, att, q, k, v, cache, ctx, concat);
    // x = x + Concat(head_1 … head_H) W_oᵀ + b_o                   [L, d]
    linearT(concat, w.attn.o_w, w.attn.o_b, scratch, &run.flops, proj);
    headWrites(run, l, concat, proj, [&](const Mat& in, Mat& o) { linearT(in, w.attn.o_w, w.attn.o_b, scratch, &run.flops, o); });
    x += proj;
    // x = x + act(a W_fcᵀ + b_fc) W_projᵀ + b_proj,  a = LN(x; post_attention_layernorm)     [L, d_ff] → [L, d]
    a = x;
    layerNorm(a, w.post_w, w.post_b, c.ln_eps);
    linearT(a, w.fc_w, w.fc_b, scratch, &run.flops, up);
    activate(up, W.act);
    linearT(up, w.proj_w, w.proj_b, scratch, &run.flops, down);
    x += down;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  enterLayer(run, c.layers, x);  // the stream the final norm reads
  // hidden = LN(x; norm)                                           [L, d]
  finalLayerNorm(run, x, W.final_w, W.final_b, c.ln_eps);
  run.hidden = std::move(x);
}

}  // namespace

Family makeStarcoder2Family() {
  Family f;
  f.model_type = "starcoder2";
  f.label = "StarCoder2";
  f.architectures = {"Starcoder2ForCausalLM", "Starcoder2Model"};
  f.paper = "Lozhkov et al. 2024";
  f.prefix = "model.";
  f.probe = "embed_tokens.weight";
  f.parse = starcoder2Parse;
  f.load = starcoder2Load;
  f.forward = starcoder2Forward;
  return f;
}

}  // namespace attn
