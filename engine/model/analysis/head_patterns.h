// An efficient variant on a real head: the registry's patterns (sparse,
// local, adaptive span, LSH — every variant that lists the "compare" view)
// run on one trained head's own projected queries, keys and values, and how
// much of that head's real attention mass the pattern keeps.
#pragma once

#include "engine/model/blocks/run.h"
#include "engine/run_context.h"
#include "engine/registry.h"
#include "engine/result.h"

namespace attn {

struct HeadPattern {
  int64_t layer = 0, head = 0;
  Result result;   // the variant on Inputs{q, k, v = the head's [L, d_head], heads = 1, projected}
  Mat real;        // the head's real attention [L, L]
  Mat mass_kept;   // [1, L]: Σ_{j ∈ pattern(i)} real_ij, the real mass on the keys the pattern keeps
  double mass_kept_mean = 0;
};

// Variants usable here: those whose views include "compare".
std::vector<const VariantInfo*> headPatternVariants();
// A model's own sliding window (Mistral: query i keeps keys j with
// i − W < j ≤ i) as a registry pattern: local-1d with query blocks of one
// position (l_q = 1) and l_m = W − 1 positions of memory before them, the
// same keys. On the head's own q, k it gives the real head's map back.
struct WindowPattern {
  const VariantInfo* variant = nullptr;  // null: the run has no window
  Params params;
  std::string title;  // "window W = 8 (this model)"
};
WindowPattern slidingWindowPattern(const ModelRun& run);

// Throws InputError for a layer/head out of range or a variant not in headPatternVariants().
HeadPattern applyPatternToHead(const VariantInfo& variant, const Params& params, const ModelRun& run, int64_t layer,
                               int64_t head, const RunContext& ctx = {});

}  // namespace attn
