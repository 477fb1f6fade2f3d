// The one timeline in the real window: its keys (',' back, '.' forward)
// step what the view plays — a parameter recomputed (Transformer-XL's τ),
// the walkthrough's framed stage, ACT's running sum drawn up to a step — and
// the window then shows what opening at that step shows.
#include "tests/gui_support.h"

namespace attn::test {
namespace {

// Above the status bar: its timings differ from run to run.
size_t differing(const QImage& a, const QImage& b) { return differingPixels(a, b, QRect(0, 0, a.width(), a.height() - 60)); }

TEST_F(GuiTest, TimelineStepsTransformerXlSegmentsLikeSettingTau) {
  const std::vector<std::string> base = {"--variant", "transformer-xl", "--text", "a b c d e f g h i j k l m n o p"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return shoot(a);
  };
  const QImage tau1 = with({}), tau2 = with({"--set", "tau=2"}), stepped = with({"--keys", "Period"});
  const QImage back = with({"--set", "tau=2", "--keys", "Comma"});
  ASSERT_GT(differing(tau1, tau2), 5000u);
  EXPECT_LT(differing(stepped, tau2), 200u);
  EXPECT_LT(differing(back, tau1), 200u);
}

TEST_F(GuiTest, TimelineFramesEachWalkthroughStageInTurn) {
  const std::vector<std::string> lsh = {"--variant", "lsh", "--view", "walkthrough", "--length", "24"};
  auto with = [&](std::vector<std::string> keys) {
    std::vector<std::string> a = lsh;
    a.insert(a.end(), keys.begin(), keys.end());
    return shoot(a);
  };
  const QImage all = with({}), first = with({"--keys", "Period"}), second = with({"--keys", "Period,Period"});
  // The framed stage is drawn in the focus colour (ImGuiCol_PlotHistogram: 1.0, 0.62, 0.15).
  const Rgb8 focus{255, 158, 38};
  EXPECT_LT(countNear(all, focus, 30), 200u);
  EXPECT_GT(countNear(first, focus, 30), 600u);
  EXPECT_GT(differing(first, second), 2000u);  // the frame moved on
}

TEST_F(GuiTest, TimelineDrawsActsRunningSumUpToAStep) {
  const std::vector<std::string> act = {"--variant", "act", "--set", "mode=manual", "--set", "h=0.1,0.3,0.2,0.5",
                                        "--view", "extras"};
  auto with = [&](std::vector<std::string> keys) {
    std::vector<std::string> a = act;
    a.insert(a.end(), keys.begin(), keys.end());
    return shoot(a);
  };
  // The running sum is drawn in headColor(0), ACT's first series.
  const QImage all = with({}), at0 = with({"--keys", "Period"}), at3 = with({"--keys", "Period,Period,Period,Period"});
  const size_t line_all = countNear(all, headColor(0), 20), line0 = countNear(at0, headColor(0), 20),
               line3 = countNear(at3, headColor(0), 20);
  EXPECT_LT(line0, line3);
  EXPECT_LT(line3, line_all);
}

}  // namespace
}  // namespace attn::test
