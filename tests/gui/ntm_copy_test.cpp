// The copy-task NTM in the real window: the heatmap view draws the write
// weighting over time on a fixed [0, 1] scale (the focused rows at the top of
// the colormap, every other row at the bottom), and the timeline's step
// changes what the extras view shows.
#include "tests/gui_support.h"

namespace attn::test {
namespace {

TEST_F(GuiTest, NtmCopyDrawsTheWeightingsAndPlaysTheSteps) {
  const QImage heat = shoot({"--variant", "ntm-copy", "--view", "heatmap"});
  // 23 time steps × 32 rows: 13 focused cells of ~1 (the 11 inputs, the
  // delimiter, the first output), ~700 cells near 0.
  const size_t high = endPixels(heat, Colormap::Viridis, 24, true), low = endPixels(heat, Colormap::Viridis, 24, false);
  EXPECT_GT(high, 5000u);
  EXPECT_GT(low, 20 * high);
  // Another step of the timeline: the step's values (β, g, γ of each head) change.
  nlohmann::json described;
  const QImage now = shootAt("1280x800", {"--variant", "ntm-copy", "--view", "extras"}, &described);
  const QImage later = shoot({"--variant", "ntm-copy", "--view", "extras", "--set", "step=20"});
  EXPECT_LE(emptyShare(now, described), 0.25);
  EXPECT_GT(differingPixels(now, later, viewArea(now)), 1500u);
}

}  // namespace
}  // namespace attn::test
