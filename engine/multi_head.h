// Multi-head attention (Vaswani et al. 2017, §3.2.2): the `multi-head` and
// `cross-attention` variants, the seeded W^q, W^k, W^v of every variant that
// works head by head and of sparse attention, and callable directly with
// given weights (tests, benchmarks).
#pragma once

#include "engine/inputs.h"
#include "engine/result.h"
#include "engine/run_context.h"
#include "engine/tensor.h"

#include <string>

namespace attn {

struct MultiHeadWeights {
  Mat w_q, w_k, w_v;  // [d, d]: columns h·d_k … (h+1)·d_k − 1 are head h's W^q_h
  Mat w_o;            // [d, d]: applied to the concatenated heads
};

// d_head = d / h; throws InputError naming --heads when h does not divide d.
int64_t headDim(int64_t d, int64_t heads);

// Seeded weights with structure worth looking at: W^k_h blends W^q_h with
// fresh noise by α_h = 0.9·h/(H−1), so head 0 attends by similarity and
// later heads increasingly by chance. Entries ~ N(0, gain²/d).
MultiHeadWeights makeMultiHeadWeights(int64_t d, int64_t heads, uint64_t seed);

// The seeded W^q, W^k, W^v are [d, d]: q, k and v must all have d columns.
// Throws InputError naming `what` and the three widths.
void checkSharedModelWidth(const std::string& what, const Mat& xq, const Mat& xk, const Mat& xv);

// Q, K, V of a self-attention variant that works head by head (adaptive-span,
// alibi): the given ones when in.projected (--q/--k/--v, a real model's head),
// else X W^q, X W^k, X W^v with the seeded weights. Throws InputError naming
// `variant` unless there are as many keys as queries and v is as wide as q.
struct SelfProjections {
  Mat q, k, v;         // [L, d]: head h is columns [h·d_head, (h+1)·d_head)
  MultiHeadWeights w;  // empty when given (no W^o either)
};
SelfProjections selfProjections(const Inputs& in, const std::string& variant);
// What was used, into r.inputs: q, k, v, and x with W^q, W^k, W^v when projected here.
void recordSelfProjections(const Inputs& in, const SelfProjections& p, Result& r);

// MultiHead(Q, K, V) = Concat(head_1 … head_h) W^o,
// head_i = softmax(Q W^q_i (K W^k_i)ᵀ / √d_k) V W^v_i.
// Fills weights/scores/output/inputs/flops of `r`; `r.variant`, when set,
// names the variant in errors. `xq` [Lq, d], `xk`, `xv` [Lk, d]. Empty
// weights (MultiHeadWeights{}): xq, xk, xv are the projected Q, K, V, used as
// given, and the output is Concat(head_1 … head_h) with no W^o. With
// ctx.keep_weights off only the output is formed (attendRowsStreaming: no
// [h, Lq, Lk] array; r.streamed_shape says what it would have been).
void multiHeadAttention(const Mat& xq, const Mat& xk, const Mat& xv, const MultiHeadWeights& w, int64_t heads,
                        bool causal, bool scale, const RunContext& ctx, Result& r);

}  // namespace attn
