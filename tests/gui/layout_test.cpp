// The desk uses the window: over the main screens (the default scene's six
// model views and every variant's showcase view), at 1600×1000 and at
// 1280×720, the median screen leaves at most 12 % of the view's area empty
// and none more than 25 % (emptyShare: 48-pixel blocks of background only),
// and every screen holds its labels to their marks and its colour bars to
// their data (tests/mark_rules.h).
// Tab (here --hide-panel) gives the panel's width to the view.
#include "tests/gui_support.h"
#include "tests/mark_rules.h"

#include <iostream>

namespace attn::test {
namespace {

const std::vector<std::vector<std::string>>& deskScreens() {
  static const std::vector<std::vector<std::string>> screens = [] {
    std::vector<std::vector<std::string>> s;
    for (const char* view : {"model", "heads", "qk", "rollout", "table", "pattern"}) s.push_back({"--view", view});
    const std::pair<const char*, const char*> variants[] = {
        {"multi-head", "heatmap"}, {"multi-head", "heads"}, {"multi-head", "lines"}, {"multi-head", "family"},
        {"sparse-strided", "image"}, {"sparse-fixed", "extras"}, {"local-1d", "compare"}, {"local-2d", "image"},
        {"lsh", "walkthrough"}, {"lsh", "extras"}, {"transformer-xl", "extras"}, {"adaptive-span", "extras"},
        {"act", "extras"}, {"universal-transformer", "extras"}, {"gtrxl-gate", "extras"}, {"ntm", "extras"},
        {"ntm-copy", "extras"}, {"pointer", "heatmap"}, {"pointer-sort", "extras"}, {"sagan", "image"},
        {"snail", "extras"}, {"sinusoidal-pe", "extras"}, {"alibi", "extras"}, {"rope", "extras"},
        {"local-p", "extras"}, {"global", "heatmap"}, {"dot", "family"}, {"cross-attention", "lines"}};
    for (const auto& [variant, view] : variants) s.push_back({"--variant", variant, "--view", view});
    return s;
  }();
  return screens;
}

std::string joined(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) out += (out.empty() ? "" : " ") + a;
  return out;
}

class DeskFill : public GuiTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(DeskFill, TheMedianScreenLeavesAtMost12PercentEmptyAndNoneOver25) {
  const std::string size = GetParam();
  std::vector<double> shares;
  for (const std::vector<std::string>& args : deskScreens()) {
    nlohmann::json described;
    const QImage img = shootAt(size, args, &described);
    ASSERT_FALSE(img.isNull()) << joined(args);
    ASSERT_TRUE(described.contains("view_area")) << joined(args);
    const double share = emptyShare(img, described);
    std::cout << joined(args) << " at " << size << ": " << share * 100 << " % of the view empty\n";
    EXPECT_LE(share, 0.25) << joined(args) << " at " << size;
    for (const std::string& why : describedRuleBreaks(described)) ADD_FAILURE() << joined(args) << " at " << size << ": " << why;
    shares.push_back(share);
  }
  EXPECT_LE(median(shares), 0.12) << size << ": the median screen";
}

INSTANTIATE_TEST_SUITE_P(Sizes, DeskFill, ::testing::Values("1600x1000", "1280x720"));

// Hiding the side panel gives the view its width: the model view's grid
// and focused head spread over the whole window.
TEST_F(GuiTest, HidingThePanelWidensTheView) {
  nlohmann::json described;
  const QImage with = shootAt("1600x1000", {});
  const QImage without = shootAt("1600x1000", {"--hide-panel"}, &described);
  ASSERT_FALSE(with.isNull());
  ASSERT_FALSE(without.isNull());
  const QRect shown = viewArea(with), hidden = viewArea(without);
  EXPECT_LT(shown.left(), with.width() / 2) << "no view area found";
  EXPECT_GT(shown.left(), with.width() / 10) << "the panel's border was not found";
  EXPECT_LE(hidden.left(), 1) << "without the panel the view starts at the window's edge";
  // The leftmost colormap pixel (the grid's first thumbnail) moves into the panel's place.
  auto leftmost = [](const QImage& img) {
    const ColormapMatcher m(Colormap::Viridis);
    for (int x = 0; x < img.width(); ++x)
      for (int y = 40; y < img.height() - 60; y += 2)
        if (m.match(img.pixel(x, y)) >= 0) return x;
    return img.width();
  };
  EXPECT_LT(leftmost(without), shown.left()) << "the view did not take the panel's width";
  EXPECT_LE(emptyShare(without, described), 0.25);
}

}  // namespace
}  // namespace attn::test
