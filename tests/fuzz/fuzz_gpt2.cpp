// libFuzzer target: GPT-2 byte-level BPE. Input: vocab.json NUL merges.txt
// NUL text. The files must load or be rejected with InputError; the text is
// then encoded with the loaded tokenizer, or with a fixed byte-level one when
// the files were rejected, so encode is fuzzed on every input.
#include "engine/error.h"
#include "engine/model/tokenizers/tokenizer.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

// Every byte's symbol (bytes_to_unicode) plus "Ġt", "he", "Ġthe".
const attn::Tokenizer& fixedTokenizer() {
  static const std::unique_ptr<attn::Tokenizer> tok = [] {
    std::string vocab = "{";
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const int cp = printable ? b : next++;
      char symbol[16];
      std::snprintf(symbol, sizeof symbol, "\\u%04x", cp);
      vocab += std::string(b ? "," : "") + "\"" + symbol + "\":" + std::to_string(b);
    }
    vocab += ",\"\\u0120t\":256,\"he\":257,\"\\u0120the\":258}";
    return attn::makeGpt2Tokenizer(vocab, "#version: 0.2\nĠ t\nh e\nĠt he\n", "vocab.json", "merges.txt");
  }();
  return *tok;
}

void encodeChecked(const attn::Tokenizer& tok, const std::string& text) {
  const std::vector<int32_t> ids = tok.encode(text);
  if (tok.encode(text) != ids) std::abort();  // the cached result must equal the first
  for (const int32_t id : ids) {
    if (id < 0 || id >= tok.vocabSize()) std::abort();
    tok.display(id);
  }
  if (!text.empty() && ids.empty()) std::abort();  // every byte is covered by some token
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t a = input.find('\0');
  const size_t b = a == std::string::npos ? std::string::npos : input.find('\0', a + 1);
  const std::string vocab = input.substr(0, a);
  const std::string merges = a == std::string::npos ? "" : input.substr(a + 1, b == std::string::npos ? b : b - a - 1);
  const std::string text = b == std::string::npos ? input : input.substr(b + 1);
  try {
    const auto tok = attn::makeGpt2Tokenizer(vocab, merges, "vocab.json", "merges.txt");
    encodeChecked(*tok, text);
  } catch (const attn::InputError&) {
    encodeChecked(fixedTokenizer(), text);
  }
  return 0;
}
