// Shared by the GUI tests: the real attnlab window under Xvfb (GuiTest::shoot
// takes a screenshot), and pixel statistics (colormap matches, head colours).
#pragma once

#include "tests/test_support.h"
#include "widgets/colormap.h"

#include <QImage>
#include <QRect>
#include <QRectF>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
  // Runs `attnlab gui ARGS --frames 8 --screenshot` at 1280×800; returns the image.
  // `extra_env` ("KEY=VALUE") is added to the window's environment.
  QImage shoot(const std::vector<std::string>& args, RunResult* out = nullptr,
               const std::vector<std::string>& extra_env = {}) {
    return shootAt("1280x800", args, nullptr, out, 8, extra_env);
  }
  // The same at `size`, `frames` frames; with `described`, also what the
  // view's layout held (`--describe`: view_area, panels, texts).
  QImage shootAt(const std::string& size, const std::vector<std::string>& args, nlohmann::json* described = nullptr,
                 RunResult* out = nullptr, int frames = 8, const std::vector<std::string>& extra_env = {}) {
    const std::string stem = (dir_ / ("shot" + std::to_string(shots_++))).string();
    std::vector<std::string> a = {"gui", "--frames", std::to_string(frames), "--screenshot", stem + ".png", "--size", size};
    if (described) a.insert(a.end(), {"--describe", stem + ".json"});
    a.insert(a.end(), args.begin(), args.end());
    std::vector<std::string> e = env();
    e.insert(e.end(), extra_env.begin(), extra_env.end());
    const RunResult r = runAttnlab(a, e, 120);
    if (out) *out = r;
    EXPECT_EQ(r.status, 0) << r.err;
    QImage img(QString::fromStdString(stem + ".png"));
    EXPECT_FALSE(img.isNull()) << "no screenshot written: " << r.err;
    if (described) *described = std::filesystem::exists(stem + ".json") ? nlohmann::json::parse(slurp(stem + ".json")) : nlohmann::json();
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

// The share of the view's area (`--describe`'s view_area) left empty:
// 48 × 48-pixel blocks holding nothing but the dark theme's background greys
// (every channel under 45, within 12 of each other: the window's and the
// panels' backgrounds), where a block centred in a plot's area (bars,
// curves, points, token lines: its frame is its data) counts as drawn. The
// gaps between rows of text count as empty where they reach 48 pixels.
inline double emptyShare(const QImage& img, const nlohmann::json& described) {
  constexpr int kBlock = 48;
  const nlohmann::json& a = described.at("view_area");
  const int x0 = static_cast<int>(a[0].get<double>()), y0 = static_cast<int>(a[1].get<double>());
  const int w = static_cast<int>(a[2].get<double>()), h = static_cast<int>(a[3].get<double>());
  std::vector<QRectF> plots;
  for (const nlohmann::json& p : described.value("panels", nlohmann::json::array())) {
    const std::string kind = p.value("kind", "");
    if (kind == "matrix" || kind == "image" || kind == "picture" || kind == "token strip" || !p.contains("area")) continue;
    const nlohmann::json& r = p["area"];
    plots.emplace_back(r[0].get<double>(), r[1].get<double>(), r[2].get<double>(), r[3].get<double>());
  }
  auto background = [](QRgb p) {
    const int hi = std::max({qRed(p), qGreen(p), qBlue(p)}), lo = std::min({qRed(p), qGreen(p), qBlue(p)});
    return hi < 45 && hi - lo < 12;
  };
  int blocks = 0, empty = 0;
  for (int by = y0; by + kBlock <= y0 + h && by + kBlock <= img.height(); by += kBlock)
    for (int bx = x0; bx + kBlock <= x0 + w && bx + kBlock <= img.width(); bx += kBlock) {
      ++blocks;
      const QPointF centre(bx + kBlock / 2.0, by + kBlock / 2.0);
      bool blank = std::none_of(plots.begin(), plots.end(), [&](const QRectF& r) { return r.contains(centre); });
      for (int y = by; y < by + kBlock && blank; ++y)
        for (int x = bx; x < bx + kBlock && blank; ++x) blank = background(img.pixel(x, y));
      empty += blank;
    }
  return blocks > 0 ? static_cast<double>(empty) / blocks : 1.0;
}

// The median of `v` (the mean of the middle two for an even count).
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The texts the view drew (`--describe`'s texts) set under `min_px`
// (sub- and superscripts of a formula: under 0.7 × min_px), and the pairs
// whose boxes overlap (by more than a pixel across and a quarter of the
// smaller's height: rows of labels may touch), each as a line to report.
inline std::vector<std::string> smallTexts(const nlohmann::json& described, double min_px) {
  std::vector<std::string> out;
  for (const nlohmann::json& t : described.value("texts", nlohmann::json::array())) {
    const double px = t.at("px").get<double>(), least = t.value("script", false) ? 0.7 * min_px : min_px;
    if (px >= least) continue;
    std::string line = "'";  // appended piecewise (GCC 12 misreports "'" + string as -Wrestrict)
    line += t.at("text").get<std::string>();
    line += "' at " + std::to_string(px) + " px";
    out.push_back(line);
  }
  return out;
}
inline std::vector<std::string> overlappingTexts(const nlohmann::json& described) {
  std::vector<std::string> out;
  const nlohmann::json texts = described.value("texts", nlohmann::json::array());
  for (size_t i = 0; i < texts.size(); ++i)
    for (size_t j = i + 1; j < texts.size(); ++j) {
      const nlohmann::json &a = texts[i], &b = texts[j];
      auto edge = [](const nlohmann::json& t, const char* k) { return t.at(k).get<double>(); };
      const double iw = std::min(edge(a, "x") + edge(a, "w"), edge(b, "x") + edge(b, "w")) - std::max(edge(a, "x"), edge(b, "x"));
      const double ih = std::min(edge(a, "y") + edge(a, "h"), edge(b, "y") + edge(b, "h")) - std::max(edge(a, "y"), edge(b, "y"));
      if (iw > 1 && ih > 0.25 * std::min(edge(a, "h"), edge(b, "h")))
        out.push_back("'" + a.at("text").get<std::string>() + "' over '" + b.at("text").get<std::string>() + "'");
    }
  return out;
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

// Connected regions (4-neighbour) of pixels that pass `keep`, at least `min_area` large.
template <class Keep>
std::vector<QRect> regions(const QImage& img, Keep keep, int min_area) {
  const int w = img.width(), h = img.height();
  std::vector<int> seen(static_cast<size_t>(w) * h, 0);
  std::vector<QRect> out;
  std::vector<std::pair<int, int>> stack;
  for (int y0 = 0; y0 < h; ++y0)
    for (int x0 = 0; x0 < w; ++x0) {
      if (seen[static_cast<size_t>(y0) * w + x0] || !keep(img.pixel(x0, y0))) continue;
      int area = 0, x_lo = x0, x_hi = x0, y_lo = y0, y_hi = y0;
      stack.push_back({x0, y0});
      seen[static_cast<size_t>(y0) * w + x0] = 1;
      while (!stack.empty()) {
        const auto [x, y] = stack.back();
        stack.pop_back();
        ++area;
        x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x), y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
        const int nx[4] = {x - 1, x + 1, x, x}, ny[4] = {y, y, y - 1, y + 1};
        for (int k = 0; k < 4; ++k) {
          if (nx[k] < 0 || ny[k] < 0 || nx[k] >= w || ny[k] >= h) continue;
          int& s = seen[static_cast<size_t>(ny[k]) * w + nx[k]];
          if (s || !keep(img.pixel(nx[k], ny[k]))) continue;
          s = 1;
          stack.push_back({nx[k], ny[k]});
        }
      }
      if (area >= min_area) out.emplace_back(QPoint(x_lo, y_lo), QPoint(x_hi, y_hi));
    }
  return out;
}

}  // namespace attn::test
