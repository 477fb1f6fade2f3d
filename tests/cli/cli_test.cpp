// CLI tests: the real attnlab binary, as a user runs it.
#include "engine/npy.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <QImage>
#include <QSvgRenderer>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace attn::test {
namespace {

// [SECTION] list
// The README's first screen: what AttnLab is, its two pictures (present, and
// readable PNGs) and the two commands, within the first 60 lines.
TEST(Readme, FrontDoorHoldsThePicturesAndBothCommands) {
  std::istringstream readme(slurp(sourceDir() / "README.md"));
  std::string line, head;
  for (int i = 0; i < 60 && std::getline(readme, line); ++i) head += line + "\n";
  EXPECT_EQ(head.rfind("# AttnLab\n\nAttnLab makes attention mechanisms visible.", 0), 0u) << head;
  for (const char* s : {"scripts/run.sh\n", "scripts/test.sh\n", "](assets/readme/gui.png)", "](assets/readme/figure.png)"})
    EXPECT_NE(head.find(s), std::string::npos) << s << " is not in the README's first 60 lines";
  for (const char* png : {"assets/readme/gui.png", "assets/readme/figure.png"}) {
    const QImage img(QString::fromStdString((sourceDir() / png).string()));
    EXPECT_GE(img.width(), 960) << png;
    EXPECT_GE(img.height(), 540) << png;
  }
}

TEST(CliList, TextNamesEveryFamilyAndVariant) {
  const RunResult r = runAttnlab({"list"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* name : {"scaled-dot-product", "multi-head", "cross-attention", "additive", "general", "dot",
                           "scaled-dot", "cosine", "location", "local-p", "hard", "sinusoidal-pe", "learned-pe"})
    EXPECT_NE(r.out.find(std::string("  ") + name + " "), std::string::npos) << name;
  EXPECT_NE(r.out.find("--set causal=false"), std::string::npos);
}

TEST(CliList, JsonMatchesRegistryShape) {
  const RunResult r = runAttnlab({"list", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_GE(j.size(), 14u);
  bool saw_beta = false;
  // Each variant's input kind as it reads it.
  const std::map<std::string, std::string> kinds = {{"multi-head", "self"},    {"pointer", "cross"},
                                                    {"sinusoidal-pe", "positions"}, {"sagan", "image"},
                                                    {"ntm", "memory"},         {"ntm-copy", "sequence"},
                                                    {"pointer-sort", "sequence"}};
  size_t kinds_seen = 0;
  for (const auto& v : j) {
    EXPECT_TRUE(v.contains("name") && v.contains("family") && v.contains("params") && v.contains("views"));
    if (const auto k = kinds.find(v["name"].get<std::string>()); k != kinds.end()) {
      EXPECT_EQ(v["input"], k->second) << k->first;
      ++kinds_seen;
    }
    for (const auto& p : v["params"]) {
      EXPECT_TRUE(p.contains("key") && p.contains("type") && p.contains("default") && p.contains("help"));
      saw_beta = saw_beta || (v["name"] == "cosine" && p["key"] == "beta");
    }
  }
  EXPECT_TRUE(saw_beta) << "cosine must expose the sharpening β";
  EXPECT_EQ(kinds_seen, kinds.size());
}

// [SECTION] compute
TEST(CliCompute, MultiHeadWritesReadableTensorsAndMeta) {
  TempDir t;
  const RunResult r = runAttnlab({"compute", "multi-head", "--seed", "3", "--length", "10", "--dim", "32", "--heads",
                                  "4", "--set", "causal=true", "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const Array w = readNpy(t / "run/weights.npy", "weights");
  ASSERT_EQ(w.shape, (std::vector<int64_t>{4, 10, 10}));
  for (int h = 0; h < 4; ++h)
    for (int i = 0; i < 10; ++i) {
      double sum = 0;
      for (int j = 0; j < 10; ++j) {
        const float v = w.data[static_cast<size_t>((h * 10 + i) * 10 + j)];
        if (j > i) {
          EXPECT_EQ(v, 0.0f) << "causal upper triangle";
        }
        sum += v;
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
  EXPECT_EQ(readNpy(t / "run/scores.npy", "scores").shape, (std::vector<int64_t>{4, 10, 10}));
  EXPECT_EQ(readNpy(t / "run/output.npy", "output").shape, (std::vector<int64_t>{10, 32}));
  for (const char* in : {"x", "w_q", "w_k", "w_v", "w_o"})
    EXPECT_TRUE(std::filesystem::exists(t / "run/inputs" / (std::string(in) + ".npy"))) << in;
  const nlohmann::json meta = nlohmann::json::parse(slurp(t / "run/meta.json"));
  EXPECT_EQ(meta["variant"], "multi-head");
  EXPECT_EQ(meta["params"]["causal"], true);
  EXPECT_GT(meta["flops"].get<double>(), 0.0);
  EXPECT_GE(meta["compute_seconds"].get<double>(), 0.0);
  EXPECT_EQ(meta["shapes"]["weights"], (std::vector<int64_t>{4, 10, 10}));
  // Exactly the contract's files, and no staging leftovers beside the folder.
  EXPECT_EQ(listFiles(t.path),
            (std::vector<std::string>{"run/inputs/w_k.npy", "run/inputs/w_o.npy", "run/inputs/w_q.npy",
                                      "run/inputs/w_v.npy", "run/inputs/x.npy", "run/mask.npy", "run/meta.json",
                                      "run/output.npy", "run/scores.npy", "run/weights.npy"}));
}

TEST(CliCompute, RerunReplacesTheWholeFolder) {
  TempDir t;
  ASSERT_EQ(runAttnlab({"compute", "local-p", "--out", (t / "r").string()}).status, 0);
  ASSERT_TRUE(std::filesystem::exists(t / "r/extras/p_t.npy"));
  // A trailing slash names the same folder; the earlier run's files go.
  const RunResult r = runAttnlab({"compute", "dot", "--no-weights", "--out", (t / "r").string() + "/"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(t / "r/weights.npy")) << "stale weights from the earlier run";
  EXPECT_FALSE(std::filesystem::exists(t / "r/extras")) << "stale extras from the earlier run";
  EXPECT_TRUE(std::filesystem::exists(t / "r/scores.npy"));
  for (const auto& e : std::filesystem::directory_iterator(t.path))
    EXPECT_EQ(e.path().filename(), "r") << "leftover " << e.path();
}

TEST(CliCompute, ReplayFromWrittenInputsGivesSameWeights) {
  TempDir t;
  ASSERT_EQ(runAttnlab({"compute", "multi-head", "--seed", "5", "--length", "9", "--out", (t / "a").string()}).status, 0);
  const RunResult r = runAttnlab({"compute", "multi-head", "--seed", "5", "--x", (t / "a/inputs/x.npy").string(),
                                  "--out", (t / "b").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readNpy(t / "a/weights.npy", "a").data, readNpy(t / "b/weights.npy", "b").data);
}

TEST(CliCompute, NoWeightsSkipsWeightsFile) {
  TempDir t;
  ASSERT_EQ(runAttnlab({"compute", "dot", "--no-weights", "--out", (t / "r").string()}).status, 0);
  EXPECT_FALSE(std::filesystem::exists(t / "r/weights.npy"));
  EXPECT_TRUE(std::filesystem::exists(t / "r/scores.npy"));
  EXPECT_TRUE(std::filesystem::exists(t / "r/meta.json"));
}

// Output only: multi-head streams the keys and never forms an [L, L]
// matrix, so at L = 8192 the process stays far below one dense head
// (256 MiB), and no scores, weights or mask are written.
TEST(CliCompute, NoWeightsMultiHeadNeverHoldsLTimesL) {
  TempDir t;
  const RunResult r = runAttnlab({"compute", "multi-head", "--length", "8192", "--dim", "32", "--heads", "1",
                                  "--no-weights", "--out", (t / "r").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(streamed, not kept)"), std::string::npos) << r.out;
  for (const char* f : {"weights.npy", "scores.npy", "mask.npy"})
    EXPECT_FALSE(std::filesystem::exists(t / "r" / f)) << f;
  EXPECT_EQ(readNpy(t / "r/output.npy", "output").shape, (std::vector<int64_t>{8192, 32}));
  const nlohmann::json meta = nlohmann::json::parse(slurp(t / "r/meta.json"));
  EXPECT_EQ(meta["shapes"]["weights"], nlohmann::json({1, 8192, 8192}));
  EXPECT_GT(meta["page_faults"].get<int64_t>(), 0);
  const double peak = meta["peak_rss_bytes"].get<double>();
  EXPECT_GT(peak, 0.0);
  EXPECT_LT(peak, 128.0 * (1 << 20)) << "peak RSS " << peak / (1 << 20) << " MiB";
}

TEST(CliCompute, ScaledDotProductOnGivenQkvFiles) {
  TempDir t;
  // q = [[1,0],[0,1]], k = [[1,0],[0,1],[1,1]], v = 3×1; hand-computed softmax.
  writeNpy(t / "q.npy", Array{{2, 2}, {1, 0, 0, 1}});
  writeNpy(t / "k.npy", Array{{3, 2}, {1, 0, 0, 1, 1, 1}});
  writeNpy(t / "v.npy", Array{{3, 1}, {1, 2, 3}});
  const RunResult r = runAttnlab({"compute", "scaled-dot-product", "--q", (t / "q.npy").string(), "--k",
                                  (t / "k.npy").string(), "--v", (t / "v.npy").string(), "--out", (t / "r").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const Array w = readNpy(t / "r/weights.npy", "w");
  ASSERT_EQ(w.shape, (std::vector<int64_t>{1, 2, 3}));
  const double s = 1.0 / std::sqrt(2.0);  // scores row 0: [1, 0, 1]/√2
  const double z = 2 * std::exp(s) + 1;
  EXPECT_NEAR(w.data[0], std::exp(s) / z, 1e-6);
  EXPECT_NEAR(w.data[1], 1 / z, 1e-6);
  const Array out = readNpy(t / "r/output.npy", "out");
  EXPECT_NEAR(out.data[0], (std::exp(s) * 1 + 2 + std::exp(s) * 3) / z, 1e-5);
  EXPECT_TRUE(std::filesystem::exists(t / "r/inputs/q.npy"));
}

// [SECTION] render
// The focused head's weights, read back cell by cell: from the SVG's rects
// and from the PNG's pixels at the same cells' centres (both figures are
// laid out on the same --size), against the colormap entries of the weights
// `compute` writes for the same input, over the range shared by all heads.
TEST(CliRender, PngAndSvgShowTheFocusedHeadsWeights) {
  TempDir t;
  const std::vector<std::string> input = {"multi-head", "--seed", "4", "--length", "6", "--heads", "4"};
  std::vector<std::string> compute = {"compute"};
  compute.insert(compute.end(), input.begin(), input.end());
  compute.insert(compute.end(), {"--out", (t / "run").string()});
  ASSERT_EQ(runAttnlab(compute).status, 0);
  const Array w = readNpy(t / "run/weights.npy", "weights");
  ASSERT_EQ(w.shape, (std::vector<int64_t>{4, 6, 6}));
  const float hi = *std::max_element(w.data.begin(), w.data.end());
  const std::vector<float> head2(w.data.begin() + 2 * 36, w.data.begin() + 3 * 36);
  for (const char* ext : {".svg", ".png"}) {
    std::vector<std::string> render = {"render"};
    render.insert(render.end(), input.begin(), input.end());
    render.insert(render.end(), {"--view", "heatmap", "--head", "2", "--size", "640x480", "--out", (t / (std::string("f") + ext)).string()});
    const RunResult r = runAttnlab(render, {"DISPLAY=", "WAYLAND_DISPLAY="});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  const std::vector<SvgGrid> grids = svgCellGrids(slurp(t / "f.svg"), 6, 6);
  ASSERT_EQ(grids.size(), 1u) << "one 6 × 6 grid of cells";
  for (const std::string& p : cellColourProblems(grids[0].rgb, head2, hi, colormapTable(Colormap::Viridis), 6))
    ADD_FAILURE() << "SVG " << p;

  QImage img(QString::fromStdString((t / "f.png").string()));
  ASSERT_FALSE(img.isNull());
  EXPECT_EQ(img.width(), 640);
  EXPECT_EQ(img.height(), 480);
  std::vector<uint32_t> pixels;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j)
      pixels.push_back(img.pixel(static_cast<int>(grids[0].x + (j + 0.5) * grids[0].cell_w),
                                 static_cast<int>(grids[0].y + (i + 0.5) * grids[0].cell_h)) & 0xffffff);
  for (const std::string& p : cellColourProblems(pixels, head2, hi, colormapTable(Colormap::Viridis), 6))
    ADD_FAILURE() << "PNG " << p;
}

TEST(CliRender, SvgParsesAndHasOneRectPerCell) {
  TempDir t;
  const int L = 7;
  const RunResult r = runAttnlab({"render", "scaled-dot-product", "--length", std::to_string(L), "--out",
                                  (t / "f.svg").string()},
                                 {"DISPLAY="});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = slurp(t / "f.svg");
  QSvgRenderer renderer(QByteArray::fromStdString(svg));
  EXPECT_TRUE(renderer.isValid());
  // Cells are the rects with the cell size; count the most common size.
  std::map<std::string, int> sizes;
  const std::regex rect(R"(<rect[^>]*width=\"([0-9.]+)\"[^>]*height=\"([0-9.]+)\")");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it)
    ++sizes[(*it)[1].str() + "x" + (*it)[2].str()];
  int most = 0;
  for (const auto& [k, n] : sizes) most = std::max(most, n);
  EXPECT_EQ(most, L * L) << "one rect per attention cell";
  EXPECT_NE(svg.find("<text"), std::string::npos) << "labels are text, not paths";
  EXPECT_NE(svg.find(">t3<"), std::string::npos) << "token labels present";
}

TEST(CliRender, PdfHasHeaderAndOnePage) {
  TempDir t;
  const RunResult r = runAttnlab({"render", "additive", "--view", "family", "--out", (t / "f.pdf").string()}, {"DISPLAY="});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string pdf = slurp(t / "f.pdf");
  EXPECT_EQ(pdf.rfind("%PDF-", 0), 0u);
  const std::regex page(R"(/Type\s*/Page[^s])");
  EXPECT_EQ(std::distance(std::sregex_iterator(pdf.begin(), pdf.end(), page), std::sregex_iterator()), 1);
}

TEST(CliRender, EveryViewRendersForItsVariants) {
  TempDir t;
  const nlohmann::json list = nlohmann::json::parse(runAttnlab({"list", "--json"}).out);
  int rendered = 0;
  for (const auto& v : list)
    for (const auto& view : v["views"]) {
      const std::string out = (t / (v["name"].get<std::string>() + "-" + view.get<std::string>() + ".png")).string();
      std::vector<std::string> args = {"render", v["name"], "--view", view, "--size", "400x300", "--out", out};
      if (v["name"] == "learned-pe") {
        writeNpy(t / "pe.npy", Array{{6, 4}, std::vector<float>(24, 0.5f)});
        args.insert(args.end(), {"--set", "pe=" + (t / "pe.npy").string()});
      }
      const RunResult r = runAttnlab(args, {"DISPLAY="});
      EXPECT_EQ(r.status, 0) << v["name"] << " " << view << ": " << r.err;
      const QImage img(QString::fromStdString(out));
      std::set<QRgb> colours;
      for (int y = 0; y < img.height(); y += 2)
        for (int x = 0; x < img.width(); x += 2) colours.insert(img.pixel(x, y));
      EXPECT_GT(colours.size(), 20u) << v["name"] << " " << view << " looks blank";
      rendered += r.status == 0;
    }
  EXPECT_GE(rendered, 20);
}

// [SECTION] bad input: exit 2, one line naming the problem, no partial files
struct BadCase {
  std::string name;
  std::vector<std::string> args;  // "{dir}" is replaced by the temp folder
  std::string expect;             // substring of the one stderr line
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class CliBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(CliBadInput, ExitsTwoWithOneClearLineAndNoFiles) {
  TempDir t;
  // Fixture files: truncated, wrong dtype, Fortran order, and shapes that disagree.
  const std::string good = encodeNpy(Array{{4, 8}, std::vector<float>(32, 0.25f)});
  writeFileAtomic(t / "truncated.npy", good.substr(0, good.size() - 10));
  std::string i4 = good;
  i4.replace(i4.find("<f4"), 3, "<i4");
  writeFileAtomic(t / "int32.npy", i4);
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  writeFileAtomic(t / "fortran.npy", fortran);
  writeFileAtomic(t / "garbage.npy", "this is not numpy");
  writeNpy(t / "q8.npy", Array{{4, 8}, std::vector<float>(32, 0.1f)});
  writeNpy(t / "k6.npy", Array{{5, 6}, std::vector<float>(30, 0.1f)});
  writeNpy(t / "v5.npy", Array{{5, 6}, std::vector<float>(30, 0.1f)});
  writeNpy(t / "mask_bad.npy", Array{{3, 3}, std::vector<float>(9, 1.0f)});
  writeNpy(t / "k0.npy", Array{{0, 8}, {}});
  writeNpy(t / "q3.npy", Array{{2, 4, 4}, std::vector<float>(32, 0.1f)});  // [H, L, d_head]
  const auto before = listFiles(t.path);

  std::vector<std::string> args;
  for (std::string a : GetParam().args) {
    for (size_t at; (at = a.find("{dir}")) != std::string::npos;) a.replace(at, 5, t.path.string());
    args.push_back(a);
  }
  const RunResult r = runAttnlab(args, {"DISPLAY="});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(countLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(GetParam().expect), std::string::npos) << r.err;
  EXPECT_EQ(listFiles(t.path), before) << "no partial output";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliBadInput,
    ::testing::Values(
        BadCase{"truncated_npy", {"compute", "multi-head", "--x", "{dir}/truncated.npy", "--out", "{dir}/o"}, "truncated"},
        BadCase{"unsupported_dtype", {"compute", "multi-head", "--x", "{dir}/int32.npy", "--out", "{dir}/o"}, "'<i4'"},
        BadCase{"fortran_order", {"compute", "multi-head", "--x", "{dir}/fortran.npy", "--out", "{dir}/o"}, "Fortran"},
        BadCase{"not_npy", {"compute", "multi-head", "--x", "{dir}/garbage.npy", "--out", "{dir}/o"}, "garbage.npy (--x): not a .npy"},
        BadCase{"missing_file", {"compute", "multi-head", "--x", "{dir}/nope.npy", "--out", "{dir}/o"}, "nope.npy (--x): no such file"},
        BadCase{"dk_mismatch", {"compute", "scaled-dot-product", "--q", "{dir}/q8.npy", "--k", "{dir}/k6.npy", "--v", "{dir}/v5.npy", "--out", "{dir}/o"}, "d_k of q is 8 but d_k of k is 6"},
        BadCase{"qkv_to_a_sequence_variant", {"compute", "act", "--q", "{dir}/q8.npy", "--k", "{dir}/q8.npy", "--v", "{dir}/q8.npy", "--out", "{dir}/o"}, "--q/--k/--v: act reads an input sequence"},
        BadCase{"qkv_to_positions", {"render", "sinusoidal-pe", "--q", "{dir}/q8.npy", "--k", "{dir}/q8.npy", "--v", "{dir}/q8.npy", "--out", "{dir}/f.png"}, "--q/--k/--v: sinusoidal-pe encodes positions"},
        BadCase{"x_and_qkv", {"compute", "multi-head", "--x", "{dir}/q8.npy", "--q", "{dir}/q8.npy", "--k", "{dir}/q8.npy", "--v", "{dir}/q8.npy", "--out", "{dir}/o"}, "--x: give --x"},
        BadCase{"heads_mixed", {"compute", "sparse-strided", "--q", "{dir}/q3.npy", "--k", "{dir}/q8.npy", "--v", "{dir}/q8.npy", "--out", "{dir}/o"}, "q8.npy (--k): expected [H, L, d_head] with H = 2 like --q, got a 2-D array"},
        BadCase{"heads_to_one_head", {"compute", "scaled-dot-product", "--q", "{dir}/q3.npy", "--k", "{dir}/q3.npy", "--v", "{dir}/q3.npy", "--out", "{dir}/o"}, "--q/--k/--v: scaled-dot-product takes one head [L, d], the files hold 2 heads"},
        BadCase{"heads_not_dividing", {"compute", "multi-head", "--dim", "10", "--heads", "3", "--out", "{dir}/o"}, "h=3 does not divide d=10"},
        BadCase{"unknown_variant", {"compute", "flash", "--out", "{dir}/o"}, "unknown variant 'flash'"},
        BadCase{"unknown_param", {"compute", "multi-head", "--set", "temperature=2", "--out", "{dir}/o"}, "unknown parameter 'temperature'"},
        BadCase{"out_of_range", {"compute", "cosine", "--set", "beta=-1", "--out", "{dir}/o"}, "parameter 'beta'"},
        BadCase{"bad_bool", {"compute", "multi-head", "--set", "causal=maybe", "--out", "{dir}/o"}, "expected true or false"},
        BadCase{"mask_shape", {"compute", "scaled-dot-product", "--length", "4", "--set", "mask={dir}/mask_bad.npy", "--out", "{dir}/o"}, "expected shape [4, 4]"},
        BadCase{"too_large", {"compute", "multi-head", "--length", "300000", "--dim", "8", "--heads", "2", "--out", "{dir}/o"}, "more than the"},
        BadCase{"empty_keys", {"compute", "dot", "--q", "{dir}/q8.npy", "--k", "{dir}/k0.npy", "--v", "{dir}/k0.npy", "--out", "{dir}/o"}, "k0.npy (--k): expected a non-empty 2-D array"},
        BadCase{"huge_dim", {"compute", "multi-head", "--length", "2", "--dim", "200000", "--heads", "1", "--out", "{dir}/o"}, "needs [d, d] weight matrices"},
        BadCase{"view_not_listed", {"render", "sinusoidal-pe", "--view", "lines", "--out", "{dir}/f.png"}, "has no 'lines' view"},
        BadCase{"out_is_a_file", {"compute", "dot", "--out", "{dir}/q8.npy"}, "exists and is not a folder"},
        BadCase{"bad_view", {"render", "multi-head", "--view", "sideways", "--out", "{dir}/f.png"}, "unknown view 'sideways'"},
        BadCase{"bad_extension", {"render", "multi-head", "--out", "{dir}/f.gif"}, "expected a .png, .svg, .pdf or .html file name"},
        BadCase{"missing_out_folder", {"render", "multi-head", "--out", "{dir}/no/such/f.png"}, "could not write"},
        BadCase{"missing_describe_folder", {"render", "multi-head", "--out", "{dir}/f.png", "--describe", "{dir}/no/such/d.json"},
                "--describe: "},
        BadCase{"missing_screenshot_folder", {"gui", "--frames", "1", "--screenshot", "{dir}/no/such/s.png"}, "--screenshot: "},
        BadCase{"bad_size", {"render", "multi-head", "--size", "big", "--out", "{dir}/f.png"}, "--size"},
        BadCase{"usage", {"compute"}, "attnlab compute:"}),
    [](const ::testing::TestParamInfo<BadCase>& i) { return i.param.name; });

}  // namespace
}  // namespace attn::test
