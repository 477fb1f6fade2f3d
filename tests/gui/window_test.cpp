// The real attnlab window under Xvfb: screenshots of every view, checked by
// their pixels (not blank, colormap colours present, an interaction changes
// them), the frame-time line, and settings/usage errors; the long-range
// pattern views (image, sparse heatmap at large L, compare, extras plots).
#include "tests/gui_support.h"
#include "widgets/colormap.h"
#include "widgets/pattern_image.h"

#include <QImage>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <utility>
#include <string>
#include <vector>

namespace attn::test {
namespace {

TEST_F(GuiTest, VariantWorkspaceShowsHeatmapAndReportsFrameTimes) {
  RunResult r;
  const QImage img = shoot({"--variant", "multi-head"}, &r);
  ASSERT_FALSE(img.isNull());
  EXPECT_EQ(img.width(), 1280);
  EXPECT_EQ(img.height(), 800);
  const Stats s = analyse(img);
  EXPECT_GT(s.distinct, 300u) << "screenshot looks blank";
  // The 11×11 heatmap and colorbar cover a good part of the window.
  EXPECT_GT(s.colormap_pixels, img.width() * img.height() / 10u);
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(^frames: 8 median [0-9.]+ ms worst [0-9.]+ ms$)",
                                                  std::regex::multiline)))
      << r.out;
}


struct ViewCase {
  std::string variant, view;
};
void PrintTo(const ViewCase& c, std::ostream* os) { *os << c.variant << " --view " << c.view; }

class GuiViewTest : public GuiTest, public ::testing::WithParamInterface<ViewCase> {};

TEST_P(GuiViewTest, ViewIsDrawn) {
  const auto& [variant, view] = GetParam();
  const QImage img = shoot({"--variant", variant, "--view", view});
  ASSERT_FALSE(img.isNull());
  const Stats s = analyse(img);
  EXPECT_GT(s.distinct, 200u) << view << " looks blank";
  if (view == "lines") {
    // Lines in the head colours.
    size_t head_pixels = 0;
    for (int y = 0; y < img.height(); ++y)
      for (int x = 0; x < img.width(); ++x) {
        const QRgb p = img.pixel(x, y);
        for (int h = 0; h < 4; ++h) {
          const Rgb8 c = headColor(h);
          if (std::abs(qRed(p) - c.r) + std::abs(qGreen(p) - c.g) + std::abs(qBlue(p) - c.b) < 60) ++head_pixels;
        }
      }
    EXPECT_GT(head_pixels, 2000u);
  } else if (view == "extras") {
    // sinusoidal-pe's PE [L, d] is a signed Matrix extra with values near ±1:
    // a diverging map showing both ends of coolwarm (blue and red). The
    // heatmap of PE·PEᵀ has almost no blue end (< area / 1000).
    const size_t area = static_cast<size_t>(img.width()) * img.height();
    // (The blue end covers ~1/500 of the window: PE's low dimensions only, PE in one of three tiles.)
    EXPECT_GT(endPixels(img, Colormap::Coolwarm, 32, false), area / 700) << "no coolwarm blue end";
    EXPECT_GT(endPixels(img, Colormap::Coolwarm, 32, true), area / 100) << "no coolwarm red end";
  } else {
    EXPECT_GT(s.colormap_pixels, img.width() * img.height() / 12u) << view;
  }
}

INSTANTIATE_TEST_SUITE_P(Views, GuiViewTest,
                         ::testing::Values(ViewCase{"multi-head", "heatmap"}, ViewCase{"multi-head", "heads"},
                                           ViewCase{"multi-head", "lines"}, ViewCase{"sinusoidal-pe", "extras"},
                                           ViewCase{"dot", "family"}),
                         [](const ::testing::TestParamInfo<ViewCase>& info) { return info.param.view; });

// The heatmap's screen rectangle: the widest run of columns that are mostly
// colormap pixels (the colorbar is a narrow run), then its rows.
// The heatmap's cells: viridis, and with `grey_cells` also the shader's grey
// for cells without a value (NaN: masked, or no entry of a sparse pattern).
QRect findHeatmap(const QImage& img, bool grey_cells = false) {
  const ColormapMatcher viridis(Colormap::Viridis);
  const struct {
    const ColormapMatcher& v;
    bool grey;
    int match(QRgb c) const {
      const bool is_grey = grey && std::abs(qRed(c) - 128) <= 2 && qRed(c) == qGreen(c) && qGreen(c) == qBlue(c);
      return is_grey ? 0 : v.match(c);
    }
  } m{viridis, grey_cells};
  std::vector<int> col_count(static_cast<size_t>(img.width()), 0);
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) col_count[static_cast<size_t>(x)] += m.match(img.pixel(x, y)) >= 0;
  const int tall = *std::max_element(col_count.begin(), col_count.end()) / 2;
  int best_x = 0, best_w = 0;
  // Cell borders are a few columns of another colour: bridge gaps of ≤ 4.
  auto on = [&](int x) { return col_count[static_cast<size_t>(x)] > tall; };
  for (int x = 0; x < img.width(); ++x) {
    if (!on(x)) continue;
    int end = x, gap = 0;
    for (int k = x; k < img.width() && gap <= 4; ++k) {
      gap = on(k) ? 0 : gap + 1;
      if (on(k)) end = k;
    }
    if (end - x + 1 > best_w) best_x = x, best_w = end - x + 1;
    x = end;
  }
  int top = -1, bottom = -1;
  for (int y = 0; y < img.height(); ++y) {
    int n = 0;
    for (int x = best_x; x < best_x + best_w; ++x) n += m.match(img.pixel(x, y)) >= 0;
    if (n > best_w / 2) {
      if (top < 0) top = y;
      bottom = y;
    }
  }
  return QRect(best_x, top, best_w, bottom - top + 1);
}

// Colormap index at the centre of cell (i, j) of an n×n heatmap.
int cellIndex(const QImage& img, const QRect& r, int n, int i, int j) {
  const ColormapMatcher m(Colormap::Viridis);
  const int x = r.x() + static_cast<int>((j + 0.5) * r.width() / n), y = r.y() + static_cast<int>((i + 0.5) * r.height() / n);
  return m.match(img.pixel(x, y));
}

TEST_F(GuiTest, CausalMaskDarkensUpperTriangle) {
  const int n = 11;  // tokens of the default sentence
  const QImage plain = shoot({"--variant", "multi-head"});
  const QImage causal = shoot({"--set", "causal=true"});
  ASSERT_FALSE(plain.isNull());
  ASSERT_FALSE(causal.isNull());
  const QRect rp = findHeatmap(plain), rc = findHeatmap(causal, true);
  ASSERT_GT(rc.width(), 200);
  // On screen a square map's cells may stretch to 1.6:1 to fill the view.
  EXPECT_GE(rc.width() + 4, rc.height());
  EXPECT_LE(rc.width(), rc.height() * 1.6 + 4);
  // Masked cells are the shader's grey for "no value", as at every length
  // (the sparse path draws cells without an entry the same way).
  int causal_grey = 0, plain_grey = 0, upper = 0;
  auto grey = [&](const QImage& img, const QRect& r, int i, int j) {
    const int x = r.x() + static_cast<int>((j + 0.5) * r.width() / n), y = r.y() + static_cast<int>((i + 0.5) * r.height() / n);
    return near(img.pixel(x, y), Rgb8{128, 128, 128}, 8);
  };
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      ++upper;
      causal_grey += grey(causal, rc, i, j);
      plain_grey += grey(plain, rp, i, j);
    }
  EXPECT_EQ(causal_grey, upper) << "masked keys j > i must be drawn as masked";
  EXPECT_EQ(plain_grey, 0) << "without the mask no cell is masked";
  // Row 0 may only attend to itself: weight 1 at the top of the colormap.
  EXPECT_GE(cellIndex(causal, rc, n, 0, 0), 250);
}

TEST_F(GuiTest, OtherVariantChangesPixels) {
  const QImage a = shoot({"--variant", "multi-head"});
  const QImage b = shoot({"--variant", "cross-attention"});
  ASSERT_FALSE(a.isNull());
  ASSERT_FALSE(b.isNull());
  ASSERT_EQ(a.size(), b.size());
  size_t differ = 0;
  for (int y = 0; y < a.height(); ++y)
    for (int x = 0; x < a.width(); ++x) differ += a.pixel(x, y) != b.pixel(x, y);
  EXPECT_GT(differ, static_cast<size_t>(a.width()) * a.height() / 20);
}

TEST_F(GuiTest, ThemeComesFromSettingsAndCorruptFileIsTolerated) {
  writeSettings(R"({"theme": "light", "ui_scale": 1.0})");
  const double light = analyse(shoot({"--variant", "multi-head", "--view", "lines"})).mean_luma;
  writeSettings("{ this is not json");
  RunResult r;
  const double dark = analyse(shoot({"--variant", "multi-head", "--view", "lines"}, &r)).mean_luma;
  EXPECT_NE(r.err.find("ignoring settings file"), std::string::npos) << r.err;
  EXPECT_GT(light, 170.0);
  EXPECT_LT(dark, 90.0);
}

TEST_F(GuiTest, ViewTheVariantLacksIsUsageError) {
  const RunResult r = runAttnlab({"gui", "--frames", "2", "--variant", "sinusoidal-pe", "--view", "lines"}, env(), 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("'lines'"), std::string::npos) << r.err;
}

TEST_F(GuiTest, UnknownScaleIsUsageError) {
  const RunResult r = runAttnlab({"gui", "--frames", "2", "--variant", "multi-head", "--scale", "cubic"}, env(), 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("--scale"), std::string::npos) << r.err;
}

TEST_F(GuiTest, BadParameterIsUsageError) {
  const RunResult r = runAttnlab({"gui", "--frames", "2", "--set", "causal=maybe"}, env(), 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("causal"), std::string::npos) << r.err;
}

// [SECTION] Long-range pattern views


// The first run of at least `min_len` indices whose count passes `min_count`;
// a run bridges one or two indices below it (the hairlines of a pixel grid).
std::pair<int, int> firstRun(const std::vector<int>& counts, int min_count, int min_len) {
  auto passes = [&](size_t k) { return k < counts.size() && counts[k] >= min_count; };
  for (size_t i = 0; i < counts.size(); ++i) {
    if (!passes(i)) continue;
    size_t j = i;
    while (passes(j) || (j > i && (passes(j + 1) || passes(j + 2)))) ++j;
    if (static_cast<int>(j - i) >= min_len) return {static_cast<int>(i), static_cast<int>(j)};
    i = j;
  }
  return {0, 0};
}

TEST_F(GuiTest, ImageViewColoursTheQueryKeysBySet) {
  // L = 64 as an 8×8 image, stride ℓ = 8, both sets: the centre query i = 36
  // (x 4, y 4) has A¹ = {28 … 36} and A² = {36, 28, 20, 12, 4} (its column).
  const QImage img = shoot({"--variant", "sparse-strided", "--length", "64", "--set", "stride=8", "--view", "image"});
  ASSERT_FALSE(img.isNull());
  const Rgb8 a1 = patternSetColor(1), a2 = patternSetColor(2), both = patternSetColor(3), none = patternSetColor(0);
  auto pattern = [&](QRgb p) { return near(p, a1) || near(p, a2) || near(p, both) || near(p, none); };
  // The image is the leftmost block of pattern colours; the connectivity matrix follows after a gap.
  std::vector<int> cols(static_cast<size_t>(img.width()), 0);
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) cols[static_cast<size_t>(x)] += pattern(img.pixel(x, y));
  const auto [x0, x1] = firstRun(cols, 100, 80);
  ASSERT_GT(x1 - x0, 80) << "no image found";
  std::vector<int> rows(static_cast<size_t>(img.height()), 0);
  for (int y = 0; y < img.height(); ++y)
    for (int x = x0; x < x1; ++x) rows[static_cast<size_t>(y)] += pattern(img.pixel(x, y));
  const auto [y0, y1] = firstRun(rows, (x1 - x0) / 2, 80);
  ASSERT_NEAR(x1 - x0, y1 - y0, 6) << "an 8×8 image has square pixels";
  auto at = [&](int px, int py) {
    return img.pixel(x0 + (2 * px + 1) * (x1 - x0) / 16, y0 + (2 * py + 1) * (y1 - y0) / 16);
  };
  for (int y : {0, 1, 2}) EXPECT_TRUE(near(at(4, y), a2)) << "A² only at (4, " << y << ")";
  for (int y : {3, 4}) EXPECT_TRUE(near(at(4, y), both)) << "both sets at (4, " << y << ")";
  for (int x : {5, 6, 7}) EXPECT_TRUE(near(at(x, 3), a1)) << "A¹ only at (" << x << ", 3)";
  for (int x : {0, 1, 2, 3}) EXPECT_TRUE(near(at(x, 4), a1)) << "A¹ only at (" << x << ", 4)";
  for (auto [x, y] : {std::pair{0, 0}, {3, 3}, {5, 4}, {4, 5}, {7, 7}})
    EXPECT_TRUE(near(at(x, y), none)) << "no key at (" << x << ", " << y << ")";
}

TEST_F(GuiTest, PictureViewDrawsTheSceneAndEachQuerysMap) {
  // sagan's default scene: the picture in its own colours (the red disc, the
  // yellow square) and four maps over the greyed picture whose largest
  // weight takes the colormap's top colour; each map framed in its query's colour.
  const QImage img = shoot({"--variant", "sagan", "--view", "image"});
  ASSERT_FALSE(img.isNull());
  const Rgb8 red{230, 38, 31}, yellow{250, 217, 26}, top = colormapAt(Colormap::Viridis, 1.0f);
  int reds = 0, yellows = 0, tops = 0;
  std::array<int, 4> frames{};
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) {
      const QRgb p = img.pixel(x, y);
      reds += near(p, red, 30);
      yellows += near(p, yellow, 30);
      tops += near(p, top, 40);
      for (int k = 0; k < 4; ++k) frames[static_cast<size_t>(k)] += near(p, headColor(k), 12);
    }
  EXPECT_GT(reds, 2000) << "the red disc";
  EXPECT_GT(yellows, 1500) << "the yellow square";
  EXPECT_GT(tops, 20) << "no map reaches its largest weight's colour";
  for (int k = 0; k < 4; ++k) EXPECT_GT(frames[static_cast<size_t>(k)], 400) << "query " << k + 1 << "'s frame";
}

TEST_F(GuiTest, SparseHeatmapAtLargeLengthDrawsTheCausalTriangle) {
  // 4 heads × 4096²: no dense weights, the heatmap draws the CSR through rasterize().
  const QImage img =
      shoot({"--variant", "sparse-strided", "--length", "4096", "--set", "stride=64", "--view", "heatmap"});
  ASSERT_FALSE(img.isNull());
  const QRect r = findHeatmap(img, true);
  ASSERT_GT(r.width(), 200);
  // Cells without a connection are drawn grey (NaN, like masked cells): the colour of the top-right corner.
  const QRgb empty = img.pixel(r.right() - 2, r.top() + 2);
  size_t upper = 0, upper_lit = 0, lower = 0, lower_lit = 0;
  for (int y = r.top(); y <= r.bottom(); ++y)
    for (int x = r.left(); x <= r.right(); ++x) {
      const double i = static_cast<double>(y - r.top()) / r.height(), j = static_cast<double>(x - r.left()) / r.width();
      if (std::abs(i - j) < 0.01) continue;  // the diagonal's own pixels
      const bool lit = img.pixel(x, y) != empty;
      (j > i ? upper : lower) += 1;
      (j > i ? upper_lit : lower_lit) += lit;
    }
  EXPECT_LT(upper_lit, upper / 200) << "keys after the query are drawn";
  EXPECT_GT(lower_lit, lower / 50) << "the pattern's keys are not drawn";
}

// At 1024 keys and ℓ = 32 a row's weights spread over ~47 keys, most far
// below the largest: a linear scale leaves them in the colormap's dark end;
// auto picks the log scale, which lifts the same cells up the colormap.
TEST_F(GuiTest, LargeLengthDefaultsToALogScaleThatShowsThePattern) {
  const std::vector<std::string> args = {"--variant", "sparse-strided", "--length", "1024", "--set", "stride=32", "--view", "heatmap"};
  std::vector<std::string> linear = args;
  linear.insert(linear.end(), {"--scale", "linear"});
  const QImage lin = shoot(linear), automatic = shoot(args);
  ASSERT_FALSE(lin.isNull());
  ASSERT_FALSE(automatic.isNull());
  // Mean colormap position of the heatmap's coloured pixels (the masked grey is no colormap colour).
  auto meanIndex = [](const QImage& img) {
    const ColormapMatcher m(Colormap::Viridis);
    const QRect r = findHeatmap(img, true);
    double sum = 0;
    size_t n = 0;
    for (int y = r.top(); y <= r.bottom(); ++y)
      for (int x = r.left(); x <= r.right(); ++x)
        if (const int i = m.match(img.pixel(x, y)); i >= 0) {
          sum += i;
          ++n;
        }
    return n ? sum / static_cast<double>(n) : 0.0;
  };
  const double a = meanIndex(lin), b = meanIndex(automatic);
  EXPECT_GT(b, a * 2 + 10) << "mean colormap index: linear " << a << ", auto (log) " << b;
}

TEST_F(GuiTest, CompareViewShowsFullPatternAndDifference) {
  const QImage img = shoot({"--variant", "sparse-strided", "--set", "stride=2", "--view", "compare"});
  ASSERT_FALSE(img.isNull());
  const size_t area = static_cast<size_t>(img.width()) * img.height();
  EXPECT_GT(analyse(img).colormap_pixels, area / 40) << "full and pattern heatmaps";
  // The difference is diverging: mass moved off dropped keys (blue) onto kept ones (red).
  EXPECT_GT(endPixels(img, Colormap::Coolwarm, 48, false), area / 8000) << "no negative difference";
  EXPECT_GT(endPixels(img, Colormap::Coolwarm, 48, true), area / 8000) << "no positive difference";
}

TEST_F(GuiTest, ExtrasViewDrawsSpanRampsPerHeadAndSpanBars) {
  // adaptive-span: one ramp m_z(x) per head in its head colour, and one bar per
  // head whose height is its span z.
  const QImage narrow = shoot({"--variant", "adaptive-span", "--heads", "4", "--set", "max_span=16", "--set",
                               "z=2,4,6,8", "--view", "extras"});
  const QImage wide = shoot({"--variant", "adaptive-span", "--heads", "4", "--set", "max_span=16", "--set",
                             "z=2,4,6,16", "--view", "extras"});
  ASSERT_FALSE(narrow.isNull());
  ASSERT_FALSE(wide.isNull());
  for (int h = 0; h < 4; ++h) EXPECT_GT(countNear(narrow, headColor(h), 12), 150u) << "no ramp for head " << h;
  // The bars are drawn in their heads' colours (as the ramps), scaled to the
  // largest span: heights 2,4,6,8 fill 20/8 = 2.5 bar heights, 2,4,6,16 fill
  // 28/16 = 1.75, so the bars' pixels shrink to about 0.7.
  auto headPixels = [](const QImage& img) {
    size_t n = 0;
    for (int h = 0; h < 4; ++h) n += countNear(img, headColor(h), 12);
    return static_cast<double>(n);
  };
  const double ratio = headPixels(wide) / headPixels(narrow);
  EXPECT_GT(ratio, 0.55) << "span bars do not follow z";
  EXPECT_LT(ratio, 0.82) << "span bars do not follow z";
}

TEST_F(GuiTest, ExtrasViewDrawsCategoryPicture) {
  // sparse-fixed: which pattern each layer × head uses, in category colours
  // (interleaved: A¹ on even layers, A² on odd ones).
  const QImage fixed = shoot({"--variant", "sparse-fixed", "--set", "layout=interleaved", "--view", "extras"});
  ASSERT_FALSE(fixed.isNull());
  EXPECT_GT(countNear(fixed, headColor(0), 12), 20000u) << "no A¹ cells";
  EXPECT_GT(countNear(fixed, headColor(1), 12), 20000u) << "no A² cells";
}

}  // namespace
}  // namespace attn::test

// [SECTION] LSH walkthrough

namespace attn::test {
namespace {

// The walkthrough's four stage panels are drawn with their bucket strips,
// the angular pictures and bars below in the bucket colours, and the cells in
// the colormap; the reversible extras draw their curves.
TEST_F(GuiTest, LshWalkthroughDrawsStagesBucketsAndPictures) {
  const QImage img = shoot({"--variant", "lsh", "--view", "walkthrough", "--length", "64", "--dim", "16", "--heads", "1",
                            "--set", "n_buckets=4", "--set", "chunk=8"});
  ASSERT_FALSE(img.isNull());
  const Stats s = analyse(img);
  EXPECT_GT(s.colormap_pixels, 3000u) << "the stage panels' cells";
  for (int b = 0; b < 4; ++b) EXPECT_GT(countNear(img, headColor(b), 12), 400u) << "bucket " << b << " strips, bars, points";
  // Four panels, in a row or two by two: the runs of colormap columns in the
  // top half and in the bottom half add up to the four stages and the colour
  // bar (seen once in a row, twice beside two rows).
  const ColormapMatcher m(Colormap::Viridis);
  int runs = 0;
  for (const int half : {0, 1}) {
    std::vector<int> cols(static_cast<size_t>(img.width()), 0);
    for (int y = half * img.height() / 2; y < (half + 1) * img.height() / 2; ++y)
      for (int x = 0; x < img.width(); ++x) cols[static_cast<size_t>(x)] += m.match(img.pixel(x, y)) >= 0;
    // A column of a sparse stage holds a bucket's block only: a dozen colormap pixels mark it.
    for (int x = 1; x < img.width(); ++x) runs += cols[static_cast<size_t>(x)] >= 12 && cols[static_cast<size_t>(x) - 1] < 12;
  }
  EXPECT_GE(runs, 5) << "stages (a)–(d) and the colour bar";

  const QImage rev = shoot({"--variant", "reversible", "--view", "extras", "--length", "32", "--dim", "16", "--heads", "2",
                            "--set", "layers=6"});
  ASSERT_FALSE(rev.isNull());
  EXPECT_GT(countNear(rev, headColor(0), 12), 200u) << "curves in series colours";
  EXPECT_GT(countNear(rev, headColor(1), 12), 200u);
}

// pointer-sort: numbers given in ascending order are pointed to in input order,
// descending ones in reverse, and every number already chosen is a masked
// (grey) cell in the rows below it. Cells are read off-centre, beside the
// diamond that marks the chosen pointer.
TEST_F(GuiTest, PointerSortPointsAlongTheSortedOrderAndMasksWhatWasChosen) {
  const int n = 8;
  for (const bool ascending : {true, false}) {
    const std::string numbers = ascending ? "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8" : "0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1";
    const QImage img = shoot({"--variant", "pointer-sort", "--view", "heatmap", "--set", "numbers=" + numbers});
    ASSERT_FALSE(img.isNull());
    const QRect r = findHeatmap(img, true);
    ASSERT_GT(r.width(), 200) << numbers;
    EXPECT_GE(r.width() + 4, r.height()) << "cells up to 1.6:1 on screen";
    EXPECT_LE(r.width(), r.height() * 1.6 + 4) << "cells up to 1.6:1 on screen";
    const ColormapMatcher viridis(Colormap::Viridis);
    auto pixel = [&](int i, int j) {
      return img.pixel(r.x() + static_cast<int>((j + 0.15) * r.width() / n), r.y() + static_cast<int>((i + 0.15) * r.height() / n));
    };
    for (int i = 0; i < n; ++i) {
      const int pointed = ascending ? i : n - 1 - i;
      EXPECT_GE(viridis.match(pixel(i, pointed)), 200) << numbers << ": step " << i << " points to " << pointed;
      for (int j = 0; j < n; ++j) {
        const bool chosen_before = ascending ? j < i : j > n - 1 - i;
        EXPECT_EQ(near(pixel(i, j), Rgb8{128, 128, 128}, 8), chosen_before) << numbers << ": cell " << i << ", " << j;
      }
    }
  }
}

}  // namespace
}  // namespace attn::test
