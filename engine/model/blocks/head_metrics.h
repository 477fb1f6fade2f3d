// What a head does, as numbers: the summaries of the model view's table,
// and attention rollout (Abnar & Zuidema 2020).
#pragma once

#include "engine/model/blocks/run.h"

#include <string>
#include <vector>

namespace attn {

// A head whose first-token share is at least this much is marked as an
// attention sink in the model grid (a uniform causal head over L tokens
// gives ≈ ln L / L: 0.08 at L = 40, so 0.3 is far above chance).
constexpr double kSinkShare = 0.3;

// Jensen–Shannon divergence of two distributions p, q over the same keys, in
// bits: ½ Σ p log₂(p/m) + ½ Σ q log₂(q/m), m = ½(p + q); 0 · log 0 = 0.
double jensenShannonBits(const float* p, const float* q, int64_t n);

// The head table's nine columns, in HeadSummary's order (layer, head, the
// seven numbers), as the screen's table and the figures head them.
const std::vector<std::string>& headTableColumns();

// Summaries of every head: previous-token, sink, distance, entropy and group
// divergence as `run`'s pass streamed them (whatever maps it kept: the same
// numbers); induction from `repeated` (a run on repeatedRandomIds(), every
// map kept). InputError when `run` streamed none (a run after a KV cache).
std::vector<HeadSummary> summarizeHeads(const ModelRun& run, const ModelRun& repeated);
// The same columns from maps a run kept ([layer][head] [rows, keys]: an
// encoder–decoder's encoder, decoder or cross-attention), without induction
// or groups; previous-token reads A[i, i − 1] and the sink key 0, as
// summarizeHeads does (for cross-attention: target i against source i − 1).
std::vector<HeadSummary> summarizeMaps(const std::vector<std::vector<Mat>>& maps);
// 2·T ids: T seeded random ids (avoiding special tokens) then the same T
// again; BERT's are wrapped in [CLS] … [SEP] (2·T + 2 ids), ready for
// runModelIds. summarizeHeads() finds T from the run's length and causality.
std::vector<int32_t> repeatedRandomIds(const Model& m, int64_t T, uint64_t seed);

// Rollout with the residual identity: Â_l = ½·mean_h A_l,h + ½·I, rows
// renormalised; R_0 = Â_0, R_l = Â_l · R_{l−1}. From every map of a run
// ([layer][head] [L, L]: a text model's, a ViT's); returns R_l per layer [L, L].
std::vector<Mat> attentionRollout(const std::vector<std::vector<Mat>>& attention);

}  // namespace attn
