// Transformer-XL (Dai et al. 2019): segment-level recurrence with a memory
// of the previous M hidden states, and relative positional attention.
// Shared by the `transformer-xl` variant, its tests and `attnlab bench`.
#pragma once

#include "engine/run_context.h"
#include "engine/tensor.h"

#include <cstdint>
#include <vector>

namespace attn {

// The authors' _rel_shift, by pad-and-reshape. `bd` [Lq, Lk] has in column
// k the score against relative distance Lk − 1 − k (R is built for the
// distances Lk − 1 … 0). Pads a zero column in front ([Lq, Lk + 1]), views the
// buffer as [Lk + 1, Lq], drops the first row and views the rest as [Lq, Lk].
// Result (i, j) = bd(i, j + Lq − 1 − i): the score at distance (Lk − Lq) + i − j.
// Valid where j ≤ i + Lk − Lq (the causal part); the rest is filler, masked.
Mat relShift(const Mat& bd);

// R [Lk, d]: row k is the sinusoid of the distance Lk − 1 − k (authors' pos_seq).
Mat relativeEncodings(int64_t lk, int64_t d);

// One relative-position attention layer (Dai et al. 2019, §3.3).
struct XlLayerWeights {
  Mat w_q, w_k, w_v, w_o;  // [d, d] (engine/multi_head.h)
  Mat w_r;                 // [d, d]: W_{k,R}, separate from W_{k,E} = w_k
  Mat u, v;                // [H, d_head]: global content and position biases
};
// Seeded; u, v ~ N(0, bias_scale²), so bias_scale = 0 gives u = v = 0.
XlLayerWeights makeXlLayerWeights(int64_t d, int64_t heads, uint64_t seed, float bias_scale);

// What the variant shows of one layer; null in the fast path of the stack.
struct XlDetail {
  std::vector<Mat> a, b, c, d;  // per head [Lq, Lk], each already ·1/√d_head, 0 where masked
  std::vector<Mat> scores;      // a + b + c + d
  std::vector<Mat> weights;     // masked softmax of scores
  Mat r;                        // relativeEncodings(Lk, d)
};

// h_seg [Lq, d] attends causally to [mem | h_seg] ([Lm + Lq, d]): query i
// sees keys j ≤ Lm + i. `rk` = relativeEncodings(Lm + Lq, d) · W_R [Lk, d]
// (passed in so a caller can reuse it across segments). Returns the heads
// concatenated before W^o [Lq, d]; fills `detail` when not null.
Mat xlAttention(const Mat& h_seg, const Mat& mem, const XlLayerWeights& w, const Mat& rk, int64_t heads,
                XlDetail* detail);

// [SECTION] State reuse against recomputation (Dai et al. 2019, §3.2, Table 9)
//
// A small stack of XL layers, h^ℓ = h^{ℓ−1} + XlAttn_ℓ(h^{ℓ−1}, mem^{ℓ−1}) W^o_ℓ,
// where mem^{ℓ−1} is the last M states of layer ℓ's input h^{ℓ−1}.
struct XlStack {
  int64_t heads = 4, segment = 128, memory = 128;
  std::vector<XlLayerWeights> layers;
};
XlStack makeXlStack(int64_t layers, int64_t d, int64_t heads, int64_t segment, int64_t memory, uint64_t seed);

// With state reuse: x [N, d] segment by segment, each layer's memory carried
// over (no recomputation). Returns the top layer's states [N, d].
Mat xlEvaluateWithReuse(const XlStack& s, const Mat& x, const RunContext& ctx = {});

// Without: for each position t in `positions`, the whole stack runs from
// scratch on the window x[max(0, t − C + 1) … t], C = M + L (the same
// attention length), with no memory, and keeps the window's last row: the
// vanilla model's evaluation that shifts by one position at a time.
// Returns [positions.size(), d].
//
// What is comparable: the window's last query has exactly the context of
// the last query of an XL segment at layer 1 (M + L keys, same distances),
// so a one-layer stack gives the same row at t = τL + L − 1 for every τ.
// Deeper, XL's memory states were themselves computed with memory, so its
// context grows by ~M per layer past the window; the two agree at every
// layer only while the whole history fits in memory (τ·L ≤ M).
Mat xlEvaluateRecompute(const XlStack& s, const Mat& x, const std::vector<int64_t>& positions,
                        const RunContext& ctx = {});

}  // namespace attn
