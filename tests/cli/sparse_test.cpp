// The sparse variants through the real binary: CSR weight files at a length
// where dense weights are not kept, --no-weights at L = 16,384 without an
// L×L allocation, and bad parameters as one-line errors with exit status 2.
#include "engine/npy.h"
#include "tests/test_support.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

namespace attn {
namespace {

using test::readTyped;
using test::RunResult;
using test::runAttnlab;
using test::TempDir;

nlohmann::json readMeta(const std::filesystem::path& dir) {
  std::ifstream in(dir / "meta.json");
  return nlohmann::json::parse(in);
}

TEST(CliSparse, LargeLWritesCsrThatReconstructsThePattern) {
  TempDir t;
  const int64_t n = 4096, l = 64, heads = 2;  // 2 × 4096² > the dense view limit
  const RunResult r = runAttnlab({"compute", "sparse-strided", "--length", "4096", "--dim", "32", "--heads", "2",
                                  "--set", "stride=64", "--set", "layout=split", "--out", (t / "r").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(t / "r/weights.npy")) << "dense weights at L=4096, 2 heads";
  std::vector<int64_t> ps, is, vs;
  const auto indptr = readTyped<int64_t>(t / "r/weights_indptr.npy", "<i8", ps);
  const auto indices = readTyped<int32_t>(t / "r/weights_indices.npy", "<i4", is);
  const auto values = readTyped<float>(t / "r/weights_values.npy", "<f4", vs);
  ASSERT_EQ(ps, (std::vector<int64_t>{heads, n + 1}));
  ASSERT_EQ(is, (std::vector<int64_t>{static_cast<int64_t>(indices.size())}));
  ASSERT_EQ(vs, is);
  ASSERT_EQ(indptr.size(), static_cast<size_t>(heads * (n + 1)));
  EXPECT_EQ(indptr.front(), 0);
  EXPECT_EQ(indptr.back(), static_cast<int64_t>(indices.size()));
  // layout = split: head 0 uses A¹ = {max(0, i−ℓ) … i}, head 1 A² = {j ≤ i : (i−j) mod ℓ = 0}.
  for (int64_t h = 0; h < heads; ++h) {
    if (h > 0) {
      EXPECT_EQ(indptr[static_cast<size_t>(h * (n + 1))], indptr[static_cast<size_t>(h * (n + 1) - 1)]);
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t b = indptr[static_cast<size_t>(h * (n + 1) + i)], e = indptr[static_cast<size_t>(h * (n + 1) + i + 1)];
      std::vector<int32_t> want;
      for (int64_t j = 0; j <= i; ++j)
        if (h == 0 ? j >= i - l : (i - j) % l == 0) want.push_back(static_cast<int32_t>(j));
      ASSERT_EQ(std::vector<int32_t>(indices.begin() + b, indices.begin() + e), want) << "head " << h << " row " << i;
      double sum = 0;
      for (int64_t k = b; k < e; ++k) sum += values[static_cast<size_t>(k)];
      ASSERT_NEAR(sum, 1.0, 1e-4) << "head " << h << " row " << i;
    }
  }
  const nlohmann::json meta = readMeta(t / "r");
  EXPECT_EQ(meta["shapes"]["weights"], (std::vector<int64_t>{heads, n, n}));
  EXPECT_EQ(meta["sparse"]["image_width"], 64);
  EXPECT_EQ(meta["sparse"]["nnz"].size(), 2u);
  EXPECT_TRUE(std::filesystem::exists(t / "r/extras/connections_per_query.npy"));
  EXPECT_TRUE(std::filesystem::exists(t / "r/extras/layout.npy"));
  EXPECT_TRUE(std::filesystem::exists(t / "r/inputs/q.npy"));
  EXPECT_EQ(readNpy(t / "r/output.npy", "output").shape, (std::vector<int64_t>{n, 32}));
}

TEST(CliSparse, SmallLWritesDenseWeights) {
  TempDir t;
  const RunResult r = runAttnlab({"compute", "local-2d", "--length", "16", "--out", (t / "r").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readNpy(t / "r/weights.npy", "weights").shape, (std::vector<int64_t>{4, 16, 16}));
  EXPECT_FALSE(std::filesystem::exists(t / "r/weights_indptr.npy"));
  EXPECT_EQ(readNpy(t / "r/extras/query_block.npy", "query_block").shape, (std::vector<int64_t>{16}));
}

TEST(CliSparse, NoWeightsAtL16384StaysFarBelowLTimesL) {
  TempDir t;
  for (const std::string name : {"sparse-strided", "sparse-fixed", "local-1d", "local-2d"}) {
    const std::string out = (t / name).string();
    const RunResult r = runAttnlab({"compute", name, "--length", "16384", "--dim", "64", "--heads", "1", "--set",
                                    name == "sparse-strided" ? "stride=128" : name == "sparse-fixed" ? "block=128"
                                    : name == "local-1d" ? "l_q=128" : "b_w=16",
                                    "--no-weights", "--out", out});
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(t / name / "weights_values.npy")) << name;
    EXPECT_FALSE(std::filesystem::exists(t / name / "weights.npy")) << name;
    EXPECT_FALSE(std::filesystem::exists(t / name / "scores.npy")) << name;
    const nlohmann::json meta = readMeta(t / name);
    // One dense float32 [16384, 16384] is 1 GiB; the whole process must stay far below.
    const double peak = meta["peak_rss_bytes"].get<double>();
    EXPECT_GT(peak, 0.0) << name;
    EXPECT_LT(peak, 256.0 * (1 << 20)) << name << ": peak RSS " << peak / (1 << 20) << " MiB";
  }
}

TEST(CliSparse, BadParametersAreOneLineAndExitTwo) {
  TempDir t;
  const std::vector<std::vector<std::string>> cases = {
      {"sparse-strided", "--set", "stride=0"},
      {"sparse-fixed", "--set", "block=4", "--set", "c=5"},
      {"local-1d", "--length", "8", "--set", "l_q=9"},
      {"local-2d", "--length", "16", "--set", "b_h=5", "--set", "b_w=4"},
      {"local-2d", "--length", "12", "--set", "width=5"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"compute"};
    args.insert(args.end(), c.begin(), c.end());
    args.insert(args.end(), {"--out", (t / "r").string()});
    const RunResult r = runAttnlab(args);
    EXPECT_EQ(r.status, 2) << c[0] << " " << c.back() << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(t / "r")) << "partial output for " << c.back();
  }
}

// compute --compare: local-1d whose one query block is the whole sequence
// (l_q = L, l_m = 0) is full causal attention, so it keeps all the mass, has
// KL 0 and reproduces the output; a shorter block drops mass.
TEST(CliCompare, ComputeCompareWritesTheNumbersAndPerQueryArrays) {
  TempDir t;
  const auto run = [&](const std::string& l_q, const std::string& out) {
    return runAttnlab({"compute", "local-1d", "--length", "64", "--dim", "16", "--heads", "2", "--set", "l_q=" + l_q,
                       "--set", "l_m=0", "--compare", "--out", (t / out).string()});
  };
  const RunResult full = run("64", "full");
  ASSERT_EQ(full.status, 0) << full.err;
  EXPECT_NE(full.out.find("against full attention: mass kept"), std::string::npos) << full.out;
  const nlohmann::json c = nlohmann::json::parse(test::slurp(t / "full/compare.json"));
  EXPECT_NEAR(c["mass_kept_mean"].get<double>(), 1.0, 1e-5);
  EXPECT_NEAR(c["kl_full_pattern_mean"].get<double>(), 0.0, 1e-5);
  EXPECT_LT(c["output_relative_error"].get<double>(), 1e-4);
  EXPECT_EQ(c["pattern"]["connections"], c["full"]["connections"]);
  EXPECT_EQ(readNpy(t / "full/compare/mass_kept.npy", "mass_kept").shape, (std::vector<int64_t>{2, 64}));
  EXPECT_EQ(readNpy(t / "full/compare/kl.npy", "kl").shape, (std::vector<int64_t>{2, 64}));

  const RunResult blocks = run("8", "blocks");
  ASSERT_EQ(blocks.status, 0) << blocks.err;
  const nlohmann::json b = nlohmann::json::parse(test::slurp(t / "blocks/compare.json"));
  EXPECT_LT(b["mass_kept_mean"].get<double>(), 0.95);
  EXPECT_EQ(b["kl_full_pattern_mean"], "inf") << "full attention weights keys the blocks drop";
  EXPECT_LT(b["pattern"]["connections"].get<int64_t>(), b["full"]["connections"].get<int64_t>());
}

TEST(CliCompare, CompareOfAVariantWithoutTheViewIsOneLineError) {
  TempDir t;
  const RunResult r = runAttnlab({"compute", "multi-head", "--compare", "--out", (t / "out").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(test::countLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--compare: multi-head"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(t / "out"));
}

TEST(CliBench, UnknownSectionIsOneLineError) {
  const RunResult r = runAttnlab({"bench", "--only", "nope"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(test::countLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--only: unknown section 'nope'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sparse"), std::string::npos) << "lists the sections: " << r.err;
}

// The 2.2 GB checkpoint is never written here: a folder without one is refused first.
TEST(CliBench, LlamaCheckpointWithoutFilesIsOneLineError) {
  test::TempDir t;
  const RunResult r = runAttnlab({"bench", "--only", "llama", "--llama-checkpoint", (t / "none").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(test::countLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--llama-checkpoint: " + (t / "none").string() + " holds no config.json"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--write-llama-checkpoint DIR"), std::string::npos) << "says how to write one: " << r.err;
  EXPECT_FALSE(std::filesystem::exists(t / "none"));
}

}  // namespace
}  // namespace attn
