// tokenizer.json beyond the LLaMA files (engine/model/tokenizers/tokenizer_json.h):
// the Split pre-tokenizer with every SplitDelimiterBehavior and invert, a
// Gemma tokenizer.json as transformers 5's GemmaConverter writes it, the
// special tokens of the post-processor (TemplateProcessing, BertProcessing,
// RobertaProcessing) and how the model loader wraps a text with them, and
// text that is only whitespace.
//
// The expected pieces are `tokenizers`' own: the examples of
// SplitDelimiterBehavior's doc comment (tokenizers/src/tokenizer/normalizer.rs,
// '-' on "the-final--countdown") and the cases of split.rs's unit tests
// (the inverted word regex on "How are you doing?", invert against a plain
// split). To see the pieces through encode(), every expected piece is a
// token of its own in a byte-level vocabulary with ignore_merges: a piece
// that is a token comes out as that one id, any other as its bytes.
#include "engine/error.h"
#include "engine/model/model.h"
#include "engine/model/tokenizers/tokenizer_json.h"

#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <functional>

namespace attn {
namespace {

using Ids = std::vector<int32_t>;
using nlohmann::json;

// [SECTION] A vocabulary that shows the pieces

std::string splitSymbols(const std::string& piece) {
  static const auto table = gpt2ByteSymbols();
  std::string out;
  for (const char c : piece) out += table[static_cast<unsigned char>(c)];
  return out;
}

// Bytes 0…255 (their symbols), then `pieces` from 256 on; no merges,
// ignore_merges: a piece that is a token is that token.
json pieceFile(const json& split, const std::vector<std::string>& pieces) {
  json vocab = json::object();
  const auto table = gpt2ByteSymbols();
  for (int b = 0; b < 256; ++b) vocab[table[b]] = b;
  for (const std::string& p : pieces)
    if (!vocab.contains(splitSymbols(p))) vocab[splitSymbols(p)] = static_cast<int>(vocab.size());
  json f;
  f["added_tokens"] = json::array();
  f["normalizer"] = nullptr;
  f["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers", {split, {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  f["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()}, {"ignore_merges", true}};
  return f;
}

json splitStep(const json& pattern, const std::string& behavior, bool invert) {
  return {{"type", "Split"}, {"pattern", pattern}, {"behavior", behavior}, {"invert", invert}};
}

HfTokenizer splitLoad(const json& file, const std::optional<std::string>& config = std::nullopt) {
  return makeHfTokenizer(file.dump(), config, "tokenizer.json", "tokenizer_config.json");
}

// The ids of `pieces`, each one token.
Ids splitIdsOf(const Tokenizer& tok, const std::vector<std::string>& pieces) {
  Ids out;
  for (const std::string& p : pieces) {
    const int32_t id = tok.specialId(splitSymbols(p));
    EXPECT_GE(id, 0) << "piece " << p << " is no token";
    out.push_back(id);
  }
  return out;
}

struct SplitCase {
  std::string behavior;
  std::vector<std::string> pieces;
};

// Every piece any case expects is a token, so a wrong cut shows as other ids.
void expectPieces(const json& pattern, bool invert, const std::string& text, const std::vector<SplitCase>& cases) {
  std::vector<std::string> all;
  for (const SplitCase& c : cases) all.insert(all.end(), c.pieces.begin(), c.pieces.end());
  for (const SplitCase& c : cases) {
    const HfTokenizer hf = splitLoad(pieceFile(splitStep(pattern, c.behavior, invert), all));
    EXPECT_EQ(hf.tokenizer->encode(text), splitIdsOf(*hf.tokenizer, c.pieces))
        << c.behavior << " on " << text << " (pattern " << pattern.dump() << ", invert " << invert << ")";
    if (c.behavior != "Removed") {
      EXPECT_EQ(hf.tokenizer->decode(hf.tokenizer->encode(text)), text) << c.behavior;
    }
  }
}

// [SECTION] Split: every behavior, invert, String and Regex patterns

// normalizer.rs's doc comment of SplitDelimiterBehavior, splitting on '-'.
TEST(TokenizerSplit, EveryBehaviorOnTheDelimiter) {
  const std::vector<SplitCase> cases = {
      {"Removed", {"the", "final", "countdown"}},
      {"Isolated", {"the", "-", "final", "-", "-", "countdown"}},
      {"MergedWithPrevious", {"the-", "final-", "-", "countdown"}},
      {"MergedWithNext", {"the", "-final", "-", "-countdown"}},
      {"Contiguous", {"the", "-", "final", "--", "countdown"}},
  };
  expectPieces({{"String", "-"}}, false, "the-final--countdown", cases);
  expectPieces({{"Regex", "-"}}, false, "the-final--countdown", cases);
}

// split.rs's test `basic`: the words and punctuation matched, invert true,
// so the delimiters are the spaces between them.
TEST(TokenizerSplit, EveryBehaviorInverted) {
  expectPieces({{"Regex", "\\w+|[^\\w\\s]+"}}, true, "How are you doing?",
               {
                   {"Removed", {"How", "are", "you", "doing", "?"}},
                   {"Isolated", {"How", " ", "are", " ", "you", " ", "doing", "?"}},
                   {"MergedWithPrevious", {"How ", "are ", "you ", "doing", "?"}},
                   {"MergedWithNext", {"How", " are", " you", " doing", "?"}},
                   {"Contiguous", {"How", " ", "are", " ", "you", " ", "doing?"}},
               });
}

// split.rs's test `invert`: removing " " equals removing what is not "Hello".
TEST(TokenizerSplit, InvertKeepsWhatThePatternDoesNotMatch) {
  const std::vector<std::string> pieces = {"Hello", "Hello ", " Hello"};
  const HfTokenizer plain = splitLoad(pieceFile(splitStep({{"String", " "}}, "Removed", false), pieces));
  const HfTokenizer inverted = splitLoad(pieceFile(splitStep({{"String", "Hello"}}, "Removed", true), pieces));
  const Ids hello = splitIdsOf(*plain.tokenizer, {"Hello", "Hello", "Hello"});
  EXPECT_EQ(plain.tokenizer->encode("Hello Hello Hello"), hello);
  EXPECT_EQ(inverted.tokenizer->encode("Hello Hello Hello"), hello);
}

// A String pattern is literal (regex-escaped): "." and "|" match themselves.
TEST(TokenizerSplit, StringPatternIsLiteral) {
  expectPieces({{"String", ".|"}}, false, "a.|b.c|d",
               {{"Isolated", {"a", ".|", "b.c|d"}}, {"MergedWithNext", {"a", ".|b.c|d"}}});
}

// Empty matches cut the text as the onig crate's find_iter yields them
// (an empty match right after a non-empty one skipped): "x*" on "axb"
// matches (0,0) (1,2) (3,3), so Isolated gives a | x | b and
// MergedWithPrevious ax | b; on "ab", (0,0) (1,1) (2,2): a | b, never ab.
TEST(TokenizerSplit, EmptyMatchesCutAsOnigFindsThem) {
  expectPieces({{"Regex", "x*"}}, false, "axb",
               {{"Isolated", {"a", "x", "b"}}, {"MergedWithPrevious", {"ax", "b"}}, {"MergedWithNext", {"a", "xb"}},
                {"Contiguous", {"a", "x", "b"}}, {"Removed", {"a", "b"}}});
  expectPieces({{"Regex", "x*"}}, false, "ab", {{"Isolated", {"a", "b"}}, {"Removed", {"a", "b"}}});
  // a piece that is itself a token proves the file without the Split
  // would give one id: the cut is the Split's
  json f = pieceFile(splitStep({{"Regex", "x*"}}, "Isolated", false), {"ab"});
  EXPECT_EQ(splitLoad(f).tokenizer->encode("ab"), (Ids{'a', 'b'}));
  f["pre_tokenizer"]["pretokenizers"].erase(0);
  EXPECT_EQ(splitLoad(f).tokenizer->encode("ab"), (Ids{256}));
}

TEST(TokenizerSplit, RefusesAnUnknownBehavior) {
  json f = pieceFile(splitStep({{"String", "-"}}, "MergedWithBoth", false), {});
  try {
    splitLoad(f);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("tokenizer.json: pre_tokenizer.pretokenizers[0].behavior"), std::string::npos) << m;
    EXPECT_NE(m.find("\"MergedWithBoth\""), std::string::npos) << m;
  }
}

// [SECTION] Gemma: tokenizer.json as transformers 5's GemmaConverter writes it

// <pad> <eos> <bos> <unk> (0…3), the byte tokens <0x00>… (4…259), then
// ▁ h e l o 1 2 3 (260…267), the merges' tokens he ll hell hello ▁hello
// 12 ▁▁ (268…274), then ' ' and "o " (275, 276; the merge o + ' ' ranks
// before hell + o, so only a piece with "o " in it shows it). normalizer Replace ' ' → '▁'; pre_tokenizer
// Split(" ", MergedWithPrevious) (GemmaConverter.pre_tokenizer); BPE with
// byte_fallback and fuse_unk; post_processor [<bos>] $A.
json gemmaFile() {
  json vocab = {{"<pad>", 0}, {"<eos>", 1}, {"<bos>", 2}, {"<unk>", 3}};
  for (int b = 0; b < 256; ++b) {
    char token[8];
    std::snprintf(token, sizeof token, "<0x%02X>", b);
    vocab[token] = 4 + b;
  }
  int32_t next = 260;
  for (const char* t : {"▁", "h", "e", "l", "o", "1", "2", "3", "he", "ll", "hell", "hello", "▁hello", "12", "▁▁", " ", "o "})
    vocab[t] = next++;
  const auto added = [](int id, const char* content) {
    return json{{"id", id}, {"content", content}, {"special", true}, {"normalized", false}, {"lstrip", false}, {"rstrip", false}};
  };
  json f;
  f["version"] = "1.0";
  f["added_tokens"] = json::array({added(0, "<pad>"), added(1, "<eos>"), added(2, "<bos>"), added(3, "<unk>")});
  f["normalizer"] = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}};
  f["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "MergedWithPrevious"}, {"invert", false}};
  f["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", {{{"SpecialToken", {{"id", "<bos>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
      {"pair", json::array()},
      {"special_tokens", {{"<bos>", {{"id", "<bos>"}, {"ids", {2}}, {"tokens", {"<bos>"}}}}}}};
  f["decoder"] = {{"type", "Sequence"},
                  {"decoders",
                   {{{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
                    {{"type", "ByteFallback"}},
                    {{"type", "Fuse"}}}}};
  f["model"] = {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", "<unk>"}, {"continuing_subword_prefix", nullptr},
                {"end_of_word_suffix", nullptr}, {"fuse_unk", true}, {"byte_fallback", true}, {"ignore_merges", false},
                {"vocab", vocab},
                {"merges", json::array({"h e", "l l", "he ll", json::array({"o", " "}), "hell o", "▁ hello", "1 2", "▁ ▁"})}};
  return f;
}

TEST(TokenizerSplit, GemmaAsTransformers5ConvertsIt) {
  const HfTokenizer hf = splitLoad(gemmaFile());
  const Tokenizer& tok = *hf.tokenizer;
  // The normalizer has made every ' ' a '▁' before the Split on " " runs,
  // so it finds nothing and the whole text is one piece: "hello hello" →
  // hello▁hello; the merges in rank order give hello (271) ▁hello (272).
  EXPECT_EQ(tok.encode("hello hello"), (Ids{271, 272}));
  EXPECT_EQ(tok.decode(tok.encode("hello hello")), "hello hello");
  // No '▁' is prepended (Gemma has no prefix space): " hello" is ▁hello.
  EXPECT_EQ(tok.encode(" hello"), (Ids{272}));
  // "12 3" → 1 2 ▁ 3: "1 2" merges; é is not a token: its bytes C3 A9.
  EXPECT_EQ(tok.encode("12 3"), (Ids{273, 260, 267}));
  EXPECT_EQ(tok.encode("é"), (Ids{4 + 0xC3, 4 + 0xA9}));
  // Only spaces: "   " → ▁▁▁ → ▁▁ (the leftmost pair first) ▁.
  EXPECT_EQ(tok.encode("   "), (Ids{274, 260}));
  // bos from the post-processor, tokenizer_config.json silent
  EXPECT_EQ(hf.bos, 2);
  EXPECT_TRUE(hf.add_bos);
  EXPECT_EQ(hf.before, (Ids{2}));
  EXPECT_TRUE(hf.after.empty());
  // tokenizer_config.json as Gemma's: add_bos_token true, <bos>
  const HfTokenizer configured = splitLoad(gemmaFile(), R"({"add_bos_token": true, "add_eos_token": false, "bos_token": "<bos>", "eos_token": "<eos>"})");
  EXPECT_EQ(configured.before, (Ids{2}));
  EXPECT_EQ(configured.eos, 1);
  EXPECT_TRUE(configured.after.empty());
}

// The Split acting on real spaces (no normalizer before it), then each
// digit alone (Digits individual_digits): "hello hello 123" → "hello " |
// "hello " | 1 | 2 | 3. Each "hello " merges h e, l l, he ll, then o ' '
// (before hell o): hell "o "; Isolated would give hello ' ' instead, and
// 12 cannot form across the digit cut.
TEST(TokenizerSplit, SpacesMergedWithPreviousThenEachDigit) {
  json f = gemmaFile();
  f["normalizer"] = nullptr;
  f["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {{{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "MergedWithPrevious"}, {"invert", false}},
                          {{"type", "Digits"}, {"individual_digits", true}}}}};
  const HfTokenizer hf = splitLoad(f);
  const Tokenizer& tok = *hf.tokenizer;
  EXPECT_EQ(tok.encode("hello hello 123"), (Ids{270, 276, 270, 276, 265, 266, 267}));
  EXPECT_EQ(tok.encode("12"), (Ids{265, 266}));
  f["pre_tokenizer"]["pretokenizers"].erase(1);
  EXPECT_EQ(splitLoad(f).tokenizer->encode("12"), (Ids{273}));
}

// [SECTION] Post-processor: the special tokens around a text

json withPost(json f, const json& post) {
  f["post_processor"] = post;
  return f;
}

json templateOf(const std::vector<std::string>& before, const std::vector<std::string>& after, const json& specials) {
  json single = json::array();
  for (const std::string& t : before) single.push_back({{"SpecialToken", {{"id", t}, {"type_id", 0}}}});
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  for (const std::string& t : after) single.push_back({{"SpecialToken", {{"id", t}, {"type_id", 0}}}});
  return {{"type", "TemplateProcessing"}, {"single", single}, {"pair", json::array()}, {"special_tokens", specials}};
}

json splitSpecial(const std::string& name, const std::vector<int>& ids) {
  return {{"id", name}, {"ids", ids}, {"tokens", json::array({name})}};
}

TEST(TokenizerPostProcessor, ClsSepTemplateBertAndRoberta) {
  const json specials = {{"<bos>", splitSpecial("<bos>", {2})}, {"<eos>", splitSpecial("<eos>", {1})}};
  // ModernBERT's template [CLS] $A [SEP] (here <bos> $A <eos>)
  HfTokenizer hf = splitLoad(withPost(gemmaFile(), templateOf({"<bos>"}, {"<eos>"}, specials)));
  EXPECT_EQ(hf.before, (Ids{2}));
  EXPECT_EQ(hf.after, (Ids{1}));
  EXPECT_FALSE(hf.add_bos);  // wrapped, not just prefixed
  // The ids are the template's special_tokens entry, not the vocabulary's token of that name.
  hf = splitLoad(withPost(gemmaFile(), templateOf({"<bos>"}, {}, {{"<bos>", splitSpecial("<bos>", {0})}})));
  EXPECT_EQ(hf.before, (Ids{0}));
  EXPECT_TRUE(hf.add_bos);
  EXPECT_EQ(hf.bos, 0);
  // BertProcessing and RobertaProcessing: cls $A sep
  for (const char* type : {"BertProcessing", "RobertaProcessing"}) {
    hf = splitLoad(withPost(gemmaFile(), {{"type", type}, {"sep", {"<eos>", 1}}, {"cls", {"<bos>", 2}}}));
    EXPECT_EQ(hf.before, (Ids{2})) << type;
    EXPECT_EQ(hf.after, (Ids{1})) << type;
  }
  // A Sequence: ByteLevel adds nothing, the template its tokens.
  hf = splitLoad(withPost(gemmaFile(), {{"type", "Sequence"},
                                   {"processors",
                                    {{{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}},
                                     templateOf({"<bos>"}, {}, specials)}}}));
  EXPECT_EQ(hf.before, (Ids{2}));
  EXPECT_TRUE(hf.after.empty());
  // none
  hf = splitLoad(withPost(gemmaFile(), nullptr));
  EXPECT_TRUE(hf.before.empty());
  EXPECT_FALSE(hf.add_bos);
}

// transformers' update_post_processor: add_bos_token / add_eos_token in
// tokenizer_config.json rebuild the template as [bos] $A [eos].
TEST(TokenizerPostProcessor, TokenizerConfigRebuildsTheTemplate) {
  const json f = gemmaFile();  // template [<bos>] $A
  HfTokenizer hf = splitLoad(f, R"({"add_bos_token": false, "bos_token": "<bos>"})");
  EXPECT_TRUE(hf.before.empty());
  EXPECT_FALSE(hf.add_bos);
  hf = splitLoad(f, R"({"add_eos_token": true, "bos_token": "<bos>", "eos_token": "<eos>"})");
  EXPECT_EQ(hf.before, (Ids{2}));
  EXPECT_EQ(hf.after, (Ids{1}));
  hf = splitLoad(f, R"({"bos_token": "<bos>", "eos_token": "<eos>"})");  // silent: the template stands
  EXPECT_EQ(hf.before, (Ids{2}));
  EXPECT_TRUE(hf.after.empty());
}

void splitExpectRefused(const std::function<void()>& f, const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "expected InputError mentioning '" << needles.at(0) << "'";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "message: " << message;
    for (const std::string& n : needles) EXPECT_NE(message.find(n), std::string::npos) << "message: " << message << "\nmissing: " << n;
  }
}

// T5's template is "$A </s>": one token after the text and none before, from the template or from add_eos_token.
TEST(TokenizerPostProcessor, TextThenEndTokenAsT5) {
  const json specials = {{"<bos>", splitSpecial("<bos>", {2})}, {"<eos>", splitSpecial("<eos>", {1})}};
  HfTokenizer hf = splitLoad(withPost(gemmaFile(), templateOf({}, {"<eos>"}, specials)));
  EXPECT_TRUE(hf.before.empty());
  EXPECT_EQ(hf.after, (Ids{1}));
  EXPECT_FALSE(hf.add_bos);
  hf = splitLoad(gemmaFile(), R"({"add_bos_token": false, "add_eos_token": true, "eos_token": "<eos>"})");
  EXPECT_TRUE(hf.before.empty());
  EXPECT_EQ(hf.after, (Ids{1}));
}

TEST(TokenizerPostProcessor, RefusesWhatTheLoaderCannotWrap) {
  const json specials = {{"<bos>", splitSpecial("<bos>", {2})}, {"<eos>", splitSpecial("<eos>", {1})}};
  splitExpectRefused([&] { splitLoad(withPost(gemmaFile(), templateOf({"<bos>", "<bos>"}, {}, specials))); },
                {"tokenizer.json: post_processor", "2 special token(s) before the text and 0 after"});
  splitExpectRefused([&] { splitLoad(withPost(gemmaFile(), templateOf({}, {"<eos>", "<eos>"}, specials))); },
                {"tokenizer.json: post_processor", "0 special token(s) before the text and 2 after"});
  splitExpectRefused([&] { splitLoad(withPost(gemmaFile(), templateOf({"<bos>"}, {}, {{"<bos>", splitSpecial("<bos>", {2, 2})}}))); },
                {"post_processor", "2 special token(s) before"});
  splitExpectRefused([&] { splitLoad(withPost(gemmaFile(), templateOf({"<cls>"}, {}, specials))); },
                {"post_processor.single[0].SpecialToken.id", "'<cls>' is not in", "special_tokens"});
  splitExpectRefused([&] { splitLoad(withPost(gemmaFile(), templateOf({"<bos>"}, {}, {{"<bos>", splitSpecial("<bos>", {9999})}}))); },
                {"special_tokens.<bos>.ids[0]", "outside the vocabulary"});
  json no_text = templateOf({"<bos>"}, {}, specials);
  no_text["single"].erase(1);
  splitExpectRefused([&] { splitLoad(withPost(gemmaFile(), no_text)); }, {"post_processor.single", "no {\"Sequence\""});
  splitExpectRefused([&] { splitLoad(withPost(gemmaFile(), {{"type", "BertProcessing"}, {"sep", {"<eos>"}}, {"cls", {"<bos>", 2}}})); },
                {"post_processor.sep", "[\"token\", id]"});
  splitExpectRefused([&] { splitLoad(withPost(gemmaFile(), {{"type", "Mystery"}})); },
                {"post_processor.type", "\"Mystery\"", "not supported"});
}

// [SECTION] The model loader: [CLS] $A [SEP] around the text, whitespace as text

// A LLaMA-family checkpoint whose tokenizer.json wraps the text as
// <s> $A </s> (ModernBERT's [CLS] $A [SEP] shape) and whose
// tokenizer_config.json says nothing of add_bos_token.
TEST(TokenizerModel, TemplateClsSepWrapsThePrompt) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama});
  json tokenizer = json::parse(test::slurp(dir / "tokenizer.json"));
  tokenizer["post_processor"] = templateOf({"<s>"}, {"</s>"}, {{"<s>", splitSpecial("<s>", {259})}, {"</s>", splitSpecial("</s>", {260})}});
  std::ofstream(dir / "tokenizer.json") << tokenizer.dump();
  std::ofstream(dir / "tokenizer_config.json") << R"({"bos_token": "<s>", "eos_token": "</s>"})";
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModel(*m, "the");
  ASSERT_GE(run.ids.size(), 3u);
  EXPECT_EQ(run.ids.front(), 259);
  EXPECT_EQ(run.ids.back(), 260);
  EXPECT_EQ(run.ids.size(), modelTokenizer(*m).encode("the").size() + 2);
  // the template [<s>] $A alone: only <s> in front
  tokenizer["post_processor"] = templateOf({"<s>"}, {}, {{"<s>", splitSpecial("<s>", {259})}});
  std::ofstream(dir / "tokenizer.json") << tokenizer.dump();
  const auto prefixed = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun bos_run = runModel(*prefixed, "the");
  EXPECT_EQ(bos_run.ids.front(), 259);
  EXPECT_NE(bos_run.ids.back(), 260);
}

// "   " and "\n" are text: byte-level BPE gives them tokens, as `tokenizers`
// does; only "" is refused. BERT's basic tokenizer drops whitespace, so
// there whitespace alone is [CLS] [SEP], as transformers' BertTokenizer gives it.
TEST(TokenizerModel, WhitespaceOnlyTextIsText) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama});
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  for (const std::string text : {"   ", "\n", " \t\n "}) {
    const ModelRun run = runModel(*m, text);
    Ids expected = {259};  // <s>, then the bytes (GPT-2's pattern: one \s+ piece; no merges among spaces)
    for (const char c : text) expected.push_back(static_cast<unsigned char>(c));
    EXPECT_EQ(run.ids, expected) << "text " << json(text).dump();
  }
  EXPECT_THROW(runModel(*m, ""), InputError);
  test::TempDir bert;
  test::writeTinyModel(bert.path, {.arch = test::Fixture::Bert});
  const auto b = loadModel(filesOnDisk(bert.path.string()));
  EXPECT_EQ(runModel(*b, "  \n ").tokens, (std::vector<std::string>{"[CLS]", "[SEP]"}));
  EXPECT_THROW(runModel(*b, ""), InputError);
}

}  // namespace
}  // namespace attn
