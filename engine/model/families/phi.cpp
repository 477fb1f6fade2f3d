// Phi-1 / Phi-1.5 / Phi-2 (Gunasekar et al. 2023), with the Hugging Face
// semantics of PhiForCausalLM (transformers' modeling_phi.py):
//   x = embed_tokens[ids]
//   per layer:  a = LN(x; input_layernorm)                         one norm for both branches
//               q = a W_qᵀ + b_q, k = a W_kᵀ + b_k, v = a W_vᵀ + b_v    [L, H·dh], [L, Hkv·dh] × 2
//               q, k turned by RoPE on the first int(dh · partial_rotary_factor) dims of each head
//               head_h = softmax(q_h k_gᵀ / √dh + causal) v_g,  g = h / (H / Hkv)
//               x = x + (Concat(head_1 … head_H) W_denseᵀ + b_dense) + (gelu_new(a W_fc1ᵀ + b1) W_fc2ᵀ + b2)
//   hidden = LN(x; final_layernorm);  logits = hidden lm_headᵀ + b_lm_head
// qk_layernorm (LayerNorm of q and k per head) is refused: not implemented.
#include "engine/attention_math.h"
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

struct PhiLayer {
  Weight ln_w, ln_b, fc1_w, fc1_b, fc2_w, fc2_b;
  AttentionWeights attn;  // o: self_attn.dense
};
struct PhiWeights : FamilyWeights {
  Weight embed, final_w, final_b, head_bias;
  std::vector<PhiLayer> layers;
  std::vector<double> rope_theta;
  Activation act = Activation::GeluTanh;
};

void phiParse(const ConfigReader& r, ModelConfig& c) {
  c.layers = r.positive("num_hidden_layers", kMaxLayers);
  c.heads = r.positive("num_attention_heads", kMaxWidth);
  c.kv_heads = r.positive("num_key_value_heads", kMaxWidth, c.heads);
  c.d_model = r.positive("hidden_size", kMaxWidth);
  c.d_ff = r.positive("intermediate_size", kMaxWidth);
  c.positions = r.positive("max_position_embeddings", kMaxCount);
  c.vocab = r.positive("vocab_size", kMaxCount);
  if (c.d_model % c.heads != 0)
    throw InputError(r.where + ": the heads (" + std::to_string(c.heads) + ") must divide hidden_size (" +
                     std::to_string(c.d_model) + ")");
  if (c.heads % c.kv_heads != 0)
    throw InputError(r.where + ": num_key_value_heads (" + std::to_string(c.kv_heads) +
                     ") must divide num_attention_heads (" + std::to_string(c.heads) + ")");
  c.head_dim = c.d_model / c.heads;
  c.ln_eps = r.epsilon("layer_norm_eps", 1e-5);
  c.activation = r.text("hidden_act", "gelu_new");
  readActivation(r, "hidden_act", "gelu_new");  // refuses the ones not implemented
  c.tie_embeddings = r.flag("tie_word_embeddings", false);
  c.parallel_residual = true;  // attention and MLP both read the one input_layernorm
  c.qkv_bias = true;
  if (r.flag("qk_layernorm", false))
    r.fail("qk_layernorm", "is true, which Phi here does not implement (expected false)");
  // RoPE: rope_theta / rope_scaling / partial_rotary_factor (4.x), or
  // rope_parameters (transformers 5; partial_rotary_factor inside or beside it). Default partial: 0.5.
  bool partial_given = r.has("partial_rotary_factor");
  if (const nlohmann::json* p = r.find("rope_parameters"); p && p->is_object() && p->contains("partial_rotary_factor") &&
                                                          !(*p)["partial_rotary_factor"].is_null())
    partial_given = true;
  c.uses_rope = true;
  c.rope = readRope(r, "", 10000.0, "partial_rotary_factor");
  if (!partial_given) c.rope.partial = 0.5;
  const int64_t rot = static_cast<int64_t>(static_cast<double>(c.head_dim) * c.rope.partial);
  if (rot % 2 != 0)
    r.fail("partial_rotary_factor", "gives int(head_dim · " + nlohmann::json(c.rope.partial).dump() + ") = " +
                                        std::to_string(rot) + " rotary dimensions, an odd number, which is not implemented");
  const std::string eps = formatNumber(c.ln_eps);
  c.blocks = std::string("one LayerNorm (ε ") + eps + ") for attention and " + c.activation +
             " MLP in parallel, RoPE on " + std::to_string(rot) + " of " + std::to_string(c.head_dim) +
             " dims per head, biases everywhere (the LM head's too)" +
             (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::unique_ptr<FamilyWeights> phiLoad(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, ff = c.d_ff;
  auto w = std::make_unique<PhiWeights>();
  w->embed = s.lazy("embed_tokens.weight", {c.vocab, d});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("layers.", l, "");
    PhiLayer& y = w->layers.emplace_back();
    y.ln_w = s.take(p + "input_layernorm.weight", {d}), y.ln_b = s.take(p + "input_layernorm.bias", {d});
    y.attn = takeProjections(s, p + "self_attn.", "dense", c, true, true);
    std::tie(y.fc1_w, y.fc1_b) = takeLinear(s, p + "mlp.fc1", ff, d);
    std::tie(y.fc2_w, y.fc2_b) = takeLinear(s, p + "mlp.fc2", d, ff);
    progress(l);
  }
  w->final_w = s.take("final_layernorm.weight", {d});
  w->final_b = s.take("final_layernorm.bias", {d});
  // The head always has its bias; its weight is embed_tokens when tied.
  w->head_bias = s.takeFull("lm_head.bias", {c.vocab});
  w->rope_theta = c.rope.frequencies(c.head_dim);
  w->act = activationNamed(c.activation);
  m.lm_head = lmHeadUnlessTied(s, c, w->embed);
  m.predicts = true;
  return w;
}

void phiForward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const PhiWeights& W = m.as<PhiWeights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  Mat x = embedRows(W.embed, run.ids);  // [L, d]
  // causal, query i at position p0 + i
  const AttentionSpec att{.heads = c.heads, .kv_heads = c.kv_heads, .keys = KeyRange{p0, T, true, 0},
                          .scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim)), .rope = &W.rope_theta};
  std::vector<float> scratch;
  Mat a, q, k, v, concat, attn, up, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const PhiLayer& w = W.layers[static_cast<size_t>(l)];
    // a = LN(x; input_layernorm): the input of both branches        [L, d]
    a = x;
    layerNorm(a, w.ln_w, w.ln_b, c.ln_eps);
    linearT(a, w.attn.q_w, w.attn.q_b, scratch, &run.flops, q);  // [L, H·dh]
    linearT(a, w.attn.k_w, w.attn.k_b, scratch, &run.flops, k);  // [L, Hkv·dh]
    linearT(a, w.attn.v_w, w.attn.v_b, scratch, &run.flops, v);
    // RoPE on the first rotary dims of each head (partial), the rest pass;
    // head_h = softmax(q_h k_gᵀ / √dh + causal) v_g
    attend(run, l, att, q, k, v, cache, ctx, concat);
    // x = x + (Concat(heads) W_denseᵀ + b) + (gelu_new(a W_fc1ᵀ + b1) W_fc2ᵀ + b2)     [L, d]
    linearT(concat, w.attn.o_w, w.attn.o_b, scratch, &run.flops, attn);
    headWrites(run, l, concat, attn, [&](const Mat& in, Mat& o) { linearT(in, w.attn.o_w, w.attn.o_b, scratch, &run.flops, o); });
    linearT(a, w.fc1_w, w.fc1_b, scratch, &run.flops, up);
    activate(up, W.act);
    linearT(up, w.fc2_w, w.fc2_b, scratch, &run.flops, down);
    x += attn + down;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  enterLayer(run, c.layers, x);  // the stream the final norm reads
  // hidden = LN(x; final_layernorm)                                [L, d]
  layerNorm(x, W.final_w, W.final_b, c.ln_eps);
  run.hidden = std::move(x);
}

// logits = hidden lm_headᵀ + b                                      [rows, V]
Mat phiLogits(const Model& m, const Mat& hidden, double* flops) {
  Mat logits = lmHeadLogits(m.lm_head, hidden, flops);
  logits.rowwise() += m.as<PhiWeights>().head_bias.vec();
  return logits;
}

// llama.cpp's names for Phi's tensors (the "phi2" architecture), nothing changed.
std::vector<GgufTensorName> phiGgufTensors() {
  const std::string a = "model.layers.#.self_attn.", m = "model.layers.#.mlp.";
  return {{"token_embd.weight", "model.embed_tokens.weight"},
          {"output_norm.weight", "model.final_layernorm.weight"},
          {"output_norm.bias", "model.final_layernorm.bias"},
          {"output.weight", "lm_head.weight"},
          {"output.bias", "lm_head.bias"},
          {"blk.#.attn_norm.weight", "model.layers.#.input_layernorm.weight"},
          {"blk.#.attn_norm.bias", "model.layers.#.input_layernorm.bias"},
          {"blk.#.attn_q.weight", a + "q_proj.weight"},
          {"blk.#.attn_q.bias", a + "q_proj.bias"},
          {"blk.#.attn_k.weight", a + "k_proj.weight"},
          {"blk.#.attn_k.bias", a + "k_proj.bias"},
          {"blk.#.attn_v.weight", a + "v_proj.weight"},
          {"blk.#.attn_v.bias", a + "v_proj.bias"},
          {"blk.#.attn_output.weight", a + "dense.weight"},
          {"blk.#.attn_output.bias", a + "dense.bias"},
          {"blk.#.ffn_up.weight", m + "fc1.weight"},
          {"blk.#.ffn_up.bias", m + "fc1.bias"},
          {"blk.#.ffn_down.weight", m + "fc2.weight"},
          {"blk.#.ffn_down.bias", m + "fc2.bias"}};
}

// Phi2Model's keys: rope.dimension_count = int(partial_rotary_factor · d) //
// heads, no base (llama.cpp's 10,000 unless rope.freq_base says otherwise).
// Files converted from Phi-2's first checkpoints (mixer.Wqkv) hold a fused
// attn_qkv, not one of Phi's tensors: refused by name.
void phiGgufConfig(GgufKeys& k, nlohmann::json& c) {
  ggufDecoderSizes(k, c);
  c["layer_norm_eps"] = k.number("attention.layer_norm_epsilon");
  ggufRope(k, c, c["hidden_size"].get<int64_t>() / c["num_attention_heads"].get<int64_t>(), true);
}

}  // namespace

Family makePhiFamily() {
  Family f;
  f.model_type = "phi";
  f.label = "Phi";
  f.architectures = {"PhiForCausalLM", "PhiModel"};
  f.paper = "Gunasekar et al. 2023";
  f.prefix = "model.";
  f.probe = "embed_tokens.weight";
  f.parse = phiParse;
  f.buffer = [](const std::string& name) {
    return name.rfind("layers.", 0) == 0 && name.ends_with(".self_attn.rotary_emb.inv_freq");
  };
  f.load = phiLoad;
  f.forward = phiForward;
  f.logits = phiLogits;
  f.gguf = {{"phi2", "PhiForCausalLM", phiGgufConfig, phiGgufTensors()}};
  return f;
}

}  // namespace attn
