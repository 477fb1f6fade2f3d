// GGUF's tokenizer metadata (llama.cpp's src/llama-vocab.cpp, llama_vocab::impl::load)
// handed to the tokenizers of the Hugging Face files.
//
// [SECTION] Reading the keys
// [SECTION] The pre-tokenizers llama.cpp hard-codes
// [SECTION] The vocabulary
// [SECTION] The three models
#include "engine/model/tokenizers/tokenizer_gguf.h"

#include "engine/error.h"
#include "engine/model/tokenizers/tokenizer_text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <unordered_map>
#include <vector>

namespace attn {

using namespace tok;

namespace {

// [SECTION] Reading the keys

// llama_token_type, as tokenizer.ggml.token_type stores them.
enum class TokenType : int64_t { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

bool isIntegerType(GgufType t) {
  switch (t) {
    case GgufType::UInt8:
    case GgufType::Int8:
    case GgufType::UInt16:
    case GgufType::Int16:
    case GgufType::UInt32:
    case GgufType::Int32:
    case GgufType::UInt64:
    case GgufType::Int64:
      return true;
    default:
      return false;
  }
}

// The tokenizer.ggml.* keys of one file, naming `what: key` in errors.
struct Keys {
  const GgufHeader& h;
  const std::string& what;

  std::string at(const std::string& key) const { return what + ": " + key; }
  const GgufValue* find(const std::string& key) const {
    const auto it = h.metadata.find(key);
    return it == h.metadata.end() ? nullptr : &it->second;
  }
  const GgufValue& get(const std::string& key, const std::string& meaning) const {
    const GgufValue* v = find(key);
    if (!v) throw InputError(at(key) + " is missing (" + meaning + ")");
    return *v;
  }
  std::string text(const std::string& key, const std::string& meaning) const {
    const GgufValue& v = get(key, meaning);
    if (v.type != GgufType::String) throw InputError(at(key) + ": expected a string");
    return v.text;
  }
  bool flag(const std::string& key, bool otherwise) const {
    const GgufValue* v = find(key);
    if (!v) return otherwise;
    if (v->type != GgufType::Bool) throw InputError(at(key) + ": expected a bool");
    return v->integer != 0;
  }
  // A token id: the key's, else `otherwise` (llama.cpp's default for the
  // model, -1 when that is outside the vocabulary, as llama.cpp disables it).
  int32_t id(const std::string& key, int64_t otherwise, size_t n_tokens) const {
    const auto n = static_cast<int64_t>(n_tokens);
    const GgufValue* v = find(key);
    if (!v) return otherwise >= 0 && otherwise < n ? static_cast<int32_t>(otherwise) : -1;
    if (!isIntegerType(v->type)) throw InputError(at(key) + ": expected an integer token id");
    if (v->integer < 0 || v->integer >= n)
      throw InputError(at(key) + ": " + std::to_string(v->integer) + " is outside the " + std::to_string(n) +
                       " tokens of tokenizer.ggml.tokens");
    return static_cast<int32_t>(v->integer);
  }
  // An array of `element_kind` ("strings", "integers", "numbers"); nullptr
  // when absent, unless `required` says what the key is.
  const GgufValue* array(const std::string& key, bool (*element_ok)(GgufType), const std::string& element_kind,
                         const char* required = nullptr) const {
    const GgufValue* v = required ? &get(key, required) : find(key);
    if (v && (v->type != GgufType::Array || !element_ok(v->element)))
      throw InputError(at(key) + ": expected an array of " + element_kind);
    return v;
  }
};

bool isStringType(GgufType t) { return t == GgufType::String; }
bool isNumberType(GgufType t) { return t == GgufType::Float32 || t == GgufType::Float64 || isIntegerType(t); }

// [SECTION] The pre-tokenizers llama.cpp hard-codes

// llm_tokenizer_bpe's regexes, by the LLAMA_VOCAB_PRE_TYPE_* their names map
// to in llama_vocab::impl::load. Each cuts the pieces the one before left
// (unicode_regex_split); a name not listed is refused.
constexpr const char* kGpt2Regex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
// Llama 3's, with (?i:…) spelled out as llama.cpp adapts it.
constexpr const char* kLlama3Regex =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen2's: Llama 3's with single digits.
constexpr const char* kQwen2Regex =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct PreTokenizer {
  std::vector<const char*> names;  // tokenizer.ggml.pre, as convert_hf_to_gguf.py names the vocabularies
  std::vector<const char*> splits;
  bool ignore_merges = false;  // LLAMA3: a piece that is a token is that token
  bool add_bos = false;        // LLAMA3: add_bos_token's default
};

const std::vector<PreTokenizer>& preTokenizers() {
  static const std::vector<PreTokenizer> table = {
      // DEFAULT: a file without tokenizer.ggml.pre (converted before llama.cpp named them)
      {{"default"}, {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2Regex, R"(\p{N}+)", "[0-9][0-9][0-9]"}},
      // GPT2, and MPT / OLMO (GPT-NeoX's vocabulary: Pythia's converts as "olmo")
      {{"gpt-2", "phi-2", "mpt", "olmo"}, {kGpt2Regex}},
      // LLAMA3 (Llama 3, 3.1, 3.2)
      {{"llama-bpe", "llama3", "llama-v3"}, {kLlama3Regex}, true, true},
      // DBRX: the cl100k vocabularies (OLMo 2's dolma2 converts as "dbrx")
      {{"dbrx"}, {kLlama3Regex}},
      // QWEN2 (Qwen1.5, Qwen2, Qwen2.5, Qwen3)
      {{"qwen2", "deepseek-r1-qwen"}, {kQwen2Regex}},
      // STARCODER / SMOLLM: digits one by one, then GPT-2's
      {{"starcoder", "smollm"}, {R"(\p{N})", kGpt2Regex}},
      // BLOOM
      {{"bloom"}, {R"( ?[^(\s|.,!?…。，、।۔،)]+)"}},
  };
  return table;
}

const PreTokenizer& preTokenizer(const Keys& k) {
  const GgufValue* v = k.find("tokenizer.ggml.pre");
  if (v && v->type != GgufType::String) throw InputError(k.at("tokenizer.ggml.pre") + ": expected a string");
  const std::string name = v ? v->text : "default";  // llama.cpp's fallback, with a warning
  std::string known;
  for (const PreTokenizer& p : preTokenizers())
    for (const char* n : p.names) {
      if (name == n) return p;
      known += std::string(known.empty() ? "" : ", ") + n;
    }
  throw InputError(k.at("tokenizer.ggml.pre") + " is " + shown(name) +
                   ": not a pre-tokenizer of the supported families (supported: " + known + ")");
}

// [SECTION] The vocabulary

struct Vocabulary {
  std::vector<std::string> tokens;
  std::vector<TokenType> types;
  std::unordered_map<std::string, int32_t> ids;
};

Vocabulary readVocabulary(const Keys& k) {
  const std::string key = "tokenizer.ggml.tokens";
  const GgufValue& tokens = *k.array(key, isStringType, "strings", "the vocabulary");
  if (tokens.texts.empty()) throw InputError(k.at(key) + ": the vocabulary is empty");
  if (tokens.texts.size() > kMaxGgufArray)
    throw InputError(k.at(key) + ": " + std::to_string(tokens.texts.size()) + " tokens, more than " + std::to_string(kMaxGgufArray));
  Vocabulary v;
  v.tokens = tokens.texts;
  const size_t n = v.tokens.size();
  v.ids.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (v.tokens[i].empty()) v.tokens[i] = "[EMPTY_" + std::to_string(i) + "]";  // llama.cpp's name for it
    const auto [it, fresh] = v.ids.emplace(v.tokens[i], static_cast<int32_t>(i));
    if (!fresh)
      throw InputError(k.at(key) + "[" + std::to_string(i) + "]: " + shown(v.tokens[i]) + " repeats " + key + "[" +
                       std::to_string(it->second) + "]");
  }
  v.types.assign(n, TokenType::normal);
  const std::string types_key = "tokenizer.ggml.token_type";
  if (const GgufValue* types = k.array(types_key, isIntegerType, "integers")) {
    if (types->integers.size() != n)
      throw InputError(k.at(types_key) + ": " + std::to_string(types->integers.size()) + " types for " + std::to_string(n) +
                       " tokens (expected one per token)");
    for (size_t i = 0; i < n; ++i) {
      const int64_t t = types->integers[i];
      if (t < 1 || t > 6)
        throw InputError(k.at(types_key) + "[" + std::to_string(i) + "]: " + std::to_string(t) +
                         " is not a token type (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte)");
      v.types[i] = static_cast<TokenType>(t);
    }
  }
  return v;
}

// The tokens llama.cpp splits out of the text before anything else
// (tokenizer_st_partition with parse_special: control, user-defined and
// unknown). Phi-3's files, known by general.name, take the whitespace after
// them along, but <unk>, <s> and <|endoftext|>.
std::vector<BpeParts::Whole> wholeTokens(const Keys& k, const Vocabulary& v) {
  std::string name;
  if (const GgufValue* n = k.find("general.name"); n && n->type == GgufType::String) name = n->text;
  std::transform(name.begin(), name.end(), name.begin(), [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  const bool phi3 = name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos;
  std::vector<BpeParts::Whole> whole;
  for (size_t id = 0; id < v.tokens.size(); ++id) {
    const TokenType t = v.types[id];
    if (t != TokenType::control && t != TokenType::user_defined && t != TokenType::unknown) continue;
    const std::string& token = v.tokens[id];
    whole.push_back({static_cast<int32_t>(id), phi3 && token != "<unk>" && token != "<s>" && token != "<|endoftext|>"});
  }
  return whole;
}

// SentencePiece's merges, from the scores: each token that is two tokens
// joined (at a character boundary) is their merge, ranked by its score,
// highest first, equal scores equal ranks (applyMerges then takes the
// leftmost, as llm_tokenizer_spm's queue does).
MergeMap scoreMerges(const Keys& k, const Vocabulary& v) {
  const size_t n = v.tokens.size();
  std::vector<double> scores(n, 0.0);  // llama.cpp's when the key is absent
  const std::string key = "tokenizer.ggml.scores";
  if (const GgufValue* s = k.array(key, isNumberType, "numbers")) {
    const bool integral = isIntegerType(s->element);
    const size_t count = integral ? s->integers.size() : s->numbers.size();
    if (count != n)
      throw InputError(k.at(key) + ": " + std::to_string(count) + " scores for " + std::to_string(n) + " tokens (expected one per token)");
    for (size_t i = 0; i < n; ++i) {
      scores[i] = integral ? static_cast<double>(s->integers[i]) : s->numbers[i];
      if (!std::isfinite(scores[i]))
        throw InputError(k.at(key) + "[" + std::to_string(i) + "]: " + std::to_string(scores[i]) + " (expected a finite number)");
    }
  }
  std::vector<double> distinct = scores;
  std::sort(distinct.begin(), distinct.end(), std::greater<>());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  MergeMap merges;
  for (size_t id = 0; id < n; ++id) {
    const std::string& token = v.tokens[id];
    const auto rank = static_cast<int32_t>(std::lower_bound(distinct.begin(), distinct.end(), scores[id], std::greater<>()) - distinct.begin());
    size_t at = 0;
    nextCodePoint(token, at);  // the first character: a split leaves at least one on each side
    while (at < token.size()) {
      const auto left = v.ids.find(token.substr(0, at)), right = v.ids.find(token.substr(at));
      if (left != v.ids.end() && right != v.ids.end())
        merges.emplace(pairKey(left->second, right->second), Merge{rank, static_cast<int32_t>(id)});
      nextCodePoint(token, at);
    }
  }
  return merges;
}

// tokenizer.ggml.merges: "left right" in rank order, split at the first
// space after the first byte (llama.cpp's find(' ', 1)); a repeated pair
// keeps its first rank, as llama.cpp's bpe_ranks.emplace does.
MergeMap listedMerges(const Keys& k, const Vocabulary& v) {
  const std::string key = "tokenizer.ggml.merges";
  const GgufValue& list = *k.array(key, isStringType, "strings", "a 'gpt2' vocabulary's merges");
  MergeMap merges;
  merges.reserve(list.texts.size());
  for (size_t i = 0; i < list.texts.size(); ++i) {
    const std::string& merge = list.texts[i];
    const std::string where = k.at(key) + "[" + std::to_string(i) + "]";
    const size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string::npos;
    if (space == std::string::npos || space + 1 == merge.size())
      throw InputError(where + ": expected two tokens separated by a space, got " + shown(merge));
    const std::string left = merge.substr(0, space), right = merge.substr(space + 1);
    const auto idOf = [&](const std::string& token) {
      const auto it = v.ids.find(token);
      if (it == v.ids.end()) throw InputError(where + ": " + shown(token) + " is not a token of tokenizer.ggml.tokens");
      return it->second;
    };
    const int32_t a = idOf(left), b = idOf(right), merged = idOf(left + right);
    merges.emplace(pairKey(a, b), Merge{static_cast<int32_t>(i), merged});
  }
  return merges;
}

// A side's special token: when `add`, the id, which must exist.
std::vector<int32_t> addedSide(const Keys& k, bool add, int32_t id, const std::string& add_key, const std::string& id_key) {
  if (!add) return {};
  if (id < 0) throw InputError(k.at(add_key) + " is true but there is no " + id_key);
  return {id};
}

// [SECTION] The three models

// "llama" and "gpt2": bos / eos and what llama_tokenize adds around a text.
HfTokenizer bpeTokenizer(const Keys& k, BpeParts parts, int64_t default_bos, int64_t default_eos, bool default_add_bos) {
  const size_t n = parts.tokens.size();
  HfTokenizer out;
  out.bos = k.id("tokenizer.ggml.bos_token_id", default_bos, n);
  out.eos = k.id("tokenizer.ggml.eos_token_id", default_eos, n);
  out.before = addedSide(k, k.flag("tokenizer.ggml.add_bos_token", default_add_bos), out.bos, "tokenizer.ggml.add_bos_token",
                         "tokenizer.ggml.bos_token_id");
  out.after = addedSide(k, k.flag("tokenizer.ggml.add_eos_token", false), out.eos, "tokenizer.ggml.add_eos_token",
                        "tokenizer.ggml.eos_token_id");
  out.add_bos = !out.before.empty() && out.after.empty();
  out.tokenizer = makeBpeTokenizer(std::move(parts), k.at("tokenizer.ggml.tokens"), k.at("tokenizer.ggml.pre"));
  return out;
}

// llama.cpp's defaults when the file names none: <unk> 0, <s> 1, </s> 2.
HfTokenizer sentencePiece(const Keys& k, Vocabulary v) {
  BpeParts parts;
  parts.merges = scoreMerges(k, v);
  parts.whole = wholeTokens(k, v);
  parts.byte_level = false;
  parts.space_prefix = k.flag("tokenizer.ggml.add_space_prefix", true);
  parts.unk = k.id("tokenizer.ggml.unknown_token_id", 0, v.tokens.size());
  parts.tokens = std::move(v.tokens);
  return bpeTokenizer(k, std::move(parts), 1, 2, true);
}

// llama.cpp's defaults for a "gpt2" vocabulary are bos = eos = 11 (from
// before the files named them); they are followed here too.
HfTokenizer byteLevel(const Keys& k, Vocabulary v) {
  const PreTokenizer& pre = preTokenizer(k);
  BpeParts parts;
  parts.merges = listedMerges(k, v);
  parts.whole = wholeTokens(k, v);
  parts.splits.assign(pre.splits.begin(), pre.splits.end());
  parts.ignore_merges = pre.ignore_merges;
  parts.tokens = std::move(v.tokens);
  return bpeTokenizer(k, std::move(parts), 11, 11, pre.add_bos);
}

// convert_hf_to_gguf.py's BertModel stores "word" as "▁word", "##ing" as
// "ing" and "[CLS]"-like tokens as they are; undone here for BERT's
// WordPiece, whose greedy longest match over "##" pieces is llm_tokenizer_wpm's
// over '▁' words. Defaults as llama.cpp's: [UNK] 100, [CLS] 101, [SEP] 102.
HfTokenizer wordPiece(const Keys& k, Vocabulary v) {
  const size_t n = v.tokens.size();
  for (std::string& token : v.tokens) {
    if (token.rfind("\xE2\x96\x81", 0) == 0)
      token.erase(0, 3);
    else if (!(token.size() >= 2 && token.front() == '[' && token.back() == ']'))
      token.insert(0, "##");
  }
  const int32_t unk = k.id("tokenizer.ggml.unknown_token_id", 100, n);
  if (unk < 0) throw InputError(k.at("tokenizer.ggml.unknown_token_id") + " is missing (WordPiece gives it for words it cannot split)");
  WordPieceOptions options;
  options.lower_case = k.flag("tokenizer.ggml.normalizer.lowercase", true);
  options.strip_accents = k.flag("tokenizer.ggml.normalizer.strip_accents", options.lower_case);
  options.unk = v.tokens[unk];
  HfTokenizer out;
  out.bos = k.id("tokenizer.ggml.bos_token_id", 101, n);
  out.eos = k.id("tokenizer.ggml.eos_token_id", -1, n);
  const int32_t sep = k.id("tokenizer.ggml.seperator_token_id", 102, n);
  if (out.bos < 0) throw InputError(k.at("tokenizer.ggml.bos_token_id") + " is missing (BERT's [CLS], put before the text)");
  if (sep < 0) throw InputError(k.at("tokenizer.ggml.seperator_token_id") + " is missing (BERT's [SEP], put after the text)");
  out.before = {out.bos};
  out.after = {sep};
  out.tokenizer = makeWordPieceTokenizer(std::move(v.tokens), options, k.what,
                                         [](size_t i) { return "tokenizer.ggml.tokens[" + std::to_string(i) + "]"; });
  return out;
}

}  // namespace

HfTokenizer makeGgufTokenizer(const GgufHeader& h, const std::string& what) {
  const Keys k{h, what};
  const std::string model = k.text("tokenizer.ggml.model", "the tokenizer's kind");
  if (model != "llama" && model != "gpt2" && model != "bert")
    throw InputError(k.at("tokenizer.ggml.model") + " is " + shown(model) +
                     ": not supported (supported: 'llama' (SentencePiece BPE), 'gpt2' (byte-level BPE), 'bert' (WordPiece))");
  Vocabulary v = readVocabulary(k);
  if (model == "llama") return sentencePiece(k, std::move(v));
  if (model == "gpt2") return byteLevel(k, std::move(v));
  return wordPiece(k, std::move(v));
}

}  // namespace attn
