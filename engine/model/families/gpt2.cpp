// GPT-2 (Radford et al. 2019), with the Hugging Face semantics of
// GPT2LMHeadModel / GPT2Model: pre-LN blocks, learned positions, causal.
//   x = wte[ids] + wpe[positions]
//   per layer:  a = LN(x; ln_1)
//               [q | k | v] = a W_attn + b_attn        (Conv1D: W [in, out])
//               head_h = softmax(q_h k_hᵀ / √d_head + causal) v_h
//               x = x + Concat(head_1 … head_H) W_proj + b_proj
//               x = x + gelu_new(LN(x; ln_2) W_fc + b_fc) W_mproj + b_mproj
//   hidden = LN(x; ln_f);  logits = hidden lm_headᵀ (lm_head tied to wte unless saved)
// A GGUF file holds the Conv1D weights transposed, as nn.Linear's [out, in]
// (llama.cpp's converter transposes them): read so, left in the map.
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/families/family.h"

#include <cmath>

namespace attn {

namespace {

struct Gpt2Layer {
  Weight ln1_w, ln1_b, attn_w, attn_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, mproj_w, mproj_b;
};
struct Gpt2Weights : FamilyWeights {
  Weight wte, wpe, ln_f_w, ln_f_b;
  std::vector<Gpt2Layer> layers;
  Activation act = Activation::GeluTanh;
};

void gpt2Parse(const ConfigReader& r, ModelConfig& c) {
  c.layers = r.positive("n_layer", kMaxLayers);
  c.heads = r.positive("n_head", kMaxWidth);
  c.d_model = r.positive("n_embd", kMaxWidth);
  c.d_ff = r.positive("n_inner", kMaxWidth, 4 * c.d_model);
  c.positions = r.has("n_positions") ? r.positive("n_positions", kMaxCount) : r.positive("n_ctx", kMaxCount);
  c.vocab = r.positive("vocab_size", kMaxCount);
  c.ln_eps = r.epsilon("layer_norm_epsilon", 1e-5);
  c.activation = r.oneOf("activation_function", "gelu_new", {"gelu_new", "gelu_pytorch_tanh"});
  if (!r.flag("scale_attn_weights", true)) r.fail("scale_attn_weights", "is false, which GPT-2 here does not implement (expected true)");
  if (r.flag("scale_attn_by_inverse_layer_idx", false))
    r.fail("scale_attn_by_inverse_layer_idx", "is true, which GPT-2 here does not implement (expected false)");
}

// The causal-mask buffers older checkpoints carry: "h.N.attn.bias", "h.N.attn.masked_bias".
bool gpt2Buffer(const std::string& name) {
  if (name.rfind("h.", 0) != 0) return false;
  const size_t dot = name.find('.', 2);
  if (dot == std::string::npos) return false;
  const std::string rest = name.substr(dot + 1);
  return rest == "attn.bias" || rest == "attn.masked_bias";
}

std::unique_ptr<FamilyWeights> gpt2Load(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, ff = c.d_ff;
  auto w = std::make_unique<Gpt2Weights>();
  w->wte = s.take("wte.weight", {c.vocab, d});
  w->wpe = s.take("wpe.weight", {c.positions, d});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("h.", l, "");
    Gpt2Layer& y = w->layers.emplace_back();
    y.ln1_w = s.take(p + "ln_1.weight", {d}), y.ln1_b = s.take(p + "ln_1.bias", {d});
    // Conv1D [in, out]
    y.attn_w = s.take(p + "attn.c_attn.weight", {d, 3 * d}), y.attn_b = s.take(p + "attn.c_attn.bias", {3 * d});
    y.proj_w = s.take(p + "attn.c_proj.weight", {d, d}), y.proj_b = s.take(p + "attn.c_proj.bias", {d});
    y.ln2_w = s.take(p + "ln_2.weight", {d}), y.ln2_b = s.take(p + "ln_2.bias", {d});
    y.fc_w = s.take(p + "mlp.c_fc.weight", {d, ff}), y.fc_b = s.take(p + "mlp.c_fc.bias", {ff});
    y.mproj_w = s.take(p + "mlp.c_proj.weight", {ff, d}), y.mproj_b = s.take(p + "mlp.c_proj.bias", {d});
    progress(l);
  }
  w->ln_f_w = s.take("ln_f.weight", {d});
  w->ln_f_b = s.take("ln_f.bias", {d});
  const Weight head = s.takeFull("lm_head.weight", {c.vocab, d}, Need::Optional);
  m.lm_head = head.present() ? head : w->wte;  // tied to wte unless saved
  m.predicts = true;
  return w;
}

// y = x W + b, W a Conv1D [in, out]; or x Wᵀ + b where W is stored transposed, [out, in] (a GGUF file's)   [L, out]
void conv1d(const Mat& x, const Weight& w, const Weight& b, std::vector<float>& scratch, double* flops, Mat& y) {
  if (w.transposed) return linearT(x, w, b, scratch, flops, y);
  linear(x, w, &b, false, y);
  *flops += linearFlops(x.rows(), w);
}

void gpt2Forward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const Gpt2Weights& W = m.as<Gpt2Weights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), d = c.d_model, p0 = run.first_position;
  // x = wte[ids] + wpe[p0 … p0 + L)                                [L, d]
  Mat x(L, d);
  for (int64_t i = 0; i < L; ++i)
    x.row(i) = W.wte.mat().row(run.ids[static_cast<size_t>(i)]) + W.wpe.mat().row(p0 + i);
  // causal, aligned to the bottom right: query i is position p0 + i
  const AttentionSpec att{.heads = c.heads, .kv_heads = c.heads, .keys = KeyRange{p0, p0 + L, true, 0},
                          .scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
  std::vector<float> scratch;  // a stored matrix being used, as floats
  Mat a, qkv, q, k, v, concat, proj, f, f2;
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const Gpt2Layer& w = W.layers[static_cast<size_t>(l)];
    // a = LN(x; ln_1)                                              [L, d]
    a = x;
    layerNorm(a, w.ln1_w, w.ln1_b, c.ln_eps);
    // qkv = a W_attn + b_attn = [q | k | v]                       [L, 3d]
    conv1d(a, w.attn_w, w.attn_b, scratch, &run.flops, qkv);
    q = qkv.leftCols(d);
    k = qkv.middleCols(d, d);
    v = qkv.rightCols(d);
    // head_h = softmax(q_h k_hᵀ / √d_head + causal) v_h over the cached and new keys   [L, d_head] × H
    attend(run, l, att, q, k, v, cache, ctx, concat);
    // x = x + Concat(head_1 … head_H) W_proj + b_proj             [L, d]
    conv1d(concat, w.proj_w, w.proj_b, scratch, &run.flops, proj);
    headWrites(run, l, concat, proj, [&](const Mat& in, Mat& o) { conv1d(in, w.proj_w, w.proj_b, scratch, &run.flops, o); });
    x += proj;
    // x = x + gelu(LN(x; ln_2) W_fc + b_fc) W_mproj + b_mproj     [L, d_ff] → [L, d]
    a = x;
    layerNorm(a, w.ln2_w, w.ln2_b, c.ln_eps);
    conv1d(a, w.fc_w, w.fc_b, scratch, &run.flops, f);
    activate(f, Activation::GeluTanh);
    conv1d(f, w.mproj_w, w.mproj_b, scratch, &run.flops, f2);
    x += f2;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  enterLayer(run, c.layers, x);  // the stream the final norm reads
  // hidden = LN(x; ln_f)                                           [L, d]
  finalLayerNorm(run, x, W.ln_f_w, W.ln_f_b, c.ln_eps);
  run.hidden = std::move(x);
}

}  // namespace

std::vector<GgufTensorName> gpt2GgufTensors(GgufUndo linear) {
  const std::string h = "transformer.h.#.";
  return {{"token_embd.weight", "transformer.wte.weight"},
          {"position_embd.weight", "transformer.wpe.weight"},
          {"output_norm.weight", "transformer.ln_f.weight"},
          {"output_norm.bias", "transformer.ln_f.bias"},
          {"output.weight", "lm_head.weight"},
          {"blk.#.attn_norm.weight", h + "ln_1.weight"},
          {"blk.#.attn_norm.bias", h + "ln_1.bias"},
          {"blk.#.attn_qkv.weight", h + "attn.c_attn.weight", linear},
          {"blk.#.attn_qkv.bias", h + "attn.c_attn.bias"},
          {"blk.#.attn_output.weight", h + "attn.c_proj.weight", linear},
          {"blk.#.attn_output.bias", h + "attn.c_proj.bias"},
          {"blk.#.ffn_norm.weight", h + "ln_2.weight"},
          {"blk.#.ffn_norm.bias", h + "ln_2.bias"},
          {"blk.#.ffn_up.weight", h + "mlp.c_fc.weight", linear},
          {"blk.#.ffn_up.bias", h + "mlp.c_fc.bias"},
          {"blk.#.ffn_down.weight", h + "mlp.c_proj.weight", linear},
          {"blk.#.ffn_down.bias", h + "mlp.c_proj.bias"}};
}

int64_t gpt2GgufConfig(GgufKeys& k, nlohmann::json& c) {
  const int64_t d = k.count("embedding_length", kMaxWidth), heads = k.count("attention.head_count", kMaxWidth);
  c["n_layer"] = k.count("block_count", kMaxLayers);
  c["n_embd"] = d;
  c["n_head"] = heads;
  c["n_inner"] = k.count("feed_forward_length", kMaxWidth, 4 * d);
  c["n_positions"] = k.count("context_length", kMaxCount);
  c["layer_norm_epsilon"] = k.number("attention.layer_norm_epsilon");
  return k.count("attention.head_count_kv", kMaxWidth, heads);
}

namespace {

// GPT2Model's keys; no head_count_kv other than the heads.
void gpt2OwnGgufConfig(GgufKeys& k, nlohmann::json& c) {
  gpt2GgufConfig(k, c);
  ggufHeadsAllKv(k, "GPT-2");
}

}  // namespace

Family makeGpt2Family() {
  Family f;
  f.model_type = "gpt2";
  f.label = "GPT-2";
  f.architectures = {"GPT2LMHeadModel", "GPT2Model"};
  f.paper = "Radford et al. 2019";
  f.prefix = "transformer.";
  f.probe = "wte.weight";
  f.tokenizer = TokenizerFiles::Gpt2;
  f.parse = gpt2Parse;
  f.buffer = gpt2Buffer;
  f.load = gpt2Load;
  f.forward = gpt2Forward;
  // The converter saves the four Conv1D weights transposed (read back as Conv1D).
  f.gguf = {{"gpt2", "GPT2LMHeadModel", gpt2OwnGgufConfig, gpt2GgufTensors(GgufUndo::Transposed)}};
  return f;
}

}  // namespace attn
