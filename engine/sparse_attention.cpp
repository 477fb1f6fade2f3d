#include "engine/sparse_attention.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/multi_head.h"
#include "engine/parallel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

namespace attn {

namespace {

constexpr int64_t kRowsPerTask = 256;  // rows per parallel task

}  // namespace

SparseRows buildPattern(const std::string& what, int64_t rows, int64_t cols, const PatternRule& rule, const RunContext& ctx) {
  // Each block of rows collects its entries on its own; the blocks are then
  // concatenated in order, so the rule runs once per row.
  const int64_t blocks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  std::vector<std::vector<int32_t>> keys(static_cast<size_t>(blocks));
  std::vector<std::vector<uint8_t>> sets(static_cast<size_t>(blocks));
  SparseRows s;
  s.rows = rows;
  s.cols = cols;
  s.indptr.assign(static_cast<size_t>(rows) + 1, 0);
  // A dense pattern at huge L (ℓ = 2 at L = 3·10⁶ is 2·10¹² entries) must
  // stop with an error, not exhaust memory: count entries as blocks finish.
  // Each costs its index and set bit twice while being gathered, then its weight.
  constexpr double kBytesPerEntry = 2 * (sizeof(int32_t) + sizeof(uint8_t)) + sizeof(float);
  const double budget = 0.75 * static_cast<double>(availableMemoryBytes());
  std::atomic<int64_t> entries{0};
  parallelFor(blocks, ctx, [&](int64_t b) {
    auto& kb = keys[static_cast<size_t>(b)];
    auto& sb = sets[static_cast<size_t>(b)];
    for (int64_t i = b * kRowsPerTask; i < std::min(rows, (b + 1) * kRowsPerTask); ++i) {
      rule(i, kb, sb);
      s.indptr[static_cast<size_t>(i) + 1] = static_cast<int64_t>(kb.size());  // block-local end, fixed below
    }
    const int64_t so_far = entries += static_cast<int64_t>(kb.size());
    if (static_cast<double>(so_far) * kBytesPerEntry > budget)
      throw InputError(what + ": the pattern over L = " + std::to_string(rows) + " has more than " +
                       std::to_string(so_far) + " connections, which need more than the " + formatBytes(budget / 0.75) +
                       " of memory available (choose a sparser pattern or a shorter sequence)");
  });
  int64_t offset = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t i = b * kRowsPerTask; i < std::min(rows, (b + 1) * kRowsPerTask); ++i)
      s.indptr[static_cast<size_t>(i) + 1] += offset;
    offset += static_cast<int64_t>(keys[static_cast<size_t>(b)].size());
  }
  s.indices.reserve(static_cast<size_t>(offset));
  s.sets.reserve(static_cast<size_t>(offset));
  for (int64_t b = 0; b < blocks; ++b) {
    s.indices.insert(s.indices.end(), keys[static_cast<size_t>(b)].begin(), keys[static_cast<size_t>(b)].end());
    s.sets.insert(s.sets.end(), sets[static_cast<size_t>(b)].begin(), sets[static_cast<size_t>(b)].end());
    std::vector<int32_t>().swap(keys[static_cast<size_t>(b)]);
    std::vector<uint8_t>().swap(sets[static_cast<size_t>(b)]);
  }
  return s;
}

void attendSparseRows(const MatRef& q, const MatRef& k, const MatRef& v, float scale, SparseRows& s,
                      Eigen::Ref<Mat> out, int64_t row0, int64_t row1) {
  using VecMap = Eigen::Map<Eigen::VectorXf>;
  using RowMap = Eigen::Map<const RowVec>;
  // A row's scores live in an aligned scratch vector while they are worked
  // on: Eigen's vectorised sums and exp peel to an aligned address, so the
  // same arithmetic on a position of s.values (whose base alignment varies
  // between allocations) could round differently from run to run.
  int64_t longest = 0;
  for (int64_t i = row0; i < row1; ++i) longest = std::max(longest, s.rowEnd(i) - s.rowBegin(i));
  Eigen::VectorXf scratch(longest);
  for (int64_t i = row0; i < row1; ++i) {
    const int64_t b = s.rowBegin(i), n = s.rowEnd(i) - b;
    const int32_t* key = s.indices.data() + b;
    float* w = scratch.data();
    out.row(i).setZero();
    if (n == 0) continue;
    // score_ij = k_j · q_i · scale, one GEMV per run of consecutive keys   [n]
    for (int64_t e = 0; e < n;) {
      int64_t m = 1;
      while (e + m < n && key[e + m] == key[e] + m) ++m;
      if (m == 1) w[e] = k.row(key[e]).dot(q.row(i)) * scale;  // a lone key (strided A²): no GEMV set-up
      else VecMap(w + e, m).noalias() = (k.middleRows(key[e], m) * q.row(i).transpose()) * scale;
      e += m;
    }
    // p_ij = exp(score_ij − max) / Σ exp(score − max)                      [n]
    VecMap p(w, n);
    const float mx = p.maxCoeff();
    p = (p.array() - mx).exp();
    p *= 1.0f / p.sum();
    std::copy(w, w + n, s.values.data() + b);
    // out_i = Σ_j p_ij v_j, again one GEMV per run                         [d_v]
    for (int64_t e = 0; e < n;) {
      int64_t m = 1;
      while (e + m < n && key[e + m] == key[e] + m) ++m;
      if (m == 1) out.row(i) += w[e] * v.row(key[e]);
      else out.row(i).noalias() += RowMap(w + e, m) * v.middleRows(key[e], m);
      e += m;
    }
  }
}

void sparseMultiHeadAttention(const Inputs& in, std::vector<SparseRows> patterns, const RunContext& ctx,
                              Result& r) {
  const Mat& xq = in.query();
  const Mat& xk = in.key();
  const Mat& xv = in.value();
  const int64_t len = xq.rows(), d = xq.cols(), heads = in.heads;
  const std::string what = r.variant.empty() ? "sparse attention" : r.variant;
  if (xk.rows() != len)
    throw InputError(what + ": self-attention pattern needs as many keys as queries (q has " + std::to_string(len) +
                     ", k has " + std::to_string(xk.rows()) + ")");
  if (heads < 1 || d % heads != 0)
    throw InputError("--heads: h=" + std::to_string(heads) + " does not divide d=" + std::to_string(d));
  if (static_cast<int64_t>(patterns.size()) != heads) throw std::logic_error(what + ": one pattern per head expected");
  const int64_t dh = d / heads;
  // Q = X W^q, K = X W^k, V = X W^v        [L, d] each; head h is columns [h·d_head, (h+1)·d_head)
  // (projected inputs, a real model's head: Q, K, V as given, no seeded W)
  MultiHeadWeights w;
  Mat q, k, v;
  if (in.projected) {
    if (xv.rows() != len || xv.cols() != d)
      throw InputError(what + ": projected v must be [" + std::to_string(len) + ", " + std::to_string(d) + "]");
    q = xq, k = xk, v = xv;
  } else {
    checkSharedModelWidth(what, xq, xk, xv);
    w = makeMultiHeadWeights(d, heads, in.seed);
    q.noalias() = xq * w.w_q;
    k.noalias() = xk * w.w_k;
    v.noalias() = xv * w.w_v;
  }
  ctx.progress(0.2f);

  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));  // 1/√d_head
  for (SparseRows& s : patterns) s.values.assign(s.indices.size(), 0.0f);
  Mat concat(len, d);  // Concat(head_1 … head_H)   [L, d]
  const int64_t blocks = (len + kRowsPerTask - 1) / kRowsPerTask;
  std::atomic<int64_t> done{0};
  parallelFor(heads * blocks, ctx, [&](int64_t t) {
    const int64_t h = t / blocks, r0 = (t % blocks) * kRowsPerTask;
    // head_h[rows] = sparse softmax(Q_h K_hᵀ / √d_head) V_h      [rows, d_head]
    attendSparseRows(q.middleCols(h * dh, dh), k.middleCols(h * dh, dh), v.middleCols(h * dh, dh), scale,
                     patterns[static_cast<size_t>(h)], concat.middleCols(h * dh, dh), r0,
                     std::min(len, r0 + kRowsPerTask));
    const int64_t n = ++done;
    if (ctx.on_progress && n % blocks == 0) {
#pragma omp critical(attn_progress)
      ctx.on_progress(0.2f + 0.7f * static_cast<float>(n) / static_cast<float>(heads * blocks));
    }
  });

  // Dense copies for the views only where they are small and fit.
  if (denseViewsFit(ctx, heads, len, len)) {
    r.weights.resize(static_cast<size_t>(heads));
    r.scores.resize(static_cast<size_t>(heads));
    r.mask = Mat::Zero(len, len);
    for (int64_t h = 0; h < heads; ++h) {
      const SparseRows& s = patterns[static_cast<size_t>(h)];
      r.weights[static_cast<size_t>(h)] = toDenseValues(s);
      // scores = Q_h K_hᵀ / √d_head before the pattern is applied     [L, L]
      r.scores[static_cast<size_t>(h)].noalias() = (q.middleCols(h * dh, dh) * scale) * k.middleCols(h * dh, dh).transpose();
      // One mask for all heads: a key any head may attend to (heads differ under layout = split).
      r.mask = r.mask.cwiseMax(toDenseMask(s));
    }
  }

  // Cost of the pattern against dense causal attention (j ≤ i): 2·d_head
  // FLOPs for each score and 2·d_head for its share of the output, per entry;
  // memory is the pattern's CSR arrays against dense float32 weights [H, L, L].
  double connections = 0, pattern_bytes = 0;
  for (const SparseRows& s : patterns) {
    connections += static_cast<double>(s.nnz());
    pattern_bytes += s.bytes();
  }
  const double causal = static_cast<double>(heads) * static_cast<double>(len) * static_cast<double>(len + 1) / 2.0;
  const double pattern_flops = 4.0 * static_cast<double>(dh) * connections;
  const double dense_flops = 4.0 * static_cast<double>(dh) * causal;
  const double dense_bytes = 4.0 * static_cast<double>(heads) * static_cast<double>(len) * static_cast<double>(len);
  auto scalar = [&r](const std::string& name, const std::string& label, double value) {
    r.extras.push_back({.name = name, .label = label, .kind = ExtraKind::Scalar,
                        .value = Array::fromVector({static_cast<float>(value)})});
  };
  scalar("connections_per_query", "connections per query (mean over heads)",
         connections / static_cast<double>(heads * len));
  scalar("connections", "total connections (all heads)", connections);
  scalar("dense_causal_connections", "dense causal connections (all heads)", causal);
  scalar("pattern_flops", "attention FLOPs of the pattern", pattern_flops);
  scalar("dense_flops", "attention FLOPs of dense causal attention", dense_flops);
  scalar("flops_ratio", "FLOPs pattern / dense causal", pattern_flops / dense_flops);
  scalar("pattern_bytes", "bytes of the pattern (CSR)", pattern_bytes);
  scalar("dense_bytes", "bytes of dense float32 weights [H, L, L]", dense_bytes);
  scalar("bytes_ratio", "bytes pattern / dense", pattern_bytes / dense_bytes);

  r.sparse = std::move(patterns);
  r.output = std::move(concat);
  r.flops = (in.projected ? 0.0 : 2.0 * 3.0 * static_cast<double>(len) * d * d) + pattern_flops;  // projections + attention
  r.inputs["q"] = std::move(q);
  r.inputs["k"] = std::move(k);
  r.inputs["v"] = std::move(v);
  if (!in.projected) {
    r.inputs["x"] = xq;
    r.inputs["w_q"] = w.w_q;
    r.inputs["w_k"] = w.w_k;
    r.inputs["w_v"] = w.w_v;
  }
  ctx.progress(1.0f);
}

}  // namespace attn
