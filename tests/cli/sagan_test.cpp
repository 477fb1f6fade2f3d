// CLI: sagan computed and rendered by the real binary, on its default scene,
// a PNG and a given feature map: the files and their shapes, the replay
// through inputs/x.npy, and bad images refused in one line with no output.
#include "engine/npy.h"
#include "tests/test_support.h"

#include <QImage>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <string>

namespace attn::test {
namespace {

using Shape = std::vector<int64_t>;

TEST(CliSagan, DefaultSceneWritesWeightsProjectionsAndMaps) {
  TempDir t;
  const RunResult r = runAttnlab({"compute", "sagan", "--set", "pool=true", "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readNpy(t / "run/weights.npy", "weights").shape, (Shape{1, 1024, 256}));
  EXPECT_EQ(readNpy(t / "run/scores.npy", "scores").shape, (Shape{1, 1024, 256}));
  EXPECT_EQ(readNpy(t / "run/inputs/x.npy", "x").shape, (Shape{32, 32, 32}));
  EXPECT_EQ(readNpy(t / "run/inputs/w_f.npy", "w_f").shape, (Shape{4, 32}));
  EXPECT_EQ(readNpy(t / "run/inputs/w_g.npy", "w_g").shape, (Shape{4, 32}));
  EXPECT_EQ(readNpy(t / "run/inputs/w_h.npy", "w_h").shape, (Shape{32, 32}));
  EXPECT_EQ(readNpy(t / "run/extras/o.npy", "o").shape, (Shape{32, 32, 32}));
  EXPECT_EQ(readNpy(t / "run/extras/y.npy", "y").shape, (Shape{32, 32, 32}));
  EXPECT_EQ(readNpy(t / "run/extras/picture.npy", "picture").shape, (Shape{32, 32, 3}));

  // inputs/x.npy replays the run.
  const RunResult again = runAttnlab({"compute", "sagan", "--set", "pool=true", "--set",
                                      "x=" + (t / "run/inputs/x.npy").string(), "--out", (t / "again").string()});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(readNpy(t / "again/weights.npy", "weights").data, readNpy(t / "run/weights.npy", "weights").data);
}

TEST(CliSagan, PngDecidesTheImageAndRendersAsImageView) {
  TempDir t;
  QImage img(12, 10, QImage::Format_RGB32);
  img.fill(Qt::blue);
  for (int y = 2; y < 6; ++y)
    for (int x = 3; x < 8; ++x) img.setPixel(x, y, qRgb(255, 0, 0));
  ASSERT_TRUE(img.save(QString::fromStdString((t / "pic.png").string())));
  const RunResult r = runAttnlab({"compute", "sagan", "--set", "image=" + (t / "pic.png").string(), "--set",
                                  "c_bar=2", "--out", (t / "run").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readNpy(t / "run/weights.npy", "weights").shape, (Shape{1, 120, 120}));
  EXPECT_EQ(readNpy(t / "run/inputs/w_f.npy", "w_f").shape, (Shape{2, 32}));
  EXPECT_EQ(readNpy(t / "run/extras/y.npy", "y").shape, (Shape{32, 10, 12}));

  for (const char* ext : {".png", ".pdf", ".svg"}) {
    const std::string out = (t / (std::string("view") + ext)).string();
    const RunResult f = runAttnlab({"render", "sagan", "--set", "image=" + (t / "pic.png").string(), "--set",
                                    "pool=true", "--view", "image", "--out", out});
    ASSERT_EQ(f.status, 0) << f.err;
    EXPECT_GT(std::filesystem::file_size(out), 1000u) << out;
  }
  // Each map's title names its query pixel and the largest weight of that
  // query's row (the keys it attends to, not the queries attending to it).
  const RunResult pooled = runAttnlab({"compute", "sagan", "--set", "image=" + (t / "pic.png").string(), "--set", "pool=true",
                                       "--out", (t / "pooled").string()});
  ASSERT_EQ(pooled.status, 0) << pooled.err;
  const Array w = readNpy(t / "pooled/weights.npy", "weights");
  ASSERT_EQ(w.shape.size(), 3u);
  ASSERT_EQ(w.shape[1], 120);
  std::string text;
  for (const std::string& s : svgTexts(slurp(t / "view.svg"))) text += s + " ";
  const std::regex title(R"(query \d+ \((\d+), (\d+)\): max weight ([0-9.e-]+))");
  int maps = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), title); it != std::sregex_iterator(); ++it, ++maps) {
    const int64_t q = std::stoll((*it)[1]) * 12 + std::stoll((*it)[2]), keys = w.shape[2];
    ASSERT_LT(q, 120) << (*it)[0];
    const float top = *std::max_element(w.data.begin() + q * keys, w.data.begin() + (q + 1) * keys);
    EXPECT_NEAR(std::stod((*it)[3]), top, top * 5e-3) << (*it)[0];
  }
  EXPECT_GT(maps, 0) << "no map titled 'query k (row, column): max weight w' in " << text;
}

// Named apart from cli/memory_test.cpp's expectUsageError: a unity batch may hold both files.
void expectRefusedNamingAll(const std::vector<std::string>& args, const std::vector<std::string>& needles, const TempDir& t) {
  const RunResult r = runAttnlab(args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(countLines(r.err), 1) << r.err;
  for (const std::string& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << n << " in " << r.err;
  EXPECT_FALSE(std::filesystem::exists(t / "out"));
}

TEST(CliSagan, BadImagesExitTwoNamingTheFile) {
  TempDir t;
  const std::string out = (t / "out").string();
  std::ofstream(t / "junk.png") << "not a picture at all";
  expectRefusedNamingAll({"compute", "sagan", "--set", "image=" + (t / "junk.png").string(), "--out", out},
                         {"junk.png (image)", "expected a PNG or JPEG"}, t);
  // A real PNG cut short: the header reads, the pixels do not.
  QImage img(40, 40, QImage::Format_RGB32);
  for (int y = 0; y < 40; ++y)
    for (int x = 0; x < 40; ++x) img.setPixel(x, y, qRgb(x * 6, y * 6, (x * y) % 255));
  ASSERT_TRUE(img.save(QString::fromStdString((t / "whole.png").string())));
  const std::string bytes = slurp(t / "whole.png");
  std::ofstream(t / "cut.png", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  expectRefusedNamingAll({"compute", "sagan", "--set", "image=" + (t / "cut.png").string(), "--out", out},
                         {"cut.png (image)", "expected a PNG or JPEG"}, t);
  QImage big(200, 100, QImage::Format_RGB32);
  big.fill(Qt::gray);
  ASSERT_TRUE(big.save(QString::fromStdString((t / "big.png").string())));
  expectRefusedNamingAll({"compute", "sagan", "--set", "image=" + (t / "big.png").string(), "--out", out},
                         {"big.png (image)", "200 × 100", "at most 16384"}, t);
  writeNpy(t / "flat.npy", Array{{4, 8}, std::vector<float>(32, 0.5f)});
  expectRefusedNamingAll({"compute", "sagan", "--set", "x=" + (t / "flat.npy").string(), "--out", out},
                         {"flat.npy (x)", "[C, H, W]"}, t);
}

}  // namespace
}  // namespace attn::test
