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
#include "engine/model/checkpoint/gguf_model.h"
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

// llama.cpp's names for the LLaMA shape; `rope_rows`: q and k saved in
// ggml's interleaved RoPE order (LlamaModel.permute; Qwen2 and Qwen3 keep transformers' order).
std::vector<GgufTensorName> llamaGgufTensors(bool rope_rows) {
  const GgufUndo q = rope_rows ? GgufUndo::RopeRowsQ : GgufUndo::None, k = rope_rows ? GgufUndo::RopeRowsK : GgufUndo::None;
  const std::string a = "model.layers.#.self_attn.", m = "model.layers.#.mlp.";
  return {{"token_embd.weight", "model.embed_tokens.weight"},
          {"output_norm.weight", "model.norm.weight"},
          {"output.weight", "lm_head.weight"},
          {"blk.#.attn_norm.weight", "model.layers.#.input_layernorm.weight"},
          {"blk.#.attn_q.weight", a + "q_proj.weight", q},
          {"blk.#.attn_q.bias", a + "q_proj.bias", q},
          {"blk.#.attn_k.weight", a + "k_proj.weight", k},
          {"blk.#.attn_k.bias", a + "k_proj.bias", k},
          {"blk.#.attn_v.weight", a + "v_proj.weight"},
          {"blk.#.attn_v.bias", a + "v_proj.bias"},
          {"blk.#.attn_output.weight", a + "o_proj.weight"},
          {"blk.#.attn_output.bias", a + "o_proj.bias"},
          {"blk.#.attn_q_norm.weight", a + "q_norm.weight"},
          {"blk.#.attn_k_norm.weight", a + "k_norm.weight"},
          {"blk.#.ffn_norm.weight", "model.layers.#.post_attention_layernorm.weight"},
          {"blk.#.ffn_gate.weight", m + "gate_proj.weight"},
          {"blk.#.ffn_up.weight", m + "up_proj.weight"},
          {"blk.#.ffn_down.weight", m + "down_proj.weight"}};
}

// config.json from the GGUF keys; a bias on q, k, v is there when the file has one (Llama's attention_bias).
void llamaGgufConfig(GgufKeys& k, nlohmann::json& c) {
  ggufDecoderConfig(k, c);
  const bool bias = k.tensor("blk.0.attn_q.bias") != nullptr;
  const std::string type = c["model_type"].get<std::string>();
  if (type == "llama") c["attention_bias"] = bias;
  if (type == "qwen3") c["attention_bias"] = bias;
  if (type == "qwen2" || type == "qwen3") c["use_sliding_window"] = false;  // llama.cpp runs them without a window
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

// Mistral's GGUF files are the "llama" architecture (its window is not in them);
// Llama 3.1's and 3.2's carry their llama3 RoPE scaling as rope_freqs.
Family makeLlamaFamily() {
  Family f = llamaLike("llama", "Llama", "Llama", "Touvron et al. 2023");
  f.gguf = {{"llama", "LlamaForCausalLM", llamaGgufConfig, llamaGgufTensors(true), true}};
  return f;
}
Family makeMistralFamily() { return llamaLike("mistral", "Mistral", "Mistral", "Jiang et al. 2023"); }
Family makeQwen2Family() {
  Family f = llamaLike("qwen2", "Qwen2", "Qwen2", "Yang et al. 2024");
  f.gguf = {{"qwen2", "Qwen2ForCausalLM", llamaGgufConfig, llamaGgufTensors(false)}};
  return f;
}
Family makeQwen3Family() {
  Family f = llamaLike("qwen3", "Qwen3", "Qwen3", "Yang et al. 2025", qwen3Parse);
  f.gguf = {{"qwen3", "Qwen3ForCausalLM", llamaGgufConfig, llamaGgufTensors(false)}};
  return f;
}

}  // namespace attn
