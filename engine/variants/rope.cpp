// RoPE, rotary position embedding (Su et al. 2021, RoFormer §3.4): the
// position enters by rotating each head's q and k, pair by pair, by an angle
// proportional to the position, so q·k depends on the positions only through
// their difference. In the layout of LLaMA and Hugging Face `transformers`
// (`rotate_half`), dimension i pairs with i + d_head/2:
//   θ_i = base^(−2i/d_head),  i = 0 … d_head/2 − 1
//   q'_i       = q_i cos(mθ_i) − q_{i+d/2} sin(mθ_i)
//   q'_{i+d/2} = q_{i+d/2} cos(mθ_i) + q_i sin(mθ_i)      (k alike, at its position n)
//   w_mn = softmax_n(q'_m·k'_n / √d_head)
// The extras show the angles mθ_i, and the score one query gives one key of
// the same content as the distance grows, for RoPE and for sinusoidal
// positions added to the input (Vaswani et al. 2017), on the same weights:
// RoPE's depends on the distance alone, the sinusoidal one on the query's own
// position too; and RoFormer's upper bound, which decays (§3.4.3).
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/multi_head.h"
#include "engine/parallel.h"
#include "engine/registry.h"

#include <cmath>
#include <complex>
#include <numbers>

namespace attn {

namespace {

// Distances of the score-against-distance curves: 0 … kCurveDistances − 1.
constexpr int64_t kCurveDistances = 256;

Result rope(const Inputs& in, const Params& p, const RunContext& ctx) {
  const int64_t L = in.query().rows(), d = in.query().cols(), H = in.heads;
  const int64_t dh = headDim(d, H);
  if (dh % 2 != 0)
    throw InputError("rope: d_head = d / h = " + std::to_string(dh) + " must be even (RoPE rotates pairs of dimensions)");
  const double base = p.getFloat("base");
  const bool causal = p.getBool("causal");
  checkDenseBudget(H, L, L, 2, "rope");

  // Q, K, V [L, d], then each head's q and k rotated by its position.
  const SelfProjections proj = selfProjections(in, "rope");
  const std::vector<double> theta = ropeFrequencies(dh, base);
  Mat q_rot = proj.q, k_rot = proj.k;
  for (int64_t h = 0; h < H; ++h) {
    rotateHalf(q_rot.middleCols(h * dh, dh), theta, 0);
    rotateHalf(k_rot.middleCols(h * dh, dh), theta, 0);
  }
  ctx.check();

  Result r;
  r.q_tokens = in.tokens;
  r.k_tokens = in.tokens;
  r.scores.resize(static_cast<size_t>(H));
  r.weights.resize(static_cast<size_t>(H));
  r.output = Mat::Zero(L, d);  // Concat(head_1 … head_H), no W^o
  const Mat mask = causal ? causalMask(L, L) : Mat();
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  parallelFor(H, ctx, [&](int64_t h) {
    const auto hs = static_cast<size_t>(h);
    // s = Q'_h K'_hᵀ / √d_head,  w = softmax_n(s)                                  [L, L]
    r.scores[hs].noalias() = (q_rot.middleCols(h * dh, dh) * scale) * k_rot.middleCols(h * dh, dh).transpose();
    maskedSoftmaxRows(r.scores[hs], mask, r.weights[hs]);
    r.output.middleCols(h * dh, dh).noalias() = r.weights[hs] * proj.v.middleCols(h * dh, dh);
  });
  r.mask = mask;
  r.weights_label = "w_mn = softmax_n(q'_m·k'_n/√d_head)";
  r.scores_label = "score q'_m·k'_n/√d_head";

  // [angles] m θ_i mod 2π per position m and pair i.                              [L, d_head/2]
  Mat angle(L, dh / 2);
  for (int64_t m = 0; m < L; ++m)
    for (int64_t i = 0; i < dh / 2; ++i)
      angle(m, i) = static_cast<float>(std::fmod(static_cast<double>(m) * theta[static_cast<size_t>(i)], 2 * std::numbers::pi));
  r.extras.push_back({.name = "angle", .label = "rotation angle m·θ_i mod 2π, θ_i = base^(−2i/d_head)",
                      .kind = ExtraKind::Matrix, .value = Array::fromMat(angle), .row_axis = "position m",
                      .col_axis = "pair i (dimensions i, i + d_head/2)"});

  // [distance] One content u (the last token's x, or its given q and k) as a
  // query at position D = kCurveDistances − 1 and as a key at D − Δ, head 0:
  //   RoPE:        R(D) u W^q · R(D − Δ) u W^k / √d_head = f(Δ) alone
  //   sinusoidal:  (u + PE_D) W^q · (u + PE_{D−Δ}) W^k / √d_head  (given q, k: u's q + PE, k + PE)
  const int64_t D = kCurveDistances - 1;
  const Mat pe = sinusoidalEncoding(D + 1, in.projected ? dh : d, base);
  const Mat u = in.query().row(L - 1);
  const Mat u_k = in.projected ? Mat(proj.k.row(L - 1)) : u;
  auto head0 = [&](const Mat& row, const Mat& w) -> Mat {  // row [1, d] → head 0's [1, d_head]
    return in.projected ? Mat(row.leftCols(dh)) : Mat(row * w.leftCols(dh));
  };
  Mat curves(2, kCurveDistances);
  Mat bound(1, kCurveDistances);
  Mat qd = head0(u, proj.w.w_q);
  rotateHalf(qd, theta, D);
  const Mat q_abs = in.projected ? Mat(u.leftCols(dh) + pe.row(D)) : head0(u + pe.row(D), proj.w.w_q);
  const Mat k_head0 = head0(u_k, proj.w.w_k);  // the key's content, rotated anew at each distance
  for (int64_t delta = 0; delta <= D; ++delta) {
    Mat kd = k_head0;
    rotateHalf(kd, theta, D - delta);
    curves(0, delta) = scale * qd.row(0).dot(kd.row(0));
    const Mat k_abs = in.projected ? Mat(u_k.leftCols(dh) + pe.row(D - delta)) : head0(u_k + pe.row(D - delta), proj.w.w_k);
    curves(1, delta) = scale * q_abs.row(0).dot(k_abs.row(0));
    // RoFormer's bound: (1/(d/2)) Σ_j |S_j|, S_j = Σ_{i<j} e^{iΔθ_i}
    std::complex<double> s_j = 0;
    double sum = 0;
    for (const double t : theta) {
      s_j += std::polar(1.0, static_cast<double>(delta) * t);
      sum += std::abs(s_j);
    }
    bound(0, delta) = static_cast<float>(sum / static_cast<double>(theta.size()));
  }
  r.extras.push_back({.name = "score_by_distance",
                      .label = "head 0: score of the last token's content against itself Δ positions back",
                      .kind = ExtraKind::Curves, .value = Array::fromMat(curves), .row_axis = "series",
                      .col_axis = "distance Δ", .categories = {"RoPE", "sinusoidal added to x"}});
  r.extras.push_back({.name = "rope_bound", .label = "RoFormer's bound on the relative score: (2/d_head) Σ_j |Σ_{i<j} e^{iΔθ_i}|",
                      .kind = ExtraKind::Curves, .value = Array::fromMat(bound), .row_axis = "series",
                      .col_axis = "distance Δ", .categories = {"bound"}});
  recordSelfProjections(in, proj, r);
  r.inputs["q_rot"] = q_rot;
  r.inputs["k_rot"] = k_rot;
  r.flops = (in.projected ? 0.0 : 3.0 * 2.0 * L * d * d) + 6.0 * L * d  // projections, rotations
            + static_cast<double>(H) * L * L * (4.0 * static_cast<double>(dh) + 5.0);
  return r;
}

}  // namespace

VariantInfo makeRopeVariant() {
  VariantInfo v;
  v.name = "rope";
  v.family = "positions";
  v.title = "RoPE (rotary position embedding)";
  v.summary = "q'_m = R(mθ) q_m,  k'_n = R(nθ) k_n,  θ_i = base^(−2i/d_head);  q'_m·k'_n depends on m − n only";
  v.citation = "Su et al. 2021, §3.4";
  v.input = InputKind::SelfAttention;
  v.given_qkv = GivenQkv::Heads;
  ParamSpec causal = causalParam();
  causal.def = true;  // as in the LLaMA family
  v.params = {
      {.key = "base", .symbol = "base", .type = ParamType::Float,
       .help = "Frequency base (rope_theta): θ_i = base^(−2i/d_head); LLaMA 10000, Llama 3 500000",
       .min = 2, .max = 1e7, .log_scale = true, .def = 10000.0},
      causal,
  };
  v.views = {"heatmap", "heads", "extras", "family"};
  v.run = rope;
  return v;
}

}  // namespace attn
