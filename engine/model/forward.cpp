// The forward passes of GPT-2 and BERT, and the pieces every architecture's
// pass shares: linear layers, multi-head (and grouped-query) attention over a
// KV cache, the LM heads and their top-k.
//
// [SECTION] Shared pieces
// [SECTION] LM heads
// [SECTION] GPT-2 forward
// [SECTION] BERT forward
#include "engine/model/model_impl.h"

#include "engine/attention_math.h"
#include "engine/gemm.h"
#include "engine/parallel.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace attn {

// [SECTION] Shared pieces
Weight Weight::floats(std::vector<float>& scratch) const {
  if (data || !entry) return *this;
  Weight w = *this;
  w.data = file->floats(*entry, scratch);
  return w;
}

// Through engine/gemm.h (OpenBLAS): ~1.5× Eigen's GEMM on these
// short-and-wide products (128 tokens × 768 → 3072).
void linear(const Mat& x, const Weight& w, const Weight* b, bool transposed, Mat& y) {
  y.resize(x.rows(), transposed ? w.rows : w.cols);  // shapes were checked against the config at load
  if (b) y.rowwise() = b->vec();
  gemm(x, w.mat(), transposed, 1.0f, b ? 1.0f : 0.0f, y);
}

double linearFlops(int64_t rows, const Weight& w) { return 2.0 * static_cast<double>(rows) * w.rows * w.cols; }

void attentionLayer(const Mat& q, const Mat& k, const Mat& v, const Mat& mask, int64_t heads, int64_t kv_heads,
                    float scale, const RunContext& ctx, std::vector<Mat>& attention, Mat& concat) {
  const int64_t L = q.rows(), dh = q.cols() / heads, group = heads / kv_heads;
  concat.resize(L, q.cols());
  attention.resize(static_cast<size_t>(heads));
  parallelFor(heads, ctx, [&](int64_t h) {
    const int64_t g = h / group;  // the key/value head query head h reads
    Mat scores;                   // Q_h K_gᵀ · scale    [Lq, Lk]
    attendHead(q.middleCols(h * dh, dh), k.middleCols(g * dh, dh), v.middleCols(g * dh, dh), scale, mask, scores,
               attention[static_cast<size_t>(h)], concat.middleCols(h * dh, dh));
  });
}

std::string tokenText(const Tokenizer& tok, int32_t id) {
  if (id < tok.vocabSize()) return tok.display(id);
  std::string s = "#";  // appended piecewise (GCC 12 misreports "#" + string as -Wrestrict)
  s += std::to_string(id);
  return s;
}

namespace {

void linear(const Mat& x, const Weight& w, const Weight& b, bool transposed, Mat& y) {
  linear(x, w, &b, transposed, y);
}

// y = LN(x) · γ + β, per row (LN: attention_math.h layerNormRows)     [L, d]
void layerNorm(Mat& x, const Weight& gamma, const Weight& beta, double eps) {
  x = layerNormRows(x, static_cast<float>(eps));
  x.array().rowwise() *= gamma.vec().array();
  x.rowwise() += beta.vec();
}

// GPT-2's gelu_new: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
void geluTanh(Mat& x) {
  const float c = std::sqrt(2.0f / std::numbers::pi_v<float>);
  x.array() = 0.5f * x.array() * (1.0f + (c * (x.array() + 0.044715f * x.array().cube())).tanh());
}

// BERT's gelu: 0.5·x·(1 + erf(x / √2))
void geluErf(Mat& x) {
  x = x.unaryExpr([](float v) { return 0.5f * v * (1.0f + std::erf(v / std::numbers::sqrt2_v<float>)); });
}

// Top-k of softmax(logits) for one row, by a single pass that keeps the k
// best in order (a partial selection: O(V·k) with k ≤ a few, no V-sized sort
// or index array).                                                 row [V]
std::vector<Prediction> topKOfRow(const Eigen::Ref<const RowVec>& row, int k, const Tokenizer& tok) {
  const int64_t V = row.size();
  const int kk = static_cast<int>(std::min<int64_t>(std::max(k, 0), V));
  if (kk == 0) return {};
  const float mx = row.maxCoeff();
  const double z = (row.array() - mx).exp().cast<double>().sum();  // softmax denominator
  std::vector<int32_t> best;  // ids, best first; ties go to the smaller id
  best.reserve(static_cast<size_t>(kk) + 1);
  for (int32_t id = 0; id < V; ++id) {
    if (static_cast<int>(best.size()) == kk && row(id) <= row(best.back())) continue;
    auto at = std::find_if(best.begin(), best.end(), [&](int32_t b) { return row(id) > row(b); });
    best.insert(at, id);
    if (static_cast<int>(best.size()) > kk) best.pop_back();
  }
  std::vector<Prediction> out;
  for (const int32_t id : best)
    out.push_back({id, tokenText(tok, id), static_cast<float>(std::exp(static_cast<double>(row(id) - mx)) / z)});
  return out;
}

}  // namespace

std::pair<const Mat*, const Mat*> keysWithCache(KvCache* cache, int64_t layer, const Mat& k, const Mat& v) {
  if (!cache) return {&k, &v};
  if (static_cast<int64_t>(cache->k.size()) <= layer) {
    cache->k.resize(static_cast<size_t>(layer) + 1);
    cache->v.resize(static_cast<size_t>(layer) + 1);
  }
  Mat& K = cache->k[static_cast<size_t>(layer)];
  Mat& V = cache->v[static_cast<size_t>(layer)];
  const int64_t T = K.rows(), L = k.rows();
  K.conservativeResize(T + L, k.cols());
  V.conservativeResize(T + L, v.cols());
  K.bottomRows(L) = k;
  V.bottomRows(L) = v;
  return {&K, &V};
}

// [SECTION] LM heads
Mat lmLogits(const Model& m, const Mat& hidden, double* flops) {
  const ModelConfig& c = m.info.config;
  Mat logits;
  if (c.arch != Architecture::Bert) {
    // logits = h lm_headᵀ (GPT-2: tied to wte)                     [P, V]: row of position i predicts token i + 1
    const Weight& W = m.lm_head;
    *flops += linearFlops(hidden.rows(), W);
    if (W.data) {
      linear(hidden, W, nullptr, true, logits);
      return logits;
    }
    // A 16-bit head (the LLaMA family) is converted a block of rows at a time.
    constexpr int64_t kBlock = 4096;
    logits.resize(hidden.rows(), W.rows);
    Mat block;
    for (int64_t r0 = 0; r0 < W.rows; r0 += kBlock) {
      const int64_t n = std::min(kBlock, W.rows - r0);
      block.resize(n, W.cols);
      W.file->floatsAt(*W.entry, r0 * W.cols, n * W.cols, block.data());
      gemm(hidden, block, true, 1.0f, 0.0f, logits.middleCols(r0, n));
    }
    return logits;
  }
  // t = LN(gelu(h W_tᵀ + b_t)); logits = t decoderᵀ + bias          [P, V]: row of position i predicts token i
  Mat t;
  linear(hidden, m.mlm_dense_w, m.mlm_dense_b, true, t);
  geluErf(t);
  layerNorm(t, m.mlm_ln_w, m.mlm_ln_b, c.ln_eps);
  linear(t, m.mlm_decoder, m.mlm_bias, true, logits);
  *flops += linearFlops(hidden.rows(), m.mlm_dense_w) + linearFlops(hidden.rows(), m.mlm_decoder);
  return logits;
}

std::vector<std::vector<Prediction>> predictTokens(const Model& m, const Mat& hidden,
                                                   const std::vector<int64_t>& positions, int k,
                                                   const RunContext& ctx, double* flops) {
  const int64_t L = hidden.rows(), P = static_cast<int64_t>(positions.size());
  std::vector<std::vector<Prediction>> out(static_cast<size_t>(L));
  if (k <= 0 || P == 0 || (m.info.config.arch == Architecture::Bert && !m.mlm)) return out;
  // h = hidden[positions]                                          [P, d]
  Mat h(P, hidden.cols());
  for (int64_t p = 0; p < P; ++p) h.row(p) = hidden.row(positions[static_cast<size_t>(p)]);
  double f = 0;
  const Mat logits = lmLogits(m, h, &f);
  parallelFor(P, ctx, [&](int64_t p) {
    out[static_cast<size_t>(positions[static_cast<size_t>(p)])] = topKOfRow(logits.row(p), k, *m.tokenizer);
  });
  if (flops) *flops += f;
  return out;
}

// [SECTION] GPT-2 forward
// Radford et al. 2019: pre-LN blocks, learned positions, causal.
void gpt2Forward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const int64_t L = static_cast<int64_t>(run.ids.size()), d = c.d_model, p0 = run.first_position;
  // x = wte[ids] + wpe[p0 … p0 + L)                                [L, d]
  Mat x(L, d);
  for (int64_t i = 0; i < L; ++i)
    x.row(i) = m.wte.mat().row(run.ids[static_cast<size_t>(i)]) + m.wpe.mat().row(p0 + i);
  const Mat mask = causalMask(L, p0 + L);  // aligned to the bottom right: query i is position p0 + i
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  Mat a, qkv, concat, proj, f, f2;
  for (int64_t l = 0; l < c.layers; ++l) {
    const Gpt2Layer& w = m.gpt2[static_cast<size_t>(l)];
    // a = LN(x; ln_1)                                              [L, d]
    a = x;
    layerNorm(a, w.ln1_w, w.ln1_b, c.ln_eps);
    // qkv = a W_attn + b_attn = [q | k | v]                       [L, 3d]
    linear(a, w.attn_w, w.attn_b, false, qkv);
    run.q[l] = qkv.leftCols(d);
    run.k[l] = qkv.middleCols(d, d);
    run.v[l] = qkv.rightCols(d);
    // head_h = softmax(q_h k_hᵀ / √d_head + causal) v_h over the cached and new keys   [L, d_head] × H
    const auto [K, V] = keysWithCache(cache, l, run.k[l], run.v[l]);
    attentionLayer(run.q[l], *K, *V, mask, c.heads, c.heads, scale, ctx, run.attention[l], concat);
    // x = x + Concat(head_1 … head_H) W_proj + b_proj             [L, d]
    linear(concat, w.proj_w, w.proj_b, false, proj);
    x += proj;
    // x = x + gelu(LN(x; ln_2) W_fc + b_fc) W_mproj + b_mproj     [L, d_ff] → [L, d]
    a = x;
    layerNorm(a, w.ln2_w, w.ln2_b, c.ln_eps);
    linear(a, w.fc_w, w.fc_b, false, f);
    geluTanh(f);
    linear(f, w.mproj_w, w.mproj_b, false, f2);
    x += f2;
    run.flops += linearFlops(L, w.attn_w) + linearFlops(L, w.proj_w) + linearFlops(L, w.fc_w) +
                 linearFlops(L, w.mproj_w) + 4.0 * static_cast<double>(L) * static_cast<double>(p0 + L) * d;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  // hidden = LN(x; ln_f)                                           [L, d]
  layerNorm(x, m.ln_f_w, m.ln_f_b, c.ln_eps);
  run.hidden = std::move(x);
}

// [SECTION] BERT forward
// Devlin et al. 2019: post-LN blocks, learned positions and token types, bidirectional.
void bertForward(const Model& m, ModelRun& run, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const int64_t L = static_cast<int64_t>(run.ids.size()), d = c.d_model;
  // x = LN(word[ids] + position[0 … L) + token_type[0])            [L, d]
  Mat x(L, d);
  for (int64_t i = 0; i < L; ++i)
    x.row(i) = m.word.mat().row(run.ids[static_cast<size_t>(i)]) + m.position.mat().row(i) + m.token_type.mat().row(0);
  layerNorm(x, m.emb_ln_w, m.emb_ln_b, c.ln_eps);
  // One unpadded sequence: every key is allowed (the padding mask is all ones).
  const Mat mask;
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  Mat concat, proj, f, f2;
  for (int64_t l = 0; l < c.layers; ++l) {
    const BertLayer& w = m.bert[static_cast<size_t>(l)];
    // q = x W_qᵀ + b_q, k = x W_kᵀ + b_k, v = x W_vᵀ + b_v        [L, d] each
    linear(x, w.q_w, w.q_b, true, run.q[l]);
    linear(x, w.k_w, w.k_b, true, run.k[l]);
    linear(x, w.v_w, w.v_b, true, run.v[l]);
    // head_h = softmax(q_h k_hᵀ / √d_head) v_h                   [L, d_head] × H
    attentionLayer(run.q[l], run.k[l], run.v[l], mask, c.heads, c.heads, scale, ctx, run.attention[l], concat);
    // x = LN(x + Concat(head_1 … head_H) W_oᵀ + b_o)               [L, d]
    linear(concat, w.o_w, w.o_b, true, proj);
    x += proj;
    layerNorm(x, w.ln1_w, w.ln1_b, c.ln_eps);
    // x = LN(x + gelu(x W_iᵀ + b_i) W_outᵀ + b_out)               [L, d_ff] → [L, d]
    linear(x, w.i_w, w.i_b, true, f);
    geluErf(f);
    linear(f, w.out_w, w.out_b, true, f2);
    x += f2;
    layerNorm(x, w.ln2_w, w.ln2_b, c.ln_eps);
    run.flops += 3 * linearFlops(L, w.q_w) + linearFlops(L, w.o_w) + linearFlops(L, w.i_w) +
                 linearFlops(L, w.out_w) + 4.0 * static_cast<double>(L) * L * d;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  run.hidden = std::move(x);
}

}  // namespace attn
