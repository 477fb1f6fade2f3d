// Screen and figure agree by construction (widgets/views/): every registered
// view is drawn on screen (the real window under Xvfb) and exported to SVG
// from the same scene, each writing what its layout held (--describe). The
// two must hold the same panels, titles, colour ranges, strongest cells and
// data marks, each held to the mark and label rules (tests/mark_rules.h);
// and each must show it: the screenshot's pixel at the strongest cell's
// centre, and the SVG's cell there, are the colour its value maps to.
#include "tests/gui_support.h"
#include "tests/mark_rules.h"

#include "widgets/views/view.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <set>

namespace attn::test {
namespace {

struct Case {
  std::string variant, view;
  std::vector<std::string> args;
};

// One scene per registered view (a test below checks none is missing); the
// image view both ways (a sparse pattern, a picture); ALiBi's extras for
// their bars (marks) beside the weights and the signed biases.
const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"multi-head", "heatmap", {}},   {"multi-head", "heads", {}},  {"multi-head", "lines", {}},
      {"transformer-xl", "extras", {}}, {"gtrxl-gate", "extras", {}}, {"dot", "family", {"--source-text", "le chat est assis sur le tapis"}},
      {"sparse-strided", "image", {}}, {"sagan", "image", {}},       {"local-1d", "compare", {}},
      {"lsh", "walkthrough", {}},      {"alibi", "extras", {}},
  };
  return c;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.variant << " --view " << c.view; }

const char* kText = "the cat sat on the mat because the cat was tired";

// The colour `v` maps to on a linear scale over `range` (the scenes are short: auto is linear).
Rgb8 expectedColour(const nlohmann::json& panel, float v) {
  Colormap cmap = Colormap::Viridis;
  EXPECT_TRUE(colormapFromName(panel["colormap"].get<std::string>(), cmap));
  const float lo = panel["range"][0], hi = panel["range"][1];
  const int i = static_cast<int>(std::lround(255.0 * std::clamp((v - lo) / (hi - lo), 0.0f, 1.0f)));
  return colormapTable(cmap)[static_cast<size_t>(i)];
}

int distance(uint32_t rgb, Rgb8 c) {
  return std::abs(static_cast<int>(rgb >> 16 & 0xff) - c.r) + std::abs(static_cast<int>(rgb >> 8 & 0xff) - c.g) +
         std::abs(static_cast<int>(rgb & 0xff) - c.b);
}

class ViewsAgree : public GuiTest, public ::testing::WithParamInterface<Case> {};

TEST_P(ViewsAgree, ScreenAndFigureHoldTheSamePanelsAndShowThem) {
  const Case& c = GetParam();
  TempDir dir;
  const std::string screen_json = (dir / "screen.json").string(), figure_json = (dir / "figure.json").string();
  const std::string svg = (dir / "figure.svg").string();
  std::vector<std::string> gui = {"--variant", c.variant, "--view", c.view, "--text", kText, "--describe", screen_json};
  gui.insert(gui.end(), c.args.begin(), c.args.end());
  const QImage shot = shoot(gui);
  ASSERT_FALSE(shot.isNull());
  std::vector<std::string> render = {"render", c.variant, "--view", c.view, "--text", kText, "--out", svg, "--describe", figure_json};
  render.insert(render.end(), c.args.begin(), c.args.end());
  const RunResult r = runAttnlab(render);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json screen = nlohmann::json::parse(slurp(screen_json)), figure = nlohmann::json::parse(slurp(figure_json));
  const nlohmann::json &sp = screen["panels"], &fp = figure["panels"];
  ASSERT_GT(sp.size(), 0u) << c.view << ": the screen drew no panel";
  for (const std::string& why : describedRuleBreaks(screen)) ADD_FAILURE() << c.view << " on screen: " << why;
  for (const std::string& why : describedRuleBreaks(figure)) ADD_FAILURE() << c.view << " in the figure: " << why;
  std::set<std::string> screen_marks, figure_marks;  // the same dots and bars, by what they stand for
  for (const nlohmann::json& m : screen.value("marks", nlohmann::json::array())) screen_marks.insert(m.at("id").get<std::string>());
  for (const nlohmann::json& m : figure.value("marks", nlohmann::json::array())) figure_marks.insert(m.at("id").get<std::string>());
  EXPECT_EQ(screen_marks, figure_marks) << c.view;
  ASSERT_EQ(sp.size(), fp.size()) << c.view << ": panel count";
  const std::string figure_svg = slurp(svg);
  std::string svg_text;
  for (const std::string& t : svgTexts(figure_svg)) svg_text += t + " ";  // a wrapped title: a line per text element
  int checked_pixels = 0;
  for (size_t i = 0; i < sp.size(); ++i) {
    const nlohmann::json &s = sp[i], &f = fp[i];
    SCOPED_TRACE(c.variant + " " + c.view + " panel " + std::to_string(i) + " '" + s["title"].get<std::string>() + "'");
    EXPECT_EQ(s["kind"], f["kind"]);
    EXPECT_EQ(s["title"], f["title"]);
    EXPECT_EQ(s["colormap"], f["colormap"]);
    for (int k = 0; k < 2; ++k) EXPECT_NEAR(s["range"][k].get<double>(), f["range"][k].get<double>(), 1e-6) << "colour range";
    // A plain title is in the figure's text.
    const std::string title = s["title"];
    if (!title.empty() && title.find_first_of("^_\\{}") == std::string::npos) {
      EXPECT_NE(svg_text.find(title), std::string::npos) << "title missing from the SVG";
    }
    ASSERT_EQ(s.contains("strongest"), f.contains("strongest"));
    if (!s.contains("strongest")) continue;
    const nlohmann::json &ss = s["strongest"], &fs = f["strongest"];
    EXPECT_EQ(ss["row"], fs["row"]);
    EXPECT_EQ(ss["col"], fs["col"]);
    const Rgb8 want = expectedColour(s, ss["value"].get<float>());
    // On screen: the pixel at the cell's centre, where cells are a few pixels wide and the cell is in the
    // window (the extras view scrolls; the status bar is at the bottom).
    const double sy = ss["y"];
    if (ss["cell"].get<double>() >= 4 && sy < shot.height() - 60) {
      const QRgb px = shot.pixel(static_cast<int>(ss["x"].get<double>()), static_cast<int>(sy));
      EXPECT_LT(distance(px & 0xffffff, want), 40) << "screen pixel at the strongest cell";
      ++checked_pixels;
    }
    // In the SVG: the grid of that shape under the cell's centre, its cell there (a dense matrix of modest
    // size is a rect per cell; a sparse one an image pooled by rasterize()).
    const int64_t rows = s["rows"], cols = s["cols"];
    const double x = fs["x"], y = fs["y"];
    bool found = false;
    for (const SvgGrid& g : svgCellGrids(figure_svg, rows, cols)) {
      const int64_t col = static_cast<int64_t>(std::floor((x - g.x) / g.cell_w)), row = static_cast<int64_t>(std::floor((y - g.y) / g.cell_h));
      if (row < 0 || col < 0 || row >= rows || col >= cols) continue;
      found = true;
      EXPECT_EQ(row, fs["row"].get<int64_t>());
      EXPECT_EQ(col, fs["col"].get<int64_t>());
      EXPECT_LT(distance(g.rgb[static_cast<size_t>(row * cols + col)], want), 12) << "SVG cell at the strongest cell";
    }
    if (s["dense"].get<bool>() && rows * cols <= 512 * 512) {
      EXPECT_TRUE(found) << "no SVG grid under the strongest cell";
    }
  }
  if (c.view != "lines" && c.view != "image") {
    EXPECT_GT(checked_pixels, 0) << "no matrix checked on screen";
  }
}

TEST(ViewsAgreeCases, EveryRegisteredViewIsCompared) {
  for (const ViewInfo* v : viewRegistry())
    EXPECT_TRUE(std::any_of(cases().begin(), cases().end(), [&](const Case& c) { return c.view == v->name; }))
        << "view '" << v->name << "' has no screen/figure comparison";
}

INSTANTIATE_TEST_SUITE_P(Registry, ViewsAgree, ::testing::ValuesIn(cases()), [](const ::testing::TestParamInfo<Case>& p) {
  std::string n = p.param.variant + "_" + p.param.view;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

}  // namespace
}  // namespace attn::test
