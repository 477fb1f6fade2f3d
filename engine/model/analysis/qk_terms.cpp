#include "engine/model/analysis/qk_terms.h"

#include "engine/attention_math.h"

#include <cmath>
#include <string>

namespace attn {

namespace {

void checkIndex(const char* what, int64_t v, int64_t n) {
  if (v < 0 || v >= n)
    throw InputError(std::string(what) + ": expected 0.." + std::to_string(n - 1) + ", got " + std::to_string(v));
}

}  // namespace

QkTerms qkTerms(const ModelRun& run, int64_t layer, int64_t head, int64_t query, int64_t key) {
  const int64_t L = static_cast<int64_t>(run.tokens.size()), d = run.d_head;
  checkIndex("layer", layer, run.layers);
  checkIndex("head", head, run.heads);
  checkIndex("query", query, L);
  checkIndex("key", key, L);
  QkTerms t;
  t.layer = layer;
  t.head = head;
  t.query = query;
  t.key = key;
  t.q.shape = t.k.shape = t.product.shape = {d};
  t.q.data.resize(static_cast<size_t>(d));
  t.k.data.resize(static_cast<size_t>(d));
  t.product.data.resize(static_cast<size_t>(d));
  const Mat& Q = run.q[static_cast<size_t>(layer)];
  const Mat& K = run.k[static_cast<size_t>(layer)];
  double dot = 0;
  for (int64_t c = 0; c < d; ++c) {
    // q_t, k_t and q_t·k_t   [d]
    const float q = Q(query, head * d + c), k = K(key, head * d + c);
    t.q.data[static_cast<size_t>(c)] = q;
    t.k.data[static_cast<size_t>(c)] = k;
    t.product.data[static_cast<size_t>(c)] = q * k;
    dot += static_cast<double>(q) * k;
  }
  if (!run.q_prenorm.empty()) {
    const Mat& Qp = run.q_prenorm[static_cast<size_t>(layer)];
    const Mat& Kp = run.k_prenorm[static_cast<size_t>(layer)];
    t.q_prenorm.shape = t.k_prenorm.shape = {d};
    for (int64_t c = 0; c < d; ++c) {
      t.q_prenorm.data.push_back(Qp(query, head * d + c));
      t.k_prenorm.data.push_back(Kp(key, head * d + c));
    }
  }
  if (run.rope) {
    // band_i = q_i k_i + q_{i+r/2} k_{i+r/2}                      [r/2]
    t.rotary_dims = run.rotary_dims > 0 ? run.rotary_dims : d;
    const int64_t half = t.rotary_dims / 2;
    t.band.shape = {half};
    t.band.data.resize(static_cast<size_t>(half));
    for (int64_t i = 0; i < half; ++i)
      t.band.data[static_cast<size_t>(i)] = t.product.data[static_cast<size_t>(i)] + t.product.data[static_cast<size_t>(i + half)];
    for (int64_t c = t.rotary_dims; c < d; ++c) t.unrotated += t.product.data[static_cast<size_t>(c)];
  }
  t.dot = dot;
  t.scale = run.score_scale > 0 ? run.score_scale : 1.0 / std::sqrt(static_cast<double>(d));
  t.score = dot * t.scale;
  t.capped = run.softcap > 0 ? run.softcap * std::tanh(t.score / run.softcap) : t.score;
  t.bent = std::abs(t.capped - t.score) > 0.05 * std::abs(t.score);
  if (!run.alibi_slopes.empty()) t.bias = run.alibi_slopes[static_cast<size_t>(head)] * static_cast<double>(key);
  t.logit = t.capped + t.bias;
  t.weight = run.attention[static_cast<size_t>(layer)][static_cast<size_t>(head)](query, key);
  return t;
}

const std::vector<double>& layerRopeTheta(const ModelRun& run, int64_t layer) {
  return run.layer_rope_theta.empty() ? run.rope_theta : run.layer_rope_theta.at(static_cast<size_t>(layer));
}

namespace {

// f(i, j, s) over the head's allowed entries, s = q_i·k_j · scale.
template <class F>
Mat overAllowed(const ModelRun& run, int64_t layer, int64_t head, F f) {
  checkIndex("layer", layer, run.layers);
  checkIndex("head", head, run.heads);
  const Mat& A = run.attention[static_cast<size_t>(layer)][static_cast<size_t>(head)];
  const int64_t d = run.d_head;
  const double scale = run.score_scale > 0 ? run.score_scale : 1.0 / std::sqrt(static_cast<double>(d));
  const auto q = run.q[static_cast<size_t>(layer)].middleCols(head * d, d);
  const auto k = run.k[static_cast<size_t>(layer)].middleCols(head * d, d);
  Mat out = Mat::Zero(A.rows(), A.cols());
  for (int64_t i = 0; i < A.rows(); ++i) {
    const int64_t p = run.first_position + i;  // the query's position
    for (int64_t j = 0; j < A.cols() && j < k.rows(); ++j) {
      if (run.causal && j > p) continue;
      const int64_t w = run.layer_window.empty() ? run.sliding_window : run.layer_window[static_cast<size_t>(layer)];
      if (w > 0 && (run.causal ? p - j >= w : std::abs(p - j) > w / 2)) continue;
      out(i, j) = static_cast<float>(f(i, j, static_cast<double>(q.row(i).dot(k.row(j))) * scale));
    }
  }
  return out;
}

}  // namespace

Mat softcapBend(const ModelRun& run, int64_t layer, int64_t head) {
  const double c = run.softcap;
  return overAllowed(run, layer, head, [c](int64_t, int64_t, double s) { return c > 0 ? s - c * std::tanh(s / c) : 0.0; });
}

Mat alibiBias(const ModelRun& run, int64_t layer, int64_t head) {
  const double slope = run.alibi_slopes.empty() ? 0.0 : run.alibi_slopes.at(static_cast<size_t>(head));
  return overAllowed(run, layer, head, [slope](int64_t, int64_t j, double) { return slope * static_cast<double>(j); });
}

Mat ropeAngles(const std::vector<double>& theta, int64_t positions) {
  // angle(m, i) = m·θ_i mod 2π, m·θ_i as the model turns q and k by it  [positions, d/2]
  const double two_pi = 2.0 * std::acos(-1.0);
  Mat a(positions, static_cast<int64_t>(theta.size()));
  for (int64_t m = 0; m < positions; ++m)
    for (size_t i = 0; i < theta.size(); ++i)
      a(m, static_cast<int64_t>(i)) = static_cast<float>(std::fmod(ropeAngle(m, theta[i], RopeAngle::Float32), two_pi));
  return a;
}

}  // namespace attn
