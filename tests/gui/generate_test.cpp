// Generate in the model workspace of the real window under Xvfb: the new
// tokens' rows in the focused head's heatmap, the newest one outlined in the
// accent colour, moved by the timeline (--generate-step, the keys); BERT cannot
// generate (a usage error naming why); bad --generate flags are usage errors.
#include "tests/gui_support.h"
#include "tests/model_fixture.h"

#include <QImage>

#include <gtest/gtest.h>

#include <vector>

namespace attn::test {
namespace {

// The accent (ImGuiCol_PlotHistogram, focus frames and marks): RGB(255, 158, 38).
constexpr Rgb8 kAccent{255, 158, 38};

// Image rows of the right part of the window (the focused head's heatmap;
// the grid's focus frame and the panel's new tokens are left of it) crossed
// by a long accent line: the outline of the newest token's row.
std::vector<int> accentLines(const QImage& img) {
  std::vector<int> ys;
  const int x0 = img.width() * 62 / 100;
  for (int y = 0; y < img.height(); ++y) {
    int n = 0;
    for (int x = x0; x < img.width(); ++x) n += near(img.pixel(x, y), kAccent, 60);
    if (n > (img.width() - x0) / 3) ys.push_back(y);
  }
  return ys;
}

TEST_F(GuiTest, GenerateOutlinesTheNewestRowAndTheTimelineMovesIt) {
  RunResult r;
  const QImage before = shoot({}, &r);
  const QImage last = shoot({"--generate", "12"}, &r);
  const QImage first = shoot({"--generate", "12", "--generate-step", "1"}, &r);
  ASSERT_FALSE(before.isNull() || last.isNull() || first.isNull());
  EXPECT_TRUE(accentLines(before).empty()) << "a row is outlined before anything was generated";
  const std::vector<int> at_last = accentLines(last), at_first = accentLines(first);
  ASSERT_GE(at_last.size(), 2u) << "no outlined row after 12 new tokens: " << r.err;
  ASSERT_GE(at_first.size(), 2u) << "no outlined row at new token 1";
  // The outline's top and bottom edges span one row: at token 1 the matrix has
  // the prompt's rows + 1, at token 12 eleven more in the same height, so the
  // row is thinner and its top lower, the bottom staying the matrix's.
  const int height_last = at_last.back() - at_last.front(), height_first = at_first.back() - at_first.front();
  EXPECT_GT(height_first, height_last * 5 / 4) << "the matrix did not grow by the new tokens' rows";
  EXPECT_LT(at_first.front(), at_last.front() - 4) << "the timeline did not move the outlined row";
  EXPECT_NEAR(at_first.back(), at_last.back(), 6) << "the newest row is not the matrix's last";
  // Inside the outlined row the new token's weights are drawn: not the window's background.
  const int x0 = last.width() * 62 / 100;
  const QRgb background = last.pixel(last.width() - 2, last.height() / 2);
  size_t drawn = 0;
  for (int y = at_last.front() + 3; y < at_last.back() - 2; ++y)
    for (int x = x0; x < last.width(); ++x) drawn += last.pixel(x, y) != background && !near(last.pixel(x, y), kAccent, 60);
  EXPECT_GT(drawn, 200u) << "the newest row is empty";
}

TEST_F(GuiTest, ArrowKeysStepThroughTheNewTokens) {
  const QImage stepped = shoot({"--generate", "12", "--generate-step", "10"});
  const QImage keyed = shoot({"--generate", "12", "--keys", "Left,Comma,Right,Left"});
  const QImage last = shoot({"--generate", "12"});
  ASSERT_FALSE(stepped.isNull() || keyed.isNull() || last.isNull());
  const std::vector<int> at_step = accentLines(stepped), at_keys = accentLines(keyed), at_last = accentLines(last);
  ASSERT_FALSE(at_step.empty() || at_keys.empty() || at_last.empty());
  EXPECT_NEAR(at_keys.front(), at_step.front(), 1) << "the keys did not reach new token 10";
  EXPECT_LT(at_keys.front(), at_last.front()) << "the keys did not move the outlined row";
}

TEST_F(GuiTest, GenerateOnBertIsUsageErrorSayingWhy) {
  TinyOptions o;
  o.arch = test::Fixture::Bert;
  o.prefix = "bert.";
  const TinyModel bert = writeTinyModel(dir_ / "bert", o);
  const RunResult r =
      runAttnlab({"gui", "--frames", "2", "--model", bert.dir.string(), "--text", "the cat sat", "--generate", "3"}, env(), 60);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(countLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("BERT"), std::string::npos) << r.err;
}

TEST_F(GuiTest, BadGenerateFlagsAreUsageErrors) {
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
           {"--generate", "-1"}, {"--generate-step", "2"}, {"--generate", "3", "--generate-step", "4"},
           {"--generate", "3", "--variant", "multi-head"}}) {
    std::vector<std::string> args = {"gui", "--frames", "2"};
    args.insert(args.end(), flags.begin(), flags.end());
    const RunResult r = runAttnlab(args, env(), 60);
    EXPECT_EQ(r.status, 2) << flags[0] << ": " << r.err;
    EXPECT_EQ(countLines(r.err), 1) << r.err;
  }
}

}  // namespace
}  // namespace attn::test
