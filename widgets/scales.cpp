#include "widgets/scales.h"

#include <algorithm>
#include <cmath>

namespace attn {

ValueRange matrixRange(const Mat& m, bool signed_values) {
  ValueRange r;
  if (m.size() == 0) return r;
  if (signed_values || m.minCoeff() < 0.0f) {
    const float a = std::max(m.cwiseAbs().maxCoeff(), 1e-12f);
    return {-a, a, true};
  }
  return {0.0f, std::max(m.maxCoeff(), 1e-12f), false};
}

ValueRange weightsRange(const Result& r) {
  ValueRange out{0.0f, 1e-12f, false};
  bool first = true;
  for (const Mat& w : r.weights) {
    const ValueRange h = matrixRange(w, !r.weights_are_probabilities);
    if (first) out = h;
    out.lo = std::min(out.lo, h.lo);
    out.hi = std::max(out.hi, h.hi);
    out.diverging = out.diverging || h.diverging;
    first = false;
  }
  if (out.diverging) {
    const float a = std::max(-out.lo, out.hi);
    out.lo = -a;
    out.hi = a;
  }
  return out;
}

std::vector<float> niceTicks(float lo, float hi, int count) {
  std::vector<float> ticks;
  if (!(hi > lo) || count < 2) return {lo};
  const double raw = (hi - lo) / (count - 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double step = (norm < 1.5 ? 1.0 : norm < 3.5 ? 2.0 : norm < 7.5 ? 5.0 : 10.0) * mag;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-6; t += step)
    ticks.push_back(std::abs(t) < step * 1e-6 ? 0.0f : static_cast<float>(t));
  return ticks;
}

int labelStride(float cell_px, float label_px) {
  if (cell_px <= 0.0f) return 1 << 30;
  return std::max(1, static_cast<int>(std::ceil(label_px / cell_px)));
}

}  // namespace attn
