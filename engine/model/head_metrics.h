// What a head does, as numbers: the summaries of the model view's table,
// and attention rollout (Abnar & Zuidema 2020).
#pragma once

#include "engine/model/model.h"

#include <vector>

namespace attn {

struct HeadSummary {
  int64_t layer = 0, head = 0;
  double previous_token = 0;  // mean over queries i ≥ 1 of A[i, i−1]
  double sink = 0;            // mean over queries of A[i, 0] (first-token share)
  double induction = 0;       // on a repeated random sequence t₁…t_T t₁…t_T: mean over the second copy of
                              // A[i, i−T+1] (the token after the previous occurrence of the current one)
  double mean_distance = 0;   // mean over queries of Σ_j A[i, j]·|i − j|
  double entropy = 0;         // mean over queries of −Σ_j A[i, j] ln A[i, j], in nats
};

// Summaries of every head: previous-token, sink, distance and entropy from
// `run`; induction from `repeated` (a run on repeatedRandomIds()).
std::vector<HeadSummary> summarizeHeads(const ModelRun& run, const ModelRun& repeated);
// 2·T ids: T seeded random ids (avoiding special tokens) then the same T
// again; BERT's are wrapped in [CLS] … [SEP] (2·T + 2 ids), ready for
// runModelIds. summarizeHeads() finds T from the run's length and causality.
std::vector<int32_t> repeatedRandomIds(const Model& m, int64_t T, uint64_t seed);

// Rollout with the residual identity: Â_l = ½·mean_h A_l,h + ½·I, rows
// renormalised; R_0 = Â_0, R_l = Â_l · R_{l−1}. Returns R_l per layer [L, L].
std::vector<Mat> attentionRollout(const ModelRun& run);

}  // namespace attn
