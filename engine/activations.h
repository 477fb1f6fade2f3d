// Scalar activations shared by the recurrent variants and trained models
// (act, ntm-copy). The LSTM cell (engine/lstm.cpp) applies σ to whole gate
// vectors with Eigen's arrays instead.
#pragma once

#include <cmath>

namespace attn {

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace attn
