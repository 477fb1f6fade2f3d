// GPT-2 (engine/model/families/gpt2.cpp) against a plain-loop double reference
// written here: the tiny fixture of tests/model_fixture.h with and without the
// transformer. prefix and an untied head, sharded, and the attention buffers
// some checkpoints carry. The checks every family needs are in
// conformance_test.cpp.
#include "engine/model/model.h"

#include "tests/model_fixture.h"
#include "tests/engine/model/families/gpt2_reference.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

namespace fs = std::filesystem;

namespace attn::gpt2_test {
namespace {

using test::TinyModel;
using namespace mref;

// `ablate`: heads (layer, head) whose output, before c_proj, is zeroed or (mean) replaced by its mean over positions.
Reference gpt2Ref(const TinyModel& m, const std::vector<int32_t>& ids, const std::vector<std::pair<int64_t, int64_t>>& ablate = {},
                  bool mean = false) {
  return gpt2Trace(m, ids, {.ablate = ablate, .mean = mean}).ref;
}

TEST(ModelForward, Gpt2MatchesLoopReference) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModel(*model, "the cat sat", {.top_k = 4});
  ASSERT_GE(run.ids.size(), 3u);
  EXPECT_TRUE(run.causal);
  EXPECT_EQ(run.tokens.size(), run.ids.size());
  EXPECT_GT(run.flops, 0);
  expectMatches(run, gpt2Ref(tm, run.ids), 4);
  // Causal: nothing above the diagonal; every row sums to 1.
  for (const auto& layer : run.attention)
    for (const Mat& a : layer)
      for (int64_t i = 0; i < a.rows(); ++i) {
        EXPECT_NEAR(a.row(i).sum(), 1.0f, 1e-5f);
        for (int64_t j = i + 1; j < a.cols(); ++j) EXPECT_EQ(a(i, j), 0.0f);
      }
}

// Ablation (ModelRunOptions::edit.ablate) against the reference with those heads' outputs replaced by hand: zeroed,
// and by their mean over the positions. The hidden state and the logits move; the ablated head's own map does not.
TEST(ModelForward, Gpt2AblatedHeadsMatchTheLoopReference) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun whole = runModel(*model, "the cat sat", {.top_k = 4});
  const std::vector<std::pair<int64_t, int64_t>> heads = {{0, 1}, {1, 0}};
  for (const HeadAblation::Mode mode : {HeadAblation::Mode::Zero, HeadAblation::Mode::Mean}) {
    ModelRunOptions o{.top_k = 4};
    o.edit.ablate = {mode, heads};
    const ModelRun run = runModel(*model, "the cat sat", o);
    expectMatches(run, gpt2Ref(tm, run.ids, heads, mode == HeadAblation::Mode::Mean), 4);
    EXPECT_GT((run.hidden - whole.hidden).cwiseAbs().maxCoeff(), 1e-4f) << "ablating two heads moved nothing";
    EXPECT_EQ(run.attention[0][1], whole.attention[0][1]);  // layer 0's maps are computed before any ablation
  }
  ModelRunOptions bad;
  bad.edit.ablate.heads = {{0, 99}};
  try {
    runModel(*model, "the cat sat", bad);
    FAIL() << "a head outside the model was ablated";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ablation: layer 0 head 99 is outside"), std::string::npos) << e.what();
  }
}

TEST(ModelForward, Gpt2WithPrefixAndUntiedHead) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path, {.prefix = "transformer.", .untied_head = true, .seed = 3});
  const auto model = loadModel(filesOnDisk((dir.path / "model.safetensors").string()));
  const std::vector<int32_t> ids = {5, 70, 256, 258, 100, 0, 44};
  expectMatches(runModelIds(*model, ids, {.top_k = 3}), gpt2Ref(tm, ids), 3);
}

TEST(ModelForward, ShardedCheckpoint) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path, {.shards = 3, .seed = 8});
  ASSERT_TRUE(fs::exists(dir / "model.safetensors.index.json"));
  ASSERT_FALSE(fs::exists(dir / "model.safetensors"));
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  EXPECT_EQ(modelInfo(*model).bytes_on_disk,
            fs::file_size(dir / "model-00001-of-00003.safetensors") +
                fs::file_size(dir / "model-00002-of-00003.safetensors") +
                fs::file_size(dir / "model-00003-of-00003.safetensors"));
  const std::vector<int32_t> ids = {1, 2, 3, 4};
  expectMatches(runModelIds(*model, ids, {.top_k = 2}), gpt2Ref(tm, ids), 2);
}

TEST(ModelErrors, GptBuffersAreNotExtraTensors) {
  test::TempDir dir;
  TinyModel tm = test::writeTinyModel(dir.path);
  tm.weights["h.0.attn.bias"] = std::vector<float>(16 * 16, 1.0f);
  tm.shapes["h.0.attn.bias"] = {1, 1, 16, 16};
  test::writeWeights(tm);
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  EXPECT_EQ(modelInfo(*m).parameters + 256, [&] {
    int64_t n = 0;
    for (const auto& [k, v] : tm.weights) n += static_cast<int64_t>(v.size());
    return n;
  }());
}

}  // namespace
}  // namespace attn::gpt2_test
