// CLI: ntm-copy computed and rendered by the real binary: the files and their
// shapes, the embedded model equal to the same file given as weights=, and a
// bad weights file, a length beyond the model's and a step past the end each
// refused in one line with no output.
#include "engine/npy.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <fstream>

namespace attn::test {
namespace {

using Shape = std::vector<int64_t>;

TEST(CliNtmCopy, ComputeWritesWeightingsMemoryAndStages) {
  TempDir t;
  const RunResult r = runAttnlab(
      {"compute", "ntm-copy", "--length", "6", "--seed", "3", "--set", "step=9", "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const Array w = readNpy(t / "run/weights.npy", "weights");
  ASSERT_EQ(w.shape.size(), 3u);
  EXPECT_EQ(w.shape[0], 2);   // write, read
  EXPECT_EQ(w.shape[1], 13);  // 6 inputs, the delimiter, 6 outputs
  const int64_t n = w.shape[2];
  EXPECT_EQ(readNpy(t / "run/output.npy", "output").shape[0], 13);
  EXPECT_EQ(readNpy(t / "run/extras/w_write.npy", "w_write").shape, (Shape{13, n}));
  EXPECT_EQ(readNpy(t / "run/extras/w_read.npy", "w_read").shape, (Shape{13, n}));
  EXPECT_EQ(readNpy(t / "run/extras/write_stages.npy", "write_stages").shape, (Shape{4, n}));
  EXPECT_EQ(readNpy(t / "run/extras/read_stages.npy", "read_stages").shape, (Shape{4, n}));
  EXPECT_EQ(readNpy(t / "run/extras/memory.npy", "memory").shape[0], n);
  const int64_t width = readNpy(t / "run/extras/memory.npy", "memory").shape[1];
  EXPECT_EQ(readNpy(t / "run/extras/erase.npy", "erase").shape, (Shape{width}));
  EXPECT_EQ(readNpy(t / "run/extras/add.npy", "add").shape, (Shape{width}));
  const Array seq = readNpy(t / "run/inputs/sequence.npy", "sequence");
  EXPECT_EQ(seq.shape[0], 6);
  EXPECT_EQ(readNpy(t / "run/inputs/x.npy", "x").shape, (Shape{13, seq.shape[1] + 1}));
  EXPECT_NE(slurp(t / "run/meta.json").find("\"step\""), std::string::npos);

  // The shipped file given as weights= is the embedded model.
  const RunResult again =
      runAttnlab({"compute", "ntm-copy", "--length", "6", "--seed", "3", "--set", "step=9", "--set",
                  "weights=" + (sourceDir() / "assets/trained/ntm-copy.safetensors").string(), "--out", (t / "again").string()});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(readNpy(t / "again/weights.npy", "weights").data, w.data);

  // inputs/sequence.npy replays the run, whatever --length and --seed say.
  const RunResult replay = runAttnlab({"compute", "ntm-copy", "--length", "2", "--seed", "4", "--set", "step=9", "--set",
                                       "sequence=" + (t / "run/inputs/sequence.npy").string(), "--out",
                                       (t / "replay").string()});
  ASSERT_EQ(replay.status, 0) << replay.err;
  EXPECT_EQ(readNpy(t / "replay/weights.npy", "weights").data, w.data);
  EXPECT_EQ(readNpy(t / "replay/output.npy", "output").data, readNpy(t / "run/output.npy", "output").data);
}

TEST(CliNtmCopy, RendersExtrasAndHeatmap) {
  TempDir t;
  for (const std::string view : {"extras", "heatmap"})
    for (const char* ext : {".png", ".pdf"}) {
      const std::string out = (t / (view + ext)).string();
      const RunResult r = runAttnlab({"render", "ntm-copy", "--view", view, "--out", out});
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_GT(std::filesystem::file_size(out), 1000u) << out;
    }
  int words = 0;
  const std::vector<std::string> problems = pdfTextProblems((t / "extras.pdf").string(), words);
  EXPECT_GT(words, 20);
  for (const std::string& p : problems) ADD_FAILURE() << p;
}

TEST(CliNtmCopy, RefusesBadWeightsLengthAndStepInOneLine) {
  TempDir t;
  const std::string out = (t / "out").string();
  {
    std::ofstream f(t / "junk.safetensors", std::ios::binary);
    f << "not a safetensors file at all";
  }
  struct Case {
    std::vector<std::string> set;  // --set KEY=VALUE and --length
    std::string needle;
  };
  const Case cases[] = {
      {{"--set", "weights=" + (t / "junk.safetensors").string()}, "junk.safetensors"},
      {{"--set", "weights=" + (t / "absent.safetensors").string()}, "absent.safetensors"},
      {{"--length", "500"}, "--length 500 is longer than the sequences the model was trained on"},
      {{"--length", "3", "--set", "step=7"}, "step 7 is past the end"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"compute", "ntm-copy", "--out", out};
    args.insert(args.end(), c.set.begin(), c.set.end());
    const RunResult r = runAttnlab(args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(countLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.needle << " in " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << "no partial output";
  }
}

}  // namespace
}  // namespace attn::test
