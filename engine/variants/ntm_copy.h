// The Neural Turing Machine trained on the copy task (Graves et al. 2014,
// §4.1, Figure 6) by scripts/train_ntm_copy.py and shipped as
// assets/trained/ntm-copy.safetensors: its forward pass, step by step, as the
// script computes it in torch (tests/data/ntm_copy_forward.json checks it).
#pragma once

#include "engine/lstm.h"
#include "engine/model/checkpoint/safetensors.h"
#include "engine/tensor.h"
#include "engine/variants/ntm.h"

#include <vector>

namespace attn {

// One head's parameters at one step, from the controller state h_t, and the
// weighting they address (the four stages of engine/variants/ntm.h).
struct NtmHeadStep {
  Vec k;                  // key [W]
  double beta = 0;        // key strength, softplus
  double g = 0;           // interpolation gate, σ
  std::vector<double> s;  // [s(−1), s(0), s(+1)], softmax
  double gamma = 1;       // sharpening, 1 + softplus
  Vec e, a;               // erase (σ) and add vectors [W]: the write head's only
  NtmAddressing w;
};

struct NtmCopyStep {
  NtmHeadStep write, read;
  Mat memory;  // M_t after this step's write [N, W]
  Vec r;       // read vector r_t = M_tᵀ w^r_t [W]
  Vec y;       // output σ(W_y [h_t; r_t] + b_y) [bits]
};

// A head layer: raw = W h + b, split into the constrained parameters.
struct NtmHeadLayer {
  Mat weight;  // [W + 6 (+ 2W for the write head), H]
  Vec bias;
};

class NtmCopyModel {
 public:
  // Reads and checks the configuration (__metadata__ bits, max_length,
  // memory_rows, memory_width, controller) and every tensor's shape and values;
  // a file that does not fit throws one InputError naming it.
  static NtmCopyModel load(const SafetensorsFile& f);

  int64_t bits() const { return bits_; }
  int64_t maxLength() const { return max_length_; }
  int64_t rows() const { return rows_; }
  int64_t width() const { return width_; }
  int64_t controllerSize() const { return controller_.hidden(); }

  // The copy task's input for `sequence` [L, bits]: L steps of its bits, one
  // step of the delimiter channel, L steps of zeros.                 [2L + 1, bits + 1]
  Mat copyInput(const Mat& sequence) const;
  // Runs the machine over `x` [T, bits + 1] from its initial state.
  std::vector<NtmCopyStep> run(const Mat& x) const;

 private:
  int64_t bits_ = 0, max_length_ = 0, rows_ = 0, width_ = 0;
  LstmCell controller_;
  NtmHeadLayer write_head_, read_head_;
  Mat output_weight_;  // [bits, H + W]
  Vec output_bias_;
  Mat memory0_;              // M_0 [N, W]
  Vec read0_;                // r_0 [W]
  Vec write_w0_, read_w0_;   // w_0 of each head [N], normalised
};

}  // namespace attn
