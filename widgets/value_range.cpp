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

float scaleToUnit(const ValueRange& r, float v) {
  auto shape = [&](float u) {  // u in [0, 1]
    switch (r.mode) {
      case ScaleMode::Linear: return u;
      case ScaleMode::Power: return std::pow(u, r.gamma);
      case ScaleMode::Log: return u > 0.0f ? std::clamp(1.0f + std::log10(u) / r.decades, 0.0f, 1.0f) : 0.0f;
    }
    return u;
  };
  if (!(r.hi > r.lo)) return 0.5f;
  if (r.diverging) {
    const float u = std::clamp(std::abs(v) / r.hi, 0.0f, 1.0f);
    return 0.5f + (v < 0.0f ? -0.5f : 0.5f) * shape(u);
  }
  return shape(std::clamp((v - r.lo) / (r.hi - r.lo), 0.0f, 1.0f));
}

std::vector<float> scaleTicks(const ValueRange& r, int max_ticks) {
  if (r.mode != ScaleMode::Log) return niceTicks(r.lo, r.hi, max_ticks);
  // hi·10^−k for k = 0 … decades, on both sides of 0 for a signed range; 0 at the bottom.
  std::vector<float> out;
  const int decades = static_cast<int>(std::floor(r.decades));
  const int step = std::max(1, (decades + 1) / std::max(1, r.diverging ? max_ticks / 2 : max_ticks - 1));
  for (int k = decades; k >= 0; k -= step) out.push_back(r.hi * static_cast<float>(std::pow(10.0, -k)));
  if (r.diverging) {
    std::vector<float> both;
    for (auto it = out.rbegin(); it != out.rend(); ++it) both.push_back(-*it);
    both.push_back(0.0f);
    both.insert(both.end(), out.begin(), out.end());
    return both;
  }
  out.insert(out.begin(), r.lo);
  return out;
}

const std::vector<std::string>& scaleKindNames() {
  static const std::vector<std::string> names = {"auto", "linear", "log", "power", "percentile"};
  return names;
}

bool scaleKindFromName(const std::string& name, ScaleKind& out) {
  const std::vector<std::string>& names = scaleKindNames();
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return false;
  out = static_cast<ScaleKind>(it - names.begin());
  return true;
}

ValueRange withScale(ValueRange base, const ColorScale& s, int64_t keys, const float* values, int64_t n) {
  ScaleKind kind = s.kind;
  if (kind == ScaleKind::Auto) kind = keys >= kLogScaleKeys ? ScaleKind::Log : ScaleKind::Linear;
  base.mode = kind == ScaleKind::Log ? ScaleMode::Log : kind == ScaleKind::Power ? ScaleMode::Power : ScaleMode::Linear;
  base.gamma = std::clamp(s.gamma, 0.05f, 4.0f);
  // A uniform row of L keys sits at 1/L of a peaked one: the log scale spans
  // one decade more than that (3 to 6 decades).
  base.decades = std::clamp(std::floor(std::log10(static_cast<float>(std::max<int64_t>(keys, 1)))) + 1.0f, 3.0f, 6.0f);
  if (kind == ScaleKind::Percentile && values && n > 0) {
    // The percentile of the non-zero magnitudes (zeros are masked or absent keys).
    // At most 65,536 values, evenly spaced: cheap enough for every frame at L = 16,384.
    const int64_t stride = std::max<int64_t>(1, n / 65536);
    std::vector<float> mags;
    mags.reserve(static_cast<size_t>(n / stride + 1));
    for (int64_t i = 0; i < n; i += stride)
      if (values[i] != 0.0f && std::isfinite(values[i])) mags.push_back(std::abs(values[i]));
    if (!mags.empty()) {
      const double p = std::clamp(static_cast<double>(s.percentile), 50.0, 100.0) / 100.0;
      const size_t k = std::min(mags.size() - 1, static_cast<size_t>(p * static_cast<double>(mags.size() - 1) + 0.5));
      std::nth_element(mags.begin(), mags.begin() + static_cast<std::ptrdiff_t>(k), mags.end());
      const float top = mags[k];
      if (top > 0.0f) {
        base.hi = std::min(base.hi, top);
        if (base.diverging) base.lo = -base.hi;
      }
    }
  }
  return base;
}

namespace {

std::pair<const float*, int64_t> headWeightValues(const Result& r, int head) {
  const size_t h = static_cast<size_t>(std::clamp(head, 0, std::max(0, r.heads() - 1)));
  if (h < r.weights.size()) return {r.weights[h].data(), r.weights[h].size()};
  if (h < r.sparse.size()) return {r.sparse[h].values.data(), static_cast<int64_t>(r.sparse[h].values.size())};
  return {nullptr, 0};
}

}  // namespace

ValueRange scaledWeightsRange(const ValueRange& base, const ColorScale& s, const Result& r, int head) {
  const auto [values, n] = headWeightValues(r, head);
  return withScale(base, s, r.keys(), values, n);
}

ValueRange weightsRange(const Result& r) {
  return r.weights_unit_range ? ValueRange{0.0f, 1.0f} : valueRange(r.weights_stats, !r.weights_are_probabilities);
}

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

ValueRange extraRange(const Extra& e) { return e.unit_range ? ValueRange{0.0f, 1.0f} : valueRange(e.stats, e.signed_values); }

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
  if (lo < 0.0f && std::abs(lo + hi) <= 1e-6f * hi) {
    // A signed scale, symmetric about 0: ticks at 0 and ±k·step, the step the
    // largest nice value that leaves at least one tick on each side.
    const int per_side = std::max(1, (max_ticks - 1) / 2);
    const double target = static_cast<double>(hi) / per_side;
    const double mag = std::pow(10.0, std::floor(std::log10(target)));
    double step = mag;
    for (double m : {1.0, 2.0, 2.5, 5.0})
      if (mag * m <= target * (1 + 1e-9)) step = mag * m;
    const int k = static_cast<int>(std::floor(hi / step + 1e-6));
    for (int i = -k; i <= k; ++i) out.push_back(static_cast<float>(i * step));
    return out;
  }
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

std::string groupDigits(int64_t n) {
  const std::string digits = std::to_string(n);
  const size_t sign = n < 0 ? 1 : 0;
  std::string out = digits.substr(0, sign);
  for (size_t i = sign; i < digits.size(); ++i) {
    if (i > sign && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
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
