// attnlab model compare through the real binary: diff.npy and js.json against
// the maps `model run` writes for each run, in double-precision loops; the
// refusals, each one line with nothing written.
#include "engine/npy.h"

#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fs = std::filesystem;

namespace attn {
namespace {

using test::runAttnlab;

struct RunFiles {
  std::vector<int32_t> ids;
  Array attention;  // [layers, heads, L, L]
};

RunFiles modelRun(const std::string& model, const std::string& text, const fs::path& out) {
  const test::RunResult r = runAttnlab({"model", "run", model, "--text", text, "--maps", "all", "--out", out.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  RunFiles f;
  const nlohmann::json tokens = nlohmann::json::parse(test::slurp(out / "tokens.json"));
  for (const nlohmann::json& id : tokens.at("ids")) f.ids.push_back(id.get<int32_t>());
  f.attention = readNpy(out / "attention.npy", "attention.npy");
  return f;
}

// The length of the longest common subsequence, by the textbook recurrence.
size_t lcsLength(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  std::vector<std::vector<size_t>> t(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
  return t[a.size()][b.size()];
}

// Two prompts of different lengths on the default model: the alignment is a
// longest common subsequence of the ids `model run` wrote; diff.npy and each
// head's JS equal loops over the two attention.npy; the ranking sorts them.
TEST(ModelCompareCli, TwoPromptsEqualLoopsOverTheirMaps) {
  test::TempDir dir;
  const std::string ta = "The cat sat on the mat and the cat slept", tb = "The dog sat on the mat and the dog slept soundly";
  const RunFiles a = modelRun("shipped:default", ta, dir / "a"), b = modelRun("shipped:default", tb, dir / "b");
  const test::RunResult r = runAttnlab({"model", "compare", "shipped:default", "--text", ta, "--text-b", tb, "--out", (dir / "c").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json js = nlohmann::json::parse(test::slurp(dir / "c/js.json"));
  const Array diff = readNpy(dir / "c/diff.npy", "diff.npy");
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const nlohmann::json& p : js.at("alignment").at("pairs")) pairs.emplace_back(p[0].get<int64_t>(), p[1].get<int64_t>());
  ASSERT_EQ(pairs.size(), lcsLength(a.ids, b.ids));
  for (size_t k = 0; k < pairs.size(); ++k) {
    EXPECT_EQ(a.ids[static_cast<size_t>(pairs[k].first)], b.ids[static_cast<size_t>(pairs[k].second)]) << k;
    if (k > 0) {
      EXPECT_TRUE(pairs[k].first > pairs[k - 1].first && pairs[k].second > pairs[k - 1].second) << k;
    }
  }
  const auto n = static_cast<int64_t>(pairs.size());
  const int64_t layers = a.attention.shape[0], heads = a.attention.shape[1], La = a.attention.shape[2], Lb = b.attention.shape[2];
  ASSERT_LT(n, La);  // the texts differ: some tokens are left out
  EXPECT_EQ(js.at("alignment").at("description"),
            "aligned by token: " + std::to_string(n) + " of " + std::to_string(La) + " / " + std::to_string(Lb) + " matched");
  EXPECT_NE(r.out.find(js.at("alignment").at("description").get<std::string>()), std::string::npos) << r.out;
  ASSERT_EQ(diff.shape, (std::vector<int64_t>{layers, heads, n, n}));
  std::vector<double> expected_js;
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t h = 0; h < heads; ++h) {
      auto wa = [&](int64_t i, int64_t j) { return static_cast<double>(a.attention.data[static_cast<size_t>(((l * heads + h) * La + i) * La + j)]); };
      auto wb = [&](int64_t i, int64_t j) { return static_cast<double>(b.attention.data[static_cast<size_t>(((l * heads + h) * Lb + i) * Lb + j)]); };
      double total = 0;
      for (int64_t i = 0; i < n; ++i) {
        double sa = 0, sb = 0;  // each aligned row renormalised over the matched keys
        for (int64_t j = 0; j < n; ++j) {
          sa += wa(pairs[static_cast<size_t>(i)].first, pairs[static_cast<size_t>(j)].first);
          sb += wb(pairs[static_cast<size_t>(i)].second, pairs[static_cast<size_t>(j)].second);
        }
        for (int64_t j = 0; j < n; ++j) {
          const double p = wa(pairs[static_cast<size_t>(i)].first, pairs[static_cast<size_t>(j)].first) / sa;
          const double q = wb(pairs[static_cast<size_t>(i)].second, pairs[static_cast<size_t>(j)].second) / sb;
          EXPECT_NEAR(diff.data[static_cast<size_t>(((l * heads + h) * n + i) * n + j)], p - q, 1e-5) << l << ":" << h;
          const double m = 0.5 * (p + q);
          if (p > 0) total += 0.5 * p * std::log2(p / m);
          if (q > 0) total += 0.5 * q * std::log2(q / m);
        }
      }
      expected_js.push_back(total / static_cast<double>(n));
      const nlohmann::json& head = js.at("heads")[static_cast<size_t>(l * heads + h)];
      EXPECT_EQ(head.at("layer"), l);
      EXPECT_EQ(head.at("head"), h);
      EXPECT_NEAR(head.at("js").get<double>(), expected_js.back(), 1e-5) << l << ":" << h;
    }
  const nlohmann::json& ranking = js.at("ranking");
  ASSERT_EQ(ranking.size(), expected_js.size());
  for (size_t k = 0; k < ranking.size(); ++k) {
    const double v = expected_js[static_cast<size_t>(ranking[k].at("layer").get<int64_t>() * heads + ranking[k].at("head").get<int64_t>())];
    EXPECT_NEAR(ranking[k].at("js").get<double>(), v, 1e-5);
    if (k > 0) {
      EXPECT_GE(ranking[k - 1].at("js").get<double>(), ranking[k].at("js").get<double>()) << k;
    }
  }
  EXPECT_GT(ranking.front().at("js").get<double>(), 0.0);
}

// A model and its "fine-tune" (the same shape, other weights) on one text:
// position by position, the difference the two runs' maps themselves.
TEST(ModelCompareCli, TwoCheckpointsComparePositionByPosition) {
  test::TempDir dir;
  const test::TinyModel base = test::writeTinyModel(dir / "base");
  const test::TinyModel tuned = test::writeTinyModel(dir / "tuned", {.seed = 7});
  const std::string text = "the cat sat";
  const RunFiles a = modelRun(base.dir.string(), text, dir / "a"), b = modelRun(tuned.dir.string(), text, dir / "b");
  const test::RunResult r = runAttnlab({"model", "compare", base.dir.string(), "--model-b", tuned.dir.string(), "--text", text,
                                        "--out", (dir / "c").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json js = nlohmann::json::parse(test::slurp(dir / "c/js.json"));
  EXPECT_EQ(js.at("alignment").at("method"), "position by position");
  EXPECT_EQ(js.at("b").at("model"), tuned.dir.string());
  const Array diff = readNpy(dir / "c/diff.npy", "diff.npy");
  ASSERT_EQ(diff.shape, a.attention.shape);
  double largest = 0;
  for (size_t i = 0; i < diff.data.size(); ++i) {
    EXPECT_NEAR(diff.data[i], a.attention.data[i] - b.attention.data[i], 1e-6) << i;
    largest = std::max(largest, std::abs(static_cast<double>(diff.data[i])));
  }
  EXPECT_GT(largest, 1e-3);  // other weights, other maps
}

// Bad input: one line on stderr, status 2, no output folder.
TEST(ModelCompareCli, RefusesBadInputInOneLineWritingNothing) {
  test::TempDir dir;
  const test::TinyModel gpt2 = test::writeTinyModel(dir / "gpt2");  // 2 layers × 2 heads, not the default's 4 heads
  const test::TinyModel bert = test::writeTinyModel(dir / "bert", {.arch = test::Fixture::Bert});
  const std::string out = (dir / "out").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"shipped:default", "--text", "a cat"}, "model compare: run B needs a second prompt (--text-b) or a second model (--model-b)"},
      {{"shipped:t5-toy", "--text-b", "a cat"}, "model compare: T5ForConditionalGeneration is not a text model"},
      {{"shipped:default", "--model-b", "shipped:vit-shapes"}, "is not a text model"},
      {{"shipped:default", "--model-b", gpt2.dir.string()}, "compare: the checkpoints differ in shape: A embedded default model (GPT2LMHeadModel, 2 layers \xC3\x97 4 heads"},
      {{gpt2.dir.string(), "--model-b", bert.dir.string()}, "compare needs one architecture and tokenizer"},
      {{"shipped:default", "--text", "abc", "--text-b", "xyz"}, "compare: the two texts share no token"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv = {"model", "compare"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--out", out});
    const test::RunResult r = runAttnlab(argv);
    EXPECT_EQ(r.status, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(test::countLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << r.err;
  }
}

// The figure (render --view compare) ranks the heads as js.json does: its
// bars, in order, are the heads of the ranking with their JS (--describe's marks).
TEST(ModelCompareCli, TheFigureRanksTheHeadsAsJsJsonDoes) {
  test::TempDir dir;
  const std::vector<std::string> texts = {"--text", "The cat sat on the mat", "--text-b", "The dog sat on a mat"};
  std::vector<std::string> compare = {"model", "compare", "shipped:default", "--out", (dir / "c").string()};
  compare.insert(compare.end(), texts.begin(), texts.end());
  ASSERT_EQ(runAttnlab(compare).status, 0);
  std::vector<std::string> render = {"render", "--model", "shipped:default", "--view", "compare", "--out", (dir / "c.svg").string(),
                                     "--describe", (dir / "c.json").string()};
  render.insert(render.end(), texts.begin(), texts.end());
  const test::RunResult r = runAttnlab(render);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json ranking = nlohmann::json::parse(test::slurp(dir / "c/js.json")).at("ranking");
  const nlohmann::json described = nlohmann::json::parse(test::slurp(dir / "c.json"));
  std::vector<nlohmann::json> bars;
  for (const nlohmann::json& m : described.at("marks"))
    if (m.at("id").get<std::string>().rfind("js[", 0) == 0) bars.push_back(m);
  ASSERT_EQ(bars.size(), ranking.size());  // every head of the default model has its bar
  for (size_t k = 0; k < bars.size(); ++k) {
    char head[48];
    std::snprintf(head, sizeof head, "js[%zu] L%d H%d", k, ranking[k].at("layer").get<int>(), ranking[k].at("head").get<int>());
    EXPECT_EQ(bars[k].at("id"), head);
    EXPECT_NEAR(bars[k].at("value").get<double>(), ranking[k].at("js").get<double>(), 1e-6) << head;
  }
  // Run B's flags belong to the compare view; the compare view needs run B. One line each, nothing written.
  const std::string out = (dir / "x.svg").string();
  const test::RunResult other = runAttnlab({"render", "--model", "shipped:default", "--view", "model", "--text-b", "a", "--out", out});
  EXPECT_EQ(other.status, 2);
  EXPECT_EQ(other.err, "attnlab: --text-b: run B of the compare view (--view compare); the model view shows one run\n");
  const test::RunResult alone = runAttnlab({"render", "--model", "shipped:default", "--view", "compare", "--out", out});
  EXPECT_EQ(alone.status, 2);
  EXPECT_EQ(test::countLines(alone.err), 1) << alone.err;
  EXPECT_NE(alone.err.find("compare: run B needs a second prompt or a second model"), std::string::npos) << alone.err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace attn
