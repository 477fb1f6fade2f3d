// attnlab model info / run / generate on tiny checkpoints, through the real binary.
#include "engine/model/kinds/generate.h"
#include "engine/model/model.h"
#include "engine/npy.h"

#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <set>

namespace fs = std::filesystem;

namespace attn {
namespace {

using test::runAttnlab;

// The families come from the registry: the listing names each, an unknown
// architecture's error lists every class name, and docs/models.md's table is the
// registry's own (`attnlab model families --markdown`), so neither can drift.
TEST(ModelCli, FamiliesListingMatchesTheRegistryAndTheDocs) {
  const test::RunResult j = runAttnlab({"model", "families", "--json"});
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json families = nlohmann::json::parse(j.out);
  ASSERT_EQ(families.size(), modelFamilySummaries().size());
  std::set<std::string> types;
  for (const nlohmann::json& f : families) types.insert(f["model_type"].get<std::string>());
  for (const char* t : {"gpt2", "bert", "llama", "mistral", "qwen2"}) EXPECT_TRUE(types.count(t)) << t;

  const test::RunResult md = runAttnlab({"model", "families", "--markdown"});
  ASSERT_EQ(md.status, 0) << md.err;
  const std::string models = test::slurp(test::sourceDir() / "docs/models.md");
  EXPECT_NE(models.find(md.out), std::string::npos) << "docs/models.md's family table differs from:\n" << md.out;

  test::TempDir dir;
  const test::TinyModel tm = test::writeTinyModel(dir / "gpt2");
  test::setConfigField(tm, "architectures", R"(["FalconForCausalLM"])");
  const test::RunResult bad = runAttnlab({"model", "info", tm.dir.string()});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(test::countLines(bad.err), 1) << bad.err;
  for (const nlohmann::json& f : families)
    for (const nlohmann::json& a : f["architectures"])
      EXPECT_NE(bad.err.find(a.get<std::string>()), std::string::npos) << a << " not in: " << bad.err;
  EXPECT_NE(bad.err.find("architecture 'FalconForCausalLM' is not supported"), std::string::npos) << bad.err;
}

TEST(ModelCli, InfoPrintsTheSummaryAndTensorTable) {
  test::TempDir dir;
  const test::TinyModel tm = test::writeTinyModel(dir / "gpt2");
  const test::RunResult r = runAttnlab({"model", "info", tm.dir.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"GPT2LMHeadModel", "layers        2", "heads         2", "d_model       8", "parameters",
                        "F32", "size on disk", "h.1.mlp.c_proj.weight", "[32, 8]"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << " not in:\n" << r.out;

  const test::RunResult j = runAttnlab({"model", "info", (tm.dir / "model.safetensors").string(), "--json"});
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json info = nlohmann::json::parse(j.out);
  EXPECT_EQ(info["architecture"], "GPT2LMHeadModel");
  EXPECT_EQ(info["layers"], 2);
  EXPECT_EQ(info["vocab"], tm.config.vocab);
  EXPECT_EQ(info["tensors"].size(), tm.weights.size());
  EXPECT_EQ(info["bytes_on_disk"], fs::file_size(tm.dir / "model.safetensors"));
}

TEST(ModelCli, RunWritesTokensAttentionHiddenAndMeta) {
  test::TempDir dir;
  const test::TinyModel tm = test::writeTinyModel(dir / "gpt2");
  const fs::path out = dir / "run";
  const test::RunResult r = runAttnlab({"model", "run", tm.dir.string(), "--text", "the cat sat", "--out", out.string(),
                                        "--top-k", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::listFiles(out),
            (std::vector<std::string>{"attention.npy", "attention_pooled.npy", "attention_pooled_max.npy", "heads.json",
                                      "hidden.npy", "meta.json", "tokens.json"}));

  // The same run in this process: the files hold exactly its numbers.
  const auto model = loadModel(filesOnDisk(tm.dir.string()));
  const ModelRun run = runModel(*model, "the cat sat", {.top_k = 3});
  const int64_t L = static_cast<int64_t>(run.ids.size());
  const nlohmann::json tokens = nlohmann::json::parse(test::slurp(out / "tokens.json"));
  EXPECT_EQ(tokens["ids"].get<std::vector<int32_t>>(), run.ids);
  EXPECT_EQ(tokens["tokens"].get<std::vector<std::string>>(), run.tokens);
  const Array att = readNpy(out / "attention.npy", "attention");
  ASSERT_EQ(att.shape, (std::vector<int64_t>{2, 2, L, L}));
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < L; ++j)
          EXPECT_FLOAT_EQ(att.data[static_cast<size_t>(((l * 2 + h) * L + i) * L + j)], run.attention[l][h](i, j));
  const Array hidden = readNpy(out / "hidden.npy", "hidden");
  ASSERT_EQ(hidden.shape, (std::vector<int64_t>{L, 8}));
  EXPECT_FLOAT_EQ(hidden.data[5], run.hidden(0, 5));

  const nlohmann::json meta = nlohmann::json::parse(test::slurp(out / "meta.json"));
  EXPECT_EQ(meta["architecture"], "GPT2LMHeadModel");
  EXPECT_EQ(meta["truncated"], false);
  EXPECT_GT(meta["compute_seconds"].get<double>(), 0.0);
  EXPECT_EQ(meta["threads"].get<int>(), 1);  // a pass this small runs on one thread
  EXPECT_EQ(meta["layer_threads"].get<std::vector<int>>(), run.layer_threads);
  EXPECT_GT(meta["flops"].get<double>(), 0.0);
  ASSERT_EQ(meta["top_k"].size(), static_cast<size_t>(L));
  ASSERT_EQ(meta["top_k"][0].size(), 3u);
  EXPECT_EQ(meta["top_k"][0][0]["id"], run.top_k[0][0].id);
  EXPECT_NEAR(meta["top_k"][0][0]["probability"].get<double>(), run.top_k[0][0].probability, 1e-6);
  EXPECT_EQ(meta["shapes"]["attention"], nlohmann::json({2, 2, L, L}));
}

// Up to 256 tokens the pooled blocks are single cells, so the pooled maps are
// the maps: with every map streamed they are written as copies of
// attention.npy, the same bytes as a run that pools them (--maps pooled) and
// as the pooled maps this process computes.
TEST(ModelCli, SingleCellPooledMapsAreTheMaps) {
  test::TempDir dir;
  const test::TinyModel tm = test::writeTinyModel(dir / "gpt2");
  const std::string text = "the cat sat on";
  auto run = [&](const std::string& maps) {
    const fs::path out = dir / ("run-" + maps);
    return std::pair{runAttnlab({"model", "run", tm.dir.string(), "--text", text, "--out", out.string(), "--maps", maps,
                                 "--top-k", "0"}),
                     out};
  };
  const auto [r_all, all] = run("all");
  const auto [r_pooled, pooled] = run("pooled");
  ASSERT_EQ(r_all.status, 0) << r_all.err;
  ASSERT_EQ(r_pooled.status, 0) << r_pooled.err;
  EXPECT_EQ(nlohmann::json::parse(test::slurp(all / "meta.json"))["pooled_block"], 1);
  for (const char* f : {"attention_pooled.npy", "attention_pooled_max.npy"}) {
    EXPECT_EQ(test::slurp(all / f), test::slurp(pooled / f)) << f;
    EXPECT_EQ(test::slurp(all / f), test::slurp(all / "attention.npy")) << f;
  }
  const auto model = loadModel(filesOnDisk(tm.dir.string()));
  const ModelRun here = runModel(*model, text, {.top_k = 0});
  const int64_t L = static_cast<int64_t>(here.ids.size());
  const Array mean = readNpy(all / "attention_pooled.npy", "pooled");
  const Array max = readNpy(all / "attention_pooled_max.npy", "pooled max");
  ASSERT_EQ(mean.shape, (std::vector<int64_t>{2, 2, L, L}));
  for (int64_t m = 0; m < 4; ++m)
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < L; ++j) {
        const size_t at = static_cast<size_t>((m * L + i) * L + j);
        EXPECT_EQ(mean.data[at], here.pooled.mean[static_cast<size_t>(m)](i, j));
        EXPECT_EQ(max.data[at], here.pooled.max[static_cast<size_t>(m)](i, j));
      }
}

// --maps: every map streamed to attention.npy, pooled maps only, none, or
// chosen heads; the pooled maps and heads.json the same whatever is chosen;
// a run that will not fit refused before anything is written, and auto
// falling back to pooled maps when every map would not fit.
TEST(ModelCli, RunMapsAllPooledNoneAndChosenHeads) {
  test::TempDir dir;
  const test::TinyModel tm = test::writeTinyModel(dir / "llama", {.arch = test::Fixture::Llama, .kv_heads = 2});
  test::setConfigField(tm, "max_position_embeddings", "500");
  std::string text;
  while (text.size() < 360) text += "the cat sat on the mat. ";
  writeFileAtomic(dir / "text.txt", text);
  auto run = [&](const std::string& maps, const std::vector<std::string>& env = {}) {
    const fs::path out = dir / ("run-" + maps + (env.empty() ? "" : "-limited"));
    return std::pair{runAttnlab({"model", "run", tm.dir.string(), "--text-file", (dir / "text.txt").string(), "--out",
                                 out.string(), "--maps", maps, "--top-k", "0"},
                                env),
                     out};
  };
  const auto [all, all_dir] = run("all");
  ASSERT_EQ(all.status, 0) << all.err;
  const nlohmann::json meta = nlohmann::json::parse(test::slurp(all_dir / "meta.json"));
  const int64_t L = meta["tokens"].get<int64_t>();
  ASSERT_GT(L, 256);  // pooled blocks of 2
  EXPECT_EQ(meta["maps"], "all");
  EXPECT_EQ(meta["pooled_block"], 2);
  const int64_t n = (L + 1) / 2;
  const Array att = readNpy(all_dir / "attention.npy", "attention");
  ASSERT_EQ(att.shape, (std::vector<int64_t>{2, 4, L, L}));
  const Array pooled = readNpy(all_dir / "attention_pooled.npy", "pooled");
  const Array pooled_max = readNpy(all_dir / "attention_pooled_max.npy", "pooled max");
  ASSERT_EQ(pooled.shape, (std::vector<int64_t>{2, 4, n, n}));
  ASSERT_EQ(pooled_max.shape, pooled.shape);
  auto at = [&](int64_t m, int64_t i, int64_t j) { return att.data[static_cast<size_t>((m * L + i) * L + j)]; };
  for (int64_t m = 0; m < 8; ++m) {
    for (int64_t i = 0; i < L; ++i) {
      double row = 0;
      for (int64_t j = 0; j < L; ++j) row += at(m, i, j);
      EXPECT_NEAR(row, 1.0, 1e-5);  // every row of every head written
      EXPECT_EQ(at(m, i, std::min(L - 1, i + 1)), i + 1 < L ? 0.0f : at(m, i, L - 1));  // causal
    }
    // The pooled block (bi, bj) is the mean (max) of its 2 × 2 weights (the last block 1 × ·).
    for (const int64_t bi : {int64_t{0}, n / 2, n - 1})
      for (const int64_t bj : {int64_t{0}, bi / 2, bi}) {
        double sum = 0, mx = 0, count = 0;
        for (int64_t i = 2 * bi; i < std::min(L, 2 * bi + 2); ++i)
          for (int64_t j = 2 * bj; j < std::min(L, 2 * bj + 2); ++j) sum += at(m, i, j), mx = std::max<double>(mx, at(m, i, j)), ++count;
        EXPECT_NEAR(pooled.data[static_cast<size_t>((m * n + bi) * n + bj)], sum / count, 1e-6);
        EXPECT_EQ(pooled_max.data[static_cast<size_t>((m * n + bi) * n + bj)], static_cast<float>(mx));
      }
  }
  const nlohmann::json heads = nlohmann::json::parse(test::slurp(all_dir / "heads.json"));
  ASSERT_EQ(heads.size(), 8u);
  for (const char* key : {"layer", "head", "previous_token", "sink", "induction", "mean_distance", "entropy", "kv_head",
                          "group_size", "group_divergence"})
    EXPECT_TRUE(heads[5].contains(key)) << key;
  EXPECT_EQ(heads[5]["layer"], 1);
  EXPECT_EQ(heads[5]["head"], 1);
  EXPECT_EQ(heads[5]["kv_head"], 0);
  EXPECT_EQ(heads[5]["group_size"], 2);
  double prev = 0;  // previous-token share of layer 1 head 1, from the written map
  for (int64_t i = 1; i < L; ++i) prev += at(5, i, i - 1);
  EXPECT_NEAR(heads[5]["previous_token"].get<double>(), prev / static_cast<double>(L - 1), 1e-9);

  for (const std::string maps : {"pooled", "none"}) {
    const auto [r, out] = run(maps);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(fs::exists(out / "attention.npy")) << maps;
    EXPECT_EQ(test::slurp(out / "attention_pooled.npy"), test::slurp(all_dir / "attention_pooled.npy")) << maps;
    EXPECT_EQ(test::slurp(out / "attention_pooled_max.npy"), test::slurp(all_dir / "attention_pooled_max.npy")) << maps;
    EXPECT_EQ(test::slurp(out / "heads.json"), test::slurp(all_dir / "heads.json")) << maps;
    EXPECT_EQ(nlohmann::json::parse(test::slurp(out / "meta.json"))["maps"], maps);
  }

  const auto [some, some_dir] = run("1:3,0:2");
  ASSERT_EQ(some.status, 0) << some.err;
  const Array chosen = readNpy(some_dir / "attention.npy", "attention");
  ASSERT_EQ(chosen.shape, (std::vector<int64_t>{2, L, L}));
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < L; ++j) {
      EXPECT_EQ(chosen.data[static_cast<size_t>(i * L + j)], at(7, i, j));            // layer 1 head 3
      EXPECT_EQ(chosen.data[static_cast<size_t>((L + i) * L + j)], at(2, i, j));      // layer 0 head 2
    }
  EXPECT_EQ(nlohmann::json::parse(test::slurp(some_dir / "meta.json"))["attention_heads"],
            nlohmann::json::parse(R"([{"layer": 1, "head": 3}, {"layer": 0, "head": 2}])"));

  // 3 MiB available: every map (2.4 MiB) and the pass do not fit, pooled maps do.
  const auto [autod, auto_dir] = run("auto", {"ATTNLAB_MEMORY_LIMIT_MB=4"});
  ASSERT_EQ(autod.status, 0) << autod.err;
  EXPECT_NE(autod.err.find("maps: every map would take"), std::string::npos) << autod.err;
  EXPECT_FALSE(fs::exists(auto_dir / "attention.npy"));
  EXPECT_EQ(nlohmann::json::parse(test::slurp(auto_dir / "meta.json"))["maps"], "pooled");
  const auto [refused, refused_dir] = run("all", {"ATTNLAB_MEMORY_LIMIT_MB=1"});
  EXPECT_EQ(refused.status, 2);
  EXPECT_EQ(test::countLines(refused.err), 1) << refused.err;
  EXPECT_NE(refused.err.find("text: " + std::to_string(L) + " tokens would need about"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("of memory available"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(refused_dir));

  for (const auto& [maps, says] : std::vector<std::pair<std::string, std::string>>{
           {"2:0", "--maps: layer 2 head 0 is outside the model's 2 layers of 4 heads"},
           {"heads", "--maps: expected all, pooled, none, auto or layer:head pairs"}}) {
    const auto [bad, bad_dir] = run(maps);
    EXPECT_EQ(bad.status, 2) << maps;
    EXPECT_NE(bad.err.find(says), std::string::npos) << bad.err;
    EXPECT_FALSE(fs::exists(bad_dir));
  }
  // Figures of a pooled run: the grid of pooled maps; a view that reads every map says the length it allows.
  const std::vector<std::string> limited = {"ATTNLAB_MEMORY_LIMIT_MB=4"};
  const test::RunResult grid = runAttnlab({"render", "--model", tm.dir.string(), "--text", text, "--view", "model", "--out",
                                           (dir / "grid.png").string()}, limited);
  EXPECT_EQ(grid.status, 0) << grid.err;
  EXPECT_TRUE(fs::exists(dir / "grid.png"));
  const test::RunResult rollout = runAttnlab({"render", "--model", tm.dir.string(), "--text", text, "--view", "rollout",
                                              "--out", (dir / "rollout.png").string()}, limited);
  EXPECT_EQ(rollout.status, 2);
  EXPECT_NE(rollout.err.find("--view rollout reads every map of the run"), std::string::npos) << rollout.err;
  EXPECT_NE(rollout.err.find("tokens give it"), std::string::npos) << rollout.err;
  EXPECT_FALSE(fs::exists(dir / "rollout.png"));
  const test::RunResult missing = runAttnlab({"model", "run", tm.dir.string(), "--text-file", (dir / "nope.txt").string(),
                                              "--out", (dir / "x").string()});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("nope.txt (--text-file): no such file"), std::string::npos) << missing.err;
}

TEST(ModelCli, BertRunHasMaskedLmPredictionsAndTruncates) {
  test::TempDir dir;
  const test::TinyModel tm = test::writeTinyModel(dir / "bert", {.arch = test::Fixture::Bert, .prefix = "bert."});
  const std::string text = "the cat sat on the mat the dog ran on the mat a big red hat";
  const test::RunResult r =
      runAttnlab({"model", "run", tm.dir.string(), "--text", text, "--out", (dir / "run").string(), "--truncate"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(truncated)"), std::string::npos);
  const nlohmann::json meta = nlohmann::json::parse(test::slurp(dir / "run" / "meta.json"));
  EXPECT_EQ(meta["truncated"], true);
  EXPECT_EQ(meta["causal"], false);
  EXPECT_EQ(meta["tokens"], 16);
  EXPECT_EQ(meta["top_k"].size(), 16u);
  EXPECT_EQ(meta["top_k"][0].size(), 5u);
  const nlohmann::json tokens = nlohmann::json::parse(test::slurp(dir / "run" / "tokens.json"));
  EXPECT_EQ(tokens["tokens"][0], "[CLS]");
  EXPECT_EQ(tokens["tokens"][15], "[SEP]");
}

// --predict-at: the LM head at the named positions only; meta.json says which.
TEST(ModelCli, PredictAtWritesThoseRowsOnly) {
  test::TempDir dir;
  const test::TinyModel tm = test::writeTinyModel(dir / "gpt2");
  const auto model = loadModel(filesOnDisk(tm.dir.string()));
  const ModelRun all = runModel(*model, "the cat sat", {.top_k = 2});
  const int64_t L = static_cast<int64_t>(all.ids.size());
  for (const auto& [flag, positions] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"last", {L - 1}}, {"0,-1", {0, L - 1}}, {"1", {1}}}) {
    const fs::path out = dir / ("run-" + flag);
    const test::RunResult r = runAttnlab({"model", "run", tm.dir.string(), "--text", "the cat sat", "--out",
                                          out.string(), "--top-k", "2", "--predict-at", flag});
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json meta = nlohmann::json::parse(test::slurp(out / "meta.json"));
    EXPECT_EQ(meta["top_k_positions"].get<std::vector<int64_t>>(), positions) << flag;
    ASSERT_EQ(meta["top_k"].size(), positions.size()) << flag;
    for (size_t n = 0; n < positions.size(); ++n)
      EXPECT_EQ(meta["top_k"][n][0]["id"], all.top_k[static_cast<size_t>(positions[n])][0].id) << flag;
    EXPECT_LT(meta["flops"].get<double>(), all.flops) << flag;  // the head on fewer rows
  }
}

// Exit 2, one line naming the problem, and no output folder (nor staging leftovers).
void expectBadInput(const std::vector<std::string>& args, const fs::path& parent, const std::string& part) {
  const test::RunResult r = runAttnlab(args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(test::countLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(part), std::string::npos) << "'" << part << "' not in: " << r.err;
  EXPECT_FALSE(fs::exists(parent / "out"));
  for (const auto& e : fs::directory_iterator(parent))
    EXPECT_EQ(e.path().filename().string().find(".out"), std::string::npos) << e.path();
}

TEST(ModelCli, LlamaFamilyInfoAndRun) {
  test::TempDir dir;
  const test::TinyModel tm = test::writeTinyModel(
      dir / "mistral", {.arch = test::Fixture::Llama, .prefix = "model.", .family = "mistral", .kv_heads = 2, .sliding_window = 4});
  const test::RunResult r = runAttnlab({"model", "info", tm.dir.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"MistralForCausalLM", "kv heads      2 (grouped-query: 2 query heads per key/value head)",
                        "RoPE, θ base 50", "window        4 keys", "RMSNorm", "SwiGLU", "model.layers.1.mlp.gate_proj.weight"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << " not in:\n" << r.out;
  const fs::path out = dir / "run";
  const test::RunResult run = runAttnlab({"model", "run", tm.dir.string(), "--text", "the cat sat", "--out", out.string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json tokens = nlohmann::json::parse(test::slurp(out / "tokens.json"));
  EXPECT_EQ(tokens["tokens"][0], "<s>");
  const Array att = readNpy(out / "attention.npy", "attention");
  EXPECT_EQ(att.shape[0], 2);
  EXPECT_EQ(att.shape[1], 4) << "a map per query head, not per key/value head";
}

// Each new token's row over the cache, exactly as the engine's generate() gives it.
// The random model's tokens are arbitrary bytes: the decoded text may stop
// inside a UTF-8 sequence, and the JSON must still be written.
TEST(ModelCli, GenerateWritesEachNewTokensAttention) {
  test::TempDir dir;
  const test::TinyModel tm = test::writeTinyModel(dir / "llama", {.arch = test::Fixture::Llama, .kv_heads = 1});
  const fs::path out = dir / "gen";
  const test::RunResult r = runAttnlab({"model", "generate", tm.dir.string(), "--text", "the cat", "--max-new", "5",
                                        "--greedy", "--out", out.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("+ 5 new"), std::string::npos) << r.out;
  EXPECT_EQ(test::listFiles(out), (std::vector<std::string>{"attention.npy", "lengths.npy", "meta.json",
                                                           "prompt_attention.npy", "tokens.json"}));
  const auto model = loadModel(filesOnDisk(tm.dir.string()));
  const Generation g = generate(*model, "the cat", {.max_new = 5});
  const int64_t P = static_cast<int64_t>(g.prompt.ids.size()), S = 5, Lmax = P + S;
  const nlohmann::json tokens = nlohmann::json::parse(test::slurp(out / "tokens.json"));
  EXPECT_EQ(tokens["prompt_ids"].get<std::vector<int32_t>>(), g.prompt.ids);
  ASSERT_EQ(tokens["ids"].size(), 5u);
  for (size_t s = 0; s < 5; ++s) EXPECT_EQ(tokens["ids"][s], g.tokens[s].id);
  EXPECT_EQ(tokens["text"], nlohmann::json::parse(nlohmann::json(g.text).dump(-1, ' ', false,
                                                                              nlohmann::json::error_handler_t::replace)));
  const Array att = readNpy(out / "attention.npy", "attention");
  ASSERT_EQ(att.shape, (std::vector<int64_t>{S, 2, 4, Lmax}));
  // lengths.npy: int32 [S], the last 4·S bytes after the header
  const std::string lengths = test::slurp(out / "lengths.npy");
  EXPECT_NE(lengths.find("'descr': '<i4'"), std::string::npos);
  EXPECT_NE(lengths.find("'shape': (5,)"), std::string::npos);
  ASSERT_GE(lengths.size(), static_cast<size_t>(4 * S));
  for (int64_t s = 0; s < S; ++s) {
    int32_t n = 0;
    std::memcpy(&n, lengths.data() + lengths.size() - 4 * (S - s), 4);
    EXPECT_EQ(n, P + s + 1);
    for (int64_t l = 0; l < 2; ++l)
      for (int64_t h = 0; h < 4; ++h) {
        const float* row = att.data.data() + ((s * 2 + l) * 4 + h) * Lmax;
        for (int64_t j = 0; j < Lmax; ++j)
          ASSERT_FLOAT_EQ(row[j], j <= P + s ? g.tokens[static_cast<size_t>(s)].step.attention[l][h](0, j) : 0.0f)
              << "step " << s << " layer " << l << " head " << h << " key " << j;
      }
  }
  const Array prompt = readNpy(out / "prompt_attention.npy", "prompt_attention");
  EXPECT_EQ(prompt.shape, (std::vector<int64_t>{2, 4, P, P}));
  const nlohmann::json meta = nlohmann::json::parse(test::slurp(out / "meta.json"));
  EXPECT_EQ(meta["kv_heads"], 1);
  EXPECT_EQ(meta["sampling"]["mode"], "greedy");
  EXPECT_EQ(meta["steps"], 5);

  // Sampling is reproducible through the CLI too.
  const fs::path a = dir / "a", b = dir / "b";
  for (const fs::path& o : {a, b})
    ASSERT_EQ(runAttnlab({"model", "generate", tm.dir.string(), "--text", "the", "--max-new", "6", "--top-k", "40",
                          "--temperature", "1.5", "--seed", "11", "--out", o.string()})
                  .status,
              0);
  EXPECT_EQ(test::slurp(a / "tokens.json"), test::slurp(b / "tokens.json"));
}

TEST(ModelCli, BadInputExitsTwoWithoutOutput) {
  test::TempDir dir;
  const test::TinyModel tm = test::writeTinyModel(dir / "gpt2");
  const std::string m = tm.dir.string(), out = (dir / "out").string();
  expectBadInput({"model", "run", m, "--text", "", "--out", out}, dir.path, "empty");
  expectBadInput({"model", "run", m, "--text", "abcdefghijklmnopqrstuvwxyz", "--out", out}, dir.path, "--truncate");
  expectBadInput({"model", "run", m, "--text", "the", "--out", out, "--top-k", "-1"}, dir.path, "--top-k");
  expectBadInput({"model", "run", m, "--text", "the", "--out", out, "--predict-at", "first"}, dir.path, "--predict-at");
  expectBadInput({"model", "run", m, "--text", "the", "--out", out, "--predict-at", "1,,2"}, dir.path, "--predict-at");
  expectBadInput({"model", "run", m, "--text", "the cat", "--out", out, "--predict-at", "99"}, dir.path,
                 "--predict-at: position 99");
  expectBadInput({"model", "run", (dir / "nowhere").string(), "--text", "the", "--out", out}, dir.path,
                 "no such model folder");
  expectBadInput({"model", "run", m, "--text", "the"}, dir.path, "--out");
  expectBadInput({"model", "frobnicate"}, dir.path, "model");
  expectBadInput({"model", "generate", m, "--text", "the", "--out", out, "--greedy", "--top-k", "5"}, dir.path,
                 "--greedy");
  expectBadInput({"model", "generate", m, "--text", "the", "--out", out, "--max-new", "0"}, dir.path, "--max-new");
  expectBadInput({"model", "generate", m, "--text", "the", "--out", out, "--max-new", "3", "--top-k", "3", "--temperature", "0"},
                 dir.path, "--temperature");
  expectBadInput({"model", "generate", m, "--text", "the cat sat on the mat", "--out", out, "--max-new", "12"},
                 dir.path, "positions left");
  {
    test::TempDir bert;
    const test::TinyModel bm = test::writeTinyModel(bert / "bert", {.arch = test::Fixture::Bert});
    expectBadInput({"model", "generate", bm.dir.string(), "--text", "the cat", "--out", out}, dir.path,
                   "generation needs a causal language model");
  }

  test::setConfigField(tm, "architectures", R"(["MambaForCausalLM"])");
  expectBadInput({"model", "run", m, "--text", "the", "--out", out}, dir.path, "MambaForCausalLM");
  expectBadInput({"model", "info", m}, dir.path, "config.json");
  test::setConfigField(tm, "architectures", R"(["GPT2LMHeadModel"])");
  // GPT-2 tensors described as another family are refused, naming the field and the family expected.
  test::setConfigField(tm, "model_type", R"("mamba")");
  expectBadInput({"model", "run", m, "--text", "the", "--out", out}, dir.path,
                 "config.json: field 'model_type' is 'mamba', but 'architectures' names GPT2LMHeadModel (expected "
                 "model_type 'gpt2')");
  test::setConfigField(tm, "model_type", R"("gpt2")");
  fs::resize_file(tm.dir / "model.safetensors", fs::file_size(tm.dir / "model.safetensors") / 2);
  expectBadInput({"model", "run", m, "--text", "the", "--out", out}, dir.path, "model.safetensors");
}

}  // namespace
}  // namespace attn
