// The tokenizers' shared pieces (engine/model/tokenizers/tokenizer_text.h).
#include "engine/model/tokenizers/tokenizer_text.h"

#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <queue>
#include <stdexcept>

namespace attn::tok {

// [SECTION] UTF-8

char32_t nextCodePoint(const std::string& s, size_t& i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  int n = 0;
  char32_t cp = 0, min = 0;
  if (c < 0x80) {
    ++i;
    return c;
  } else if ((c & 0xE0) == 0xC0) {
    n = 1, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 2, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 3, cp = c & 0x07, min = 0x10000;
  } else {
    ++i;
    return kInvalid;
  }
  if (i + n >= s.size()) {
    ++i;
    return kInvalid;
  }
  for (int k = 1; k <= n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) {
      ++i;
      return kInvalid;
    }
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return kInvalid;
  }
  i += n + 1;
  return cp;
}

void appendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::u32string toCodePoints(const std::string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = nextCodePoint(s, i);
    out += cp == kInvalid ? U'\uFFFD' : cp;
  }
  return out;
}

std::string toUtf8(const std::u32string& s) {
  std::string out;
  out.reserve(s.size());
  for (const char32_t cp : s) appendUtf8(out, cp);
  return out;
}

std::string hexByte(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", b);
  return buf;
}

std::string escapeInvalidUtf8(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t at = i;
    if (nextCodePoint(s, i) == kInvalid)
      out += hexByte(static_cast<unsigned char>(s[at]));
    else
      out.append(s, at, i - at);
  }
  return out;
}

// Appended piecewise: GCC 12 gives a false -Wrestrict on "<" + to_string(id) + ">".
std::string outsideVocab(int32_t id) {
  std::string out = "<";
  out += std::to_string(id);
  out += '>';
  return out;
}

// [SECTION] Unicode (ICU)

bool inCategory(char32_t cp, uint32_t mask) { return cp != kInvalid && (U_GET_GC_MASK(static_cast<UChar32>(cp)) & mask); }
bool isNumber(char32_t cp) { return inCategory(cp, U_GC_N_MASK); }

namespace {
icu::UnicodeString toIcu(const std::u32string& s) {
  return icu::UnicodeString::fromUTF32(reinterpret_cast<const UChar32*>(s.data()), static_cast<int32_t>(s.size()));
}
std::u32string fromIcu(const icu::UnicodeString& u) {
  std::u32string out(static_cast<size_t>(u.countChar32()), U'\0');
  UErrorCode status = U_ZERO_ERROR;
  u.toUTF32(reinterpret_cast<UChar32*>(out.data()), static_cast<int32_t>(out.size()), status);
  return out;
}
}  // namespace

std::u32string normalized(const std::u32string& s, NormalForm form) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* normalizer = form == NormalForm::NFC    ? icu::Normalizer2::getNFCInstance(status)
                                       : form == NormalForm::NFD  ? icu::Normalizer2::getNFDInstance(status)
                                       : form == NormalForm::NFKC ? icu::Normalizer2::getNFKCInstance(status)
                                                                  : icu::Normalizer2::getNFKDInstance(status);
  const icu::UnicodeString out = U_SUCCESS(status) ? normalizer->normalize(toIcu(s), status) : icu::UnicodeString();
  if (U_FAILURE(status)) throw std::runtime_error(std::string("ICU normalization failed: ") + u_errorName(status));
  return fromIcu(out);
}

std::u32string lowerCase(const std::u32string& s) {
  icu::UnicodeString u = toIcu(s);
  return fromIcu(u.toLower(icu::Locale::getRoot()));
}

bool isWhiteSpace(char32_t cp) { return u_isUWhiteSpace(static_cast<UChar32>(cp)) != 0; }

std::vector<std::pair<size_t, size_t>> graphemeClusters(const std::string& text) {
  std::vector<std::pair<size_t, size_t>> out;
  if (text.empty()) return out;
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::BreakIterator> it(icu::BreakIterator::createCharacterInstance(icu::Locale::getRoot(), status));
  if (U_FAILURE(status)) throw std::runtime_error(std::string("ICU break iterator failed: ") + u_errorName(status));
  // UTF-16 offset → UTF-8 byte offset, code point by code point (invalid bytes as U+FFFD, one unit each).
  icu::UnicodeString u;
  std::vector<size_t> byte_at;  // byte offset of each UTF-16 unit, then the end
  for (size_t i = 0; i < text.size();) {
    const size_t at = i;
    char32_t cp = nextCodePoint(text, i);
    if (cp == kInvalid) cp = 0xFFFD;
    u.append(static_cast<UChar32>(cp));
    while (static_cast<size_t>(u.length()) > byte_at.size()) byte_at.push_back(at);
  }
  byte_at.push_back(text.size());
  it->setText(u);
  int32_t begin = it->first();
  for (int32_t end = it->next(); end != icu::BreakIterator::DONE; begin = end, end = it->next())
    out.emplace_back(byte_at[static_cast<size_t>(begin)], byte_at[static_cast<size_t>(end)]);
  return out;
}

// [SECTION] GPT-2 byte symbols and pre-tokenization

std::array<std::string, 256> bytesToUnicode() {
  std::array<std::string, 256> symbol;
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    appendUtf8(symbol[b], printable ? static_cast<char32_t>(b) : next++);
  }
  return symbol;
}

ByteSymbols::ByteSymbols() : symbols_(bytesToUnicode()) {
  for (int b = 0; b < 256; ++b) byte_of_[toCodePoints(symbols_[b])[0]] = static_cast<unsigned char>(b);
}

std::optional<std::string> ByteSymbols::bytes(const std::string& token) const {
  std::string out;
  for (size_t i = 0; i < token.size();) {
    const auto it = byte_of_.find(nextCodePoint(token, i));
    if (it == byte_of_.end()) return std::nullopt;
    out += static_cast<char>(it->second);
  }
  return out;
}

namespace {
bool isLetter(char32_t cp) { return inCategory(cp, U_GC_L_MASK); }
// \s of the GPT-2 reference's JavaScript regex (ECMAScript WhiteSpace and
// LineTerminator): tab, LF, VT, FF, CR, U+FEFF, U+2028, U+2029 and every Zs.
bool isJsSpace(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0xFEFF || cp == 0x2028 || cp == 0x2029 || inCategory(cp, U_GC_ZS_MASK);
}
bool isOther(char32_t cp) { return !isJsSpace(cp) && !isLetter(cp) && !isNumber(cp); }
}  // namespace

std::vector<std::pair<size_t, size_t>> gpt2Pieces(const std::string& text) {
  std::vector<char32_t> cps;
  std::vector<size_t> at;  // byte offset of each code point, plus the end
  for (size_t i = 0; i < text.size();) {
    at.push_back(i);
    cps.push_back(nextCodePoint(text, i));
  }
  at.push_back(text.size());
  const size_t n = cps.size();
  const auto run = [&](size_t i, bool (*in)(char32_t)) {
    while (i < n && in(cps[i])) ++i;
    return i;
  };

  std::vector<std::pair<size_t, size_t>> pieces;
  for (size_t i = 0; i < n;) {
    size_t end = i;
    const char32_t c = cps[i];
    const char32_t c1 = i + 1 < n ? cps[i + 1] : 0;
    const char32_t c2 = i + 2 < n ? cps[i + 2] : 0;
    if (c == '\'' && (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd')) {
      end = i + 2;  // 's 't 'm 'd
    } else if (c == '\'' && ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l'))) {
      end = i + 3;  // 're 've 'll
    } else {
      const size_t from = c == ' ' && i + 1 < n && !isJsSpace(c1) ? i + 1 : i;  // the optional ' ' of ` ?…+`
      const char32_t first = cps[from];
      if (isLetter(first)) {
        end = run(from, isLetter);
      } else if (isNumber(first)) {
        end = run(from, isNumber);
      } else if (isOther(first)) {
        end = run(from, isOther);
      } else {
        // \s+(?!\S): the whole run at the end of the text, else all but the
        // last space; a single space before a non-space falls to \s+.
        const size_t ws = run(i, isJsSpace);
        end = ws == n || ws - i == 1 ? ws : ws - 1;
      }
    }
    pieces.emplace_back(at[i], at[end]);
    i = end;
  }
  return pieces;
}

// [SECTION] BPE

uint64_t pairKey(int32_t a, int32_t b) { return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b); }

// tokenizers' Word::merge_all: a min-heap of candidate merges ordered by
// (rank, position); a popped candidate whose pair has changed since it was
// pushed is stale and skipped. Each merge pushes the new pairs it forms
// with its neighbours.
void applyMerges(std::vector<int32_t>& word, const MergeMap& merges) {
  if (word.size() < 2) return;
  const auto n = static_cast<int32_t>(word.size());
  std::vector<int32_t> prev(n), next(n);
  for (int32_t i = 0; i < n; ++i) prev[i] = i - 1, next[i] = i + 1 < n ? i + 1 : -1;
  struct Candidate {
    int32_t rank, pos, id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto push = [&](int32_t left) {
    const auto it = merges.find(pairKey(word[left], word[next[left]]));
    if (it != merges.end()) queue.push({it->second.rank, left, it->second.id});
  };
  for (int32_t i = 0; i + 1 < n; ++i) push(i);
  std::vector<bool> gone(n, false);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    if (gone[top.pos] || next[top.pos] < 0) continue;
    const int32_t right = next[top.pos];
    const auto it = merges.find(pairKey(word[top.pos], word[right]));
    if (it == merges.end() || it->second.id != top.id) continue;
    word[top.pos] = top.id;
    gone[right] = true;
    next[top.pos] = next[right];
    if (next[right] >= 0) prev[next[right]] = top.pos;
    if (prev[top.pos] >= 0) push(prev[top.pos]);
    if (next[top.pos] >= 0) push(top.pos);
  }
  size_t out = 0;
  for (int32_t i = 0; i < n; ++i)
    if (!gone[i]) word[out++] = word[i];
  word.resize(out);
}

// [SECTION] File errors

std::string jsonMessage(const nlohmann::json::exception& e) {
  const std::string m = e.what();
  const size_t close = m.find("] ");
  return close == std::string::npos ? m : m.substr(close + 2);
}

std::string shown(const std::string& token) {
  std::string out = "'";
  for (const char c : escapeInvalidUtf8(token)) {
    if (static_cast<unsigned char>(c) < 0x20)
      out += hexByte(static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out + "'";
}

}  // namespace attn::tok
