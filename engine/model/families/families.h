// What the families give the rest of the engine and the face: their
// summaries, and a run's next tokens through the family's LM head.
#pragma once

#include "engine/model/blocks/run.h"
#include "engine/run_context.h"

#include <string>
#include <vector>

namespace attn {

// The families a checkpoint can be, in registry order (model info, the
// error for an unknown architecture, `attnlab model families`, docs/models.md).
struct FamilySummary {
  std::string model_type, label, paper;
  std::vector<std::string> architectures;
  bool causal = true;
  std::string attention;  // attentionKind
};
std::vector<FamilySummary> modelFamilySummaries();
// "causal", "bidirectional", or "encoder–decoder" (a bidirectional encoder,
// a causal decoder and the decoder's cross-attention to the encoder).
std::string attentionKind(bool causal, bool encoder_decoder);

// The LM head (GPT-2's tied head, BERT's MLM head) on rows `positions` of a
// run's hidden states, and the top-k tokens of each: [L] rows, filled at
// `positions` only. Models without an LM head give empty rows. Adds the
// head's FLOPs to *flops when given.
std::vector<std::vector<Prediction>> predictTokens(const Model& m, const Mat& hidden,
                                                   const std::vector<int64_t>& positions, int k,
                                                   const RunContext& ctx = {}, double* flops = nullptr);

}  // namespace attn
