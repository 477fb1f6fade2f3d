// Value ranges and colorbar ticks for drawing matrices: GUI-free, shared by
// the ImGui views and the QPainter figure export so both show the same
// scale. Probabilities map [0, max] to the colormap; signed data maps
// [−m, m] (m = max |v|) to a diverging colormap centred on 0.
#pragma once

#include "engine/result.h"
#include "engine/tensor.h"
#include "widgets/colormap.h"

#include <string>
#include <vector>

namespace attn {

// How values are spread over the colormap. Linear; Power: u^γ (γ < 1 lifts
// small weights); Log: log10 over `decades` decades below the top, so a
// weight 1000× smaller than the largest is still visible. Signed ranges
// apply the curve to |v| on each side of 0.
enum class ScaleMode { Linear, Log, Power };

struct ValueRange {
  float lo = 0.0f, hi = 1.0f;
  bool diverging = false;  // centred on 0: lo == −hi
  ScaleMode mode = ScaleMode::Linear;
  float gamma = 0.5f;    // Power
  float decades = 3.0f;  // Log
};

// Position of `v` on the colormap, 0 … 1, under the range and its mode (the
// heatmap shader computes the same).
float scaleToUnit(const ValueRange& r, float v);
// Ticks for a colour bar of the range: decades for a log scale, else niceTicks.
std::vector<float> scaleTicks(const ValueRange& r, int max_ticks);

// The colour scale a user picks (a log scale spans ⌊log10 keys⌋ + 1 decades,
// 3 to 6). Auto is Log from kLogScaleKeys keys on
// (at that length a row's few large weights leave the rest of a linear
// heatmap dark), else Linear. Percentile clips the top of the range at the
// given percentile of the values' magnitudes, linearly, so a few outliers do
// not wash out the rest.
enum class ScaleKind { Auto, Linear, Log, Power, Percentile };
struct ColorScale {
  ScaleKind kind = ScaleKind::Auto;
  float gamma = 0.5f;         // Power, in (0, 4]
  float percentile = 99.0f;   // Percentile, in [50, 100]
};
constexpr int64_t kLogScaleKeys = 512;
const std::vector<std::string>& scaleKindNames();  // "auto", "linear", "log", "power", "percentile"
bool scaleKindFromName(const std::string& name, ScaleKind& out);
// `base` (its lo, hi, diverging) under the scale `s`; `values` (n of them) are
// read only for Percentile.
ValueRange withScale(ValueRange base, const ColorScale& s, int64_t keys, const float* values, int64_t n);

// From precomputed stats (engine's ValueStats, filled once per result):
// [0, max] for non-negative data, [−m, m] with m = max |v| for signed data.
// Constant or empty data still yields a non-empty range.
ValueRange valueRange(const ValueStats& stats, bool signed_values);
// The range of a result's main weights, shared by all its heads ([0, 1] where Result::weights_unit_range).
ValueRange weightsRange(const Result& r);
// One range over several results' weights (the family view's shared colour
// scale): their union, diverging when any of them is signed.
ValueRange sharedWeightsRange(const std::vector<const Result*>& results);
// A result's weights range under a colour scale, the percentile read from
// `head`'s weights (dense, or its CSR entries).
ValueRange scaledWeightsRange(const ValueRange& base, const ColorScale& s, const Result& r, int head);
// The range of one extra array ([0, 1] where Extra::unit_range).
ValueRange extraRange(const Extra& e);

// The colormap to draw with: the user's choice for non-negative data; for
// diverging data that choice if it is diverging, else Coolwarm.
Colormap colormapFor(const ValueRange& range, Colormap chosen);

// Draw every n-th label so labels `label_px` long (along the axis) do not
// overlap on cells `cell_px` apart: n = ⌈label_px / cell_px⌉, at least 1; a
// degenerate cell (≤ 0, NaN) leaves only the first label.
int labelStride(float cell_px, float label_px);

// "Nice" tick values (1, 2, 2.5, 5 × 10^k steps) inside [lo, hi], at most `max_ticks`;
// a range symmetric about 0 (a signed scale) gets symmetric ticks, 0 and at least ±one step.
std::vector<float> niceTicks(float lo, float hi, int max_ticks);
// "16384" → "16,384".
std::string groupDigits(int64_t n);
// Short label for a tick or a hovered value: "0.25", "1e-04", "-3.2".
std::string formatValueShort(double v);
// Opacity (0..0.9) of a token line of weight w, the same on screen and in
// exported figures: |w| relative to the largest |weight| of the result.
float lineOpacity(float w, const ValueStats& stats);

// Rows and columns for n panels in a w×h area, chosen so the largest square
// fits in each cell once `overhead_w`/`overhead_h` (titles, labels) is taken off.
struct GridLayout {
  int cols = 1, rows = 1;
  float cell_w = 0.0f, cell_h = 0.0f;
};
GridLayout bestGrid(int n, float w, float h, float overhead_w, float overhead_h);

// Human-readable operation count: "1.2 MFLOP", "3.4 GFLOP".
std::string formatFlops(double flops);

}  // namespace attn
