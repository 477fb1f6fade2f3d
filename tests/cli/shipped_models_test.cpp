// The models the binary ships (`shipped:t5-toy`, `shipped:vit-shapes`)
// through the command line: `model info` names them, an unknown name is one
// line listing the others; `render` draws a ViT's views (its picture's
// attention, rollout, distance plot, grid) and an encoder–decoder's table,
// fitting a paper's column; bad pictures and flags are one line and write
// nothing.
#include "engine/npy.h"
#include "tests/test_support.h"

#include <QImage>

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

namespace attn::test {
namespace {

namespace fs = std::filesystem;

const std::string kVitDir = std::string(ATTNLAB_SOURCE_DIR) + "/assets/trained/vit-shapes";
const std::string kStar = kVitDir + "/examples/star.png";

size_t colours(const QImage& img) {
  std::set<QRgb> c;
  for (int y = 0; y < img.height(); y += 2)
    for (int x = 0; x < img.width(); x += 2) c.insert(img.pixel(x, y));
  return c.size();
}

TEST(ShippedModels, InfoNamesThemAndAnUnknownNameListsThem) {
  for (const std::string name : {"t5-toy", "vit-shapes"}) {
    const RunResult r = runAttnlab({"model", "info", "shipped:" + name});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("shipped:" + name), std::string::npos) << r.out;
  }
  const RunResult bad = runAttnlab({"model", "info", "shipped:gpt9"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(countLines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("shipped:gpt9: no such shipped model (this build ships shipped:default, shipped:t5-toy, shipped:vit-shapes)"),
            std::string::npos)
      << bad.err;
}

// The picture view at layer 2: the figure's own pixels are not checked here
// (the GUI test reads the screen's), but every view draws, at a given size
// and at a paper column's width with the height its content needs.
TEST(ShippedModels, RenderDrawsEachViewOfTheViT) {
  TempDir dir;
  for (const std::string view : {"picture", "rollout", "distance", "model"}) {
    const std::string png = (dir / (view + ".png")).string();
    const RunResult r = runAttnlab({"render", "--model", "shipped:vit-shapes", "--image", kStar, "--view", view, "--layer", "2",
                                    "--out", png, "--size", "900x700"});
    ASSERT_EQ(r.status, 0) << view << ": " << r.err;
    EXPECT_NE(r.out.find(view + " of vit-shapes on star.png"), std::string::npos) << r.out;
    const QImage img(QString::fromStdString(png));
    ASSERT_FALSE(img.isNull()) << view;
    EXPECT_EQ(img.size(), QSize(900, 700)) << view;
    EXPECT_GT(colours(img), 40u) << view;
  }
  // A column (3.5 in at 300 dpi): 1050 pixels across, as tall as the pictures need, no taller than a page.
  const std::string col = (dir / "column.png").string();
  const RunResult r = runAttnlab({"render", "--model", "shipped:vit-shapes", "--view", "picture", "--size", "column", "--out", col});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("on circle.png"), std::string::npos) << "no --image: the first example: " << r.out;
  const QImage img(QString::fromStdString(col));
  EXPECT_EQ(img.width(), 1050);
  EXPECT_GT(img.height(), 1050);   // three rows of two pictures under the title
  EXPECT_LT(img.height(), 3300);   // within a page's 11 in
}

TEST(ShippedModels, RenderDrawsTheEncoderDecoderTableOfTheThreeKinds) {
  TempDir dir;
  const std::string png = (dir / "table.png").string();
  const RunResult r = runAttnlab({"render", "--model", "shipped:t5-toy", "--text", "the big red cat sleeps", "--target",
                                  "le chat rouge grand dort", "--view", "table", "--size", "column", "--out", png});
  ASSERT_EQ(r.status, 0) << r.err;
  const QImage img(QString::fromStdString(png));
  EXPECT_EQ(img.width(), 1050);
  // 2 encoder + 2 decoder + 2 cross layers × 4 heads = 24 rows and a header at 1.8 units: taller than wide.
  EXPECT_GT(img.height(), img.width());
}

TEST(ShippedModels, BadPicturesAndFlagsAreOneLineAndWriteNothing) {
  TempDir dir;
  // The ViT's folder without its examples: no picture to start from.
  const fs::path copy = dir / "vit";
  fs::create_directories(copy);
  for (const char* f : {"config.json", "model.safetensors", "preprocessor_config.json"}) fs::copy_file(fs::path(kVitDir) / f, copy / f);
  const fs::path no_pre = dir / "vit-no-pre";
  fs::create_directories(no_pre);
  for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(fs::path(kVitDir) / f, no_pre / f);
  const std::string out = (dir / "f.png").string();
  const struct {
    std::vector<std::string> args;
    std::string expected;
  } cases[] = {
      {{"render", "--model", copy.string(), "--view", "picture", "--out", out}, "--image: no picture chosen"},
      {{"render", "--model", no_pre.string(), "--image", kStar, "--out", out},
       "preprocessor_config.json: missing (--image needs the folder's image preprocessing"},
      {{"render", "--model", "shipped:vit-shapes", "--image", kStar, "--query", "65", "--out", out},
       "--query: expected 0 ([CLS]) .. 64 (the patches), got 65"},
      {{"render", "--model", "shipped:vit-shapes", "--image", kStar, "--view", "maps", "--out", out},
       "--view: 'maps' is not a view of a vision model (expected one of picture, model, rollout, distance)"},
      {{"render", "--model", "shipped:vit-shapes", "--text", "a cat", "--out", out}, "--text: a vision model reads a picture"},
      {{"render", "--model", "shipped:vit-shapes", "--image", (dir / "none.png").string(), "--out", out}, "none.png (--image): no such file"},
      {{"render", "--default-model", "--image", kStar, "--out", out}, "--image: only vision models (ViT) read a picture"},
      {{"gui", "--model", "shipped:nope"}, "shipped:nope: no such shipped model"},
  };
  for (const auto& c : cases) {
    const RunResult r = runAttnlab(c.args);
    EXPECT_EQ(r.status, 2) << c.expected << ": " << r.err;
    EXPECT_EQ(countLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.expected;
  }
}

}  // namespace
}  // namespace attn::test
