// OPT (Zhang et al. 2022), with the Hugging Face semantics of OPTForCausalLM /
// OPTModel (transformers' models/opt/modeling_opt.py): learned positions
// read at row position + 2 (OPTLearnedPositionalEmbedding's offset), ReLU
// MLP, biases everywhere (enable_bias), causal.
//   x = embed_tokens[ids] (project_inᵀ when word_embed_proj_dim ≠ hidden_size) + embed_positions[p + 2]
//   per layer (do_layer_norm_before, every size but 350m):
//               a = LN(x; self_attn_layer_norm)
//               q = a W_qᵀ + b_q, k = a W_kᵀ + b_k, v = a W_vᵀ + b_v
//               head_h = softmax(q_h k_hᵀ / √d_head + causal) v_h
//               x = x + Concat(head_1 … head_H) W_outᵀ + b_out
//               x = x + ReLU(LN(x; final_layer_norm) W_fc1ᵀ + b_fc1) W_fc2ᵀ + b_fc2
//   per layer (post-LN, OPT-350m): x = LN(x + attn(x); self_attn_layer_norm),
//               x = LN(x + mlp(x); final_layer_norm)
//   hidden = LN(x; decoder.final_layer_norm) (pre-LN without _remove_final_layer_norm; else x)
//   logits = hidden (project_outᵀ) embed_tokensᵀ (lm_head tied unless tie_word_embeddings is false)
// transformers scales q (bias included) by d_head^-0.5 before q kᵀ; the same
// product as scaling the scores, which is how it runs here: run.q is the
// projection itself, the scores carry 1/√d_head.
#include "engine/attention_math.h"
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// nn.Linear layouts [out, in]; biases absent when enable_bias is false.
struct OptLayer {
  Weight attn_ln_w, attn_ln_b, ffn_ln_w, ffn_ln_b, fc1_w, fc1_b, fc2_w, fc2_b;
  AttentionWeights attn;
};
struct OptWeights : FamilyWeights {
  Weight embed, positions, project_in, project_out, final_ln_w, final_ln_b;
  std::vector<OptLayer> layers;
  Activation act = Activation::Relu;
};

// OPTLearnedPositionalEmbedding: the table has max_position_embeddings + 2 rows.
constexpr int64_t kOptPositionOffset = 2;

int64_t optEmbedDim(const ModelConfig& c) { return c.embed_dim > 0 ? c.embed_dim : c.d_model; }

// The MLP's activation as ModelConfig names it (read and checked by optParse).
Activation optActivation(const ModelConfig& c) {
  const nlohmann::json j = {{"activation_function", c.activation}};
  return readActivation(ConfigReader{j, "config.json"}, "activation_function", "relu");
}

void optParse(const ConfigReader& r, ModelConfig& c) {
  c.layers = r.positive("num_hidden_layers", kMaxLayers);
  c.heads = r.positive("num_attention_heads", kMaxWidth);
  // Old configs name the width d_model (OPTConfig's attribute_map).
  c.d_model = r.has("hidden_size") ? r.positive("hidden_size", kMaxWidth) : r.positive("d_model", kMaxWidth);
  c.d_ff = r.positive("ffn_dim", kMaxWidth);
  c.positions = r.positive("max_position_embeddings", kMaxCount - kOptPositionOffset, 2048);
  c.vocab = r.positive("vocab_size", kMaxCount);
  if (c.d_model % c.heads != 0)
    throw InputError(r.where + ": num_attention_heads (" + std::to_string(c.heads) + ") must divide hidden_size (" +
                     std::to_string(c.d_model) + ")");
  c.head_dim = c.d_model / c.heads;
  c.ln_eps = 1e-5;  // nn.LayerNorm's default: OPTConfig has no ε field
  readActivation(r, "activation_function", "relu");  // refuses the ones activate() does not implement
  c.activation = r.text("activation_function", "relu");
  const int64_t proj = r.positive("word_embed_proj_dim", kMaxWidth, c.d_model);
  c.embed_dim = proj == c.d_model ? 0 : proj;
  const bool pre_ln = r.flag("do_layer_norm_before", true);
  c.post_ln = !pre_ln;
  // OPTDecoder builds its final norm only when pre-LN and not _remove_final_layer_norm.
  const bool remove_final = r.flag("_remove_final_layer_norm", false);
  c.final_norm = pre_ln && !remove_final;
  c.linear_bias = r.flag("enable_bias", true);
  c.qkv_bias = c.linear_bias;
  if (!r.flag("layer_norm_elementwise_affine", true))
    r.fail("layer_norm_elementwise_affine", "is false, which OPT here does not implement (expected true)");
  c.tie_embeddings = r.flag("tie_word_embeddings", true);
  const std::string eps = formatNumber(c.ln_eps);
  c.blocks = std::string("LayerNorm (ε ") + eps + ") " + (pre_ln ? "pre-LN" : "post-LN") + " / " + c.activation +
             " MLP" + (c.linear_bias ? ", biases" : ", no biases") + ", learned positions (row p + 2)" +
             (c.final_norm ? ", final LayerNorm" : "") +
             (proj != c.d_model ? ", embeddings of width " + std::to_string(proj) + " projected in and out" : "") +
             (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::unique_ptr<FamilyWeights> optLoad(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, ff = c.d_ff, e = optEmbedDim(c);
  auto w = std::make_unique<OptWeights>();
  w->embed = s.lazy("decoder.embed_tokens.weight", {c.vocab, e});
  w->positions = s.lazy("decoder.embed_positions.weight", {c.positions + kOptPositionOffset, d});
  if (e != d) {
    w->project_in = s.lazy("decoder.project_in.weight", {d, e});  // nn.Linear [out, in], no bias
    w->project_out = s.lazy("decoder.project_out.weight", {e, d});
  }
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("decoder.layers.", l, "");
    OptLayer& y = w->layers.emplace_back();
    y.attn_ln_w = s.take(p + "self_attn_layer_norm.weight", {d});
    y.attn_ln_b = s.take(p + "self_attn_layer_norm.bias", {d});
    y.attn = takeProjections(s, p + "self_attn.", "out_proj", c, c.linear_bias, c.linear_bias);
    y.ffn_ln_w = s.take(p + "final_layer_norm.weight", {d}), y.ffn_ln_b = s.take(p + "final_layer_norm.bias", {d});
    std::tie(y.fc1_w, y.fc1_b) = takeLinear(s, p + "fc1", ff, d, c.linear_bias);
    std::tie(y.fc2_w, y.fc2_b) = takeLinear(s, p + "fc2", d, ff, c.linear_bias);
    progress(l);
  }
  // Without final_norm transformers builds no final norm (post-LN, or _remove_final_layer_norm):
  // a checkpoint that still carries one has it ignored, as transformers does.
  const Need final = c.final_norm ? Need::Required : Need::Optional;
  w->final_ln_w = s.take("decoder.final_layer_norm.weight", {d}, final);
  w->final_ln_b = s.take("decoder.final_layer_norm.bias", {d}, final);
  w->act = optActivation(c);
  // Tied (the default): the head is embed_tokens, a saved lm_head.weight equal to it and unused.
  m.lm_head = lmHeadUnlessTied(s, c, w->embed, TiedHead::Ignored, e);
  m.predicts = true;
  return w;
}

void optForward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const OptWeights& W = m.as<OptWeights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  std::vector<float> scratch;  // the 16-bit matrix being used, as floats
  // x = embed_tokens[ids] (project_inᵀ)                           [L, proj] → [L, d]
  Mat x = embedRows(W.embed, run.ids);
  if (W.project_in.present()) {
    Mat projected;
    linearT(x, W.project_in, Weight{}, scratch, &run.flops, projected);
    x = std::move(projected);
  }
  // x += embed_positions[p0 + i + 2]                               [L, d]
  std::vector<int32_t> rows(static_cast<size_t>(L));
  for (int64_t i = 0; i < L; ++i) rows[static_cast<size_t>(i)] = static_cast<int32_t>(p0 + i + kOptPositionOffset);
  x += embedRows(W.positions, rows);
  // causal, query i is position p0 + i
  const AttentionSpec att{.heads = c.heads, .kv_heads = c.heads, .keys = KeyRange{p0, T, true, 0},
                          .scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
  Mat a, q, k, v, concat, proj, f, f2;
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const OptLayer& w = W.layers[static_cast<size_t>(l)];
    // a = LN(x; self_attn_layer_norm) (pre-LN) or x (post-LN)      [L, d]
    a = x;
    if (!c.post_ln) layerNorm(a, w.attn_ln_w, w.attn_ln_b, c.ln_eps);
    // q, k, v = a W_ᵀ + b_                                          [L, d] × 3
    linearT(a, w.attn.q_w, w.attn.q_b, scratch, &run.flops, q);
    linearT(a, w.attn.k_w, w.attn.k_b, scratch, &run.flops, k);
    linearT(a, w.attn.v_w, w.attn.v_b, scratch, &run.flops, v);
    // head_h = softmax(q_h k_hᵀ / √d_head + causal) v_h over the cached and new keys
    attend(run, l, att, q, k, v, cache, ctx, concat);
    // x = x + Concat(head_1 … head_H) W_outᵀ + b_out (then LN when post-LN)    [L, d]
    linearT(concat, w.attn.o_w, w.attn.o_b, scratch, &run.flops, proj);
    headWrites(run, l, concat, proj, [&](const Mat& in, Mat& o) { linearT(in, w.attn.o_w, w.attn.o_b, scratch, &run.flops, o); });
    x += proj;
    if (c.post_ln) layerNorm(x, w.attn_ln_w, w.attn_ln_b, c.ln_eps);
    // x = x + act(a W_fc1ᵀ + b_fc1) W_fc2ᵀ + b_fc2, a = LN(x; final_layer_norm) or x   [L, d_ff] → [L, d]
    a = x;
    if (!c.post_ln) layerNorm(a, w.ffn_ln_w, w.ffn_ln_b, c.ln_eps);
    linearT(a, w.fc1_w, w.fc1_b, scratch, &run.flops, f);
    activate(f, W.act);
    linearT(f, w.fc2_w, w.fc2_b, scratch, &run.flops, f2);
    x += f2;
    if (c.post_ln) layerNorm(x, w.ffn_ln_w, w.ffn_ln_b, c.ln_eps);
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  enterLayer(run, c.layers, x);  // the stream the final norm reads
  // hidden = LN(x; final_layer_norm) when the decoder has it       [L, d]
  if (c.final_norm) layerNorm(x, W.final_ln_w, W.final_ln_b, c.ln_eps);
  run.hidden = std::move(x);
}

// logits = hidden (project_outᵀ) lm_headᵀ                          [rows, V]
Mat optLogits(const Model& m, const Mat& hidden, double* flops) {
  const OptWeights& W = m.as<OptWeights>();
  if (!W.project_out.present()) return lmHeadLogits(m.lm_head, hidden, flops);
  std::vector<float> scratch;
  Mat projected;
  linearT(hidden, W.project_out, Weight{}, scratch, flops, projected);
  return lmHeadLogits(m.lm_head, projected, flops);
}

}  // namespace

Family makeOptFamily() {
  Family f;
  f.model_type = "opt";
  f.label = "OPT";
  f.architectures = {"OPTForCausalLM", "OPTModel"};
  f.paper = "Zhang et al. 2022";
  f.prefix = "model.";
  f.probe = "decoder.embed_tokens.weight";
  f.parse = optParse;
  f.load = optLoad;
  f.forward = optForward;
  f.logits = optLogits;
  return f;
}

}  // namespace attn
