// CLI: the Reformer variants computed and rendered by the real binary.
#include "engine/npy.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace attn::test {
namespace {

std::vector<std::string> lshArgs(const std::vector<std::string>& extra) {
  std::vector<std::string> a = {"--seed", "4", "--length", "48", "--dim", "32", "--heads", "2", "--set", "n_buckets=8",
                                "--set", "chunk=8", "--set", "rounds=3"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(CliLsh, ComputeWritesRAndAGivenRReproducesTheBuckets) {
  TempDir t;
  RunResult r = runAttnlab(cat({"compute", "lsh"}, lshArgs({"--out", (t / "a").string(), "--compare"})));
  ASSERT_EQ(r.status, 0) << r.err;
  const Array rot = readNpy(t / "a/inputs/R.npy", "R");
  EXPECT_EQ(rot.shape, (std::vector<int64_t>{16, 12}));  // [d_head, rounds · b/2]
  EXPECT_EQ(readNpy(t / "a/weights.npy", "weights").shape, (std::vector<int64_t>{2, 48, 48}));
  for (const char* e : {"buckets", "round_buckets", "bucket_sizes", "angular_b2", "angular_b4", "angular_b6", "angular_b8", "topk_share"})
    EXPECT_TRUE(std::filesystem::exists(t / "a/extras" / (std::string(e) + ".npy"))) << e;
  for (const char* in : {"x", "q", "k", "v", "w_q", "w_v"})
    EXPECT_TRUE(std::filesystem::exists(t / "a/inputs" / (std::string(in) + ".npy"))) << in;
  EXPECT_TRUE(std::filesystem::exists(t / "a/compare.json"));
  EXPECT_NE(r.out.find("lsh against full attention: mass kept"), std::string::npos) << r.out;

  // Every round's buckets as int32 [rounds, L]; the strip shows the chosen round's row.
  std::vector<int64_t> shape;
  const std::vector<int32_t> buckets = readTyped<int32_t>(t / "a/extras/buckets.npy", "<i4", shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{3, 48}));
  ASSERT_EQ(buckets.size(), 3u * 48u);
  const Array strip = readNpy(t / "a/extras/round_buckets.npy", "strip");
  for (size_t i = 0; i < 48; ++i) EXPECT_EQ(strip.data[i], static_cast<float>(buckets[i])) << i;
  EXPECT_NE(std::vector<int32_t>(buckets.begin(), buckets.begin() + 48),
            std::vector<int32_t>(buckets.begin() + 48, buckets.begin() + 96))
      << "rounds hash with their own R";

  r = runAttnlab(cat({"compute", "lsh"}, lshArgs({"--set", "R=" + (t / "a/inputs/R.npy").string(), "--set", "round=2",
                                                  "--out", (t / "b").string()})));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readTyped<int32_t>(t / "b/extras/buckets.npy", "<i4", shape), buckets);
  const Array strip2 = readNpy(t / "b/extras/round_buckets.npy", "strip");
  for (size_t i = 0; i < 48; ++i) EXPECT_EQ(strip2.data[i], static_cast<float>(buckets[96 + i])) << i;
  EXPECT_EQ(readNpy(t / "b/weights.npy", "b").data, readNpy(t / "a/weights.npy", "a").data);
}

TEST(CliLsh, LongSequencesAreWrittenAsCsr) {
  TempDir t;
  const RunResult r = runAttnlab({"compute", "lsh", "--length", "8192", "--dim", "64", "--heads", "2", "--set",
                                  "n_buckets=8", "--set", "chunk=64", "--set", "rounds=2", "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(t / "run/weights.npy"));
  EXPECT_TRUE(std::filesystem::exists(t / "run/weights_indices.npy"));
  std::ifstream meta_file(t / "run/meta.json");
  const nlohmann::json meta = nlohmann::json::parse(meta_file);
  EXPECT_EQ(meta["shapes"]["weights_indptr"], nlohmann::json::array({2, 8193}));
}

TEST(CliLsh, BadParametersAreOneLineUsageErrors) {
  TempDir t;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"n_buckets=5", "n_buckets"}, {"n_buckets=1", "n_buckets"}, {"chunk=0", "chunk"}, {"rounds=0", "rounds"}};
  for (const auto& [set, needle] : cases) {
    const RunResult r = runAttnlab({"compute", "lsh", "--set", set, "--out", (t / "x").string()});
    EXPECT_EQ(r.status, 2) << set;
    EXPECT_EQ(countLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(t / "x"));
  }
}

TEST(CliLsh, RendersEveryWalkthroughPanelAndTheReversibleExtras) {
  TempDir t;
  RunResult r = runAttnlab(cat({"render", "lsh"}, lshArgs({"--view", "walkthrough", "--size", "1800x1100", "--out", (t / "w.svg").string()})));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = slurp(t / "w.svg");
  for (const char* panel : {"(a) normal attention", "(b) Q and K sorted", "(c) shared-QK", "(d) chunked", "b = 2", "b = 8",
                            "bucket sizes"})
    EXPECT_NE(svg.find(panel), std::string::npos) << panel;
  r = runAttnlab(cat({"render", "lsh"}, lshArgs({"--view", "walkthrough", "--out", (t / "w.png").string()})));
  EXPECT_EQ(r.status, 0) << r.err;
  r = runAttnlab({"render", "reversible", "--length", "32", "--dim", "16", "--heads", "2", "--set", "layers=6",
                  "--view", "extras", "--out", (t / "rev.svg").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string rev = slurp(t / "rev.svg");
  EXPECT_NE(rev.find("reconstruction error"), std::string::npos);
  EXPECT_NE(rev.find("reversible"), std::string::npos);
  r = runAttnlab({"render", "reversible", "--view", "walkthrough", "--out", (t / "no.png").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("walkthrough"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace attn::test
