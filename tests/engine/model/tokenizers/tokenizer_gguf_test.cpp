// GGUF tokenizers (engine/model/tokenizers/tokenizer_gguf.h): metadata built in
// memory as convert_hf_to_gguf.py writes it from the files the other
// tokenizers read must give their ids: the fixture checkpoints' byte-level
// tokenizer.json, Llama 3's and Llama 2's real tokenizer.json against the npm
// reference encoders, the SentencePiece fixture against Python's
// sentencepiece, BERT's vocab.txt. Then each pre-tokenizer of the table on a
// vocabulary whose merges tell its splits apart, and every kind of bad
// metadata.
#include "engine/error.h"
#include "engine/model/tokenizers/tokenizer.h"
#include "engine/model/tokenizers/tokenizer_gguf.h"

#include "tests/gguf_fixture.h"
#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sentencepiece_processor.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

namespace attn {
namespace {

using Ids = std::vector<int32_t>;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kWhat = "model.gguf";
// tokenizer.ggml.token_type's values
constexpr int64_t kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kByte = 6;

GgufValue boolean(bool b) { return ggufInt(GgufType::Bool, b); }
GgufValue uint32(int64_t i) { return ggufInt(GgufType::UInt32, i); }
GgufValue int32s(const std::vector<int64_t>& v) { return ggufInts(GgufType::Int32, v); }

HfTokenizer load(const GgufHeader& h) { return makeGgufTokenizer(h, kWhat); }

// `h`'s metadata written to a file's bytes and read back by the GGUF reader.
GgufHeader throughFile(const GgufHeader& h) {
  std::vector<test::GgufKv> kv;
  for (const auto& [key, value] : h.metadata) kv.push_back({key, value});
  const std::string bytes = test::ggufBytes(kv, {});
  return parseGgufHeader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), kWhat);
}

// tokenizer.ggml.model and .tokens; the test adds the other keys.
GgufHeader vocabulary(const std::string& model, const std::vector<std::string>& tokens) {
  GgufHeader h;
  h.metadata["tokenizer.ggml.model"] = ggufString(model);
  h.metadata["tokenizer.ggml.tokens"] = ggufStrings(tokens);
  return h;
}

// A tokenizer.json merge ("a b" or ["a", "b"]) as GGUF writes it, and the token it makes.
std::string mergeText(const json& m) {
  return m.is_string() ? m.get<std::string>() : m[0].get<std::string>() + " " + m[1].get<std::string>();
}
std::string merged(const std::string& merge) { return merge.substr(0, merge.find(' ')) + merge.substr(merge.find(' ') + 1); }

// [SECTION] Byte-level ("gpt2") from a tokenizer.json

// convert_hf_to_gguf.py's get_vocab_base: the tokens by id, added tokens
// control when special and user-defined when not, the merges as "a b".
GgufHeader fromByteLevelJson(const json& file, const std::string& pre, int64_t bos, int64_t eos) {
  std::vector<std::pair<std::string, int64_t>> entries;
  for (const auto& [token, id] : file.at("model").at("vocab").items()) entries.emplace_back(token, id.get<int64_t>());
  std::map<int64_t, int64_t> type_of;
  for (const json& a : file.at("added_tokens")) {
    entries.emplace_back(a.at("content").get<std::string>(), a.at("id").get<int64_t>());
    type_of[a.at("id").get<int64_t>()] = a.at("special").get<bool>() ? kControl : kUserDefined;
  }
  int64_t n = 0;
  for (const auto& e : entries) n = std::max(n, e.second + 1);
  std::vector<std::string> tokens(n);
  std::vector<int64_t> types(n, kNormal);
  for (const auto& [token, id] : entries) tokens[id] = token;
  for (const auto& [id, type] : type_of) types[id] = type;
  std::vector<std::string> merges;
  for (const json& m : file.at("model").at("merges")) merges.push_back(mergeText(m));
  GgufHeader h = vocabulary("gpt2", tokens);
  h.metadata["tokenizer.ggml.pre"] = ggufString(pre);
  h.metadata["tokenizer.ggml.token_type"] = int32s(types);
  h.metadata["tokenizer.ggml.merges"] = ggufStrings(merges);
  h.metadata["tokenizer.ggml.bos_token_id"] = uint32(bos);
  h.metadata["tokenizer.ggml.eos_token_id"] = uint32(eos);
  return h;
}

// Both give the same ids for every text, and decode them the same way.
void expectSameIds(const Tokenizer& gguf, const Tokenizer& reference, const std::vector<std::string>& cases) {
  for (const std::string& t : cases) {
    const Ids ids = gguf.encode(t);
    EXPECT_EQ(ids, reference.encode(t)) << "text " << json(t).dump();
    EXPECT_EQ(gguf.decode(ids), reference.decode(ids)) << "text " << json(t).dump();
  }
}

const std::vector<std::string> kTexts = {
    "Hello world",    " the cat sat on the mat",   "the  the\n\nthe\t \t", "It's 12345 o'clock, isn't it?",
    "  leading and trailing  ", "é ü 😀 数字 нещо", "", "x",
};

TEST(TokenizerGguf, ByteLevelAsTheFixturesTokenizerJson) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama});
  const std::string file = test::slurp(dir.path / "tokenizer.json"), config = test::slurp(dir.path / "tokenizer_config.json");
  const HfTokenizer hf = makeHfTokenizer(file, config, "tokenizer.json", "tokenizer_config.json");
  GgufHeader h = fromByteLevelJson(json::parse(file), "gpt-2", 259, 260);  // its ByteLevel use_regex: GPT-2's pattern
  h.metadata["tokenizer.ggml.add_bos_token"] = boolean(true);
  const HfTokenizer gguf = load(throughFile(h));
  std::vector<std::string> cases = kTexts;
  cases.push_back("<s>the</s> the");  // added tokens split out on both sides
  expectSameIds(*gguf.tokenizer, *hf.tokenizer, cases);
  EXPECT_EQ(gguf.tokenizer->vocabSize(), hf.tokenizer->vocabSize());
  EXPECT_EQ(gguf.tokenizer->display(gguf.tokenizer->specialId("Ġthe")), " the");
  EXPECT_EQ(gguf.bos, hf.bos);
  EXPECT_EQ(gguf.eos, hf.eos);
  EXPECT_EQ(gguf.before, hf.before);
  EXPECT_EQ(gguf.after, hf.after);
  EXPECT_TRUE(gguf.add_bos);
  // add_bos_token absent: "gpt-2" does not add bos (only Llama 3's pre-tokenizer does)
  h.metadata.erase("tokenizer.ggml.add_bos_token");
  EXPECT_TRUE(load(h).before.empty());
  h.metadata["tokenizer.ggml.add_eos_token"] = boolean(true);
  EXPECT_EQ(load(h).after, (Ids{260}));
  EXPECT_FALSE(load(h).add_bos);
}

// [SECTION] Llama 3 and Llama 2 against llama3-tokenizer-js / llama-tokenizer-js

const fs::path kGgufLlamaDir = fs::path(ATTNLAB_NPM_DIR) / "llama";

class TokenizerGgufLlama : public ::testing::Test {
 protected:
  void SetUp() override {
    // A missing reference fails: a skip reads as a pass in ctest's summary.
    const fs::path file = kGgufLlamaDir / "llama_expected.json";
    ASSERT_TRUE(fs::is_regular_file(file)) << file.string()
                                           << " is missing; write it with: " << test::referenceIdsCommand(ATTNLAB_NPM_DIR);
    expected_ = json::parse(test::slurp(file));
  }
  // The package's ids for each of its strings, and decode(encode(text)) == text.
  void compare(const Tokenizer& tok, const std::string& name) {
    const json& cases = expected_.at(name);
    ASSERT_GE(cases.size(), 70u);
    for (const json& c : cases) {
      const std::string t = c.at("text").get<std::string>();
      const Ids ids = tok.encode(t);
      EXPECT_EQ(ids, c.at("ids").get<Ids>()) << "text " << c.at("text").dump();
      EXPECT_EQ(tok.decode(ids), t) << "text " << c.at("text").dump();
    }
    std::printf("[ compared ] %zu strings of %s\n", cases.size(), name.c_str());
  }
  json expected_;
};

TEST_F(TokenizerGgufLlama, Llama3) {
  const json file = json::parse(test::slurp(kGgufLlamaDir / "llama3" / "tokenizer.json"));
  const HfTokenizer gguf = load(fromByteLevelJson(file, "llama-bpe", 128000, 128001));
  compare(*gguf.tokenizer, "llama3");
  // Llama 3's pre-tokenizer adds bos by default; digits in threes
  EXPECT_EQ(gguf.before, (Ids{128000}));
  EXPECT_EQ(gguf.tokenizer->encode("1234567").size(), 3u);
  EXPECT_EQ(gguf.tokenizer->encode("<|begin_of_text|>Hi<|eot_id|>"),
            (Ids{128000, gguf.tokenizer->specialId("Hi"), 128009}));
}

// Llama 2's tokenizer.json as a "llama" vocabulary. Its merges are in the
// order of the tokenizer.model scores of the tokens they make (convert reads
// the scores from tokenizer.model; here a token's score is minus the rank of
// its first merge, 0 for those no merge makes).
GgufHeader llama2Gguf(const json& file) {
  const json& vocab = file.at("model").at("vocab");
  std::vector<std::string> tokens(vocab.size());
  for (const auto& [token, id] : vocab.items()) tokens[id.get<size_t>()] = token;
  std::map<std::string, size_t> rank_of;
  const json& merges = file.at("model").at("merges");
  for (size_t r = 0; r < merges.size(); ++r) rank_of.emplace(merged(mergeText(merges[r])), r);
  std::vector<int64_t> types(tokens.size(), kNormal);
  std::vector<float> scores(tokens.size(), 0.0f);
  for (size_t id = 0; id < tokens.size(); ++id) {
    const bool byte = tokens[id].size() == 6 && tokens[id].rfind("<0x", 0) == 0;
    types[id] = id == 0 ? kUnknown : id < 3 ? kControl : byte ? kByte : kNormal;
    if (const auto r = rank_of.find(tokens[id]); r != rank_of.end()) scores[id] = -static_cast<float>(r->second);
  }
  GgufHeader h = vocabulary("llama", tokens);
  h.metadata["tokenizer.ggml.scores"] = ggufFloats(scores);
  h.metadata["tokenizer.ggml.token_type"] = int32s(types);
  return h;
}

TEST_F(TokenizerGgufLlama, Llama2) {
  const json file = json::parse(test::slurp(kGgufLlamaDir / "llama2" / "tokenizer.json"));
  const HfTokenizer gguf = load(llama2Gguf(file));
  compare(*gguf.tokenizer, "llama2");
  // llama.cpp's defaults: <s> 1 added, </s> 2; each stretch of text after a
  // special token gets its own '▁' (as Llama 2's legacy tokenizer.json)
  EXPECT_EQ(gguf.before, (Ids{1}));
  EXPECT_EQ(gguf.eos, 2);
  const Tokenizer& tok = *gguf.tokenizer;
  EXPECT_EQ(tok.encode("<s>Hello</s>"), (Ids{1, tok.specialId("▁Hello"), 2}));
  EXPECT_EQ(tok.display(tok.specialId("<0x0A>")), "\n");
}

// [SECTION] SentencePiece ("llama") from the tokenizer.model fixture

const fs::path kGgufSpData = fs::path(ATTNLAB_SOURCE_DIR) / "tests" / "data" / "sentencepiece";

// convert_hf_to_gguf.py's _create_vocab_sentencepiece: each piece, its score and its type.
GgufHeader fromSentencePiece(const std::string& model) {
  sentencepiece::SentencePieceProcessor sp;
  EXPECT_TRUE(sp.LoadFromSerializedProto(model).ok());
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int64_t> types;
  for (int id = 0; id < sp.GetPieceSize(); ++id) {
    tokens.push_back(sp.IdToPiece(id));
    scores.push_back(sp.GetScore(id));
    types.push_back(sp.IsUnknown(id) ? kUnknown : sp.IsControl(id) ? kControl : sp.IsByte(id) ? kByte : kNormal);
  }
  GgufHeader h = vocabulary("llama", tokens);
  h.metadata["tokenizer.ggml.scores"] = ggufFloats(scores);
  h.metadata["tokenizer.ggml.token_type"] = int32s(types);
  h.metadata["tokenizer.ggml.bos_token_id"] = uint32(sp.bos_id());
  h.metadata["tokenizer.ggml.eos_token_id"] = uint32(sp.eos_id());
  h.metadata["tokenizer.ggml.unknown_token_id"] = uint32(sp.unk_id());
  h.metadata["tokenizer.ggml.add_space_prefix"] = boolean(true);  // the model's add_dummy_prefix
  return h;
}

TEST(TokenizerGguf, SentencePieceAsPythonSentencePiece) {
  const std::string model = test::slurp(kGgufSpData / "tokenizer.model");
  const json expected = json::parse(test::slurp(kGgufSpData / "expected.json"));
  GgufHeader h = fromSentencePiece(model);
  const HfTokenizer gguf = load(throughFile(h));
  const HfTokenizer sp = makeSentencePieceTokenizer(model, std::nullopt, "tokenizer.model", "tokenizer_config.json");
  const Tokenizer& tok = *gguf.tokenizer;
  size_t compared = 0;
  for (const json& c : expected.at("cases")) {
    const std::string t = c.at("text").get<std::string>();
    if (t.find("<s>") != std::string::npos) continue;  // below: llama.cpp splits out the control tokens
    EXPECT_EQ(tok.encode(t), c.at("ids").get<Ids>()) << "text " << c.at("text").dump();
    EXPECT_EQ(tok.decode(tok.encode(t)), c.at("decoded").get<std::string>()) << "text " << c.at("text").dump();
    ++compared;
  }
  EXPECT_GE(compared, 9u);
  expectSameIds(tok, *sp.tokenizer, kTexts);
  // "<s>the</s>": SentencePiece reads the text "<s>", llama.cpp the control
  // token; the stretch between gets its own '▁'.
  EXPECT_EQ(tok.encode("<s>the</s>"), (Ids{1, sp.tokenizer->encode("the").front(), 2}));
  EXPECT_EQ(gguf.before, sp.before);
  EXPECT_EQ(gguf.eos, sp.eos);
  EXPECT_EQ(tok.display(tok.specialId("<0xC3>")), "\\xC3");

  // add_space_prefix false (Gemma's): no '▁' where the text starts
  h.metadata["tokenizer.ggml.add_space_prefix"] = boolean(false);
  const HfTokenizer bare = load(h);
  for (const std::string t : {"the cat", "hello world", "a  b"}) EXPECT_EQ(bare.tokenizer->encode(" " + t), tok.encode(t)) << t;
  EXPECT_EQ(bare.tokenizer->decode(bare.tokenizer->encode(" the")), " the");

  // Phi-3's files (general.name): the whitespace after a special token goes
  // with it, but not after <s>
  h.metadata["tokenizer.ggml.add_space_prefix"] = boolean(true);
  h.metadata["general.name"] = ggufString("Phi-3 Mini 4k Instruct");
  const HfTokenizer phi3_hf = load(h);
  const Tokenizer& phi3 = *phi3_hf.tokenizer;
  EXPECT_EQ(phi3.encode("</s>  \n the"), tok.encode("</s>the"));
  EXPECT_EQ(phi3.encode("<s> the"), tok.encode("<s> the"));
  EXPECT_NE(tok.encode("</s>  \n the"), tok.encode("</s>the"));
}

// Equal scores: the leftmost pair merges first (llm_tokenizer_spm's queue).
TEST(TokenizerGguf, SentencePieceEqualScoresMergeLeftmostFirst) {
  //                                  0       1    2    3    4     5
  GgufHeader h = vocabulary("llama", {"<unk>", "▁", "a", "b", "ab", "▁a"});
  h.metadata["tokenizer.ggml.scores"] = ggufFloats({0, 0, 0, 0, -1, -1});
  h.metadata["tokenizer.ggml.token_type"] = int32s({kUnknown, kNormal, kNormal, kNormal, kNormal, kNormal});
  h.metadata["tokenizer.ggml.add_bos_token"] = boolean(false);
  const HfTokenizer hf = load(h);
  const Tokenizer& tok = *hf.tokenizer;
  // "▁ab" is ▁ a b: ▁a and ab score alike, ▁a is further left
  EXPECT_EQ(tok.encode("ab"), (Ids{5, 3}));
  // ab scoring higher merges first
  h.metadata["tokenizer.ggml.scores"] = ggufFloats({0, 0, 0, 0, -1, -3});
  EXPECT_EQ(load(h).tokenizer->encode("ab"), (Ids{1, 4}));
  // no byte tokens: a character outside the vocabulary is <unk>
  EXPECT_EQ(tok.encode("c"), (Ids{1, 0}));
}

// [SECTION] WordPiece ("bert") from vocab.txt

TEST(TokenizerGguf, WordPieceAsVocabTxt) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Bert});
  const std::string vocab_txt = test::slurp(dir.path / "vocab.txt");
  const auto reference = makeWordPieceTokenizer(vocab_txt, WordPieceOptions{}, "vocab.txt");
  // BertModel.set_vocab's phantom(): "▁word", "##ing" → "ing", "[CLS]" kept
  std::vector<std::string> tokens;
  std::vector<int64_t> types;
  for (size_t at = 0; at < vocab_txt.size();) {
    const size_t nl = vocab_txt.find('\n', at);
    std::string t = vocab_txt.substr(at, nl - at);
    at = nl + 1;
    const bool special = t.front() == '[' && t.back() == ']';
    types.push_back(special ? kControl : kNormal);
    tokens.push_back(special ? t : t.rfind("##", 0) == 0 ? t.substr(2) : "▁" + t);
  }
  GgufHeader h = vocabulary("bert", tokens);
  h.metadata["tokenizer.ggml.token_type"] = int32s(types);
  h.metadata["tokenizer.ggml.unknown_token_id"] = uint32(reference->specialId("[UNK]"));
  h.metadata["tokenizer.ggml.bos_token_id"] = uint32(reference->specialId("[CLS]"));
  h.metadata["tokenizer.ggml.seperator_token_id"] = uint32(reference->specialId("[SEP]"));
  h.metadata["tokenizer.ggml.padding_token_id"] = uint32(reference->specialId("[PAD]"));
  const HfTokenizer gguf = load(h);
  std::vector<std::string> cases = kTexts;
  for (const char* t : {"The cat sat on the mat.", "the big red hats, it was sitting", "A DOG RAN", "zebra", "cats[SEP]"})
    cases.push_back(t);
  expectSameIds(*gguf.tokenizer, *reference, cases);
  EXPECT_EQ(gguf.tokenizer->display(reference->specialId("##ing")), "##ing");
  EXPECT_EQ(gguf.before, (Ids{reference->specialId("[CLS]")}));
  EXPECT_EQ(gguf.after, (Ids{reference->specialId("[SEP]")}));
  EXPECT_FALSE(gguf.add_bos);
}

// [SECTION] The pre-tokenizers of llama.cpp's table

// The 256 byte symbols, then merges whose results tell the splits apart.
GgufHeader splitsVocabulary(const std::string& pre) {
  std::vector<std::string> tokens;
  for (const std::string& s : gpt2ByteSymbols()) tokens.push_back(s);
  const std::vector<std::string> merges = {"3 4", "1 2", "12 3", "4 5", "34 5", "Ġ .", "a -", "- b"};
  for (const std::string& m : merges) tokens.push_back(merged(m));
  tokens.push_back("xyz");  // no merge makes it: only ignore_merges finds it
  GgufHeader h = vocabulary("gpt2", tokens);
  h.metadata["tokenizer.ggml.pre"] = ggufString(pre);
  h.metadata["tokenizer.ggml.merges"] = ggufStrings(merges);
  return h;
}

TEST(TokenizerGguf, PreTokenizersSplitAsLlamaCppsRegexes) {
  using Pieces = std::vector<std::string>;
  struct Expected {
    std::vector<std::string> names;
    Pieces digits, space_dot, dash, xyz;  // of "12345", " .", "a-b", "xyz"
  };
  const Pieces x_y_z = {"x", "y", "z"};
  const std::vector<Expected> table = {
      // [\p{P}…]+ first isolates the '.'; [0-9]{3} cuts the digits
      {{"default"}, {"123", "45"}, {"Ġ", "."}, {"a", "-", "b"}, x_y_z},
      {{"gpt-2", "phi-2", "mpt", "olmo"}, {"12", "345"}, {"Ġ."}, {"a", "-", "b"}, x_y_z},
      // \p{N}{1,3}; [^\r\n\p{L}\p{N}]?\p{L}+ takes "-b"; ignore_merges
      {{"llama-bpe", "llama3", "llama-v3"}, {"123", "45"}, {"Ġ."}, {"a", "-b"}, {"xyz"}},
      {{"dbrx"}, {"123", "45"}, {"Ġ."}, {"a", "-b"}, x_y_z},
      {{"qwen2", "deepseek-r1-qwen"}, {"1", "2", "3", "4", "5"}, {"Ġ."}, {"a", "-b"}, x_y_z},
      {{"starcoder", "smollm"}, {"1", "2", "3", "4", "5"}, {"Ġ."}, {"a", "-", "b"}, x_y_z},
      // one piece up to whitespace or .,!?…: "a-b" whole, a- merging first
      {{"bloom"}, {"12", "345"}, {"Ġ."}, {"a-", "b"}, x_y_z},
  };
  for (const Expected& e : table)
    for (const std::string& name : e.names) {
      const HfTokenizer hf = load(splitsVocabulary(name));
      const Tokenizer& tok = *hf.tokenizer;
      const auto ids = [&](const Pieces& pieces) {
        Ids out;
        for (const std::string& p : pieces) out.push_back(tok.specialId(p));
        return out;
      };
      EXPECT_EQ(tok.encode("12345"), ids(e.digits)) << name;
      EXPECT_EQ(tok.encode(" ."), ids(e.space_dot)) << name;
      EXPECT_EQ(tok.encode("a-b"), ids(e.dash)) << name;
      EXPECT_EQ(tok.encode("xyz"), ids(e.xyz)) << name;
      const std::string mixed = "Ünïcödé 日本語 \xF0\x9F\x98\x80 a-b, 12345!\n\n";
      EXPECT_EQ(tok.decode(tok.encode(mixed)), mixed) << name;
      EXPECT_EQ(hf.before.empty(), name.rfind("llama", 0) != 0) << name;  // Llama 3's adds bos
    }
  // a file without tokenizer.ggml.pre: llama.cpp's default
  GgufHeader h = splitsVocabulary("default");
  h.metadata.erase("tokenizer.ggml.pre");
  EXPECT_EQ(load(h).tokenizer->encode(" ."), load(splitsVocabulary("default")).tokenizer->encode(" ."));
}

// [SECTION] Bad metadata

TEST(TokenizerGguf, BadMetadataIsRefusedInOneLine) {
  using Change = std::function<void(GgufHeader&)>;
  const auto refused = [](GgufHeader h, const Change& change, const std::vector<std::string>& parts) {
    change(h);
    test::expectHas(test::errorOf([&] { load(h); }), parts);
  };
  const auto set = [](const std::string& key, GgufValue v) { return [=](GgufHeader& h) { h.metadata[key] = v; }; };
  const auto drop = [](const std::string& key) { return [=](GgufHeader& h) { h.metadata.erase(key); }; };
  const GgufHeader bpe = splitsVocabulary("gpt-2");
  const GgufHeader spm = fromSentencePiece(test::slurp(kGgufSpData / "tokenizer.model"));
  const size_t n = bpe.metadata.at("tokenizer.ggml.tokens").texts.size();
  std::vector<std::string> tokens = bpe.metadata.at("tokenizer.ggml.tokens").texts;

  refused(bpe, drop("tokenizer.ggml.model"), {kWhat, "metadata 'tokenizer.ggml.model' is missing"});
  refused(bpe, set("tokenizer.ggml.model", ggufString("t5")), {kWhat, "tokenizer.ggml.model", "'t5'", "not supported", "'llama'"});
  refused(bpe, set("tokenizer.ggml.model", uint32(1)), {"'tokenizer.ggml.model' must be a string, got uint32"});
  refused(bpe, drop("tokenizer.ggml.tokens"), {kWhat, "'tokenizer.ggml.tokens' is missing"});
  refused(bpe, set("tokenizer.ggml.tokens", int32s({1, 2})), {"'tokenizer.ggml.tokens' must be an array of strings, got an array of int32"});
  refused(bpe, set("tokenizer.ggml.tokens", ggufStrings({})), {"'tokenizer.ggml.tokens' is empty"});
  std::vector<std::string> repeated = tokens;
  repeated[260] = repeated[5];
  refused(bpe, set("tokenizer.ggml.tokens", ggufStrings(repeated)), {"'tokenizer.ggml.tokens[260]' is", "as tokenizer.ggml.tokens[5] is"});
  refused(bpe, set("tokenizer.ggml.token_type", int32s({1, 1})), {"'tokenizer.ggml.token_type' has 2 types for " + std::to_string(n) + " tokens"});
  std::vector<int64_t> types(n, kNormal);
  types[7] = 9;
  refused(bpe, set("tokenizer.ggml.token_type", int32s(types)), {"'tokenizer.ggml.token_type[7]' is 9: not a token type"});
  refused(bpe, set("tokenizer.ggml.token_type", ggufFloats(std::vector<float>(n, 1.0f))),
          {"'tokenizer.ggml.token_type' must be an array of integers, got an array of float32"});
  // byte-level
  refused(bpe, drop("tokenizer.ggml.merges"), {kWhat, "'tokenizer.ggml.merges' is missing"});
  refused(bpe, set("tokenizer.ggml.merges", ggufStrings({"ab"})), {"'tokenizer.ggml.merges[0]' is 'ab'", "two tokens separated by a space"});
  refused(bpe, set("tokenizer.ggml.merges", ggufStrings({"3 4", "q qq"})), {"'tokenizer.ggml.merges[1]' names 'qq', not a token"});
  refused(bpe, set("tokenizer.ggml.merges", ggufStrings({"x y"})), {"'tokenizer.ggml.merges[0]' names 'xy', not a token"});
  refused(bpe, set("tokenizer.ggml.pre", ggufString("deepseek-llm")),
          {kWhat, "'tokenizer.ggml.pre' is 'deepseek-llm': not a pre-tokenizer", "llama-bpe", "qwen2"});
  refused(bpe, set("tokenizer.ggml.pre", boolean(true)), {"'tokenizer.ggml.pre' must be a string, got bool"});
  std::vector<std::string> no_byte = tokens;
  no_byte[0] = "NUL";  // "Ā", byte 0's symbol
  refused(bpe, set("tokenizer.ggml.tokens", ggufStrings(no_byte)), {"'tokenizer.ggml.tokens'", "'Ā'", "byte \\x00", "missing"});
  // special ids and flags
  refused(bpe, set("tokenizer.ggml.bos_token_id", uint32(static_cast<int64_t>(n))),
          {"'tokenizer.ggml.bos_token_id' is " + std::to_string(n) + ", outside the " + std::to_string(n) + " tokens"});
  refused(bpe, set("tokenizer.ggml.eos_token_id", ggufString("2")), {"'tokenizer.ggml.eos_token_id' must be an integer token id, got string"});
  refused(bpe, set("tokenizer.ggml.add_bos_token", uint32(1)), {"'tokenizer.ggml.add_bos_token' must be a bool, got uint32"});
  // SentencePiece
  refused(spm, set("tokenizer.ggml.scores", ggufFloats({0, 1, 2})), {"'tokenizer.ggml.scores' has 3 scores for 340 tokens", "one per token"});
  std::vector<float> nan_scores(340, 0.0f);
  nan_scores[4] = std::nanf("");
  refused(spm, set("tokenizer.ggml.scores", ggufFloats(nan_scores)), {"'tokenizer.ggml.scores[4]' is not finite"});
  refused(spm, set("tokenizer.ggml.scores", ggufStrings({"a"})), {"'tokenizer.ggml.scores' must be an array of numbers, got an array of string"});
  // llama.cpp's default bos 1 is outside a vocabulary of one token
  refused(vocabulary("llama", {"a"}), [](GgufHeader&) {}, {"'tokenizer.ggml.add_bos_token' is true but there is no tokenizer.ggml.bos_token_id"});
  // WordPiece: [UNK], [CLS], [SEP] by id (llama.cpp's defaults 100, 101, 102 are outside this one)
  GgufHeader bert = vocabulary("bert", {"[UNK]", "[CLS]", "[SEP]", "▁the", "s"});
  bert.metadata["tokenizer.ggml.unknown_token_id"] = uint32(0);
  bert.metadata["tokenizer.ggml.bos_token_id"] = uint32(1);
  bert.metadata["tokenizer.ggml.seperator_token_id"] = uint32(2);
  EXPECT_EQ(load(bert).tokenizer->encode("the thes"), (Ids{3, 3, 4}));
  refused(bert, drop("tokenizer.ggml.unknown_token_id"), {"'tokenizer.ggml.unknown_token_id' is missing"});
  refused(bert, drop("tokenizer.ggml.bos_token_id"), {"'tokenizer.ggml.bos_token_id' is missing", "cls_token_id", "[CLS]"});
  // the converter's BERT files name [CLS] as cls_token_id, no bos
  GgufHeader cls = bert;
  cls.metadata.erase("tokenizer.ggml.bos_token_id");
  cls.metadata["tokenizer.ggml.cls_token_id"] = uint32(1);
  EXPECT_EQ(load(cls).before, (Ids{1}));
  EXPECT_EQ(load(cls).after, (Ids{2}));
  refused(bert, drop("tokenizer.ggml.seperator_token_id"), {"'tokenizer.ggml.seperator_token_id' is missing", "[SEP]"});
  refused(bert, set("tokenizer.ggml.tokens", ggufStrings({"[UNK]", "[CLS]", "[SEP]", "▁the", "▁"})), {"'tokenizer.ggml.tokens[4]' is empty"});
  // "▁[X]" and "[X]" are both [X] once the '▁' words are undone
  refused(bert, set("tokenizer.ggml.tokens", ggufStrings({"[UNK]", "[CLS]", "[SEP]", "[X]", "▁[X]"})),
          {"'tokenizer.ggml.tokens[4]'", "'[X]' repeats metadata 'tokenizer.ggml.tokens[3]'"});
  // an empty token is named as llama.cpp names it
  GgufHeader empty = bert;
  empty.metadata["tokenizer.ggml.tokens"] = ggufStrings({"[UNK]", "[CLS]", "[SEP]", "▁the", ""});
  EXPECT_EQ(load(empty).tokenizer->display(4), "[EMPTY_4]");
}

}  // namespace
}  // namespace attn
