// The pieces every family's pass is built of (model_impl.h): linear layers,
// norms, activations, RoPE, masks, multi-head (and grouped-query) attention
// over a KV cache with the families' score changes, the one attention step
// every decoder family calls, and the LM head's product.
//
// [SECTION] Shared pieces
// [SECTION] One attention step
// [SECTION] Interventions
// [SECTION] Encoder–decoder attention
// [SECTION] LM heads
#include "engine/model/blocks/model_impl.h"
#include "engine/model/checkpoint/quants.h"

#include "engine/model/checkpoint/config.h"

#include "engine/attention_math.h"
#include "engine/gemm.h"
#include "engine/parallel.h"

#include <algorithm>
#include <chrono>
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

void linearTiled16(const Mat& x, const Weight& w, Mat& y) {
  // Output rows per tile: 64 × 2048 floats (512 KiB) stay in L2 while a
  // decode step uses them; a prompt's rows reuse each tile more, 256, but
  // a narrow matrix (GQA's k and v) keeps 64 so every thread gets tiles.
  const int64_t out = w.rows, in = w.cols;
  y.resize(x.rows(), out);
  const TensorEntry& e = *w.entry;
  if (x.rows() == 1 && isQuantized(e.dtype) && e.add == 0) {
    // A decode step's one row: the weights decoded in registers as they are
    // multiplied, never written out (dotRows); rows stored in another order
    // (Llama's q and k in a GGUF file) come back in the checkpoint's.
    if (e.stored_rows.empty()) {
      dotRows(e.dtype, w.file->data(e), out, in, x.data(), y.data());
    } else {
      thread_local std::vector<float> stored;
      stored.resize(static_cast<size_t>(out));
      dotRows(e.dtype, w.file->data(e), out, in, x.data(), stored.data());
      for (int64_t r = 0; r < out; ++r) y(0, r) = stored[static_cast<size_t>(e.stored_rows[static_cast<size_t>(r)])];
    }
    return;
  }
  const int64_t kTile = x.rows() <= 16 || out < 1024 ? 64 : 256;
  parallelFor((out + kTile - 1) / kTile, RunContext{}, [&](int64_t t) {
    thread_local std::vector<float> tile;
    const int64_t o0 = t * kTile, n = std::min(kTile, out - o0);
    tile.resize(static_cast<size_t>(n * in));
    w.file->floatsAt(*w.entry, o0 * in, n * in, tile.data());
    // y[:, tile] = x tileᵀ                                          [R, n]
    gemmOnce(x, Eigen::Map<const Mat>(tile.data(), n, in), true, 1.0f, 0.0f, y.middleCols(o0, n));
  });
}

void linearT(const Mat& x, const Weight& w, const Weight& b, std::vector<float>& scratch, double* flops, Mat& y) {
  if (!w.data && w.entry && x.rows() <= kTiledRows) {
    linearTiled16(x, w, y);
    if (b.present()) y.rowwise() += b.vec();
  } else {
    linear(x, w.floats(scratch), b.present() ? &b : nullptr, true, y);
  }
  *flops += linearFlops(x.rows(), w);
}

void layerNorm(Mat& x, const Weight& gamma, const Weight& beta, double eps) {
  x = layerNormRows(x, static_cast<float>(eps));
  x.array().rowwise() *= gamma.vec().array();
  if (beta.present()) x.rowwise() += beta.vec();
}

void rmsNorm(const Mat& x, const Weight& w, double eps, Mat& y, float offset) {
  y.resize(x.rows(), x.cols());
  for (int64_t i = 0; i < x.rows(); ++i) {
    const double ms = static_cast<double>(x.row(i).squaredNorm()) / static_cast<double>(x.cols());
    y.row(i) = x.row(i) * static_cast<float>(1.0 / std::sqrt(ms + eps));
  }
  y.array().rowwise() *= w.vec().array() + offset;
}

void rmsNormHeads(Mat& x, int64_t heads, const Weight& w, double eps, float offset) {
  const int64_t dh = x.cols() / heads;
  Mat part;
  for (int64_t h = 0; h < heads; ++h) {
    rmsNorm(x.middleCols(h * dh, dh), w, eps, part, offset);
    x.middleCols(h * dh, dh) = part;
  }
}

Activation readActivation(const ConfigReader& r, const std::string& key, const std::string& def) {
  return activationNamed(
      r.oneOf(key, def, {"silu", "swish", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu", "relu"}));
}

Activation activationNamed(const std::string& name) {
  if (name == "silu" || name == "swish") return Activation::Silu;
  if (name == "gelu") return Activation::GeluErf;
  if (name == "relu") return Activation::Relu;
  return Activation::GeluTanh;
}

void activate(Mat& x, Activation a) {
  switch (a) {
    case Activation::Silu:  // x·σ(x) = x / (1 + e^−x), vectorised (e^−x = ∞ gives −0)
      x.array() = x.array() / (1.0f + (-x.array()).exp());
      break;
    case Activation::GeluTanh: {  // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
      const float c = std::sqrt(2.0f / std::numbers::pi_v<float>);
      x.array() = 0.5f * x.array() * (1.0f + (c * (x.array() + 0.044715f * x.array().cube())).tanh());
      break;
    }
    case Activation::GeluErf:  // 0.5·x·(1 + erf(x / √2))
      x = x.unaryExpr([](float v) { return 0.5f * v * (1.0f + std::erf(v / std::numbers::sqrt2_v<float>)); });
      break;
    case Activation::Relu:
      x = x.cwiseMax(0.0f);
      break;
  }
}

void gatedMlp(const Mat& a, const Weight& gate_w, const Weight& up_w, const Weight& down_w, Activation act,
              std::vector<float>& scratch, double* flops, Mat& gate, Mat& up, Mat& out) {
  constexpr int64_t kChunk = 2048;
  const int64_t L = a.rows();
  if (L <= kChunk) {
    linearT(a, gate_w, Weight{}, scratch, flops, gate);
    linearT(a, up_w, Weight{}, scratch, flops, up);
    activate(gate, act);
    gate.array() *= up.array();
    linearT(gate, down_w, Weight{}, scratch, flops, out);
    return;
  }
  // A long text by chunks of rows: its [L, d_ff] hidden rows are never whole
  // (32k tokens of TinyLlama: 1.5 GB); each 16-bit weight converted once.
  std::vector<float> up_scratch, down_scratch;
  const Weight g = gate_w.floats(scratch), u = up_w.floats(up_scratch), d = down_w.floats(down_scratch);
  out.resize(L, down_w.rows);
  Mat rows, part;
  for (int64_t r0 = 0; r0 < L; r0 += kChunk) {
    rows = a.middleRows(r0, std::min(kChunk, L - r0));
    linear(rows, g, nullptr, true, gate);
    linear(rows, u, nullptr, true, up);
    activate(gate, act);
    gate.array() *= up.array();
    linear(gate, d, nullptr, true, part);
    out.middleRows(r0, rows.rows()) = part;
  }
  *flops += linearFlops(L, gate_w) + linearFlops(L, up_w) + linearFlops(L, down_w);
}

Mat embedRows(const Weight& embed, const std::vector<int32_t>& ids) {
  Mat x(static_cast<int64_t>(ids.size()), embed.cols);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t r = static_cast<int64_t>(i);
    if (embed.data) x.row(r) = embed.mat().row(ids[i]);
    else embed.file->floatsAt(*embed.entry, int64_t{ids[i]} * embed.cols, embed.cols, x.row(r).data());
  }
  return x;
}

namespace {

// x_j → e_j = exp(x_j − max) in place, in one pass; returns Σ e_j and
// Σ e_j·(x_j − max). Sixteen keys at a time (one AVX-512 register, two
// AVX2 ones), the sums kept by lane and added up at the end.
std::pair<float, float> expShifted(float* x, int64_t n, float max) {
  using Lanes = Eigen::Array<float, 16, 1>;
  Lanes z = Lanes::Zero(), dot = Lanes::Zero();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    Eigen::Map<Lanes> chunk(x + j);
    const Lanes t = chunk - max;
    const Lanes e = t.exp();
    chunk = e;
    z += e;
    dot += e * t;
  }
  float zs = z.sum(), ds = dot.sum();
  for (; j < n; ++j) {
    const float t = x[j] - max, e = std::exp(t);
    x[j] = e;
    zs += e;
    ds += e * t;
  }
  return {zs, ds};
}

}  // namespace

void groupWeights(const Mat& q, const MatRef& K, int64_t r0, int64_t n, int64_t k0, const KeyRange& keys, int64_t g,
                  int64_t group, float scale, const ScoreMods& mods, Mat& S, const WeightRowFn* rows) {
  const int64_t dh = K.cols(), nk = K.rows();
  // Q_g: the rows of the group's heads stacked, so K_g is packed once for all   [group·n, dh]
  Mat Qg(group * n, dh);
  for (int64_t a = 0; a < group; ++a) Qg.middleRows(a * n, n) = q.block(r0, (g * group + a) * dh, n, dh);
  // S = Q_g K_g[keys]ᵀ · scale                                        [group·n, nk]
  S.resize(group * n, nk);
  gemmOnce(Qg, K, true, scale, 0.0f, S);
  if (mods.softcap > 0) {  // s → c·tanh(s / c)
    const double c = mods.softcap;
    S = S.unaryExpr([c](float s) { return static_cast<float>(c * std::tanh(s / c)); });
  }
  for (int64_t a = 0; a < group; ++a) {
    auto W = S.middleRows(a * n, n);
    if (mods.alibi) {  // s_ij += slope_h · j
      const float slope = static_cast<float>((*mods.alibi)[static_cast<size_t>(g * group + a)]);
      for (int64_t j = 0; j < nk; ++j) W.col(j).array() += slope * static_cast<float>(k0 + j);
    }
    // A = softmax over the keys row i reads (the others 0)              [n, nk]
    for (int64_t r = 0; r < n; ++r) {
      const int64_t lo = keys.first(r0 + r) - k0, hi = keys.end(r0 + r) - k0;
      auto row = W.row(r).array();
      if (hi <= lo) {  // no key to read: the row attends to nothing
        row.setZero();
        if (rows) (*rows)(a * n + r, k0, row.data(), 0, 0.0f, 0.0f);
        continue;
      }
      auto x = row.segment(lo, hi - lo);
      const auto [z, e_dot] = expShifted(x.data(), hi - lo, x.maxCoeff());
      const float inv_z = 1.0f / z;
      row.head(lo).setZero();
      row.tail(nk - hi).setZero();
      if (!rows) {
        x *= inv_z;
        continue;
      }
      // −Σ A ln A = ln z − Σ A·(s − max), as ln A_j = s_j − max − ln z (no
      // logarithm per key).
      const float entropy = std::log(z) - inv_z * e_dot;
      (*rows)(a * n + r, k0 + lo, x.data(), hi - lo, inv_z, entropy);
    }
  }
}

void attentionLayer(const Mat& q, const Mat& k, const Mat& v, const KeyRange& keys, int64_t heads, int64_t kv_heads,
                    float scale, const RunContext& ctx, ModelRun& run, int64_t layer, Mat& concat,
                    const ScoreMods& mods) {
  const int64_t L = q.rows(), T = keys.keys, dh = q.cols() / heads, group = heads / kv_heads;
  MapStream& stream = *run.stream;
  const int64_t B = stream.blockRows(), blocks = stream.blocks();
  concat.resize(L, q.cols());
  std::vector<Mat>& maps = run.attention[static_cast<size_t>(layer)];
  maps.assign(static_cast<size_t>(heads), Mat());
  for (int64_t h = 0; h < heads; ++h)
    if (stream.keeps(layer, h)) maps[static_cast<size_t>(h)] = Mat::Zero(L, T);
  std::vector<double> flops(static_cast<size_t>(kv_heads * blocks), 0.0);
  const auto t0 = std::chrono::steady_clock::now();
  // One task per key/value group and block of query rows: the group's heads
  // read the same keys, so their rows meet for the group divergence.
  parallelFor(kv_heads * blocks, ctx, [&](int64_t task) {
    const int64_t g = task / blocks, r0 = task % blocks * B, n = std::min(B, L - r0);
    // The keys some row of the block reads: [k0, k1).
    const int64_t k0 = keys.first(r0), k1 = std::max(k0, keys.end(r0 + n - 1)), nk = k1 - k0;
    Mat S, O(group * n, dh), full;
    thread_local std::vector<float> inv_z;  // of each stacked row
    inv_z.resize(static_cast<size_t>(group * n));
    const WeightRowFn each = [&](int64_t row, int64_t first, const float* e, int64_t count, float c, float entropy) {
      inv_z[static_cast<size_t>(row)] = c;
      stream.addRow(layer, g * group + row / n, r0 + row % n, first, e, count, c, entropy);
    };
    groupWeights(q, k.block(k0, g * dh, nk, dh), r0, n, k0, keys, g, group, scale, mods, S, &each);
    const auto C = Eigen::Map<const Eigen::VectorXf>(inv_z.data(), group * n).asDiagonal();
    // heads[rows] = A V_g[keys] = diag(1/Σe) (E V_g[keys])               [group·n, dh]
    gemmOnce(S, v.block(k0, g * dh, nk, dh), false, 1.0f, 0.0f, O);
    O = C * O;
    flops[static_cast<size_t>(task)] += 4.0 * static_cast<double>(group * n * nk * dh);
    for (int64_t a = 0; a < group; ++a) {
      const int64_t h = g * group + a;
      concat.block(r0, h * dh, n, dh) = O.middleRows(a * n, n);
      if (!stream.wantsFullRows(layer, h)) continue;
      // A's rows: e · 1/Σe, the bits headMap()'s normalised S has
      const auto A = Eigen::Map<const Eigen::VectorXf>(inv_z.data() + a * n, n).asDiagonal() * S.middleRows(a * n, n);
      if (stream.keeps(layer, h)) {
        maps[static_cast<size_t>(h)].block(r0, k0, n, nk) = A;
      } else {
        full.setZero(n, T);
        full.middleCols(k0, nk) = A;
        stream.handOn(layer, h, r0, full);
      }
    }
    stream.addGroup(layer, g, group, r0, S, inv_z.data());
  });
  run.attention_seconds += secondsSince(t0);
  for (const double x : flops) run.flops += x, run.attention_flops += x;
}

std::string tokenText(const Tokenizer& tok, int32_t id) {
  if (id < tok.vocabSize()) return tok.display(id);
  std::string s = "#";  // appended piecewise (GCC 12 misreports "#" + string as -Wrestrict)
  s += std::to_string(id);
  return s;
}

// [SECTION] One attention step
namespace {

// Each key/value head's columns repeated for the heads/kv_heads query heads
// that read it: [L, kv_heads·d_head] → [L, heads·d_head].
Mat repeatKvHeads(const Mat& x, int64_t heads, int64_t kv_heads, int64_t dh) {
  if (heads == kv_heads) return x;
  Mat out(x.rows(), heads * dh);
  const int64_t group = heads / kv_heads;
  for (int64_t h = 0; h < heads; ++h) out.middleCols(h * dh, dh) = x.middleCols(h / group * dh, dh);
  return out;
}

// RoPE in the rotate_half layout on the first 2·theta.size() dimensions of
// each head of width head_dim (the rest pass unrotated: partial rotary), at
// positions first_position, first_position + 1, …, the angles m·θ_i in
// float32 as transformers forms them (RopeAngle::Float32).
void ropeHeads(Eigen::Ref<Mat> x, int64_t heads, int64_t head_dim, const std::vector<double>& theta,
               int64_t first_position) {
  const int64_t rot = 2 * static_cast<int64_t>(theta.size());
  // the angles as transformers forms them (float32), one cos/sin for all heads
  if (rot == head_dim) return rotateHalfHeads(x, heads, theta, first_position, RopeAngle::Float32);
  for (int64_t h = 0; h < heads; ++h)
    rotateHalfHeads(x.middleCols(h * head_dim, rot), 1, theta, first_position, RopeAngle::Float32);
}

// Appends a run's keys and values (one layer's, [L, kv_heads·d_head]) to
// the cache and returns the cache's, or, without a cache, returns them as given.
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

// The heads `edit` ablates or patches in `layer`, in concat's columns
// [h·d_head, (h+1)·d_head); then concat kept where asked.          [L, heads·d_head]
void editHeads(const Interventions& edit, ModelRun& run, int64_t layer, int64_t heads, Mat& concat) {
  const int64_t dh = concat.cols() / heads;
  for (const auto& [l, h] : edit.ablate.heads) {
    if (l != layer) continue;
    auto out = concat.middleCols(h * dh, dh);  // head h's output  [L, d_head]
    if (edit.ablate.mode == HeadAblation::Mode::Zero)
      out.setZero();
    else
      out.rowwise() = out.colwise().mean().eval();  // its mean over the positions
  }
  for (const Interventions::HeadPatch& p : edit.patch_heads)
    if (p.layer == layer) concat.middleCols(p.head * dh, dh) = p.out;
  if (edit.keep_heads) run.head_out[static_cast<size_t>(layer)] = concat;
}

}  // namespace

void record(ModelRun& run, int64_t layer, QkStage stage, const AttentionSpec& a, const Mat& q, const Mat& k,
            const Mat& v, const Mat* K) {
  const size_t l = static_cast<size_t>(layer);
  const int64_t dh = q.cols() / a.heads;
  auto keep = [&](std::vector<Mat>& qs, std::vector<Mat>& ks) {
    if (qs.empty()) qs.resize(static_cast<size_t>(run.layers)), ks.resize(static_cast<size_t>(run.layers));
    if (!run.keep_projections) return;
    qs[l] = q;
    ks[l] = repeatKvHeads(k, a.heads, a.kv_heads, dh);
  };
  switch (stage) {
    case QkStage::Projected:
      keep(run.q_prenorm, run.k_prenorm);
      break;
    case QkStage::Unrotated:
      keep(run.q_unrotated, run.k_unrotated);
      break;
    case QkStage::Attended:
      keep(run.q, run.k);
      if (run.keep_projections) run.v[l] = repeatKvHeads(v, a.heads, a.kv_heads, dh);
      // what any map can be recomputed from (headMap), where the run does not keep them all
      if (run.keep_scores) run.scores[l] = {q, *K, a.keys, a.scale, a.mods.softcap};
      if (a.mods.alibi) run.alibi_slopes = *a.mods.alibi;
      break;
  }
}

void attend(ModelRun& run, int64_t layer, const AttentionSpec& a, Mat& q, Mat& k, const Mat& v, KvCache* cache,
            const RunContext& ctx, Mat& concat) {
  if (a.rope) {
    // RoPE: positions keys.p0 … keys.p0 + L − 1
    const int64_t dh = q.cols() / a.heads;
    record(run, layer, QkStage::Unrotated, a, q, k);
    ropeHeads(q, a.heads, dh, *a.rope, a.keys.p0);
    ropeHeads(k, a.kv_heads, dh, *a.rope, a.keys.p0);
  }
  const auto [K, V] = keysWithCache(cache, layer, k, v);
  record(run, layer, QkStage::Attended, a, q, k, v, K);
  attentionLayer(q, *K, *V, a.keys, a.heads, a.kv_heads, a.scale, ctx, run, layer, concat, a.mods);
  if (run.edit) editHeads(*run.edit, run, layer, a.heads, concat);
}

// [SECTION] Interventions
bool enterLayer(ModelRun& run, int64_t layer, Mat& x) {
  if (run.edit && layer < run.edit->resume_layer) return false;
  if (layer < run.layers)
    run.layer_threads[static_cast<size_t>(layer)] = run.pass_threads ? run.pass_threads->between() : omp_get_max_threads();
  if (!run.edit) return true;
  const Interventions& e = *run.edit;
  if (layer == e.resume_layer) x = *e.resume;
  for (const Interventions::ResidualPatch& p : e.patch_residual)
    if (p.layer == layer) x.row(p.position) = p.value;
  if (e.keep_residual) run.residual[static_cast<size_t>(layer)] = x;
  return true;
}

void headWrites(ModelRun& run, int64_t layer, const Mat& concat, const Mat& attention_out, const Projection& project) {
  if (!run.edit || (run.edit->write_positions.empty() && !run.edit->value_norms)) return;
  const Interventions& e = *run.edit;
  const size_t l = static_cast<size_t>(layer);
  const int64_t H = run.heads, dh = run.d_head, P = static_cast<int64_t>(e.write_positions.size());
  // rows: head h's output at position p alone (row h·P + p), then a zero row, whose projection is the bias
  Mat rows = Mat::Zero(H * P + 1, H * dh), out;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t p = 0; p < P; ++p)
      rows.row(h * P + p).segment(h * dh, dh) =
          concat.row(e.write_positions[static_cast<size_t>(p)]).segment(h * dh, dh);
  project(rows, out);  // [H·P + 1, d]
  run.attention_out[l].resize(P, out.cols());
  for (int64_t p = 0; p < P; ++p) run.attention_out[l].row(p) = attention_out.row(e.write_positions[static_cast<size_t>(p)]);
  run.head_bias[l] = out.row(H * P);
  run.head_writes[l] = out.topRows(H * P).rowwise() - run.head_bias[l];
  if (!e.value_norms) return;
  // W_O in the x·W orientation, [H·dh, d]: the projection of the identity, less the bias
  project(Mat::Identity(H * dh, H * dh), out);
  const Mat wo = out.rowwise() - run.head_bias[l];
  const Mat& v = run.v[l];  // [L, H·dh], each key/value head repeated for its query heads
  Mat& n = run.value_norms[l];
  n.resize(v.rows(), H);
  for (int64_t h = 0; h < H; ++h)  // ‖v_j^h W_O^h‖ for every key j   [L]
    n.col(h) = (v.middleCols(h * dh, dh) * wo.middleRows(h * dh, dh)).rowwise().norm();
}

void finalLayerNorm(ModelRun& run, Mat& x, const Weight& gamma, const Weight& beta, double eps) {
  layerNorm(x, gamma, beta, eps);
  run.final_norm = {.present = true, .centred = true, .w = gamma.data, .b = beta.data, .offset = 0, .eps = eps};
}

void finalRmsNorm(ModelRun& run, const Mat& x, const Weight& w, double eps, Mat& y, float offset) {
  rmsNorm(x, w, eps, y, offset);
  run.final_norm = {.present = true, .centred = false, .w = w.data, .b = nullptr, .offset = offset, .eps = eps};
}

// [SECTION] Encoder–decoder attention
void denseAttentionBlock(const Mat& xq, const Mat& xkv, const AttentionWeights& w, int64_t heads, float scale,
                         const std::vector<Mat>& bias, bool causal, std::vector<Mat>& maps, Mat& out,
                         std::vector<float>& scratch, double* flops) {
  Mat q, k, v;
  linearT(xq, w.q_w, w.q_b, scratch, flops, q);   // [Lq, H·dh]
  linearT(xkv, w.k_w, w.k_b, scratch, flops, k);  // [Lk, H·dh]
  linearT(xkv, w.v_w, w.v_b, scratch, flops, v);  // [Lk, H·dh]
  const int64_t Lq = q.rows(), Lk = k.rows(), dh = q.cols() / heads;
  const Mat mask = causal ? causalMask(Lq, Lk) : Mat();
  Mat concat(Lq, q.cols()), scores;
  maps.assign(static_cast<size_t>(heads), Mat());
  for (int64_t h = 0; h < heads; ++h) {
    // s = q_h k_hᵀ · scale + bias_h                                  [Lq, Lk]
    scores.noalias() = q.middleCols(h * dh, dh) * k.middleCols(h * dh, dh).transpose() * scale;
    if (!bias.empty()) scores += bias[static_cast<size_t>(h)];
    Mat& A = maps[static_cast<size_t>(h)];
    maskedSoftmaxRows(scores, mask, A);
    concat.middleCols(h * dh, dh).noalias() = A * v.middleCols(h * dh, dh);  // [Lq, dh]
  }
  if (flops) *flops += 4.0 * static_cast<double>(Lq * Lk * dh * heads);
  linearT(concat, w.o_w, w.o_b, scratch, flops, out);  // [Lq, d]
}

// [SECTION] LM heads
Mat lmHeadLogits(const Weight& W, const Mat& hidden, double* flops) {
  // logits = h Wᵀ                                                  [P, V]
  *flops += linearFlops(hidden.rows(), W);
  Mat logits;
  if (W.data) {
    linear(hidden, W, nullptr, true, logits);
    return logits;
  }
  if (hidden.rows() <= kTiledRows) {
    linearTiled16(hidden, W, logits);
    return logits;
  }
  // A 16-bit head is converted a block of rows at a time.
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

}  // namespace attn
