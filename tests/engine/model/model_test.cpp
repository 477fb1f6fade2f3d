// Loading and running a checkpoint folder (engine/model/model.h): the LM head
// on the asked positions only, the pass's thread count, model info, and the
// bad folders a user can give (missing, extra and misshapen tensors, tokenizer
// files, shard indexes, empty and too long text).
#include "engine/model/model.h"
#include "engine/model/families/family.h"
#include "engine/parallel.h"

#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <limits>

namespace fs = std::filesystem;

namespace attn::model_test {
namespace {

using test::TinyModel;

// The LM head runs on the asked positions only; their predictions equal the
// all-positions run's, and the other rows stay empty.
TEST(ModelForward, PredictAtRunsTheHeadOnTheAskedPositionsOnly) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun all = runModel(*model, "the cat sat on", {.top_k = 3});
  const int64_t L = static_cast<int64_t>(all.ids.size());
  ASSERT_GE(L, 4);
  const ModelRun some = runModel(*model, "the cat sat on", {.top_k = 3, .predict_at = {1, -1}});
  ASSERT_EQ(some.top_k.size(), static_cast<size_t>(L));
  for (int64_t i = 0; i < L; ++i) {
    const auto& row = some.top_k[static_cast<size_t>(i)];
    if (i != 1 && i != L - 1) {
      EXPECT_TRUE(row.empty()) << "position " << i;
      continue;
    }
    ASSERT_EQ(row.size(), 3u) << "position " << i;
    for (size_t t = 0; t < 3; ++t) {
      EXPECT_EQ(row[t].id, all.top_k[static_cast<size_t>(i)][t].id);
      EXPECT_NEAR(row[t].probability, all.top_k[static_cast<size_t>(i)][t].probability, 1e-6);
    }
  }
  EXPECT_LT(some.flops, all.flops);  // the head's FLOPs for 2 rows, not L
  EXPECT_EQ(some.attention[0][0], all.attention[0][0]);
  // predictTokens on the run's hidden states is the same function.
  const auto again = predictTokens(*model, all.hidden, {2}, 3);
  ASSERT_EQ(again[2].size(), 3u);
  EXPECT_EQ(again[2][0].id, all.top_k[2][0].id);
  try {
    runModel(*model, "the cat sat on", {.predict_at = {L}});
    ADD_FAILURE() << "position L was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--predict-at: position " + std::to_string(L)), std::string::npos) << e.what();
  }
}

// A pass of a few MFLOP runs on one thread (waking a second costs more), and
// the caller's OpenMP thread count is what it was afterwards.
TEST(ModelForward, SmallPassRunsOnOneThreadAndRestoresTheThreadCount) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ThreadScope two(2);
  const ModelRun run = runModel(*model, "the cat sat");
  EXPECT_EQ(run.threads, 1);
  EXPECT_EQ(run.layer_threads, std::vector<int>(2, 1));
  EXPECT_EQ(omp_get_max_threads(), 2);
  {
    const ThreadScope one(1);
    EXPECT_EQ(omp_get_max_threads(), 1);
    EXPECT_EQ(threadsAvailable(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 2);
  const int available = threadsAvailable();
  EXPECT_GE(available, 1);
  EXPECT_LE(available, 2);
}

// Each layer runs on the threads decided as it starts, and the run records
// them: here the other cores are busy when layer 0 starts and free when
// layer 1 does (a fake look at the machine, and a look before every layer).
TEST(ModelForward, EachLayerRunsOnTheThreadsDecidedAsItStarts) {
  const int cores = omp_get_num_procs();
  if (cores < 2) GTEST_SKIP() << "one core: nothing to re-decide";
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ThreadScope two(2);
  int looks = 0;  // threadsFree takes the fewest busy of up to 5 looks: the first decision's all see others busy
  PassThreads threads(
      2, true, [&] { return std::optional<int>(looks++ < 5 ? cores - 1 : 0); }, std::chrono::milliseconds(0));
  RunContext ctx;
  ctx.pass_threads = &threads;
  const ModelRun run = runForward(*model, {1, 2, 3}, nullptr, ctx, {});
  EXPECT_EQ(run.layer_threads, (std::vector<int>{1, 2}));
  EXPECT_EQ(run.threads, 2);
  EXPECT_EQ(looks, 6);
}

// The dense layers' OpenBLAS must be its OpenMP build: only that one follows
// the engine's thread count (ThreadScope) instead of starting its own pool.
extern "C" int openblas_get_parallel();

TEST(ModelForward, OpenBlasIsTheOpenMpBuild) {
  EXPECT_EQ(openblas_get_parallel(), 2) << "0: sequential, 1: pthreads, 2: OpenMP (install libopenblas-openmp-dev)";
}

TEST(ModelForward, InfoDescribesTheCheckpoint) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const ModelInfo& info = modelInfo(*model);
  EXPECT_EQ(info.config.arch_name, "GPT2LMHeadModel");
  EXPECT_EQ(info.config.layers, 2);
  EXPECT_EQ(info.config.heads, 2);
  EXPECT_EQ(info.config.d_model, 8);
  EXPECT_EQ(info.config.vocab, tm.config.vocab);
  int64_t params = 0;
  for (const auto& [name, v] : tm.weights) params += static_cast<int64_t>(v.size());
  EXPECT_EQ(info.parameters, params);
  EXPECT_EQ(info.dtype, "F32");
  EXPECT_EQ(info.bytes_on_disk, fs::file_size(dir / "model.safetensors"));
  EXPECT_EQ(info.tensors.size(), tm.weights.size());
  const nlohmann::json j = modelInfoToJson(info);
  EXPECT_EQ(j["architecture"], "GPT2LMHeadModel");
  EXPECT_EQ(j["tensors"].size(), tm.weights.size());
}

TEST(ModelErrors, MissingExtraAndMisshapenTensors) {
  test::TempDir dir;
  TinyModel tm = test::writeTinyModel(dir.path);
  const std::vector<float> kept = tm.weights.at("h.1.mlp.c_fc.bias");
  tm.weights.erase("h.1.mlp.c_fc.bias");
  test::writeWeights(tm);
  test::expectHas(test::loadError(dir.path), {"model.safetensors", "'h.1.mlp.c_fc.bias' is missing", "[32]"});

  tm.weights["h.1.mlp.c_fc.bias"] = kept;
  tm.weights["h.1.attn.rotary.weight"] = {1, 2};
  tm.shapes["h.1.attn.rotary.weight"] = {2};
  test::writeWeights(tm);
  test::expectHas(test::loadError(dir.path), {"model.safetensors", "does not use", "'h.1.attn.rotary.weight'"});

  tm.weights.erase("h.1.attn.rotary.weight");
  tm.weights["wpe.weight"].resize(static_cast<size_t>(8 * 8));
  tm.shapes["wpe.weight"] = {8, 8};
  test::writeWeights(tm);
  test::expectHas(test::loadError(dir.path), {"model.safetensors", "'wpe.weight' has shape [8, 8]", "config.json implies [16, 8]"});
}

// Weights are checked on every thread in pieces of 2^20 values; the error
// names the first bad value of the first bad tensor in name order, and a
// tensor's shape before its values, as a check tensor by tensor would.
TEST(ModelErrors, BadWeightValuesAreNamedInOrder) {
  test::TempDir dir;
  TinyModel tm = test::writeTinyModel(dir.path);
  // wpe [140000, 8]: 1,120,000 values, two pieces; a NaN in the second
  const int64_t positions = 140000;
  test::setConfigField(tm, "n_positions", std::to_string(positions));
  tm.shapes["wpe.weight"] = {positions, 8};
  tm.weights["wpe.weight"].resize(static_cast<size_t>(positions * 8), 0.01f);
  tm.weights["wpe.weight"][1100000] = std::numeric_limits<float>::quiet_NaN();
  tm.weights["wte.weight"][5] = std::numeric_limits<float>::infinity();  // later in name order
  test::writeWeights(tm);
  test::expectHas(test::loadError(dir.path), {"model.safetensors", "'wpe.weight' holds NaN at element 1100000"});

  tm.weights["h.1.mlp.c_fc.bias"][3] = 2e6f;
  test::writeWeights(tm);
  test::expectHas(test::loadError(dir.path), {"'h.1.mlp.c_fc.bias' holds 2000000", "at element 3 "});

  // h.0.ln_1.bias misshapen: its shape comes before any later tensor's values
  const std::vector<float> kept = tm.weights.at("h.0.ln_1.bias");
  tm.weights["h.0.ln_1.bias"].resize(4);
  tm.shapes["h.0.ln_1.bias"] = {4};
  test::writeWeights(tm);
  test::expectHas(test::loadError(dir.path), {"'h.0.ln_1.bias' has shape [4]"});
  tm.weights["h.0.ln_1.bias"] = kept;
  tm.shapes["h.0.ln_1.bias"] = {8};
  // and an earlier tensor's values before a later one's shape
  tm.weights["wte.weight"].resize(8);
  tm.shapes["wte.weight"] = {1, 8};
  test::writeWeights(tm);
  test::expectHas(test::loadError(dir.path), {"'h.1.mlp.c_fc.bias' holds 2000000"});

  // BF16 weights are converted a chunk at a time before the check
  test::TempDir bf16;
  TinyModel b = test::writeTinyModel(bf16.path, {.dtype = DType::BF16});
  b.weights["wte.weight"][7] = -std::numeric_limits<float>::infinity();
  test::writeWeights(b);
  test::expectHas(test::loadError(bf16.path), {"'wte.weight' holds -Inf at element 7 "});
}

TEST(ModelErrors, TokenizerFiles) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const std::string vocab = test::slurp(dir / "vocab.json");
  fs::remove(dir / "merges.txt");
  test::expectHas(test::loadError(dir.path), {"merges.txt", "missing"});
  std::ofstream(dir / "merges.txt") << "#version: 0.2\nĠ t\n";
  std::ofstream(dir / "vocab.json") << "{\"a\": 0, ";
  test::expectHas(test::loadError(dir.path), {"vocab.json"});
  fs::remove(dir / "vocab.json");
  test::expectHas(test::loadError(dir.path), {"vocab.json", "missing"});

  test::TempDir bert;
  test::writeTinyModel(bert.path, {.arch = test::Fixture::Bert});
  fs::remove(bert / "vocab.txt");
  test::expectHas(test::loadError(bert.path), {"vocab.txt", "missing"});
  std::ofstream(bert / "vocab.txt") << "the\ncat\n";
  test::expectHas(test::loadError(bert.path), {"vocab.txt"});
}

TEST(ModelErrors, ShardIndexProblems) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.shards = 2});
  std::ofstream(dir / "model.safetensors.index.json") << R"({"weight_map": {"wte.weight": "../x.safetensors"}})";
  test::expectHas(test::loadError(dir.path), {"model.safetensors.index.json", "not a file in the model folder"});
  std::ofstream(dir / "model.safetensors.index.json") << R"({"weight_map": {"wte.weight": "model-00009.safetensors"}})";
  test::expectHas(test::loadError(dir.path), {"model-00009.safetensors", "missing"});
  fs::remove(dir / "model.safetensors.index.json");
  test::expectHas(test::loadError(dir.path), {"no model.safetensors"});
}

TEST(ModelErrors, EmptyAndTooLongText) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  EXPECT_THROW(runModel(*m, ""), InputError);
  // whitespace is text (byte-level BPE gives it tokens); tests/engine/model/tokenizers/tokenizer_split_test.cpp
  EXPECT_EQ(runModel(*m, "  \n ").ids.size(), 4u);
  const std::string text = "abcdefghijklmnopqrstuvwxyz";  // one token per letter: 26 > 16 positions
  try {
    runModel(*m, text);
    ADD_FAILURE() << "no TooLongError";
  } catch (const TooLongError& e) {
    EXPECT_EQ(e.limit, 16);
    EXPECT_GT(e.tokens, 16);
    test::expectHas(e.what(), {"16 positions", "--truncate"});
  }
  const ModelRun run = runModel(*m, text, {.truncate = true});
  EXPECT_TRUE(run.truncated);
  EXPECT_EQ(run.ids.size(), 16u);
  EXPECT_THROW(runModelIds(*m, {1, 99999}), InputError);

  test::TempDir bert;
  test::writeTinyModel(bert.path, {.arch = test::Fixture::Bert});
  const auto b = loadModel(filesOnDisk(bert.path.string()));
  const ModelRun cut = runModel(*b, "the cat sat on the mat the dog ran on the mat a big red hat", {.truncate = true});
  EXPECT_EQ(cut.ids.size(), 16u);
  EXPECT_EQ(cut.tokens.back(), "[SEP]");
  EXPECT_THROW(runModel(*b, "the cat sat on the mat the dog ran on the mat a big red hat"), TooLongError);
}

}  // namespace
}  // namespace attn::model_test
