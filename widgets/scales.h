// GUI-free view arithmetic shared by the ImGui views and the QPainter figure
// export, so the screen and the exported figure agree: colour ranges, colorbar
// ticks, label thinning.
#pragma once

#include "engine/result.h"

#include <vector>

namespace attn {

struct ValueRange {
  float lo = 0, hi = 1;
  bool diverging = false;  // centred on 0: lo = −hi
  float normalise(float v) const { return hi > lo ? (v - lo) / (hi - lo) : 0.5f; }
};

// Range of a matrix: [0, max] for non-negative data (attention weights),
// symmetric [−a, a] for signed data, where a = max |v|.
ValueRange matrixRange(const Mat& m, bool signed_values);

// One range for all heads of a result, so heads are comparable side by side.
ValueRange weightsRange(const Result& r);

// About `count` round tick values covering [lo, hi] (1, 2, 5 × 10^k steps).
std::vector<float> niceTicks(float lo, float hi, int count);

// Draw every n-th label so labels of height `label_px` do not overlap on
// cells of `cell_px`.
int labelStride(float cell_px, float label_px);

}  // namespace attn
