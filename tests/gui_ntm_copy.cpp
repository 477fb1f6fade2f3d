// The copy-task NTM in the real window: its extras view draws the weightings
// over time on a fixed [0, 1] scale, and the timeline's step moves what the
// stage panels show.
#include "tests/gui_support.h"

namespace attn::test {
namespace {

TEST_F(GuiTest, NtmCopyExtrasDrawWeightingsOnAFixedScaleAndPlayTheSteps) {
  const QImage img = shoot({"--variant", "ntm-copy", "--view", "extras"});
  EXPECT_LT(emptyShare(img, viewArea(img)), 0.15);
  // Focused weightings are near 1 (the top of viridis), the rest near 0; on a
  // per-panel [0, max] scale a flat weighting of 1/N would be drawn at the top too.
  const size_t high = endPixels(img, Colormap::Viridis, 24, true), low = endPixels(img, Colormap::Viridis, 24, false);
  EXPECT_GT(high, 2000u);
  EXPECT_GT(low, 10 * high);
  // Another step of the timeline: the memory, stages and erase/add panels change.
  const QImage later = shoot({"--variant", "ntm-copy", "--view", "extras", "--set", "step=20"});
  EXPECT_GT(differingPixels(img, later, viewArea(img)), 20000u);
}

}  // namespace
}  // namespace attn::test
