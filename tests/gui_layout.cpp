// The view takes the space: on the main screens, at 1600×1000 and at
// 1280×720, at most a sixth of the area the layout gives the view (right of
// the side panel) is empty background: holes at least 120 pixels across
// (emptyShare). Tab (here --hide-panel) gives the panel's width to the view.
#include "tests/gui_support.h"

#include <iostream>
#include <sstream>

namespace attn::test {
namespace {

struct Screen {
  std::string name;
  std::vector<std::string> args;
};
void PrintTo(const Screen& s, std::ostream* os) { *os << s.name; }

class GuiLayoutTest : public GuiTest, public ::testing::WithParamInterface<Screen> {
 protected:
  QImage shootAt(const std::string& size, std::vector<std::string> args) {
    const std::string png = (dir_ / ("layout" + std::to_string(shots_++) + ".png")).string();
    std::vector<std::string> a = {"gui", "--frames", "8", "--screenshot", png, "--size", size};
    a.insert(a.end(), args.begin(), args.end());
    const RunResult r = runAttnlab(a, env(), 120);
    EXPECT_EQ(r.status, 0) << r.err;
    return QImage(QString::fromStdString(png));
  }
};

TEST_P(GuiLayoutTest, AtMostASixthOfTheWindowIsEmpty) {
  for (const std::string size : {"1600x1000", "1280x720"}) {
    const QImage img = shootAt(size, GetParam().args);
    ASSERT_FALSE(img.isNull()) << size;
    const QRect view = viewArea(img);
    EXPECT_GT(view.width(), img.width() / 2) << size << ": the view is narrower than half the window";
    const double share = emptyShare(img, view);
    std::cout << GetParam().name << " at " << size << ": " << share * 100 << " % of the view empty\n";
    EXPECT_LE(share, 1.0 / 6.0) << GetParam().name << " at " << size << ": " << share * 100 << " % of the view ("
                                << view.width() << " × " << view.height() << ") is empty, "
                                << emptyShare(img, img.rect()) * 100 << " % of the window";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Screens, GuiLayoutTest,
    ::testing::Values(Screen{"default_scene", {}}, Screen{"model_heads", {"--view", "heads"}},
                      Screen{"model_qk", {"--view", "qk"}}, Screen{"model_table", {"--view", "table"}},
                      Screen{"heatmap", {"--variant", "multi-head"}},
                      Screen{"heads", {"--variant", "multi-head", "--view", "heads"}},
                      Screen{"lines", {"--variant", "multi-head", "--view", "lines"}},
                      Screen{"family", {"--variant", "dot", "--view", "family"}},
                      Screen{"local_p", {"--variant", "local-p", "--view", "heatmap"}},
                      Screen{"lsh_walkthrough", {"--variant", "lsh", "--view", "walkthrough"}},
                      Screen{"span_extras", {"--variant", "adaptive-span", "--view", "extras"}},
                      Screen{"image", {"--variant", "sparse-strided", "--view", "image"}},
                      Screen{"compare", {"--variant", "sparse-fixed", "--view", "compare"}}),
    [](const ::testing::TestParamInfo<Screen>& info) { return info.param.name; });

// Hiding the side panel gives the view its width: the model view's grid
// and focused head spread over the whole window.
TEST_F(GuiLayoutTest, HidingThePanelWidensTheView) {
  const QImage with = shootAt("1600x1000", {});
  const QImage without = shootAt("1600x1000", {"--hide-panel"});
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
  EXPECT_LT(emptyShare(without, hidden), 1.0 / 6.0);
}

}  // namespace
}  // namespace attn::test
