// The tokenizer a GGUF file carries in its metadata (tokenizer.ggml.*), read
// as llama.cpp reads it (src/llama-vocab.cpp) and run by the tokenizers of
// the Hugging Face files:
//   "llama" (SentencePiece BPE: tokens, scores, token_type, <0xNN> byte
//           fallback): tokenizer.json's pipeline with the merges the scores
//           imply (the pair whose joined token scores highest first, the
//           leftmost among equal scores, as llama.cpp's llm_tokenizer_spm);
//   "gpt2"  (byte-level BPE: tokens, merges, tokenizer.ggml.pre): the
//           pipeline with the pre-tokenizer's regexes from llama.cpp's table;
//   "bert"  (WordPiece, tokens stored with '▁' before a word's first piece
//           in place of "##" before the others): BERT's WordPiece.
// Other models ("t5", "rwkv", …) are refused by name.
//
// Where llama.cpp differs from transformers, llama.cpp is followed:
// control, user-defined and unknown tokens written in the text are split
// out of it as llama_tokenize does with parse_special (transformers splits
// out added tokens; SentencePiece reads "<s>" as text); SentencePiece's
// add_space_prefix puts '▁' before every stretch of text, after each special
// token too (Llama 2's legacy tokenizer.json does the same; transformers 5's
// prepend_scheme "first" only at the start).
#pragma once

#include "engine/model/checkpoint/gguf.h"
#include "engine/model/tokenizers/tokenizer_json.h"

#include <string>

namespace attn {

// `what` names the file in errors. Throws InputError with one line naming
// the file, the key and what was expected, e.g.
//   "model.gguf: metadata 'tokenizer.ggml.scores' has 3 scores for 5 tokens (expected one per token)"
// before, after and add_bos as llama_tokenize adds them (add_special):
// "llama" and "gpt2" [bos] when add_bos_token (default: true for
// "llama" and Llama 3's pre-tokenizer) and [eos] when add_eos_token;
// "bert" [CLS] (bos_token_id, else cls_token_id) … [SEP] (seperator_token_id).
HfTokenizer makeGgufTokenizer(const GgufHeader& h, const std::string& what);

}  // namespace attn
