// Two runs of one architecture side by side: two prompts on one model, or
// one prompt on a model and its fine-tune. Per (layer, head) the difference
// of the maps A − B and the Jensen–Shannon divergence of their rows, and the
// heads ranked by it (the compare view and `attnlab model compare`).
#pragma once

#include "engine/model/blocks/run.h"
#include "engine/run_context.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn {

// Which positions of A and B stand for each other: the longest common
// subsequence of the token ids (ties broken toward the earliest pairs, as a
// left-to-right diff would), or every position when the ids are the same.
struct TokenAlignment {
  int64_t a_tokens = 0, b_tokens = 0;
  std::vector<std::pair<int64_t, int64_t>> pairs;  // (position in A, position in B), increasing in both
  bool positional() const { return a_tokens == b_tokens && static_cast<int64_t>(pairs.size()) == a_tokens; }
  // "position by position (16 tokens)" or "aligned by token: 14 of 16 / 15 matched"
  std::string describe() const;
};
TokenAlignment alignTokens(const std::vector<int32_t>& a, const std::vector<int32_t>& b);

// Where the prompts differ, the maps are read on the matched pairs only: row
// i of A_aligned is A[a_i, a_j] over the matched j, renormalised to sum to 1
// (the weight a query put on tokens B lacks is left out, and the rest compared
// as a distribution, which JS needs); the same for B. Aligned position by
// position, nothing is cut and the renormalisation changes nothing.
constexpr const char* kAlignedRows = "rows restricted to the matched keys and renormalised to sum to 1";

struct RunComparison {
  int64_t layers = 0, heads = 0;
  TokenAlignment alignment;
  std::vector<std::string> tokens;  // the matched tokens, as A spells them
  // [layer][head] [n, n], n = pairs: A_aligned − B_aligned.
  std::vector<std::vector<Mat>> difference;
  // [layer · heads + head]: the mean over the n aligned rows of
  // JS(A_aligned[i, ·] ‖ B_aligned[i, ·]) in bits (jensenShannonBits).
  std::vector<double> js;
  std::vector<int64_t> ranking;  // indices into js, largest first (ties: lower layer, then head)
};

// The aligned map of one head of `run` (side 0: A's positions of the pairs, 1: B's) [n, n].
Mat alignedMap(const ModelRun& run, const TokenAlignment& t, int side, int64_t layer, int64_t head);

// Both runs must keep every map (MapsChoice::Mode::All from position 0) and
// have the same layers and heads; else InputError naming both ("A: …, B: …").
RunComparison compareRuns(const ModelRun& a, const ModelRun& b, const RunContext& ctx = {});

// Two checkpoints one comparison can read: the same layers, heads and
// vocabulary (tokenizer size). InputError in one line naming both otherwise.
void checkComparable(const ModelInfo& a, int32_t a_vocab, const ModelInfo& b, int32_t b_vocab);

}  // namespace attn
