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
  t.dot = dot;
  t.score = dot / std::sqrt(static_cast<double>(d));  // q·k / √d_head
  t.weight = run.attention[static_cast<size_t>(layer)][static_cast<size_t>(head)](query, key);
  return t;
}

}  // namespace attn
