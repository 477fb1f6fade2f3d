// BLOOM (BigScience 2022), with the Hugging Face semantics of
// BloomForCausalLM / BloomModel (transformers' models/bloom/modeling_bloom.py):
// no position embeddings but ALiBi (Press et al. 2022) on the scores, a
// LayerNorm on the embeddings, a fused query_key_value laid out per head.
//   x = LN(word_embeddings[ids]; word_embeddings_layernorm)
//   per layer:  a = LN(x; input_layernorm)
//               f = a W_qkvᵀ + b_qkv        [L, 3d], viewed [L, H, 3, d_head]: head h's q, k, v
//                                           are columns h·3·d_head + {0, 1, 2}·d_head … + d_head
//               head_h = softmax(q_h k_hᵀ / √d_head + slope_h · j + causal) v_h   (baddbmm(alibi, q, kᵀ))
//               x = x + Concat(head_1 … head_H) W_denseᵀ + b_dense
//               x = x + gelu_tanh(LN(x; post_attention_layernorm) W_h→4hᵀ + b) W_4h→hᵀ + b
//   hidden = LN(x; ln_f);  logits = hidden word_embeddingsᵀ (lm_head tied unless tie_word_embeddings is false)
// ALiBi's slopes (build_alibi_tensor): for the closest power of two P ≤ H,
// slope_h = 2^(−8(h+1)/P) for h < P; the remaining H − P heads take every
// other slope of 2P heads: 2^(−4(2i+1)/P), i = 0 … H − P − 1.
// The bias is slope_h · j with j the key's position (the cumsum of an
// all-ones attention mask, minus one): it grows along the row, which softmax
// turns into the same weights as slope_h · (j − i).
// A GGUF file holds query_key_value's rows regrouped as [Q; K; V] (llama.cpp's
// converter does so): read back per head where stored.
#include "engine/attention_math.h"
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/families/family.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// nn.Linear layouts [out, in].
struct BloomLayer {
  Weight in_ln_w, in_ln_b, qkv_w, qkv_b, dense_w, dense_b, post_ln_w, post_ln_b, up_w, up_b, down_w, down_b;
};
struct BloomWeights : FamilyWeights {
  Weight embed, embed_ln_w, embed_ln_b, final_ln_w, final_ln_b;
  std::vector<BloomLayer> layers;
  std::vector<double> slopes;  // ALiBi, per head
};

// BLOOM's ALiBi slopes for `heads` heads (transformers' build_alibi_tensor).
std::vector<double> bloomAlibiSlopes(int64_t heads) {
  const int64_t closest = int64_t{1} << static_cast<int>(std::floor(std::log2(static_cast<double>(heads))));
  auto geometric = [](int64_t n, double power_step, int64_t count, int64_t first_power) {
    // base = 2^(−2^−(log2 n − 3)) = 2^(−8/n); slopes base^(first_power + power_step·i)
    const double base = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(n)) - 3.0)));
    std::vector<double> out;
    for (int64_t i = 0; i < count; ++i)
      out.push_back(std::pow(base, static_cast<double>(first_power) + power_step * static_cast<double>(i)));
    return out;
  };
  std::vector<double> slopes = geometric(closest, 1.0, closest, 1);
  if (closest != heads) {
    const std::vector<double> extra = geometric(2 * closest, 2.0, std::min(closest, heads - closest), 1);
    slopes.insert(slopes.end(), extra.begin(), extra.end());
  }
  return slopes;
}

// BLOOM has no position limit: the positions shown are bounded by the
// training length when the config names it, else BLOOM's 2048.
constexpr int64_t kBloomDefaultPositions = 2048;

void bloomParse(const ConfigReader& r, ModelConfig& c) {
  // BloomConfig saves n_layer / n_head; attribute_map also reads num_hidden_layers /
  // num_attention_heads, and n_embed (as bigscience/bloom's config names it) overrides hidden_size.
  c.layers = r.has("n_layer") ? r.positive("n_layer", kMaxLayers) : r.positive("num_hidden_layers", kMaxLayers);
  c.heads = r.has("n_head") ? r.positive("n_head", kMaxWidth) : r.positive("num_attention_heads", kMaxWidth);
  c.d_model = r.has("n_embed") ? r.positive("n_embed", kMaxWidth) : r.positive("hidden_size", kMaxWidth);
  r.read.insert("hidden_size");
  // BloomMLP is always 4·hidden_size wide; n_inner is saved by some configs and not read by transformers.
  c.d_ff = 4 * c.d_model;
  r.read.insert("n_inner");
  c.positions = r.has("seq_length") ? r.positive("seq_length", kMaxCount)
                : r.has("n_positions") ? r.positive("n_positions", kMaxCount)
                                       : kBloomDefaultPositions;
  c.vocab = r.positive("vocab_size", kMaxCount);
  if (c.d_model % c.heads != 0)
    throw InputError(r.where + ": the heads (" + std::to_string(c.heads) + ") must divide hidden_size (" +
                     std::to_string(c.d_model) + ")");
  c.head_dim = c.d_model / c.heads;
  c.ln_eps = r.epsilon("layer_norm_epsilon", 1e-5);
  c.activation = "bloom_gelu";  // BloomGelu: the tanh approximation; not configurable
  if (r.flag("apply_residual_connection_post_layernorm", false))
    r.fail("apply_residual_connection_post_layernorm", "is true, which BLOOM here does not implement (expected false)");
  // pretraining_tp with slow_but_exact splits the dense products into slices
  // whose sum is the same product; it changes rounding only.
  r.read.insert({"pretraining_tp", "slow_but_exact"});
  c.alibi = true;
  c.qkv_bias = true;
  c.tie_embeddings = r.flag("tie_word_embeddings", true);
  const std::string eps = formatNumber(c.ln_eps);
  c.blocks = std::string("LayerNorm (ε ") + eps + ") pre-LN, LayerNorm on the embeddings / GELU (tanh) MLP, " +
             "fused q/k/v per head, ALiBi" + (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::unique_ptr<FamilyWeights> bloomLoad(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, ff = c.d_ff;
  auto w = std::make_unique<BloomWeights>();
  w->embed = s.lazy("word_embeddings.weight", {c.vocab, d});
  w->embed_ln_w = s.take("word_embeddings_layernorm.weight", {d});
  w->embed_ln_b = s.take("word_embeddings_layernorm.bias", {d});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("h.", l, "");
    BloomLayer& y = w->layers.emplace_back();
    y.in_ln_w = s.take(p + "input_layernorm.weight", {d}), y.in_ln_b = s.take(p + "input_layernorm.bias", {d});
    std::tie(y.qkv_w, y.qkv_b) = takeLinear(s, p + "self_attention.query_key_value", 3 * d, d);
    std::tie(y.dense_w, y.dense_b) = takeLinear(s, p + "self_attention.dense", d, d);
    y.post_ln_w = s.take(p + "post_attention_layernorm.weight", {d});
    y.post_ln_b = s.take(p + "post_attention_layernorm.bias", {d});
    std::tie(y.up_w, y.up_b) = takeLinear(s, p + "mlp.dense_h_to_4h", ff, d);
    std::tie(y.down_w, y.down_b) = takeLinear(s, p + "mlp.dense_4h_to_h", d, ff);
    progress(l);
  }
  w->final_ln_w = s.take("ln_f.weight", {d});
  w->final_ln_b = s.take("ln_f.bias", {d});
  w->slopes = bloomAlibiSlopes(c.heads);
  // Tied: lm_head.weight may be saved (equal to word_embeddings) and is not read.
  m.lm_head = lmHeadUnlessTied(s, c, w->embed, TiedHead::Ignored);
  m.predicts = true;
  return w;
}

void bloomForward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const BloomWeights& W = m.as<BloomWeights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  const int64_t H = c.heads, dh = c.head_dim, d = c.d_model;
  std::vector<float> scratch;  // the 16-bit matrix being used, as floats
  // x = LN(word_embeddings[ids]; word_embeddings_layernorm)       [L, d]
  Mat x = embedRows(W.embed, run.ids);
  layerNorm(x, W.embed_ln_w, W.embed_ln_b, c.ln_eps);
  // causal, query i is position p0 + i; s_hij += slope_h · j, j the key's position
  const AttentionSpec att{.heads = H, .kv_heads = H, .keys = KeyRange{p0, T, true, 0},
                          .scale = 1.0f / std::sqrt(static_cast<float>(dh)), .mods = {.alibi = &W.slopes}};
  Mat a, fused, q(L, d), k(L, d), v(L, d), concat, proj, f, f2;
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const BloomLayer& w = W.layers[static_cast<size_t>(l)];
    // a = LN(x; input_layernorm); f = a W_qkvᵀ + b_qkv             [L, 3d]
    a = x;
    layerNorm(a, w.in_ln_w, w.in_ln_b, c.ln_eps);
    linearT(a, w.qkv_w, w.qkv_b, scratch, &run.flops, fused);
    // f viewed [L, H, 3, d_head]: head h's q, k, v side by side (not [q | k | v])
    for (int64_t h = 0; h < H; ++h) {
      q.middleCols(h * dh, dh) = fused.middleCols((3 * h + 0) * dh, dh);
      k.middleCols(h * dh, dh) = fused.middleCols((3 * h + 1) * dh, dh);
      v.middleCols(h * dh, dh) = fused.middleCols((3 * h + 2) * dh, dh);
    }
    // head_h = softmax(q_h k_hᵀ / √d_head + slope_h · j + causal) v_h over the cached and new keys
    attend(run, l, att, q, k, v, cache, ctx, concat);
    // x = x + Concat(head_1 … head_H) W_denseᵀ + b_dense            [L, d]
    linearT(concat, w.dense_w, w.dense_b, scratch, &run.flops, proj);
    headWrites(run, l, concat, proj, [&](const Mat& in, Mat& o) { linearT(in, w.dense_w, w.dense_b, scratch, &run.flops, o); });
    x += proj;
    // x = x + gelu_tanh(LN(x; post_attention_layernorm) W_h→4hᵀ + b) W_4h→hᵀ + b    [L, 4d] → [L, d]
    a = x;
    layerNorm(a, w.post_ln_w, w.post_ln_b, c.ln_eps);
    linearT(a, w.up_w, w.up_b, scratch, &run.flops, f);
    activate(f, Activation::GeluTanh);
    linearT(f, w.down_w, w.down_b, scratch, &run.flops, f2);
    x += f2;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  enterLayer(run, c.layers, x);  // the stream the final norm reads
  // hidden = LN(x; ln_f)                                           [L, d]
  finalLayerNorm(run, x, W.final_ln_w, W.final_ln_b, c.ln_eps);
  run.hidden = std::move(x);
}

// llama.cpp's names for BLOOM's tensors; query_key_value (weight and bias) regrouped.
std::vector<GgufTensorName> bloomGgufTensors() {
  const std::string h = "transformer.h.#.";
  const GgufUndo qkv = GgufUndo::QkvPerHead;
  return {{"token_embd.weight", "transformer.word_embeddings.weight"},
          {"token_embd_norm.weight", "transformer.word_embeddings_layernorm.weight"},
          {"token_embd_norm.bias", "transformer.word_embeddings_layernorm.bias"},
          {"output_norm.weight", "transformer.ln_f.weight"},
          {"output_norm.bias", "transformer.ln_f.bias"},
          {"output.weight", "lm_head.weight"},
          {"blk.#.attn_norm.weight", h + "input_layernorm.weight"},
          {"blk.#.attn_norm.bias", h + "input_layernorm.bias"},
          {"blk.#.attn_qkv.weight", h + "self_attention.query_key_value.weight", qkv},
          {"blk.#.attn_qkv.bias", h + "self_attention.query_key_value.bias", qkv},
          {"blk.#.attn_output.weight", h + "self_attention.dense.weight"},
          {"blk.#.attn_output.bias", h + "self_attention.dense.bias"},
          {"blk.#.ffn_norm.weight", h + "post_attention_layernorm.weight"},
          {"blk.#.ffn_norm.bias", h + "post_attention_layernorm.bias"},
          {"blk.#.ffn_up.weight", h + "mlp.dense_h_to_4h.weight"},
          {"blk.#.ffn_up.bias", h + "mlp.dense_h_to_4h.bias"},
          {"blk.#.ffn_down.weight", h + "mlp.dense_4h_to_h.weight"},
          {"blk.#.ffn_down.bias", h + "mlp.dense_4h_to_h.bias"}};
}

// BloomModel's keys: context_length as seq_length, the MLP's 4 · d and every
// head for keys and values held to BLOOM's. ALiBi's largest bias is not in the
// file (llama.cpp hard-codes 8: transformers' slopes). The converter saves a
// tied head as output.weight, a copy: such a file runs with it, as llama.cpp does.
void bloomGgufConfig(GgufKeys& k, nlohmann::json& c) {
  const int64_t d = k.count("embedding_length", kMaxWidth);
  c["n_layer"] = k.count("block_count", kMaxLayers);
  c["hidden_size"] = d;
  c["n_head"] = ggufHeadsAllKv(k, "BLOOM");
  if (const int64_t ff = k.count("feed_forward_length", kMaxWidth, 4 * d); ff != 4 * d)
    k.fail("feed_forward_length", "is " + std::to_string(ff) + ", but BLOOM's MLP is 4 · " + std::to_string(d) +
                                      " = " + std::to_string(4 * d) + " wide");
  c["seq_length"] = k.count("context_length", kMaxCount);
  c["layer_norm_epsilon"] = k.number("attention.layer_norm_epsilon");
}

}  // namespace

Family makeBloomFamily() {
  Family f;
  f.model_type = "bloom";
  f.label = "BLOOM";
  f.architectures = {"BloomForCausalLM", "BloomModel"};
  f.paper = "BigScience 2022";
  f.prefix = "transformer.";
  f.probe = "word_embeddings.weight";
  f.parse = bloomParse;
  f.load = bloomLoad;
  f.forward = bloomForward;
  f.gguf = {{"bloom", "BloomForCausalLM", bloomGgufConfig, bloomGgufTensors()}};
  return f;
}

}  // namespace attn
