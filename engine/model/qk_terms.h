// One pre-softmax score of a real head split into its terms (the Q/K view).
#pragma once

#include "engine/model/model.h"

namespace attn {

// Head h of layer l, query i, key j, with d = d_head:
//   q = Q_l[i, h·d … (h+1)·d)   k = K_l[j, h·d … (h+1)·d)          [d]
//   product_t = q_t · k_t        dot = Σ_t product_t = q·k
//   score = dot / √d              (before the causal mask and softmax)
//   weight = A_lh[i, j]           (after them)
struct QkTerms {
  int64_t layer = 0, head = 0, query = 0, key = 0;
  Array q, k, product;  // [d]
  double dot = 0, score = 0, weight = 0;
};

// Throws InputError when layer, head, query or key is out of range.
QkTerms qkTerms(const ModelRun& run, int64_t layer, int64_t head, int64_t query, int64_t key);

}  // namespace attn
