// A pattern against full attention on the same inputs: what does the pattern
// lose? Works for every variant that lists the "compare" view. Such a variant
// records its projected per-head inputs in Result::inputs as "q", "k", "v"
// ([L, H·d_head], head h in columns [h·d_head, (h+1)·d_head)), its weights
// (dense or sparse) and its output [L, H·d_head] (heads concatenated, before
// any W^o), and scores with 1/√d_head. The baseline is full causal softmax
// attention (key j ≤ query i) on the same q, k, v and scale.
#pragma once

#include "engine/result.h"
#include "engine/run_context.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace attn {

struct Comparison {
  std::string variant;
  int heads = 0;
  int64_t length = 0;
  // Per head [L, L], only where denseFits(): full attention, the pattern's
  // weights and pattern − full. Empty at large L, where only the numbers exist.
  std::vector<Mat> full, pattern, difference;
  // [H, L]: per head and query, the share of full attention's mass on keys
  // the pattern keeps (Σ_{j ∈ pattern(i)} p_ij), and KL(full_i ‖ pattern_i)
  // in nats (+∞ where full attention puts mass on a key the pattern drops).
  Mat mass_kept, kl;
  double mass_kept_mean = 0;    // over heads and queries
  double kl_mean = 0;           // over heads and queries; +∞ when any query's KL is
  int64_t kl_finite = 0;        // how many (head, query) pairs have a finite KL
  double kl_finite_mean = 0;    // mean over those
  double output_rel_error = 0;  // ‖O_pattern − O_full‖_F / ‖O_full‖_F
  // Attention alone (scores, softmax, weighted sum; no projections):
  double full_flops = 0, pattern_flops = 0;
  double full_bytes = 0, pattern_bytes = 0;   // weights held: dense [H, L, L] vs the pattern's entries
  int64_t full_connections = 0, pattern_connections = 0;  // summed over heads
};

// Whether `r` carries what compareWithFull() needs (q, k, v, output, weights).
bool canCompare(const Result& r);

// Full attention is computed in row blocks, so at L = 16,384 the numbers come
// without an L×L allocation; the dense matrices only where denseFits().
// Throws InputError when !canCompare(r).
Comparison compareWithFull(const Result& r, const RunContext& ctx = {});

nlohmann::json comparisonToJson(const Comparison& c);  // the numbers (no matrices)

}  // namespace attn
