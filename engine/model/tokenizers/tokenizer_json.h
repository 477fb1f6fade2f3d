// Hugging Face tokenizer.json tokenizers (the `tokenizers` library's
// format) with a BPE model: byte-level with a split regex (Llama 3, Qwen2,
// SmolLM), SentencePiece-style with '▁' for spaces and byte fallback
// (Llama 2, TinyLlama, Mistral; Gemma as transformers 5 converts it, its
// Split pre-tokenizer MergedWithPrevious). The pipeline is the file's own:
// added tokens split out first, then the normalizer, the pre-tokenizer, the
// BPE model. Special tokens, and what the post-processor puts around a text
// ([bos] $A, or [CLS] $A [SEP] as ModernBERT's), come from the files.
// Folders with only SentencePiece's tokenizer.model: makeSentencePieceTokenizer.
#pragma once

#include "engine/model/tokenizers/tokenizer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn {

struct HfTokenizer {
  std::unique_ptr<Tokenizer> tokenizer;  // encode() gives the ids without bos
  int32_t bos = -1, eos = -1;            // from the files; -1 when none
  // The special tokens put before and after one text, as `tokenizers`' post-
  // processor adds them (TemplateProcessing "single", BertProcessing,
  // RobertaProcessing; a Sequence of them applied in turn). tokenizer_config.json's
  // add_bos_token / add_eos_token, when given, rebuild that side as transformers
  // does: [bos] or nothing before, [eos] or nothing after. At most one token
  // before ([<s>] $A) and one after ([CLS] $A [SEP], T5's $A </s>);
  // other shapes are refused.
  std::vector<int32_t> before, after;
  // before is exactly {bos} and after is empty: the model prepends bos
  // (bos is then that token).
  bool add_bos = false;
};

// tokenizer_json: tokenizer.json's text; tokenizer_config: tokenizer_config.json's
// text when the file exists. what_json / what_config name the files in errors.
// Throws InputError with one line naming the file, the field and what was expected.
HfTokenizer makeHfTokenizer(const std::string& tokenizer_json, const std::optional<std::string>& tokenizer_config,
                            const std::string& what_json, const std::string& what_config);

// A folder with only SentencePiece's tokenizer.model (no tokenizer.json):
// read by libsentencepiece (engine/model/tokenizers/tokenizer_sp.cpp), encode() is its
// EncodeAsIds, as transformers' slow LlamaTokenizer / GemmaTokenizer call it.
// bos / eos: tokenizer_config.json's bos_token / eos_token (looked up as
// pieces), else the model's bos_id / eos_id; add_bos: tokenizer_config.json's
// add_bos_token, else true (those tokenizers' default); add_eos_token, else
// false. T5's spiece.model (`eos_after`): the text then eos, as
// T5Tokenizer builds its inputs (add_bos_token false, add_eos_token true by
// default). Special tokens written in the text are not split out:
// SentencePiece reads "<s>" as text.
HfTokenizer makeSentencePieceTokenizer(const std::string& model, const std::optional<std::string>& tokenizer_config,
                                       const std::string& what_model, const std::string& what_config,
                                       bool eos_after = false);

}  // namespace attn
