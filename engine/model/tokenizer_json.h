// Hugging Face tokenizer.json tokenizers of the LLaMA family: BPE, either
// byte-level with a split regex (Llama 3, Qwen2, SmolLM) or SentencePiece-
// style with '▁' for spaces, a prepended '▁' and byte fallback (Llama 2,
// TinyLlama, Mistral). The pipeline is the file's own: added tokens split
// out first, then the normalizer, the pre-tokenizer, the BPE model. Special
// tokens and whether the model prepends bos come from the files.
#pragma once

#include "engine/model/tokenizer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace attn {

struct HfTokenizer {
  std::unique_ptr<Tokenizer> tokenizer;  // encode() gives the ids without bos
  int32_t bos = -1, eos = -1;            // from the files; -1 when none
  // Whether encode for the model prepends bos: tokenizer_config.json's
  // add_bos_token, else tokenizer.json's post_processor TemplateProcessing
  // starting with the bos token.
  bool add_bos = false;
};

// tokenizer_json: tokenizer.json's text; tokenizer_config: tokenizer_config.json's
// text when the file exists. what_json / what_config name the files in errors.
// Throws InputError with one line naming the file, the field and what was expected.
HfTokenizer makeHfTokenizer(const std::string& tokenizer_json, const std::optional<std::string>& tokenizer_config,
                            const std::string& what_json, const std::string& what_config);

}  // namespace attn
