// The view takes the space: on the main screens, at 1600×1000 and at
// 1280×720, at most a sixth of the area the layout gives the view (right of
// the side panel) is empty background: holes at least 120 pixels across
// (emptyShare). Tab (here --hide-panel) gives the panel's width to the view.
#include "tests/gui_support.h"

#include <iostream>
#include <sstream>

namespace attn::test {
namespace {

// ImGuiCol_WindowBg of the dark theme (app/gui/gui.cpp, applyTheme): 0.11, 0.12, 0.14.
constexpr Rgb8 kDarkBackground{28, 31, 36};

// Share of `area` that lies in holes: 40×40-pixel tiles of nothing but the
// background whose eight neighbours are background too, so only regions at
// least 120 pixels across count; the gaps between lines of text, between a
// label and its cells, or between the faint lines of the lines view do not.
double emptyShare(const QImage& img, const QRect& area) {
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
