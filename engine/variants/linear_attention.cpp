// Linear attention (Katharopoulos et al. 2020, "Transformers are RNNs",
// §3.2): softmax's similarity exp(q·k/√d) becomes a kernel φ(q)·φ(k) with the
// feature map φ(x) = elu(x) + 1, positive, so every weight is; the sums over
// the keys then factor out of each query's row:
//   V'_i = φ(q_i)ᵀ Σ_j φ(k_j) v_jᵀ / φ(q_i)ᵀ Σ_j φ(k_j)
// in O(L d_head²) per head, no L × L matrix. Causal (§3.3): the sums run over
// j ≤ i, kept as S_i = S_{i−1} + φ(k_i) v_iᵀ and z_i = z_{i−1} + φ(k_i), the
// recurrence that makes it an RNN. As in the authors' code, ε = 1e-6 joins
// each denominator: φ is positive, but eˣ underflows to 0 in float below
// x ≈ −104, and a query whose every φ(q_i)·φ(k_j) did would divide 0 by 0.
// The weights the views draw are the ones that output implies, formed only
// for them:
//   w_ij = φ(q_i)·φ(k_j) / (Σ_j′ φ(q_i)·φ(k_j′) + ε)
#include "engine/attention_math.h"
#include "engine/multi_head.h"
#include "engine/parallel.h"
#include "engine/registry.h"

#include <cmath>

namespace attn {

namespace {

constexpr float kEps = 1e-6f;  // ε, the authors' code's default

// φ(x) = elu(x) + 1: x + 1 above 0, eˣ at or below.
Mat featureMap(const MatRef& x) {
  return x.unaryExpr([](float v) { return v > 0.0f ? v + 1.0f : std::exp(v); });
}

Result linearAttention(const Inputs& in, const Params& p, const RunContext& ctx) {
  const int64_t L = in.query().rows(), d = in.query().cols(), H = in.heads;
  const int64_t dh = headDim(d, H);
  const bool causal = p.getBool("causal");
  const bool keep = ctx.keep_weights;  // false: the output only, as the method is meant to run
  if (keep) checkDenseBudget(H, L, L, 2, "linear-attention");  // the views' scores and weights

  // Q, K, V [L, d]: projected from x by seeded weights, or as given.
  const SelfProjections proj = selfProjections(in, "linear-attention");
  Result r;
  r.q_tokens = in.tokens;
  r.k_tokens = in.tokens;
  r.scores.resize(keep ? static_cast<size_t>(H) : 0);
  r.weights.resize(keep ? static_cast<size_t>(H) : 0);
  r.streamed_shape = keep ? std::array<int64_t, 3>{} : std::array<int64_t, 3>{H, L, L};
  r.output.resize(L, d);  // Concat(head_1 … head_H), no W^o
  parallelFor(H, ctx, [&](int64_t h) {
    // φ(Q_h), φ(K_h)                                                        [L, d_head]
    const Mat fq = featureMap(proj.q.middleCols(h * dh, dh)), fk = featureMap(proj.k.middleCols(h * dh, dh));
    const auto v = proj.v.middleCols(h * dh, dh);
    auto out = r.output.middleCols(h * dh, dh);
    if (causal) {
      Mat s = Mat::Zero(dh, dh);    // S_i = Σ_{j≤i} φ(k_j) v_jᵀ                [d_head, d_head]
      RowVec z = RowVec::Zero(dh);  // z_i = Σ_{j≤i} φ(k_j)                     [d_head]
      for (int64_t i = 0; i < L; ++i) {
        s.noalias() += fk.row(i).transpose() * v.row(i);
        z += fk.row(i);
        // V'_i = φ(q_i)ᵀ S_i / (φ(q_i)ᵀ z_i + ε), divided before the product:
        // at |x| near kMaxInputMagnitude, φ(q_i)ᵀ S_i alone would overflow    [d_head]
        out.row(i).noalias() = (fq.row(i) / (fq.row(i).dot(z) + kEps)) * s;
      }
    } else {
      const Mat s = fk.transpose() * v;              // S = Σ_j φ(k_j) v_jᵀ       [d_head, d_head]
      const Vec z = fk.colwise().sum().transpose();  // z = Σ_j φ(k_j)            [d_head]
      // V'_i = φ(q_i)ᵀ S / (φ(q_i)ᵀ z + ε), divided first as above          [L, d_head]
      Mat scaled = fq;
      scaled.array().colwise() /= (fq * z).array() + kEps;
      out.noalias() = scaled * s;
    }
    if (!keep) return;
    const auto hs = static_cast<size_t>(h);
    // s_ij = φ(q_i)·φ(k_j);  w_ij = s_ij / (Σ_j′ s_ij′ + ε) over the keys i sees [L, L]
    r.scores[hs].noalias() = fq * fk.transpose();
    Mat& w = r.weights[hs];
    w = r.scores[hs];
    if (causal) w.triangularView<Eigen::StrictlyUpper>().setZero();
    const Vec row_sums = w.rowwise().sum();
    w.array().colwise() /= row_sums.array() + kEps;
  });
  if (keep && causal) r.mask = causalMask(L, L);
  r.weights_label = "w_ij = φ(q_i)·φ(k_j) / (Σ_j′ φ(q_i)·φ(k_j′) + ε),  φ = elu + 1";
  r.scores_label = "kernel φ(q_i)·φ(k_j)";
  recordSelfProjections(in, proj, r);
  // The output the linear way, per head: S and the numerators 2·L·d_head² each, z and
  // the denominators 2·L·d_head (the views' weights, formed only for them, not counted).
  r.flops = (in.projected ? 0.0 : 3.0 * 2.0 * L * d * d) +
            static_cast<double>(H) * L * (4.0 * static_cast<double>(dh) * dh + 4.0 * static_cast<double>(dh));
  return r;
}

}  // namespace

VariantInfo makeLinearAttentionVariant() {
  VariantInfo v;
  v.name = "linear-attention";
  v.family = "linear";
  v.title = "Linear attention (kernel feature map φ = elu + 1)";
  v.summary = "V'_i = φ(q_i)ᵀ Σ_j φ(k_j) v_jᵀ / φ(q_i)ᵀ Σ_j φ(k_j),  φ(x) = elu(x) + 1";
  v.citation = "Katharopoulos et al. 2020, §3.2–3.3";
  v.input = InputKind::SelfAttention;
  v.given_qkv = GivenQkv::Heads;
  v.params = {causalParam()};
  v.views = {"heatmap", "heads", "lines"};
  v.run = linearAttention;
  return v;
}

}  // namespace attn
