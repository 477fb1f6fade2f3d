// GPT-NeoX / Pythia (Black et al. 2022), with the Hugging Face semantics of
// GPTNeoXForCausalLM (transformers' modeling_gpt_neox.py):
//   x = embed_in[ids]
//   per layer:  a = LN(x; input_layernorm)
//               qkv = a W_qkvᵀ (+ b_qkv)                      [L, 3d], viewed [L, H, 3·d_head]:
//               head h's columns [3h·d_head, (3h+1)·d_head) are q_h, the next d_head k_h, the next v_h
//               q, k turned by RoPE on the first rotary_dims of each head (rotate_half), the rest pass
//               head_h = softmax(q_h k_hᵀ / √d_head + causal) v_h
//               o = Concat(head_1 … head_H) W_denseᵀ (+ b_dense)
//               parallel (use_parallel_residual): x = x + o + MLP(LN(x; post_attention_layernorm))
//               sequential:                       x = x + o;  x = x + MLP(LN(x; post_attention_layernorm))
//               MLP(a) = act(a W_h→4hᵀ + b) W_4h→hᵀ + b
//   hidden = LN(x; final_layer_norm);  logits = hidden embed_outᵀ (untied unless tie_word_embeddings)
// RoPE: rotary_pct / rotary_emb_base (4.x) or rope_parameters {rope_theta,
// partial_rotary_factor} (transformers 5); two sources that disagree are refused.
// A GGUF file holds query_key_value's rows regrouped as [Q; K; V] (llama.cpp's
// converter does so): read back per head where stored.
#include "engine/attention_math.h"
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// nn.Linear layouts [out, in]; the attention biases are absent without attention_bias.
struct NeoxLayer {
  Weight ln1_w, ln1_b, qkv_w, qkv_b, dense_w, dense_b, ln2_w, ln2_b, up_w, up_b, down_w, down_b;
};
struct NeoxWeights : FamilyWeights {
  Weight embed, final_w, final_b;
  std::vector<NeoxLayer> layers;
  std::vector<double> rope_theta;  // θ_i of the rotary_dims/2 rotated pairs
  Activation act = Activation::GeluErf;
};

void neoxParse(const ConfigReader& r, ModelConfig& c) {
  c.layers = r.positive("num_hidden_layers", kMaxLayers);
  c.heads = r.positive("num_attention_heads", kMaxWidth);
  c.d_model = r.positive("hidden_size", kMaxWidth);
  c.d_ff = r.positive("intermediate_size", kMaxWidth);
  c.positions = r.positive("max_position_embeddings", kMaxCount);
  c.vocab = r.positive("vocab_size", kMaxCount);
  if (c.d_model % c.heads != 0)
    throw InputError(r.where + ": the heads (" + std::to_string(c.heads) + ") must divide hidden_size (" +
                     std::to_string(c.d_model) + ")");
  c.head_dim = c.d_model / c.heads;
  c.kv_heads = c.heads;
  c.ln_eps = r.epsilon("layer_norm_eps", 1e-5);
  c.activation = r.text("hidden_act", "gelu");
  readActivation(r, "hidden_act", "gelu");  // refuses the ones not implemented
  c.parallel_residual = r.flag("use_parallel_residual", true);
  c.qkv_bias = r.flag("attention_bias", true);
  c.tie_embeddings = r.flag("tie_word_embeddings", false);

  // RoPE. 4.x: rotary_emb_base (default 10,000) and rotary_pct (default 0.25);
  // transformers 5: rope_parameters {rope_theta, partial_rotary_factor}, which
  // take rotary_emb_base / rotary_pct only as defaults.
  const bool has_base = r.has("rotary_emb_base"), has_pct = r.has("rotary_pct");
  const double base = r.number("rotary_emb_base", 10000.0, 1.0, 1e12);
  const double pct = r.number("rotary_pct", 0.25, 1e-6, 1.0);
  bool partial_given = r.has("partial_rotary_factor");
  if (const nlohmann::json* p = r.find("rope_parameters"); p && p->is_object() && p->contains("partial_rotary_factor") &&
                                                          !(*p)["partial_rotary_factor"].is_null())
    partial_given = true;
  c.uses_rope = true;
  c.rope = readRope(r, "", base, "partial_rotary_factor");
  if (has_base && c.rope.theta != base)
    r.fail("rotary_emb_base", "is " + nlohmann::json(base).dump() + ", but rope_theta says " +
                                  nlohmann::json(c.rope.theta).dump() + " (the two generations of the field disagree)");
  if (!partial_given) c.rope.partial = pct;
  else if (has_pct && c.rope.partial != pct)
    r.fail("rotary_pct", "is " + nlohmann::json(pct).dump() + ", but partial_rotary_factor says " +
                             nlohmann::json(c.rope.partial).dump() + " (the two generations of the field disagree)");
  const int64_t rot = static_cast<int64_t>(static_cast<double>(c.head_dim) * c.rope.partial);
  if (rot % 2 != 0)
    r.fail(partial_given ? "partial_rotary_factor" : "rotary_pct",
           "gives int(head_dim · " + nlohmann::json(c.rope.partial).dump() + ") = " + std::to_string(rot) +
               " rotary dimensions, an odd number, which is not implemented");

  const std::string eps = formatNumber(c.ln_eps);
  c.blocks = std::string("LayerNorm (ε ") + eps + ") / " + c.activation + " MLP, " +
             (c.parallel_residual ? "parallel" : "sequential") + " residual, RoPE on " + std::to_string(rot) + " of " +
             std::to_string(c.head_dim) + " dims per head" + (c.qkv_bias ? ", attention biases" : "") +
             (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

// Buffers older checkpoints saved: the causal mask and RoPE's inverse frequencies.
bool neoxBuffer(const std::string& name) {
  if (name.rfind("layers.", 0) != 0) return false;
  return name.ends_with(".attention.bias") || name.ends_with(".attention.masked_bias") ||
         name.ends_with(".attention.rotary_emb.inv_freq");
}

std::unique_ptr<FamilyWeights> neoxLoad(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, ff = c.d_ff;
  auto w = std::make_unique<NeoxWeights>();
  w->embed = s.lazy("embed_in.weight", {c.vocab, d});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("layers.", l, "");
    NeoxLayer& y = w->layers.emplace_back();
    y.ln1_w = s.take(p + "input_layernorm.weight", {d}), y.ln1_b = s.take(p + "input_layernorm.bias", {d});
    y.ln2_w = s.take(p + "post_attention_layernorm.weight", {d});
    y.ln2_b = s.take(p + "post_attention_layernorm.bias", {d});
    std::tie(y.qkv_w, y.qkv_b) = takeLinear(s, p + "attention.query_key_value", 3 * d, d, c.qkv_bias);
    std::tie(y.dense_w, y.dense_b) = takeLinear(s, p + "attention.dense", d, d, c.qkv_bias);
    std::tie(y.up_w, y.up_b) = takeLinear(s, p + "mlp.dense_h_to_4h", ff, d);
    std::tie(y.down_w, y.down_b) = takeLinear(s, p + "mlp.dense_4h_to_h", d, ff);
    progress(l);
  }
  w->final_w = s.take("final_layer_norm.weight", {d});
  w->final_b = s.take("final_layer_norm.bias", {d});
  w->rope_theta = c.rope.frequencies(c.head_dim);
  w->act = activationNamed(c.activation);
  // Untied: the head is embed_out (saved without the prefix); tied, a saved embed_out would go unused.
  m.lm_head = c.tie_embeddings ? w->embed : s.lazyFull("embed_out.weight", {c.vocab, d});
  m.predicts = true;
  return w;
}

void neoxForward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const NeoxWeights& W = m.as<NeoxWeights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  const int64_t H = c.heads, dh = c.head_dim, d = c.d_model;
  Mat x = embedRows(W.embed, run.ids);  // [L, d]
  // causal, query i at position p0 + i
  const AttentionSpec att{.heads = H, .kv_heads = H, .keys = KeyRange{p0, T, true, 0},
                          .scale = 1.0f / std::sqrt(static_cast<float>(dh)), .rope = &W.rope_theta};
  std::vector<float> scratch;
  Mat a, qkv, q(L, d), k(L, d), v(L, d), concat, attn, up, down;
  auto mlp = [&](const NeoxLayer& w, const Mat& in) {
    // act(in W_h→4hᵀ + b) W_4h→hᵀ + b                              [L, d_ff] → [L, d]
    linearT(in, w.up_w, w.up_b, scratch, &run.flops, up);
    activate(up, W.act);
    linearT(up, w.down_w, w.down_b, scratch, &run.flops, down);
  };
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const NeoxLayer& w = W.layers[static_cast<size_t>(l)];
    // a = LN(x; input_layernorm); qkv = a W_qkvᵀ + b               [L, 3d]
    a = x;
    layerNorm(a, w.ln1_w, w.ln1_b, c.ln_eps);
    linearT(a, w.qkv_w, w.qkv_b, scratch, &run.flops, qkv);
    // The view [L, H, 3·d_head]: per head q_h | k_h | v_h          [L, d] × 3
    for (int64_t h = 0; h < H; ++h) {
      q.middleCols(h * dh, dh) = qkv.middleCols(3 * h * dh, dh);
      k.middleCols(h * dh, dh) = qkv.middleCols(3 * h * dh + dh, dh);
      v.middleCols(h * dh, dh) = qkv.middleCols(3 * h * dh + 2 * dh, dh);
    }
    // RoPE on the first rotary_dims of each head (positions p0 … p0 + L − 1);
    // head_h = softmax(q_h k_hᵀ / √d_head + causal) v_h over the cached and new keys
    attend(run, l, att, q, k, v, cache, ctx, concat);
    // o = Concat(head_1 … head_H) W_denseᵀ + b                     [L, d]
    linearT(concat, w.dense_w, w.dense_b, scratch, &run.flops, attn);
    headWrites(run, l, concat, attn, [&](const Mat& in, Mat& o) { linearT(in, w.dense_w, w.dense_b, scratch, &run.flops, o); });
    if (c.parallel_residual) {
      // x = x + o + MLP(LN(x; post_attention_layernorm))
      a = x;
      layerNorm(a, w.ln2_w, w.ln2_b, c.ln_eps);
      mlp(w, a);
      x += attn + down;
    } else {
      // x = x + o;  x = x + MLP(LN(x; post_attention_layernorm))
      x += attn;
      a = x;
      layerNorm(a, w.ln2_w, w.ln2_b, c.ln_eps);
      mlp(w, a);
      x += down;
    }
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  enterLayer(run, c.layers, x);  // the stream the final norm reads
  // hidden = LN(x; final_layer_norm)                               [L, d]
  finalLayerNorm(run, x, W.final_w, W.final_b, c.ln_eps);
  run.hidden = std::move(x);
}

// llama.cpp's names for GPT-NeoX's tensors; query_key_value (weight and bias) regrouped.
std::vector<GgufTensorName> neoxGgufTensors() {
  const std::string p = "gpt_neox.layers.#.";
  const GgufUndo qkv = GgufUndo::QkvPerHead;
  return {{"token_embd.weight", "gpt_neox.embed_in.weight"},
          {"output_norm.weight", "gpt_neox.final_layer_norm.weight"},
          {"output_norm.bias", "gpt_neox.final_layer_norm.bias"},
          {"output.weight", "embed_out.weight"},
          {"blk.#.attn_norm.weight", p + "input_layernorm.weight"},
          {"blk.#.attn_norm.bias", p + "input_layernorm.bias"},
          {"blk.#.attn_qkv.weight", p + "attention.query_key_value.weight", qkv},
          {"blk.#.attn_qkv.bias", p + "attention.query_key_value.bias", qkv},
          {"blk.#.attn_output.weight", p + "attention.dense.weight"},
          {"blk.#.attn_output.bias", p + "attention.dense.bias"},
          {"blk.#.ffn_norm.weight", p + "post_attention_layernorm.weight"},
          {"blk.#.ffn_norm.bias", p + "post_attention_layernorm.bias"},
          {"blk.#.ffn_up.weight", p + "mlp.dense_h_to_4h.weight"},
          {"blk.#.ffn_up.bias", p + "mlp.dense_h_to_4h.bias"},
          {"blk.#.ffn_down.weight", p + "mlp.dense_4h_to_h.weight"},
          {"blk.#.ffn_down.bias", p + "mlp.dense_4h_to_h.bias"}};
}

// GPTNeoXModel's keys: rope.dimension_count = int(rotary_pct · head_dim), no
// base (llama.cpp's 10,000 unless rope.freq_base says otherwise),
// use_parallel_residual (transformers' default true where absent); the
// attention biases where the file has them. hidden_act is not in the file:
// transformers' default gelu (llama.cpp computes its tanh approximation).
void neoxGgufConfig(GgufKeys& k, nlohmann::json& c) {
  const int64_t d = k.count("embedding_length", kMaxWidth), heads = ggufHeadsAllKv(k, "GPT-NeoX");
  c["num_hidden_layers"] = k.count("block_count", kMaxLayers);
  c["hidden_size"] = d;
  c["num_attention_heads"] = heads;
  c["intermediate_size"] = k.count("feed_forward_length", kMaxWidth);
  c["max_position_embeddings"] = k.count("context_length", kMaxCount);
  c["layer_norm_eps"] = k.number("attention.layer_norm_epsilon");
  c["use_parallel_residual"] = k.flag("use_parallel_residual", true);
  c["attention_bias"] = k.tensor("blk.0.attn_qkv.bias") != nullptr;
  ggufRope(k, c, d / heads, true);
}

}  // namespace

Family makeGptNeoxFamily() {
  Family f;
  f.model_type = "gpt_neox";
  f.label = "GPT-NeoX";
  f.architectures = {"GPTNeoXForCausalLM", "GPTNeoXModel"};
  f.paper = "Black et al. 2022";
  f.prefix = "gpt_neox.";
  f.probe = "embed_in.weight";
  f.parse = neoxParse;
  f.buffer = neoxBuffer;
  f.load = neoxLoad;
  f.forward = neoxForward;
  f.gguf = {{"gptneox", "GPTNeoXForCausalLM", neoxGgufConfig, neoxGgufTensors()}};
  return f;
}

}  // namespace attn
