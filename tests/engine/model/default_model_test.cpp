// The shipped default model (assets/model/, trained by
// scripts/train_default_model.py): the C++ forward pass matches the torch
// forward the script wrote (tests/data/default_model_forward.json), and its
// heads show the learned structure docs/models.md reports.
#include "engine/model/blocks/head_metrics.h"
#include "engine/model/model.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace attn {
namespace {


std::shared_ptr<const Model> defaultModel() {
  static const std::shared_ptr<const Model> m = loadModel(filesOnDisk((test::sourceDir() / "assets/model").string()));
  return m;
}

TEST(DefaultModel, ForwardMatchesTorch) {
  const nlohmann::json ref = nlohmann::json::parse(test::slurp(test::sourceDir() / "tests/data/default_model_forward.json"));
  const ModelRun run = runModel(*defaultModel(), ref["text"].get<std::string>());
  ASSERT_EQ(run.ids, ref["ids"].get<std::vector<int32_t>>());
  const int64_t L = static_cast<int64_t>(run.ids.size());
  // attention_last_row[l][h][j] = A_lh[L−1, j]
  for (int64_t l = 0; l < run.layers; ++l)
    for (int64_t h = 0; h < run.heads; ++h)
      for (int64_t j = 0; j < L; ++j)
        EXPECT_NEAR(run.attention[l][h](L - 1, j), ref["attention_last_row"][l][h][j].get<float>(), 1e-5)
            << "layer " << l << " head " << h << " key " << j;
  for (int64_t i = 0; i < L; ++i) {
    const float sum = ref["hidden_row_sums"][i].get<float>(), abs_sum = ref["hidden_row_abs_sums"][i].get<float>();
    EXPECT_NEAR(run.hidden.row(i).sum(), sum, 1e-4f * abs_sum) << "row " << i;
    EXPECT_NEAR(run.hidden.row(i).cwiseAbs().sum(), abs_sum, 1e-4f * abs_sum) << "row " << i;
    ASSERT_FALSE(run.top_k[static_cast<size_t>(i)].empty());
    EXPECT_EQ(run.top_k[static_cast<size_t>(i)][0].id, ref["argmax_next"][i].get<int32_t>()) << "position " << i;
  }
}

// A previous-token head on text that repeats itself, and induction heads on
// the engine's repeated random sequence (T = 50).
TEST(DefaultModel, HasPreviousTokenAndInductionHeads) {
  const Model& m = *defaultModel();
  const ModelRun run =
      runModel(m, "And God said, Let there be light: and there was light. And God said, Let there be light: and there "
                  "was light.");
  const ModelRun repeated = runModelIds(m, repeatedRandomIds(m, 50, 0));
  const std::vector<HeadSummary> heads = summarizeHeads(run, repeated);
  ASSERT_EQ(heads.size(), static_cast<size_t>(run.layers * run.heads));
  auto best = [&](auto score) {
    return *std::max_element(heads.begin(), heads.end(),
                             [&](const HeadSummary& a, const HeadSummary& b) { return score(a) < score(b); });
  };
  const HeadSummary prev = best([](const HeadSummary& s) { return s.previous_token; });
  const HeadSummary ind = best([](const HeadSummary& s) { return s.induction; });
  EXPECT_GT(prev.previous_token, 0.6) << "layer " << prev.layer << " head " << prev.head;
  EXPECT_EQ(prev.layer, 0);
  EXPECT_GT(ind.induction, 0.8) << "layer " << ind.layer << " head " << ind.head;
  EXPECT_EQ(ind.layer, 1);  // induction needs the previous-token head below it
}

}  // namespace
}  // namespace attn
