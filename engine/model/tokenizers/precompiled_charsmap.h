// SentencePiece's precompiled normalisation table: the `precompiled_charsmap`
// of a model's normalizer_spec (nmt_nfkc and the other rules, compiled by
// spm_train), which tokenizer.json carries as a Precompiled normalizer.
//   bytes 0–3   n, the trie's size in bytes (uint32, little-endian)
//   next n      a double-array trie (Darts-clone units, uint32 little-endian)
//               over UTF-8 keys; a key's value is an offset into the strings
//   the rest    the replacement strings, each ended by a NUL
// Applied as `tokenizers` applies it (its spm_precompiled crate): grapheme
// cluster by grapheme cluster, a cluster shorter than 6 bytes is replaced
// whole when some prefix of it is a key (the shortest such key's string);
// otherwise each of its characters is replaced when a prefix of it is a key,
// or kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

class PrecompiledCharsmap {
 public:
  // `bytes` as decoded from base64. The whole trie is walked once and every
  // unit a search can reach, and every string a key names, checked: a
  // malformed table is an InputError naming `where`, never a read outside it.
  PrecompiledCharsmap(const std::string& bytes, const std::string& where);
  std::string normalize(const std::string& text) const;

 private:
  // The string of the shortest key that is a prefix of `chunk` (a NUL byte ends the search).
  std::optional<std::string_view> transform(std::string_view chunk) const;
  std::vector<uint32_t> units_;
  std::string strings_;
};

// Standard base64 (RFC 4648, padding optional); InputError naming `where` otherwise.
std::string base64Decode(const std::string& text, const std::string& where);

}  // namespace attn
