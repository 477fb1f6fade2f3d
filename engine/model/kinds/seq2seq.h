// Encoder–decoder models (T5, BART): the encoder reads the source with
// bidirectional self-attention; the decoder reads the target with causal
// self-attention and, in every layer, attends to the encoder's output
// (cross-attention, Vaswani et al. 2017 §3.2.3). A run keeps every map of
// the three kinds: sources and targets are sentences, and the memory they
// need is checked before the pass.
#pragma once

#include "engine/model/blocks/run.h"
#include "engine/run_context.h"

#include <string>
#include <vector>

namespace attn {

// The model is an encoder–decoder (or, with no decoder layers, an encoder alone: T5EncoderModel).
bool isEncoderDecoder(const Model& m);
bool hasDecoder(const Model& m);

// The source as the encoder reads it: the tokenizer's ids with its post-
// processor's specials (BART: <s> … </s>; T5: … </s>).
std::vector<int32_t> sourceIds(const Model& m, const std::string& text);
// The target as the decoder reads it under teacher forcing: decoder_start_token_id,
// then the target's ids as the tokenizer encodes it, its leading specials
// included and its end token left out (transformers' shift_tokens_right of
// the labels: BART </s> <s> …, T5 <pad> …).
std::vector<int32_t> targetIds(const Model& m, const std::string& text);

// The pass over given ids (target empty: the encoder alone), top_k next
// tokens per target position where the model has an LM head. Ids outside the
// vocabulary, too many positions, or maps that would not fit in memory are
// refused before any work (InputError).
Seq2SeqRun runSeq2SeqIds(const Model& m, const std::vector<int32_t>& source, const std::vector<int32_t>& target,
                         int top_k, const RunContext& ctx = {});
// The same on text: sourceIds(source), targetIds(target); an encoder alone
// (T5EncoderModel) takes no target (""), anything else is refused.
Seq2SeqRun runSeq2Seq(const Model& m, const std::string& source, const std::string& target, int top_k,
                      const RunContext& ctx = {});

// Greedy decoding from decoder_start_token_id: each step runs the decoder on
// the tokens so far and takes the most probable next token, until the end
// token or max_new tokens. `run` is the pass over the final target, whose
// cross-attention row t is the attention of the step that chose token t + 1
// (the decoder is causal: a row does not change when tokens follow it).
struct Seq2SeqGeneration {
  Seq2SeqRun run;
  std::vector<Prediction> tokens;  // the new tokens, in order
  bool stopped_at_eos = false;
  std::string text;  // the new tokens decoded, specials left out
  double seconds = 0;
};
Seq2SeqGeneration generateSeq2Seq(const Model& m, const std::string& source, int64_t max_new,
                                  const RunContext& ctx = {});

}  // namespace attn
