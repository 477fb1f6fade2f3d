// What a new user meets first, through the command line: the default model
// is `shipped:default`, and what a command reads when no model path is
// given; each shipped model opens on the input it was made for (the T5 on a
// sentence of its toy English, translated right; the ViT on its example
// picture); an encoder–decoder given no target reads its own translation;
// an empty text or target is refused in one line by every command; every
// command whose error names --truncate has it. (The window on the T5:
// tests/gui/readme_test.cpp, with the GUI tests.)
#include "engine/npy.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>
#include <fstream>
#include <string>
#include <vector>

namespace attn::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The T5's example (assets/trained/t5-toy/examples/text.txt) and its translation by the rules of
// scripts/train_t5_toy.py (the adjective after its noun, the adverb after its verb).
const std::string kT5Example = "a small bird often watches the old horse";
const std::string kT5Translation = "un oiseau petit regarde souvent le cheval vieux";

// The tokens of a tokens.json list joined as text ("▁a" and " a" alike), specials left out.
std::string joined(const json& tokens) {
  std::string s;
  for (const json& t : tokens) {
    std::string w = t.get<std::string>();
    if (w.rfind("\xE2\x96\x81", 0) == 0) w.replace(0, 3, " ");
    if (w == "<pad>" || w == "</s>") continue;
    s += w;
  }
  return s.empty() || s[0] != ' ' ? s : s.substr(1);
}

TEST(FirstLooks, TheDefaultModelIsShippedDefaultAndWhatNoPathReads) {
  const TempDir dir;
  const RunResult named = runAttnlab({"model", "run", "shipped:default", "--text", "in the beginning", "--out", (dir / "named").string()});
  ASSERT_EQ(named.status, 0) << named.err;
  const RunResult bare = runAttnlab({"model", "run", "--text", "in the beginning", "--out", (dir / "bare").string()});
  ASSERT_EQ(bare.status, 0) << bare.err;
  EXPECT_EQ(slurp(dir / "named" / "attention.npy"), slurp(dir / "bare" / "attention.npy"));
  EXPECT_EQ(json::parse(slurp(dir / "bare" / "meta.json")).at("model"), "embedded default model");
  // No text: the default scene's repeated sentence (28 tokens).
  const RunResult example = runAttnlab({"model", "run", "--out", (dir / "example").string()});
  ASSERT_EQ(example.status, 0) << example.err;
  EXPECT_EQ(json::parse(slurp(dir / "example" / "meta.json")).at("tokens"), 28);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"model", "info"}, {"model", "info", "shipped:default"}}) {
    const RunResult r = runAttnlab(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("embedded default model\n", 0), 0u) << r.out;
  }
  const RunResult gen = runAttnlab({"model", "generate", "--max-new", "2", "--out", (dir / "gen").string()});
  ASSERT_EQ(gen.status, 0) << gen.err;
  EXPECT_EQ(json::parse(slurp(dir / "gen" / "meta.json")).at("prompt_tokens"), 28);
  const RunResult fig = runAttnlab({"render", "--model", "shipped:default", "--view", "table", "--out", (dir / "t.png").string()});
  ASSERT_EQ(fig.status, 0) << fig.err;
  EXPECT_NE(fig.out.find("table of embedded default model"), std::string::npos) << fig.out;
}

TEST(FirstLooks, TheShippedT5OpensOnASentenceItTranslatesWithItsOwnTranslation) {
  const TempDir dir;
  const RunResult run = runAttnlab({"model", "run", "shipped:t5-toy", "--out", (dir / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const json tokens = json::parse(slurp(dir / "run" / "tokens.json"));
  EXPECT_EQ(joined(tokens.at("source_tokens")), kT5Example);
  EXPECT_EQ(joined(tokens.at("target_tokens")), kT5Translation);
  EXPECT_EQ(json::parse(slurp(dir / "run" / "meta.json")).at("target"), "the model's own greedy translation");
  // Its own translation is what generate writes, and the pass over it is the teacher-forced one of --target.
  const RunResult gen = runAttnlab({"model", "generate", "shipped:t5-toy", "--out", (dir / "gen").string()});
  ASSERT_EQ(gen.status, 0) << gen.err;
  EXPECT_NE(gen.out.find("text: " + kT5Translation + "\n"), std::string::npos) << gen.out;
  const RunResult forced = runAttnlab({"model", "run", "shipped:t5-toy", "--text", kT5Example, "--target", kT5Translation,
                                       "--out", (dir / "forced").string()});
  ASSERT_EQ(forced.status, 0) << forced.err;
  EXPECT_EQ(slurp(dir / "forced" / "cross_attention.npy"), slurp(dir / "run" / "cross_attention.npy"));
  // render draws the maps without --target, on the example: its words and its translation's on the axes, no <unk>.
  const RunResult fig = runAttnlab({"render", "--model", "shipped:t5-toy", "--view", "maps", "--out", (dir / "maps.svg").string()});
  ASSERT_EQ(fig.status, 0) << fig.err;
  std::set<std::string> labels;
  for (const std::string& t : svgTexts(slurp(dir / "maps.svg")))
    if (const size_t word = t.find_first_not_of(' '); word != std::string::npos) labels.insert(t.substr(word));  // " oiseau"
  EXPECT_EQ(labels.count("<unk>"), 0u);
  for (const char* word : {"oiseau", "regarde", "souvent", "vieux", "watches", "often", "horse"}) EXPECT_EQ(labels.count(word), 1u) << word;
}

TEST(FirstLooks, TheShippedViTRunsOnItsFirstExamplePicture) {
  const TempDir dir;
  const RunResult run = runAttnlab({"model", "run", "shipped:vit-shapes", "--out", (dir / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("top label 'circle'"), std::string::npos) << run.out;
  const RunResult given = runAttnlab({"model", "run", "shipped:vit-shapes", "--image",
                                      (sourceDir() / "assets/trained/vit-shapes/examples/circle.png").string(), "--out",
                                      (dir / "given").string()});
  ASSERT_EQ(given.status, 0) << given.err;
  EXPECT_EQ(slurp(dir / "run" / "attention.npy"), slurp(dir / "given" / "attention.npy"));
}

TEST(FirstLooks, EmptyTextAndTargetAreRefusedByEveryCommand) {
  const TempDir dir;
  const std::string png = (dir / "f.png").string(), out = (dir / "out").string();
  const struct {
    std::vector<std::string> args;
    std::string expected;
  } cases[] = {
      {{"model", "run", "--text", "", "--out", out}, "--text: empty"},
      {{"model", "generate", "--text", "", "--out", out}, "--text: empty"},
      {{"model", "run", "shipped:t5-toy", "--target", "", "--out", out}, "--target: empty (leave the flag out for the model's own translation)"},
      {{"render", "--default-model", "--text", "", "--out", png}, "--text: empty"},
      {{"render", "multi-head", "--text", "", "--out", png}, "--text: empty"},
      {{"render", "cross-attention", "--text", "a b", "--source-text", "", "--out", png}, "--source-text: empty"},
      {{"render", "--model", "shipped:t5-toy", "--target", "", "--out", png}, "--target: empty (leave the flag out for the model's own translation)"},
      {{"compute", "multi-head", "--text", "", "--out", out}, "--text: empty"},
      {{"gui", "--text", ""}, "--text: empty"},
      {{"gui", "--model", "shipped:t5-toy", "--target", ""}, "--target: empty"},
  };
  for (const auto& c : cases) {
    const RunResult r = runAttnlab(c.args);
    EXPECT_EQ(r.status, 2) << c.expected << ": " << r.err;
    EXPECT_EQ(countLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(png) || fs::exists(out)) << c.expected;
  }
  // A lesson's empty target or text likewise (null, or no key, is the model's own translation).
  fs::create_directories(dir / "lessons");
  std::ofstream(dir / "lessons" / "empty.json")
      << R"({"title": "T", "steps": [{"title": "t", "narration": "One. Two.", "scene": {"workspace": "model", "model": "shipped:t5-toy", "target": ""}}]})";
  const RunResult lesson = runAttnlab({"lesson", "export", "empty", "--out", (dir / "h.pdf").string()},
                                      {"ATTNLAB_LESSONS=" + (dir / "lessons").string()});
  EXPECT_EQ(lesson.status, 2);
  EXPECT_NE(lesson.err.find("step 1: \"target\": empty (leave it out, or null, for the model's own translation)"), std::string::npos)
      << lesson.err;
}

// A text longer than the model's positions is refused naming --truncate; each command that says so takes it.
TEST(FirstLooks, EveryCommandWhoseErrorNamesTruncateHasIt) {
  const TempDir dir;
  std::string text;
  for (int i = 0; i < 300; ++i) text += "light ";  // 300 tokens, the embedded model has 256 positions
  const std::vector<std::vector<std::string>> commands = {
      {"model", "run", "--text", text, "--out", (dir / "run").string()},
      {"render", "--default-model", "--text", text, "--view", "table", "--out", (dir / "f.png").string()},
  };
  for (std::vector<std::string> args : commands) {
    const RunResult refused = runAttnlab(args);
    EXPECT_EQ(refused.status, 2) << args[0];
    EXPECT_EQ(countLines(refused.err), 1) << refused.err;
    EXPECT_NE(refused.err.find("--truncate"), std::string::npos) << refused.err;
    args.push_back("--truncate");
    const RunResult cut = runAttnlab(args);
    EXPECT_EQ(cut.status, 0) << args[0] << ": " << cut.err;
  }
  EXPECT_EQ(json::parse(slurp(dir / "run" / "meta.json")).at("tokens"), 256);
  // The window takes it too (its help lists it; a variant's text is never cut).
  const RunResult help = runAttnlab({"gui", "--help"});
  EXPECT_NE(help.out.find("--truncate"), std::string::npos);
  const RunResult variant = runAttnlab({"gui", "--variant", "dot", "--truncate"});
  EXPECT_EQ(variant.status, 2);
  EXPECT_NE(variant.err.find("--truncate: cuts a model's text"), std::string::npos) << variant.err;
}

}  // namespace
}  // namespace attn::test
