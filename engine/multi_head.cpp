#include "engine/multi_head.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/gemm.h"
#include "engine/mat_pool.h"
#include "engine/parallel.h"

#include <atomic>
#include <cmath>

namespace attn {

int64_t headDim(int64_t d, int64_t heads) {
  if (heads < 1 || d % heads != 0)
    throw InputError("--heads: h=" + std::to_string(heads) + " does not divide d=" + std::to_string(d));
  return d / heads;
}

MultiHeadWeights makeMultiHeadWeights(int64_t d, int64_t heads, uint64_t seed) {
  const float gain = 1.6f / std::sqrt(static_cast<float>(d));
  const int64_t dk = d / heads;
  MultiHeadWeights w;
  w.w_q = randomNormal(d, d, seed, "w_q", gain);
  const Mat fresh = randomNormal(d, d, seed, "w_k", gain);
  w.w_k.resize(d, d);
  for (int64_t h = 0; h < heads; ++h) {
    const float alpha = heads > 1 ? 0.9f * static_cast<float>(h) / static_cast<float>(heads - 1) : 0.0f;
    w.w_k.middleCols(h * dk, dk) = (1.0f - alpha) * w.w_q.middleCols(h * dk, dk) + alpha * fresh.middleCols(h * dk, dk);
  }
  w.w_v = randomNormal(d, d, seed, "w_v", 1.0f / std::sqrt(static_cast<float>(d)));
  w.w_o = randomNormal(d, d, seed, "w_o", 1.0f / std::sqrt(static_cast<float>(d)));
  return w;
}

void checkSharedModelWidth(const std::string& what, const Mat& xq, const Mat& xk, const Mat& xv) {
  if (xk.cols() != xq.cols() || xv.cols() != xq.cols())
    throw InputError(what + ": inputs must share d_model (q has " + std::to_string(xq.cols()) + ", k has " +
                     std::to_string(xk.cols()) + ", v has " + std::to_string(xv.cols()) + ")");
}

SelfProjections selfProjections(const Inputs& in, const std::string& variant) {
  const Mat& x = in.query();
  const int64_t L = x.rows(), d = x.cols();
  SelfProjections p;
  if (!in.projected) p.w = makeMultiHeadWeights(d, in.heads, in.seed);
  p.q = in.projected ? x : Mat(x * p.w.w_q);
  p.k = in.projected ? in.key() : Mat(x * p.w.w_k);
  p.v = in.projected ? in.value() : Mat(x * p.w.w_v);
  if (p.k.rows() != L) throw InputError(variant + ": self-attention needs as many keys as queries");
  if (p.v.cols() != d)
    throw InputError(variant + ": v must be [" + std::to_string(L) + ", " + std::to_string(d) + "] like q, got [" +
                     std::to_string(p.v.rows()) + ", " + std::to_string(p.v.cols()) + "]");
  return p;
}

void recordSelfProjections(const Inputs& in, const SelfProjections& p, Result& r) {
  if (!in.projected) {
    r.inputs["x"] = in.query();
    r.inputs["w_q"] = p.w.w_q;
    r.inputs["w_k"] = p.w.w_k;
    r.inputs["w_v"] = p.w.w_v;
  }
  r.inputs["q"] = p.q;
  r.inputs["k"] = p.k;
  r.inputs["v"] = p.v;
}

void multiHeadAttention(const Mat& xq, const Mat& xk, const Mat& xv, const MultiHeadWeights& w, int64_t heads,
                        bool causal, bool scale, const RunContext& ctx, Result& r) {
  const int64_t lq = xq.rows(), lk = xk.rows(), d = xq.cols();
  const std::string what = r.variant.empty() ? "multi-head" : r.variant;  // the variant named in errors
  checkSharedModelWidth(what, xq, xk, xv);
  const int64_t dk = headDim(d, heads);
  const bool keep = ctx.keep_weights;  // false: output only, no [h, Lq, Lk] matrix is formed
  if (keep) checkDenseBudget(heads, lq, lk, 2, what);

  // Q = X W^q, K = X_kv W^k, V = X_kv W^v          [L, d] each, all heads at once
  // (given projections: Q, K, V as they are)
  const bool given = w.w_q.size() == 0;
  const Mat q = given ? xq : product(xq, w.w_q);
  const Mat k = given ? xk : product(xk, w.w_k);
  const Mat v = given ? xv : product(xv, w.w_v);
  ctx.progress(0.1f);

  const Mat mask = causal && keep ? causalMask(lq, lk) : Mat();
  const float s = scale ? 1.0f / std::sqrt(static_cast<float>(dk)) : 1.0f;  // 1/√d_k
  // Buffers already in `r` with the right shape are reused, others come from
  // ctx.pool: at L = 4096 the 2·h·L² floats are 1 GiB, and fresh pages cost
  // more than the softmax.
  r.scores.resize(keep ? heads : 0);
  r.weights.resize(keep ? heads : 0);
  r.streamed_shape = keep ? std::array<int64_t, 3>{} : std::array<int64_t, 3>{heads, lq, lk};
  Mat concat(lq, d);  // Concat(head_1 … head_h)  [Lq, d]
  // Work is (head, block of query rows) pairs, so both cores stay busy at
  // small L too; each pair's GEMMs run single-threaded inside. Streaming
  // blocks hold only [rows, key tile] scores, so they can be taller.
  const int64_t block = keep ? attendBlockRows(lk) : 64;
  const int64_t blocks = (lq + block - 1) / block;
  // Q_h, K_h, V_h, head_h as contiguous [L, d_k] copies: the per-block GEMMs
  // then read and write dense panels (measured ~15% faster at L = 4096 than
  // strided column blocks of the [L, d] matrices).
  std::vector<Mat> qh(heads), kh(heads), vh(heads), oh(heads);
  for (int64_t h = 0; h < heads; ++h) {
    qh[h] = q.middleCols(h * dk, dk);
    kh[h] = k.middleCols(h * dk, dk);
    vh[h] = v.middleCols(h * dk, dk);
    oh[h].resize(lq, dk);
    if (!keep) continue;
    ensureShape(r.scores[h], lq, lk, ctx.pool.get());
    ensureShape(r.weights[h], lq, lk, ctx.pool.get());
  }
  std::atomic<int64_t> done{0};
  parallelFor(heads * blocks, ctx, [&](int64_t t) {
    const int64_t h = t / blocks, r0 = (t % blocks) * block, n = std::min(block, lq - r0);
    // head_h[rows] = softmax(Q_h[rows] K_hᵀ / √d_k) V_h        [rows, d_k]
    if (keep)
      attendRows(qh[h], kh[h], vh[h], s, mask, r.scores[h], r.weights[h], oh[h], r0, n);
    else
      attendRowsStreaming(qh[h], kh[h], vh[h], s, causal, oh[h], r0, n);
    const int64_t done_now = ++done;
    if (ctx.on_progress && done_now % blocks == 0) {
#pragma omp critical(attn_progress)
      ctx.on_progress(0.1f + 0.8f * static_cast<float>(done_now) / static_cast<float>(heads * blocks));
    }
  });
  for (int64_t h = 0; h < heads; ++h) concat.middleCols(h * dk, dk) = oh[h];
  r.mask = mask;
  r.flops = 4.0 * lq * lk * d;  // Q_h K_hᵀ and P_h V_h over all heads
  if (given) {
    r.output = std::move(concat);
    r.inputs["q"] = q;
    r.inputs["k"] = k;
    r.inputs["v"] = v;
    return;
  }
  // MultiHead = Concat(head_1 … head_h) W^o          [Lq, d]
  r.output = product(concat, w.w_o);
  r.flops += 2.0 * (lq + 2.0 * lk + lq) * d * d;  // the four projections
  r.inputs["w_q"] = w.w_q;
  r.inputs["w_k"] = w.w_k;
  r.inputs["w_v"] = w.w_v;
  r.inputs["w_o"] = w.w_o;
}

}  // namespace attn
