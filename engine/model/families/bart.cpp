// BART (Lewis et al. 2020), with the Hugging Face semantics of
// BartForConditionalGeneration / BartModel (transformers'
// models/bart/modeling_bart.py): an encoder and a decoder of post-LN blocks,
// learned positions read at row position + 2, a LayerNorm on the embeddings,
// biases everywhere.
//   encoder:  x = LN(embed_tokens[src] · s + embed_positions[i + 2]; layernorm_embedding)
//             (s = √d_model when scale_embedding, else 1)
//     per layer:  x = LN(x + SelfAttn(x); self_attn_layer_norm)
//                 x = LN(x + act(x W_fc1ᵀ + b_fc1) W_fc2ᵀ + b_fc2; final_layer_norm)
//   decoder:  y = LN(embed_tokens[tgt] · s + embed_positions[t + 2]; layernorm_embedding)
//     per layer:  y = LN(y + SelfAttn(y, causal); self_attn_layer_norm)
//                 y = LN(y + CrossAttn(q from y, k and v from x); encoder_attn_layer_norm)
//                 y = LN(y + MLP(y); final_layer_norm)
//   logits = y sharedᵀ (lm_head, tied unless tie_word_embeddings is false) + final_logits_bias
// Attention: softmax(q kᵀ / √d_head) v per head (transformers scales q by
// d_head^-0.5 first: the same product).
#include "engine/attention_math.h"
#include "engine/model/families/family.h"

#include <cmath>
#include <cstdio>

namespace attn {

namespace {

struct BartLayer {
  AttentionWeights self, cross;  // cross: decoder layers only
  Weight self_ln_w, self_ln_b, cross_ln_w, cross_ln_b, fc1_w, fc1_b, fc2_w, fc2_b, final_ln_w, final_ln_b;
};
struct BartStack {
  Weight embed, positions, emb_ln_w, emb_ln_b;
  std::vector<BartLayer> layers;
};
struct BartWeights : FamilyWeights {
  BartStack encoder, decoder;
  Weight logits_bias;  // final_logits_bias [1, V], when saved
  Activation act = Activation::GeluErf;
};

// BartLearnedPositionalEmbedding: the table has max_position_embeddings + 2 rows.
constexpr int64_t kBartPositionOffset = 2;

bool bartPredicts(const ModelConfig& c) { return c.arch_name != "BartModel"; }

void bartParse(const ConfigReader& r, ModelConfig& c) {
  c.causal = false;  // the encoder; the decoder's self-attention is causal
  c.d_model = r.positive("d_model", kMaxWidth);
  c.layers = r.positive("encoder_layers", kMaxLayers);
  c.decoder_layers = r.positive("decoder_layers", kMaxLayers);
  c.heads = r.positive("encoder_attention_heads", kMaxWidth);
  c.d_ff = r.positive("encoder_ffn_dim", kMaxWidth);
  if (r.positive("decoder_attention_heads", kMaxWidth, c.heads) != c.heads)
    r.fail("decoder_attention_heads", "differs from encoder_attention_heads, which BART here does not implement");
  if (r.positive("decoder_ffn_dim", kMaxWidth, c.d_ff) != c.d_ff)
    r.fail("decoder_ffn_dim", "differs from encoder_ffn_dim, which BART here does not implement");
  c.positions = r.positive("max_position_embeddings", kMaxCount - kBartPositionOffset, 1024);
  c.vocab = r.positive("vocab_size", kMaxCount);
  c.ln_eps = 1e-5;  // nn.LayerNorm's default: BartConfig has no ε field
  readActivation(r, "activation_function", "gelu");  // refuses the ones activate() does not implement
  c.activation = r.text("activation_function", "gelu");
  c.embed_scale = r.flag("scale_embedding", false) ? std::sqrt(static_cast<double>(c.d_model)) : 1.0;
  c.decoder_start = r.tokenId("decoder_start_token_id", 2, c.vocab);  // </s>
  c.tie_embeddings = r.flag("tie_word_embeddings", true);
  // Fields of older BART-like configs (fairseq conversions, mBART, PEGASUS) whose other values change the blocks.
  auto neutral = [&](const std::string& key, bool value) {
    if (r.flag(key, value) != value)
      r.fail(key, std::string("is ") + (value ? "false" : "true") + ", which BART here does not implement (expected " +
                      (value ? "true" : "false") + ")");
  };
  neutral("normalize_before", false);
  neutral("add_final_layer_norm", false);
  neutral("static_position_embeddings", false);
  neutral("normalize_embedding", true);
  neutral("add_bias_logits", false);
  const std::string eps = formatNumber(c.ln_eps);
  c.blocks = std::string("encoder ") + std::to_string(c.layers) + " + decoder " + std::to_string(c.decoder_layers) +
             " layers, LayerNorm (ε " + eps + ") post-LN / " + c.activation +
             " MLP, biases, learned positions (row p + 2), embedding LayerNorm" +
             (c.embed_scale != 1.0 ? ", embeddings × √d_model" : "") +
             (c.tie_embeddings ? ", head tied to the embeddings" : "");
}

std::unique_ptr<FamilyWeights> bartLoad(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, ff = c.d_ff;
  auto w = std::make_unique<BartWeights>();
  const EncoderDecoderTables tables = takeEncoderDecoderTables(s, c);
  for (const std::string stack : {"encoder.", "decoder."}) {
    BartStack& b = stack == "encoder." ? w->encoder : w->decoder;
    b.embed = stack == "encoder." ? tables.encoder : tables.decoder;
    b.positions = s.lazy(stack + "embed_positions.weight", {c.positions + kBartPositionOffset, d});
    b.emb_ln_w = s.take(stack + "layernorm_embedding.weight", {d});
    b.emb_ln_b = s.take(stack + "layernorm_embedding.bias", {d});
    const int64_t layers = stack == "encoder." ? c.layers : c.decoder_layers;
    for (int64_t l = 0; l < layers; ++l) {
      const std::string p = layerName(stack + "layers.", l, "");
      BartLayer& y = b.layers.emplace_back();
      y.self = takeProjections(s, p + "self_attn.", "out_proj", c, true, true);
      y.self_ln_w = s.take(p + "self_attn_layer_norm.weight", {d});
      y.self_ln_b = s.take(p + "self_attn_layer_norm.bias", {d});
      if (stack == "decoder.") {
        y.cross = takeProjections(s, p + "encoder_attn.", "out_proj", c, true, true);
        y.cross_ln_w = s.take(p + "encoder_attn_layer_norm.weight", {d});
        y.cross_ln_b = s.take(p + "encoder_attn_layer_norm.bias", {d});
      }
      std::tie(y.fc1_w, y.fc1_b) = takeLinear(s, p + "fc1", ff, d);
      std::tie(y.fc2_w, y.fc2_b) = takeLinear(s, p + "fc2", d, ff);
      y.final_ln_w = s.take(p + "final_layer_norm.weight", {d});
      y.final_ln_b = s.take(p + "final_layer_norm.bias", {d});
      progress(stack == "encoder." ? l : c.layers + l);
    }
  }
  w->act = activationNamed(c.activation);
  if (bartPredicts(c)) {
    // Tied: lm_head.weight may be saved (equal to shared) and is not read.
    m.lm_head = lmHeadUnlessTied(s, c, w->decoder.embed, TiedHead::Ignored);
    w->logits_bias = s.takeFull("final_logits_bias", {1, c.vocab}, Need::Optional);
    m.predicts = true;
  }
  return w;
}

// One stack: the encoder (memory null) or the decoder (memory: the encoder's output).
Mat bartStack(const Model& m, const BartStack& W, const std::vector<int32_t>& ids, const Mat* memory,
              std::vector<std::vector<Mat>>& self_maps, std::vector<std::vector<Mat>>* cross_maps, double* flops,
              const std::function<void(int64_t)>& layer_done) {
  const ModelConfig& c = m.info.config;
  const Activation act = m.as<BartWeights>().act;
  const int64_t L = static_cast<int64_t>(ids.size());
  std::vector<float> scratch;
  // x = LN(embed_tokens[ids] · s + embed_positions[i + 2])           [L, d]
  Mat x = embedRows(W.embed, ids) * static_cast<float>(c.embed_scale);
  std::vector<int32_t> rows(static_cast<size_t>(L));
  for (int64_t i = 0; i < L; ++i) rows[static_cast<size_t>(i)] = static_cast<int32_t>(i + kBartPositionOffset);
  x += embedRows(W.positions, rows);
  layerNorm(x, W.emb_ln_w, W.emb_ln_b, c.ln_eps);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  Mat a, f, f2;
  self_maps.assign(W.layers.size(), {});
  if (cross_maps) cross_maps->assign(W.layers.size(), {});
  for (size_t l = 0; l < W.layers.size(); ++l) {
    const BartLayer& w = W.layers[l];
    // x = LN(x + SelfAttn(x)), causal in the decoder                  [L, d]
    denseAttentionBlock(x, x, w.self, c.heads, scale, {}, memory != nullptr, self_maps[l], a, scratch, flops);
    x += a;
    layerNorm(x, w.self_ln_w, w.self_ln_b, c.ln_eps);
    if (memory) {
      // y = LN(y + CrossAttn(y, encoder output))                      [T, S] maps
      denseAttentionBlock(x, *memory, w.cross, c.heads, scale, {}, false, (*cross_maps)[l], a, scratch, flops);
      x += a;
      layerNorm(x, w.cross_ln_w, w.cross_ln_b, c.ln_eps);
    }
    // x = LN(x + act(x W_fc1ᵀ + b_fc1) W_fc2ᵀ + b_fc2)                 [L, d_ff] → [L, d]
    linearT(x, w.fc1_w, w.fc1_b, scratch, flops, f);
    activate(f, act);
    linearT(f, w.fc2_w, w.fc2_b, scratch, flops, f2);
    x += f2;
    layerNorm(x, w.final_ln_w, w.final_ln_b, c.ln_eps);
    layer_done(static_cast<int64_t>(l));
  }
  return x;
}

void bartSeq2Seq(const Model& m, Seq2SeqRun& run, const RunContext& ctx) {
  const BartWeights& W = m.as<BartWeights>();
  encoderDecoderPass(run, ctx, [&](bool decoder, const std::vector<int32_t>& ids, const Mat* memory,
                                   MapsByLayer& self_maps, MapsByLayer* cross_maps,
                                   const std::function<void(int64_t)>& layer_done) {
    return bartStack(m, decoder ? W.decoder : W.encoder, ids, memory, self_maps, cross_maps, &run.flops, layer_done);
  });
}

// logits = hidden lm_headᵀ + final_logits_bias                      [rows, V]
Mat bartLogits(const Model& m, const Mat& hidden, double* flops) {
  Mat logits = lmHeadLogits(m.lm_head, hidden, flops);
  const BartWeights& W = m.as<BartWeights>();
  if (W.logits_bias.present()) logits.rowwise() += W.logits_bias.vec();
  return logits;
}

}  // namespace

Family makeBartFamily() {
  Family f;
  f.model_type = "bart";
  f.label = "BART";
  f.architectures = {"BartForConditionalGeneration", "BartModel"};
  f.paper = "Lewis et al. 2020";
  f.prefix = "model.";
  f.probe = "encoder.layers.0.fc1.weight";
  f.causal = false;
  f.parse = bartParse;
  f.load = bartLoad;
  f.seq2seq = bartSeq2Seq;
  f.logits = bartLogits;
  return f;
}

}  // namespace attn
