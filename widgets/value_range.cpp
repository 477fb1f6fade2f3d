#include "widgets/value_range.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// Running min / max / max |v| over finite entries.
struct Extent {
  float lo = INFINITY, hi = -INFINITY, abs_max = 0.0f;
  void add(const float* v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      if (!std::isfinite(v[i])) continue;
      lo = std::min(lo, v[i]);
      hi = std::max(hi, v[i]);
      abs_max = std::max(abs_max, std::abs(v[i]));
    }
  }
  ValueRange range(bool signed_values) const {
    ValueRange r;
    if (!std::isfinite(lo)) return r;
    // Signed data, or any negative value, is drawn symmetric about zero.
    if (signed_values || lo < 0.0f) {
      r.diverging = true;
      r.lo = -abs_max;
      r.hi = abs_max;
      if (!(r.hi > 0.0f)) r.lo = -1.0f, r.hi = 1.0f;
    } else {
      r.hi = hi;
      if (!(r.hi > 0.0f)) r.hi = 1.0f;
    }
    return r;
  }
};

}  // namespace

ValueRange valueRange(const std::vector<const Mat*>& mats, bool signed_values) {
  Extent e;
  for (const Mat* m : mats)
    if (m) e.add(m->data(), m->size());
  return e.range(signed_values);
}

ValueRange valueRange(const Mat& m, bool signed_values) { return valueRange(std::vector<const Mat*>{&m}, signed_values); }

ValueRange valueRange(const Array& a, bool signed_values) {
  Extent e;
  e.add(a.data.data(), static_cast<int64_t>(a.data.size()));
  return e.range(signed_values);
}

ValueRange weightsRange(const Result& r) {
  std::vector<const Mat*> ms;
  for (const Mat& w : r.weights) ms.push_back(&w);
  return valueRange(ms, !r.weights_are_probabilities);
}

Colormap colormapFor(const ValueRange& range, Colormap chosen) {
  if (range.diverging) return colormapIsDiverging(chosen) ? chosen : Colormap::Coolwarm;
  return chosen;
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
