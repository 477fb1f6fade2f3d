// The GUI test fixture shared by the gui_*.cpp files: the real attnlab
// window under its own Xvfb, screenshots as QImage, and colour matching.
#pragma once

#include "tests/test_support.h"
#include "widgets/colormap.h"

#include <QImage>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace attn::test {

// Nearest-colormap lookup on a 64³ quantised RGB grid: -1 where no entry of
// the table is within a few levels.
class ColormapMatcher {
 public:
  explicit ColormapMatcher(Colormap c) : index_(64 * 64 * 64, -1) {
    const auto& table = colormapTable(c);
    for (int i = 0; i < 256; ++i)
      for (int dr = -1; dr <= 1; ++dr)
        for (int dg = -1; dg <= 1; ++dg)
          for (int db = -1; db <= 1; ++db) {
            const int r = table[i].r / 4 + dr, g = table[i].g / 4 + dg, b = table[i].b / 4 + db;
            if (r < 0 || g < 0 || b < 0 || r > 63 || g > 63 || b > 63) continue;
            int& slot = index_[static_cast<size_t>((r * 64 + g) * 64 + b)];
            if (slot < 0 || (dr == 0 && dg == 0 && db == 0)) slot = i;
          }
  }
  int match(QRgb p) const { return index_[static_cast<size_t>((qRed(p) / 4 * 64 + qGreen(p) / 4) * 64 + qBlue(p) / 4)]; }

 private:
  std::vector<int> index_;
};

class GuiTest : public ::testing::Test {
 protected:
  // Without Xvfb there is no GUI coverage: that fails unless explicitly allowed.
  void SetUp() override {
    if (xvfb_.ok()) return;
    const char* allow = std::getenv("ATTNLAB_ALLOW_GUI_SKIP");
    if (allow && std::string(allow) == "1") GTEST_SKIP() << xvfb_.error;
    FAIL() << "Xvfb cannot start (" << xvfb_.error << "); set ATTNLAB_ALLOW_GUI_SKIP=1 to skip the GUI tests";
  }
  // Runs `attnlab gui ARGS --frames 8 --screenshot`; returns the image.
  QImage shoot(const std::vector<std::string>& args, RunResult* out = nullptr) {
    const std::string png = (dir_ / ("shot" + std::to_string(shots_++) + ".png")).string();
    std::vector<std::string> a = {"gui", "--frames", "8", "--screenshot", png, "--size", "1280x800"};
    a.insert(a.end(), args.begin(), args.end());
    const RunResult r = runAttnlab(a, env(), 120);
    if (out) *out = r;
    EXPECT_EQ(r.status, 0) << r.err;
    QImage img(QString::fromStdString(png));
    EXPECT_FALSE(img.isNull()) << "no screenshot written: " << r.err;
    return img;
  }
  std::vector<std::string> env() const {
    return {"DISPLAY=" + xvfb_.display, "XDG_CONFIG_HOME=" + (dir_ / "config").string(), "QT_QPA_PLATFORM="};
  }
  void writeSettings(const std::string& text) {
    std::filesystem::create_directories(dir_ / "config" / "attnlab");
    std::ofstream(dir_ / "config" / "attnlab" / "settings.json") << text;
  }

  Xvfb xvfb_;
  TempDir dir_;
  int shots_ = 0;
};

inline bool near(QRgb p, Rgb8 c, int tolerance = 24) {
  return std::abs(qRed(p) - c.r) + std::abs(qGreen(p) - c.g) + std::abs(qBlue(p) - c.b) < tolerance;
}

inline size_t countNear(const QImage& img, Rgb8 c, int tolerance = 24) {
  size_t n = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) n += near(img.pixel(x, y), c, tolerance);
  return n;
}

}  // namespace attn::test
