// The view takes the space: on the main screens, at 1600×1000 and at
// 1280×720, at most a sixth of the area the layout gives the view (right of
// the side panel) is empty background. "Empty" is measured on 40×40-pixel
// tiles that hold nothing but the window's background colour, so the gaps
// between lines of text do not count. Tab (here --hide-panel) gives the
// panel's width to the view.
#include "tests/gui_support.h"

#include <sstream>

namespace attn::test {
namespace {

// ImGuiCol_WindowBg of the dark theme (app/gui.cpp, applyTheme): 0.11, 0.12, 0.14.
constexpr Rgb8 kDarkBackground{28, 31, 36};

// Share of the 40×40-pixel tiles inside `area` whose pixels are all
// background: holes a lecturer would see, not the gaps between text lines.
double emptyShare(const QImage& img, const QRect& area) {
  constexpr int kTile = 40;
  int tiles = 0, empty = 0;
  for (int y = area.top(); y + kTile <= area.bottom() + 1; y += kTile)
    for (int x = area.left(); x + kTile <= area.right() + 1; x += kTile) {
      ++tiles;
      bool all = true;
      for (int dy = 0; dy < kTile && all; ++dy)
        for (int dx = 0; dx < kTile && all; ++dx) all = near(img.pixel(x + dx, y + dy), kDarkBackground, 6);
      empty += all;
    }
  return tiles ? static_cast<double>(empty) / tiles : 1.0;
}

// The area the layout gives the view: right of the side panel's border (a
// column of one colour, not the background, over most of the height, in the
// left 45 % of the window; none when the panel is hidden), between the menu
// bar and the status bar.
QRect viewArea(const QImage& img) {
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

// Hiding the side panel gives the view its width: the heatmap grows.
TEST_F(GuiLayoutTest, HidingThePanelWidensTheView) {
  const QImage with = shootAt("1600x1000", {"--variant", "multi-head"});
  const QImage without = shootAt("1600x1000", {"--variant", "multi-head", "--hide-panel"});
  ASSERT_FALSE(with.isNull());
  ASSERT_FALSE(without.isNull());
  const Stats a = analyse(with), b = analyse(without);
  EXPECT_GT(b.colormap_pixels, a.colormap_pixels * 11 / 10) << "the heatmap did not grow without the panel";
}

}  // namespace
}  // namespace attn::test
