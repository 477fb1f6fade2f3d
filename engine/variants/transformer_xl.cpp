// Transformer-XL (Dai et al. 2019). The input x [N, d] is a long sequence cut
// into segments of length L; segment τ's queries attend causally to the
// extended context [memory | segment]: the previous M hidden states and the
// segment itself. This is one attention layer, so its hidden states are the
// layer input: memory = x[τL − M, τL).
//
// Relative positional attention (§3.3), with q_i = W_q x_i, k_j = W_{k,E} x_j:
//   A_ij = q_iᵀ k_j             (a) content
//        + q_iᵀ W_{k,R} r_{i−j}  (b) content-dependent position bias
//        + uᵀ k_j                (c) global content bias
//        + vᵀ W_{k,R} r_{i−j}    (d) global position bias
// r_{i−j} are sinusoids of the distance; scores are A / √d_head as in the
// authors' code. (a)+(c) = (q + u)ᵀ k; (b)+(d) = (q + v)ᵀ W_{k,R} r, computed
// for all distances at once and aligned with relShift().
#include "engine/variants/transformer_xl.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/multi_head.h"
#include "engine/parallel.h"
#include "engine/registry.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace attn {

// [SECTION] One layer

Mat relShift(const Mat& bd) {
  const int64_t lq = bd.rows(), lk = bd.cols();
  // x_padded = [0 | BD]                                  [Lq, Lk + 1]
  Mat padded(lq, lk + 1);
  padded.col(0).setZero();
  padded.rightCols(lk) = bd;
  // x_padded.view(Lk + 1, Lq)[1:].view(Lq, Lk): skip the first Lq floats
  return Eigen::Map<const Mat>(padded.data() + lq, lq, lk);
}

Mat relativeEncodings(int64_t lk, int64_t d) {
  // R[k] = PE(Lk − 1 − k)                               [Lk, d]
  return sinusoidalEncoding(lk, d).colwise().reverse();
}

XlLayerWeights makeXlLayerWeights(int64_t d, int64_t heads, uint64_t seed, float bias_scale) {
  const MultiHeadWeights mh = makeMultiHeadWeights(d, heads, seed);
  XlLayerWeights w{.w_q = mh.w_q, .w_k = mh.w_k, .w_v = mh.w_v, .w_o = mh.w_o};
  w.w_r = randomNormal(d, d, seed, "w_r", 1.6f / std::sqrt(static_cast<float>(d)));
  w.u = randomNormal(heads, d / heads, seed, "u", bias_scale);
  w.v = randomNormal(heads, d / heads, seed, "v", bias_scale);
  return w;
}

Mat xlAttention(const Mat& h_seg, const Mat& mem, const XlLayerWeights& w, const Mat& rk, int64_t heads,
                XlDetail* detail) {
  const int64_t lq = h_seg.rows(), lm = mem.rows(), lk = lm + lq, d = h_seg.cols(), dh = d / heads;
  // h̃ = [SG(m) ∘ h]                                     [Lk, d]
  Mat ext(lk, d);
  ext.topRows(lm) = mem;
  ext.bottomRows(lq) = h_seg;
  // q = h W_q [Lq, d];  k = h̃ W_{k,E}, v = h̃ W_v [Lk, d]
  const Mat q = h_seg * w.w_q, k = ext * w.w_k, v = ext * w.w_v;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  const Mat mask = causalMask(lq, lk);  // j ≤ i + Lm
  Mat out(lq, d);
  if (detail) {
    for (std::vector<Mat>* m : {&detail->a, &detail->b, &detail->c, &detail->d, &detail->scores, &detail->weights})
      m->assign(static_cast<size_t>(heads), Mat());
  }
  // Heads are independent; each writes its own columns and detail entries.
  parallelFor(heads, RunContext{}, [&](int64_t h) {
    const auto qh = q.middleCols(h * dh, dh);
    const auto kh = k.middleCols(h * dh, dh);
    const auto rh = rk.middleCols(h * dh, dh);
    const RowVec u = w.u.row(h), vb = w.v.row(h);
    Mat scores(lq, lk);
    if (!detail) {
      // AC = (q + u) kᵀ,  BD = shift((q + v) (W_R r)ᵀ)    [Lq, Lk]
      const Mat qu = qh.rowwise() + u, qv = qh.rowwise() + vb;
      Mat ac(lq, lk), bd(lq, lk);
      ac.noalias() = qu * kh.transpose();
      bd.noalias() = qv * rh.transpose();
      scores = (ac + relShift(bd)) * scale;
    } else {
      // The four terms one by one, each ·1/√d_head     [Lq, Lk]
      Mat a(lq, lk), b(lq, lk);
      a.noalias() = qh * kh.transpose() * scale;                                  // (a) q_iᵀ k_j
      b.noalias() = qh * rh.transpose() * scale;                                  //     q_iᵀ W_R r, by R row
      const RowVec cu = (u * kh.transpose()) * scale;                             // (c) uᵀ k_j      [Lk]
      const RowVec dv = (vb * rh.transpose()) * scale;                            //     vᵀ W_R r    [Lk]
      Mat c = cu.replicate(lq, 1);
      Mat dd = relShift(dv.replicate(lq, 1));                                     // (d)
      b = relShift(b);                                                            // (b)
      for (Mat* t : {&a, &b, &c, &dd}) *t = t->cwiseProduct(mask);
      scores = a + b + c + dd;
      detail->a[static_cast<size_t>(h)] = std::move(a);
      detail->b[static_cast<size_t>(h)] = std::move(b);
      detail->c[static_cast<size_t>(h)] = std::move(c);
      detail->d[static_cast<size_t>(h)] = std::move(dd);
    }
    Mat weights;
    maskedSoftmaxRows(scores, mask, weights);
    // head_h = softmax(A / √d_head) v_h                 [Lq, d_head]
    out.middleCols(h * dh, dh).noalias() = weights * v.middleCols(h * dh, dh);
    if (detail) {
      detail->scores[static_cast<size_t>(h)] = std::move(scores);
      detail->weights[static_cast<size_t>(h)] = std::move(weights);
    }
  });
  return out;
}

// [SECTION] State reuse against recomputation

XlStack makeXlStack(int64_t layers, int64_t d, int64_t heads, int64_t segment, int64_t memory, uint64_t seed) {
  XlStack s{.heads = heads, .segment = segment, .memory = memory, .layers = {}};
  for (int64_t l = 0; l < layers; ++l)
    s.layers.push_back(makeXlLayerWeights(d, heads, seed + static_cast<uint64_t>(l), 1.0f));
  return s;
}

namespace {

// W_R r for a key length, per layer, computed once per length.
class PositionKeys {
 public:
  explicit PositionKeys(const XlStack& s) : s_(s), cache_(s.layers.size()) {}
  const Mat& get(size_t layer, int64_t lk, int64_t d) {
    auto it = cache_[layer].find(lk);
    if (it == cache_[layer].end()) it = cache_[layer].emplace(lk, relativeEncodings(lk, d) * s_.layers[layer].w_r).first;
    return it->second;
  }

 private:
  const XlStack& s_;
  std::vector<std::map<int64_t, Mat>> cache_;
};

// h^ℓ = h^{ℓ−1} + XlAttn_ℓ(h^{ℓ−1}, mem^{ℓ−1}) W^o_ℓ for one segment; `mems`
// (one per layer, may be empty) hold each layer's input states before it.
Mat stackSegment(const XlStack& s, const Mat& x, const std::vector<Mat>& mems, PositionKeys& pk,
                 std::vector<Mat>* inputs) {
  Mat h = x;
  for (size_t l = 0; l < s.layers.size(); ++l) {
    if (inputs) (*inputs)[l] = h;
    const Mat& mem = mems[l];
    const Mat attn = xlAttention(h, mem, s.layers[l], pk.get(l, mem.rows() + h.rows(), h.cols()), s.heads, nullptr);
    h.noalias() += attn * s.layers[l].w_o;
  }
  return h;
}

}  // namespace

Mat xlEvaluateWithReuse(const XlStack& s, const Mat& x, const RunContext& ctx) {
  const int64_t n = x.rows(), d = x.cols();
  PositionKeys pk(s);
  std::vector<Mat> mems(s.layers.size(), Mat(0, d)), inputs(s.layers.size());
  Mat top(n, d);
  for (int64_t s0 = 0; s0 < n; s0 += s.segment) {
    const int64_t lq = std::min(s.segment, n - s0);
    top.middleRows(s0, lq) = stackSegment(s, x.middleRows(s0, lq), mems, pk, &inputs);
    // new mem^{ℓ} = last M rows of [mem^{ℓ} | h^{ℓ}]  (authors' _update_mems)
    for (size_t l = 0; l < mems.size(); ++l) {
      const int64_t keep = std::min<int64_t>(s.memory, mems[l].rows() + lq);
      Mat cat(mems[l].rows() + lq, d);
      cat.topRows(mems[l].rows()) = mems[l];
      cat.bottomRows(lq) = inputs[l];
      mems[l] = cat.bottomRows(keep);
    }
    ctx.progress(static_cast<float>(s0 + lq) / static_cast<float>(n));
  }
  return top;
}

Mat xlEvaluateRecompute(const XlStack& s, const Mat& x, const std::vector<int64_t>& positions, const RunContext& ctx) {
  const int64_t d = x.cols(), c = s.memory + s.segment;
  PositionKeys pk(s);
  const std::vector<Mat> no_mems(s.layers.size(), Mat(0, d));
  Mat out(static_cast<int64_t>(positions.size()), d);
  for (size_t p = 0; p < positions.size(); ++p) {
    const int64_t t = positions[p], first = std::max<int64_t>(0, t - c + 1);
    out.row(static_cast<int64_t>(p)) = stackSegment(s, x.middleRows(first, t - first + 1), no_mems, pk, nullptr).bottomRows(1);
    ctx.progress(static_cast<float>(p + 1) / static_cast<float>(positions.size()));
  }
  return out;
}

// [SECTION] The variant

namespace {

Result transformerXl(const Inputs& in, const Params& p, const RunContext& ctx) {
  const Mat& x = in.query();  // [N, d]
  const int64_t n = x.rows(), d = x.cols(), H = in.heads;
  const int64_t L = p.getInt("segment"), M = p.getInt("memory"), tau = p.getInt("tau");
  headDim(d, H);  // validates --heads
  if (L > n)
    throw InputError("transformer-xl: segment L=" + std::to_string(L) + " is longer than the " + std::to_string(n) +
                     "-token input");
  if (M >= n)
    throw InputError("transformer-xl: memory M=" + std::to_string(M) + " must be shorter than the " +
                     std::to_string(n) + "-token input");
  const int64_t segments = (n + L - 1) / L;
  if (tau >= segments)
    throw InputError("transformer-xl: tau τ=" + std::to_string(tau) + " is past the end: the " + std::to_string(n) +
                     "-token input has segments τ = 0 … " + std::to_string(segments - 1) + " of length " +
                     std::to_string(L));
  // Segment τ = x[τL, τL + Lq), its memory x[τL − Lm, τL) (shorter at the start)
  const int64_t s0 = tau * L, lq = std::min(L, n - s0), lm = std::min(M, s0), lk = lm + lq;
  checkDenseBudget(H, lq, lk, 8, "transformer-xl");
  const Mat seg = x.middleRows(s0, lq), mem = x.middleRows(s0 - lm, lm);

  const XlLayerWeights w = makeXlLayerWeights(d, H, in.seed, static_cast<float>(p.getFloat("bias_scale")));
  XlDetail detail;
  detail.r = relativeEncodings(lk, d);
  const Mat rk = detail.r * w.w_r;  // W_{k,R} r for the distances Lk − 1 … 0   [Lk, d]
  ctx.progress(0.2f);
  const Mat concat = xlAttention(seg, mem, w, rk, H, &detail);
  ctx.progress(0.7f);

  Result r;
  r.q_tokens.assign(in.tokens.begin() + s0, in.tokens.begin() + s0 + lq);
  r.k_tokens.assign(in.tokens.begin() + (s0 - lm), in.tokens.begin() + s0 + lq);
  r.weights = std::move(detail.weights);
  r.scores = std::move(detail.scores);
  r.mask = causalMask(lq, lk);
  r.output.noalias() = concat * w.w_o;  // [Lq, d]
  if (lm > 0) r.key_bands.push_back({.begin = 0, .end = lm, .label = "memory"});
  r.key_bands.push_back({.begin = lm, .end = lk, .label = "segment " + std::to_string(tau)});
  r.timeline.param = "tau";  // segment recurrence: τ = 0, 1, … through the input
  r.timeline.count = segments;
  r.scores_label = "(a)+(b)+(c)+(d) / √d_head";

  const std::pair<std::vector<Mat>*, const char*> terms[] = {
      {&detail.a, "(a) content q_iᵀ k_j"},
      {&detail.b, "(b) content-dependent position q_iᵀ W_R r_{i−j}"},
      {&detail.c, "(c) global content bias uᵀ k_j"},
      {&detail.d, "(d) global position bias vᵀ W_R r_{i−j}"}};
  const char* names[] = {"a", "b", "c", "d"};
  for (int t = 0; t < 4; ++t)
    r.extras.push_back({.name = names[t], .label = terms[t].second, .kind = ExtraKind::Weights,
                        .value = Array::fromMats(*terms[t].first), .signed_values = true});

  // Vanilla absolute-PE attention on the same segment alone (Al-Rfou et al.
  // 2018, the fixed-length baseline): positions restart at 0 in every
  // segment and no memory is kept, so early queries see almost no context.
  // Padded with zeros on the memory columns to line up with the XL bands.
  Result vanilla;
  vanilla.variant = "transformer-xl";
  const Mat seg_pe = seg + sinusoidalEncoding(lq, d);
  multiHeadAttention(seg_pe, seg_pe, seg_pe, MultiHeadWeights{w.w_q, w.w_k, w.w_v, w.w_o}, H, true, true, ctx, vanilla);
  std::vector<Mat> padded;
  for (const Mat& vw : vanilla.weights) {
    padded.push_back(Mat::Zero(lq, lk));
    padded.back().rightCols(lq) = vw;
  }
  r.extras.push_back({.name = "vanilla",
                      .label = "vanilla: absolute PE on the segment alone (memory columns empty)",
                      .kind = ExtraKind::Weights, .value = Array::fromMats(padded)});
  r.extras.push_back({.name = "r", .label = "relative encodings r (row k: distance Lk−1−k)",
                      .kind = ExtraKind::Matrix, .value = Array::fromMat(detail.r), .row_axis = "key column",
                      .col_axis = "dimension", .signed_values = true});
  r.extras.push_back({.name = "segments", .label = "segments in the input", .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({static_cast<float>(segments)})});

  r.inputs["x"] = x;
  r.inputs["w_q"] = w.w_q;
  r.inputs["w_k"] = w.w_k;
  r.inputs["w_v"] = w.w_v;
  r.inputs["w_o"] = w.w_o;
  r.inputs["w_r"] = w.w_r;
  r.inputs["u"] = w.u;
  r.inputs["v"] = w.v;
  const double dd = static_cast<double>(d);
  r.flops = 2.0 * (lq + 2.0 * lk + lk + lq) * dd * dd  // q, k, v, W_R r, W^o
            + 2.0 * 2.0 * lq * lk * dd                 // (q+u) kᵀ, (q+v) (W_R r)ᵀ
            + 2.0 * lq * lk * dd                       // weights · v
            + vanilla.flops;
  return r;
}

}  // namespace

VariantInfo makeTransformerXlVariant() {
  VariantInfo v;
  v.name = "transformer-xl";
  v.family = "transformer-xl";
  v.title = "Transformer-XL (memory + relative positions)";
  v.summary = "A_ij = q_iᵀk_j (a) + q_iᵀW_R r_{i−j} (b) + uᵀk_j (c) + vᵀW_R r_{i−j} (d), keys [memory M | segment τ]";
  v.citation = "Dai et al. 2019";
  v.input = InputKind::SelfAttention;
  v.params = {
      {.key = "segment", .symbol = "L", .type = ParamType::Int, .help = "Segment length L", .min = 1,
       .max = 65536, .log_scale = true, .def = int64_t{4}},
      {.key = "memory", .symbol = "M", .type = ParamType::Int,
       .help = "Memory: the previous M hidden states (this layer's inputs) each query also attends to", .min = 0,
       .max = 65536, .log_scale = true, .def = int64_t{4}},
      {.key = "tau", .symbol = "τ", .type = ParamType::Int,
       .help = "Which segment to show: x[τL, τL + L); step τ, τ+1, … through the input", .min = 0, .max = 1000000,
       .def = int64_t{1}},
      {.key = "bias_scale", .symbol = "σ_uv", .type = ParamType::Float,
       .help = "Scale of the seeded global biases u, v (0: u = v = 0)", .min = 0, .max = 8, .def = 1.0},
  };
  v.views = {"heatmap", "heads", "lines", "extras"};
  v.run = transformerXl;
  return v;
}

}  // namespace attn
