// libFuzzer target: Hugging Face tokenizer.json. Input: tokenizer.json NUL
// tokenizer_config.json NUL text (an empty config part: no config file).
// The files must load or be rejected with InputError; the text is then
// encoded with the loaded tokenizer, or with a fixed byte-level one (Llama 3's
// split regex, ignore_merges) when the files were rejected. Encoding may stop
// with InputError only where the file's regex hits PCRE2's match limit.
#include "engine/error.h"
#include "engine/model/tokenizers/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

// Every byte's symbol (bytes_to_unicode) plus "Ġt", "he", "Ġthe" and the
// added token <|end|>.
const attn::Tokenizer& fixedTokenizer() {
  static const attn::HfTokenizer tok = [] {
    nlohmann::json vocab = nlohmann::json::object();
    const auto symbols = attn::gpt2ByteSymbols();
    for (int b = 0; b < 256; ++b) vocab[symbols[b]] = b;
    vocab["Ġt"] = 256;
    vocab["he"] = 257;
    vocab["Ġthe"] = 258;
    vocab["<|end|>"] = 259;
    nlohmann::json file = nlohmann::json::parse(R"({
      "added_tokens": [{"id": 259, "content": "<|end|>", "special": true}],
      "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "behavior": "Isolated", "pattern": {"Regex":
          "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
        {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]},
      "model": {"type": "BPE", "ignore_merges": true, "merges": ["Ġ t", ["h", "e"], "Ġt he"]}})");
    file["model"]["vocab"] = vocab;
    return attn::makeHfTokenizer(file.dump(), std::nullopt, "tokenizer.json", "tokenizer_config.json");
  }();
  return *tok.tokenizer;
}

void encodeChecked(const attn::Tokenizer& tok, const std::string& text) {
  const std::vector<int32_t> ids = tok.encode(text);
  for (const int32_t id : ids) {
    if (id < 0 || id >= tok.vocabSize()) std::abort();
    tok.display(id);
  }
  tok.decode(ids);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t a = input.find('\0');
  const size_t b = a == std::string::npos ? std::string::npos : input.find('\0', a + 1);
  const std::string file = input.substr(0, a);
  const std::string config = a == std::string::npos ? "" : input.substr(a + 1, b == std::string::npos ? b : b - a - 1);
  const std::string text = b == std::string::npos ? input : input.substr(b + 1);
  try {
    const attn::HfTokenizer tok =
        attn::makeHfTokenizer(file, config.empty() ? std::nullopt : std::optional(config), "tokenizer.json", "tokenizer_config.json");
    if (tok.bos >= tok.tokenizer->vocabSize() || tok.eos >= tok.tokenizer->vocabSize() || (tok.add_bos && tok.bos < 0))
      std::abort();
    try {
      encodeChecked(*tok.tokenizer, text);
    } catch (const attn::InputError&) {
      // the file's regex gave up on this text (match limit)
    }
  } catch (const attn::InputError&) {
    // Byte-level BPE keeps every byte: decode gives the text back exactly.
    const attn::Tokenizer& fixed = fixedTokenizer();
    if (fixed.decode(fixed.encode(text)) != text) std::abort();
    encodeChecked(fixed, text);
  }
  return 0;
}
