// attnlab model ablate / importance / patch / lens / attribute through the
// real binary on a tiny GPT-2 checkpoint: what each writes equals the
// engine's analyses in this process (themselves checked against the loop
// reference in tests/engine/model/analysis), and bad requests are one line,
// exit 2, nothing written.
#include "engine/model/analysis/interventions.h"
#include "engine/model/model.h"
#include "engine/npy.h"

#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace attn {
namespace {

using test::runAttnlab;

const std::string kClean = "the cat sat";
const std::string kCorrupted = "the hat sat";

struct Checkpoint {
  test::TempDir dir;
  test::TinyModel tm = test::writeTinyModel(dir / "gpt2", {.seed = 12});
  std::shared_ptr<const Model> model = loadModel(filesOnDisk(tm.dir.string()));
  std::vector<int32_t> ids = textIds(*model, kClean, false);

  // `model <command> <checkpoint> --text kClean <args> --out <dir>/<command>`, which must succeed
  fs::path run(const std::string& command, std::vector<std::string> args = {}) {
    const fs::path out = dir / command;
    std::vector<std::string> all = {"model", command, tm.dir.string(), "--text", kClean, "--out", out.string()};
    all.insert(all.end(), args.begin(), args.end());
    const test::RunResult r = runAttnlab(all);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("wrote " + out.string()), std::string::npos) << r.out;
    return out;
  }
};

Mat npyMat(const fs::path& p) {
  const Array a = readNpy(p.string(), "test");
  EXPECT_EQ(a.shape.size(), 2u) << p;
  return Eigen::Map<const Mat>(a.data.data(), a.shape.at(0), a.shape.at(1));
}

nlohmann::json jsonOf(const fs::path& p) { return nlohmann::json::parse(test::slurp(p)); }

TEST(InterventionsCli, EachCommandWritesWhatTheEngineComputes) {
  Checkpoint s;
  const Target own = chooseTarget(*s.model, s.ids, -1, -1);

  const fs::path imp = s.run("importance", {"--mode", "mean"});
  const ImportanceGrid g = importanceGrid(*s.model, s.ids, HeadAblation::Mode::Mean, own);
  EXPECT_LT((npyMat(imp / "importance.npy") - g.delta).cwiseAbs().maxCoeff(), 1e-6f);
  const nlohmann::json ij = jsonOf(imp / "importance.json");
  EXPECT_EQ(ij["target"]["id"], own.id);
  EXPECT_EQ(ij["ranking"].size(), 4u);
  Eigen::Index l = 0, h = 0;
  g.delta.minCoeff(&l, &h);
  EXPECT_EQ(ij["ranking"][0]["layer"], l);
  EXPECT_EQ(ij["ranking"][0]["head"], h);

  const fs::path abl = s.run("ablate", {"--heads", "0:1,1:0", "--token-id", "7", "--position", "1"});
  const AblationEffect e =
      ablationEffect(*s.model, s.ids, {HeadAblation::Mode::Zero, {{0, 1}, {1, 0}}}, chooseTarget(*s.model, s.ids, 1, 7));
  const nlohmann::json aj = jsonOf(abl / "ablate.json");
  EXPECT_NEAR(aj["before"]["log_prob"].get<double>(), e.before.log_prob, 1e-9);
  EXPECT_NEAR(aj["after"]["log_prob"].get<double>(), e.after.log_prob, 1e-9);
  EXPECT_EQ(aj["top_k_after"][0]["id"], e.top_after[0].id);
  EXPECT_EQ(aj["target"]["position"], 1);

  const fs::path patch = s.run("patch", {"--corrupted", kCorrupted});
  const PatchingResult p = activationPatching(*s.model, s.ids, textIds(*s.model, kCorrupted, false), own, {});
  EXPECT_LT((npyMat(patch / "patch_heads.npy") - p.heads).cwiseAbs().maxCoeff(), 1e-6f);
  EXPECT_LT((npyMat(patch / "patch_residual.npy") - p.residual).cwiseAbs().maxCoeff(), 1e-6f);
  EXPECT_LT((npyMat(patch / "restored_residual.npy") - p.restoredResidual()).cwiseAbs().maxCoeff(), 1e-6f);
  EXPECT_LT((npyMat(patch / "restored_heads.npy") - p.restoredHeads()).cwiseAbs().maxCoeff(), 1e-6f);

  const fs::path lens = s.run("lens", {"--top-k", "2"});
  const LogitLens ll = logitLens(*s.model, s.ids, 2);
  EXPECT_LT((npyMat(lens / "lens.npy") - ll.final_token).cwiseAbs().maxCoeff(), 1e-6f);
  const nlohmann::json lj = jsonOf(lens / "lens.json");
  ASSERT_EQ(lj["top_k"].size(), 3u);  // the embeddings and after each of 2 layers
  EXPECT_EQ(lj["top_k"][1][2][0]["id"], ll.top[1][2][0].id);
  EXPECT_EQ(lj["top_k"][1][2].size(), 2u);

  const fs::path attr = s.run("attribute", {"--token", "t"});
  const nlohmann::json tj = jsonOf(attr / "attribute.json");
  double sum = 0;
  for (const nlohmann::json& part : tj["parts"]) sum += part["value"].get<double>();
  EXPECT_NEAR(sum, tj["logit"].get<double>(), 1e-4);
  EXPECT_EQ(tj["target"]["id"], tokenIdOf(*s.model, "t"));
  EXPECT_EQ(npyMat(attr / "attribution_heads.npy").rows(), 2);
}

TEST(InterventionsCli, BadRequestsAreOneLineAndWriteNothing) {
  Checkpoint s;
  test::TempDir bert_dir;
  const test::TinyModel bert = test::writeTinyModel(bert_dir / "bert", {.arch = test::Fixture::Bert});
  const std::string m = s.tm.dir.string();
  const fs::path out = s.dir / "never";
  struct Bad {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Bad> bad = {
      {{"importance", m, "--text", kClean, "--token", "the cat"}, "--token: ‹the cat› is"},
      {{"importance", m, "--text", kClean, "--token-id", "99999"}, "--token-id: 99999 is outside the vocabulary"},
      {{"ablate", m, "--text", kClean, "--heads", "0:9"}, "--heads: layer 0 head 9 is outside the model's 2 layers of 2 heads"},
      {{"ablate", m, "--text", kClean, "--heads", "0:1", "--mode", "half"}, "--mode: expected zero or mean, got 'half'"},
      {{"attribute", m, "--text", kClean, "--position", "40"}, "--position: position 40 is outside the"},
      {{"patch", m, "--text", kClean, "--corrupted", "a cat sat on it"}, "same number of tokens"},
      {{"patch", m, "--text", kClean}, "--corrupted: model patch needs the corrupted text"},
      {{"lens", m, "--text", kClean, "--top-k", "0"}, "--top-k: expected K ≥ 1, got 0"},
      {{"lens", "shipped:t5-toy"}, "T5ForConditionalGeneration is not a text model with one stack"},
      {{"attribute", bert.dir.string(), "--text", "the cat"}, "direct logit attribution: BERT"},
  };
  for (const Bad& b : bad) {
    std::vector<std::string> args = {"model"};
    args.insert(args.end(), b.args.begin(), b.args.end());
    args.insert(args.end(), {"--out", out.string()});
    const test::RunResult r = runAttnlab(args);
    EXPECT_EQ(r.status, 2) << b.says << ": " << r.err;
    EXPECT_EQ(test::countLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(b.says), std::string::npos) << b.says << " not in: " << r.err;
    EXPECT_FALSE(fs::exists(out)) << b.says;
  }
}

// render --value-weighted: the head views and rollout drawn from α_ij ‖v_j W_O‖ (the maps themselves are checked
// against the norm by hand in tests/engine/model/analysis): another picture than the weights', said in its title;
// refused for a model whose maps are not a text model's, and for a page.
TEST(InterventionsCli, ValueWeightedFiguresAndTheirRefusals) {
  test::TempDir dir;
  for (const char* view : {"model", "rollout"}) {
    const fs::path plain = dir / (std::string(view) + ".svg"), weighted = dir / (std::string(view) + "_vw.svg");
    const test::RunResult a = runAttnlab({"render", "--default-model", "--view", view, "--out", plain.string()});
    const test::RunResult b =
        runAttnlab({"render", "--default-model", "--view", view, "--value-weighted", "--out", weighted.string()});
    ASSERT_EQ(a.status, 0) << a.err;
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_NE(test::slurp(plain), test::slurp(weighted)) << view;
    EXPECT_NE(test::slurp(weighted).find("value-weighted"), std::string::npos) << view;
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"render", "--model", "shipped:t5-toy", "--value-weighted"},
        std::vector<std::string>{"render", "--default-model", "--format", "html", "--value-weighted"}}) {
    std::vector<std::string> all = args;
    all.insert(all.end(), {"--out", (dir / (args[3] == "html" ? "never.html" : "never.png")).string()});
    const test::RunResult r = runAttnlab(all);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(test::countLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("--value-weighted"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "never.png") || fs::exists(dir / "never.html"));
  }
}

}  // namespace
}  // namespace attn
