// Neural Turing Machine addressing (engine/variants/ntm.cpp), exposed for the
// engine tests' stage-by-stage references.
#pragma once

#include "engine/tensor.h"

#include <vector>

namespace attn {

// The four weightings of one addressing step, each [N].
struct NtmAddressing {
  Vec w_c;      // content: softmax_i(β K(k, M_i))
  Vec w_g;      // interpolated: g w_c + (1 − g) w_prev
  Vec w_tilde;  // shifted: Σ_j w_g(j) s(i − j), indices mod N
  Vec w;        // sharpened: w̃^γ / Σ w̃^γ
};

// memory M [N, W], key k [W], w_prev [N]; `shift` = [s(−K), …, s(0), …, s(K)]
// (odd length, ≥ 0, summing to 1: checked by the variant, not here).
NtmAddressing ntmAddress(const Mat& memory, const Vec& key, const Vec& w_prev, double beta, double g,
                         const std::vector<double>& shift, double gamma);

}  // namespace attn
