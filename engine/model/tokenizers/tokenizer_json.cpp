// Hugging Face tokenizer.json (the `tokenizers` library's format), for the
// two BPE families of the LLaMA-class models. encode() follows the
// library's pipeline:
//   text → added tokens split out (kept whole) → each other span normalized
//   → pre-tokenized into pieces → each piece through the BPE model.
// The split regex is the file's own, run by PCRE2 (UTF + Unicode
// properties, JIT where available, bounded by a match limit), its matches
// found as the onig crate finds them for `tokenizers` (empty ones included).
//
// [SECTION] Regex (PCRE2)
// [SECTION] The pipeline's steps
// [SECTION] The tokenizer
// [SECTION] Reading tokenizer.json
// [SECTION] Special tokens: tokenizer_config.json and the post-processor
// [SECTION] The pipeline from parts read elsewhere (GGUF)
#include "engine/model/tokenizers/tokenizer_json.h"

#include "engine/error.h"
#include "engine/model/tokenizers/precompiled_charsmap.h"
#include "engine/model/tokenizers/tokenizer_text.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>

namespace attn {

using namespace tok;
using nlohmann::json;

namespace {

// Bounds checked before anything is allocated from a file's numbers.
constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr size_t kMaxMerges = size_t{1} << 24;
constexpr size_t kMaxAddedTokens = size_t{1} << 20;
constexpr size_t kMaxSteps = 64;  // normalizer / pre-tokenizer steps
// PCRE2's work per match call: a pathological pattern stops with an error
// instead of running for minutes. Llama 3's pattern needs ~1.5 per byte of a
// whitespace run (200,000 spaces passed with 300,000), a few for other
// pieces; a piece needing over 10^6 is refused.
constexpr uint32_t kMatchLimit = 1'000'000;
constexpr uint32_t kHeapLimitKiB = 64 * 1024;

// [SECTION] Regex (PCRE2)

class Regex {
 public:
  Regex(const std::string& pattern, std::string where) : where_(std::move(where)) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    // MATCH_INVALID_UTF: text that is not valid UTF-8 is still searched;
    // its invalid bytes match nothing and stay between the matches.
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
    if (!code)
      throw InputError(where_ + ": the regex does not compile at offset " + std::to_string(offset) + ": " +
                       message(error));
    code_.reset(code, pcre2_code_free);
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter when JIT is unavailable
    context_.reset(pcre2_match_context_create(nullptr), pcre2_match_context_free);
    pcre2_set_match_limit(context_.get(), kMatchLimit);
    pcre2_set_heap_limit(context_.get(), kHeapLimitKiB);
  }

  // [begin, end) of every leftmost match, left to right, as the onig
  // crate's find_iter gives them to `tokenizers`: each search starts where
  // the last match ended, one character further after an empty match; an
  // empty match is kept unless it is the first match found after a
  // non-empty one.
  std::vector<std::pair<size_t, size_t>> find(const std::string& text) const {
    const std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> data(
        pcre2_match_data_create_from_pattern(code_.get(), nullptr), pcre2_match_data_free);
    std::vector<std::pair<size_t, size_t>> out;
    const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    bool skip_next_empty = false;
    for (size_t at = 0; at <= text.size();) {
      const int rc = pcre2_match(code_.get(), subject, text.size(), at, 0, data.get(), context_.get());
      if (rc == PCRE2_ERROR_NOMATCH) break;
      if (rc < 0) throw InputError(where_ + ": the regex gave up on this text: " + message(rc));
      const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
      const size_t begin = ovector[0], end = ovector[1];
      at = end;
      if (begin == end) {
        if (at < text.size())
          nextCodePoint(text, at);
        else
          ++at;
        if (std::exchange(skip_next_empty, false)) continue;
      } else {
        skip_next_empty = true;
      }
      out.emplace_back(begin, end);
    }
    return out;
  }

 private:
  static std::string message(int error) {
    std::array<PCRE2_UCHAR, 256> buffer{};
    pcre2_get_error_message(error, buffer.data(), buffer.size());
    return reinterpret_cast<const char*>(buffer.data());
  }

  std::string where_;
  std::shared_ptr<pcre2_code> code_;
  std::shared_ptr<pcre2_match_context> context_;
};

// [SECTION] The pipeline's steps

// A span of text on its way to the model. `first`: it starts the text
// (Metaspace's prepend_scheme "first").
struct Piece {
  std::string text;
  bool first;
};

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// Normalizers: Prepend (only to a non-empty span), Replace (a literal
// string, or each match of a regex), Strip (White_Space at either end), the
// Unicode normal forms, and Precompiled (SentencePiece's table).
struct NormalizerStep {
  enum class Kind { prepend, replace, unicode, strip, precompiled } kind;
  std::string text, with;  // prepend: text; replace: text (or regex's matches) → with
  NormalForm form = NormalForm::NFC;
  std::shared_ptr<const Regex> regex;               // replace by a Regex pattern
  bool left = false, right = false;                 // strip
  std::shared_ptr<const PrecompiledCharsmap> table;  // precompiled
};

// `s` without the White_Space characters at its start (left) and end (right).
std::string stripSpace(const std::string& s, bool left, bool right) {
  size_t begin = 0, end = s.size();
  if (left)
    for (size_t i = 0; i < s.size(); begin = i) {
      const char32_t cp = nextCodePoint(s, i);
      if (cp == kInvalid || !isWhiteSpace(cp)) break;
    }
  if (right)
    while (end > begin) {
      size_t start = end - 1;  // the last character's first byte
      while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
      size_t i = start;
      const char32_t cp = nextCodePoint(s, i);
      if (i != end || cp == kInvalid || !isWhiteSpace(cp)) break;
      end = start;
    }
  return s.substr(begin, end - begin);
}

std::string normalize(std::string s, const std::vector<NormalizerStep>& steps) {
  for (const NormalizerStep& step : steps) {
    switch (step.kind) {
      case NormalizerStep::Kind::prepend:
        if (!s.empty()) s = step.text + s;
        break;
      case NormalizerStep::Kind::replace:
        if (step.regex) {
          std::string out;
          size_t from = 0;
          for (const auto& [begin, end] : step.regex->find(s)) {
            if (end == begin) continue;  // an empty match replaces nothing
            out.append(s, from, begin - from);
            out += step.with;
            from = end;
          }
          out.append(s, from, std::string::npos);
          s = std::move(out);
        } else {
          s = replaceAll(std::move(s), step.text, step.with);
        }
        break;
      case NormalizerStep::Kind::unicode:
        s = toUtf8(normalized(toCodePoints(s), step.form));
        break;
      case NormalizerStep::Kind::strip:
        s = stripSpace(s, step.left, step.right);
        break;
      case NormalizerStep::Kind::precompiled:
        s = step.table->normalize(s);
        break;
    }
  }
  return s;
}

// Pre-tokenizers. Split: the text cut at the pattern's matches, the
// matches (or, with invert, the text between them) handled as the behavior
// says (below). ByteLevel: a space prepended
// when add_prefix_space, GPT-2's pattern when use_regex; the pieces' bytes
// then go to the model as byte symbols. Metaspace: ' ' → replacement, the
// replacement prepended (always, or only to the text's start), pieces
// starting at each replacement when split. Digits: digits split off, each
// alone or in runs.
//
// `tokenizers`' SplitDelimiterBehavior, for the pattern '-' on
// "the-final--countdown":
//   Removed            the | final | countdown
//   Isolated           the | - | final | - | - | countdown
//   MergedWithPrevious the- | final- | - | countdown
//   MergedWithNext     the | -final | - | -countdown
//   Contiguous         the | - | final | -- | countdown
enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };
struct Split {
  std::shared_ptr<const Regex> regex;  // a String pattern is compiled escaped, as `tokenizers` does
  SplitBehavior behavior;
  bool invert;
};
struct ByteLevel {
  bool add_prefix_space, use_regex;
};
struct Metaspace {
  std::string replacement;
  enum class Prepend { always, first, never } prepend;
  bool split;
};
struct Digits {
  bool individual;
};
struct WhitespaceSplit {};  // pieces cut at runs of White_Space, which are dropped
using PreTokenizerStep = std::variant<Split, ByteLevel, Metaspace, Digits, WhitespaceSplit>;

// `piece` cut at the byte ranges `cuts` (sorted, disjoint); the ranges are
// pieces of their own unless `drop_cuts`; the text between them always is.
void cutInto(const Piece& piece, const std::vector<std::pair<size_t, size_t>>& cuts, bool drop_cuts,
             std::vector<Piece>& out) {
  size_t at = 0;
  const auto emit = [&](size_t begin, size_t end) {
    if (end > begin) out.push_back({piece.text.substr(begin, end - begin), piece.first && begin == 0});
  };
  for (const auto& [begin, end] : cuts) {
    emit(at, begin);
    if (!drop_cuts) emit(begin, end);
    at = end;
  }
  emit(at, piece.text.size());
}

// NormalizedString::split: the pattern's matches and the text between them
// as segments covering `piece` in order, flagged match or not (flipped by
// invert: Pattern for Invert); then folded as the behavior says; segments
// left empty are dropped (PreTokenizedString::split).
void splitInto(const Piece& piece, const Split& split, std::vector<Piece>& out) {
  struct Segment {
    size_t begin, end;
    bool match;
  };
  std::vector<Segment> segments;
  size_t prev = 0;
  for (const auto& [begin, end] : split.regex->find(piece.text)) {
    if (begin != prev) segments.push_back({prev, begin, split.invert});
    segments.push_back({begin, end, !split.invert});
    prev = end;
  }
  if (prev != piece.text.size()) segments.push_back({prev, piece.text.size(), split.invert});

  std::vector<Segment> kept;  // `match` now: drop it (Removed)
  bool previous_match = false;
  switch (split.behavior) {
    case SplitBehavior::isolated:
      for (const Segment& s : segments) kept.push_back({s.begin, s.end, false});
      break;
    case SplitBehavior::removed:
      kept = segments;
      break;
    case SplitBehavior::contiguous:  // runs of matches, and of non-matches, joined
      for (const Segment& s : segments) {
        if (s.match == previous_match && !kept.empty())
          kept.back().end = s.end;
        else
          kept.push_back({s.begin, s.end, false});
        previous_match = s.match;
      }
      break;
    case SplitBehavior::merged_with_previous:  // a match after a non-match joins it
      for (const Segment& s : segments) {
        if (s.match && !previous_match && !kept.empty())
          kept.back().end = s.end;
        else
          kept.push_back({s.begin, s.end, false});
        previous_match = s.match;
      }
      break;
    case SplitBehavior::merged_with_next:  // the same from the end: a match before a non-match joins it
      for (auto s = segments.rbegin(); s != segments.rend(); ++s) {
        if (s->match && !previous_match && !kept.empty())
          kept.back().begin = s->begin;
        else
          kept.push_back({s->begin, s->end, false});
        previous_match = s->match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
  }
  for (const Segment& s : kept)
    if (!s.match && s.end > s.begin) out.push_back({piece.text.substr(s.begin, s.end - s.begin), piece.first && s.begin == 0});
}

std::vector<std::pair<size_t, size_t>> literalMatches(const std::string& text, const std::string& literal) {
  std::vector<std::pair<size_t, size_t>> out;
  if (literal.empty()) return out;
  for (size_t at = text.find(literal); at != std::string::npos; at = text.find(literal, at + literal.size()))
    out.emplace_back(at, at + literal.size());
  return out;
}

// Runs of \p{N} (or each one alone) as byte ranges.
std::vector<std::pair<size_t, size_t>> digitRuns(const std::string& text, bool individual) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < text.size();) {
    const size_t at = i;
    if (!isNumber(nextCodePoint(text, i))) continue;
    if (!individual && !out.empty() && out.back().second == at)
      out.back().second = i;
    else
      out.emplace_back(at, i);
  }
  return out;
}

// Runs of White_Space as byte ranges.
std::vector<std::pair<size_t, size_t>> whiteSpaceRuns(const std::string& text) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t i = 0; i < text.size();) {
    const size_t at = i;
    const char32_t cp = nextCodePoint(text, i);
    if (cp == kInvalid || !isWhiteSpace(cp)) continue;
    if (!runs.empty() && runs.back().second == at)
      runs.back().second = i;
    else
      runs.emplace_back(at, i);
  }
  return runs;
}

std::vector<Piece> preTokenize(std::vector<Piece> pieces, const std::vector<PreTokenizerStep>& steps) {
  for (const PreTokenizerStep& step : steps) {
    std::vector<Piece> next;
    for (Piece& piece : pieces) {
      if (const auto* s = std::get_if<Split>(&step)) {
        splitInto(piece, *s, next);
      } else if (const auto* b = std::get_if<ByteLevel>(&step)) {
        if (b->add_prefix_space && piece.text.front() != ' ') piece.text.insert(piece.text.begin(), ' ');
        if (b->use_regex)
          cutInto(piece, gpt2Pieces(piece.text), false, next);
        else
          next.push_back(std::move(piece));
      } else if (const auto* m = std::get_if<Metaspace>(&step)) {
        std::string text = replaceAll(std::move(piece.text), " ", m->replacement);
        const bool prepend = m->prepend == Metaspace::Prepend::always || (m->prepend == Metaspace::Prepend::first && piece.first);
        if (prepend && text.rfind(m->replacement, 0) != 0) text.insert(0, m->replacement);
        const Piece replaced{std::move(text), piece.first};
        if (!m->split) {
          next.push_back(replaced);
          continue;
        }
        // Each replacement starts a piece (MergedWithNext): "▁a▁▁b" → ▁a ▁ ▁b.
        std::vector<std::pair<size_t, size_t>> words;
        size_t from = 0;
        for (const auto& match : literalMatches(replaced.text, m->replacement)) {
          if (match.first > from) words.emplace_back(from, match.first);
          from = match.first;
        }
        words.emplace_back(from, replaced.text.size());
        cutInto(replaced, words, false, next);
      } else if (const auto* d = std::get_if<Digits>(&step)) {
        cutInto(piece, digitRuns(piece.text, d->individual), false, next);
      } else {
        cutInto(piece, whiteSpaceRuns(piece.text), true, next);
      }
    }
    pieces = std::move(next);
  }
  return pieces;
}

// [SECTION] The tokenizer

struct AddedToken {
  std::string content;
  int32_t id;
  bool lstrip, rstrip;
};

struct JsonModel {
  std::vector<std::string> tokens;  // id → token (model vocabulary and added tokens)
  std::unordered_map<std::string, int32_t> ids;
  std::vector<bool> added;  // id is an added token: encoded and decoded as its content
  MergeMap merges;
  bool byte_level = false;       // a ByteLevel pre-tokenizer: pieces are bytes
  std::array<int32_t, 256> byte_ids{};  // byte_level: each byte's symbol; byte_fallback: <0xNN>
  bool byte_fallback = false, fuse_unk = false, ignore_merges = false;
  int32_t unk = -1;
  int32_t model_tokens = 0;  // ids below are model.vocab's, the rest added tokens
  // Unigram (SentencePiece): each model token's log-probability, the score
  // of an unknown character, the longest token in bytes (the Viterbi's reach).
  bool unigram = false;
  std::vector<double> scores;
  double unk_score = 0;
  size_t max_token_bytes = 0;
  std::string space = "▁";    // SentencePiece style: what stands for ' '
  bool strip_first_space = false;  // a '▁' is prepended: decode drops it
  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> pre_tokenizer;
  std::vector<AddedToken> added_tokens;  // longest first
  std::array<bool, 256> added_first_byte{};  // some added token starts with this byte
};

// The added tokens longest first (the first that matches at a place is the
// longest there), and the bytes they start with.
void indexAddedTokens(JsonModel& m) {
  std::sort(m.added_tokens.begin(), m.added_tokens.end(),
            [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
  for (const AddedToken& t : m.added_tokens) m.added_first_byte[static_cast<unsigned char>(t.content[0])] = true;
}

// Byte-level: each byte's symbol into m.byte_ids; `where` and `why` name the
// vocabulary and what needs the symbols when one is missing.
void readByteSymbols(JsonModel& m, const std::string& where, const std::string& why) {
  const ByteSymbols symbols;
  for (int b = 0; b < 256; ++b) {
    const std::string& symbol = symbols.symbol(static_cast<unsigned char>(b));
    const auto it = m.ids.find(symbol);
    if (it == m.ids.end())
      throw InputError(where + ": the symbol " + shown(symbol) + " of byte " + hexByte(static_cast<unsigned char>(b)) +
                       " is missing (" + why + ")");
    m.byte_ids[b] = it->second;
  }
}

// Byte fallback: the <0x00>…<0xFF> tokens into m.byte_ids; the first one
// missing, if any.
std::optional<std::string> readByteTokens(JsonModel& m) {
  for (int b = 0; b < 256; ++b) {
    char token[8];
    std::snprintf(token, sizeof token, "<0x%02X>", b);
    const auto it = m.ids.find(token);
    if (it == m.ids.end()) return token;
    m.byte_ids[b] = it->second;
  }
  return std::nullopt;
}

class HfJsonTokenizer final : public Tokenizer {
 public:
  explicit HfJsonTokenizer(JsonModel m) : m_(std::move(m)) {}

  std::vector<int32_t> encode(const std::string& text) const override {
    std::vector<int32_t> out;
    size_t at = 0;
    for (const auto& [begin, end, id] : addedTokenSpans(text)) {
      encodeSpan(text.substr(at, begin - at), at == 0, out);
      out.push_back(id);
      at = end;
    }
    encodeSpan(text.substr(at), at == 0, out);
    return out;
  }

  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string out;
    for (const int32_t id : ids)
      if (id >= 0 && id < vocabSize()) out += tokenBytes(id);
    if (m_.strip_first_space && !out.empty() && out[0] == ' ') out.erase(0, 1);
    return out;
  }

  // Bytes that are not whole UTF-8 characters (a piece of a character split
  // over byte tokens) show as \xNN; '▁' and 'Ġ' as spaces.
  std::string display(int32_t id) const override {
    return id < 0 || id >= vocabSize() ? outsideVocab(id) : escapeInvalidUtf8(tokenBytes(id));
  }

  int32_t vocabSize() const override { return static_cast<int32_t>(m_.tokens.size()); }

  int32_t specialId(const std::string& token) const override {
    const auto it = m_.ids.find(token);
    return it == m_.ids.end() ? -1 : it->second;
  }

 private:
  struct Span {
    size_t begin, end;
    int32_t id;
  };

  // The added tokens in `text`, leftmost-longest and not overlapping, each
  // widened over the ASCII whitespace before it (lstrip) or after it (rstrip).
  std::vector<Span> addedTokenSpans(const std::string& text) const {
    std::vector<Span> spans;
    const auto isSpace = [&](size_t i) { return text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'; };
    for (size_t i = 0; i < text.size() && !m_.added_tokens.empty();) {
      if (!m_.added_first_byte[static_cast<unsigned char>(text[i])]) {
        ++i;
        continue;
      }
      const auto found = std::find_if(m_.added_tokens.begin(), m_.added_tokens.end(),
                                      [&](const AddedToken& t) { return text.compare(i, t.content.size(), t.content) == 0; });
      if (found == m_.added_tokens.end()) {
        ++i;
        continue;
      }
      Span span{i, i + found->content.size(), found->id};
      const size_t floor = spans.empty() ? 0 : spans.back().end;
      while (found->lstrip && span.begin > floor && isSpace(span.begin - 1)) --span.begin;
      while (found->rstrip && span.end < text.size() && isSpace(span.end)) ++span.end;
      spans.push_back(span);
      i = span.end;
    }
    return spans;
  }

  void encodeSpan(const std::string& span, bool first, std::vector<int32_t>& out) const {
    std::string text = normalize(span, m_.normalizer);
    if (text.empty()) return;
    for (const Piece& piece : preTokenize({{std::move(text), first}}, m_.pre_tokenizer)) {
      if (m_.unigram)
        viterbi(piece.text, out);
      else
        bpe(piece.text, out);
    }
  }

  // The Unigram model on one piece, as `tokenizers`' Unigram::encode: the
  // segmentation whose tokens' scores sum highest (Viterbi over character
  // boundaries; a character no token starts with scores unk_score), ties to
  // the path found first; runs of unknown characters fused into one string,
  // which becomes unk, or its UTF-8 bytes' <0xNN> tokens with byte_fallback.
  void viterbi(const std::string& piece, std::vector<int32_t>& out) const {
    const size_t n = piece.size();
    struct Node {
      int32_t id = -1;
      double score = 0;
      size_t start = 0;
      bool reached = false;
    };
    std::vector<Node> best(n + 1);
    best[0].reached = true;
    for (size_t at = 0; at < n;) {
      size_t next = at;
      nextCodePoint(piece, next);  // this character's length: an invalid byte is one
      const double here = best[at].score;
      bool single = false;
      for (size_t end = at + 1; end <= n && end - at <= m_.max_token_bytes; ++end) {
        const auto it = m_.ids.find(piece.substr(at, end - at));
        if (it == m_.ids.end() || it->second >= m_.model_tokens) continue;
        const double score = here + m_.scores[static_cast<size_t>(it->second)];
        Node& node = best[end];
        if (!node.reached || score > node.score) node = {it->second, score, at, true};
        if (end == next) single = true;
      }
      if (!single) {
        Node& node = best[next];
        const double score = here + m_.unk_score;
        if (!node.reached || score > node.score) node = {m_.unk, score, at, true};
      }
      at = next;
    }
    std::vector<std::pair<size_t, size_t>> pieces;  // back to front
    for (size_t end = n; end > 0;) {
      const Node& node = best[end];
      if (node.id == m_.unk && !pieces.empty() && best[pieces.back().second].id == m_.unk && pieces.back().first == end)
        pieces.back().first = node.start;  // fused with the unknown run after it
      else
        pieces.emplace_back(node.start, end);
      end = node.start;
    }
    for (auto p = pieces.rbegin(); p != pieces.rend(); ++p) {
      const std::string token = piece.substr(p->first, p->second - p->first);
      const auto it = m_.ids.find(token);
      if (it != m_.ids.end() && it->second < m_.model_tokens) {
        out.push_back(it->second);
      } else if (m_.byte_fallback) {
        for (const char c : token) out.push_back(m_.byte_ids[static_cast<unsigned char>(c)]);
      } else {
        out.push_back(m_.unk);
      }
    }
  }

  // The BPE model on one piece: with ignore_merges a piece that is itself a
  // token is that token; else its symbols merged (applyMerges). Byte-level:
  // one symbol per byte. SentencePiece style: one per character, a
  // character outside the vocabulary as its UTF-8 bytes' <0xNN> tokens
  // (byte_fallback) or unk (consecutive unks fused with fuse_unk).
  void bpe(const std::string& piece, std::vector<int32_t>& out) const {
    std::vector<int32_t> word;
    if (m_.byte_level) {
      if (m_.ignore_merges) {
        std::string spelled;
        for (const char c : piece) spelled += symbols_.symbol(static_cast<unsigned char>(c));
        if (const auto it = m_.ids.find(spelled); it != m_.ids.end()) {
          out.push_back(it->second);
          return;
        }
      }
      for (const char c : piece) word.push_back(m_.byte_ids[static_cast<unsigned char>(c)]);
    } else {
      if (m_.ignore_merges)
        if (const auto it = m_.ids.find(piece); it != m_.ids.end()) {
          out.push_back(it->second);
          return;
        }
      for (size_t i = 0; i < piece.size();) {
        const size_t at = i;
        nextCodePoint(piece, i);
        const auto it = m_.ids.find(piece.substr(at, i - at));
        if (it != m_.ids.end()) {
          word.push_back(it->second);
        } else if (m_.byte_fallback) {
          for (size_t k = at; k < i; ++k) word.push_back(m_.byte_ids[static_cast<unsigned char>(piece[k])]);
        } else if (m_.unk >= 0 && !(m_.fuse_unk && !word.empty() && word.back() == m_.unk)) {
          word.push_back(m_.unk);
        }
      }
    }
    applyMerges(word, m_.merges);
    out.insert(out.end(), word.begin(), word.end());
  }

  // The bytes a token stands for: an added token its content; a byte-level
  // token the bytes of its symbols; a SentencePiece token its text with
  // '▁' as ' ', and <0xNN> the byte NN.
  std::string tokenBytes(int32_t id) const {
    const std::string& token = m_.tokens[id];
    if (m_.added[id]) return token;
    if (m_.byte_level) return symbols_.bytes(token).value_or(token);
    if (m_.byte_fallback && token.size() == 6 && token.rfind("<0x", 0) == 0 && token[5] == '>' &&
        std::isxdigit(static_cast<unsigned char>(token[3])) && std::isxdigit(static_cast<unsigned char>(token[4]))) {
      const int b = std::stoi(token.substr(3, 2), nullptr, 16);
      if (m_.byte_ids[b] == id) return std::string(1, static_cast<char>(b));
    }
    return replaceAll(token, m_.space, " ");
  }

  JsonModel m_;
  ByteSymbols symbols_;
};

// [SECTION] Reading tokenizer.json

// Reads fields of one JSON object, naming `what: path.field` in errors.
struct Fields {
  const json& object;
  std::string where;  // "tokenizer.json: model", or a file's name for its top level

  std::string at(const std::string& field) const {
    return where + (where.find(": ") == std::string::npos ? ": " : ".") + field;
  }
  bool has(const std::string& field) const { return object.contains(field) && !object.at(field).is_null(); }
  const json& get(const std::string& field) const {
    if (!has(field)) throw InputError(at(field) + " is missing");
    return object.at(field);
  }
  std::string string(const std::string& field) const {
    const json& v = get(field);
    if (!v.is_string()) throw InputError(at(field) + ": expected a string, got " + v.dump());
    return v.get<std::string>();
  }
  bool flag(const std::string& field, bool otherwise) const {
    if (!has(field)) return otherwise;
    const json& v = object.at(field);
    if (!v.is_boolean()) throw InputError(at(field) + ": expected true or false, got " + v.dump());
    return v.get<bool>();
  }
};

Fields objectAt(const json& v, const std::string& where) {
  if (!v.is_object()) throw InputError(where + ": expected a JSON object, got " + v.dump().substr(0, 60));
  return {v, where};
}

// A step list: one step, or a "Sequence" of them under `list`.
std::vector<Fields> steps(const json& v, const std::string& where, const std::string& list) {
  const Fields f = objectAt(v, where);
  if (f.string("type") != "Sequence") return {f};
  const json& items = f.get(list);
  if (!items.is_array() || items.size() > kMaxSteps)
    throw InputError(f.at(list) + ": expected an array of at most " + std::to_string(kMaxSteps) + " steps");
  std::vector<Fields> out;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string at = f.at(list) + "[" + std::to_string(i) + "]";
    if (objectAt(items[i], at).string("type") == "Sequence") throw InputError(at + ": a Sequence inside a Sequence is not supported");
    out.push_back({items[i], at});
  }
  return out;
}

// {"String": s} or {"Regex": r}.
std::pair<std::string, bool> pattern(const Fields& f) {
  const Fields p = objectAt(f.get("pattern"), f.at("pattern"));
  if (p.has("String")) return {p.string("String"), false};
  if (p.has("Regex")) return {p.string("Regex"), true};
  throw InputError(p.where + ": expected {\"String\": …} or {\"Regex\": …}");
}

std::vector<NormalizerStep> readNormalizer(const json& v, const std::string& where) {
  std::vector<NormalizerStep> out;
  for (const Fields& f : steps(v, where, "normalizers")) {
    const std::string type = f.string("type");
    using Kind = NormalizerStep::Kind;
    if (type == "Prepend") {
      out.push_back({Kind::prepend, f.string("prepend"), ""});
    } else if (type == "Replace") {
      const auto [from, regex] = pattern(f);
      NormalizerStep step{Kind::replace, from, f.string("content")};
      if (regex) step.regex = std::make_shared<const Regex>(from, f.at("pattern.Regex"));
      out.push_back(step);
    } else if (type == "Strip") {
      NormalizerStep step{Kind::strip, "", ""};
      step.left = f.flag("strip_left", false);
      step.right = f.flag("strip_right", false);
      out.push_back(step);
    } else if (type == "Precompiled") {
      NormalizerStep step{Kind::precompiled, "", ""};
      const std::string where = f.at("precompiled_charsmap");
      const json& map = f.get("precompiled_charsmap");
      if (!map.is_string()) throw InputError(where + ": expected a base64 string");
      step.table = std::make_shared<const PrecompiledCharsmap>(base64Decode(map.get<std::string>(), where), where);
      out.push_back(step);
    } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
      const NormalForm form = type == "NFC"   ? NormalForm::NFC
                              : type == "NFD" ? NormalForm::NFD
                              : type == "NFKC" ? NormalForm::NFKC
                                               : NormalForm::NFKD;
      out.push_back({Kind::unicode, "", "", form});
    } else {
      throw InputError(f.at("type") + ": normalizer \"" + type +
                       "\" is not supported (supported: Sequence, Prepend, Replace, Strip, Precompiled, NFC, NFD, NFKC, NFKD)");
    }
  }
  return out;
}

std::vector<PreTokenizerStep> readPreTokenizer(const json& v, const std::string& where) {
  std::vector<PreTokenizerStep> out;
  const std::vector<Fields> list = steps(v, where, "pretokenizers");
  for (size_t i = 0; i < list.size(); ++i) {
    const Fields& f = list[i];
    const std::string type = f.string("type");
    if (type == "Split") {
      const std::string behavior = f.string("behavior");
      static const std::array<std::pair<const char*, SplitBehavior>, 5> kBehaviors = {{
          {"Removed", SplitBehavior::removed},
          {"Isolated", SplitBehavior::isolated},
          {"MergedWithPrevious", SplitBehavior::merged_with_previous},
          {"MergedWithNext", SplitBehavior::merged_with_next},
          {"Contiguous", SplitBehavior::contiguous},
      }};
      const auto known = std::find_if(kBehaviors.begin(), kBehaviors.end(), [&](const auto& b) { return behavior == b.first; });
      if (known == kBehaviors.end())
        throw InputError(f.at("behavior") + ": \"" + behavior +
                         "\" is not a Split behavior (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous)");
      const auto [text, regex] = pattern(f);
      // A String pattern is the regex of its escaped text (Split::new).
      std::string escaped;
      if (!regex)
        for (const char c : text) {
          if (static_cast<unsigned char>(c) < 0x80 && !std::isalnum(static_cast<unsigned char>(c))) escaped += '\\';
          escaped += c;
        }
      out.push_back(Split{std::make_shared<const Regex>(regex ? text : escaped, f.at(regex ? "pattern.Regex" : "pattern.String")),
                          known->second, f.flag("invert", false)});
    } else if (type == "ByteLevel") {
      // Its bytes-to-symbols mapping ends the pre-tokenization.
      if (i + 1 != list.size()) throw InputError(f.where + ": ByteLevel must be the last pre-tokenizer");
      out.push_back(ByteLevel{f.flag("add_prefix_space", true), f.flag("use_regex", true)});
    } else if (type == "Metaspace") {
      Metaspace m{f.has("replacement") ? f.string("replacement") : "▁", Metaspace::Prepend::always, f.flag("split", true)};
      if (m.replacement.empty()) throw InputError(f.at("replacement") + ": expected a non-empty string");
      if (f.has("prepend_scheme")) {
        const std::string scheme = f.string("prepend_scheme");
        if (scheme != "always" && scheme != "first" && scheme != "never")
          throw InputError(f.at("prepend_scheme") + ": expected \"always\", \"first\" or \"never\", got \"" + scheme + "\"");
        m.prepend = scheme == "always" ? Metaspace::Prepend::always : scheme == "first" ? Metaspace::Prepend::first : Metaspace::Prepend::never;
      } else if (!f.flag("add_prefix_space", true)) {
        m.prepend = Metaspace::Prepend::never;
      }
      out.push_back(m);
    } else if (type == "Digits") {
      out.push_back(Digits{f.flag("individual_digits", false)});
    } else if (type == "WhitespaceSplit") {
      out.push_back(WhitespaceSplit{});
    } else {
      throw InputError(f.at("type") + ": pre_tokenizer \"" + type +
                       "\" is not supported (supported: Sequence, Split, ByteLevel, Metaspace, Digits, WhitespaceSplit)");
    }
  }
  return out;
}

int32_t tokenId(const json& v, const std::string& where) {
  if (!v.is_number_integer()) throw InputError(where + ": id must be an integer, got " + v.dump());
  const int64_t id = v.get<int64_t>();
  if (id < 0 || id >= kMaxVocab)
    throw InputError(where + ": id " + std::to_string(id) + " is outside 0…" + std::to_string(kMaxVocab - 1));
  return static_cast<int32_t>(id);
}

// "a b" (older files) or ["a", "b"].
std::pair<std::string, std::string> mergePair(const json& v, const std::string& where) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    const size_t space = s.find(' ');
    if (space == 0 || space == std::string::npos || space + 1 == s.size() || s.find(' ', space + 1) != std::string::npos)
      throw InputError(where + ": expected two tokens separated by one space, got " + shown(s));
    return {s.substr(0, space), s.substr(space + 1)};
  }
  if (v.is_array() && v.size() == 2 && v[0].is_string() && v[1].is_string())
    return {v[0].get<std::string>(), v[1].get<std::string>()};
  throw InputError(where + ": expected \"a b\" or [\"a\", \"b\"], got " + v.dump().substr(0, 60));
}

// A BPE model.vocab: {"token": id, …}.
std::vector<std::pair<std::string, int32_t>> bpeVocabulary(const Fields& model) {
  const json& vocab = model.get("vocab");
  if (!vocab.is_object() || vocab.empty()) throw InputError(model.at("vocab") + ": expected a non-empty object {\"token\": id, …}");
  if (static_cast<int64_t>(vocab.size()) > kMaxVocab)
    throw InputError(model.at("vocab") + ": " + std::to_string(vocab.size()) + " tokens, more than " + std::to_string(kMaxVocab));
  std::vector<std::pair<std::string, int32_t>> entries;
  for (const auto& [token, value] : vocab.items()) entries.emplace_back(token, tokenId(value, model.at("vocab") + ": token " + shown(token)));
  return entries;
}

// A Unigram model.vocab: [["token", log-probability], …], ids in order; the scores into m.scores.
std::vector<std::pair<std::string, int32_t>> unigramVocabulary(const Fields& model, JsonModel& m) {
  const json& vocab = model.get("vocab");
  if (!vocab.is_array() || vocab.empty()) throw InputError(model.at("vocab") + ": expected a non-empty array [[\"token\", score], …]");
  if (static_cast<int64_t>(vocab.size()) > kMaxVocab)
    throw InputError(model.at("vocab") + ": " + std::to_string(vocab.size()) + " tokens, more than " + std::to_string(kMaxVocab));
  std::vector<std::pair<std::string, int32_t>> entries;
  for (size_t i = 0; i < vocab.size(); ++i) {
    const json& e = vocab[i];
    const std::string where = model.at("vocab") + "[" + std::to_string(i) + "]";
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number() || !std::isfinite(e[1].get<double>()))
      throw InputError(where + ": expected [\"token\", finite score], got " + e.dump().substr(0, 60));
    if (e[0].get<std::string>().empty()) throw InputError(where + ": the token is empty");
    entries.emplace_back(e[0].get<std::string>(), static_cast<int32_t>(i));
    m.scores.push_back(e[1].get<double>());
  }
  return entries;
}

// The vocabulary (model.vocab's `entries` and added_tokens) into m.tokens / m.ids / m.added.
void readVocabulary(const Fields& model, const json& root, const std::string& what,
                    std::vector<std::pair<std::string, int32_t>> entries, JsonModel& m) {
  const size_t model_tokens = entries.size();
  m.model_tokens = static_cast<int32_t>(model_tokens);

  const json added = root.contains("added_tokens") && !root.at("added_tokens").is_null() ? root.at("added_tokens") : json::array();
  if (!added.is_array() || added.size() > kMaxAddedTokens)
    throw InputError(what + ": added_tokens: expected an array of at most " + std::to_string(kMaxAddedTokens) + " tokens");
  for (size_t i = 0; i < added.size(); ++i) {
    const Fields t = objectAt(added[i], what + ": added_tokens[" + std::to_string(i) + "]");
    const std::string content = t.string("content");
    if (content.empty()) throw InputError(t.at("content") + ": expected a non-empty string");
    if (t.flag("single_word", false)) throw InputError(t.at("single_word") + ": true is not supported");
    entries.emplace_back(content, tokenId(t.get("id"), t.at("id")));
    m.added_tokens.push_back({content, entries.back().second, t.flag("lstrip", false), t.flag("rstrip", false)});
  }

  int32_t max_id = 0;
  for (const auto& e : entries) max_id = std::max(max_id, e.second);
  if (static_cast<size_t>(max_id) >= entries.size())
    throw InputError(model.at("vocab") + ": id " + std::to_string(max_id) + " leaves gaps (the " + std::to_string(entries.size()) +
                     " tokens of model.vocab and added_tokens must number 0…n−1)");
  m.tokens.assign(max_id + 1, std::string());
  m.added.assign(max_id + 1, false);
  std::vector<bool> taken(max_id + 1, false);
  for (size_t k = 0; k < entries.size(); ++k) {
    const auto& [token, id] = entries[k];
    const bool is_added = k >= model_tokens;
    const std::string where = is_added ? what + ": added_tokens[" + std::to_string(k - model_tokens) + "]" : model.at("vocab");
    if (taken[id] && m.tokens[id] != token)
      throw InputError(where + ": token " + shown(token) + ": id " + std::to_string(id) + " is also the id of " + shown(m.tokens[id]));
    if (const auto it = m.ids.find(token); it != m.ids.end() && it->second != id)
      throw InputError(where + ": token " + shown(token) + " has ids " + std::to_string(it->second) + " and " + std::to_string(id));
    taken[id] = true;
    m.tokens[id] = token;
    m.ids.emplace(token, id);
    if (is_added) m.added[id] = true;
  }
  for (int32_t id = 0; id <= max_id; ++id)
    if (!taken[id]) throw InputError(model.at("vocab") + ": no token has id " + std::to_string(id) + " (ids must number 0…n−1)");
  indexAddedTokens(m);
}

void readMerges(const Fields& model, JsonModel& m) {
  const json& merges = model.get("merges");
  if (!merges.is_array() || merges.size() > kMaxMerges)
    throw InputError(model.at("merges") + ": expected an array of at most " + std::to_string(kMaxMerges) + " merges");
  std::unordered_map<uint64_t, size_t> index_of;
  m.merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string where = model.at("merges") + "[" + std::to_string(i) + "]";
    const auto [left, right] = mergePair(merges[i], where);
    const auto id = [&](const std::string& token) {
      const auto it = m.ids.find(token);
      if (it == m.ids.end()) throw InputError(where + ": " + shown(token) + " is not in model.vocab");
      return it->second;
    };
    const int32_t a = id(left), b = id(right), merged = id(left + right);
    const uint64_t key = pairKey(a, b);
    if (const auto it = index_of.find(key); it != index_of.end())
      throw InputError(where + ": the merge " + shown(left + " " + right) + " repeats merges[" + std::to_string(it->second) + "]");
    index_of.emplace(key, i);
    m.merges.emplace(key, Merge{static_cast<int32_t>(i), merged});
  }
}

// The Unigram model's tables: the score of an unknown character (the lowest
// score less 10, `tokenizers`' K_UNK_PENALTY), the longest token, and unk_id.
void readUnigram(const Fields& model, JsonModel& m) {
  m.unigram = true;
  m.fuse_unk = true;  // `tokenizers`' Unigram always fuses unknown characters
  double lowest = m.scores.front();
  for (const double v : m.scores) lowest = std::min(lowest, v);
  m.unk_score = lowest - 10.0;
  for (int32_t id = 0; id < m.model_tokens; ++id) m.max_token_bytes = std::max(m.max_token_bytes, m.tokens[id].size());
  if (!model.has("unk_id")) throw InputError(model.at("unk_id") + ": expected the id of the unknown token, got null");
  m.unk = tokenId(model.get("unk_id"), model.at("unk_id"));
  if (m.unk >= m.model_tokens)
    throw InputError(model.at("unk_id") + ": " + std::to_string(m.unk) + " is outside model.vocab's " +
                     std::to_string(m.model_tokens) + " tokens");
}

// model: type BPE (vocab, merges, unk_token, byte_fallback, fuse_unk,
// ignore_merges) or Unigram (vocab with scores, unk_id, byte_fallback).
void readModel(const json& root, const std::string& what, JsonModel& m) {
  if (!root.contains("model")) throw InputError(what + ": model is missing");
  const Fields model = objectAt(root.at("model"), what + ": model");
  const std::string type = model.has("type") ? model.string("type") : "(none)";
  if (type != "BPE" && type != "Unigram")
    throw InputError(model.at("type") + " is \"" + type +
                     "\"; supported: \"BPE\" (byte-level as in Llama 3, Qwen2, SmolLM, or SentencePiece-style as in Llama 2, "
                     "TinyLlama, Mistral) and \"Unigram\" (SentencePiece's, as in T5)");
  m.byte_fallback = model.flag("byte_fallback", false);
  if (type == "Unigram") {
    readVocabulary(model, root, what, unigramVocabulary(model, m), m);
    readUnigram(model, m);
  } else {
    if (model.has("dropout") && !(model.get("dropout").is_number() && model.get("dropout").get<double>() == 0.0))
      throw InputError(model.at("dropout") + ": BPE dropout is not supported (expected null)");
    for (const char* field : {"continuing_subword_prefix", "end_of_word_suffix"})
      if (model.has(field) && model.string(field) != "") throw InputError(model.at(field) + ": not supported (expected null)");
    readVocabulary(model, root, what, bpeVocabulary(model), m);
    readMerges(model, m);
    m.fuse_unk = model.flag("fuse_unk", false);
    m.ignore_merges = model.flag("ignore_merges", false);
  }
  if (model.has("unk_token")) {
    const std::string unk = model.string("unk_token");
    const auto it = m.ids.find(unk);
    if (it == m.ids.end()) throw InputError(model.at("unk_token") + ": " + shown(unk) + " is not in model.vocab");
    m.unk = it->second;
  }
  if (m.byte_fallback)
    if (const auto missing = readByteTokens(m))
      throw InputError(model.at("byte_fallback") + " is true but the byte token " + shown(*missing) +
                       " is missing from model.vocab (byte fallback needs all 256, <0x00>…<0xFF>)");
}

// [SECTION] Special tokens: tokenizer_config.json and the post-processor

// The id of a token named in a file: "<s>", or {"content": "<s>", …} (an
// AddedToken as tokenizer_config.json writes it); -1 for null.
int32_t namedToken(const json& v, const std::string& where, const JsonModel& m) {
  if (v.is_null()) return -1;
  if (!v.is_object() && !v.is_string())
    throw InputError(where + ": expected a token string or {\"content\": …}, got " + v.dump().substr(0, 60));
  const std::string token = v.is_object() ? objectAt(v, where).string("content") : v.get<std::string>();
  const auto it = m.ids.find(token);
  if (it == m.ids.end()) throw InputError(where + ": " + shown(token) + " is not a token of tokenizer.json");
  return it->second;
}

// The special tokens a post-processor puts around a single text.
struct Wrap {
  std::vector<int32_t> before, after;
};

// An id the post-processor names directly: inside the vocabulary.
int32_t postId(const json& v, const std::string& where, const JsonModel& m) {
  const int32_t id = tokenId(v, where);
  if (id >= static_cast<int32_t>(m.tokens.size()))
    throw InputError(where + ": id " + std::to_string(id) + " is outside the vocabulary (" + std::to_string(m.tokens.size()) +
                     " tokens)");
  return id;
}

// BertProcessing / RobertaProcessing: "cls": ["[CLS]", 101], "sep": ["[SEP]", 102]
// → [CLS] $A [SEP].
Wrap clsSepWrap(const Fields& f, const JsonModel& m) {
  const auto tokenOf = [&](const std::string& field) {
    const json& v = f.get(field);
    if (!v.is_array() || v.size() != 2 || !v[0].is_string())
      throw InputError(f.at(field) + ": expected [\"token\", id], got " + v.dump().substr(0, 60));
    return postId(v[1], f.at(field), m);
  };
  return {{tokenOf("cls")}, {tokenOf("sep")}};
}

// TemplateProcessing: {"single": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}],
// "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}: each
// SpecialToken stands for its entry's ids (a file without special_tokens:
// the vocabulary's token of that name).
Wrap templateWrap(const Fields& f, const JsonModel& m) {
  const json& single = f.get("single");
  if (!single.is_array()) throw InputError(f.at("single") + ": expected an array");
  const json* specials = f.has("special_tokens") ? &f.get("special_tokens") : nullptr;
  if (specials && !specials->is_object()) throw InputError(f.at("special_tokens") + ": expected an object");
  Wrap w;
  bool text_seen = false;
  for (size_t k = 0; k < single.size(); ++k) {
    const std::string where = f.at("single") + "[" + std::to_string(k) + "]";
    const Fields item = objectAt(single[k], where);
    if (item.has("Sequence")) {
      const std::string id = objectAt(item.get("Sequence"), where + ".Sequence").string("id");
      if (id != "A" || text_seen) throw InputError(where + ".Sequence.id: expected the text $A once, got \"" + id + "\"");
      text_seen = true;
      continue;
    }
    if (!item.has("SpecialToken")) throw InputError(where + ": expected {\"SpecialToken\": …} or {\"Sequence\": …}");
    const Fields special = objectAt(item.get("SpecialToken"), where + ".SpecialToken");
    const std::string name = special.string("id");
    std::vector<int32_t>& side = text_seen ? w.after : w.before;
    if (!specials) {
      side.push_back(namedToken(special.get("id"), special.at("id"), m));
      continue;
    }
    if (!specials->contains(name))
      throw InputError(special.at("id") + ": " + shown(name) + " is not in " + f.at("special_tokens"));
    const Fields entry = objectAt(specials->at(name), f.at("special_tokens") + "." + name);
    const json& ids = entry.get("ids");
    if (!ids.is_array()) throw InputError(entry.at("ids") + ": expected an array of ids");
    for (size_t i = 0; i < ids.size(); ++i) side.push_back(postId(ids[i], entry.at("ids") + "[" + std::to_string(i) + "]", m));
  }
  if (!text_seen) throw InputError(f.at("single") + ": the template has no {\"Sequence\": {\"id\": \"A\"}}");
  return w;
}

// The post_processor's wrap of a single text: TemplateProcessing,
// BertProcessing, RobertaProcessing; ByteLevel adds nothing; a Sequence
// applies its processors in turn (each wraps what the one before gave).
Wrap postProcessorWrap(const json& root, const std::string& what, const JsonModel& m) {
  Wrap w;
  if (!root.contains("post_processor") || root.at("post_processor").is_null()) return w;
  for (const Fields& f : steps(root.at("post_processor"), what + ": post_processor", "processors")) {
    const std::string type = f.string("type");
    Wrap step;
    if (type == "TemplateProcessing")
      step = templateWrap(f, m);
    else if (type == "BertProcessing" || type == "RobertaProcessing")
      step = clsSepWrap(f, m);
    else if (type != "ByteLevel")
      throw InputError(f.at("type") + ": post_processor \"" + type +
                       "\" is not supported (supported: Sequence, TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel)");
    step.before.insert(step.before.end(), w.before.begin(), w.before.end());
    step.after.insert(step.after.begin(), w.after.begin(), w.after.end());
    w = std::move(step);
  }
  return w;
}

}  // namespace

HfTokenizer makeHfTokenizer(const std::string& tokenizer_json, const std::optional<std::string>& tokenizer_config,
                            const std::string& what_json, const std::string& what_config) {
  // A token given twice in model.vocab would be lost to nlohmann's map: the
  // parser's callback sees the keys at depth 3 under "model" / "vocab".
  json root;
  std::string depth1, depth2, repeated;
  std::unordered_set<std::string> vocab_keys;
  try {
    root = json::parse(tokenizer_json, [&](int depth, json::parse_event_t event, json& parsed) {
      if (event != json::parse_event_t::key) return true;
      if (depth == 1) depth1 = parsed.get<std::string>();
      if (depth == 2) depth2 = parsed.get<std::string>();
      if (depth == 3 && depth1 == "model" && depth2 == "vocab" && !vocab_keys.insert(parsed.get<std::string>()).second &&
          repeated.empty())
        repeated = parsed.get<std::string>();
      return true;
    });
  } catch (const json::exception& e) {
    throw InputError(what_json + ": malformed JSON: " + jsonMessage(e));
  }
  if (!root.is_object()) throw InputError(what_json + ": expected a JSON object with \"model\"");
  if (!repeated.empty()) throw InputError(what_json + ": model.vocab: token " + shown(repeated) + " appears twice");

  JsonModel m;
  readModel(root, what_json, m);
  if (root.contains("normalizer") && !root.at("normalizer").is_null())
    m.normalizer = readNormalizer(root.at("normalizer"), what_json + ": normalizer");
  if (root.contains("pre_tokenizer") && !root.at("pre_tokenizer").is_null())
    m.pre_tokenizer = readPreTokenizer(root.at("pre_tokenizer"), what_json + ": pre_tokenizer");

  for (const PreTokenizerStep& step : m.pre_tokenizer) {
    if (std::holds_alternative<ByteLevel>(step)) m.byte_level = true;
    if (const auto* meta = std::get_if<Metaspace>(&step)) {
      m.space = meta->replacement;
      m.strip_first_space = meta->prepend != Metaspace::Prepend::never;
    }
  }
  for (const NormalizerStep& step : m.normalizer)
    if (step.kind == NormalizerStep::Kind::prepend && step.text == m.space) m.strip_first_space = true;
  if (m.byte_level) readByteSymbols(m, what_json + ": model.vocab", "pre_tokenizer ByteLevel needs all 256 byte symbols");

  HfTokenizer out;
  Wrap wrap = postProcessorWrap(root, what_json, m);
  std::string what_wrap = what_json + ": post_processor";  // names what decided the wrap, in errors
  if (!wrap.before.empty()) out.bos = wrap.before.front();
  if (!wrap.after.empty()) out.eos = wrap.after.back();
  if (tokenizer_config) {
    json config;
    try {
      config = json::parse(*tokenizer_config);
    } catch (const json::exception& e) {
      throw InputError(what_config + ": malformed JSON: " + jsonMessage(e));
    }
    const Fields c = objectAt(config, what_config);
    if (config.contains("bos_token")) out.bos = namedToken(config.at("bos_token"), c.at("bos_token"), m);
    if (config.contains("eos_token")) out.eos = namedToken(config.at("eos_token"), c.at("eos_token"), m);
    // transformers' update_post_processor: a given add_bos_token / add_eos_token
    // rewrites the template as [bos] $A [eos]; a side not named keeps the file's.
    if (c.has("add_bos_token") || c.has("add_eos_token")) what_wrap = c.at("add_bos_token / add_eos_token");
    if (c.has("add_bos_token")) {
      if (c.flag("add_bos_token", false) && out.bos < 0) throw InputError(c.at("add_bos_token") + " is true but there is no bos_token");
      wrap.before = c.flag("add_bos_token", false) ? std::vector<int32_t>{out.bos} : std::vector<int32_t>{};
    }
    if (c.has("add_eos_token")) {
      if (c.flag("add_eos_token", false) && out.eos < 0) throw InputError(c.at("add_eos_token") + " is true but there is no eos_token");
      wrap.after = c.flag("add_eos_token", false) ? std::vector<int32_t>{out.eos} : std::vector<int32_t>{};
    }
  }
  // What the model loader can put around a text: nothing, bos, [CLS] … [SEP], or … </s>.
  const bool shape_ok = wrap.before.size() <= 1 && wrap.after.size() <= 1;
  if (!shape_ok)
    throw InputError(what_wrap + ": " + std::to_string(wrap.before.size()) + " special token(s) before the text and " +
                     std::to_string(wrap.after.size()) +
                     " after it are not supported (supported: at most one before, as bos or [CLS], and one after, as "
                     "[SEP] or </s>)");
  out.add_bos = wrap.before.size() == 1 && wrap.after.empty();
  if (out.add_bos) out.bos = wrap.before.front();
  out.before = std::move(wrap.before);
  out.after = std::move(wrap.after);
  out.tokenizer = std::make_unique<HfJsonTokenizer>(std::move(m));
  return out;
}

// [SECTION] The pipeline from parts read elsewhere (GGUF)

namespace tok {

// The steps tokenizer.json writes for the same pipeline: byte-level, a
// Split (Isolated) per regex and ByteLevel without its own regex;
// SentencePiece style, the normalizer Prepend("▁") (Llama 2's legacy file's,
// which prepends to every span) and Replace(" ", "▁").
std::unique_ptr<Tokenizer> makeBpeTokenizer(BpeParts parts, const std::string& what_tokens, const std::string& what_splits) {
  JsonModel m;
  m.model_tokens = static_cast<int32_t>(parts.tokens.size());
  m.tokens = std::move(parts.tokens);
  m.added.assign(m.tokens.size(), false);
  for (size_t id = 0; id < m.tokens.size(); ++id) m.ids.emplace(m.tokens[id], static_cast<int32_t>(id));
  for (const BpeParts::Whole& w : parts.whole) {
    m.added[w.id] = true;
    m.added_tokens.push_back({m.tokens[w.id], w.id, false, w.rstrip});
  }
  indexAddedTokens(m);
  m.merges = std::move(parts.merges);
  m.ignore_merges = parts.ignore_merges;
  m.unk = parts.unk;
  if (parts.byte_level) {
    m.byte_level = true;
    for (size_t i = 0; i < parts.splits.size(); ++i)
      m.pre_tokenizer.push_back(Split{std::make_shared<const Regex>(parts.splits[i], what_splits + ": regex " + std::to_string(i + 1)),
                                      SplitBehavior::isolated, false});
    m.pre_tokenizer.push_back(ByteLevel{false, false});
    readByteSymbols(m, what_tokens, "a byte-level vocabulary needs all 256 byte symbols");
  } else {
    if (parts.space_prefix) m.normalizer.push_back({NormalizerStep::Kind::prepend, m.space, ""});
    m.normalizer.push_back({NormalizerStep::Kind::replace, " ", m.space});
    m.strip_first_space = parts.space_prefix;
    m.byte_fallback = !readByteTokens(m);
  }
  return std::make_unique<HfJsonTokenizer>(std::move(m));
}

}  // namespace tok

}  // namespace attn
