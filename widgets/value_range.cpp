#include "widgets/value_range.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

ValueRange valueRange(const ValueStats& stats, bool signed_values) {
  ValueRange r;
  // Signed data, or any negative value, is drawn symmetric about zero.
  if (signed_values || stats.min < 0.0f) {
    const float m = std::max(std::abs(stats.min), std::abs(stats.max));
    r.diverging = true;
    r.lo = m > 0.0f ? -m : -1.0f;
    r.hi = m > 0.0f ? m : 1.0f;
  } else {
    r.hi = stats.max > 0.0f ? stats.max : 1.0f;
  }
  return r;
}

ValueRange weightsRange(const Result& r) { return valueRange(r.weights_stats, !r.weights_are_probabilities); }

ValueRange sharedWeightsRange(const std::vector<const Result*>& results) {
  ValueStats all;
  bool any_signed = false;
  for (size_t i = 0; i < results.size(); ++i) {
    const ValueStats& s = results[i]->weights_stats;
    all.min = i == 0 ? s.min : std::min(all.min, s.min);
    all.max = i == 0 ? s.max : std::max(all.max, s.max);
    any_signed = any_signed || !results[i]->weights_are_probabilities;
  }
  return valueRange(all, any_signed);
}

ValueRange extraRange(const Extra& e) { return valueRange(e.stats, e.signed_values); }

Colormap colormapFor(const ValueRange& range, Colormap chosen) {
  if (range.diverging) return colormapIsDiverging(chosen) ? chosen : Colormap::Coolwarm;
  return chosen;
}

int labelStride(float cell_px, float label_px) {
  if (!(cell_px > 0.0f)) return 1 << 30;
  return static_cast<int>(std::clamp(std::ceil(label_px / cell_px), 1.0f, static_cast<float>(1 << 30)));
}

std::vector<float> niceTicks(float lo, float hi, int max_ticks) {
  std::vector<float> out;
  if (!(hi > lo) || max_ticks < 2) return out;
  const double raw = (static_cast<double>(hi) - lo) / (max_ticks - 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag * 10.0;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (mag * m >= raw) {
      step = mag * m;
      break;
    }
  const double first = std::ceil(lo / step - 1e-6) * step;
  for (double t = first; t <= hi + step * 1e-6; t += step) out.push_back(std::abs(t) < step * 1e-6 ? 0.0f : static_cast<float>(t));
  return out;
}

std::string formatValueShort(double v) {
  char buf[32];
  const double a = std::abs(v);
  if (v == 0.0)
    std::snprintf(buf, sizeof buf, "0");
  else if (a >= 1e4 || a < 1e-3)
    std::snprintf(buf, sizeof buf, "%.2g", v);
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

float lineOpacity(float w, const ValueStats& stats) {
  const float norm = std::max(std::abs(stats.min), std::abs(stats.max));
  return norm > 0.0f ? std::min(1.0f, std::abs(w) / norm) * 0.9f : 0.0f;
}

GridLayout bestGrid(int n, float w, float h, float overhead_w, float overhead_h) {
  GridLayout best;
  float best_side = -1.0f;
  for (int c = 1; c <= std::max(1, n); ++c) {
    const int r = (n + c - 1) / c;
    const float cw = w / static_cast<float>(c), ch = h / static_cast<float>(r);
    const float side = std::min(cw - overhead_w, ch - overhead_h);
    if (side > best_side) {
      best_side = side;
      best = {c, r, cw, ch};
    }
  }
  return best;
}

std::string formatFlops(double flops) {
  static const char* units[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP"};
  int u = 0;
  while (flops >= 1000.0 && u < 4) {
    flops /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g %s", flops, units[u]);
  return buf;
}

}  // namespace attn
