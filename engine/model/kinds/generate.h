// Text generation with a KV cache, keeping every new token's attention:
// GPT-2 and the LLaMA family. The prompt runs once with all its maps; each
// decode step then feeds one token, whose single query sees every cached key
// (the causal mask aligned to the bottom right), and its row of attention
// over everything before it is kept for each layer and head.
#pragma once

#include "engine/model/blocks/run.h"
#include "engine/run_context.h"

#include <functional>

namespace attn {

struct GenerateOptions {
  int64_t max_new = 20;      // new tokens, 1 … the positions the prompt leaves
  int top_k = 0;             // 0: greedy (the most probable token); K: sample among the K most probable
  float temperature = 1.0f;  // sampling: softmax(logits / τ), τ in (0, 100]
  uint64_t seed = 0;         // sampling: the same seed gives the same tokens
  bool truncate = false;     // cut a prompt too long for the positions left instead of throwing
};

struct GeneratedToken {
  int32_t id = 0;
  std::string token;        // as displayed
  float probability = 0;    // its probability in the distribution it was drawn from (greedy: softmax of the logits)
  // The decode step that fed this token: one row (its position), every map
  // [layer][head] [1, position + 1], its q, k, v and hidden state.
  ModelRun step;
};

struct Generation {
  ModelRun prompt;                     // the prompt's pass, every map
  std::vector<GeneratedToken> tokens;  // in order
  std::string text;                    // the new tokens decoded
  bool stopped_at_eos = false;         // the model produced its end-of-text token
  bool truncated = false;              // the prompt was cut (GenerateOptions::truncate)
  double seconds = 0;
};

// Tokenizes `text` as runModel does and generates up to o.max_new tokens,
// stopping early after the end-of-text token. `on_token` sees the generation
// after each new token (the GUI's timeline grows with it). Throws InputError
// for BERT, an empty or too long prompt, or options out of range; Cancelled
// through ctx.
Generation generate(const Model& m, const std::string& text, const GenerateOptions& o, const RunContext& ctx = {},
                    const std::function<void(const Generation&)>& on_token = {});

// The prompt and the first `steps` new tokens as one run, as a full forward
// over those tokens would give it: maps [L, L] (each decode step's row under
// the prompt's square), q, k, v and hidden stacked. steps ≤ tokens.size().
ModelRun generationRun(const Generation& g, size_t steps);

}  // namespace attn
