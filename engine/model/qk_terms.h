// One pre-softmax score of a real head split into its terms (the Q/K view).
#pragma once

#include "engine/model/model.h"

namespace attn {

// Head h of layer l, query i, key j, with d = d_head:
//   q = Q_l[i, h·d … (h+1)·d)   k = K_l[j, h·d … (h+1)·d)          [d]
//   product_t = q_t · k_t        dot = Σ_t product_t = q·k
//   score = dot / √d              (before the causal mask and softmax)
//   weight = A_lh[i, j]           (after them)
//
// RoPE models (run.rope): q and k are the rotated vectors, and dimension
// pair i (columns i and i + d/2, the rotate_half layout) turns by m·θ_i at
// position m. Its frequency band's share of the dot product is
//   band_i = q_i k_i + q_{i+d/2} k_{i+d/2}        Σ_i band_i = q·k = score·√d
struct QkTerms {
  int64_t layer = 0, head = 0, query = 0, key = 0;
  Array q, k, product;  // [d]
  Array band;           // [d/2] when run.rope, else empty
  double dot = 0, score = 0, weight = 0;
};

// Throws InputError when layer, head, query or key is out of range.
QkTerms qkTerms(const ModelRun& run, int64_t layer, int64_t head, int64_t query, int64_t key);

// The rotation angle of dimension pair i at position m, m·θ_i mod 2π, for
// m = 0 … positions − 1: [positions, θ.size()].
Mat ropeAngles(const std::vector<double>& theta, int64_t positions);

}  // namespace attn
