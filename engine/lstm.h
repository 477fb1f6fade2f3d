// An LSTM cell (Hochreiter & Schmidhuber 1997) as torch.nn.LSTMCell computes
// it, for the controllers and encoders of the models in assets/trained/:
//   [i; f; g; o] = W_ih x + b_ih + W_hh h + b_hh      (four blocks of H rows)
//   c' = σ(f) ⊙ c + σ(i) ⊙ tanh(g),   h' = σ(o) ⊙ tanh(c')
#pragma once

#include "engine/model/checkpoint/safetensors.h"
#include "engine/tensor.h"

#include <string>

namespace attn {

struct LstmCell {
  Mat w_ih;  // [4H, I]
  Mat w_hh;  // [4H, H]
  Vec bias;  // [4H]: b_ih + b_hh

  int64_t hidden() const { return w_hh.cols(); }
  int64_t inputs() const { return w_ih.cols(); }

  // torch's LSTMCell tensors under `prefix` ("controller."): weight_ih
  // [4H, I], weight_hh [4H, H], bias_ih and bias_hh [4H] (engine/trained.h
  // checks each shape).
  static LstmCell load(const SafetensorsFile& f, const std::string& prefix, int64_t inputs, int64_t hidden);

  // One step: x [I]; h, c [H] are read and replaced by h', c'.
  void step(const Vec& x, Vec& h, Vec& c) const;
};

}  // namespace attn
