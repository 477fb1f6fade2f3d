#include "engine/compare.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/parallel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

namespace attn {

namespace {

// Head h's pattern row i as (key, weight) pairs with weight > 0: the keys
// the pattern keeps. Reads the CSR when there is one, else the dense row.
template <class F>
void forEachPatternEntry(const Result& r, int h, int64_t i, F&& f) {
  if (r.isSparse()) {
    const SparseRows& s = r.sparse[static_cast<size_t>(h)];
    for (int64_t e = s.rowBegin(i); e < s.rowEnd(i); ++e)
      if (s.values[static_cast<size_t>(e)] > 0) f(s.indices[static_cast<size_t>(e)], s.values[static_cast<size_t>(e)]);
  } else {
    const Mat& w = r.weights[static_cast<size_t>(h)];
    for (int64_t j = 0; j < w.cols(); ++j)
      if (w(i, j) > 0) f(j, w(i, j));
  }
}

}  // namespace

bool canCompare(const Result& r) {
  const auto has = [&r](const char* k) { return r.inputs.count(k) && r.inputs.at(k).size(); };
  if (!has("q") || !has("k") || !has("v") || r.heads() == 0 || r.output.size() == 0) return false;
  const Mat& q = r.inputs.at("q");
  return q.rows() == r.queries() && r.inputs.at("k").rows() == r.keys() && r.queries() == r.keys() &&
         q.cols() % r.heads() == 0 && r.output.rows() == q.rows() && r.output.cols() == r.inputs.at("v").cols() &&
         (!r.isSparse() || r.sparse[0].values.size() == r.sparse[0].indices.size());
}

Comparison compareWithFull(const Result& r, const RunContext& ctx) {
  if (!canCompare(r))
    throw InputError(r.variant + ": cannot compare with full attention (the result lacks its projected q, k, v, "
                                 "output or weights, or is not self-attention)");
  const Mat& q = r.inputs.at("q");
  const Mat& k = r.inputs.at("k");
  const Mat& v = r.inputs.at("v");
  const int heads = r.heads();
  const int64_t len = q.rows(), dk = q.cols() / heads, dv = v.cols() / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  const bool dense = denseFits(heads, len, len);

  Comparison c;
  c.variant = r.variant;
  c.heads = heads;
  c.length = len;
  c.mass_kept.resize(heads, len);
  c.kl.resize(heads, len);
  if (dense) {
    c.full.assign(heads, Mat::Zero(len, len));
    c.pattern.resize(heads);
    for (int h = 0; h < heads; ++h)
      c.pattern[h] = r.isSparse() ? toDenseValues(r.sparse[h]) : r.weights[h];
  }
  Mat out_full(len, heads * dv);

  // Full causal attention in blocks of query rows (one block of scores at a
  // time, never [L, L] unless kept for the view):
  //   P = softmax(Q_h[rows] K_h[0..last]ᵀ / √d_k), keys j ≤ i       [rows, last+1]
  //   O_full[rows] = P V_h                                          [rows, d_v]
  const int64_t block = attendBlockRows(len);
  const int64_t blocks = (len + block - 1) / block;
  std::atomic<int64_t> done{0}, connections{0};
  parallelFor(heads * blocks, ctx, [&](int64_t t) {
    const int h = static_cast<int>(t / blocks);
    const int64_t r0 = (t % blocks) * block, n = std::min(block, len - r0), width = r0 + n;
    int64_t entries = 0;  // the pattern's connections in this block
    Mat p(n, width);
    p.noalias() = q.block(r0, h * dk, n, dk) * k.block(0, h * dk, width, dk).transpose();
    for (int64_t a = 0; a < n; ++a) {
      const int64_t i = r0 + a;
      auto row = p.row(a);
      const float m = row.head(i + 1).maxCoeff();
      double sum = 0;
      for (int64_t j = 0; j <= i; ++j) sum += (row(j) = std::exp((row(j) - m) * scale));
      row.head(i + 1) /= static_cast<float>(sum);
      row.tail(width - i - 1).setZero();
      // Mass kept and KL(full ‖ pattern) = Σ_j p_j log(p_j / q_j), +∞ where q_j = 0 < p_j:
      // when the pattern covers fewer of the keys full attention weights than there are.
      double kept = 0, kl = 0;
      int64_t covered = 0;
      forEachPatternEntry(r, h, i, [&](int64_t j, float qw) {
        ++entries;
        if (j > i) return;  // not a causal key: full attention gives it nothing
        const double pj = row(j);
        kept += pj;
        if (pj > 0) {
          kl += pj * std::log(pj / qw);
          ++covered;
        }
      });
      if (covered < (row.head(i + 1).array() > 0.0f).count()) kl = std::numeric_limits<double>::infinity();
      c.mass_kept(h, i) = static_cast<float>(kept);
      c.kl(h, i) = static_cast<float>(std::max(kl, 0.0));  // ≥ 0; float rounding can dip below
    }
    out_full.block(r0, h * dv, n, dv).noalias() = p * v.block(0, h * dv, width, dv);
    if (dense) c.full[h].block(r0, 0, n, width) = p;
    connections += entries;
    const int64_t finished = ++done;
    if (ctx.on_progress && finished % blocks == 0) {
#pragma omp critical(attn_progress)
      ctx.on_progress(static_cast<float>(finished) / static_cast<float>(heads * blocks));
    }
  });

  if (dense)
    for (int h = 0; h < heads; ++h) c.difference.push_back(c.pattern[h] - c.full[h]);
  c.mass_kept_mean = c.mass_kept.cast<double>().mean();
  double kl_sum = 0;
  for (int h = 0; h < heads; ++h)
    for (int64_t i = 0; i < len; ++i)
      if (std::isfinite(c.kl(h, i))) ++c.kl_finite, kl_sum += c.kl(h, i);
  c.kl_finite_mean = c.kl_finite ? kl_sum / static_cast<double>(c.kl_finite) : 0.0;
  c.kl_mean = c.kl_finite == heads * len ? c.kl_finite_mean : std::numeric_limits<double>::infinity();
  c.output_rel_error = (r.output - out_full).norm() / std::max(out_full.norm(), 1e-30f);

  // One connection costs a q·k product and a weighted v row: 2 d_k + 2 d_v.
  c.full_connections = heads * len * (len + 1) / 2;
  c.pattern_connections = connections;
  const double per = 2.0 * static_cast<double>(dk + dv);
  c.full_flops = per * static_cast<double>(c.full_connections);
  c.pattern_flops = per * static_cast<double>(c.pattern_connections);
  // Dense weights [H, L, L] float32 against the pattern as CSR (value + index per entry, indptr per row).
  c.full_bytes = 4.0 * heads * static_cast<double>(len) * static_cast<double>(len);
  c.pattern_bytes = 8.0 * static_cast<double>(c.pattern_connections) + 8.0 * heads * static_cast<double>(len + 1);
  return c;
}

nlohmann::json comparisonToJson(const Comparison& c) {
  const auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json("inf"); };
  return {{"variant", c.variant},
          {"heads", c.heads},
          {"length", c.length},
          {"mass_kept_mean", c.mass_kept_mean},
          {"kl_full_pattern_mean", num(c.kl_mean)},
          {"kl_finite_queries", c.kl_finite},
          {"kl_finite_mean", c.kl_finite_mean},
          {"output_relative_error", c.output_rel_error},
          {"full", {{"flops", c.full_flops}, {"bytes", c.full_bytes}, {"connections", c.full_connections}}},
          {"pattern", {{"flops", c.pattern_flops}, {"bytes", c.pattern_bytes}, {"connections", c.pattern_connections}}}};
}

}  // namespace attn
