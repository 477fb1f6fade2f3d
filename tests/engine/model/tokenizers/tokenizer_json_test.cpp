// tokenizer.json tokenizers (engine/model/tokenizers/tokenizer_json.h): the Llama 2 and
// Llama 3 vocabularies against the npm reference encoders (files written by
// tests/tokenizer_json_expected.js from the packages' own vocabularies and
// merges, run by scripts/test.sh), small hand-written files for each
// feature with hand-derived ids, and every kind of bad file.
#include "engine/error.h"
#include "engine/model/tokenizers/tokenizer_json.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

namespace attn {
namespace {

using Ids = std::vector<int32_t>;
using nlohmann::json;

// [SECTION] Llama 2 and Llama 3 against llama-tokenizer-js / llama3-tokenizer-js

const std::filesystem::path kLlamaDir = std::filesystem::path(ATTNLAB_NPM_DIR) / "llama";

HfTokenizer loadWritten(const std::string& name) {
  const std::filesystem::path file = kLlamaDir / name / "tokenizer.json";
  return makeHfTokenizer(test::slurp(file), std::nullopt, file.string(), "tokenizer_config.json");
}

// Every case: the package's ids exactly, and decode(encode(text)) == text
// when `round_trip` (prepend_scheme "first" reads a leading space as the
// prepended '▁', which decoding drops, as `tokenizers`' Strip decoder does).
// Returns how many strings were compared.
size_t compareWithPackage(const Tokenizer& tok, const json& cases, bool round_trip = true) {
  for (const json& c : cases) {
    const std::string text = c.at("text").get<std::string>();
    const Ids ids = tok.encode(text);
    EXPECT_EQ(ids, c.at("ids").get<Ids>()) << "text: " << c.at("text").dump();
    if (round_trip) {
      EXPECT_EQ(tok.decode(ids), text) << "text: " << c.at("text").dump();
    }
  }
  return cases.size();
}

class LlamaReference : public ::testing::Test {
 protected:
  void SetUp() override {
    // A missing reference fails: a skip reads as a pass in ctest's summary.
    const std::filesystem::path file = kLlamaDir / "llama_expected.json";
    ASSERT_TRUE(std::filesystem::is_regular_file(file))
        << file.string() << " is missing; write it with: " << test::referenceIdsCommand(ATTNLAB_NPM_DIR);
    expected_ = json::parse(test::slurp(kLlamaDir / "llama_expected.json"));
  }
  json expected_;
};

TEST_F(LlamaReference, Llama2MatchesLlamaTokenizerJs) {
  const HfTokenizer hf = loadWritten("llama2");
  const Tokenizer& tok = *hf.tokenizer;
  EXPECT_EQ(tok.vocabSize(), 32000);
  EXPECT_EQ(hf.bos, 1);
  EXPECT_TRUE(hf.add_bos);  // the post-processor's template starts with <s>
  EXPECT_EQ(tok.specialId("</s>"), 2);
  ASSERT_GE(expected_.at("llama2").size(), 70u);
  std::printf("[ compared ] %zu strings with llama-tokenizer-js@1.2.2\n", compareWithPackage(tok, expected_.at("llama2")));
  // '▁' shows as a space, byte tokens as the byte (or \xNN inside a character)
  EXPECT_EQ(tok.display(tok.specialId("▁Hello")), " Hello");
  EXPECT_EQ(tok.display(tok.specialId("<0x0A>")), "\n");
  EXPECT_EQ(tok.display(tok.specialId("<0xE2>")), "\\xE2");
  // Added tokens are split out first; each other span gets its own '▁'
  // (Hugging Face's legacy Llama 2 behaviour).
  EXPECT_EQ(tok.encode("<s>Hello</s>"), (Ids{1, tok.specialId("▁Hello"), 2}));
}

// Llama 2 as transformers 5 writes it (Metaspace, prepend_scheme "first")
// against Hugging Face's `tokenizers`: the chat prompt "<s>[INST] …" reads
// "[" after <s>, not "▁[" — '▁' is prepended only where the text starts.
TEST_F(LlamaReference, Llama2PrependFirstMatchesTokenizers) {
  const HfTokenizer hf = loadWritten("llama2_first");
  const Tokenizer& tok = *hf.tokenizer;
  ASSERT_GE(expected_.at("llama2_first").size(), 80u);
  std::printf("[ compared ] %zu strings with tokenizers@0.23.2\n", compareWithPackage(tok, expected_.at("llama2_first"), false));
  EXPECT_EQ(tok.encode("<s>[INST] Hi"), (Ids{1, tok.specialId("["), tok.specialId("INST"), tok.specialId("]"), tok.specialId("▁Hi")}));
}

TEST_F(LlamaReference, Llama3MatchesLlama3TokenizerJs) {
  const HfTokenizer hf = loadWritten("llama3");
  const Tokenizer& tok = *hf.tokenizer;
  EXPECT_EQ(tok.vocabSize(), 128256);
  EXPECT_EQ(hf.bos, 128000);
  EXPECT_TRUE(hf.add_bos);
  EXPECT_EQ(tok.specialId("<|eot_id|>"), 128009);
  ASSERT_GE(expected_.at("llama3").size(), 70u);
  std::printf("[ compared ] %zu strings with llama3-tokenizer-js@1.2.0\n", compareWithPackage(tok, expected_.at("llama3")));
  EXPECT_EQ(tok.display(tok.specialId("ĠHello")), " Hello");
  EXPECT_EQ(tok.display(tok.specialId("Ċ")), "\n");
  EXPECT_EQ(tok.display(128000), "<|begin_of_text|>");
  // Digits go in groups of at most three: \p{N}{1,3}.
  EXPECT_EQ(tok.encode("1234567").size(), 3u);
  // Invalid UTF-8 is kept byte for byte.
  const std::string bad = "ok\xff\xfe bad \xe2\x82";
  EXPECT_EQ(tok.decode(tok.encode(bad)), bad);
}

// [SECTION] Small hand-written files

// Byte-level: the 256 byte symbols with ids = byte values (GPT-2's
// bytes_to_unicode, checked on the real GPT-2 vocabulary in
// engine/model/tokenizers/tokenizer_test.cpp), then "ab" (256, from the merge a b), "abc" (257, from
// no merge), "34" (258, from 3 4), "Ġa" (259, from Ġ a).
json byteLevelFile(bool ignore_merges) {
  json vocab = json::object();
  const auto symbols = gpt2ByteSymbols();
  for (int b = 0; b < 256; ++b) vocab[symbols[b]] = b;
  vocab["ab"] = 256;
  vocab["abc"] = 257;
  vocab["34"] = 258;
  vocab["Ġa"] = 259;
  vocab["<|end|>"] = 260;
  json f;
  f["added_tokens"] = json::array({{{"id", 260}, {"content", "<|end|>"}, {"special", true}, {"normalized", false}}});
  f["normalizer"] = nullptr;
  f["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {{{"type", "Split"}, {"pattern", {{"Regex", " ?\\p{L}+|\\p{N}{1,3}|\\s+(?!\\S)|\\s+|[^\\s\\p{L}\\p{N}]+"}}},
                           {"behavior", "Isolated"}, {"invert", false}},
                          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  f["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array({"a b", json::array({"3", "4"}), "Ġ a"})},
                {"ignore_merges", ignore_merges}, {"byte_fallback", false}};
  return f;
}

// SentencePiece style: <unk> <s> </s>, the 256 byte tokens <0x00>… (ids
// 3…258), then ▁ h e l o (259…263) and the merges' tokens ▁h ll ▁he ▁hell
// ▁hello (264…268).
json sentencePieceFile() {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) {
    char token[8];
    std::snprintf(token, sizeof token, "<0x%02X>", b);
    vocab[token] = 3 + b;
  }
  int32_t next = 259;
  for (const char* t : {"▁", "h", "e", "l", "o", "▁h", "ll", "▁he", "▁hell", "▁hello"}) vocab[t] = next++;
  const auto added = [](int id, const char* content) {
    return json{{"id", id}, {"content", content}, {"special", true}, {"normalized", false}, {"lstrip", false}, {"rstrip", false}};
  };
  json f;
  f["added_tokens"] = json::array({added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")});
  f["normalizer"] = {{"type", "Sequence"},
                     {"normalizers",
                      {{{"type", "Prepend"}, {"prepend", "▁"}},
                       {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}}}};
  f["pre_tokenizer"] = nullptr;
  f["post_processor"] = {{"type", "TemplateProcessing"},
                         {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}}};
  f["model"] = {{"type", "BPE"},       {"unk_token", "<unk>"}, {"fuse_unk", true}, {"byte_fallback", true},
                {"vocab", vocab},       {"merges", json::array({"▁ h", "l l", "▁h e", "▁he ll", "▁hell o"})}};
  return f;
}

HfTokenizer load(const json& file, const std::optional<std::string>& config = std::nullopt) {
  return makeHfTokenizer(file.dump(), config, "tokenizer.json", "tokenizer_config.json");
}

TEST(TokenizerJson, ByteLevelSplitRegexAndIgnoreMerges) {
  const HfTokenizer merged = load(byteLevelFile(false));
  const HfTokenizer whole = load(byteLevelFile(true));
  // "abc" is a token but no merge makes it: merging gives ab c; with
  // ignore_merges the piece is the token itself.
  EXPECT_EQ(merged.tokenizer->encode("abc"), (Ids{256, 'c'}));
  EXPECT_EQ(whole.tokenizer->encode("abc"), (Ids{257}));
  // " abc" is the piece "Ġabc" (not a token): a b (rank 0) before Ġ a (rank 2).
  EXPECT_EQ(whole.tokenizer->encode(" abc"), (Ids{' ', 256, 'c'}));
  EXPECT_EQ(whole.tokenizer->encode(" a"), (Ids{259}));
  // \p{N}{1,3}: "12345" → "123" "45", so 3 and 4 never meet; "34" merges.
  EXPECT_EQ(whole.tokenizer->encode("12345"), (Ids{'1', '2', '3', '4', '5'}));
  EXPECT_EQ(whole.tokenizer->encode("34"), (Ids{258}));
  // Added tokens first, kept whole; bytes of a character join in decode.
  EXPECT_EQ(whole.tokenizer->encode("ab<|end|>"), (Ids{256, 260}));
  const std::string text = "x  é<|end|>\n\t😀 12345 abc";
  EXPECT_EQ(whole.tokenizer->decode(whole.tokenizer->encode(text)), text);
  EXPECT_EQ(whole.tokenizer->display(259), " a");
  EXPECT_EQ(whole.tokenizer->display(0xC3), "\\xC3");
  EXPECT_EQ(whole.tokenizer->display(260), "<|end|>");
  EXPECT_EQ(whole.tokenizer->display(999), "<999>");
  EXPECT_EQ(whole.bos, -1);
  EXPECT_FALSE(whole.add_bos);
}

// SmolLM's pre-tokenizer (each digit alone, then GPT-2's pattern) and
// Qwen2's normalizer (NFC).
TEST(TokenizerJson, DigitsByteLevelRegexAndNfc) {
  json f = byteLevelFile(false);
  f["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {{{"type", "Digits"}, {"individual_digits", true}},
                          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}}}};
  EXPECT_EQ(load(f).tokenizer->encode("34"), (Ids{'3', '4'}));
  EXPECT_EQ(load(f).tokenizer->encode("a b"), (Ids{'a', ' ', 'b'}));
  f["pre_tokenizer"]["pretokenizers"].erase(0);
  EXPECT_EQ(load(f).tokenizer->encode("34"), (Ids{258}));
  // ' ?\p{L}+' keeps the space with the word: "x ab" → "x", "Ġab" → Ġ ab
  EXPECT_EQ(load(f).tokenizer->encode("x ab"), (Ids{'x', ' ', 256}));
  f["normalizer"] = {{"type", "NFC"}};
  EXPECT_EQ(load(f).tokenizer->encode("e\u0301"), (Ids{0xC3, 0xA9}));  // é composed
  f["normalizer"] = nullptr;
  EXPECT_EQ(load(f).tokenizer->encode("e\u0301"), (Ids{'e', 0xCC, 0x81}));
}

TEST(TokenizerJson, SentencePieceByteFallbackAndAddedTokens) {
  const HfTokenizer hf = load(sentencePieceFile());
  const Tokenizer& tok = *hf.tokenizer;
  // "hello" → ▁hello: ▁ h → ▁h, l l → ll, ▁h e → ▁he, ▁he ll → ▁hell, ▁hell o
  EXPECT_EQ(tok.encode("hello"), (Ids{268}));
  // "hi": i is not a token: its byte <0x69> (3 + 0x69)
  EXPECT_EQ(tok.encode("hi"), (Ids{264, 3 + 0x69}));
  // "é" = C3 A9: two byte tokens, one character again in decode
  EXPECT_EQ(tok.encode("é"), (Ids{259, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(tok.decode(tok.encode("é")), "é");
  // spaces are ▁; the prepended one is dropped again in decode
  EXPECT_EQ(tok.encode(" hello  hello"), (Ids{259, 268, 259, 268}));
  EXPECT_EQ(tok.decode(tok.encode(" hello  hello")), " hello  hello");
  // added tokens are split out before the normalizer: each span gets its ▁
  EXPECT_EQ(tok.encode("<s>hello</s>hello"), (Ids{1, 268, 2, 268}));
  EXPECT_EQ(tok.display(268), " hello");
  EXPECT_EQ(tok.display(3 + '\n'), "\n");
  EXPECT_EQ(tok.display(3 + 0xE2), "\\xE2");
  EXPECT_TRUE(tok.encode("").empty());
  // bos from the post-processor's template
  EXPECT_EQ(hf.bos, 1);
  EXPECT_EQ(hf.eos, -1);
  EXPECT_TRUE(hf.add_bos);
}

TEST(TokenizerJson, MetaspacePreTokenizer) {
  json f = sentencePieceFile();
  f["normalizer"] = nullptr;
  f["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "first"}, {"split", false}};
  const HfTokenizer hf = load(f);
  EXPECT_EQ(hf.tokenizer->encode("hello hello"), (Ids{268, 268}));
  // "first": only the text's start gets the ▁, not the span after <s>
  EXPECT_EQ(hf.tokenizer->encode("<s>hello"), (Ids{1, 260, 261, 265, 263}));
  EXPECT_EQ(hf.tokenizer->decode(hf.tokenizer->encode("hello hello")), "hello hello");
}

TEST(TokenizerJson, BosFromTokenizerConfig) {
  const json f = sentencePieceFile();
  HfTokenizer hf = load(f, R"({"add_bos_token": true, "bos_token": "<s>", "eos_token": {"content": "</s>", "lstrip": false}})");
  EXPECT_EQ(hf.bos, 1);
  EXPECT_EQ(hf.eos, 2);
  EXPECT_TRUE(hf.add_bos);
  hf = load(f, R"({"add_bos_token": false, "bos_token": "<s>"})");
  EXPECT_FALSE(hf.add_bos);
  // no add_bos_token: the template decides
  hf = load(f, R"({"bos_token": "<s>", "eos_token": "</s>"})");
  EXPECT_TRUE(hf.add_bos);
  hf = load(byteLevelFile(true), R"({"bos_token": null, "eos_token": "<|end|>"})");
  EXPECT_EQ(hf.bos, -1);
  EXPECT_EQ(hf.eos, 260);
  EXPECT_FALSE(hf.add_bos);
}

// [SECTION] Bad files: refused in one line naming the file and the field

void expectRefused(const std::function<void()>& f, const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "expected InputError mentioning '" << needles.at(0) << "'";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "message: " << message;
    for (const std::string& n : needles) EXPECT_NE(message.find(n), std::string::npos) << "message: " << message << "\nmissing: " << n;
  }
}

TEST(TokenizerJson, RefusesBadFiles) {
  const auto loadText = [](const std::string& text) { makeHfTokenizer(text, std::nullopt, "tokenizer.json", "c.json"); };
  const auto loadJson = [&](const json& f) { loadText(f.dump()); };
  expectRefused([&] { loadText("{\"model\": "); }, {"tokenizer.json", "malformed JSON"});
  expectRefused([&] { loadText("[]"); }, {"tokenizer.json", "JSON object"});
  expectRefused([&] { loadText("{}"); }, {"tokenizer.json", "model is missing"});

  json f = byteLevelFile(true);
  f["model"]["type"] = "WordPiece";
  expectRefused([&] { loadJson(f); }, {"tokenizer.json: model.type", "\"WordPiece\"", "supported: \"BPE\""});
  // A Unigram model reads its vocabulary as [token, score] pairs: a BPE vocabulary under that type is refused.
  f["model"]["type"] = "Unigram";
  expectRefused([&] { loadJson(f); }, {"model.vocab", "expected a non-empty array [[\"token\", score]"});

  f = byteLevelFile(true);
  f["model"].erase("vocab");
  expectRefused([&] { loadJson(f); }, {"tokenizer.json: model.vocab is missing"});
  f = byteLevelFile(true);
  f["model"].erase("merges");
  expectRefused([&] { loadJson(f); }, {"tokenizer.json: model.merges is missing"});
  f = byteLevelFile(true);
  f["model"]["merges"].push_back("zz y");
  expectRefused([&] { loadJson(f); }, {"model.merges[3]", "'zz' is not in model.vocab"});
  f["model"]["merges"].back() = "a c";  // "ac" is no token
  expectRefused([&] { loadJson(f); }, {"model.merges[3]", "'ac' is not in model.vocab"});
  f["model"]["merges"].back() = json::array({"a", "b", "c"});
  expectRefused([&] { loadJson(f); }, {"model.merges[3]", "expected \"a b\" or [\"a\", \"b\"]"});
  f["model"]["merges"].back() = "a b";
  expectRefused([&] { loadJson(f); }, {"model.merges[3]", "repeats merges[0]"});

  f = byteLevelFile(true);
  f["model"]["vocab"]["abc"] = -1;
  expectRefused([&] { loadJson(f); }, {"model.vocab", "'abc'", "outside"});
  f["model"]["vocab"]["abc"] = 1 << 24;
  expectRefused([&] { loadJson(f); }, {"model.vocab", "'abc'", "outside"});
  f["model"]["vocab"]["abc"] = 5000;
  expectRefused([&] { loadJson(f); }, {"model.vocab", "id 5000 leaves gaps"});
  f["model"]["vocab"]["abc"] = 256;
  expectRefused([&] { loadJson(f); }, {"model.vocab", "'abc'", "also the id of 'ab'"});
  f["model"]["vocab"]["abc"] = "257";
  expectRefused([&] { loadJson(f); }, {"model.vocab", "'abc'", "integer"});
  f = byteLevelFile(true);
  f["added_tokens"][0]["id"] = 5;
  expectRefused([&] { loadJson(f); }, {"added_tokens[0]", "'<|end|>'", "also the id of"});
  f = byteLevelFile(true);
  std::string text = f.dump();
  text.insert(text.find("\"vocab\":{") + 9, "\"abc\":257,");
  expectRefused([&] { loadText(text); }, {"tokenizer.json: model.vocab", "'abc' appears twice"});

  f = byteLevelFile(true);
  f["normalizer"] = {{"type", "Lowercase"}};
  expectRefused([&] { loadJson(f); }, {"tokenizer.json: normalizer.type", "\"Lowercase\"", "not supported"});
  f["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "StripAccents"}}}}};
  expectRefused([&] { loadJson(f); }, {"normalizer.normalizers[1].type", "\"StripAccents\""});
  f = byteLevelFile(true);
  f["pre_tokenizer"]["pretokenizers"][0] = {{"type", "Whitespace"}};
  expectRefused([&] { loadJson(f); }, {"pre_tokenizer.pretokenizers[0].type", "\"Whitespace\"", "not supported"});
  f = byteLevelFile(true);
  f["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Merged";
  expectRefused([&] { loadJson(f); }, {"pre_tokenizer.pretokenizers[0].behavior", "\"Merged\""});
  f["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Isolated";
  f["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(a";
  expectRefused([&] { loadJson(f); }, {"pattern.Regex", "does not compile"});

  // lying files
  f = byteLevelFile(true);
  f["model"]["byte_fallback"] = true;
  expectRefused([&] { loadJson(f); }, {"model.byte_fallback", "'<0x00>'", "missing"});
  f = sentencePieceFile();
  f["pre_tokenizer"] = {{"type", "ByteLevel"}};
  expectRefused([&] { loadJson(f); }, {"model.vocab", "byte \\x00", "ByteLevel"});
  f = sentencePieceFile();
  f["model"]["unk_token"] = "<oov>";
  expectRefused([&] { loadJson(f); }, {"model.unk_token", "'<oov>'"});

  // tokenizer_config.json
  const auto withConfig = [](const std::string& config) {
    makeHfTokenizer(byteLevelFile(true).dump(), config, "tokenizer.json", "tokenizer_config.json");
  };
  expectRefused([&] { withConfig("{"); }, {"tokenizer_config.json", "malformed JSON"});
  expectRefused([&] { withConfig(R"({"add_bos_token": true})"); }, {"tokenizer_config.json: add_bos_token", "no bos_token"});
  expectRefused([&] { withConfig(R"({"bos_token": "<s>"})"); }, {"tokenizer_config.json: bos_token", "'<s>'", "not a token"});
  expectRefused([&] { withConfig(R"({"add_bos_token": "yes"})"); }, {"tokenizer_config.json: add_bos_token", "true or false"});
}

TEST(TokenizerJson, PathologicalRegexStopsWithAnError) {
  json f = byteLevelFile(true);
  f["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(a|aa)+$";
  const HfTokenizer hf = load(f);
  expectRefused([&] { hf.tokenizer->encode(std::string(60, 'a') + "b"); }, {"pattern.Regex", "gave up"});
}

}  // namespace
}  // namespace attn
