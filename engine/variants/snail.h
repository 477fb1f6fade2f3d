// SNAIL's building blocks (engine/variants/snail.cpp), exposed for the
// engine tests' plain-loop references.
#pragma once

#include "engine/tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// One entry of the `blocks` parameter, as written: attn(K, V), tc(D) or dense(R, D).
struct SnailBlock {
  enum class Kind { Attention, Tc, Dense };
  Kind kind = Kind::Attention;
  int64_t key_size = 0, value_size = 0;  // attn(K, V)
  int64_t filters = 0;                   // tc(D), dense(R, D): D
  int64_t dilation = 0;                  // dense(R, D): R
  std::string text;                      // "attn(16,8)", for errors and captions
};

// Parses "attn(16,8),tc(32),dense(4,16)"; throws InputError naming the
// parameter 'blocks', the block's number and text, and what was expected.
std::vector<SnailBlock> parseSnailBlocks(const std::string& spec);

// The dilations of TCBlock(T, D): one dense block per i = 0 … ⌈log2 T⌉ − 1
// with dilation 2^(i0 + i) (i0 = 0: 1, 2, 4, … reaching T − 1 back; the
// paper's pseudo-code counts i from 1, i0 = 1).
std::vector<int64_t> tcDilations(int64_t length, int64_t first_exponent);

// DenseBlock(R, D)'s weights for an input of C channels. w_f, w_g are
// [2C, D]: rows [0, C) multiply x_{t−R} (the causal tap), rows [C, 2C) x_t.
struct SnailDenseWeights {
  Mat w_f, w_g;  // [2C, D]
  Vec b_f, b_g;  // [D]
};
// DenseBlock(R, D) without the concatenation, for x [T, C]:
//   xf_t = x_{t−R} W_f⁽⁰⁾ + x_t W_f⁽¹⁾ + b_f     (x_{t−R} = 0 for t < R: causal padding)
//   xg_t likewise with W_g, b_g
//   a_t  = tanh(xf_t) ⊙ σ(xg_t)                                        [T, D]
Mat snailDenseActivations(const MatRef& x, int64_t dilation, const SnailDenseWeights& w);

// Receptive field through causal kernel-2 convolutions of these dilations,
// applied in order with their outputs concatenated onto their inputs:
// field(t, j) = 1 where x_j reaches position t. A block of dilation R makes
// position t read t and t − R, so the offsets t − j reached are the sums of
// subsets of the dilations (0 included).                              [T, T]
Mat snailReceptiveField(const std::vector<int64_t>& dilations, int64_t length);

}  // namespace attn
