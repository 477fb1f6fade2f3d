// GPT-BigCode / SantaCoder / StarCoder (Allal et al. 2023; Li et al. 2023),
// with the Hugging Face semantics of GPTBigCodeForCausalLM (transformers'
// modeling_gpt_bigcode.py): GPT-2's blocks with nn.Linear layouts and
// multi-query attention.
//   x = wte[ids] + wpe[positions]
//   per layer:  a = LN(x; ln_1)
//               c = a W_attnᵀ + b_attn
//                 multi_query: c = [q (d) | k (d_head) | v (d_head)]: one key/value head for all H query heads
//                 else:        c viewed [L, H, 3·d_head]: per head q_h | k_h | v_h
//               head_h = softmax(q_h k_gᵀ · s + causal) v_g,  s = 1/√d_head (scale_attn_weights) or 1
//               x = x + Concat(head_1 … head_H) W_projᵀ + b_proj
//               x = x + act(LN(x; ln_2) W_fcᵀ + b_fc) W_mprojᵀ + b_mproj
//   hidden = LN(x; ln_f);  logits = hidden wteᵀ (tied) or hidden lm_headᵀ
// attention_softmax_in_fp32 / scale_attention_softmax_in_fp32 only change
// 16-bit rounding (the pass runs in float32); add_cross_attention is refused.
#include "engine/attention_math.h"
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

struct BigcodeLayer {
  Weight ln1_w, ln1_b, attn_w, attn_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, mproj_w, mproj_b;
};
struct BigcodeWeights : FamilyWeights {
  Weight wte, wpe, ln_f_w, ln_f_b;
  std::vector<BigcodeLayer> layers;
  Activation act = Activation::GeluTanh;
};

void bigcodeParse(const ConfigReader& r, ModelConfig& c) {
  c.layers = r.positive("n_layer", kMaxLayers);
  c.heads = r.positive("n_head", kMaxWidth);
  c.d_model = r.positive("n_embd", kMaxWidth);
  c.d_ff = r.positive("n_inner", kMaxWidth, 4 * c.d_model);
  c.positions = r.positive("n_positions", kMaxCount);
  c.vocab = r.positive("vocab_size", kMaxCount);
  if (c.d_model % c.heads != 0)
    throw InputError(r.where + ": the heads (" + std::to_string(c.heads) + ") must divide n_embd (" +
                     std::to_string(c.d_model) + ")");
  c.head_dim = c.d_model / c.heads;
  c.ln_eps = r.epsilon("layer_norm_epsilon", 1e-5);
  c.activation = r.text("activation_function", "gelu_pytorch_tanh");
  readActivation(r, "activation_function", "gelu_pytorch_tanh");  // refuses the ones not implemented
  const bool mqa = r.flag("multi_query", true);
  c.kv_heads = mqa ? 1 : c.heads;
  // Newer configs also save num_key_value_heads (1 if multi_query else n_head); it must agree.
  if (r.has("num_key_value_heads") && r.positive("num_key_value_heads", kMaxWidth) != c.kv_heads)
    r.fail("num_key_value_heads", "is " + r.find("num_key_value_heads")->dump() + ", but multi_query " +
                                      (mqa ? "true means 1" : "false means n_head (" + std::to_string(c.heads) + ")"));
  if (!r.flag("scale_attn_weights", true)) c.score_scale = 1.0;  // scores q·k unscaled
  if (r.flag("add_cross_attention", false))
    r.fail("add_cross_attention", "is true, which GPT-BigCode here does not implement (expected false)");
  // Softmax in float32 and its per-layer unscaling cancel out in exact arithmetic; the pass is float32.
  r.flag("attention_softmax_in_fp32", true);
  r.flag("scale_attention_softmax_in_fp32", true);
  c.tie_embeddings = r.flag("tie_word_embeddings", true);
  const std::string eps = formatNumber(c.ln_eps);
  c.blocks = std::string("LayerNorm (ε ") + eps + ") / " + c.activation + " MLP, " +
             (mqa ? "multi-query attention (one key/value head)" : "multi-head attention") +
             (c.score_scale == 1.0 ? ", unscaled scores" : "") +
             (c.tie_embeddings ? ", head tied to wte" : ", untied lm_head");
}

std::unique_ptr<FamilyWeights> bigcodeLoad(WeightSource& s, Model& m,
                                           const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, ff = c.d_ff, attn_out = d + 2 * c.kv_heads * c.head_dim;
  auto w = std::make_unique<BigcodeWeights>();
  w->wte = s.lazy("wte.weight", {c.vocab, d});
  w->wpe = s.lazy("wpe.weight", {c.positions, d});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("h.", l, "");
    BigcodeLayer& y = w->layers.emplace_back();
    y.ln1_w = s.take(p + "ln_1.weight", {d}), y.ln1_b = s.take(p + "ln_1.bias", {d});
    std::tie(y.attn_w, y.attn_b) = takeLinear(s, p + "attn.c_attn", attn_out, d);
    std::tie(y.proj_w, y.proj_b) = takeLinear(s, p + "attn.c_proj", d, d);
    y.ln2_w = s.take(p + "ln_2.weight", {d}), y.ln2_b = s.take(p + "ln_2.bias", {d});
    std::tie(y.fc_w, y.fc_b) = takeLinear(s, p + "mlp.c_fc", ff, d);
    std::tie(y.mproj_w, y.mproj_b) = takeLinear(s, p + "mlp.c_proj", d, ff);
    progress(l);
  }
  w->ln_f_w = s.take("ln_f.weight", {d});
  w->ln_f_b = s.take("ln_f.bias", {d});
  w->act = activationNamed(c.activation);
  // Tied: wte (a saved lm_head.weight is the same matrix and is used); untied: lm_head.weight, which must be saved.
  const Weight head = s.lazyFull("lm_head.weight", {c.vocab, d}, c.tie_embeddings ? Need::Optional : Need::Required);
  m.lm_head = head.present() ? head : w->wte;
  m.predicts = true;
  return w;
}

void bigcodeForward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const BigcodeWeights& W = m.as<BigcodeWeights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  const int64_t H = c.heads, Hkv = c.kv_heads, dh = c.head_dim, d = c.d_model;
  // x = wte[ids] + wpe[p0 … p0 + L)                                 [L, d]
  std::vector<int32_t> positions(static_cast<size_t>(L));
  for (int64_t i = 0; i < L; ++i) positions[static_cast<size_t>(i)] = static_cast<int32_t>(p0 + i);
  Mat x = embedRows(W.wte, run.ids) + embedRows(W.wpe, positions);
  // causal, query i at position p0 + i; s = 1/√d_head (scale_attn_weights) or 1
  const AttentionSpec att{.heads = H, .kv_heads = Hkv, .keys = KeyRange{p0, T, true, 0},
                          .scale = c.score_scale > 0 ? static_cast<float>(c.score_scale)
                                                     : 1.0f / std::sqrt(static_cast<float>(dh))};
  std::vector<float> scratch;
  Mat a, qkv, q(L, d), k(L, Hkv * dh), v(L, Hkv * dh), concat, proj, f, f2;
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const BigcodeLayer& w = W.layers[static_cast<size_t>(l)];
    // a = LN(x; ln_1); c = a W_attnᵀ + b_attn                      [L, d + 2·Hkv·dh]
    a = x;
    layerNorm(a, w.ln1_w, w.ln1_b, c.ln_eps);
    linearT(a, w.attn_w, w.attn_b, scratch, &run.flops, qkv);
    if (Hkv == 1 && H > 1) {
      // multi_query: [q (d) | k (dh) | v (dh)]
      q = qkv.leftCols(d);
      k = qkv.middleCols(d, dh);
      v = qkv.middleCols(d + dh, dh);
    } else {
      // the view [L, H, 3·dh]: per head q_h | k_h | v_h
      for (int64_t h = 0; h < H; ++h) {
        q.middleCols(h * dh, dh) = qkv.middleCols(3 * h * dh, dh);
        k.middleCols(h * dh, dh) = qkv.middleCols(3 * h * dh + dh, dh);
        v.middleCols(h * dh, dh) = qkv.middleCols(3 * h * dh + 2 * dh, dh);
      }
    }
    // head_h = softmax(q_h k_gᵀ · s + causal) v_g over the cached and new keys
    attend(run, l, att, q, k, v, cache, ctx, concat);
    // x = x + Concat(head_1 … head_H) W_projᵀ + b_proj             [L, d]
    linearT(concat, w.proj_w, w.proj_b, scratch, &run.flops, proj);
    headWrites(run, l, concat, proj, [&](const Mat& in, Mat& o) { linearT(in, w.proj_w, w.proj_b, scratch, &run.flops, o); });
    x += proj;
    // x = x + act(LN(x; ln_2) W_fcᵀ + b_fc) W_mprojᵀ + b_mproj     [L, d_ff] → [L, d]
    a = x;
    layerNorm(a, w.ln2_w, w.ln2_b, c.ln_eps);
    linearT(a, w.fc_w, w.fc_b, scratch, &run.flops, f);
    activate(f, W.act);
    linearT(f, w.mproj_w, w.mproj_b, scratch, &run.flops, f2);
    x += f2;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  enterLayer(run, c.layers, x);  // the stream the final norm reads
  // hidden = LN(x; ln_f)                                           [L, d]
  finalLayerNorm(run, x, W.ln_f_w, W.ln_f_b, c.ln_eps);
  run.hidden = std::move(x);
}

// StarCoderModel's keys (GPT-2's): llama.cpp hard-codes one key/value head
// (its graph splits c_attn as [q (d) | k (d_head) | v (d_head)]), GELU's
// tanh form and scores over √d_head; the converter writes head_count_kv 1 whatever multi_query says.
void starcoderGgufConfig(GgufKeys& k, nlohmann::json& c) {
  if (const int64_t kv = gpt2GgufConfig(k, c); kv != 1)
    k.fail("attention.head_count_kv", "is " + std::to_string(kv) +
                                          ", but llama.cpp runs StarCoder with one key/value head (multi-query)");
  c["multi_query"] = true;
  c["activation_function"] = "gelu_pytorch_tanh";
  c["scale_attn_weights"] = true;
}

}  // namespace

Family makeGptBigcodeFamily() {
  Family f;
  f.model_type = "gpt_bigcode";
  f.label = "GPT-BigCode";
  f.architectures = {"GPTBigCodeForCausalLM", "GPTBigCodeModel"};
  f.paper = "Allal et al. 2023";
  f.prefix = "transformer.";
  f.probe = "wte.weight";
  f.parse = bigcodeParse;
  // The causal-mask buffer older checkpoints saved.
  f.buffer = [](const std::string& name) { return name == "bias"; };
  f.load = bigcodeLoad;
  f.forward = bigcodeForward;
  // GPT-2's names, nn.Linear's layouts kept.
  f.gguf = {{"starcoder", "GPTBigCodeForCausalLM", starcoderGgufConfig, gpt2GgufTensors(GgufUndo::None)}};
  return f;
}

}  // namespace attn
