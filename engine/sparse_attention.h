// Attention over a CSR pattern: the compute shared by the Sparse Transformer
// (Child et al. 2019) and Image Transformer local attention (Parmar et al.
// 2018). A pattern is an index rule; buildPattern() turns the rule into
// SparseRows and sparseMultiHeadAttention() scores, softmaxes and sums only
// those entries, so memory and time follow the number of connections, never
// L×L.
#pragma once

#include "engine/inputs.h"
#include "engine/result.h"
#include "engine/run_context.h"
#include "engine/sparse.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace attn {

// Appends row i's keys in ascending order to `keys` and, for each, the bits
// of the sub-patterns that admit it to `sets`. Called concurrently for
// different rows: it must only read shared state.
using PatternRule = std::function<void(int64_t i, std::vector<int32_t>& keys, std::vector<uint8_t>& sets)>;

// The pattern [rows, cols] of `rule`, built in parallel over blocks of rows
// (values left empty). Calls ctx.check() between blocks. Throws InputError,
// naming `what` (the variant), once the entries outgrow the memory available.
SparseRows buildPattern(const std::string& what, int64_t rows, int64_t cols, const PatternRule& rule, const RunContext& ctx);

// One head over pattern `s`, query rows [row0, row1):
//   score_ij = q_i · k_j · scale            for j in s's row i only
//   p_ij     = softmax_j(score_ij)           stored in s.values
//   out_i    = Σ_j p_ij v_j                  [d_v]
// A row with no key gets zero weights and a zero output. Contiguous runs of
// keys are scored and summed as one GEMV each. Single-threaded: callers
// split rows across threads. s.values must already hold nnz entries.
void attendSparseRows(const MatRef& q, const MatRef& k, const MatRef& v, float scale, SparseRows& s,
                      Eigen::Ref<Mat> out, int64_t row0, int64_t row1);

// Multi-head self-attention of the input over one pattern per head, with
// multi_head.h's weights (same seed, same W^q, W^k, W^v; no W^o):
//   Q_h = X W^q_h, K_h = X W^k_h, V_h = X W^v_h         [L, d_head], d_head = d/H
//   head_h = sparse softmax(Q_h K_hᵀ / √d_head) V_h     over patterns[h] only
// Fills r.sparse (values = weights), r.output = Concat(head_1 … head_H)
// [L, d], r.inputs (x, q, k, v projected [L, H·d_head], w_q, w_k, w_v: the
// engine/compare.h contract), r.flops and Scalar extras comparing the pattern
// with dense causal attention. Dense weights, scores and the mask (union of
// the heads' patterns) are filled only where denseFits() and memory allows.
void sparseMultiHeadAttention(const Inputs& in, std::vector<SparseRows> patterns, const RunContext& ctx,
                              Result& r);

}  // namespace attn
