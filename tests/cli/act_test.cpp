// CLI: act, universal-transformer and gtrxl-gate computed and rendered by the
// real binary; bad ε and M are one-line usage errors.
#include "engine/npy.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace attn::test {
namespace {

nlohmann::json readMeta(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

TEST(CliAct, ActWritesHaltingWeightsAndPonderCost) {
  TempDir t;
  const RunResult r = runAttnlab({"compute", "act", "--seed", "2", "--length", "9", "--dim", "16", "--heads", "1",
                                  "--set", "max_steps=6", "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const Array p = readNpy(t / "run/extras/p.npy", "p");
  ASSERT_EQ(p.shape, (std::vector<int64_t>{9, 6}));
  const Array ponder = readNpy(t / "run/extras/ponder.npy", "ponder");
  double cost = 0;
  for (int64_t i = 0; i < 9; ++i) {
    double sum = 0;
    int64_t n = 0;
    for (int64_t k = 0; k < 6; ++k) {
      sum += p.data[static_cast<size_t>(i * 6 + k)];
      if (p.data[static_cast<size_t>(i * 6 + k)] > 0) n = k + 1;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << i;
    // ρ = N + R, R the last non-zero weight
    EXPECT_NEAR(ponder.data[static_cast<size_t>(i)], n + p.data[static_cast<size_t>(i * 6 + n - 1)], 1e-5) << i;
    cost += ponder.data[static_cast<size_t>(i)];
  }
  EXPECT_NEAR(readNpy(t / "run/extras/ponder_cost.npy", "cost").data[0], cost, 1e-3);
  for (const char* in : {"x", "w_x", "w_s", "w_h", "w_y"})
    EXPECT_TRUE(std::filesystem::exists(t / "run/inputs" / (std::string(in) + ".npy"))) << in;
  const nlohmann::json meta = readMeta(t / "run/meta.json");
  EXPECT_EQ(meta["extras"]["p"]["kind"], "stacked");
  // N(t) as int32 and R(t) as float32 [T]: ρ_t = N(t) + R(t).
  std::vector<int64_t> shape;
  const std::vector<int32_t> n = readTyped<int32_t>(t / "run/extras/n.npy", "<i4", shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{9}));
  const Array rem = readNpy(t / "run/extras/r.npy", "r");
  ASSERT_EQ(rem.shape, (std::vector<int64_t>{9}));
  ASSERT_EQ(n.size(), 9u);
  for (size_t i = 0; i < 9; ++i) EXPECT_NEAR(ponder.data[i], n[i] + rem.data[i], 1e-5) << i;
  EXPECT_EQ(meta["extras"]["n"]["kind"], "data");
  EXPECT_EQ(meta["extras"]["n"]["dtype"], "int32");
  EXPECT_EQ(meta["extras"]["r"]["dtype"], "float32");
}

// p_t^n alone is ambiguous: h = 0, 0, 1 gives p = [0, 0, 1] with N = 3 (not 1), R = 1.
TEST(CliAct, ActWritesNAndRThatPAloneDoesNotGive) {
  TempDir t;
  const RunResult r = runAttnlab({"compute", "act", "--set", "mode=manual", "--set", "h=0,0,1", "--set", "max_steps=4",
                                  "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readNpy(t / "run/extras/p.npy", "p").data, (std::vector<float>{0, 0, 1, 0}));
  std::vector<int64_t> shape;
  EXPECT_EQ(readTyped<int32_t>(t / "run/extras/n.npy", "<i4", shape), (std::vector<int32_t>{3}));
  EXPECT_EQ(readNpy(t / "run/extras/r.npy", "r").data, (std::vector<float>{1}));
}

TEST(CliAct, UniversalTransformerAndGateWriteTheirExtras) {
  TempDir t;
  const RunResult ut = runAttnlab({"compute", "universal-transformer", "--length", "10", "--dim", "16", "--heads",
                                   "2", "--out", (t / "ut").string()});
  ASSERT_EQ(ut.status, 0) << ut.err;
  const Array map = readNpy(t / "ut/extras/ponder_map.npy", "ponder_map");
  ASSERT_EQ(map.rank(), 2);
  EXPECT_EQ(map.shape[0], 10);
  EXPECT_EQ(readNpy(t / "ut/extras/attention_steps.npy", "steps").shape,
            (std::vector<int64_t>{map.shape[1], 10, 10}));
  // Each position's halting step [L] as int32: the step its ponder map row marks "halts here" (1).
  std::vector<int64_t> shape;
  const std::vector<int32_t> halting = readTyped<int32_t>(t / "ut/extras/halting_step.npy", "<i4", shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{10}));
  ASSERT_EQ(halting.size(), 10u);
  for (int64_t i = 0; i < 10; ++i)
    for (int64_t s = 0; s < map.shape[1]; ++s)
      EXPECT_EQ(map.data[static_cast<size_t>(i * map.shape[1] + s)] == 1.0f, s + 1 == halting[static_cast<size_t>(i)])
          << i << " " << s;
  const RunResult g = runAttnlab({"compute", "gtrxl-gate", "--length", "10", "--dim", "16", "--heads", "2", "--set",
                                  "b_g=20", "--out", (t / "g").string()});
  ASSERT_EQ(g.status, 0) << g.err;
  // b_g = 20 closes the gate: the output is x to float precision.
  const Array x = readNpy(t / "g/inputs/x.npy", "x"), out = readNpy(t / "g/output.npy", "output");
  ASSERT_EQ(x.data.size(), out.data.size());
  for (size_t i = 0; i < x.data.size(); ++i) EXPECT_NEAR(out.data[i], x.data[i], 1e-5) << i;
}

TEST(CliAct, RenderExtrasOfEachVariant) {
  TempDir t;
  for (const char* v : {"act", "universal-transformer", "gtrxl-gate"}) {
    const std::string out = (t / (std::string(v) + ".svg")).string();
    const RunResult r = runAttnlab({"render", v, "--view", "extras", "--out", out});
    ASSERT_EQ(r.status, 0) << v << ": " << r.err;
    const std::string svg = slurp(out);
    EXPECT_GT(svg.size(), 5000u) << v;
  }
  // The stacked bars carry their captions into the figure.
  EXPECT_NE(slurp(t / "act.svg").find("N="), std::string::npos);
}

TEST(CliAct, BadEpsilonAndMaxStepsExitTwoWithOneLine) {
  TempDir t;
  for (const std::vector<std::string>& set : {std::vector<std::string>{"epsilon=0"}, {"epsilon=1"}, {"max_steps=0"}}) {
    for (const char* v : {"act", "universal-transformer"}) {
      std::vector<std::string> args = {"compute", v, "--out", (t / "x").string()};
      for (const std::string& s : set) args.insert(args.end(), {"--set", s});
      const RunResult r = runAttnlab(args);
      EXPECT_EQ(r.status, 2) << v << " " << set[0];
      EXPECT_EQ(countLines(r.err), 1) << r.err;
      EXPECT_NE(r.err.find(set[0].substr(0, set[0].find('='))), std::string::npos) << r.err;
      EXPECT_FALSE(std::filesystem::exists(t / "x"));
    }
  }
}

}  // namespace
}  // namespace attn::test
