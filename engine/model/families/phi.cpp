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
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

struct PhiLayer {
  Weight ln_w, ln_b, q_w, q_b, k_w, k_b, v_w, v_b, dense_w, dense_b, fc1_w, fc1_b, fc2_w, fc2_b;
};
struct PhiWeights : FamilyWeights {
  Weight embed, final_w, final_b, head_bias;
  std::vector<PhiLayer> layers;
  std::vector<double> rope_theta;
  Activation act = Activation::GeluTanh;
};

Activation phiActivation(const std::string& name) {
  const nlohmann::json j = {{"hidden_act", name}};
  return readActivation(ConfigReader{j, "config.json"}, "hidden_act", name);
}

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
  char eps[32];
  std::snprintf(eps, sizeof eps, "%g", c.ln_eps);
  c.blocks = std::string("one LayerNorm (ε ") + eps + ") for attention and " + c.activation +
             " MLP in parallel, RoPE on " + std::to_string(rot) + " of " + std::to_string(c.head_dim) +
             " dims per head, biases everywhere (the LM head's too)" +
             (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::vector<Expected> phiBody(const ModelConfig& c) {
  const int64_t d = c.d_model, ff = c.d_ff, qd = c.heads * c.head_dim, kvd = c.kv_heads * c.head_dim;
  std::vector<Expected> e = {{"embed_tokens.weight", {c.vocab, d}}};
  for (int64_t l = 0; l < c.layers; ++l) {
    auto add = [&](const std::string& rest, std::vector<int64_t> shape) {
      e.push_back({layerName("layers.", l, rest), std::move(shape)});
    };
    add("input_layernorm.weight", {d}), add("input_layernorm.bias", {d});
    add("self_attn.q_proj.weight", {qd, d}), add("self_attn.q_proj.bias", {qd});  // nn.Linear [out, in]
    add("self_attn.k_proj.weight", {kvd, d}), add("self_attn.k_proj.bias", {kvd});
    add("self_attn.v_proj.weight", {kvd, d}), add("self_attn.v_proj.bias", {kvd});
    add("self_attn.dense.weight", {d, qd}), add("self_attn.dense.bias", {d});
    add("mlp.fc1.weight", {ff, d}), add("mlp.fc1.bias", {ff});
    add("mlp.fc2.weight", {d, ff}), add("mlp.fc2.bias", {d});
  }
  e.push_back({"final_layernorm.weight", {d}});
  e.push_back({"final_layernorm.bias", {d}});
  return e;
}

std::unique_ptr<FamilyWeights> phiLoad(const WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  auto w = std::make_unique<PhiWeights>();
  w->embed = s.lazy("embed_tokens.weight");
  for (int64_t l = 0; l < c.layers; ++l) {
    auto t = [&](const std::string& rest) { return s.take(layerName("layers.", l, rest)); };
    auto lazy = [&](const std::string& rest) { return s.lazy(layerName("layers.", l, rest)); };
    w->layers.push_back({t("input_layernorm.weight"), t("input_layernorm.bias"), lazy("self_attn.q_proj.weight"),
                         t("self_attn.q_proj.bias"), lazy("self_attn.k_proj.weight"), t("self_attn.k_proj.bias"),
                         lazy("self_attn.v_proj.weight"), t("self_attn.v_proj.bias"), lazy("self_attn.dense.weight"),
                         t("self_attn.dense.bias"), lazy("mlp.fc1.weight"), t("mlp.fc1.bias"), lazy("mlp.fc2.weight"),
                         t("mlp.fc2.bias")});
    progress(l);
  }
  w->final_w = s.take("final_layernorm.weight");
  w->final_b = s.take("final_layernorm.bias");
  w->head_bias = s.takeFull("lm_head.bias");
  w->rope_theta = c.rope.frequencies(c.head_dim);
  w->act = phiActivation(c.activation);
  m.lm_head = c.tie_embeddings ? w->embed : s.lazyFull("lm_head.weight");
  m.predicts = true;
  return w;
}

void phiForward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const PhiWeights& W = m.as<PhiWeights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  const int64_t H = c.heads, Hkv = c.kv_heads, dh = c.head_dim;
  Mat x = embedRows(W.embed, run.ids);             // [L, d]
  const KeyRange keys{p0, T, true, 0};  // causal, query i at position p0 + i
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  run.q_unrotated.resize(static_cast<size_t>(c.layers));
  run.k_unrotated.resize(static_cast<size_t>(c.layers));
  std::vector<float> scratch;
  Mat a, q, k, v, concat, attn, up, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    const size_t li = static_cast<size_t>(l);
    const PhiLayer& w = W.layers[li];
    // a = LN(x; input_layernorm): the input of both branches        [L, d]
    a = x;
    layerNorm(a, w.ln_w, w.ln_b, c.ln_eps);
    linearT(a, w.q_w, w.q_b, scratch, &run.flops, q);  // [L, H·dh]
    linearT(a, w.k_w, w.k_b, scratch, &run.flops, k);  // [L, Hkv·dh]
    linearT(a, w.v_w, w.v_b, scratch, &run.flops, v);
    if (run.keep_projections) {
      run.q_unrotated[li] = q;
      run.k_unrotated[li] = repeatKvHeads(k, H, Hkv, dh);
    }
    // RoPE on the first rotary dims of each head (partial), the rest pass
    ropeHeads(q, H, dh, W.rope_theta, p0);
    ropeHeads(k, Hkv, dh, W.rope_theta, p0);
    if (run.keep_projections) {
      run.k[li] = repeatKvHeads(k, H, Hkv, dh);
      run.v[li] = repeatKvHeads(v, H, Hkv, dh);
    }
    // head_h = softmax(q_h k_gᵀ / √dh + causal) v_g
    const auto [K, V] = keysWithCache(cache, l, k, v);
    attentionLayer(q, *K, *V, keys, H, Hkv, scale, ctx, run, l, concat);
    if (run.keep_projections) run.q[li] = std::move(q);
    // x = x + (Concat(heads) W_denseᵀ + b) + (gelu_new(a W_fc1ᵀ + b1) W_fc2ᵀ + b2)     [L, d]
    linearT(concat, w.dense_w, w.dense_b, scratch, &run.flops, attn);
    linearT(a, w.fc1_w, w.fc1_b, scratch, &run.flops, up);
    activate(up, W.act);
    linearT(up, w.fc2_w, w.fc2_b, scratch, &run.flops, down);
    x += attn + down;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
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
  f.body = phiBody;
  // The head always has its bias; its weight is embed_tokens when tied.
  f.heads = [](const ModelConfig& c) {
    std::vector<Expected> e = {{"lm_head.bias", {c.vocab}}};
    if (!c.tie_embeddings) e.push_back({"lm_head.weight", {c.vocab, c.d_model}});
    return e;
  };
  f.buffer = [](const std::string& name) {
    return name.rfind("layers.", 0) == 0 && name.ends_with(".self_attn.rotary_emb.inv_freq");
  };
  f.load = phiLoad;
  f.forward = phiForward;
  f.logits = phiLogits;
  return f;
}

}  // namespace attn
