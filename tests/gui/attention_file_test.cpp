// `attnlab gui --attention PATH` under Xvfb: a float16 .npy of
// [12, 12, 512, 512] (what numpy writes) opens in the window, its grid a
// thumbnail per head and the focused head's whole map over its 512 tokens,
// another head when asked, its table; bad input is one line and no window.
#include "tests/gui_support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace attn::test {
namespace {

namespace fs = std::filesystem;

// numpy writes the file, as a notebook would: head (l, h)'s row i puts half
// its weight on key (i·(l + 1) + h) mod (i + 1) and spreads the rest causally.
bool writeFloat16Maps(const fs::path& file) {
  const std::string script =
      "import numpy as np, sys\n"
      "L = 512\n"
      "i = np.arange(L)[:, None]; j = np.arange(L)[None, :]\n"
      "base = np.where(j <= i, 0.5 / (i + 1), 0.0)\n"
      "a = np.empty((12, 12, L, L), dtype=np.float16)\n"
      "for l in range(12):\n"
      "    for h in range(12):\n"
      "        m = base.copy()\n"
      "        m[np.arange(L), (np.arange(L) * (l + 1) + h) % (np.arange(L) + 1)] += 0.5\n"
      "        a[l, h] = m\n"
      "np.save(sys.argv[1], a)\n";
  const RunResult r = runProgram("/usr/bin/python3", {"-c", script, file.string()}, {}, 300);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0;
}

TEST_F(GuiTest, Float16FileOf144HeadsOpensWithItsGridAndTable) {
  TempDir dir;
  ASSERT_TRUE(writeFloat16Maps(dir / "maps.npy"));
  nlohmann::json grid;
  RunResult run;
  const QImage img = shootAt("1600x1000", {"--attention", (dir / "maps.npy").string()}, &grid, &run, 10);
  ASSERT_FALSE(img.isNull()) << run.err;
  EXPECT_EQ(run.status, 0) << run.err;
  const Stats s = analyse(img);
  EXPECT_GT(s.colormap_pixels, 100000u) << "the grid of 144 maps";
  // The focused head's map runs over the 512 tokens: its query axis is ticked to 504.
  std::string texts;
  for (const nlohmann::json& x : grid.at("texts")) texts += "|" + x.at("text").get<std::string>();
  EXPECT_NE(texts.find("|504"), std::string::npos) << texts.substr(0, 300);
  // Another focused head (layer 7, head 4) draws another map; the table (key 5) is no grid.
  const QImage other = shootAt("1600x1000", {"--attention", (dir / "maps.npy").string(), "--layer", "7", "--head", "4"}, nullptr, &run, 10);
  ASSERT_FALSE(other.isNull()) << run.err;
  EXPECT_GT(differingPixels(img, other, viewArea(img)), 5000u) << "the focused head's map follows --layer/--head";
  const QImage t = shootAt("1600x1000", {"--attention", (dir / "maps.npy").string(), "--keys", "5"}, nullptr, &run, 12);
  ASSERT_FALSE(t.isNull()) << run.err;
  EXPECT_GT(differingPixels(img, t, viewArea(img)), 20000u) << "the table is not the grid";
}

TEST_F(GuiTest, BadAttentionFileIsOneLineAndNoWindow) {
  TempDir dir;
  const std::string script = "import numpy as np, sys\nnp.save(sys.argv[1], np.full((3, 5, 5), 0.3, dtype=np.float32))\n";
  ASSERT_EQ(runProgram("/usr/bin/python3", {"-c", script, (dir / "bad.npy").string()}).status, 0);
  const RunResult r = runAttnlab({"gui", "--attention", (dir / "bad.npy").string(), "--frames", "3", "--screenshot",
                                  (dir / "shot.png").string()},
                                 env());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(countLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("bad.npy"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("row 0 sums to 1.5"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "shot.png")) << "no window opened";
}

}  // namespace
}  // namespace attn::test
