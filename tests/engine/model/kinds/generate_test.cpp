// Generation (engine/model/kinds/generate.h): seeded top-k sampling, greedy
// as top-1, and the options and models it refuses. That each decode step
// with the KV cache equals a full forward is checked for every family in
// families/conformance_test.cpp.
#include "engine/model/kinds/generate.h"
#include "engine/model/model.h"

#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace attn::generate_test {
namespace {

using test::TinyModel;

TEST(Generate, SamplingIsSeededAndTopOneIsGreedy) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama});
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  auto ids = [&](const GenerateOptions& o) {
    std::vector<int32_t> out;
    for (const GeneratedToken& t : generate(*model, "the", o).tokens) out.push_back(t.id);
    return out;
  };
  EXPECT_EQ(ids({.max_new = 8, .top_k = 50, .temperature = 2.0f, .seed = 7}),
            ids({.max_new = 8, .top_k = 50, .temperature = 2.0f, .seed = 7}));
  std::set<std::vector<int32_t>> draws;
  for (uint64_t seed = 0; seed < 5; ++seed) draws.insert(ids({.max_new = 8, .top_k = 50, .temperature = 2.0f, .seed = seed}));
  EXPECT_GT(draws.size(), 1u) << "five seeds at τ = 2 over 50 tokens all drew the same 8 tokens";
  EXPECT_EQ(ids({.max_new = 8, .top_k = 1, .seed = 3}), ids({.max_new = 8}));
  // Every sampled token is among the K most probable at its step.
  const Generation g = generate(*model, "the", {.max_new = 8, .top_k = 3, .temperature = 5.0f, .seed = 1});
  const ModelRun full = runModelIds(*model, generationRun(g, g.tokens.size()).ids, {.top_k = 3});
  for (size_t s = 0; s < g.tokens.size(); ++s) {
    const auto& best = full.top_k[g.prompt.ids.size() - 1 + s];
    EXPECT_TRUE(std::any_of(best.begin(), best.end(), [&](const Prediction& p) { return p.id == g.tokens[s].id; }))
        << "step " << s;
  }
}

TEST(Generate, RefusesWhatItCannotDo) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Llama});
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  auto message = [&](const GenerateOptions& o, const std::string& text = "the cat") {
    try {
      generate(*model, text, o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({.max_new = 0}).find("--max-new: expected 1 to 31"), std::string::npos);
  EXPECT_NE(message({.max_new = 40}).find("--max-new"), std::string::npos);
  EXPECT_NE(message({.top_k = -1}).find("--top-k"), std::string::npos);
  EXPECT_NE(message({.top_k = 5, .temperature = 0.0f}).find("--temperature"), std::string::npos);
  EXPECT_NE(message({.max_new = 30}, "the cat sat on the mat").find("positions left"), std::string::npos);
  test::TempDir bert;
  test::writeTinyModel(bert.path, {.arch = test::Fixture::Bert});
  try {
    generate(*loadModel(filesOnDisk(bert.path.string())), "the cat", {});
    ADD_FAILURE() << "BERT generated";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("generation needs a causal language model"), std::string::npos);
  }
}

}  // namespace
}  // namespace attn::generate_test
