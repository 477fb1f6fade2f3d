// ModernBERT (Warner et al. 2024), with the Hugging Face semantics of
// ModernBertModel / ModernBertForMaskedLM (transformers' modeling_modernbert.py,
// both generations): a pre-LN bidirectional encoder without biases or
// position embeddings, RoPE with a base per attention kind, GeGLU, and
// global attention every n-th layer, a local window elsewhere.
//   x = LN(tok_embeddings[ids])                                   (LayerNorm without bias)
//   per layer l:  a = l == 0 ? x : LN_attn(x)                     (layer 0's attn_norm is Identity)
//                 [q | k | v] = a Wqkvᵀ                           [L, 3d], heads in order within each
//                 q, k turned by RoPE at positions 0 … L − 1 with θ of the layer's kind
//                 head_h = softmax(q_h k_hᵀ / √d_head + mask) v_h
//                   global (l % n == 0, or layer_types "full_attention"): every key;
//                   local: keys with |i − j| ≤ local_attention / 2
//                 x = x + Concat(head_1 … head_H) Woᵀ
//                 [u | g] = LN_mlp(x) Wiᵀ                          [L, 2·d_ff]
//                 x = x + (act(u) ⊙ g) Woᵀ
//   hidden = LN_final(x)
//   MLM: logits = LN_head(act_cls(hidden W_denseᵀ)) decoderᵀ + b_decoder   (decoder tied to tok_embeddings by default)
#include "engine/attention_math.h"
#include "engine/model/families/family.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// nn.Linear layouts [out, in]; no biases (attention_bias, mlp_bias, norm_bias false).
struct ModernBertLayer {
  Weight attn_norm;  // absent for layer 0 (Identity)
  Weight wqkv, wo, mlp_norm, wi, mlp_wo;
  std::vector<double> theta;  // RoPE's θ_i for this layer's kind
  int64_t window = 0;         // local_attention for local layers, 0 for global
};
struct ModernBertWeights : FamilyWeights {
  Weight embed, emb_norm, final_norm;
  std::vector<ModernBertLayer> layers;
  Activation act = Activation::GeluErf;
  Weight head_dense, head_norm, decoder, decoder_bias;  // the masked-LM head, when saved
};

// A bias or bias-like flag that is not implemented: only `expected` is admitted.
void modernbertRefuseFlag(const ConfigReader& r, const std::string& key, bool def, bool expected) {
  if (r.flag(key, def) != expected)
    r.fail(key, std::string("is ") + (expected ? "false" : "true") + ", which ModernBERT does not implement (expected " +
                    (expected ? "true" : "false") + ")");
}

// transformers' ModernBertConfig (4.x: global/local_rope_theta and
// global_attn_every_n_layers; 5: layer_types and rope_parameters nested per
// layer type), with its defaults.
void modernbertParse(const ConfigReader& r, ModelConfig& c) {
  c.causal = false;
  c.vocab = r.positive("vocab_size", kMaxCount, 50368);
  c.d_model = r.positive("hidden_size", kMaxWidth, 768);
  c.d_ff = r.positive("intermediate_size", kMaxWidth, 1152);
  c.layers = r.positive("num_hidden_layers", kMaxLayers, 22);
  c.heads = r.positive("num_attention_heads", kMaxWidth, 12);
  c.positions = r.positive("max_position_embeddings", kMaxCount, 8192);
  if (c.d_model % c.heads != 0)
    throw InputError(r.where + ": the heads (" + std::to_string(c.heads) + ") must divide hidden_size (" +
                     std::to_string(c.d_model) + ")");
  c.head_dim = c.d_model / c.heads;
  // ModernBERT's head width is always hidden_size / heads; a head_dim saying otherwise is not this model.
  if (r.has("head_dim") && r.positive("head_dim", kMaxWidth) != c.head_dim)
    r.fail("head_dim", "is " + r.find("head_dim")->dump() + ", but ModernBERT's heads are hidden_size / num_attention_heads = " +
                           std::to_string(c.head_dim) + " wide");
  if (c.head_dim % 2 != 0)
    throw InputError(r.where + ": the head width hidden_size / num_attention_heads (" + std::to_string(c.head_dim) +
                     ") must be even (RoPE turns pairs of dimensions)");
  c.ln_eps = r.epsilon("norm_eps", 1e-5);
  readActivation(r, "hidden_activation", "gelu");  // refuses an unknown name naming the field
  c.activation = r.text("hidden_activation", "gelu");
  r.oneOf("classifier_activation", "gelu", {"gelu"});
  modernbertRefuseFlag(r, "attention_bias", false, false);
  modernbertRefuseFlag(r, "mlp_bias", false, false);
  modernbertRefuseFlag(r, "norm_bias", false, false);
  modernbertRefuseFlag(r, "classifier_bias", false, false);
  modernbertRefuseFlag(r, "decoder_bias", true, true);
  c.tie_embeddings = r.flag("tie_word_embeddings", true);

  // Which layers are global: layer_types (5), else l % global_attn_every_n_layers == 0 (4.x; 5 keeps the
  // field, and its flash-attention path still uses it, so the two must agree).
  const int64_t every = r.positive("global_attn_every_n_layers", kMaxLayers, 3);
  auto byEvery = [every](int64_t l) { return l % every == 0 ? std::string("full_attention") : "sliding_attention"; };
  const std::vector<std::string> types = readLayerTypes(r, c.layers, byEvery);
  for (int64_t l = 0; l < c.layers; ++l)
    if (types[static_cast<size_t>(l)] != byEvery(l))
      r.fail("layer_types", "makes layer " + std::to_string(l) + " " + types[static_cast<size_t>(l)] +
                                ", but global_attn_every_n_layers (" + std::to_string(every) +
                                ") makes it " + byEvery(l) + " (transformers' attention paths would disagree)");
  const int64_t local = r.positive("local_attention", kMaxCount, 128);
  // transformers 5's config property: sliding_window = local_attention // 2 (setting it sets local_attention).
  if (r.has("sliding_window") && r.positive("sliding_window", kMaxCount) != local / 2)
    r.fail("sliding_window", "is " + r.find("sliding_window")->dump() + ", but local_attention " + std::to_string(local) +
                                 " makes it " + std::to_string(local / 2));
  bool any_local = false;
  for (int64_t l = 0; l < c.layers; ++l) {
    const bool sliding = types[static_cast<size_t>(l)] == "sliding_attention";
    any_local = any_local || sliding;
    c.layer_window.push_back(sliding ? local : 0);
  }
  if (any_local) c.sliding_window = local;
  else c.layer_window.clear();

  // RoPE: θ of global layers global_rope_theta (160,000), of local layers local_rope_theta (10,000; null: the
  // global θ, as 4.x reads it); transformers 5 nests them in rope_parameters, and applies a 4.x rope_scaling to both.
  if (r.has("rope_theta"))
    r.fail("rope_theta", "is " + r.find("rope_theta")->dump() +
                             ", but ModernBERT reads global_rope_theta and local_rope_theta (or rope_parameters per layer type)");
  const double global_theta = r.number("global_rope_theta", 160000.0, 1.0, 1e12);
  const auto lt = r.j.find("local_rope_theta");
  const double local_theta = lt != r.j.end() && lt->is_null() ? global_theta : r.number("local_rope_theta", 10000.0, 1.0, 1e12);
  if (const nlohmann::json* p = r.find("rope_parameters")) {
    if (r.has("rope_scaling"))
      r.fail("rope_scaling", "is " + r.find("rope_scaling")->dump() + " beside rope_parameters, which ModernBERT does not implement");
    if (!p->is_object() || p->empty())
      r.fail("rope_parameters", "must be an object with an entry per layer type, got " + p->dump());
    for (const auto& [kind, entry] : p->items()) {
      if (!entry.is_object() || (kind != "full_attention" && kind != "sliding_attention"))
        r.fail("rope_parameters", "must be nested per layer type ({\"full_attention\": {…}, \"sliding_attention\": {…}}), got " +
                                      p->dump());
      if (entry.contains("partial_rotary_factor") && entry["partial_rotary_factor"] != 1.0)
        throw InputError(r.where + " rope_parameters." + kind + ": field 'partial_rotary_factor' is " +
                         entry["partial_rotary_factor"].dump() + ", which ModernBERT does not implement (expected 1.0)");
    }
    // An absent kind gets the default RoPE with the θ above (transformers 5's setdefault).
    auto kindRope = [&](const std::string& kind, double theta) {
      if (p->contains(kind)) return readRope(r, kind, theta);
      RopeSpec s;
      s.theta = theta;
      return s;
    };
    c.rope = kindRope("full_attention", global_theta);
    c.rope_local = kindRope("sliding_attention", local_theta);
  } else if (const nlohmann::json* s = r.find("rope_scaling")) {
    // The scaling of both kinds, each from its own θ (readRope's 4.x path, given that θ as rope_theta).
    const nlohmann::json g = {{"rope_theta", global_theta}, {"rope_scaling", *s}};
    const nlohmann::json l = {{"rope_theta", local_theta}, {"rope_scaling", *s}};
    c.rope = readRope(ConfigReader{g, r.where}, "", global_theta);
    c.rope_local = readRope(ConfigReader{l, r.where}, "", local_theta);
  } else {
    c.rope.theta = global_theta;
    c.rope_local.theta = local_theta;
  }
  c.uses_rope = true;
  c.local_rope = any_local;
  const std::string eps = formatNumber(c.ln_eps);
  c.blocks = std::string("pre-LN LayerNorm (ε ") + eps + ", no bias) / GeGLU (" + c.activation + "), global attention every " +
             std::to_string(every) + " layers, local window " + std::to_string(local) + " elsewhere" +
             (c.tie_embeddings ? ", decoder tied to the embeddings" : "");
}

std::unique_ptr<FamilyWeights> modernbertLoad(WeightSource& s, Model& m,
                                              const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, ff = c.d_ff, V = c.vocab;
  auto w = std::make_unique<ModernBertWeights>();
  w->act = activationNamed(c.activation);
  w->embed = s.lazy("embeddings.tok_embeddings.weight", {V, d});
  w->emb_norm = s.take("embeddings.norm.weight", {d});
  const std::vector<double> global = c.rope.frequencies(c.head_dim), local = c.rope_local.frequencies(c.head_dim);
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("layers.", l, "");
    ModernBertLayer& y = w->layers.emplace_back();
    if (l > 0) y.attn_norm = s.take(p + "attn_norm.weight", {d});  // layer 0: Identity, no tensor
    y.wqkv = s.lazy(p + "attn.Wqkv.weight", {3 * d, d}), y.wo = s.lazy(p + "attn.Wo.weight", {d, d});  // [out, in]
    y.mlp_norm = s.take(p + "mlp_norm.weight", {d});
    y.wi = s.lazy(p + "mlp.Wi.weight", {2 * ff, d}), y.mlp_wo = s.lazy(p + "mlp.Wo.weight", {d, ff});
    y.window = c.windowOf(l);
    y.theta = y.window > 0 ? local : global;
    progress(l);
  }
  w->final_norm = s.take("final_norm.weight", {d});
  // ModernBertForMaskedLM's head; its decoder tied to the embeddings by default (transformers ties
  // it: a saved decoder.weight is then not read).
  std::vector<HeadTensor> mlm = {{"head.dense.weight", {d, d}, true}, {"head.norm.weight", {d}}, {"decoder.bias", {V}}};
  if (c.tie_embeddings) s.allowFull("decoder.weight", {V, d});
  else mlm.push_back({"decoder.weight", {V, d}, true});
  const std::vector<Weight> head = takeWholeHead(s, mlm, "the masked-LM head head.* / decoder.*");
  if (head[0].present()) {
    m.predicts = true;
    w->head_dense = head[0], w->head_norm = head[1], w->decoder_bias = head[2];
    w->decoder = c.tie_embeddings ? w->embed : head[3];
  }
  return w;
}

void modernbertForward(const Model& m, ModelRun& run, KvCache*, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const ModernBertWeights& W = m.as<ModernBertWeights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), d = c.d_model, ff = c.d_ff, H = c.heads, dh = c.head_dim;
  // x = LN(tok_embeddings[ids])                                     [L, d]
  Mat x = embedRows(W.embed, run.ids);
  layerNorm(x, W.emb_norm, Weight{}, c.ln_eps);
  AttentionSpec att{.heads = H, .kv_heads = H, .scale = 1.0f / std::sqrt(static_cast<float>(dh))};
  std::vector<float> scratch;
  Mat a, qkv, q, k, v, concat, proj, wi, u, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const ModernBertLayer& w = W.layers[static_cast<size_t>(l)];
    // a = x (layer 0) or LN_attn(x); [q | k | v] = a Wqkvᵀ          [L, 3d]
    a = x;
    if (w.attn_norm.present()) layerNorm(a, w.attn_norm, Weight{}, c.ln_eps);
    linearT(a, w.wqkv, Weight{}, scratch, &run.flops, qkv);
    q = qkv.leftCols(d);
    k = qkv.middleCols(d, d);
    v = qkv.rightCols(d);
    // RoPE at positions 0 … L − 1 with the layer kind's θ; global layers see every key, local ones
    // |i − j| ≤ local_attention / 2 (one unpadded sequence)
    att.keys = KeyRange{0, L, false, w.window};
    att.rope = &w.theta;
    // head_h = softmax(q_h k_hᵀ / √d_head + mask) v_h               [L, d_head] × H
    attend(run, l, att, q, k, v, nullptr, ctx, concat);
    // x = x + Concat(head_1 … head_H) Woᵀ                           [L, d]
    linearT(concat, w.wo, Weight{}, scratch, &run.flops, proj);
    headWrites(run, l, concat, proj, [&](const Mat& in, Mat& o) { linearT(in, w.wo, Weight{}, scratch, &run.flops, o); });
    x += proj;
    // [u | g] = LN_mlp(x) Wiᵀ; x = x + (act(u) ⊙ g) Woᵀ             [L, 2·d_ff] → [L, d]
    a = x;
    layerNorm(a, w.mlp_norm, Weight{}, c.ln_eps);
    linearT(a, w.wi, Weight{}, scratch, &run.flops, wi);
    u = wi.leftCols(ff);
    activate(u, W.act);
    u = u.cwiseProduct(wi.rightCols(ff));
    linearT(u, w.mlp_wo, Weight{}, scratch, &run.flops, down);
    x += down;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  enterLayer(run, c.layers, x);  // the stream the final norm reads
  // hidden = LN_final(x)
  layerNorm(x, W.final_norm, Weight{}, c.ln_eps);
  run.hidden = std::move(x);
}

// t = LN_head(gelu(h W_denseᵀ)); logits = t decoderᵀ + b          [P, V]: row of position i predicts token i
Mat modernbertLogits(const Model& m, const Mat& hidden, double* flops) {
  const ModernBertWeights& W = m.as<ModernBertWeights>();
  std::vector<float> scratch;
  Mat t;
  linearT(hidden, W.head_dense, Weight{}, scratch, flops, t);
  activate(t, Activation::GeluErf);  // classifier_activation: only "gelu" is admitted
  layerNorm(t, W.head_norm, Weight{}, m.info.config.ln_eps);
  Mat logits = lmHeadLogits(W.decoder, t, flops);
  logits.rowwise() += W.decoder_bias.vec();
  return logits;
}

}  // namespace

Family makeModernBertFamily() {
  Family f;
  f.model_type = "modernbert";
  f.label = "ModernBERT";
  f.architectures = {"ModernBertModel", "ModernBertForMaskedLM"};
  f.paper = "Warner et al. 2024";
  f.prefix = "model.";
  f.probe = "embeddings.tok_embeddings.weight";
  f.causal = false;
  f.tokenizer = TokenizerFiles::Json;
  f.parse = modernbertParse;
  f.load = modernbertLoad;
  f.forward = modernbertForward;
  f.logits = modernbertLogits;
  return f;
}

}  // namespace attn
