// Plain-loop, double-precision pieces of the real models' references, from
// the papers' equations and transformers' modelling code: scalar loops, no
// Eigen products. Each family's test builds its reference of these.
#pragma once

#include "engine/model/model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace attn::mref {

// The bar for a real model against its double-precision reference: every map, q, k, v, hidden state.
inline constexpr double kModelTol = 1e-4;

using Rows = std::vector<std::vector<double>>;  // [L][n]

struct Reference {
  std::vector<std::vector<Rows>> attention;  // [layer][head] [L][L]
  std::vector<Rows> q, k, v;                 // [layer] [L][d]
  Rows hidden, logits;
};

inline Rows zeros(size_t r, size_t c) { return Rows(r, std::vector<double>(c, 0.0)); }

inline void addInto(Rows& x, const Rows& y) {  // the residual x += y
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t e = 0; e < x[i].size(); ++e) x[i][e] += y[i][e];
}

inline void layerNormRef(Rows& x, const std::vector<float>& g, const std::vector<float>& b, double eps) {
  for (auto& row : x) {
    double mu = 0, var = 0;
    for (double v : row) mu += v;
    mu /= static_cast<double>(row.size());
    for (double v : row) var += (v - mu) * (v - mu);
    var /= static_cast<double>(row.size());
    for (size_t c = 0; c < row.size(); ++c) row[c] = (row[c] - mu) / std::sqrt(var + eps) * g[c] + b[c];
  }
}

// y = x W + b with W [in, out] (Conv1D), or x Wᵀ + b with W [out, in] (Linear)
inline Rows linearRef(const Rows& x, const std::vector<float>& w, const std::vector<float>& b, size_t in, size_t out,
               bool transposed) {
  Rows y = zeros(x.size(), out);
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t o = 0; o < out; ++o) {
      double s = b.empty() ? 0.0 : b[o];
      for (size_t c = 0; c < in; ++c) s += x[i][c] * (transposed ? w[o * in + c] : w[c * out + o]);
      y[i][o] = s;
    }
  return y;
}

// Query head h reads key/value head h / (heads / kv_heads) (k and v have
// kv_heads·d_head columns); a sliding window keeps keys j with i − j < window.
inline void attentionRef(const Rows& q, const Rows& k, const Rows& v, size_t heads, bool causal, std::vector<Rows>& maps,
                  Rows& out, size_t kv_heads = 0, size_t window = 0) {
  const size_t L = q.size(), d = q[0].size(), dh = d / heads;
  if (kv_heads == 0) kv_heads = heads;
  out = zeros(L, d);
  maps.assign(heads, zeros(L, L));
  for (size_t h = 0; h < heads; ++h)
    for (size_t i = 0; i < L; ++i) {
      const size_t g = h / (heads / kv_heads), last = causal ? i : L - 1;
      const size_t first = window > 0 && i + 1 > window ? i + 1 - window : 0;
      std::vector<double> s(last + 1);
      double mx = -1e300, z = 0;
      for (size_t j = first; j <= last; ++j) {
        double dot = 0;
        for (size_t e = 0; e < dh; ++e) dot += q[i][h * dh + e] * k[j][g * dh + e];
        s[j] = dot / std::sqrt(static_cast<double>(dh));
        mx = std::max(mx, s[j]);
      }
      for (size_t j = first; j <= last; ++j) z += std::exp(s[j] - mx);
      for (size_t j = first; j <= last; ++j) {
        maps[h][i][j] = std::exp(s[j] - mx) / z;
        for (size_t e = 0; e < dh; ++e) out[i][h * dh + e] += maps[h][i][j] * v[j][g * dh + e];
      }
    }
}

// Every head of one layer, captured into the reference; returns Concat(head_1 … head_H).
// The attention of the newer families, one loop per entry:
//   s_ij = q_i·k_j · scale (default 1/√d_head); softcap c: s → c·tanh(s/c);
//   ALiBi: s_ij += slope_h · j; mask: causal (j ≤ i) and the window
//   (causal: i − j < window; bidirectional: |i − j| ≤ window/2); softmax; out = Σ_j a_ij v_j.
struct AttnOpts {
  size_t kv_heads = 0;  // 0: one per query head
  bool causal = true;
  size_t window = 0;
  double scale = 0;
  double softcap = 0;
  std::vector<double> alibi;  // slope per head
};
inline void attentionRefOpts(const Rows& q, const Rows& k, const Rows& v, size_t heads, const AttnOpts& o,
                             std::vector<Rows>& maps, Rows& out) {
  const size_t L = q.size(), dh = q[0].size() / heads, kvh = o.kv_heads ? o.kv_heads : heads;
  const double scale = o.scale > 0 ? o.scale : 1.0 / std::sqrt(static_cast<double>(dh));
  out = zeros(L, q[0].size());
  maps.assign(heads, zeros(L, L));
  for (size_t h = 0; h < heads; ++h)
    for (size_t i = 0; i < L; ++i) {
      const size_t g = h / (heads / kvh);
      std::vector<double> s(L, 0.0);
      std::vector<bool> ok(L, false);
      double mx = -1e300, z = 0;
      for (size_t j = 0; j < L; ++j) {
        const long back = static_cast<long>(i) - static_cast<long>(j);
        ok[j] = (!o.causal || back >= 0) &&
                (o.window == 0 || (o.causal ? back < static_cast<long>(o.window) : std::labs(back) <= static_cast<long>(o.window / 2)));
        if (!ok[j]) continue;
        double dot = 0;
        for (size_t e = 0; e < dh; ++e) dot += q[i][h * dh + e] * k[j][g * dh + e];
        s[j] = dot * scale;
        if (o.softcap > 0) s[j] = o.softcap * std::tanh(s[j] / o.softcap);
        if (!o.alibi.empty()) s[j] += o.alibi[h] * static_cast<double>(j);
        mx = std::max(mx, s[j]);
      }
      for (size_t j = 0; j < L; ++j)
        if (ok[j]) z += std::exp(s[j] - mx);
      for (size_t j = 0; j < L; ++j) {
        if (!ok[j]) continue;
        maps[h][i][j] = std::exp(s[j] - mx) / z;
        for (size_t e = 0; e < dh; ++e) out[i][h * dh + e] += maps[h][i][j] * v[j][g * dh + e];
      }
    }
}

inline Rows attendAndKeep(Reference& r, const Rows& q, const Rows& k, const Rows& v, size_t heads, bool causal) {
  std::vector<Rows> maps;
  Rows out;
  attentionRef(q, k, v, heads, causal, maps, out);
  r.attention.push_back(maps), r.q.push_back(q), r.k.push_back(k), r.v.push_back(v);
  return out;
}

inline double geluErf(double u) { return 0.5 * u * (1.0 + std::erf(u / std::sqrt(2.0))); }
inline double geluTanh(double u) { return 0.5 * u * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (u + 0.044715 * u * u * u))); }

inline double silu(double u) { return u / (1.0 + std::exp(-u)); }

// x / √(mean(x²) + ε) · (offset + w): Gemma stores w − 1 and uses offset 1.
inline void rmsNormRef(Rows& x, const std::vector<float>& w, double eps, double offset = 0.0) {
  for (auto& row : x) {
    double ms = 0;
    for (double v : row) ms += v * v;
    ms /= static_cast<double>(row.size());
    for (size_t c = 0; c < row.size(); ++c) row[c] = row[c] / std::sqrt(ms + eps) * (offset + w[c]);
  }
}

// One float32 operation of torch: the double result of float operands,
// rounded once to float (that is the float32 result for +, −, ·, /, as
// 53 ≥ 2·24 + 2 bits).
inline double f32(double v) { return static_cast<double>(static_cast<float>(v)); }

// RoPE's θ_i as transformers computes inv_freq (modeling_rope_utils.py), in
// float32 tensors, each step rounded as torch rounds it:
//   inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
//   "linear": inv_freq / factor
//   "llama3": wavelen = 2π / inv_freq (a number over a tensor: reciprocal, then · 2π);
//             wavelen > original/low: inv_freq / factor; wavelen < original/high: kept;
//             between: s = (original / wavelen − low) / (high − low),
//             (1 − s) · inv_freq / factor + s · inv_freq.
// `exact`: the same equations in double, the angles of the papers.
inline std::vector<double> ropeThetaRef(const RopeSpec& r, int64_t head_dim, bool exact = false) {
  const auto F = [exact](double v) { return exact ? v : f32(v); };
  // partial rotary: the first int(head_dim · partial) dimensions (even) rotate, θ over those
  int64_t dims = static_cast<int64_t>(static_cast<double>(head_dim) * r.partial);
  dims -= dims % 2;
  std::vector<double> theta;
  for (int64_t i = 0; i < dims / 2; ++i) {
    const double power = F(std::pow(F(r.theta), F(2.0 * static_cast<double>(i) / static_cast<double>(dims))));
    double t = F(1.0 / power);
    if (r.type == "linear") t = F(t / F(r.factor));
    if (r.type == "llama3") {
      const double wl = F(F(1.0 / t) * F(2 * M_PI)), orig = static_cast<double>(r.original_positions);
      if (wl > F(orig / r.low_freq)) {
        t = F(t / F(r.factor));
      } else if (wl >= F(orig / r.high_freq)) {
        const double sm = F(F(F(F(1.0 / wl) * orig) - F(r.low_freq)) / F(r.high_freq - r.low_freq));
        t = F(F(F(F(1 - sm) * t) / F(r.factor)) + F(sm * t));
      }
    }
    theta.push_back(t);
  }
  return theta;
}
inline std::vector<double> ropeThetaRef(const ModelConfig& c) { return ropeThetaRef(c.rope, c.head_dim); }

// rotate_half on the first 2·θ.size() dimensions of each head (partial
// rotary leaves the rest), at positions p0 + i:
// x'_e = x_e cos(mθ_e) − x_{e+h} sin(mθ_e), x'_{e+h} = x_{e+h} cos + x_e sin, h = θ.size().
// The angle mθ_e as transformers' rotary embedding forms it, in float32
// (float(m) · float(θ_e), rounded once; autocast off); `exact`: in double.
inline Rows ropeRef(const Rows& x, size_t dh, const std::vector<double>& theta, size_t p0 = 0, bool exact = false) {
  Rows y = x;
  const size_t half = theta.size();
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t h = 0; h < x[i].size() / dh; ++h)
      for (size_t e = 0; e < half; ++e) {
        const double m = static_cast<double>(p0 + i);
        const double a = exact ? m * theta[e] : f32(f32(m) * f32(theta[e]));
        const double lo = x[i][h * dh + e], hi = x[i][h * dh + e + half];
        y[i][h * dh + e] = lo * std::cos(a) - hi * std::sin(a);
        y[i][h * dh + e + half] = hi * std::cos(a) + lo * std::sin(a);
      }
  return y;
}

// [L][kv_heads·dh] → [L][heads·dh]: each key/value head once per query head reading it.
inline Rows repeatHeadsRef(const Rows& x, size_t heads, size_t kv_heads, size_t dh) {
  Rows y = zeros(x.size(), heads * dh);
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t h = 0; h < heads; ++h)
      for (size_t e = 0; e < dh; ++e) y[i][h * dh + e] = x[i][h / (heads / kv_heads) * dh + e];
  return y;
}

inline void expectTopK(const std::vector<std::vector<Prediction>>& top, const Rows& logits, int top_k);

// Per-layer matrices (q before RoPE, before a norm, …) against the reference's rows, within kModelTol.
inline void expectRows(const std::vector<Mat>& got, const std::vector<Rows>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t l = 0; l < want.size(); ++l) {
    ASSERT_EQ(got[l].rows(), static_cast<int64_t>(want[l].size())) << what;
    for (size_t i = 0; i < want[l].size(); ++i) {
      ASSERT_EQ(got[l].cols(), static_cast<int64_t>(want[l][i].size())) << what;
      for (size_t e = 0; e < want[l][i].size(); ++e)
        ASSERT_NEAR(got[l](static_cast<int64_t>(i), static_cast<int64_t>(e)), want[l][i][e], kModelTol)
            << what << " layer " << l << " row " << i << " col " << e;
    }
  }
}

// Every map, q/k/v, hidden and the top-k (ids and softmax probabilities) against the reference.
inline void expectMatches(const ModelRun& run, const Reference& ref, int top_k) {
  const double tol = kModelTol;
  ASSERT_EQ(run.attention.size(), ref.attention.size());
  for (size_t l = 0; l < ref.attention.size(); ++l) {
    for (size_t h = 0; h < ref.attention[l].size(); ++h)
      for (size_t i = 0; i < ref.attention[l][h].size(); ++i)
        for (size_t j = 0; j < ref.attention[l][h].size(); ++j)
          ASSERT_NEAR(run.attention[l][h](i, j), ref.attention[l][h][i][j], tol) << "layer " << l << " head " << h;
    for (size_t i = 0; i < ref.q[l].size(); ++i)
      for (size_t e = 0; e < ref.q[l][i].size(); ++e) {
        ASSERT_NEAR(run.q[l](i, e), ref.q[l][i][e], tol);
        ASSERT_NEAR(run.k[l](i, e), ref.k[l][i][e], tol);
        ASSERT_NEAR(run.v[l](i, e), ref.v[l][i][e], tol);
      }
  }
  for (size_t i = 0; i < ref.hidden.size(); ++i)
    for (size_t e = 0; e < ref.hidden[i].size(); ++e) ASSERT_NEAR(run.hidden(i, e), ref.hidden[i][e], tol);
  expectTopK(run.top_k, ref.logits, top_k);
}

// The top-k of each row (ids and softmax probabilities) against the reference's logits; none when it has none.
inline void expectTopK(const std::vector<std::vector<Prediction>>& top, const Rows& logits, int top_k) {
  if (logits.empty()) {
    EXPECT_TRUE(top.empty());
    return;
  }
  ASSERT_EQ(top.size(), logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    const std::vector<double>& z = logits[i];
    const double mx = *std::max_element(z.begin(), z.end());
    double sum = 0;
    for (double v : z) sum += std::exp(v - mx);
    std::vector<int32_t> order(z.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return z[a] > z[b]; });
    ASSERT_EQ(top[i].size(), static_cast<size_t>(top_k));
    for (int t = 0; t < top_k; ++t) {
      const Prediction& p = top[i][static_cast<size_t>(t)];
      EXPECT_NEAR(p.probability, std::exp(z[order[t]] - mx) / sum, 1e-4) << "position " << i << " rank " << t;
      // Near-ties may swap; the probability of the predicted id must match its rank's.
      EXPECT_NEAR(std::exp(z[p.id] - mx) / sum, std::exp(z[order[t]] - mx) / sum, 1e-4);
    }
  }
}


}  // namespace attn::mref
