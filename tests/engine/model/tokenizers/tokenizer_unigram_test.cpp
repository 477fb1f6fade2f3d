// SentencePiece Unigram tokenizer.json (engine/model/tokenizers/tokenizer_json.cpp) and
// the Precompiled normalizer (engine/model/tokenizers/precompiled_charsmap.h) against
// Hugging Face's `tokenizers`: two files written by
// scripts/unigram_reference.py from a model Debian's python3-sentencepiece
// trains with nmt_nfkc (the charsmap real T5 folders carry), T5's layout and
// the current converters', and the ids the npm package gives on them
// (tests/tokenizer_unigram_expected.js, run by scripts/test.sh); small
// hand-written files for the Viterbi and the unknown characters, the
// charsmap's trie, and bad files.
#include "engine/error.h"
#include "engine/model/tokenizers/precompiled_charsmap.h"
#include "engine/model/tokenizers/tokenizer_json.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace attn::unigram_test {
namespace {

using Ids = std::vector<int32_t>;
using nlohmann::json;

const std::filesystem::path kDir = std::filesystem::path(ATTNLAB_NPM_DIR) / "unigram";

json expected() {
  const std::filesystem::path file = kDir / "unigram_expected.json";
  const std::string text = test::slurp(file);
  if (text.empty()) {
    ADD_FAILURE() << file.string() << " is missing; write it with: " << test::referenceIdsCommand(ATTNLAB_NPM_DIR);
    return json::object();
  }
  return json::parse(text);
}

HfTokenizer loadWritten(const std::string& name) {
  const std::filesystem::path file = kDir / name / "tokenizer.json";
  return makeHfTokenizer(test::slurp(file), std::nullopt, file.string(), "tokenizer_config.json");
}

// The ids of every string as the npm package gives them, for both layouts.
TEST(TokenizerUnigram, IdsAreTheTokenizersLibrarysOnBothLayouts) {
  const json e = expected();
  ASSERT_TRUE(e.contains("strings"));
  const std::vector<std::string> strings = e.at("strings").get<std::vector<std::string>>();
  ASSERT_GE(strings.size(), 25u);
  for (const std::string layout : {"t5", "modern"}) {
    SCOPED_TRACE(layout);
    const HfTokenizer hf = loadWritten("unigram_" + layout);
    // T5's "$A </s>": nothing before, </s> after.
    EXPECT_TRUE(hf.before.empty());
    EXPECT_EQ(hf.after, (Ids{1}));
    const std::vector<Ids> ids = e.at(layout).get<std::vector<Ids>>();
    ASSERT_EQ(ids.size(), strings.size());
    size_t unknown = 0, bytes = 0;
    for (size_t i = 0; i < strings.size(); ++i) {
      const Ids got = hf.tokenizer->encode(strings[i]);
      EXPECT_EQ(got, ids[i]) << "text: " << json(strings[i]).dump();
      for (const int32_t id : got) unknown += id == 2, bytes += layout == "modern" && id >= 3 && id < 259;
    }
    // The strings reach the unknown-character path (T5) and byte fallback (modern).
    EXPECT_GT(layout == "t5" ? unknown : bytes, 3u);
  }
}

// Hand-built vocabularies whose best segmentation is worked out by hand.
std::string unigramFile(const json& vocab, bool byte_fallback = false, const json& normalizer = nullptr) {
  json j = {{"version", "1.0"},
            {"added_tokens", json::array()},
            {"normalizer", normalizer},
            {"pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "always"}, {"split", true}}},
            {"post_processor", nullptr},
            {"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}, {"byte_fallback", byte_fallback}}}};
  return j.dump();
}

Ids encodeWith(const std::string& file, const std::string& text) {
  return makeHfTokenizer(file, std::nullopt, "tokenizer.json", "tokenizer_config.json").tokenizer->encode(text);
}

TEST(TokenizerUnigram, ViterbiTakesTheHighestScoringSegmentation) {
  // "▁abc": ▁ab + c = −1 − 3 = −4 beats ▁ + abc = −2 − 2.5 = −4.5 and ▁a + bc = −3 − 1.5 = −4.5;
  // every single letter costs −5.
  const json vocab = json::array({{"<unk>", 0.0}, {"▁", -2.0}, {"▁a", -3.0}, {"▁ab", -1.0}, {"abc", -2.5},
                                  {"bc", -1.5}, {"a", -5.0}, {"b", -5.0}, {"c", -3.0}});
  EXPECT_EQ(encodeWith(unigramFile(vocab), "abc"), (Ids{3, 8}));
  // "▁cab": ▁ + c + a + b = −2 − 3 − 5 − 5 = −15; nothing longer starts at c.
  EXPECT_EQ(encodeWith(unigramFile(vocab), "cab"), (Ids{1, 8, 6, 7}));
  // An unknown character scores the lowest score less 10: "▁xé" as ▁x + <unk> = −1 + (−19 − 10) = −30 loses to
  // ▁ + xé = −2.5 − 19 = −21.5 (with a penalty of 1 instead of 10 the unknown path would win, −21).
  const json rare = json::array({{"<unk>", 0.0}, {"▁", -2.5}, {"▁x", -1.0}, {"xé", -19.0}});
  EXPECT_EQ(encodeWith(unigramFile(rare), "xé"), (Ids{1, 3}));
}

TEST(TokenizerUnigram, UnknownCharactersFuseIntoOneUnkOrFallBackToBytes) {
  json vocab = json::array({{"<unk>", 0.0}, {"▁", -1.0}, {"a", -1.0}});
  // "▁aéé a": é unknown twice in a row → one <unk>; the second word's ▁a.
  EXPECT_EQ(encodeWith(unigramFile(vocab), "aéé a"), (Ids{1, 2, 0, 1, 2}));
  for (int b = 0; b < 256; ++b) {
    char token[8];
    std::snprintf(token, sizeof token, "<0x%02X>", b);
    vocab.push_back({token, 0.0});
  }
  // Byte fallback: the fused run "éé" as its four UTF-8 bytes' tokens (<0xC3> is id 3 + 0xC3).
  EXPECT_EQ(encodeWith(unigramFile(vocab, true), "aéé"), (Ids{1, 2, 3 + 0xC3, 3 + 0xA9, 3 + 0xC3, 3 + 0xA9}));
}

TEST(TokenizerUnigram, RefusesBadModels) {
  const auto refused = [](const json& model, const std::string& needle) {
    json j = json::parse(unigramFile(json::array({{"<unk>", 0.0}, {"a", -1.0}})));
    j["model"] = model;
    try {
      makeHfTokenizer(j.dump(), std::nullopt, "tokenizer.json", "tokenizer_config.json");
      ADD_FAILURE() << "expected InputError mentioning '" << needle << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  };
  refused(json::parse(R"({"type": "Unigram", "unk_id": 0, "vocab": []})"), "model.vocab: expected a non-empty array");
  refused(json::parse(R"({"type": "Unigram", "unk_id": 0, "vocab": [["a", "x"]]})"), "model.vocab[0]: expected [\"token\", finite score]");
  refused(json::parse(R"({"type": "Unigram", "unk_id": null, "vocab": [["a", -1.0]]})"), "model.unk_id: expected the id of the unknown token");
  refused(json::parse(R"({"type": "Unigram", "unk_id": 5, "vocab": [["a", -1.0]]})"), "model.unk_id: 5 is outside model.vocab's 1 tokens");
  refused(json::parse(R"({"type": "Unigram", "unk_id": 0, "vocab": [["a", -1.0], ["a", -2.0]]})"), "has ids 0 and 1");
  refused({{"type", "WordLevel"}}, "supported: \"BPE\"");
}

// [SECTION] The Precompiled charsmap
// A table of keys → strings built as Darts-clone lays it out, for the trie's rules.
TEST(PrecompiledCharsmap, RealTableNormalizesAsNmtNfkc) {
  const std::string file = test::slurp(kDir / "unigram_t5" / "tokenizer.json");
  ASSERT_FALSE(file.empty()) << "write it with: " << test::referenceIdsCommand(ATTNLAB_NPM_DIR);
  const json j = json::parse(file);
  const std::string where = "tokenizer.json: normalizer.precompiled_charsmap";
  const PrecompiledCharsmap table(base64Decode(j.at("normalizer").at("precompiled_charsmap").get<std::string>(), where),
                                  where);
  // NFKC folds compatibility forms; nmt adds its whitespace and control rules.
  EXPECT_EQ(table.normalize("Ｆｕｌｌ"), "Full");
  EXPECT_EQ(table.normalize("ﬁ"), "fi");
  EXPECT_EQ(table.normalize("①"), "1");
  EXPECT_EQ(table.normalize("e\u0301"), "é");  // composed
  EXPECT_EQ(table.normalize("plain text"), "plain text");
  EXPECT_EQ(table.normalize("東京"), "東京");
}

TEST(PrecompiledCharsmap, RefusesMalformedTables) {
  const auto refused = [](const std::string& bytes, const std::string& needle) {
    try {
      PrecompiledCharsmap table(bytes, "charsmap");
      ADD_FAILURE() << "expected InputError mentioning '" << needle << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  refused("", "expected at least the 4 of the trie's size");
  refused(std::string("\x08\x00\x00\x00", 4) + "abcd", "not a positive multiple of 4 within");
  refused(std::string("\x03\x00\x00\x00", 4) + "abcd", "not a positive multiple of 4");
  // One unit whose offset points far outside the table.
  refused(std::string("\x04\x00\x00\x00", 4) + std::string("\x00\xfc\xff\x7f", 4), "malformed trie");
  EXPECT_THROW(base64Decode("ab$d", "x"), InputError);
  EXPECT_EQ(base64Decode("aGk=", "x"), "hi");
  EXPECT_EQ(base64Decode("aGk", "x"), "hi");
}

}  // namespace
}  // namespace attn::unigram_test
