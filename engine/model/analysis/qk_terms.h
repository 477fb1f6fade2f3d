// One pre-softmax score of a real head split into its terms (the Q/K view).
#pragma once

#include "engine/model/blocks/run.h"
#include "engine/run_context.h"

namespace attn {

// Head h of layer l, query i, key j, with d = d_head:
//   q = Q_l[i, h·d … (h+1)·d)   k = K_l[j, h·d … (h+1)·d)          [d]
//   product_t = q_t · k_t        dot = Σ_t product_t = q·k
//   score = dot · scale           (scale: 1/√d, or the family's: Gemma 2's query_pre_attn_scalar^−½)
//   capped = c·tanh(score / c)    (soft-capping, Gemma 2; = score without)
//   logit = capped + bias         (bias: ALiBi's slope_h · j, BLOOM; 0 without)
//   weight = A_lh[i, j]           (after the mask and softmax)
//
// RoPE models (run.rope): q and k are the rotated vectors, and dimension
// pair i (columns i and i + r/2 of the first r = rotary dims, the
// rotate_half layout) turns by m·θ_i at position m. Its frequency band's
// share of the dot product is
//   band_i = q_i k_i + q_{i+r/2} k_{i+r/2}        Σ_i band_i + unrotated = q·k
// where unrotated = Σ_{t ≥ r} q_t k_t (partial rotary; 0 when r = d).
struct QkTerms {
  int64_t layer = 0, head = 0, query = 0, key = 0;
  Array q, k, product;  // [d]
  Array band;           // [r/2] when run.rope, else empty
  int64_t rotary_dims = 0;  // r (d when all rotate), 0 without RoPE
  double unrotated = 0;
  Array q_prenorm, k_prenorm;  // [d] before QK-norm (run.q_prenorm), else empty
  double dot = 0, scale = 0, score = 0, capped = 0, bias = 0, logit = 0, weight = 0;
  bool bent = false;  // the cap changed the score by more than 5 %
};

// Throws InputError when layer, head, query or key is out of range.
QkTerms qkTerms(const ModelRun& run, int64_t layer, int64_t head, int64_t query, int64_t key);

// θ_i of `layer` (models with a local RoPE base differ per layer).
const std::vector<double>& layerRopeTheta(const ModelRun& run, int64_t layer);

// What the family adds to head h's scores before the softmax, per query and
// key, where the mask allows it (0 elsewhere)                  [L, first_position + L]:
//   softcapBend: s − c·tanh(s/c), how far the soft-cap bent score s (Gemma 2);
//   alibiBias:   slope_h · j, BLOOM's linear bias.
Mat softcapBend(const ModelRun& run, int64_t layer, int64_t head);
Mat alibiBias(const ModelRun& run, int64_t layer, int64_t head);

// The rotation angle of dimension pair i at position m, m·θ_i mod 2π (m·θ_i
// in float32, as the model forms it: RopeAngle::Float32), for
// m = 0 … positions − 1: [positions, θ.size()].
Mat ropeAngles(const std::vector<double>& theta, int64_t positions);

}  // namespace attn
