// T5 (Raffel et al. 2020), with the Hugging Face semantics of
// T5ForConditionalGeneration / T5Model / T5EncoderModel (transformers'
// models/t5/modeling_t5.py): pre-norm blocks with T5's RMS LayerNorm (no
// mean, no bias), no biases, no 1/√d scaling of the scores, and positions
// only as a learned bias per head on the scores, looked up by the bucket of
// the key's offset from the query; the first block's table serves every
// block of its stack.
//   RMS(x; w) = x / √(mean(x²) + ε) · w
//   encoder:  x = shared[src]
//     per block:  x = x + SelfAttn(RMS(x); bias = B_enc)
//                 x = x + FF(RMS(x))
//     x = RMS(x; encoder.final_layer_norm)
//   decoder:  y = shared[tgt]
//     per block:  y = y + SelfAttn(RMS(y); bias = B_dec, causal)
//                 y = y + CrossAttn(q from RMS(y), k and v from x; no bias)
//                 y = y + FF(RMS(y))
//     y = RMS(y; decoder.final_layer_norm)
//   Attn: A_h = softmax(q_h k_hᵀ + B[h]) (no scaling), heads of d_kv, inner width H·d_kv
//   B[h](i, j) = relative_attention_bias[bucket(j − i), h], bucket as _relative_position_bucket:
//     bidirectional (encoder) or causal (decoder), exact below half the buckets, log-spaced up to max_distance
//   FF: relu: act(a W_iᵀ) W_oᵀ;  gated-*: (act(a W_i0ᵀ) ⊙ a W_i1ᵀ) W_oᵀ  (gated-gelu: the tanh GELU)
//   logits = y · d_model^-0.5 sharedᵀ (tied), or y lm_headᵀ (untied: T5 v1.1, mT5)
#include "engine/attention_math.h"
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

struct T5Layer {
  AttentionWeights self, cross;  // cross: decoder blocks only
  Weight self_ln, cross_ln, ff_ln, wi, wi_0, wi_1, wo;
};
struct T5Stack {
  Weight embed, relative_bias, final_ln;  // relative_bias [buckets, heads], block 0's
  std::vector<T5Layer> layers;
};
struct T5Weights : FamilyWeights {
  T5Stack encoder, decoder;
  Activation act = Activation::Relu;
  bool gated = false;
};

bool t5Predicts(const ModelConfig& c) { return c.arch_name == "T5ForConditionalGeneration"; }

// feed_forward_proj: "relu", "gelu", or "gated-<act>" ("gated-gelu": the tanh GELU, transformers' gelu_new).
// T5Config saves what it derived as dense_act_fn / is_gated_act; those, when present, decide, as they do in transformers.
struct T5Ff {
  std::string act;
  bool gated = false;
};
T5Ff t5FeedForward(const ConfigReader& r) {
  const std::string proj = r.text("feed_forward_proj", "relu");
  const size_t dash = proj.find('-');
  T5Ff f;
  f.gated = dash != std::string::npos && proj.substr(0, dash) == "gated";
  if ((dash != std::string::npos && !f.gated) || (f.gated && proj.find('-', dash + 1) != std::string::npos))
    r.fail("feed_forward_proj", "is '" + proj + "', expected an activation such as 'relu' or 'gated-gelu'");
  f.act = proj == "gated-gelu" ? "gelu_new" : dash == std::string::npos ? proj : proj.substr(dash + 1);
  f.act = r.text("dense_act_fn", f.act);
  f.gated = r.flag("is_gated_act", f.gated);
  const nlohmann::json j = {{"dense_act_fn", f.act}};
  readActivation(ConfigReader{j, r.where}, "dense_act_fn", "relu");  // refuses the ones activate() does not implement
  return f;
}

void t5Parse(const ConfigReader& r, ModelConfig& c) {
  c.causal = false;  // the encoder; the decoder's self-attention is causal
  c.d_model = r.positive("d_model", kMaxWidth);
  c.head_dim = r.positive("d_kv", kMaxWidth);
  c.d_ff = r.positive("d_ff", kMaxWidth);
  c.heads = r.positive("num_heads", kMaxWidth);
  c.layers = r.positive("num_layers", kMaxLayers);
  const int64_t decoder_layers = r.positive("num_decoder_layers", kMaxLayers, c.layers);
  c.decoder_layers = c.arch_name == "T5EncoderModel" ? 0 : decoder_layers;
  c.vocab = r.positive("vocab_size", kMaxCount);
  c.positions = kMaxCount;  // relative positions: no table to run out of (the memory of the maps is the limit)
  c.rms_eps = r.epsilon("layer_norm_epsilon", 1e-6);
  c.relative_buckets = r.positive("relative_attention_num_buckets", kMaxCount, 32);
  c.relative_max_distance = r.positive("relative_attention_max_distance", kMaxCount, 128);
  // The decoder's buckets run exact up to half of them, the encoder's up to a quarter; past that the log scale needs room.
  if (c.relative_buckets < 4)
    r.fail("relative_attention_num_buckets", "is " + std::to_string(c.relative_buckets) + ", expected at least 4");
  if (c.relative_max_distance <= c.relative_buckets / 2)
    r.fail("relative_attention_max_distance", "is " + std::to_string(c.relative_max_distance) +
                                                  ", expected more than half of relative_attention_num_buckets (" +
                                                  std::to_string(c.relative_buckets) + ")");
  const T5Ff ff = t5FeedForward(r);
  c.activation = (ff.gated ? "gated-" : "") + ff.act;
  c.decoder_start = r.tokenId("decoder_start_token_id", 0, c.vocab);  // <pad> in released T5s
  c.tie_embeddings = r.flag("tie_word_embeddings", true);
  const std::string eps = formatNumber(c.rms_eps);
  c.blocks = "encoder " + std::to_string(c.layers) + (c.decoder_layers > 0 ? " + decoder " + std::to_string(c.decoder_layers) : "") +
             " layers, T5 RMS LayerNorm (ε " + eps + ") pre-norm / " + c.activation +
             " MLP, no biases, no 1/√d scaling, relative position buckets (" + std::to_string(c.relative_buckets) +
             ", up to " + std::to_string(c.relative_max_distance) + ")" +
             (c.tie_embeddings ? ", head tied to the embeddings (× d_model^-0.5)" : "");
}

std::string t5Layer(const std::string& stack, int64_t block, int sub, const std::string& rest) {
  return layerName(stack + "block.", block, "layer." + std::to_string(sub) + "." + rest);
}

std::unique_ptr<FamilyWeights> t5Load(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, inner = c.heads * c.head_dim, ff = c.d_ff;
  auto w = std::make_unique<T5Weights>();
  const EncoderDecoderTables tables = takeEncoderDecoderTables(s, c);
  const bool gated = c.activation.rfind("gated-", 0) == 0;
  for (const std::string stack : {"encoder.", "decoder."}) {
    const int64_t layers = stack == "encoder." ? c.layers : c.decoder_layers;
    if (layers == 0) continue;
    T5Stack& b = stack == "encoder." ? w->encoder : w->decoder;
    b.embed = stack == "encoder." ? tables.encoder : tables.decoder;
    b.relative_bias =
        s.take(t5Layer(stack, 0, 0, "SelfAttention.relative_attention_bias.weight"), {c.relative_buckets, c.heads});
    b.final_ln = s.take(stack + "final_layer_norm.weight", {d});
    for (int64_t l = 0; l < layers; ++l) {
      T5Layer layer;
      // q, k, v [inner, d], o [d, inner]: nn.Linear [out, in], no biases
      auto attention = [&](int sub, const std::string& name) {
        auto lazy = [&](const char* p, WeightSource::Shape shape) {
          return s.lazy(t5Layer(stack, l, sub, name + "." + p + ".weight"), std::move(shape));
        };
        return AttentionWeights{.q_w = lazy("q", {inner, d}), .k_w = lazy("k", {inner, d}),
                                .v_w = lazy("v", {inner, d}), .o_w = lazy("o", {d, inner})};
      };
      layer.self = attention(0, "SelfAttention");
      layer.self_ln = s.take(t5Layer(stack, l, 0, "layer_norm.weight"), {d});
      if (stack == "decoder.") {
        layer.cross = attention(1, "EncDecAttention");
        layer.cross_ln = s.take(t5Layer(stack, l, 1, "layer_norm.weight"), {d});
      }
      const int ffn = stack == "decoder." ? 2 : 1;
      if (gated) {
        layer.wi_0 = s.lazy(t5Layer(stack, l, ffn, "DenseReluDense.wi_0.weight"), {ff, d});
        layer.wi_1 = s.lazy(t5Layer(stack, l, ffn, "DenseReluDense.wi_1.weight"), {ff, d});
      } else {
        layer.wi = s.lazy(t5Layer(stack, l, ffn, "DenseReluDense.wi.weight"), {ff, d});
      }
      layer.wo = s.lazy(t5Layer(stack, l, ffn, "DenseReluDense.wo.weight"), {d, ff});
      layer.ff_ln = s.take(t5Layer(stack, l, ffn, "layer_norm.weight"), {d});
      b.layers.push_back(std::move(layer));
      progress(stack == "encoder." ? l : c.layers + l);
    }
  }
  w->gated = gated;
  const nlohmann::json j = {{"dense_act_fn", gated ? c.activation.substr(6) : c.activation}};
  w->act = readActivation(ConfigReader{j, "config.json"}, "dense_act_fn", "relu");
  if (t5Predicts(c)) {
    // Tied: lm_head.weight may be saved and is not read.
    m.lm_head = lmHeadUnlessTied(s, c, w->decoder.embed, TiedHead::Ignored);
    m.predicts = true;
  }
  return w;
}

// transformers' T5Attention._relative_position_bucket for the key's offset
// from the query (j − i), in float32 as torch computes its log-spaced part.
int64_t relativeBucket(int64_t offset, bool bidirectional, int64_t buckets, int64_t max_distance) {
  int64_t bucket = 0, n = buckets, distance = 0;
  if (bidirectional) {
    n /= 2;
    if (offset > 0) bucket += n;
    distance = offset < 0 ? -offset : offset;
  } else {
    distance = offset < 0 ? -offset : 0;  // keys after the query (masked anyway) share bucket 0
  }
  const int64_t max_exact = n / 2;
  if (distance < max_exact) return bucket + distance;
  const float scaled = std::log(static_cast<float>(distance) / static_cast<float>(max_exact)) /
                       static_cast<float>(std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact))) *
                       static_cast<float>(n - max_exact);
  return bucket + std::min(max_exact + static_cast<int64_t>(scaled), n - 1);
}

// B[h](i, j) = table[bucket(j − i), h]                          [heads] [L, L]
std::vector<Mat> relativeBias(const ModelConfig& c, const Weight& table, int64_t L, bool bidirectional) {
  std::vector<Mat> bias(static_cast<size_t>(c.heads), Mat(L, L));
  const auto T = table.mat();  // [buckets, heads]
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < L; ++j) {
      const int64_t b = relativeBucket(j - i, bidirectional, c.relative_buckets, c.relative_max_distance);
      for (int64_t h = 0; h < c.heads; ++h) bias[static_cast<size_t>(h)](i, j) = T(b, h);
    }
  return bias;
}

// One stack: the encoder (memory null) or the decoder (memory: the encoder's output).
Mat t5Stack(const Model& m, const T5Stack& W, const std::vector<int32_t>& ids, const Mat* memory,
            std::vector<std::vector<Mat>>& self_maps, std::vector<std::vector<Mat>>* cross_maps, double* flops,
            const std::function<void(int64_t)>& layer_done) {
  const ModelConfig& c = m.info.config;
  const T5Weights& T = m.as<T5Weights>();
  const int64_t L = static_cast<int64_t>(ids.size());
  std::vector<float> scratch;
  Mat x = embedRows(W.embed, ids);  // [L, d], not scaled
  const std::vector<Mat> bias = relativeBias(c, W.relative_bias, L, memory == nullptr);
  Mat a, o, f, gate, up;
  self_maps.assign(W.layers.size(), {});
  if (cross_maps) cross_maps->assign(W.layers.size(), {});
  for (size_t l = 0; l < W.layers.size(); ++l) {
    const T5Layer& w = W.layers[l];
    // x = x + SelfAttn(RMS(x)), scores q kᵀ + B, causal in the decoder     [L, d]
    rmsNorm(x, w.self_ln, c.rms_eps, a);
    denseAttentionBlock(a, a, w.self, c.heads, 1.0f, bias, memory != nullptr, self_maps[l], o, scratch, flops);
    x += o;
    if (memory) {
      // y = y + CrossAttn(RMS(y), encoder output), no position bias    [T, S] maps
      rmsNorm(x, w.cross_ln, c.rms_eps, a);
      denseAttentionBlock(a, *memory, w.cross, c.heads, 1.0f, {}, false, (*cross_maps)[l], o, scratch, flops);
      x += o;
    }
    // x = x + FF(RMS(x))                                               [L, d_ff] → [L, d]
    rmsNorm(x, w.ff_ln, c.rms_eps, a);
    if (T.gated) {
      gatedMlp(a, w.wi_0, w.wi_1, w.wo, T.act, scratch, flops, gate, up, o);
    } else {
      linearT(a, w.wi, Weight{}, scratch, flops, f);
      activate(f, T.act);
      linearT(f, w.wo, Weight{}, scratch, flops, o);
    }
    x += o;
    layer_done(static_cast<int64_t>(l));
  }
  Mat hidden;
  rmsNorm(x, W.final_ln, c.rms_eps, hidden);
  return hidden;
}

void t5Seq2Seq(const Model& m, Seq2SeqRun& run, const RunContext& ctx) {
  const T5Weights& W = m.as<T5Weights>();
  encoderDecoderPass(run, ctx, [&](bool decoder, const std::vector<int32_t>& ids, const Mat* memory,
                                   MapsByLayer& self_maps, MapsByLayer* cross_maps,
                                   const std::function<void(int64_t)>& layer_done) {
    return t5Stack(m, decoder ? W.decoder : W.encoder, ids, memory, self_maps, cross_maps, &run.flops, layer_done);
  });
}

// Tied: logits = (hidden · d_model^-0.5) sharedᵀ; untied: hidden lm_headᵀ     [rows, V]
Mat t5Logits(const Model& m, const Mat& hidden, double* flops) {
  const ModelConfig& c = m.info.config;
  if (!c.tie_embeddings) return lmHeadLogits(m.lm_head, hidden, flops);
  const Mat scaled = hidden * static_cast<float>(std::pow(static_cast<double>(c.d_model), -0.5));
  return lmHeadLogits(m.lm_head, scaled, flops);
}

}  // namespace

Family makeT5Family() {
  Family f;
  f.model_type = "t5";
  f.label = "T5";
  f.architectures = {"T5ForConditionalGeneration", "T5Model", "T5EncoderModel"};
  f.paper = "Raffel et al. 2020";
  f.prefix = "";
  f.probe = "encoder.block.0.layer.0.SelfAttention.q.weight";
  f.causal = false;
  f.parse = t5Parse;
  f.load = t5Load;
  f.seq2seq = t5Seq2Seq;
  f.logits = t5Logits;
  return f;
}

}  // namespace attn
