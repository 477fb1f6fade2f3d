// What a variant returns: data, not pictures. Views are generic over it.
#pragma once

#include "engine/params.h"
#include "engine/tensor.h"

#include <map>
#include <string>
#include <vector>

namespace attn {

// How a view should treat an extra array.
enum class ExtraKind {
  Matrix,         // a 2-D array with its own axes, drawn as a heatmap (e.g. PE [L, d])
  Weights,        // [H, Lq, Lk] attention-like weights to show next to the main ones
  QueryPosition,  // [Lq]: a fractional key position per query, drawn as a marker (p_t)
  QueryWindow,    // [Lq, 2]: first and last allowed key per query, drawn as an outline
  TokenValues,    // [L]: one value per token, drawn as a strip or bars
  Scalar,         // [1]: a single number shown in the summary
};

std::string extraKindName(ExtraKind k);

// Smallest and largest finite value of an array, computed once per result
// (runVariant) so views and figures never rescan [H, L, L] per frame.
struct ValueStats {
  float min = 0.0f, max = 0.0f;
  static ValueStats of(const float* data, int64_t n);
};

struct Extra {
  std::string name;   // file stem under extras/, paper symbol where there is one ("p_t", "pe")
  std::string label;  // caption in views and figures ("predicted position p_t")
  ExtraKind kind = ExtraKind::Matrix;
  Array value;
  std::string row_axis, col_axis;  // Matrix: axis captions ("position", "dimension")
  bool signed_values = false;      // Matrix: draw with a diverging colormap centred on 0
  ValueStats stats;                // filled by runVariant
};

struct Result {
  std::string variant;
  Params params;
  std::vector<std::string> q_tokens, k_tokens;  // axis labels: rows are queries, columns keys

  // Per head h: weights[h] is [Lq, Lk] after mask and softmax; scores[h] is
  // the same shape before mask and softmax. For non-attention variants
  // (positional encodings) weights holds the matrix the main view shows.
  std::vector<Mat> weights;
  std::vector<Mat> scores;
  Mat mask;    // [Lq, Lk], 1 = key allowed, 0 = masked; empty means all allowed
  Mat output;  // [Lq, d_out]; empty where the variant has no output
  bool weights_are_probabilities = true;  // false: signed values, diverging colormap
  std::string weights_label = "attention weight";
  std::string scores_label = "pre-softmax score";

  ValueStats weights_stats;  // over all heads; filled by runVariant

  std::vector<Extra> extras;
  std::map<std::string, Mat> inputs;  // every tensor used, by paper symbol: q, k, v, x, w_q, ...

  double flops = 0;            // floating-point operations of the computation
  double compute_seconds = 0;  // engine time alone, set by runVariant

  int heads() const { return static_cast<int>(weights.size()); }
  int64_t queries() const { return weights.empty() ? 0 : weights[0].rows(); }
  int64_t keys() const { return weights.empty() ? 0 : weights[0].cols(); }
  const Extra* findExtra(const std::string& name) const;
  const Extra* firstExtra(ExtraKind kind) const;  // e.g. the QueryPosition overlay
  // Fills weights_stats and every extra's stats.
  void computeStats();
};

}  // namespace attn
