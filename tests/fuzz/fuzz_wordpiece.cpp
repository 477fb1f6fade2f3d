// libFuzzer target: BERT WordPiece. Input: one options byte, vocab.txt NUL
// text. The vocabulary must load or be rejected with InputError; the text is
// then encoded with it, or with a fixed vocabulary when it was rejected.
#include "engine/error.h"
#include "engine/model/tokenizers/tokenizer.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

attn::WordPieceOptions optionsFrom(uint8_t bits) {
  attn::WordPieceOptions o;
  o.lower_case = bits & 1;
  o.strip_accents = bits & 2;
  o.split_cjk = bits & 4;
  o.max_chars_per_word = 1 + (bits >> 3);
  return o;
}

void encodeChecked(const attn::Tokenizer& tok, const std::string& text) {
  for (const int32_t id : tok.encode(text)) {
    if (id < 0 || id >= tok.vocabSize()) std::abort();
    tok.display(id);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const attn::WordPieceOptions options = optionsFrom(data[0]);
  const std::string input(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t split = input.find('\0');
  const std::string vocab = input.substr(0, split);
  const std::string text = split == std::string::npos ? input : input.substr(split + 1);
  try {
    encodeChecked(*attn::makeWordPieceTokenizer(vocab, options, "vocab.txt"), text);
  } catch (const attn::InputError&) {
    static const auto fixed = attn::makeWordPieceTokenizer(
        "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\nun\n##aff\n##able\n.\n,\n日\n", attn::WordPieceOptions{}, "vocab.txt");
    encodeChecked(*fixed, text);
  }
  return 0;
}
