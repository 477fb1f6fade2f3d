// Tokenizers of GPT-2 (byte-level BPE, Radford et al. 2019, as in OpenAI's
// encoder.py) and BERT (basic tokenizer + WordPiece, as in Hugging Face's
// BertTokenizer). UTF-8, Unicode (ICU), the byte symbols and the BPE merge
// loop are shared with tokenizer.json (engine/model/tokenizers/tokenizer_text.h).
//
// [SECTION] GPT-2: BPE over the pre-tokenized pieces
// [SECTION] GPT-2: loading vocab.json / merges.txt
// [SECTION] BERT: basic tokenizer, WordPiece, loading vocab.txt
#include "engine/model/tokenizers/tokenizer.h"

#include "engine/error.h"

#include "engine/model/tokenizers/tokenizer_text.h"

#include <nlohmann/json.hpp>
#include <unicode/uchar.h>

#include <array>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace attn {

using namespace tok;

namespace {

// [SECTION] GPT-2: BPE over the pre-tokenized pieces

class Gpt2Tokenizer final : public Tokenizer {
 public:
  Gpt2Tokenizer(std::vector<std::string> tokens, std::unordered_map<std::string, int32_t> ids,
                std::array<int32_t, 256> byte_ids, MergeMap merges)
      : tokens_(std::move(tokens)), ids_(std::move(ids)), byte_ids_(byte_ids), merges_(std::move(merges)) {}

  std::vector<int32_t> encode(const std::string& text) const override {
    std::vector<int32_t> out;
    for (const auto& [begin, end] : gpt2Pieces(text)) {
      const std::vector<int32_t> ids = bpe(text.substr(begin, end - begin));
      out.insert(out.end(), ids.begin(), ids.end());
    }
    return out;
  }

  // Each symbol of a token stands for one byte; tokens that are not made of
  // byte symbols (added tokens such as <|endoftext|>) are their own text.
  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string out;
    for (const int32_t id : ids)
      if (id >= 0 && id < vocabSize()) out += byte_symbols_.bytes(tokens_[id]).value_or(tokens_[id]);
    return out;
  }

  std::string display(int32_t id) const override {
    if (id < 0 || id >= vocabSize()) return outsideVocab(id);
    const auto bytes = byte_symbols_.bytes(tokens_[id]);
    return bytes ? escapeInvalidUtf8(*bytes) : tokens_[id];
  }

  int32_t vocabSize() const override { return static_cast<int32_t>(tokens_.size()); }

  int32_t specialId(const std::string& token) const override {
    const auto it = ids_.find(token);
    return it == ids_.end() ? -1 : it->second;
  }

 private:
  // One pre-tokenized piece: its bytes' symbols, merged (applyMerges).
  std::vector<int32_t> bpe(const std::string& piece) const {
    {
      const std::lock_guard lock(cache_mutex_);
      const auto it = cache_.find(piece);
      if (it != cache_.end()) return it->second;
    }
    std::vector<int32_t> word;
    word.reserve(piece.size());
    for (const char c : piece) word.push_back(byte_ids_[static_cast<unsigned char>(c)]);
    applyMerges(word, merges_);
    const std::lock_guard lock(cache_mutex_);
    if (cache_.size() >= kCacheLimit) cache_.clear();
    cache_.emplace(piece, word);
    return word;
  }

  static constexpr size_t kCacheLimit = 1 << 16;
  std::vector<std::string> tokens_;  // id → byte-level symbol string
  std::unordered_map<std::string, int32_t> ids_;
  std::array<int32_t, 256> byte_ids_;  // id of each byte's own symbol
  MergeMap merges_;
  ByteSymbols byte_symbols_;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

// [SECTION] GPT-2: loading vocab.json / merges.txt

// Lines of a text file without their "\n" (and a trailing "\r"); no empty
// last line for a final newline.
std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = nl + 1;
  }
  return lines;
}

}  // namespace

std::array<std::string, 256> gpt2ByteSymbols() { return bytesToUnicode(); }

std::unique_ptr<Tokenizer> makeGpt2Tokenizer(const std::string& vocab_json, const std::string& merges,
                                             const std::string& what_vocab, const std::string& what_merges) {
  // vocab.json: one object {"token": id}; ids number the tokens 0…n−1.
  nlohmann::json vocab;
  std::unordered_set<std::string> keys;
  std::string repeated_key;
  try {
    vocab = nlohmann::json::parse(vocab_json, [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
      if (depth == 1 && event == nlohmann::json::parse_event_t::key && !keys.insert(parsed.get<std::string>()).second &&
          repeated_key.empty())
        repeated_key = parsed.get<std::string>();
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    throw InputError(what_vocab + ": malformed JSON: " + jsonMessage(e));
  }
  if (!vocab.is_object() || vocab.empty())
    throw InputError(what_vocab + ": expected a non-empty JSON object {\"token\": id, …}");
  if (!repeated_key.empty())
    throw InputError(what_vocab + ": token " + shown(repeated_key) + " appears twice");
  const auto n = static_cast<int64_t>(vocab.size());
  std::vector<std::string> tokens(n);
  std::vector<bool> taken(n, false);
  std::unordered_map<std::string, int32_t> ids;
  ids.reserve(n);
  for (const auto& [token, value] : vocab.items()) {
    if (!value.is_number_integer())
      throw InputError(what_vocab + ": token " + shown(token) + ": id must be an integer, got " + value.dump());
    const int64_t id = value.get<int64_t>();
    if (id < 0 || id >= n)
      throw InputError(what_vocab + ": token " + shown(token) + ": id " + std::to_string(id) + " is outside 0…" +
                       std::to_string(n - 1) + " (the ids must number the " + std::to_string(n) + " tokens)");
    if (taken[id])
      throw InputError(what_vocab + ": token " + shown(token) + ": id " + std::to_string(id) + " is also the id of " +
                       shown(tokens[id]));
    taken[id] = true;
    tokens[id] = token;
    ids.emplace(token, static_cast<int32_t>(id));
  }

  const auto symbols = bytesToUnicode();
  std::array<int32_t, 256> byte_ids{};
  for (int b = 0; b < 256; ++b) {
    const auto it = ids.find(symbols[b]);
    if (it == ids.end())
      throw InputError(what_vocab + ": the symbol " + shown(symbols[b]) + " of byte " + hexByte(static_cast<unsigned char>(b)) +
                       " is missing (a byte-level BPE vocabulary has all 256)");
    byte_ids[b] = it->second;
  }

  // merges.txt: "left right" per line in rank order, "#version…" first.
  const std::vector<std::string> lines = splitLines(merges);
  MergeMap merge_of;
  std::unordered_map<uint64_t, size_t> line_of;
  merge_of.reserve(lines.size());
  int32_t rank = 0;
  for (size_t l = 0; l < lines.size(); ++l) {
    const std::string& line = lines[l];
    const std::string where = what_merges + ": line " + std::to_string(l + 1);
    if (l == 0 && line.rfind("#version", 0) == 0) continue;
    const size_t space = line.find(' ');
    if (line.empty() || space == 0 || space == std::string::npos || space + 1 == line.size() ||
        line.find_first_of(" \t", space + 1) != std::string::npos || line.find('\t') < space)
      throw InputError(where + ": expected two tokens separated by one space, got " + shown(line));
    const std::string left = line.substr(0, space), right = line.substr(space + 1);
    const auto id = [&](const std::string& token) {
      const auto it = ids.find(token);
      if (it == ids.end()) throw InputError(where + ": " + shown(token) + " is not in " + what_vocab);
      return it->second;
    };
    const int32_t a = id(left), b = id(right), merged = id(left + right);
    const uint64_t key = pairKey(a, b);
    if (const auto it = line_of.find(key); it != line_of.end())
      throw InputError(where + ": the merge " + shown(line) + " repeats line " + std::to_string(it->second));
    line_of.emplace(key, l + 1);
    merge_of.emplace(key, Merge{rank++, merged});
  }
  return std::make_unique<Gpt2Tokenizer>(std::move(tokens), std::move(ids), byte_ids, std::move(merge_of));
}

// [SECTION] BERT: basic tokenizer, WordPiece, loading vocab.txt

namespace {

// BasicTokenizer._is_whitespace: ' ', \t, \n, \r and Zs.
bool isBertSpace(char32_t cp) { return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || inCategory(cp, U_GC_ZS_MASK); }
// _is_control: every C* (Cc, Cf, Cn, Co, Cs) but \t, \n, \r.
bool isBertControl(char32_t cp) { return cp != '\t' && cp != '\n' && cp != '\r' && inCategory(cp, U_GC_C_MASK); }
// _is_punctuation: every P*, and all non-alphanumeric ASCII ($ + < = > ^ ` | ~
// are S* in Unicode but split like punctuation in BERT).
bool isBertPunctuation(char32_t cp) {
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126) ||
         inCategory(cp, U_GC_P_MASK);
}
// _is_chinese_char: the CJK Unified Ideographs blocks (kana and hangul are
// written with spaces and are not split per character).
bool isCjkIdeograph(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}
// Python's str.split() separators among what cleaning leaves.
bool isSplitSpace(char32_t cp) { return (cp >= 0x09 && cp <= 0x0D) || inCategory(cp, U_GC_Z_MASK); }

// _run_strip_accents: NFD, then drop the nonspacing marks (Mn).
std::u32string stripAccents(const std::u32string& s) {
  std::u32string out;
  for (const char32_t cp : normalized(s, NormalForm::NFD))
    if (!inCategory(cp, U_GC_MN_MASK)) out += cp;
  return out;
}

void splitWhere(const std::u32string& s, bool (*separator)(char32_t), std::vector<std::u32string>& out) {
  std::u32string word;
  for (const char32_t cp : s) {
    if (separator(cp)) {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word += cp;
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
}

class WordPieceTokenizer final : public Tokenizer {
 public:
  WordPieceTokenizer(std::vector<std::string> tokens, std::unordered_map<std::string, int32_t> ids, int32_t unk_id,
                     WordPieceOptions options)
      : tokens_(std::move(tokens)), ids_(std::move(ids)), unk_id_(unk_id), options_(std::move(options)) {
    // BertTokenizer passes its special tokens as never_split.
    for (const std::string& special : {std::string("[CLS]"), std::string("[SEP]"), std::string("[PAD]"),
                                       std::string("[MASK]"), options_.unk})
      if (ids_.count(special)) never_split_.insert(special);
  }

  std::vector<int32_t> encode(const std::string& text) const override {
    std::vector<int32_t> out;
    for (const std::u32string& word : basicTokens(text)) wordPiece(word, out);
    return out;
  }

  std::string display(int32_t id) const override {
    return id < 0 || id >= vocabSize() ? outsideVocab(id) : tokens_[id];
  }
  // Hugging Face's WordPiece decoder: tokens joined by spaces, a "##" piece
  // glued to the one before it.
  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string out;
    for (const int32_t id : ids) {
      const std::string token = display(id);
      if (token.rfind("##", 0) == 0 && !out.empty())
        out += token.substr(2);
      else
        out += (out.empty() ? "" : " ") + token;
    }
    return out;
  }
  int32_t vocabSize() const override { return static_cast<int32_t>(tokens_.size()); }
  int32_t specialId(const std::string& token) const override {
    const auto it = ids_.find(token);
    return it == ids_.end() ? -1 : it->second;
  }

 private:
  // BasicTokenizer.tokenize: clean, space out CJK ideographs, NFC, split on
  // whitespace; each word but the special tokens lower-cased, accents
  // stripped, and split around every punctuation character.
  std::vector<std::u32string> basicTokens(const std::string& text) const {
    std::u32string clean;
    for (const char32_t cp : toCodePoints(text)) {
      if (cp == 0 || cp == 0xFFFD || isBertControl(cp)) continue;
      if (isBertSpace(cp)) {
        clean += U' ';
      } else if (options_.split_cjk && isCjkIdeograph(cp)) {
        clean += U' ';
        clean += cp;
        clean += U' ';
      } else {
        clean += cp;
      }
    }
    std::vector<std::u32string> words, out;
    splitWhere(normalized(clean, NormalForm::NFC), isSplitSpace, words);
    for (std::u32string& word : words) {
      if (never_split_.count(toUtf8(word))) {
        out.push_back(std::move(word));
        continue;
      }
      if (options_.lower_case) word = lowerCase(word);
      if (options_.strip_accents) word = stripAccents(word);
      std::u32string piece;
      for (const char32_t cp : word) {
        if (isBertPunctuation(cp)) {
          if (!piece.empty()) out.push_back(std::move(piece));
          piece.clear();
          out.emplace_back(1, cp);
        } else {
          piece += cp;
        }
      }
      if (!piece.empty()) splitWhere(piece, isSplitSpace, out);
    }
    return out;
  }

  // WordpieceTokenizer.tokenize: greedy longest match first, pieces after
  // the first prefixed "##"; a word with an unmatchable rest, or longer
  // than max_chars_per_word characters, is one [UNK].
  void wordPiece(const std::u32string& word, std::vector<int32_t>& out) const {
    if (static_cast<int64_t>(word.size()) > options_.max_chars_per_word) {
      out.push_back(unk_id_);
      return;
    }
    std::vector<int32_t> pieces;
    for (size_t start = 0; start < word.size();) {
      int32_t found = -1;
      size_t end = word.size();
      for (; end > start; --end) {
        const auto it = ids_.find((start > 0 ? "##" : "") + toUtf8(word.substr(start, end - start)));
        if (it != ids_.end()) {
          found = it->second;
          break;
        }
      }
      if (found < 0) {
        out.push_back(unk_id_);
        return;
      }
      pieces.push_back(found);
      start = end;
    }
    out.insert(out.end(), pieces.begin(), pieces.end());
  }

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
  int32_t unk_id_;
  WordPieceOptions options_;
  std::unordered_set<std::string> never_split_;
};

}  // namespace

std::unique_ptr<Tokenizer> makeWordPieceTokenizer(const std::string& vocab_txt, const WordPieceOptions& options,
                                                  const std::string& what) {
  std::vector<std::string> tokens = splitLines(vocab_txt);
  if (tokens.empty()) throw InputError(what + ": the file is empty (expected one WordPiece token per line)");
  return makeWordPieceTokenizer(std::move(tokens), options, what, [](size_t l) { return "line " + std::to_string(l + 1); });
}

std::unique_ptr<Tokenizer> makeWordPieceTokenizer(std::vector<std::string> tokens, const WordPieceOptions& options,
                                                  const std::string& what, const std::function<std::string(size_t)>& name) {
  std::unordered_map<std::string, int32_t> ids;
  ids.reserve(tokens.size());
  for (size_t l = 0; l < tokens.size(); ++l) {
    if (tokens[l].empty()) throw InputError(what + ": " + name(l) + " is empty (a WordPiece token has at least one character)");
    const auto [it, fresh] = ids.emplace(tokens[l], static_cast<int32_t>(l));
    if (!fresh)
      throw InputError(what + ": " + name(l) + ": token " + shown(tokens[l]) + " repeats " + name(static_cast<size_t>(it->second)));
  }
  const auto unk = ids.find(options.unk);
  if (unk == ids.end())
    throw InputError(what + ": the unknown token " + shown(options.unk) +
                     " is missing (WordPiece gives it for words it cannot split)");
  if (options.max_chars_per_word < 1)
    throw InputError("max_chars_per_word: expected at least 1, got " + std::to_string(options.max_chars_per_word));
  const int32_t unk_id = unk->second;
  return std::make_unique<WordPieceTokenizer>(std::move(tokens), std::move(ids), unk_id, options);
}

}  // namespace attn
