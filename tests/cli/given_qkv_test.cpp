// CLI: --q/--k/--v are the user's own projected queries, keys and values.
// Pattern variants attend with them as they are ([L, d] split into --heads,
// or [H, L, d_head]), inputs/ records them, and variants that read an input
// sequence refuse them in one line (the refusals are CliBadInput cases).
#include "engine/attention_math.h"
#include "engine/npy.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace attn::test {
namespace {

constexpr int64_t kL = 16, kHeads = 2, kDh = 4, kD = kHeads * kDh;

std::vector<std::string> compute(const std::string& variant, const TempDir& t, const std::string& stem,
                                 const std::string& out, std::vector<std::string> extra) {
  std::vector<std::string> a = {"compute", variant, "--q", (t / (stem + "q.npy")).string(), "--k",
                                (t / (stem + "k.npy")).string(), "--v", (t / (stem + "v.npy")).string(),
                                "--out", (t / out).string()};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST(CliGivenQkv, SparseStridedAttendsWithTheFilesAsTheyAre) {
  TempDir t;
  // q, k, v [L, d] and the same heads as [H, L, d_head] files.
  const Mat q = randomNormal(kL, kD, 1, "cli.q"), k = randomNormal(kL, kD, 1, "cli.k"), v = randomNormal(kL, kD, 1, "cli.v");
  for (const auto& [name, m] : {std::pair{std::string("q"), &q}, {std::string("k"), &k}, {std::string("v"), &v}}) {
    writeNpy(t / (name + ".npy"), Array::fromMat(*m));
    Array heads{{kHeads, kL, kDh}, {}};
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t i = 0; i < kL; ++i)
        for (int64_t c = 0; c < kDh; ++c) heads.data.push_back((*m)(i, h * kDh + c));
    writeNpy(t / (std::string(1, 'h').append(name) + ".npy"), heads);
  }
  RunResult r = runAttnlab(compute("sparse-strided", t, "", "flat", {"--heads", "2", "--set", "stride=4"}));
  ASSERT_EQ(r.status, 0) << r.err;
  const Array w = readNpy(t / "flat/weights.npy", "weights");
  ASSERT_EQ(w.shape, (std::vector<int64_t>{kHeads, kL, kL}));
  // softmax(q_h,i · k_h,j / √d_head) over A¹ ∪ A² = {j ≤ i : i − j ≤ ℓ or (i − j) mod ℓ = 0}, by a plain loop.
  for (int64_t h = 0; h < kHeads; ++h)
    for (int64_t i = 0; i < kL; ++i) {
      std::vector<double> e(kL, 0.0);
      double sum = 0;
      for (int64_t j = 0; j <= i; ++j) {
        if (i - j > 4 && (i - j) % 4 != 0) continue;
        double s = 0;
        for (int64_t c = 0; c < kDh; ++c) s += static_cast<double>(q(i, h * kDh + c)) * k(j, h * kDh + c);
        sum += e[static_cast<size_t>(j)] = std::exp(s / std::sqrt(static_cast<double>(kDh)));
      }
      for (int64_t j = 0; j < kL; ++j)
        EXPECT_NEAR(w.data[static_cast<size_t>((h * kL + i) * kL + j)], e[static_cast<size_t>(j)] / sum, 1e-5)
            << h << " " << i << " " << j;
    }
  // inputs/ holds what was used: the files, and nothing generated.
  EXPECT_EQ(readNpy(t / "flat/inputs/q.npy", "q").data, Array::fromMat(q).data);
  EXPECT_EQ(readNpy(t / "flat/inputs/k.npy", "k").data, Array::fromMat(k).data);
  EXPECT_EQ(readNpy(t / "flat/inputs/v.npy", "v").data, Array::fromMat(v).data);
  for (const char* seeded : {"x", "w_q", "w_k", "w_v", "w_o"})
    EXPECT_FALSE(std::filesystem::exists(t / "flat/inputs" / (std::string(seeded) + ".npy"))) << seeded;

  // [H, L, d_head] files: the same heads, whatever --heads says.
  r = runAttnlab(compute("sparse-strided", t, "h", "heads", {"--heads", "8", "--set", "stride=4"}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readNpy(t / "heads/weights.npy", "weights").data, w.data);
  EXPECT_EQ(readNpy(t / "heads/output.npy", "output").data, readNpy(t / "flat/output.npy", "output").data);
  std::ifstream meta(t / "heads/meta.json");
  EXPECT_EQ(nlohmann::json::parse(meta)["heads"], kHeads);

  // Every variant that takes q, k, v runs on them; multi-head without W^o is the heads side by side.
  for (const char* variant : {"sparse-fixed", "local-1d", "local-2d", "adaptive-span", "lsh", "multi-head", "cross-attention"}) {
    r = runAttnlab(compute(variant, t, "h", variant, {}));
    EXPECT_EQ(r.status, 0) << variant << ": " << r.err;
    EXPECT_EQ(readNpy(t / variant / "inputs/q.npy", "q").data, Array::fromMat(q).data) << variant;
    EXPECT_FALSE(std::filesystem::exists(t / variant / "inputs/w_q.npy")) << variant;
  }
}

}  // namespace
}  // namespace attn::test
