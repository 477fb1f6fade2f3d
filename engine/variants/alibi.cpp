// ALiBi, attention with linear biases (Press et al. 2022, §3): no position
// embeddings at all; each head h adds to its scores a penalty proportional to
// the distance between query and key:
//   w_ij = softmax_j(q_i·k_j / √d_head − m_h (i − j)),   j ≤ i
// The slopes are the paper's fixed geometric sequence: for H a power of two,
// m_h = 2^(−8h/H), h = 1 … H (H = 8: 1/2, 1/4, …, 1/256). For other H, the
// slopes of the largest power of two n < H, then every other slope of 2n
// (2^(−4/n), 2^(−12/n), 2^(−20/n), …) until there are H (the rule of the
// authors' code, get_slopes). Without `causal`, the bias is −m_h |i − j| for
// every key (the symmetric form encoders use; the paper's models are causal).
#include "engine/variants/alibi.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/multi_head.h"
#include "engine/parallel.h"
#include "engine/registry.h"

#include <cmath>

namespace attn {

std::vector<double> alibiSlopes(int64_t heads) {
  // The largest power of two n ≤ H, whose slopes 2^(−8h/n) come first.
  int64_t n = 1;
  while (2 * n <= heads) n *= 2;
  std::vector<double> m;
  for (int64_t h = 1; h <= n; ++h) m.push_back(std::exp2(-8.0 * static_cast<double>(h) / static_cast<double>(n)));
  // Then the odd-numbered slopes of 2n: 2^(−8(2k+1)/(2n)), k = 0, 1, …
  for (int64_t k = 0; static_cast<int64_t>(m.size()) < heads; ++k)
    m.push_back(std::exp2(-4.0 * static_cast<double>(2 * k + 1) / static_cast<double>(n)));
  return m;
}

namespace {

Result alibi(const Inputs& in, const Params& p, const RunContext& ctx) {
  const int64_t L = in.query().rows(), d = in.query().cols(), H = in.heads;
  const int64_t dh = headDim(d, H);
  const bool causal = p.getBool("causal");
  checkDenseBudget(H, L, L, 3, "alibi");  // scores, weights, bias

  // Q, K, V [L, d]: projected from x by seeded weights, or as given. No position signal anywhere.
  const SelfProjections proj = selfProjections(in, "alibi");
  const std::vector<double> slopes = alibiSlopes(H);
  const Mat mask = causal ? causalMask(L, L) : Mat();
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));

  Result r;
  r.q_tokens = in.tokens;
  r.k_tokens = in.tokens;
  r.scores.resize(static_cast<size_t>(H));
  r.weights.resize(static_cast<size_t>(H));
  std::vector<Mat> bias(static_cast<size_t>(H));
  r.output = Mat::Zero(L, d);  // Concat(head_1 … head_H), no W^o
  parallelFor(H, ctx, [&](int64_t h) {
    const auto hs = static_cast<size_t>(h);
    // b_ij = −m_h (i − j)  (|i − j| when not causal; masked entries are never used)     [L, L]
    Mat& b = bias[hs];
    b.resize(L, L);
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < L; ++j)
        b(i, j) = static_cast<float>(-slopes[hs] * static_cast<double>(causal ? i - j : std::abs(i - j)));
    // s = Q_h K_hᵀ / √d_head + b,  w = softmax_j(s where j ≤ i)                          [L, L]
    r.scores[hs].noalias() = (proj.q.middleCols(h * dh, dh) * scale) * proj.k.middleCols(h * dh, dh).transpose();
    r.scores[hs] += b;
    maskedSoftmaxRows(r.scores[hs], mask, r.weights[hs]);
    // head_h = w V_h                                                                    [L, d_head]
    r.output.middleCols(h * dh, dh).noalias() = r.weights[hs] * proj.v.middleCols(h * dh, dh);
  });
  r.mask = mask;
  r.weights_label = "w_ij = softmax_j(q_i·k_j/√d_head − m_h (i − j))";
  r.scores_label = "score q_i·k_j/√d_head − m_h (i − j)";

  // The bias against distance per head: the lines the paper draws.          [H, L]
  Mat lines(H, L);
  std::vector<float> m(slopes.begin(), slopes.end());
  for (int64_t h = 0; h < H; ++h)
    for (int64_t x = 0; x < L; ++x) lines(h, x) = static_cast<float>(-slopes[static_cast<size_t>(h)] * static_cast<double>(x));
  r.extras.push_back({.name = "slopes", .label = "slope m_h per head", .kind = ExtraKind::HeadValues,
                      .value = Array::fromVector(m)});
  r.extras.push_back({.name = "bias_by_distance", .label = "bias −m_h · (i − j) against the distance",
                      .kind = ExtraKind::Curves, .value = Array::fromMat(lines), .row_axis = "head",
                      .col_axis = "distance i − j"});
  r.extras.push_back({.name = "bias", .label = causal ? "bias −m_h (i − j)" : "bias −m_h |i − j|",
                      .kind = ExtraKind::Weights, .value = Array::fromMats(bias), .signed_values = true});
  recordSelfProjections(in, proj, r);
  r.flops = (in.projected ? 0.0 : 3.0 * 2.0 * L * d * d)                  // projections
            + static_cast<double>(H) * L * L * (4.0 * static_cast<double>(dh) + 6.0);  // q·k, bias, softmax, w·v
  return r;
}

}  // namespace

VariantInfo makeAlibiVariant() {
  VariantInfo v;
  v.name = "alibi";
  v.family = "positions";
  v.title = "ALiBi (linear biases, no position embeddings)";
  v.summary = "w_ij = softmax_j(q_i·k_j/√d_head − m_h (i − j)),  m_h = 2^(−8h/H)";
  v.citation = "Press et al. 2022, §3";
  v.input = InputKind::SelfAttention;
  v.given_qkv = GivenQkv::Heads;
  ParamSpec causal = causalParam();
  causal.def = true;  // the paper's models are decoders
  causal.help = "Query i sees keys j ≤ i only, with bias −m_h (i − j); off: every key, with bias −m_h |i − j|";
  v.params = {causal};
  v.views = {"heatmap", "heads", "extras", "family"};
  v.run = alibi;
  return v;
}

}  // namespace attn
