// Shared by the GUI tests: the real attnlab window under Xvfb (GuiTest::shoot
// takes a screenshot), and pixel statistics (colormap matches, head colours).
#pragma once

#include "tests/test_support.h"
#include "widgets/colormap.h"

#include <QImage>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
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

struct Stats {
  int width = 0, height = 0;
  size_t distinct = 0;
  size_t colormap_pixels = 0;  // close to any entry of the colormap
  size_t low_end_pixels = 0;   // close to its first entries (weight ≈ 0)
  double mean_luma = 0;
};

inline Stats analyse(const QImage& img, Colormap c = Colormap::Viridis) {
  const ColormapMatcher m(c);
  Stats s;
  s.width = img.width();
  s.height = img.height();
  std::set<QRgb> colours;
  double luma = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) {
      const QRgb p = img.pixel(x, y);
      colours.insert(p & 0xffffff);
      luma += 0.299 * qRed(p) + 0.587 * qGreen(p) + 0.114 * qBlue(p);
      const int i = m.match(p);
      if (i >= 0) ++s.colormap_pixels;
      if (i >= 0 && i <= 6) ++s.low_end_pixels;
    }
  s.distinct = colours.size();
  s.mean_luma = luma / (static_cast<double>(img.width()) * img.height());
  return s;
}

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
  // `extra_env` ("KEY=VALUE") is added to the window's environment.
  QImage shoot(const std::vector<std::string>& args, RunResult* out = nullptr,
               const std::vector<std::string>& extra_env = {}) {
    const std::string png = (dir_ / ("shot" + std::to_string(shots_++) + ".png")).string();
    std::vector<std::string> a = {"gui", "--frames", "8", "--screenshot", png, "--size", "1280x800"};
    a.insert(a.end(), args.begin(), args.end());
    std::vector<std::string> e = env();
    e.insert(e.end(), extra_env.begin(), extra_env.end());
    const RunResult r = runAttnlab(a, e, 120);
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

// Pixels that differ between two images of one size inside `area`.
inline size_t differingPixels(const QImage& a, const QImage& b, const QRect& area) {
  size_t n = 0;
  for (int y = area.top(); y <= area.bottom(); ++y)
    for (int x = area.left(); x <= area.right(); ++x) n += a.pixel(x, y) != b.pixel(x, y);
  return n;
}
inline size_t differingPixels(const QImage& a, const QImage& b) { return differingPixels(a, b, a.rect()); }

// Pixels close to the first or last `n` entries of a colormap.
inline size_t endPixels(const QImage& img, Colormap c, int n, bool high) {
  const ColormapMatcher m(c);
  size_t count = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) {
      const int i = m.match(img.pixel(x, y));
      count += i >= 0 && (high ? i >= 256 - n : i < n);
    }
  return count;
}

inline bool near(QRgb p, Rgb8 c, int tolerance = 24) {
  return std::abs(qRed(p) - c.r) + std::abs(qGreen(p) - c.g) + std::abs(qBlue(p) - c.b) < tolerance;
}

inline size_t countNear(const QImage& img, Rgb8 c, int tolerance = 24) {
  size_t n = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) n += near(img.pixel(x, y), c, tolerance);
  return n;
}

// ImGuiCol_WindowBg of the dark theme (app/gui/gui.cpp, applyTheme): 0.11, 0.12, 0.14.
constexpr Rgb8 kDarkBackground{28, 31, 36};

// Share of `area` that lies in holes: 40×40-pixel tiles of nothing but the
// background whose eight neighbours are background too, so only regions at
// least 120 pixels across count; the gaps between lines of text, between a
// label and its cells, or between the faint lines of the lines view do not.
inline double emptyShare(const QImage& img, const QRect& area) {
  constexpr int kTile = 40;
  const int cols = area.width() / kTile, rows = area.height() / kTile;
  std::vector<char> blank(static_cast<size_t>(cols * rows), 0);
  for (int ty = 0; ty < rows; ++ty)
    for (int tx = 0; tx < cols; ++tx) {
      bool all = true;
      for (int dy = 0; dy < kTile && all; ++dy)
        for (int dx = 0; dx < kTile && all; ++dx)
          all = near(img.pixel(area.left() + tx * kTile + dx, area.top() + ty * kTile + dy), kDarkBackground, 6);
      blank[static_cast<size_t>(ty * cols + tx)] = all;
    }
  int holes = 0;
  for (int ty = 0; ty < rows; ++ty)
    for (int tx = 0; tx < cols; ++tx) {
      bool hole = true;
      for (int dy = -1; dy <= 1 && hole; ++dy)
        for (int dx = -1; dx <= 1 && hole; ++dx) {
          const int x = std::clamp(tx + dx, 0, cols - 1), y = std::clamp(ty + dy, 0, rows - 1);
          hole = blank[static_cast<size_t>(y * cols + x)];
        }
      holes += hole;
    }
  return cols > 0 && rows > 0 ? static_cast<double>(holes) / (cols * rows) : 1.0;
}

// The area the layout gives the view: right of the side panel's border (a
// column of one colour, not the background, over most of the height, in the
// left 45 % of the window; none when the panel is hidden), between the menu
// bar and the status bar.
inline QRect viewArea(const QImage& img) {
  const int top = 30, bottom = img.height() - 50;
  int border = -1;
  for (int x = img.width() / 10; x < img.width() * 45 / 100; ++x) {
    const QRgb c = img.pixel(x, top + 10);
    if (near(c, kDarkBackground, 6)) continue;
    int same = 0;
    for (int y = top; y < bottom; ++y) same += img.pixel(x, y) == c;
    if (same > (bottom - top) * 9 / 10) border = x;
  }
  return QRect(QPoint(border + 1, top), QPoint(img.width() - 1, bottom));
}

}  // namespace attn::test
