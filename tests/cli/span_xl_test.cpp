// CLI: adaptive-span and transformer-xl computed by the real binary.
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

TEST(CliSpanXl, AdaptiveSpanWritesWeightsRampAndPerHeadSpans) {
  TempDir t;
  const RunResult r = runAttnlab({"compute", "adaptive-span", "--seed", "2", "--length", "40", "--dim", "32",
                                  "--heads", "4", "--set", "max_span=16", "--set", "z=2,4,8,16", "--set", "ramp=4",
                                  "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readNpy(t / "run/weights.npy", "weights").shape, (std::vector<int64_t>{4, 40, 40}));
  EXPECT_EQ(readNpy(t / "run/output.npy", "output").shape, (std::vector<int64_t>{40, 32}));
  EXPECT_EQ(readNpy(t / "run/extras/ramp.npy", "ramp").shape, (std::vector<int64_t>{4, 17}));
  EXPECT_EQ(readNpy(t / "run/extras/span.npy", "span").data, (std::vector<float>{2, 4, 8, 16}));
  EXPECT_TRUE(std::filesystem::exists(t / "run/extras/flops_saved.npy"));
  for (const char* in : {"x", "q", "k", "v", "w_q"})
    EXPECT_TRUE(std::filesystem::exists(t / "run/inputs" / (std::string(in) + ".npy"))) << in;
  const nlohmann::json meta = readMeta(t / "run/meta.json");
  EXPECT_EQ(meta["variant"], "adaptive-span");
  EXPECT_EQ(meta["params"]["z"], nlohmann::json::array({2.0, 4.0, 8.0, 16.0}));
  EXPECT_EQ(meta["params"]["max_span"], 16);
}

TEST(CliSpanXl, TransformerXlWritesBandsAndTheFourTerms) {
  TempDir t;
  const RunResult r = runAttnlab({"compute", "transformer-xl", "--seed", "3", "--length", "30", "--dim", "16",
                                  "--heads", "2", "--set", "segment=8", "--set", "memory=6", "--set", "tau=2",
                                  "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readNpy(t / "run/weights.npy", "weights").shape, (std::vector<int64_t>{2, 8, 14}));
  for (const char* term : {"a", "b", "c", "d", "vanilla"})
    EXPECT_EQ(readNpy(t / "run/extras" / (std::string(term) + ".npy"), term).shape,
              (std::vector<int64_t>{2, 8, 14}))
        << term;
  EXPECT_EQ(readNpy(t / "run/inputs/x.npy", "x").shape, (std::vector<int64_t>{30, 16}));
  const nlohmann::json meta = readMeta(t / "run/meta.json");
  EXPECT_EQ(meta["variant"], "transformer-xl");
  EXPECT_EQ(meta["params"]["tau"], 2);
}

TEST(CliSpanXl, BadParametersExitTwoWithOneLine) {
  TempDir t;
  const RunResult past = runAttnlab({"compute", "transformer-xl", "--length", "12", "--set", "tau=5", "--out",
                                     (t / "a").string()});
  EXPECT_EQ(past.status, 2);
  EXPECT_NE(past.err.find("tau τ=5 is past the end"), std::string::npos) << past.err;
  const RunResult neg = runAttnlab({"compute", "adaptive-span", "--set", "z=4,-3", "--out", (t / "b").string()});
  EXPECT_EQ(neg.status, 2);
  EXPECT_NE(neg.err.find("z: element 1 must be in 0..65536, got -3"), std::string::npos) << neg.err;
  EXPECT_FALSE(std::filesystem::exists(t / "a"));
  EXPECT_FALSE(std::filesystem::exists(t / "b"));
}

TEST(CliSpanXl, ListShowsTheFloatListParameter) {
  const RunResult r = runAttnlab({"list"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("--set z=1,3,5,8  [float list 0..65536]"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace attn::test
