// The trained pointer network that sorts numbers (engine/variants/pointer_sort.cpp,
// trained by scripts/train_pointer_sort.py), exposed for the engine tests'
// cross-check against torch.
#pragma once

#include "engine/lstm.h"
#include "engine/model/checkpoint/safetensors.h"
#include "engine/tensor.h"

#include <cstdint>
#include <vector>

namespace attn {

struct PointerSortModel {
  int64_t min_length = 0, max_length = 0;  // the lengths n it was trained on
  Vec embed_w, embed_b;                    // a_j = W_x x_j + b_x: W_x [E, 1] held as [E], b_x [E]
  LstmCell encoder, decoder;               // [E] → [H]
  Vec start;                               // g_1 [E]
  Mat w_1, w_2;                            // [A, H]
  Vec v;                                   // [A]

  // The tensors and __metadata__ the script writes, each checked: one
  // InputError naming the file and what is wrong.
  static PointerSortModel load(const SafetensorsFile& f);
};

// Greedy decoding of n numbers, one output step per input:
//   e_j, d_i   encoder and decoder states             [n, H] each
//   u_j^i      vᵀ tanh(W₁ e_j + W₂ d_i)                 [n, n], every position
//   mask(i, j) 1 where j was not chosen at a step before i
//   p(C_i = j) softmax_j(u^i) over mask(i, ·) = 1      [n, n], exactly 0 elsewhere
//   C_i        argmax_j p(C_i = j)
struct PointerSortRun {
  Mat enc, dec, u, mask, p;
  std::vector<int64_t> chosen;
};

// `x` must hold min_length … max_length numbers (checked by the variant).
PointerSortRun pointerSort(const PointerSortModel& m, const std::vector<float>& x);

}  // namespace attn
