// BERT (Devlin et al. 2019), with the Hugging Face semantics of BertModel /
// BertForMaskedLM: post-LN blocks, learned positions and token types,
// bidirectional.
//   x = LN(word[ids] + position[0 … L) + token_type[0])
//   per layer:  q = x W_qᵀ + b_q, k = x W_kᵀ + b_k, v = x W_vᵀ + b_v
//               head_h = softmax(q_h k_hᵀ / √d_head) v_h
//               x = LN(x + Concat(head_1 … head_H) W_oᵀ + b_o)
//               x = LN(x + gelu(x W_iᵀ + b_i) W_outᵀ + b_out)
//   hidden = x;  MLM: logits = LN(gelu(hidden W_tᵀ + b_t)) decoderᵀ + bias
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/families/family.h"

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

std::unique_ptr<FamilyWeights> bertLoad(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, ff = c.d_ff, V = c.vocab;
  auto w = std::make_unique<BertWeights>();
  w->word = s.take("embeddings.word_embeddings.weight", {V, d});
  w->position = s.take("embeddings.position_embeddings.weight", {c.positions, d});
  w->token_type = s.take("embeddings.token_type_embeddings.weight", {c.type_vocab, d});
  w->emb_ln_w = s.take("embeddings.LayerNorm.weight", {d});
  w->emb_ln_b = s.take("embeddings.LayerNorm.bias", {d});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = layerName("encoder.layer.", l, "");
    BertLayer& y = w->layers.emplace_back();
    // nn.Linear [out, in]
    y.q_w = s.take(p + "attention.self.query.weight", {d, d}), y.q_b = s.take(p + "attention.self.query.bias", {d});
    y.k_w = s.take(p + "attention.self.key.weight", {d, d}), y.k_b = s.take(p + "attention.self.key.bias", {d});
    y.v_w = s.take(p + "attention.self.value.weight", {d, d}), y.v_b = s.take(p + "attention.self.value.bias", {d});
    y.o_w = s.take(p + "attention.output.dense.weight", {d, d}), y.o_b = s.take(p + "attention.output.dense.bias", {d});
    y.ln1_w = s.take(p + "attention.output.LayerNorm.weight", {d});
    y.ln1_b = s.take(p + "attention.output.LayerNorm.bias", {d});
    y.i_w = s.take(p + "intermediate.dense.weight", {ff, d}), y.i_b = s.take(p + "intermediate.dense.bias", {ff});
    y.out_w = s.take(p + "output.dense.weight", {d, ff}), y.out_b = s.take(p + "output.dense.bias", {d});
    y.ln2_w = s.take(p + "output.LayerNorm.weight", {d}), y.ln2_b = s.take(p + "output.LayerNorm.bias", {d});
    progress(l);
  }
  // Saved and not read: the pooler, the next-sentence head.
  s.allow("pooler.dense.weight", {d, d});
  s.allow("pooler.dense.bias", {d});
  s.allowFull("cls.seq_relationship.weight", {2, d});
  s.allowFull("cls.seq_relationship.bias", {2});
  s.allowFull("cls.predictions.decoder.bias", {V});
  // The masked-LM head; its decoder, when absent, tied to the word embeddings.
  const std::vector<Weight> mlm = takeWholeHead(s,
                                                {{"cls.predictions.transform.dense.weight", {d, d}},
                                                 {"cls.predictions.transform.dense.bias", {d}},
                                                 {"cls.predictions.transform.LayerNorm.weight", {d}},
                                                 {"cls.predictions.transform.LayerNorm.bias", {d}},
                                                 {"cls.predictions.bias", {V}}},
                                                "the masked-LM head cls.predictions.*");
  const Weight decoder = s.takeFull("cls.predictions.decoder.weight", {V, d}, Need::Optional);
  if (mlm[0].present()) {
    m.predicts = true;
    w->mlm_dense_w = mlm[0], w->mlm_dense_b = mlm[1], w->mlm_ln_w = mlm[2], w->mlm_ln_b = mlm[3];
    w->mlm_bias = mlm[4];
    w->mlm_decoder = decoder.present() ? decoder : w->word;
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
  const AttentionSpec att{.heads = c.heads, .kv_heads = c.heads, .keys = KeyRange{0, L, false, 0},
                          .scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
  Mat q, k, v, concat, proj, f, f2;
  for (int64_t l = 0; l < c.layers; ++l) {
    if (!enterLayer(run, l, x)) continue;  // before the layer a resumed pass starts at
    const BertLayer& w = W.layers[static_cast<size_t>(l)];
    // q = x W_qᵀ + b_q, k = x W_kᵀ + b_k, v = x W_vᵀ + b_v        [L, d] each
    linear(x, w.q_w, &w.q_b, true, q);
    linear(x, w.k_w, &w.k_b, true, k);
    linear(x, w.v_w, &w.v_b, true, v);
    // head_h = softmax(q_h k_hᵀ / √d_head) v_h                   [L, d_head] × H
    attend(run, l, att, q, k, v, nullptr, ctx, concat);
    // x = LN(x + Concat(head_1 … head_H) W_oᵀ + b_o)               [L, d]
    linear(concat, w.o_w, &w.o_b, true, proj);
    headWrites(run, l, concat, proj, [&](const Mat& in, Mat& o) { linear(in, w.o_w, &w.o_b, true, o); });
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
  enterLayer(run, c.layers, x);  // the stream the final norm reads
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

// llama.cpp's names for BertModel's tensors; the converter drops the pooler
// and the masked-LM head (cls.*): a file has the encoder alone.
std::vector<GgufTensorName> bertGgufTensors() {
  const std::string l = "encoder.layer.#.";
  std::vector<GgufTensorName> names = {{"token_embd.weight", "embeddings.word_embeddings.weight"},
                                       {"token_types.weight", "embeddings.token_type_embeddings.weight"},
                                       {"position_embd.weight", "embeddings.position_embeddings.weight"}};
  for (const auto& [gguf, hf] : std::vector<std::pair<std::string, std::string>>{
           {"token_embd_norm", "embeddings.LayerNorm"},
           {"blk.#.attn_q", l + "attention.self.query"},
           {"blk.#.attn_k", l + "attention.self.key"},
           {"blk.#.attn_v", l + "attention.self.value"},
           {"blk.#.attn_output", l + "attention.output.dense"},
           {"blk.#.attn_output_norm", l + "attention.output.LayerNorm"},
           {"blk.#.ffn_up", l + "intermediate.dense"},
           {"blk.#.ffn_down", l + "output.dense"},
           {"blk.#.layer_output_norm", l + "output.LayerNorm"}})
    for (const char* part : {".weight", ".bias"}) names.push_back({gguf + part, hf + part});
  return names;
}

// BertModel's keys: TextModel's, attention.causal false, and pooling_type
// where sentence-transformers names one (how llama.cpp sums the hidden
// states into one embedding, which AttnLab does not compute: read, nothing
// else changes). The token types from token_types' rows.
void bertGgufConfig(GgufKeys& k, nlohmann::json& c) {
  c["num_hidden_layers"] = k.count("block_count", kMaxLayers);
  c["hidden_size"] = k.count("embedding_length", kMaxWidth);
  c["intermediate_size"] = k.count("feed_forward_length", kMaxWidth);
  c["num_attention_heads"] = ggufHeadsAllKv(k, "BERT");
  c["max_position_embeddings"] = k.count("context_length", kMaxCount);
  c["layer_norm_eps"] = k.number("attention.layer_norm_epsilon");
  if (k.flag("attention.causal", false)) k.fail("attention.causal", "is true, but BERT attends both ways");
  // llama_pooling_type: 0 none, 1 mean, 2 [CLS], 3 last; 4 (rank) needs a classifier head BERT has not.
  k.whole("pooling_type", 3, 0);
  if (const GgufTensor* types = k.tensor("token_types.weight"); types && types->dims.size() == 2)
    c["type_vocab_size"] = types->dims[1];
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
  f.buffer = [](const std::string& name) { return name == "embeddings.position_ids"; };
  f.load = bertLoad;
  f.forward = bertForward;
  f.logits = bertLogits;
  f.gguf = {{"bert", "BertModel", bertGgufConfig, bertGgufTensors()}};
  return f;
}

}  // namespace attn
