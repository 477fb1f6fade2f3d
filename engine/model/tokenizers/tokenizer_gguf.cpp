// GGUF's tokenizer metadata (llama.cpp's src/llama-vocab.cpp, llama_vocab::impl::load)
// handed to the tokenizers of the Hugging Face files.
//
// [SECTION] Reading the keys
// [SECTION] The pre-tokenizers llama.cpp hard-codes
// [SECTION] The vocabulary
// [SECTION] The three models
#include "engine/model/tokenizers/tokenizer_gguf.h"

#include "engine/model/checkpoint/gguf_model.h"
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

// An integer type, not bool (GgufValue::isInteger counts bool in).
bool isIntegerType(GgufType t) {
  return t != GgufType::Bool && t != GgufType::Float32 && t != GgufType::Float64 && t != GgufType::String && t != GgufType::Array;
}
bool isStringType(GgufType t) { return t == GgufType::String; }
bool isNumberType(GgufType t) { return t == GgufType::Float32 || t == GgufType::Float64 || isIntegerType(t); }

// The tokenizer.ggml.* keys: GgufKeys with "tokenizer.ggml" for the
// architecture (flag, text, fail: "model.gguf: metadata 'tokenizer.ggml.scores' …"),
// and the arrays and token ids it does not read.
struct Keys {
  const GgufHeader& h;
  const std::string& what;
  GgufKeys k{h, "tokenizer.ggml", what};

  const GgufValue* find(const std::string& key) const { return h.find("tokenizer.ggml." + key); }
  // A token id: the key's, else `otherwise` (llama.cpp's default for the
  // model, -1 when that is outside the vocabulary, as llama.cpp disables it).
  int32_t id(const std::string& key, int64_t otherwise, size_t n_tokens) const {
    const auto n = static_cast<int64_t>(n_tokens);
    const GgufValue* v = find(key);
    if (!v) return otherwise >= 0 && otherwise < n ? static_cast<int32_t>(otherwise) : -1;
    if (!isIntegerType(v->type)) k.fail(key, "must be an integer token id, got " + ggufTypeName(v->type));
    if (v->integer < 0 || v->integer >= n)
      k.fail(key, "is " + std::to_string(v->integer) + ", outside the " + std::to_string(n) + " tokens of tokenizer.ggml.tokens");
    return static_cast<int32_t>(v->integer);
  }
  // An array of `element_kind` ("strings", "integers", "numbers"); nullptr
  // when absent, unless `required` says what the key is.
  const GgufValue* array(const std::string& key, bool (*element_ok)(GgufType), const std::string& element_kind,
                         const char* required = nullptr) const {
    const GgufValue* v = find(key);
    if (!v && required) k.fail(key, std::string("is missing (") + required + ")");
    if (v && (v->type != GgufType::Array || !element_ok(v->element)))
      k.fail(key, "must be an array of " + element_kind + ", got " +
                      (v->type == GgufType::Array ? "an array of " + ggufTypeName(v->element) : ggufTypeName(v->type)));
    return v;
  }
};

// "tokens[3]": element i of an array key, for GgufKeys::fail.
std::string itemKey(const std::string& key, size_t i) { return key + "[" + std::to_string(i) + "]"; }

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
      // STARCODER / REFACT / SMOLLM: digits one by one, then GPT-2's
      {{"starcoder", "refact", "smollm"}, {R"(\p{N})", kGpt2Regex}},
      // BLOOM
      {{"bloom"}, {R"( ?[^(\s|.,!?…。，、।۔،)]+)"}},
  };
  return table;
}

const PreTokenizer& preTokenizer(Keys& k) {
  const std::string name = k.k.text("pre", "default");  // llama.cpp's fallback, with a warning
  std::string known;
  for (const PreTokenizer& p : preTokenizers())
    for (const char* n : p.names) {
      if (name == n) return p;
      known += std::string(known.empty() ? "" : ", ") + n;
    }
  k.k.fail("pre", "is " + shown(name) + ": not a pre-tokenizer of the supported families (supported: " + known + ")");
}

// [SECTION] The vocabulary

struct Vocabulary {
  std::vector<std::string> tokens;
  std::vector<TokenType> types;
  std::unordered_map<std::string, int32_t> ids;
};

Vocabulary readVocabulary(const Keys& k) {
  const GgufValue& tokens = *k.array("tokens", isStringType, "strings", "the vocabulary");
  if (tokens.texts.empty()) k.k.fail("tokens", "is empty (expected the vocabulary)");
  if (tokens.texts.size() > kMaxGgufArray)
    k.k.fail("tokens", "has " + std::to_string(tokens.texts.size()) + " tokens, more than " + std::to_string(kMaxGgufArray));
  Vocabulary v;
  v.tokens = tokens.texts;
  const size_t n = v.tokens.size();
  v.ids.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (v.tokens[i].empty()) v.tokens[i] = "[EMPTY_" + std::to_string(i) + "]";  // llama.cpp's name for it
    const auto [it, fresh] = v.ids.emplace(v.tokens[i], static_cast<int32_t>(i));
    if (!fresh) k.k.fail(itemKey("tokens", i), "is " + shown(v.tokens[i]) + ", as tokenizer.ggml.tokens[" + std::to_string(it->second) + "] is");
  }
  v.types.assign(n, TokenType::normal);
  if (const GgufValue* types = k.array("token_type", isIntegerType, "integers")) {
    if (types->integers.size() != n)
      k.k.fail("token_type", "has " + std::to_string(types->integers.size()) + " types for " + std::to_string(n) +
                                 " tokens (expected one per token)");
    for (size_t i = 0; i < n; ++i) {
      const int64_t t = types->integers[i];
      if (t < 1 || t > 6)
        k.k.fail(itemKey("token_type", i), "is " + std::to_string(t) +
                                               ": not a token type (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte)");
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
  if (const GgufValue* n = k.h.find("general.name"); n && n->type == GgufType::String) name = n->text;
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

// Splitting a token is quadratic in its length: longer ones (SentencePiece
// makes pieces of at most 16 characters; no released vocabulary has a token
// near this) are not made by merges, so that a hostile file cannot stall the load.
constexpr size_t kMaxMergedBytes = 1024;

// SentencePiece's merges, from the scores: each token that is two tokens
// joined (at a character boundary) is their merge, ranked by its score,
// highest first, equal scores equal ranks (applyMerges then takes the
// leftmost, as llm_tokenizer_spm's queue does).
MergeMap scoreMerges(const Keys& k, const Vocabulary& v) {
  const size_t n = v.tokens.size();
  std::vector<double> scores(n, 0.0);  // llama.cpp's when the key is absent
  if (const GgufValue* s = k.array("scores", isNumberType, "numbers")) {
    const bool integral = isIntegerType(s->element);
    const size_t count = integral ? s->integers.size() : s->numbers.size();
    if (count != n)
      k.k.fail("scores", "has " + std::to_string(count) + " scores for " + std::to_string(n) + " tokens (expected one per token)");
    for (size_t i = 0; i < n; ++i) {
      scores[i] = integral ? static_cast<double>(s->integers[i]) : s->numbers[i];
      if (!std::isfinite(scores[i])) k.k.fail(itemKey("scores", i), "is not finite");
    }
  }
  std::vector<double> distinct = scores;
  std::sort(distinct.begin(), distinct.end(), std::greater<>());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  MergeMap merges;
  for (size_t id = 0; id < n; ++id) {
    const std::string& token = v.tokens[id];
    if (token.size() > kMaxMergedBytes) continue;
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
  const GgufValue& list = *k.array("merges", isStringType, "strings", "a 'gpt2' vocabulary's merges");
  MergeMap merges;
  merges.reserve(list.texts.size());
  for (size_t i = 0; i < list.texts.size(); ++i) {
    const std::string& merge = list.texts[i];
    const size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string::npos;
    if (space == std::string::npos || space + 1 == merge.size())
      k.k.fail(itemKey("merges", i), "is " + shown(merge) + " (expected two tokens separated by a space)");
    const std::string left = merge.substr(0, space), right = merge.substr(space + 1);
    const auto idOf = [&](const std::string& token) {
      const auto it = v.ids.find(token);
      if (it == v.ids.end()) k.k.fail(itemKey("merges", i), "names " + shown(token) + ", not a token of tokenizer.ggml.tokens");
      return it->second;
    };
    const int32_t a = idOf(left), b = idOf(right), merged = idOf(left + right);
    merges.emplace(pairKey(a, b), Merge{static_cast<int32_t>(i), merged});
  }
  return merges;
}

// A side's special token: when the flag `add_key` says so, the id, which must exist.
std::vector<int32_t> addedSide(Keys& k, const std::string& add_key, bool add_default, int32_t id, const std::string& id_key) {
  if (!k.k.flag(add_key, add_default)) return {};
  if (id < 0) k.k.fail(add_key, "is true but there is no tokenizer.ggml." + id_key);
  return {id};
}

// [SECTION] The three models

// "llama" and "gpt2": bos / eos and what llama_tokenize adds around a text.
HfTokenizer bpeTokenizer(Keys& k, BpeParts parts, int64_t default_bos, int64_t default_eos, bool default_add_bos) {
  const size_t n = parts.tokens.size();
  HfTokenizer out;
  out.bos = k.id("bos_token_id", default_bos, n);
  out.eos = k.id("eos_token_id", default_eos, n);
  out.before = addedSide(k, "add_bos_token", default_add_bos, out.bos, "bos_token_id");
  out.after = addedSide(k, "add_eos_token", false, out.eos, "eos_token_id");
  out.add_bos = !out.before.empty() && out.after.empty();
  out.tokenizer = makeBpeTokenizer(std::move(parts), k.what + ": metadata 'tokenizer.ggml.tokens'", k.what + ": metadata 'tokenizer.ggml.pre'");
  return out;
}

// llama.cpp's defaults when the file names none: <unk> 0, <s> 1, </s> 2.
HfTokenizer sentencePiece(Keys& k, Vocabulary v) {
  BpeParts parts;
  parts.merges = scoreMerges(k, v);
  parts.whole = wholeTokens(k, v);
  parts.byte_level = false;
  parts.space_prefix = k.k.flag("add_space_prefix", true);
  parts.unk = k.id("unknown_token_id", 0, v.tokens.size());
  parts.tokens = std::move(v.tokens);
  return bpeTokenizer(k, std::move(parts), 1, 2, true);
}

// llama.cpp's defaults for a "gpt2" vocabulary are bos = eos = 11 (from
// before the files named them); they are followed here too.
HfTokenizer byteLevel(Keys& k, Vocabulary v) {
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
HfTokenizer wordPiece(Keys& k, Vocabulary v) {
  const size_t n = v.tokens.size();
  for (std::string& token : v.tokens) {
    if (token.rfind("\xE2\x96\x81", 0) == 0)
      token.erase(0, 3);
    else if (!(token.size() >= 2 && token.front() == '[' && token.back() == ']'))
      token.insert(0, "##");
  }
  const int32_t unk = k.id("unknown_token_id", 100, n);
  if (unk < 0) k.k.fail("unknown_token_id", "is missing (WordPiece gives it for words it cannot split)");
  WordPieceOptions options;
  options.lower_case = k.k.flag("normalizer.lowercase", true);
  options.strip_accents = k.k.flag("normalizer.strip_accents", options.lower_case);
  options.unk = v.tokens[unk];
  HfTokenizer out;
  // [CLS]: bos_token_id, else cls_token_id (what the converter saves for
  // BERT; llama.cpp reads only bos, and falls back to 101, BERT's own vocabularies' [CLS]).
  out.bos = k.id("bos_token_id", k.id("cls_token_id", 101, n), n);
  out.eos = k.id("eos_token_id", -1, n);
  const int32_t sep = k.id("seperator_token_id", 102, n);
  if (out.bos < 0) k.k.fail("bos_token_id", "is missing, and so is cls_token_id (BERT's [CLS], put before the text)");
  if (sep < 0) k.k.fail("seperator_token_id", "is missing (BERT's [SEP], put after the text)");
  out.before = {out.bos};
  out.after = {sep};
  out.tokenizer = makeWordPieceTokenizer(std::move(v.tokens), options, k.what,
                                         [](size_t i) { return "metadata 'tokenizer.ggml.tokens[" + std::to_string(i) + "]'"; });
  return out;
}

}  // namespace

HfTokenizer makeGgufTokenizer(const GgufHeader& h, const std::string& what) {
  Keys k{h, what};
  if (!k.find("model")) k.k.fail("model", "is missing (the tokenizer's kind)");
  const std::string model = k.k.text("model", "");
  if (model != "llama" && model != "gpt2" && model != "bert")
    k.k.fail("model", "is " + shown(model) + ": not supported (supported: 'llama' (SentencePiece BPE), 'gpt2' (byte-level BPE), 'bert' (WordPiece))");
  Vocabulary v = readVocabulary(k);
  if (model == "llama") return sentencePiece(k, std::move(v));
  if (model == "gpt2") return byteLevel(k, std::move(v));
  return wordPiece(k, std::move(v));
}

}  // namespace attn
