// What the tokenizers share (engine/model/tokenizers/tokenizer.cpp: GPT-2, WordPiece;
// engine/model/tokenizers/tokenizer_json.cpp: Hugging Face tokenizer.json): UTF-8,
// Unicode categories and normalization (ICU), GPT-2's byte symbols and
// pre-tokenization, the BPE merge loop, the tokenizer.json pipeline built
// from parts read elsewhere (GGUF), and the wording of file errors.
// Internal to engine/model; not part of the engine's interface.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attn {
class Tokenizer;
}

namespace attn::tok {

// [SECTION] UTF-8

constexpr char32_t kInvalid = 0xFFFFFFFF;  // a byte that starts no valid UTF-8 sequence

// Decodes the code point at s[i] and advances i past it. A byte that does
// not start a well-formed sequence (overlong, surrogate, > U+10FFFF,
// truncated) yields kInvalid and advances by one byte.
char32_t nextCodePoint(const std::string& s, size_t& i);
void appendUtf8(std::string& out, char32_t cp);
// Text as code points; invalid bytes become U+FFFD (Python's errors="replace").
std::u32string toCodePoints(const std::string& s);
std::string toUtf8(const std::u32string& s);
std::string hexByte(unsigned char b);  // "\xNN"
// `s` with every byte that is not part of well-formed UTF-8 shown as \xNN.
std::string escapeInvalidUtf8(const std::string& s);
// How display() shows an id outside the vocabulary: "<id>".
std::string outsideVocab(int32_t id);

// [SECTION] Unicode (ICU)

bool inCategory(char32_t cp, uint32_t mask);  // U_GC_*_MASK
bool isNumber(char32_t cp);                   // \p{N}
enum class NormalForm { NFC, NFD, NFKC, NFKD };
std::u32string normalized(const std::u32string& s, NormalForm form);
// str.lower(): full case mapping (İ → i̇, final sigma).
std::u32string lowerCase(const std::u32string& s);
// The White_Space property (Rust's char::is_whitespace).
bool isWhiteSpace(char32_t cp);
// The extended grapheme clusters of UTF-8 text (ICU's character break
// iterator; the unicode-segmentation crate's graphemes(true)), as byte
// ranges [begin, end) covering it in order.
std::vector<std::pair<size_t, size_t>> graphemeClusters(const std::string& text);

// [SECTION] GPT-2 byte symbols and pre-tokenization

// encoder.py's bytes_to_unicode(): printable Latin-1 bytes stand for
// themselves, the other 68 bytes for U+0100… in byte order, so every byte
// has a visible, non-whitespace symbol (space → 'Ġ' U+0120).
std::array<std::string, 256> bytesToUnicode();
// The inverse: the bytes a token of byte symbols stands for, or nullopt
// when the token holds anything else (an added token such as <|endoftext|>).
class ByteSymbols {
 public:
  ByteSymbols();
  const std::string& symbol(unsigned char b) const { return symbols_[b]; }
  std::optional<std::string> bytes(const std::string& token) const;

 private:
  std::array<std::string, 256> symbols_;
  std::unordered_map<char32_t, unsigned char> byte_of_;
};

// GPT-2's pattern, matched leftmost-first as the regex engine does:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// Returns the pieces as byte ranges [begin, end) of `text`. A byte that is
// not valid UTF-8 counts as one [^\s\p{L}\p{N}] character.
std::vector<std::pair<size_t, size_t>> gpt2Pieces(const std::string& text);

// [SECTION] BPE

struct Merge {
  int32_t rank, id;  // rank: lower merges first; id: the merged token
};
// (left id, right id) → its merge.
using MergeMap = std::unordered_map<uint64_t, Merge>;
uint64_t pairKey(int32_t a, int32_t b);
// Merges `word` (token ids) in place as Hugging Face tokenizers' BPE does:
// repeatedly the adjacent pair with the lowest rank, the leftmost among
// equal ranks, one merge at a time (a priority queue, O(n log n)).
void applyMerges(std::vector<int32_t>& word, const MergeMap& merges);

// [SECTION] tokenizer.json's pipeline from parts (tokenizer_json.cpp)

// A BPE vocabulary read from elsewhere than tokenizer.json (a GGUF file's
// metadata, engine/model/tokenizers/tokenizer_gguf.cpp), run through
// tokenizer.json's pipeline: the `whole` tokens split out of the text first
// (kept whole, decoded as their text), each other span normalized and
// pre-tokenized, each piece through the BPE model. The tokens are distinct
// and non-empty; every id in `whole` and `merges` is one of them; `unk` is
// one of them or -1 (the caller checks).
struct BpeParts {
  std::vector<std::string> tokens;  // id → token
  struct Whole {
    int32_t id;
    bool rstrip;  // the ASCII whitespace after it goes with it
  };
  std::vector<Whole> whole;
  MergeMap merges;
  // Byte-level: the text cut by each of `splits` in turn (every match and
  // every stretch between matches a piece), the pieces' bytes as GPT-2's
  // byte symbols. Else SentencePiece style: ' ' as '▁', a '▁' before each
  // span with space_prefix, a character outside the vocabulary as its
  // bytes' <0xNN> tokens when all 256 are tokens, else as unk.
  bool byte_level = true;
  std::vector<std::string> splits;
  bool space_prefix = false;
  bool ignore_merges = false;  // a piece that is itself a token is that token
  int32_t unk = -1;
};
// Errors name the vocabulary as `what_tokens` ("model.gguf: tokenizer.ggml.tokens":
// a byte-level vocabulary without a byte's symbol) and the regexes as
// `what_splits` (one that does not compile, or gives up on a text).
std::unique_ptr<Tokenizer> makeBpeTokenizer(BpeParts parts, const std::string& what_tokens, const std::string& what_splits);

// [SECTION] File errors

// nlohmann's message without its "[json.exception.parse_error.101] " tag.
std::string jsonMessage(const nlohmann::json::exception& e);
// Token text for an error message: quoted, with control and invalid bytes escaped.
std::string shown(const std::string& token);

}  // namespace attn::tok
