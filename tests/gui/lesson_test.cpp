// Lessons in the real window under Xvfb: every step of every shipped lesson
// renders, its marks inside the matrix it points at (a mark that does not
// fit is said on stderr), and changes what the view shows; the keys a
// presentation clicker sends step through a lesson; presentation mode gives
// the view the whole window.
#include "tests/gui_support.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace attn::test {
namespace {

namespace fs = std::filesystem;


size_t stepCount(const std::string& name) {
  return nlohmann::json::parse(slurp(lessonDir() / (name + ".json"))).at("steps").size();
}

class GuiLessonTest : public GuiTest {
 protected:
  QImage shootLesson(const std::vector<std::string>& args, const std::string& size, RunResult& r,
                     nlohmann::json* described = nullptr) {
    return shootAt(size, args, described, &r, 3);
  }
};

class EveryLessonStep : public GuiLessonTest, public ::testing::WithParamInterface<std::string> {};

// Each step in presentation mode at 1280×720: exit 0, nothing on stderr (a
// mark outside its matrix, or marks on a view with no matrix, would be
// said there), the view (the window above the caption strip, whose
// narration changes anyway) differs from the step before, no two of its
// labels overlap and at most 30 % of it is empty (the 25 % holds at
// 1600×1000, below; here the caption takes up to a third of the window and
// the Reformer's several-rounds step, its stages in a row beside the LSH
// pictures, leaves 27 %).
TEST_P(EveryLessonStep, RendersWithItsMarksAndChangesTheView) {
  const std::string name = GetParam();
  const size_t n = stepCount(name);
  QImage previous;
  for (size_t i = 0; i < n; ++i) {
    RunResult r;
    nlohmann::json described;
    const QImage img = shootLesson({"--lesson", name, "--step", std::to_string(i), "--present"}, "1280x720", r, &described);
    ASSERT_EQ(r.status, 0) << name << " step " << i << ": " << r.err;
    EXPECT_EQ(r.err, "") << name << " step " << i;
    ASSERT_FALSE(img.isNull());
    EXPECT_LE(emptyShare(img, described), 0.30) << name << " step " << i;
    for (const std::string& o : overlappingTexts(described)) ADD_FAILURE() << name << " step " << i << ": " << o;
    const Stats s = analyse(img);
    EXPECT_GT(s.distinct, 50u) << name << " step " << i << ": a blank view";
    if (!previous.isNull()) {
      const QRect view(0, 0, img.width(), img.height() / 2);
      EXPECT_GT(differingPixels(previous, img, view), 400u) << name << ": step " << i << " shows the same view as step " << i - 1;
    }
    previous = img;
  }
}

INSTANTIATE_TEST_SUITE_P(Shipped, EveryLessonStep, ::testing::ValuesIn(shippedLessonNames()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string id = p.param;
                           std::replace(id.begin(), id.end(), '-', '_');
                           return id;
                         });

// Every step of every lesson in presentation mode at 1600×1000: the median
// step leaves at most 15 % of the view empty and none more than 25 %; every
// label is at least 18 px (readable from the back of a room; a formula's
// scripts 0.7 of that) and no two overlap.
TEST_F(GuiLessonTest, EveryStepFillsTheScreenWithReadableLabels) {
  std::vector<double> shares;
  for (const std::string& name : shippedLessonNames())
    for (size_t i = 0; i < stepCount(name); ++i) {
      RunResult r;
      nlohmann::json described;
      const QImage img = shootLesson({"--lesson", name, "--step", std::to_string(i), "--present"}, "1600x1000", r, &described);
      ASSERT_EQ(r.status, 0) << name << " step " << i << ": " << r.err;
      ASSERT_FALSE(img.isNull());
      ASSERT_FALSE(described.value("texts", nlohmann::json::array()).empty()) << name << " step " << i << ": no labels described";
      const double share = emptyShare(img, described);
      EXPECT_LE(share, 0.25) << name << " step " << i;
      shares.push_back(share);
      for (const std::string& t : smallTexts(described, 18)) ADD_FAILURE() << name << " step " << i << ": " << t;
      for (const std::string& o : overlappingTexts(described)) ADD_FAILURE() << name << " step " << i << ": " << o;
    }
  EXPECT_LE(median(shares), 0.15);
}

// → and Space step forward, ← and PageUp back, as a clicker sends them; the
// window then shows exactly what opening at that step shows.
TEST_F(GuiLessonTest, KeysStepThroughALesson) {
  RunResult r;
  const QImage at2 = shootLesson({"--lesson", "self-attention", "--step", "2", "--present"}, "1280x720", r);
  ASSERT_EQ(r.status, 0) << r.err;
  const QImage at1 = shootLesson({"--lesson", "self-attention", "--step", "1", "--present"}, "1280x720", r);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_GT(differingPixels(at1, at2, at1.rect()), 1000u);
  struct Walk {
    std::vector<std::string> args;
    const QImage* expected;
  };
  const std::vector<Walk> walks = {
      {{"--keys", "Right,Space"}, &at2},
      {{"--keys", "PageDown,PageDown,PageUp,PageDown"}, &at2},
      {{"--step", "3", "--keys", "Left"}, &at2},
      {{"--step", "2", "--keys", "PageUp"}, &at1},
      {{"--keys", "Left,Left,Right"}, &at1},  // ← at the first step stays there
  };
  for (const Walk& w : walks) {
    std::vector<std::string> args = {"--lesson", "self-attention", "--present"};
    args.insert(args.end(), w.args.begin(), w.args.end());
    const QImage img = shootLesson(args, "1280x720", r);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_LT(differingPixels(img, *w.expected, img.rect()), img.width() * img.height() / 500u) << ::testing::PrintToString(w.args);
  }
  // F5 from the normal window is presentation mode.
  const QImage f5 = shootLesson({"--lesson", "self-attention", "--step", "2", "--keys", "F5"}, "1280x720", r);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LT(differingPixels(f5, at2, f5.rect()), f5.width() * f5.height() / 500u);
  // Escape leaves it: the menu bar and the side panel are back.
  const QImage normal = shootLesson({"--lesson", "self-attention", "--step", "2"}, "1280x720", r);
  const QImage esc = shootLesson({"--lesson", "self-attention", "--step", "2", "--present", "--keys", "Escape"}, "1280x720", r);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LT(differingPixels(esc, normal, esc.rect()), esc.width() * esc.height() / 500u);
  EXPECT_GT(differingPixels(esc, at2, esc.rect()), esc.width() * esc.height() / 20u);
}

// Presentation mode: no menu bar, no side panel, no status bar; the view
// starts at the window's left edge and leaves at most a quarter of its area
// above the caption strip empty.
TEST_F(GuiLessonTest, PresentationModeGivesTheViewTheWindow) {
  for (const std::string size : {"1600x1000", "1280x720"}) {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"--lesson", "self-attention", "--step", "0", "--present"},
             {"--lesson", "induction-heads", "--step", "0", "--present"},
             {"--variant", "multi-head", "--present"}}) {
      RunResult r;
      nlohmann::json described;
      const QImage img = shootLesson(args, size, r, &described);
      ASSERT_EQ(r.status, 0) << r.err;
      // The menu bar's colour (MenuBarBg 0.15, 0.16, 0.19) is gone from the top rows.
      size_t menu = 0;
      for (int x = 0; x < img.width(); ++x) menu += near(img.pixel(x, 4), Rgb8{38, 41, 48}, 4);
      EXPECT_LT(menu, static_cast<size_t>(img.width() / 4)) << size << " " << args[1];
      // No side panel: its border is not found, the view starts at the left edge.
      EXPECT_EQ(viewArea(img).left(), 0) << size << " " << args[1];
      EXPECT_LE(emptyShare(img, described), 0.25) << size << " " << args[1];
    }
  }
}

}  // namespace
}  // namespace attn::test
