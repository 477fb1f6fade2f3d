#include "engine/model/qk_terms.h"

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
  if (run.rope) {
    // band_i = q_i k_i + q_{i+d/2} k_{i+d/2}                      [d/2]
    const int64_t half = d / 2;
    t.band.shape = {half};
    t.band.data.resize(static_cast<size_t>(half));
    for (int64_t i = 0; i < half; ++i)
      t.band.data[static_cast<size_t>(i)] = t.product.data[static_cast<size_t>(i)] + t.product.data[static_cast<size_t>(i + half)];
  }
  t.dot = dot;
  t.score = dot / std::sqrt(static_cast<double>(d));  // q·k / √d_head
  t.weight = run.attention[static_cast<size_t>(layer)][static_cast<size_t>(head)](query, key);
  return t;
}

Mat ropeAngles(const std::vector<double>& theta, int64_t positions) {
  // angle(m, i) = m·θ_i mod 2π                                    [positions, d/2]
  const double two_pi = 2.0 * std::acos(-1.0);
  Mat a(positions, static_cast<int64_t>(theta.size()));
  for (int64_t m = 0; m < positions; ++m)
    for (size_t i = 0; i < theta.size(); ++i)
      a(m, static_cast<int64_t>(i)) = static_cast<float>(std::fmod(static_cast<double>(m) * theta[i], two_pi));
  return a;
}

}  // namespace attn
