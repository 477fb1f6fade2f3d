// BERT (Devlin et al. 2019), with the Hugging Face semantics of BertModel /
// BertForMaskedLM: post-LN blocks, learned positions and token types,
// bidirectional.
//   x = LN(word[ids] + position[0 … L) + token_type[0])
//   per layer:  q = x W_qᵀ + b_q, k = x W_kᵀ + b_k, v = x W_vᵀ + b_v
//               head_h = softmax(q_h k_hᵀ / √d_head) v_h
//               x = LN(x + Concat(head_1 … head_H) W_oᵀ + b_o)
//               x = LN(x + gelu(x W_iᵀ + b_i) W_outᵀ + b_out)
//   hidden = x;  MLM: logits = LN(gelu(hidden W_tᵀ + b_t)) decoderᵀ + bias
#include "engine/model/families/family.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

struct BertLayer {
  Weight q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b, ln1_w, ln1_b, i_w, i_b, out_w, out_b, ln2_w, ln2_b;
};
struct BertWeights : FamilyWeights {
  Weight word, position, token_type, emb_ln_w, emb_ln_b;
  std::vector<BertLayer> layers;
  Weight mlm_dense_w, mlm_dense_b, mlm_ln_w, mlm_ln_b, mlm_bias, mlm_decoder;  // the masked-LM head, when saved
};

void bertParse(const ConfigReader& r, ModelConfig& c) {
  c.causal = false;
  c.layers = r.positive("num_hidden_layers", kMaxLayers);
  c.heads = r.positive("num_attention_heads", kMaxWidth);
  c.d_model = r.positive("hidden_size", kMaxWidth);
  c.d_ff = r.positive("intermediate_size", kMaxWidth);
  c.positions = r.positive("max_position_embeddings", kMaxCount);
  c.vocab = r.positive("vocab_size", kMaxCount);
  c.type_vocab = r.positive("type_vocab_size", kMaxCount, 2);
  c.ln_eps = r.epsilon("layer_norm_eps", 1e-12);
  c.activation = r.oneOf("hidden_act", "gelu", {"gelu"});
  r.oneOf("position_embedding_type", "absolute", {"absolute"});
}

std::vector<Expected> bertBody(const ModelConfig& c) {
  const int64_t d = c.d_model, ff = c.d_ff;
  std::vector<Expected> e = {{"embeddings.word_embeddings.weight", {c.vocab, d}},
                             {"embeddings.position_embeddings.weight", {c.positions, d}},
                             {"embeddings.token_type_embeddings.weight", {c.type_vocab, d}},
                             {"embeddings.LayerNorm.weight", {d}},
                             {"embeddings.LayerNorm.bias", {d}}};
  for (int64_t l = 0; l < c.layers; ++l) {
    auto add = [&](const std::string& rest, std::vector<int64_t> shape) {
      e.push_back({layerName("encoder.layer.", l, rest), std::move(shape)});
    };
    for (const char* p : {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"})
      add(std::string(p) + ".weight", {d, d}), add(std::string(p) + ".bias", {d});  // nn.Linear [out, in]
    add("attention.output.LayerNorm.weight", {d}), add("attention.output.LayerNorm.bias", {d});
    add("intermediate.dense.weight", {ff, d}), add("intermediate.dense.bias", {ff});
    add("output.dense.weight", {d, ff}), add("output.dense.bias", {d});
    add("output.LayerNorm.weight", {d}), add("output.LayerNorm.bias", {d});
  }
  // Optional: the pooler (unused here).
  e.push_back({"pooler.dense.weight", {d, d}, false});
  e.push_back({"pooler.dense.bias", {d}, false});
  return e;
}

// The pre-training heads, saved without the prefix.
std::vector<Expected> bertHeads(const ModelConfig& c) {
  const int64_t d = c.d_model, V = c.vocab;
  return {{"cls.predictions.transform.dense.weight", {d, d}, false},
          {"cls.predictions.transform.dense.bias", {d}, false},
          {"cls.predictions.transform.LayerNorm.weight", {d}, false},
          {"cls.predictions.transform.LayerNorm.bias", {d}, false},
          {"cls.predictions.bias", {V}, false},
          {"cls.predictions.decoder.weight", {V, d}, false},  // tied to the word embeddings when absent
          {"cls.predictions.decoder.bias", {V}, false},
          {"cls.seq_relationship.weight", {2, d}, false},  // next-sentence head (unused)
          {"cls.seq_relationship.bias", {2}, false}};
}

std::unique_ptr<FamilyWeights> bertLoad(const WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  auto w = std::make_unique<BertWeights>();
  w->word = s.take("embeddings.word_embeddings.weight");
  w->position = s.take("embeddings.position_embeddings.weight");
  w->token_type = s.take("embeddings.token_type_embeddings.weight");
  w->emb_ln_w = s.take("embeddings.LayerNorm.weight");
  w->emb_ln_b = s.take("embeddings.LayerNorm.bias");
  for (int64_t l = 0; l < c.layers; ++l) {
    auto t = [&](const std::string& rest) { return s.take(layerName("encoder.layer.", l, rest)); };
    w->layers.push_back({t("attention.self.query.weight"), t("attention.self.query.bias"),
                         t("attention.self.key.weight"), t("attention.self.key.bias"),
                         t("attention.self.value.weight"), t("attention.self.value.bias"),
                         t("attention.output.dense.weight"), t("attention.output.dense.bias"),
                         t("attention.output.LayerNorm.weight"), t("attention.output.LayerNorm.bias"),
                         t("intermediate.dense.weight"), t("intermediate.dense.bias"), t("output.dense.weight"),
                         t("output.dense.bias"), t("output.LayerNorm.weight"), t("output.LayerNorm.bias")});
    progress(l);
  }
  // The masked-LM head is all there or not used at all.
  const std::vector<std::string> mlm = {"cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias",
                                        "cls.predictions.transform.LayerNorm.weight",
                                        "cls.predictions.transform.LayerNorm.bias", "cls.predictions.bias"};
  const auto have = std::count_if(mlm.begin(), mlm.end(), [&](const std::string& n) { return s.hasFull(n); });
  if (have > 0 && have < static_cast<int64_t>(mlm.size()))
    for (const std::string& n : mlm)
      if (!s.hasFull(n))
        throw InputError(s.where + ": tensor '" + n + "' is missing (the masked-LM head cls.predictions.* is incomplete)");
  if (have > 0) {
    m.predicts = true;
    w->mlm_dense_w = s.takeFull(mlm[0]);
    w->mlm_dense_b = s.takeFull(mlm[1]);
    w->mlm_ln_w = s.takeFull(mlm[2]);
    w->mlm_ln_b = s.takeFull(mlm[3]);
    w->mlm_bias = s.takeFull(mlm[4]);
    w->mlm_decoder = s.hasFull("cls.predictions.decoder.weight") ? s.takeFull("cls.predictions.decoder.weight")
                                                                 : w->word;  // tied
  }
  return w;
}

void bertForward(const Model& m, ModelRun& run, KvCache*, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const BertWeights& W = m.as<BertWeights>();
  const int64_t L = static_cast<int64_t>(run.ids.size()), d = c.d_model;
  // x = LN(word[ids] + position[0 … L) + token_type[0])            [L, d]
  Mat x(L, d);
  for (int64_t i = 0; i < L; ++i)
    x.row(i) = W.word.mat().row(run.ids[static_cast<size_t>(i)]) + W.position.mat().row(i) + W.token_type.mat().row(0);
  layerNorm(x, W.emb_ln_w, W.emb_ln_b, c.ln_eps);
  // One unpadded sequence: every key is allowed (the padding mask is all ones).
  const KeyRange keys{0, L, false, 0};
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  Mat q, k, v, concat, proj, f, f2;
  for (int64_t l = 0; l < c.layers; ++l) {
    const BertLayer& w = W.layers[static_cast<size_t>(l)];
    // q = x W_qᵀ + b_q, k = x W_kᵀ + b_k, v = x W_vᵀ + b_v        [L, d] each
    linear(x, w.q_w, &w.q_b, true, q);
    linear(x, w.k_w, &w.k_b, true, k);
    linear(x, w.v_w, &w.v_b, true, v);
    // head_h = softmax(q_h k_hᵀ / √d_head) v_h                   [L, d_head] × H
    attentionLayer(q, k, v, keys, c.heads, c.heads, scale, ctx, run, l, concat);
    if (run.keep_projections) run.q[l] = std::move(q), run.k[l] = std::move(k), run.v[l] = std::move(v);
    // x = LN(x + Concat(head_1 … head_H) W_oᵀ + b_o)               [L, d]
    linear(concat, w.o_w, &w.o_b, true, proj);
    x += proj;
    layerNorm(x, w.ln1_w, w.ln1_b, c.ln_eps);
    // x = LN(x + gelu(x W_iᵀ + b_i) W_outᵀ + b_out)               [L, d_ff] → [L, d]
    linear(x, w.i_w, &w.i_b, true, f);
    activate(f, Activation::GeluErf);
    linear(f, w.out_w, &w.out_b, true, f2);
    x += f2;
    layerNorm(x, w.ln2_w, w.ln2_b, c.ln_eps);
    run.flops += 3 * linearFlops(L, w.q_w) + linearFlops(L, w.o_w) + linearFlops(L, w.i_w) +
                 linearFlops(L, w.out_w);
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  run.hidden = std::move(x);
}

// t = LN(gelu(h W_tᵀ + b_t)); logits = t decoderᵀ + bias          [P, V]: row of position i predicts token i
Mat bertLogits(const Model& m, const Mat& hidden, double* flops) {
  const BertWeights& W = m.as<BertWeights>();
  Mat t, logits;
  linear(hidden, W.mlm_dense_w, &W.mlm_dense_b, true, t);
  activate(t, Activation::GeluErf);
  layerNorm(t, W.mlm_ln_w, W.mlm_ln_b, m.info.config.ln_eps);
  linear(t, W.mlm_decoder, &W.mlm_bias, true, logits);
  *flops += linearFlops(hidden.rows(), W.mlm_dense_w) + linearFlops(hidden.rows(), W.mlm_decoder);
  return logits;
}

}  // namespace

Family makeBertFamily() {
  Family f;
  f.model_type = "bert";
  f.label = "BERT";
  f.architectures = {"BertModel", "BertForMaskedLM"};
  f.paper = "Devlin et al. 2019";
  f.prefix = "bert.";
  f.probe = "embeddings.word_embeddings.weight";
  f.causal = false;
  f.tokenizer = TokenizerFiles::WordPiece;
  f.parse = bertParse;
  f.body = bertBody;
  f.heads = bertHeads;
  f.buffer = [](const std::string& name) { return name == "embeddings.position_ids"; };
  f.load = bertLoad;
  f.forward = bertForward;
  f.logits = bertLogits;
  return f;
}

}  // namespace attn
