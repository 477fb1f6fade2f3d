// CLI: ntm, pointer, pointer-sort and snail computed and rendered by the real
// binary; bad shift lists, bad memory, key, enc and dec files, bad numbers and
// weights files for pointer-sort and malformed SNAIL block lists are one-line
// usage errors that leave no output behind.
#include "engine/npy.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace attn::test {
namespace {

using Shape = std::vector<int64_t>;

TEST(CliMemory, NtmWritesStagesAndInputsWithTheirShapes) {
  TempDir t;
  const RunResult r = runAttnlab({"compute", "ntm", "--seed", "3", "--length", "11", "--dim", "8", "--set",
                                  "shift=0.1,0.1,0.6,0.1,0.1", "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* e : {"w_c", "w_g", "w_tilde", "w"})
    EXPECT_EQ(readNpy(t / "run/extras" / (std::string(e) + ".npy"), e).shape, Shape{11}) << e;
  EXPECT_EQ(readNpy(t / "run/inputs/memory.npy", "memory").shape, (Shape{11, 8}));
  EXPECT_EQ(readNpy(t / "run/inputs/key.npy", "key").shape, Shape{8});
  EXPECT_EQ(readNpy(t / "run/inputs/w_prev.npy", "w_prev").shape, Shape{11});
  const Array w = readNpy(t / "run/weights.npy", "weights");
  EXPECT_EQ(w.shape, (Shape{1, 1, 11}));
  EXPECT_EQ(w.data, readNpy(t / "run/extras/w.npy", "w").data);

  // The written inputs replay the run.
  const RunResult again = runAttnlab({"compute", "ntm", "--set", "shift=0.1,0.1,0.6,0.1,0.1", "--set",
                                      "memory=" + (t / "run/inputs/memory.npy").string(), "--set",
                                      "key=" + (t / "run/inputs/key.npy").string(), "--set",
                                      "w_prev=" + (t / "run/inputs/w_prev.npy").string(), "--out",
                                      (t / "again").string()});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(readNpy(t / "again/weights.npy", "weights").data, w.data);
}

TEST(CliMemory, PointerWritesScoresWeightsAndProjections) {
  TempDir t;
  const RunResult r = runAttnlab({"compute", "pointer", "--length", "9", "--source-length", "4", "--dim", "8", "--set",
                                  "d_a=5", "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readNpy(t / "run/scores.npy", "scores").shape, (Shape{1, 9, 4}));
  EXPECT_EQ(readNpy(t / "run/weights.npy", "weights").shape, (Shape{1, 9, 4}));
  EXPECT_EQ(readNpy(t / "run/inputs/w_1.npy", "w_1").shape, (Shape{5, 8}));
  EXPECT_EQ(readNpy(t / "run/inputs/w_2.npy", "w_2").shape, (Shape{5, 8}));
  EXPECT_EQ(readNpy(t / "run/inputs/v.npy", "v").shape, Shape{5});

  // Given encoder and decoder states decide n, m and the widths.
  writeNpy(t / "enc.npy", Array{{3, 2}, {1, 0, 0, 1, 1, 1}});
  writeNpy(t / "dec.npy", Array{{2, 3}, {1, 2, 3, 0, 0, 1}});
  const RunResult f = runAttnlab({"compute", "pointer", "--set", "enc=" + (t / "enc.npy").string(), "--set",
                                  "dec=" + (t / "dec.npy").string(), "--out", (t / "files").string()});
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(readNpy(t / "files/weights.npy", "weights").shape, (Shape{1, 2, 3}));
  EXPECT_EQ(readNpy(t / "files/inputs/w_2.npy", "w_2").shape, (Shape{32, 3}));
}

void expectUsageError(const std::vector<std::string>& args, const std::string& needle, const TempDir& t) {
  const RunResult r = runAttnlab(args);
  EXPECT_EQ(r.status, 2) << needle << ": " << r.err;
  EXPECT_EQ(countLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(t / "out")) << needle;
}

TEST(CliMemory, SnailWritesAttentionReceptiveFieldsAndEveryBlocksWeights) {
  TempDir t;
  // T = 8: the TC block has ⌈log2 8⌉ = 3 dense blocks (dilations 1, 2, 4).
  const RunResult r = runAttnlab({"compute", "snail", "--seed", "2", "--length", "8", "--dim", "8", "--set",
                                  "blocks=attn(5,4),tc(3),dense(2,2),attn(7,3)", "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const Array w = readNpy(t / "run/weights.npy", "weights");
  EXPECT_EQ(w.shape, (Shape{2, 8, 8}));
  EXPECT_EQ(readNpy(t / "run/scores.npy", "scores").shape, (Shape{2, 8, 8}));
  EXPECT_EQ(readNpy(t / "run/extras/attention.npy", "attention").data, w.data);
  const Array field = readNpy(t / "run/extras/receptive_field.npy", "receptive_field");
  EXPECT_EQ(field.shape, (Shape{2, 8, 8}));
  // Before attention block 3: dilations 1, 2, 4 and 2 reach every earlier position; block 0 sees only itself.
  EXPECT_EQ(field.data[7], 0.0f);             // block 0, (0, 7)
  EXPECT_EQ(field.data[1 * 8 + 0], 0.0f);     // block 0, (1, 0)
  EXPECT_EQ(field.data[64 + 7 * 8 + 0], 1.0f);  // block 3, (7, 0): 7 back
  EXPECT_EQ(readNpy(t / "run/output.npy", "output").shape, (Shape{8, 8 + 4 + 3 * 3 + 2 + 3}));
  EXPECT_EQ(readNpy(t / "run/inputs/x.npy", "x").shape, (Shape{8, 8}));
  EXPECT_EQ(readNpy(t / "run/inputs/block0_w_q.npy", "w_q").shape, (Shape{8, 5}));
  EXPECT_EQ(readNpy(t / "run/inputs/block0_w_k.npy", "w_k").shape, (Shape{8, 5}));
  EXPECT_EQ(readNpy(t / "run/inputs/block0_w_v.npy", "w_v").shape, (Shape{8, 4}));
  for (int i = 0; i < 3; ++i) {
    const std::string b = "run/inputs/block1_dense" + std::to_string(i) + "_";
    const int64_t c = 12 + 3 * i;  // x, attention, earlier dense blocks
    EXPECT_EQ(readNpy(t / (b + "w_f.npy"), "w_f").shape, (Shape{2 * c, 3})) << i;
    EXPECT_EQ(readNpy(t / (b + "w_g.npy"), "w_g").shape, (Shape{2 * c, 3})) << i;
    EXPECT_EQ(readNpy(t / (b + "b_f.npy"), "b_f").shape, Shape{3}) << i;
    EXPECT_EQ(readNpy(t / (b + "b_g.npy"), "b_g").shape, Shape{3}) << i;
  }
  EXPECT_EQ(readNpy(t / "run/inputs/block2_w_f.npy", "w_f").shape, (Shape{42, 2}));
  EXPECT_EQ(readNpy(t / "run/inputs/block2_b_g.npy", "b_g").shape, Shape{2});
  EXPECT_EQ(readNpy(t / "run/inputs/block3_w_v.npy", "w_v").shape, (Shape{23, 3}));

  // The written x replays the run.
  const RunResult again = runAttnlab({"compute", "snail", "--seed", "2", "--x", (t / "run/inputs/x.npy").string(),
                                      "--set", "blocks=attn(5,4),tc(3),dense(2,2),attn(7,3)", "--out",
                                      (t / "again").string()});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(readNpy(t / "again/weights.npy", "weights").data, w.data);
}

TEST(CliMemory, BadShiftListsExitTwoWithOneLine) {
  TempDir t;
  const std::string out = (t / "out").string();
  expectUsageError({"compute", "ntm", "--set", "shift=0.5,0.5", "--out", out}, "odd number", t);
  expectUsageError({"compute", "ntm", "--set", "shift=0.5,-0.5,1", "--out", out}, "shift", t);
  expectUsageError({"compute", "ntm", "--set", "shift=0.2,0.2,0.2", "--out", out}, "sum to 1", t);
}

TEST(CliMemory, BadFilesExitTwoNamingTheFileAndTheShape) {
  TempDir t;
  const std::string out = (t / "out").string();
  const std::string cube = (t / "cube.npy").string(), row = (t / "row.npy").string();
  writeNpy(cube, Array{{1, 2, 2}, {1, 2, 3, 4}});
  writeNpy(row, Array{{3}, {1, 2, 3}});
  expectUsageError({"compute", "ntm", "--set", "memory=" + cube, "--out", out}, cube + " (memory): expected a non-empty 2-D array [N, W]", t);
  // --dim 4 gives W = 4; a key of 3 entries does not fit.
  expectUsageError({"compute", "ntm", "--dim", "4", "--set", "key=" + row, "--out", out}, row + " (key): expected shape [W] = [4]", t);
  expectUsageError({"compute", "ntm", "--length", "5", "--set", "w_prev=" + row, "--out", out}, row + " (w_prev): expected shape [N] = [5]", t);
  expectUsageError({"compute", "pointer", "--set", "enc=" + row, "--out", out}, row + " (enc): expected a non-empty 2-D array [n, d_e]", t);
  expectUsageError({"compute", "pointer", "--set", "dec=" + cube, "--out", out}, cube + " (dec): expected a non-empty 2-D array [m, d_d]", t);
  expectUsageError({"compute", "pointer", "--set", "dec=" + (t / "missing.npy").string(), "--out", out}, "missing.npy", t);
}

// Head `head` of `variant ARGS` drawn as a heatmap SVG, read back cell by
// cell against the colormap entries of the weights `compute` writes for the
// same arguments, over the range all heads share.
void expectMemoryHeatmapShowsTheWeights(const std::vector<std::string>& variant_args, int head, const TempDir& t) {
  const std::string name = variant_args.at(0) + "_head" + std::to_string(head);
  std::vector<std::string> compute = {"compute"}, render = {"render"};
  compute.insert(compute.end(), variant_args.begin(), variant_args.end());
  render.insert(render.end(), variant_args.begin(), variant_args.end());
  compute.insert(compute.end(), {"--out", (t / name).string()});
  render.insert(render.end(), {"--view", "heatmap", "--head", std::to_string(head), "--out", (t / (name + ".svg")).string()});
  const RunResult c = runAttnlab(compute), r = runAttnlab(render);
  ASSERT_EQ(c.status, 0) << name << ": " << c.err;
  ASSERT_EQ(r.status, 0) << name << ": " << r.err;
  const Array w = readNpy(t / name / "weights.npy", "weights");
  ASSERT_EQ(w.shape.size(), 3u) << name;
  const int64_t rows = w.shape[1], cols = w.shape[2], cells = rows * cols;
  const std::vector<SvgGrid> grids = svgCellGrids(slurp(t / (name + ".svg")), rows, cols);
  ASSERT_EQ(grids.size(), 1u) << name << ": one " << rows << " × " << cols << " grid of cells";
  const std::vector<float> shown(w.data.begin() + head * cells, w.data.begin() + (head + 1) * cells);
  const float hi = *std::max_element(w.data.begin(), w.data.end());
  for (const std::string& p : cellColourProblems(grids[0].rgb, shown, hi, colormapTable(Colormap::Viridis), cols))
    ADD_FAILURE() << name << " " << p;
}

TEST(CliMemory, RenderExtrasAndHeatmap) {
  TempDir t;
  for (const auto& [v, view] : {std::pair{"ntm", "extras"}, {"ntm", "heatmap"}, {"pointer", "heatmap"}}) {
    const std::string out = (t / (std::string(v) + "_" + view + ".svg")).string();
    const RunResult r = runAttnlab({"render", v, "--view", view, "--out", out});
    ASSERT_EQ(r.status, 0) << v << " " << view << ": " << r.err;
    EXPECT_GT(slurp(out).size(), 5000u) << v << " " << view;
  }
  EXPECT_NE(slurp(t / "pointer_heatmap.svg").find("decoder step"), std::string::npos);
  expectMemoryHeatmapShowsTheWeights({"ntm", "--seed", "3", "--length", "11", "--dim", "8"}, 0, t);
  expectMemoryHeatmapShowsTheWeights({"pointer", "--length", "9", "--source-length", "6", "--dim", "8"}, 0, t);
}

TEST(CliPointerSort, ComputeWritesThePointersTheOutputAndTheInputs) {
  TempDir t;
  const std::vector<float> numbers = {0.42f, 0.07f, 0.93f, 0.31f, 0.58f, 0.33f, 0.76f, 0.15f};
  const RunResult r = runAttnlab({"compute", "pointer-sort", "--set", "numbers=0.42,0.07,0.93,0.31,0.58,0.33,0.76,0.15",
                                  "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const Array w = readNpy(t / "run/weights.npy", "weights");
  EXPECT_EQ(w.shape, (Shape{1, 8, 8}));
  EXPECT_EQ(readNpy(t / "run/scores.npy", "scores").shape, (Shape{1, 8, 8}));
  for (const char* e : {"numbers", "pointed"})
    EXPECT_EQ(readNpy(t / "run/extras" / (std::string(e) + ".npy"), e).shape, Shape{8}) << e;
  EXPECT_EQ(readNpy(t / "run/extras/numbers.npy", "numbers").data, numbers);
  // extras/output.npy [2, n]: the numbers sorted, then the output x_{C_i}; here the same.
  std::vector<float> sorted = numbers;
  std::sort(sorted.begin(), sorted.end());
  std::vector<float> both = sorted;
  both.insert(both.end(), sorted.begin(), sorted.end());
  const Array output = readNpy(t / "run/extras/output.npy", "output");
  EXPECT_EQ(output.shape, (Shape{2, 8}));
  EXPECT_EQ(output.data, both);
  std::vector<int64_t> shape;
  EXPECT_EQ(readTyped<int32_t>(t / "run/extras/correct.npy", "<i4", shape), std::vector<int32_t>{1});
  EXPECT_EQ(readTyped<int32_t>(t / "run/extras/steps_correct.npy", "<i4", shape), std::vector<int32_t>{8});
  EXPECT_EQ(readNpy(t / "run/inputs/numbers.npy", "numbers").data, numbers);
  const Array enc = readNpy(t / "run/inputs/enc.npy", "enc");
  ASSERT_EQ(enc.shape.size(), 2u);
  EXPECT_EQ(enc.shape[0], 8);
  EXPECT_EQ(readNpy(t / "run/inputs/dec.npy", "dec").shape, enc.shape);
  EXPECT_EQ(readNpy(t / "run/inputs/w_1.npy", "w_1").shape[1], enc.shape[1]);
  EXPECT_NE(slurp(t / "run/meta.json").find("pointer-sort"), std::string::npos);

  // Without numbers: --length of them, drawn from --seed, the same each time.
  for (const char* dir : {"a", "b"}) {
    const RunResult s = runAttnlab({"compute", "pointer-sort", "--length", "11", "--seed", "5", "--out", (t / dir).string()});
    ASSERT_EQ(s.status, 0) << s.err;
  }
  const Array a = readNpy(t / "a/extras/numbers.npy", "numbers");
  EXPECT_EQ(a.shape, Shape{11});
  EXPECT_EQ(a.data, readNpy(t / "b/extras/numbers.npy", "numbers").data);
  EXPECT_EQ(readNpy(t / "a/weights.npy", "weights").shape, (Shape{1, 11, 11}));
}

TEST(CliPointerSort, BadNumbersAndWeightsExitTwoWithOneLine) {
  TempDir t;
  const std::string out = (t / "out").string();
  expectUsageError({"compute", "pointer-sort", "--length", "13", "--out", out}, "sorts 5 to 12 numbers, got 13 (--length)", t);
  expectUsageError({"compute", "pointer-sort", "--set", "numbers=0.1,0.2", "--out", out}, "got 2 (parameter 'numbers')", t);
  expectUsageError({"compute", "pointer-sort", "--set", "numbers=0.1,0.2,1.2,0.3,0.4", "--out", out}, "must be in 0..1", t);
  const std::string missing = (t / "missing.safetensors").string();
  expectUsageError({"compute", "pointer-sort", "--set", "weights=" + missing, "--out", out}, missing, t);
  writeNpy(t / "not_a_model.npy", Array{{2}, {1, 2}});
  expectUsageError({"compute", "pointer-sort", "--set", "weights=" + (t / "not_a_model.npy").string(), "--out", out},
                   "not_a_model.npy", t);
}

TEST(CliPointerSort, RendersHeatmapAndExtras) {
  TempDir t;
  for (const auto& [view, ext] : {std::pair{"heatmap", ".svg"}, {"extras", ".svg"}, {"heatmap", ".png"}}) {
    const std::string out = (t / (std::string(view) + ext)).string();
    const RunResult r = runAttnlab({"render", "pointer-sort", "--view", view, "--out", out});
    ASSERT_EQ(r.status, 0) << view << ext << ": " << r.err;
    EXPECT_GT(slurp(out).size(), 5000u) << view << ext;
  }
  const std::string svg = slurp(t / "heatmap.svg");
  EXPECT_NE(svg.find("output step: number chosen"), std::string::npos);
  EXPECT_NE(svg.find("input number"), std::string::npos);
  EXPECT_NE(slurp(t / "extras.svg").find("the numbers sorted"), std::string::npos);
  expectMemoryHeatmapShowsTheWeights({"pointer-sort", "--set", "numbers=0.42,0.07,0.93,0.31,0.58,0.33,0.76,0.15"}, 0, t);
}

TEST(CliMemory, SnailMalformedBlockListsExitTwoNamingTheField) {
  TempDir t;
  const std::string out = (t / "out").string();
  expectUsageError({"compute", "snail", "--set", "blocks=attn(8,8),lstm(4)", "--out", out},
                   "parameter 'blocks': block 1 'lstm(4)': unknown block 'lstm', expected attn(K, V), tc(D) or dense(R, D)", t);
  expectUsageError({"compute", "snail", "--set", "blocks=attn(8)", "--out", out}, "expected attn(K, V)", t);
  expectUsageError({"compute", "snail", "--set", "blocks=attn(8,8", "--out", out}, "unclosed '('", t);
  expectUsageError({"compute", "snail", "--set", "blocks=tc(8)", "--out", out}, "no attn(K, V) block", t);
  expectUsageError({"compute", "snail", "--set", "dilation_exp0=9", "--out", out}, "'dilation_exp0'", t);
  // It projects its own queries, keys and values.
  const std::string x = (t / "x.npy").string();
  writeNpy(x, Array{{4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}});
  expectUsageError({"compute", "snail", "--q", x, "--k", x, "--v", x, "--out", out}, "snail", t);
}

TEST(CliMemory, SnailRendersItsViews) {
  TempDir t;
  for (const char* view : {"walkthrough", "extras", "heads", "heatmap"}) {
    const std::string out = (t / (std::string(view) + ".svg")).string();
    const RunResult r = runAttnlab({"render", "snail", "--view", view, "--out", out});
    ASSERT_EQ(r.status, 0) << view << ": " << r.err;
    EXPECT_GT(slurp(out).size(), 5000u) << view;
  }
  EXPECT_NE(slurp(t / "extras.svg").find("receptive field"), std::string::npos);
  // One map per attention block (three in the default blocks): the last one's.
  expectMemoryHeatmapShowsTheWeights({"snail", "--seed", "2", "--length", "8", "--dim", "8"}, 2, t);
}

}  // namespace
}  // namespace attn::test
