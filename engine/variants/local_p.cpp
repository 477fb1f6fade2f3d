// Luong local-p attention (Luong et al. 2015, §3.2, eqs. 9-10): predict an
// aligned source position p_t for each target state h_t, attend inside the
// window [p_t − D, p_t + D] and favour keys near p_t with a Gaussian:
//   p_t    = S · σ(v_pᵀ tanh(W_p h_t))                     [Lq]      S = Lk
//   align  = softmax over the window of score(h_t, h̄_s)    [Lq, Lk]  0 outside
//   a_t(s) = align(h_t, h̄_s) · exp(−(s − p_t)² / (2σ²)),   σ = D/2
//   c_t    = Σ_s a_t(s) h̄_s                                [Lq, d_v]
// As in the paper, a_t is not renormalised after the Gaussian, so its rows
// sum to less than 1. With D ≥ Lk the window covers every key and, as D
// grows, the Gaussian tends to 1: local-p becomes global attention.
#include "engine/attention_math.h"
#include "engine/variants/score_functions.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

Result localP(const Inputs& in, const Params& p, const RunContext& ctx) {
  const Mat& s = in.query();
  const Mat& h = in.key();
  const Mat& val = in.value();
  const int64_t lq = s.rows(), lk = h.rows(), d = s.cols();
  const int64_t D = p.getInt("D");
  // scores, mask, align, a_t and the global weights
  checkDenseBudget(1, lq, lk, 5, "local-p");
  Result r;
  recordCrossInputs(in, r);
  r.scores.assign(1, alignmentScores(s, h, scoreOptions(p), in.seed, r));
  ctx.check();

  // p_t = S · σ(v_pᵀ tanh(W_p h_t))                         [Lq]
  const Mat w_p = randomNormal(d, d, in.seed, "w_p", 1.0f / std::sqrt(static_cast<float>(d)));
  const Mat v_p = randomNormal(d, 1, in.seed, "v_p", 2.0f / std::sqrt(static_cast<float>(d)));
  const Mat hidden = (s * w_p.transpose()).array().tanh().matrix();  // tanh(W_p h_t)   [Lq, d]
  const Vec z = hidden * v_p;
  const Vec p_t = static_cast<float>(lk) * (1.0f + (-z.array()).exp()).inverse();

  // Window [p_t − D, p_t + D] as a mask, and its first/last key clamped to [0, Lk − 1].
  // D ≥ 1 keeps every window non-empty: it spans 2D ≥ 2 and p_t ∈ [0, S].
  Mat mask(lq, lk), window(lq, 2);
  for (int64_t t = 0; t < lq; ++t) {
    const double c = p_t(t);
    for (int64_t j = 0; j < lk; ++j) mask(t, j) = std::abs(static_cast<double>(j) - c) <= D ? 1.0f : 0.0f;
    window(t, 0) = static_cast<float>(std::clamp<double>(std::ceil(c - D), 0.0, static_cast<double>(lk - 1)));
    window(t, 1) = static_cast<float>(std::clamp<double>(std::floor(c + D), 0.0, static_cast<double>(lk - 1)));
  }

  // align = softmax of the scores inside the window          [Lq, Lk]
  Mat align;
  maskedSoftmaxRows(r.scores[0], mask, align);
  // a_t(s) = align · exp(−(s − p_t)² / (2σ²)),  σ = D/2       [Lq, Lk]
  const double sigma = 0.5 * static_cast<double>(D);
  Mat a(lq, lk);
  for (int64_t t = 0; t < lq; ++t)
    for (int64_t j = 0; j < lk; ++j) {
      const double off = static_cast<double>(j) - p_t(t);
      a(t, j) = align(t, j) * static_cast<float>(std::exp(-off * off / (2.0 * sigma * sigma)));
    }
  // c_t = Σ_s a_t(s) h̄_s                                     [Lq, d_v]
  r.output.noalias() = a * val;
  r.weights.assign(1, std::move(a));
  r.mask = std::move(mask);
  r.weights_label = "a_t(s) = align · Gaussian";

  // Global soft weights on the same scores, to show next to the local ones.
  Mat global;
  maskedSoftmaxRows(r.scores[0], Mat(), global);
  r.extras.push_back({.name = "p_t", .label = "predicted position p_t", .kind = ExtraKind::QueryPosition,
                      .value = Array::fromVec(p_t)});
  r.extras.push_back({.name = "window", .label = "window [p_t − D, p_t + D]", .kind = ExtraKind::QueryWindow,
                      .value = Array::fromMat(window)});
  r.extras.push_back({.name = "global", .label = "global attention on the same scores", .kind = ExtraKind::Weights,
                      .value = Array::fromMats({global})});
  r.inputs["w_p"] = w_p;
  r.inputs["v_p"] = v_p;
  r.flops += 2.0 * lq * d * d + 3.0 * lq * d  // W_p h_t, tanh, v_pᵀ·
             + 2.0 * 3.0 * lq * lk            // two softmaxes
             + 5.0 * lq * lk                  // Gaussian factor
             + 2.0 * lq * lk * val.cols();    // a_t V
  return r;
}

}  // namespace

VariantInfo makeLocalPVariant() {
  return alignmentVariant(
      "local-p", "Local-p attention (predictive alignment)",
      "p_t = S·σ(v_pᵀ tanh(W_p h_t)),  a_t(s) = align(h_t, h̄_s) · exp(−(s−p_t)²/2σ²) on [p_t−D, p_t+D], σ = D/2",
      "Luong et al. 2015, §3.2",
      {{.key = "D", .symbol = "D", .type = ParamType::Int,
        .help = "Half-width of the window [p_t − D, p_t + D]; the Gaussian has σ = D/2", .min = 1, .max = 1000000,
        .log_scale = true, .def = int64_t{2}}},
      true, localP);
}

}  // namespace attn
