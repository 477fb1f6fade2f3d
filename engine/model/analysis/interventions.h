// Which heads matter, not only where they look: a text model's prediction
// of one token at one position under edits of its own pass (run.h
// Interventions). TransformerLens' ablation, activation patching, logit lens
// and direct logit attribution, on the engine's families:
//   ablation      a head's output before W_O zeroed or replaced by its mean over
//                 the positions (Michel et al. 2019);
//   importance    every head ablated alone: Δ log p(target), layers × heads,
//                 each pass resumed at the ablated head's layer from the
//                 cached stream entering it;
//   patching      a corrupted prompt's pass with one head's output, or the
//                 stream entering one layer at one position, taken from the
//                 clean prompt's pass (Meng et al. 2022; Wang et al. 2023);
//   logit lens    each layer's stream through the final norm and the
//                 unembedding (nostalgebraist 2020);
//   attribution   the target's logit split into the embeddings, every head,
//                 every MLP and the biases, the final norm's scale taken from
//                 the run (TransformerLens' apply_ln_to_stack);
//   value-weighted ‖α_ij v_j W_O^h‖ (Kobayashi et al. 2020).
#pragma once

#include "engine/model/blocks/run.h"
#include "engine/run_context.h"

#include <string>
#include <vector>

namespace attn {

// InputError unless the model has an LM head (a prediction to explain).
void needsPrediction(const Model& m);

// The ids a pass reads for `text` (special tokens included), as runModel
// tokenizes it: longer than the model's positions, TooLongError, or cut where `truncate`.
std::vector<int32_t> textIds(const Model& m, const std::string& text, bool truncate);

// The token measured: its id at a position (both from 0, checked).
struct Target {
  int64_t position = 0;
  int32_t id = 0;
  std::string token;  // as displayed
};
// `position` (negative: from the end) in the ids, and `token_id`, or, when
// it is −1, the model's own top prediction there. InputError for a position
// outside the text, an id outside the vocabulary, or a model without an LM head.
Target chooseTarget(const Model& m, const std::vector<int32_t>& ids, int64_t position, int32_t token_id,
                    const RunContext& ctx = {});
// The one token `text` is, as the model's tokenizer reads it (" Paris" for
// GPT-2's "ĠParis"); InputError when it is none or several, naming them.
int32_t tokenIdOf(const Model& m, const std::string& text);

// The target's score in one pass.
struct TokenScore {
  double logit = 0, log_prob = 0;  // log_prob = logit − log Σ_v exp(logit_v)
  double probability() const;
};

struct AblationEffect {
  Target target;
  HeadAblation ablated;
  TokenScore before, after;
  std::vector<Prediction> top_before, top_after;  // at target.position, best first
};
AblationEffect ablationEffect(const Model& m, const std::vector<int32_t>& ids, const HeadAblation& ablate,
                              const Target& target, int top_k = 5, const RunContext& ctx = {});

struct ImportanceGrid {
  Target target;
  HeadAblation::Mode mode = HeadAblation::Mode::Zero;
  TokenScore base;
  Mat delta;  // [layers, heads]: log p(target) with that head ablated alone − base.log_prob
  int64_t layer_passes = 0;  // layers run, over every pass (a full pass is `layers`)
};
// `resume` false: every pass from the embeddings (the same grid, at the cost
// of layers·heads whole passes: what the benchmark compares with).
// The heads (layer, head) of a layers × heads grid, lowest value first (the
// importance grid: the ablation that lowers log p most), ties in layer order.
std::vector<std::pair<int64_t, int64_t>> headsByValue(const Mat& grid);
ImportanceGrid importanceGrid(const Model& m, const std::vector<int32_t>& ids, HeadAblation::Mode mode,
                              const Target& target, const RunContext& ctx = {}, bool resume = true);

struct PatchingResult {
  Target target;
  TokenScore clean, corrupted;
  // log p(target) in the corrupted pass with the clean pass's value patched in:
  Mat heads;     // [layers, heads]: one head's output before W_O
  Mat residual;  // [layers, L]: the stream entering layer l at position p
  // How much of the clean prediction a patch restores:
  // (log p − corrupted.log_prob) / (clean.log_prob − corrupted.log_prob), where
  // the two prompts differ by kPatchingSpan nats or more (else a share of
  // nearly nothing is noise: restorable() is false and these are 0).
  bool restorable() const;
  Mat restoredHeads() const;
  Mat restoredResidual() const;
};
constexpr double kPatchingSpan = 0.05;
struct PatchingChoice {
  bool heads = true, residual = true;
};
// `clean` and `corrupted`: prompts of the same number of tokens (InputError
// otherwise, naming both counts).
PatchingResult activationPatching(const Model& m, const std::vector<int32_t>& clean,
                                  const std::vector<int32_t>& corrupted, const Target& target, PatchingChoice what,
                                  const RunContext& ctx = {});

struct LogitLens {
  std::vector<int64_t> positions;  // the positions read, in order
  // [layers + 1][P][k]: the top tokens from resid_l at each of those positions
  // (l = 0 the embeddings; l = layers the model's own prediction).
  std::vector<std::vector<std::vector<Prediction>>> top;
  Mat final_token;  // [layers + 1, P]: the probability each stream gives the model's own top token there
};
// `positions` from 0 (empty: every position).
LogitLens logitLens(const Model& m, const std::vector<int32_t>& ids, int top_k = 5, const RunContext& ctx = {},
                    std::vector<int64_t> positions = {});

struct LogitAttribution {
  Target target;
  double logit = 0;  // the model's logit for the target
  struct Part {
    std::string name;  // "embeddings", "L3H5", "L3 attention bias", "L3 MLP", "final norm bias"
    int64_t layer = -1, head = -1;
    double value = 0;
  };
  std::vector<Part> parts;  // in the order of the stream
  Mat heads;                // [layers, heads]: the heads' parts
  double sum() const;
};
// InputError for a family whose layers do not add straight into one stream
// normalised once (post-norm: BERT, OLMo 2, Gemma 2 and 3), or whose LM head
// is more than the final norm and one matrix.
LogitAttribution directLogitAttribution(const Model& m, const std::vector<int32_t>& ids, const Target& target,
                                        const RunContext& ctx = {});

// The run's value norms (Interventions::value_norms) for the views:
// ‖α_ij v_j W_O^h‖ = α_ij ‖v_j^h W_O^h‖, head h's map weighted   [L, keys]
Mat valueWeightedMap(const ModelRun& run, int64_t layer, int64_t head);

}  // namespace attn
