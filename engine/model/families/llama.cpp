// The LLaMA family (Touvron et al. 2023), with the Hugging Face semantics of
// LlamaForCausalLM, MistralForCausalLM and Qwen2ForCausalLM:
//   x = embed_tokens[ids]
//   per layer:  a = RMSNorm(x) · w_in
//               q = a W_qᵀ (+ b_q), k = a W_kᵀ (+ b_k), v = a W_vᵀ (+ b_v)   Qwen2's biases
//               q, k turned by RoPE at their positions (rotate_half layout)
//               head_h = softmax(q_h k_gᵀ / √d_head + causal (+ window)) v_g,  g = h / (H / H_kv)
//               x = x + Concat(head_1 … head_H) W_oᵀ
//               a = RMSNorm(x) · w_post
//               x = x + (SiLU(a W_gateᵀ) ⊙ a W_upᵀ) W_downᵀ
//   hidden = RMSNorm(x) · w_norm;  logits = hidden lm_headᵀ
// Mistral is Llama with a sliding window on every layer, Qwen2 Llama with
// biases on q, k, v and, with use_sliding_window, a window on the layers
// from max_window_layers on (or those layer_types names "sliding_attention").
// 16-bit weights stay in the map and are converted one matrix at a time.
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// nn.Linear layouts [out, in]; the biases are Qwen2's (absent: empty Weight).
struct LlamaLayer {
  Weight in_norm, q_w, q_b, k_w, k_b, v_w, v_b, o_w, post_norm, gate_w, up_w, down_w;
};
struct LlamaWeights : FamilyWeights {
  Weight embed, final_norm;
  std::vector<LlamaLayer> layers;
  std::vector<double> rope_theta;  // θ_i after rope_scaling
};

// transformers' LlamaConfig, MistralConfig and Qwen2Config, both generations
// (rope_parameters or rope_theta / rope_scaling), with their defaults.
void llamaParse(const ConfigReader& r, ModelConfig& c) {
  readDecoderSizes(r, c);
  c.rms_eps = r.epsilon("rms_norm_eps", 1e-6);
  c.uses_rope = true;
  c.rope = readRope(r, "", 10000.0);
  c.activation = r.oneOf("hidden_act", "silu", {"silu"});
  c.tie_embeddings = r.flag("tie_word_embeddings", false);
  // Qwen2 always has q, k and v biases; Llama when attention_bias is set.
  c.qkv_bias = c.family == "qwen2" || r.flag("attention_bias", false);
  if (r.flag("mlp_bias", false)) r.fail("mlp_bias", "is true, which is not supported (expected false)");
  if (c.family == "mistral") {
    c.sliding_window = r.has("sliding_window") ? r.positive("sliding_window", kMaxCount) : 0;
    if (c.sliding_window > 0) c.layer_window.assign(static_cast<size_t>(c.layers), c.sliding_window);
  } else if (c.family == "qwen2") {
    readQwenWindows(r, c, c.label);
  }
  char eps[32];
  std::snprintf(eps, sizeof eps, "%g", c.rms_eps);
  c.blocks = std::string("RMSNorm (ε ") + eps + ") / SwiGLU" + (c.qkv_bias ? ", q/k/v biases" : "") +
             (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::vector<Expected> llamaBody(const ModelConfig& c) {
  const int64_t d = c.d_model, ff = c.d_ff, qd = c.heads * c.head_dim, kvd = c.kv_heads * c.head_dim;
  std::vector<Expected> e = {{"embed_tokens.weight", {c.vocab, d}}};
  for (int64_t l = 0; l < c.layers; ++l) {
    auto add = [&](const std::string& rest, std::vector<int64_t> shape) {
      e.push_back({layerName("layers.", l, rest), std::move(shape)});
    };
    add("input_layernorm.weight", {d});
    add("self_attn.q_proj.weight", {qd, d}), add("self_attn.k_proj.weight", {kvd, d});  // nn.Linear [out, in]
    add("self_attn.v_proj.weight", {kvd, d}), add("self_attn.o_proj.weight", {d, qd});
    if (c.qkv_bias)
      add("self_attn.q_proj.bias", {qd}), add("self_attn.k_proj.bias", {kvd}), add("self_attn.v_proj.bias", {kvd});
    add("post_attention_layernorm.weight", {d});
    add("mlp.gate_proj.weight", {ff, d}), add("mlp.up_proj.weight", {ff, d}), add("mlp.down_proj.weight", {d, ff});
  }
  e.push_back({"norm.weight", {d}});
  return e;
}

std::unique_ptr<FamilyWeights> llamaLoad(const WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  auto w = std::make_unique<LlamaWeights>();
  w->embed = s.lazy("embed_tokens.weight");
  for (int64_t l = 0; l < c.layers; ++l) {
    auto t = [&](const std::string& rest) { return s.take(layerName("layers.", l, rest)); };
    auto lazy = [&](const std::string& rest) { return s.lazy(layerName("layers.", l, rest)); };
    w->layers.push_back({t("input_layernorm.weight"), lazy("self_attn.q_proj.weight"), t("self_attn.q_proj.bias"),
                         lazy("self_attn.k_proj.weight"), t("self_attn.k_proj.bias"), lazy("self_attn.v_proj.weight"),
                         t("self_attn.v_proj.bias"), lazy("self_attn.o_proj.weight"),
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

void llamaForward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const LlamaWeights& W = m.as<LlamaWeights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  const int64_t H = c.heads, Hkv = c.kv_heads, dh = c.head_dim;
  Mat x = embedRows(W.embed, run.ids);
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  run.q_unrotated.resize(static_cast<size_t>(c.layers));
  run.k_unrotated.resize(static_cast<size_t>(c.layers));
  std::vector<float> scratch;  // the 16-bit matrix being used, as floats
  Mat a, q, k, v, concat, proj, gate, up, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    const size_t li = static_cast<size_t>(l);
    const LlamaLayer& w = W.layers[li];
    // a = RMSNorm(x) · w_in; q, k, v                                [L, H·dh], [L, Hkv·dh] × 2
    rmsNorm(x, w.in_norm, c.rms_eps, a);
    linearT(a, w.q_w, w.q_b, scratch, &run.flops, q);
    linearT(a, w.k_w, w.k_b, scratch, &run.flops, k);
    linearT(a, w.v_w, w.v_b, scratch, &run.flops, v);
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
    // Causal, aligned to the bottom right (query i is position p0 + i); on a
    // layer with a window W, key j is kept while p0 + i − j < W (transformers' rule).
    attentionLayer(q, *K, *V, KeyRange{p0, T, true, c.windowOf(l)}, H, Hkv, scale, ctx, run, l, concat);
    if (run.keep_projections) run.q[li] = std::move(q);
    // x = x + Concat(head_1 … head_H) W_oᵀ                         [L, d]
    linearT(concat, w.o_w, Weight{}, scratch, &run.flops, proj);
    x += proj;
    // x = x + (SiLU(a W_gateᵀ) ⊙ a W_upᵀ) W_downᵀ,  a = RMSNorm(x) · w_post     [L, d_ff] → [L, d]
    rmsNorm(x, w.post_norm, c.rms_eps, a);
    gatedMlp(a, w.gate_w, w.up_w, w.down_w, Activation::Silu, scratch, &run.flops, gate, up, down);
    x += down;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  rmsNorm(x, W.final_norm, c.rms_eps, run.hidden);
}

Family llamaLike(const std::string& model_type, const std::string& label, const std::string& arch,
                 const std::string& paper) {
  Family f;
  f.model_type = model_type;
  f.label = label;
  f.architectures = {arch + "ForCausalLM", arch + "Model"};
  f.paper = paper;
  f.prefix = "model.";
  f.probe = "embed_tokens.weight";
  f.parse = llamaParse;
  f.body = llamaBody;
  f.heads = lmHeadUnlessTied;
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

}  // namespace attn
