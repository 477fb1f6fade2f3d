// CLI tests of the long-range figures: the real binary renders the image,
// heatmap, extras and compare views of the sparse, local, adaptive-span and
// Transformer-XL variants; PNG pixels and SVG elements are checked.
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <QImage>
#include <QSvgRenderer>

#include <regex>

namespace attn::test {
namespace {

// Colours the figure promises: sets 0 and 1 (headColor 0, 1) and the query mark.
constexpr QRgb kSetA = 0xff1f77b4, kSetB = 0xffff7f0e, kQuery = 0xffdc143c;

struct Counts {
  int64_t set_a = 0, set_b = 0, query_left = 0, query_right = 0;
};

Counts countColours(const QImage& img) {
  Counts c;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) {
      const QRgb p = img.pixel(x, y);
      c.set_a += p == kSetA;
      c.set_b += p == kSetB;
      (x < img.width() / 2 ? c.query_left : c.query_right) += p == kQuery;
    }
  return c;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

// Renders to `out`; the SVG (if any) must parse.
RunResult render(std::vector<std::string> args, const std::filesystem::path& out) {
  args.insert(args.begin(), "render");
  args.insert(args.end(), {"--out", out.string()});
  RunResult r = runAttnlab(args, {"DISPLAY="}, 300);
  if (r.status == 0 && out.extension() == ".svg") {
    EXPECT_TRUE(QSvgRenderer(QByteArray::fromStdString(slurp(out))).isValid()) << out;
  }
  return r;
}

// [SECTION] image view
TEST(CliImageView, StridedAt4096ShowsBothSetsAndTheQuery) {
  TempDir t;
  const RunResult r = render({"sparse-strided", "--length", "4096", "--dim", "64", "--heads", "1", "--set", "stride=64",
                              "--view", "image", "--size", "1200x700"},
                             t / "f.png");
  ASSERT_EQ(r.status, 0) << r.err;
  const QImage img(QString::fromStdString((t / "f.png").string()));
  ASSERT_EQ(img.size(), QSize(1200, 700));
  const Counts c = countColours(img);
  EXPECT_GT(c.set_a, 200) << "A¹ keys (local window) in the image and the connectivity matrix";
  EXPECT_GT(c.set_b, 200) << "A² keys (strided) in the image and the connectivity matrix";
  EXPECT_GT(c.query_left, 10) << "the query pixel marked on the image";
  EXPECT_GT(c.query_right, 3) << "the query's row marked on the connectivity matrix";
}

TEST(CliImageView, FixedAt16384DrawsWithoutLxL) {
  TempDir t;
  const RunResult r = render({"sparse-fixed", "--length", "16384", "--dim", "64", "--heads", "1", "--set", "block=128",
                              "--set", "c=8", "--view", "image", "--size", "1000x600"},
                             t / "f.png");
  ASSERT_EQ(r.status, 0) << r.err;
  const Counts c = countColours(QImage(QString::fromStdString((t / "f.png").string())));
  EXPECT_GT(c.set_a, 100);
  EXPECT_GT(c.set_b, 100);
  EXPECT_GT(c.query_left, 10);
}

TEST(CliImageView, SvgHasLegendImagesAndQuery) {
  TempDir t;
  const RunResult r = render({"sparse-strided", "--length", "1024", "--set", "stride=32", "--view", "image", "--query", "500"},
                             t / "f.svg");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = slurp(t / "f.svg");
  EXPECT_EQ(count(svg, "<image"), 2) << "the raster image and the connectivity matrix";
  EXPECT_NE(svg.find(">both<"), std::string::npos) << "legend entry for keys in both sets";
  EXPECT_NE(svg.find(">query 500<"), std::string::npos) << "legend entry for the chosen query";
  EXPECT_NE(svg.find("row 15, column 20"), std::string::npos) << "the query's pixel in the title";
}

TEST(CliImageView, LocalVariantsRenderTheirBlocks) {
  TempDir t;
  for (const char* v : {"local-1d", "local-2d"}) {
    const RunResult r = render({v, "--length", "1024", "--view", "image"}, t / (std::string(v) + ".svg"));
    ASSERT_EQ(r.status, 0) << v << ": " << r.err;
    const std::string svg = slurp(t / (std::string(v) + ".svg"));
    EXPECT_NE(svg.find(">the query's block<"), std::string::npos) << v << ": the query block is outlined and in the legend";
  }
}

// [SECTION] matrices of sparse results, bands, extras
TEST(CliSparseFigures, HeatmapAt16384IsOneEmbeddedImage) {
  TempDir t;
  const RunResult r = render({"sparse-strided", "--length", "16384", "--dim", "64", "--heads", "1", "--set", "stride=128",
                              "--view", "heatmap"},
                             t / "f.svg");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = slurp(t / "f.svg");
  EXPECT_EQ(count(svg, "<image"), 1);
  EXPECT_LT(count(svg, "<rect"), 100) << "no rect per cell at L = 16,384";
  EXPECT_LT(svg.size(), 8u << 20);
}

TEST(CliSparseFigures, TransformerXlHeatmapHasBandLabels) {
  TempDir t;
  const RunResult r = render({"transformer-xl", "--view", "heatmap"}, t / "f.svg");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = slurp(t / "f.svg");
  EXPECT_NE(svg.find(">memory<"), std::string::npos) << "band label above the memory columns";
  EXPECT_NE(svg.find(">segment "), std::string::npos) << "band label above the segment columns";
}

TEST(CliSparseFigures, AdaptiveSpanExtrasHaveMarkerLabels) {
  TempDir t;
  const RunResult r = render({"adaptive-span", "--view", "extras", "--size", "1400x1000"}, t / "f.svg");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = slurp(t / "f.svg");
  EXPECT_NE(svg.find("z+R"), std::string::npos) << "the ramp's z + R marker";
  EXPECT_NE(svg.find("<polyline"), std::string::npos) << "the ramp curve";
  EXPECT_NE(svg.find(">h0<"), std::string::npos) << "span bars labelled per head";
}

TEST(CliSparseFigures, LayoutPictureHasCategoryLegend) {
  TempDir t;
  const RunResult r = render({"sparse-strided", "--set", "layout=split", "--heads", "4", "--view", "extras"}, t / "f.svg");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = slurp(t / "f.svg");
  EXPECT_NE(svg.find("pattern per layer"), std::string::npos);
  EXPECT_NE(svg.find("A¹"), std::string::npos) << "legend names the categories";
}

// [SECTION] compare view
TEST(CliCompareView, SvgHasMatricesAndNumbers) {
  TempDir t;
  const RunResult r = render({"sparse-strided", "--length", "256", "--set", "stride=16", "--view", "compare"}, t / "f.svg");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = slurp(t / "f.svg");
  for (const char* s : {">full attention<", ">pattern<", ">pattern − full<", ">mass kept<", "KL(full", ">output relative error<",
                        ">FLOPs<", ">connections<"})
    EXPECT_NE(svg.find(s), std::string::npos) << s;
  EXPECT_TRUE(std::regex_search(svg, std::regex(R"(>[0-9]+\.[0-9]+ %<)"))) << "mass kept as a percentage";
  EXPECT_TRUE(std::regex_search(svg, std::regex(R"(>[0-9][0-9,]*<)"))) << "connection counts";
}

TEST(CliCompareView, LargeLShowsNumbersWithoutMatrices) {
  TempDir t;
  // 2 heads × 4,096²: more than the dense-view budget, so no L×L matrices.
  const RunResult r = render({"sparse-fixed", "--length", "4096", "--dim", "64", "--heads", "2", "--set", "block=64",
                              "--set", "c=4", "--view", "compare"},
                             t / "f.svg");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string svg = slurp(t / "f.svg");
  EXPECT_NE(svg.find("not kept"), std::string::npos) << "a line says the L×L matrices are left out";
  EXPECT_EQ(count(svg, "<image"), 1) << "only the mass-kept strip";
  EXPECT_NE(svg.find(">mass kept<"), std::string::npos);
}

// [SECTION] bad input
TEST(CliImageView, QueryOutOfRangeExitsTwoWithNoFile) {
  TempDir t;
  const RunResult r = render({"sparse-strided", "--length", "256", "--view", "image", "--query", "256"}, t / "f.png");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(countLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--query: expected a query 0..255, got 256"), std::string::npos) << r.err;
  EXPECT_TRUE(listFiles(t.path).empty()) << "no partial output";
}

TEST(CliImageView, ViewNotListedExitsTwo) {
  TempDir t;
  const RunResult r = render({"multi-head", "--view", "image"}, t / "f.png");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("has no 'image' view"), std::string::npos) << r.err;
  EXPECT_TRUE(listFiles(t.path).empty());
}

}  // namespace
}  // namespace attn::test
