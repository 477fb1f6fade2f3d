// SentencePiece's precompiled normalisation table (precompiled_charsmap.h).
#include "engine/model/tokenizers/precompiled_charsmap.h"

#include "engine/error.h"
#include "engine/model/tokenizers/tokenizer_text.h"

#include <vector>

namespace attn {

namespace {

// Darts-clone's unit layout.
bool hasLeaf(uint32_t unit) { return ((unit >> 8) & 1) != 0; }
uint32_t value(uint32_t unit) { return unit & ((1u << 31) - 1); }
uint32_t label(uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
size_t offset(uint32_t unit) { return static_cast<size_t>(unit >> 10) << ((unit & (1u << 9)) >> 6); }

bool validUtf8(std::string_view s) {
  const std::string text(s);
  for (size_t i = 0; i < text.size();)
    if (tok::nextCodePoint(text, i) == tok::kInvalid) return false;
  return true;
}

}  // namespace

PrecompiledCharsmap::PrecompiledCharsmap(const std::string& bytes, const std::string& where) {
  if (bytes.size() < 4) throw InputError(where + ": " + std::to_string(bytes.size()) + " bytes, expected at least the 4 of the trie's size");
  const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])); };
  const size_t trie_bytes = byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24;
  if (trie_bytes % 4 != 0 || trie_bytes == 0 || trie_bytes > bytes.size() - 4)
    throw InputError(where + ": the trie's size " + std::to_string(trie_bytes) + " is not a positive multiple of 4 within the " +
                     std::to_string(bytes.size() - 4) + " bytes that follow it");
  units_.resize(trie_bytes / 4);
  for (size_t u = 0; u < units_.size(); ++u) {
    const size_t at = 4 + 4 * u;
    units_[u] = byte(at) | byte(at + 1) << 8 | byte(at + 2) << 16 | byte(at + 3) << 24;
  }
  strings_ = bytes.substr(4 + trie_bytes);
  if (!validUtf8(strings_)) throw InputError(where + ": the replacement strings are not valid UTF-8");
  // Every node a search can reach, from the root: its children by label
  // 1…255, each leaf's value a string that starts on a character and ends
  // with a NUL inside the table.
  const size_t n = units_.size();
  std::vector<char> seen(n, 0);
  std::vector<size_t> stack = {offset(units_[0])};
  const auto bad = [&](const std::string& what) { throw InputError(where + ": malformed trie (" + what + ")"); };
  while (!stack.empty()) {
    const size_t node = stack.back();
    stack.pop_back();
    if (node >= n) bad("a node outside the table");
    if (seen[node]) continue;
    seen[node] = 1;
    for (uint32_t c = 1; c < 256; ++c) {
      const size_t child = node ^ c;
      if (child >= n || label(units_[child]) != c) continue;
      const size_t next = child ^ offset(units_[child]);
      if (next >= n) bad("a child outside the table");
      if (hasLeaf(units_[child])) {
        const size_t v = value(units_[next]);
        if (v >= strings_.size() || strings_.find('\0', v) == std::string::npos ||
            (static_cast<unsigned char>(strings_[v]) & 0xC0) == 0x80)
          bad("a value " + std::to_string(v) + " that names no string of the " + std::to_string(strings_.size()) + " bytes");
      }
      stack.push_back(next);
    }
  }
}

std::optional<std::string_view> PrecompiledCharsmap::transform(std::string_view chunk) const {
  size_t node = offset(units_[0]);
  for (const char ch : chunk) {
    const uint32_t c = static_cast<unsigned char>(ch);
    if (c == 0) break;
    node ^= c;
    if (node >= units_.size() || label(units_[node]) != c) return std::nullopt;  // checked at load: never past the table
    const bool leaf = hasLeaf(units_[node]);
    node ^= offset(units_[node]);
    if (leaf) {
      const size_t v = value(units_[node]);
      return std::string_view(strings_).substr(v, strings_.find('\0', v) - v);
    }
  }
  return std::nullopt;
}

std::string PrecompiledCharsmap::normalize(const std::string& text) const {
  std::string out;
  out.reserve(text.size());
  for (const auto& [begin, end] : tok::graphemeClusters(text)) {
    const std::string_view grapheme = std::string_view(text).substr(begin, end - begin);
    if (grapheme.size() < 6)
      if (const std::optional<std::string_view> r = transform(grapheme)) {
        out += *r;
        continue;
      }
    const std::string g(grapheme);
    for (size_t i = 0; i < g.size();) {
      const size_t at = i;
      tok::nextCodePoint(g, i);
      const std::string_view part = std::string_view(g).substr(at, i - at);
      const std::optional<std::string_view> r = transform(part);
      out += r ? *r : part;
    }
  }
  return out;
}

std::string base64Decode(const std::string& text, const std::string& where) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t bits = 0;
  int count = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] != '='; ++i) {
    const char c = text[i];
    const int v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52
                  : c == '+' ? 62 : c == '/' ? 63 : -1;
    if (v < 0) throw InputError(where + ": not base64 (byte " + std::to_string(i) + " is " + tok::shown(std::string(1, c)) + ")");
    bits = bits << 6 | static_cast<uint32_t>(v);
    if (++count == 4) {
      out += static_cast<char>(bits >> 16), out += static_cast<char>(bits >> 8 & 0xFF), out += static_cast<char>(bits & 0xFF);
      bits = 0, count = 0;
    }
  }
  if (count == 1) throw InputError(where + ": not base64 (a lone character at the end)");
  if (count == 2) out += static_cast<char>(bits >> 4);
  if (count == 3) out += static_cast<char>(bits >> 10), out += static_cast<char>(bits >> 2 & 0xFF);
  for (; i < text.size(); ++i)
    if (text[i] != '=') throw InputError(where + ": not base64 (data after the padding)");
  return out;
}

}  // namespace attn
