// The adaptive-computation views in the real window: ACT's stacked halting
// bars, the Universal Transformer's ponder map, the GTrXL gate heatmap.
#include "tests/gui_support.h"

namespace attn::test {
namespace {

// Pixels of each of the first `n` segment colours (headColor(k)).
std::vector<size_t> segmentPixels(const QImage& img, int n) {
  std::vector<size_t> out;
  for (int k = 0; k < n; ++k) out.push_back(countNear(img, headColor(k), 12));
  return out;
}

TEST_F(GuiTest, ActStackedBarsDrawOneSegmentPerPonderStep) {
  // h = 0.1, 0.3, 0.2, 0.5 with ε = 0.01: N = 4, p = 0.1, 0.3, 0.2, R = 0.4.
  const QImage img = shoot({"--variant", "act", "--set", "mode=manual", "--set", "h=0.1,0.3,0.2,0.5", "--view", "extras"});
  const std::vector<size_t> px = segmentPixels(img, 5);
  for (int k = 0; k < 4; ++k) EXPECT_GT(px[static_cast<size_t>(k)], 3000u) << "segment n=" << k + 1;
  // The segments are as tall as their weights: n=2 (0.3) against n=1 (0.1).
  EXPECT_GT(px[1], 2 * px[0]);
  // One step less: with h^1 = 0.995 the bar is one segment of weight 1.
  const QImage one = shoot({"--variant", "act", "--set", "mode=manual", "--set", "h=0.995", "--view", "extras"});
  const std::vector<size_t> px1 = segmentPixels(one, 2);
  EXPECT_GT(px1[0], px[0] * 3);
  // headColor(1) also draws the legend swatch of n=2 in no other place: no second segment.
  EXPECT_LT(px1[1], 400u);
}

TEST_F(GuiTest, ActRnnBarsOnePerInputStep) {
  const QImage img = shoot({"--variant", "act", "--view", "extras"});
  const std::vector<size_t> px = segmentPixels(img, 3);
  for (int k = 0; k < 3; ++k) EXPECT_GT(px[static_cast<size_t>(k)], 1000u) << "segment n=" << k + 1;
}

TEST_F(GuiTest, UniversalTransformerPonderMapShowsUpdatingHaltingAndCopied) {
  const QImage img = shoot({"--variant", "universal-transformer", "--view", "extras"});
  // Categories: updating headColor(0), halts here headColor(1), halted and copied headColor(2).
  const std::vector<size_t> px = segmentPixels(img, 3);
  for (int k = 0; k < 3; ++k) EXPECT_GT(px[static_cast<size_t>(k)], 1500u) << "category " << k;
}

TEST_F(GuiTest, GtrxlGateHeatmapDrawsGateValues) {
  const ColormapMatcher viridis(Colormap::Viridis);
  auto viridisPixels = [&](const QImage& img) {
    size_t n = 0;
    for (int y = 0; y < img.height(); ++y)
      for (int x = 0; x < img.width(); ++x) n += viridis.match(img.pixel(x, y)) >= 0;
    return n;
  };
  const QImage img = shoot({"--variant", "gtrxl-gate", "--view", "extras"});
  EXPECT_GT(viridisPixels(img), static_cast<size_t>(img.width()) * img.height() / 10);
  // The gated output next to it is signed: both halves of coolwarm appear,
  // each over far more pixels than its colour bar alone has (~1,200 for a
  // half; the maps' 11 × 64 cells are ~150 pixels each: ~27,000 and ~45,000 here).
  const ColormapMatcher coolwarm(Colormap::Coolwarm);
  size_t blue = 0, red = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) {
      const int i = coolwarm.match(img.pixel(x, y));
      blue += i >= 0 && i < 100;
      red += i > 156;
    }
  EXPECT_GT(blue, 8000u);
  EXPECT_GT(red, 8000u);
  // A very negative b_g opens the gate: the heatmap's pixels change.
  const QImage open = shoot({"--variant", "gtrxl-gate", "--set", "b_g=-8", "--view", "extras"});
  size_t differ = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) differ += img.pixel(x, y) != open.pixel(x, y);
  EXPECT_GT(differ, static_cast<size_t>(img.width()) * img.height() / 20);
}

}  // namespace
}  // namespace attn::test
