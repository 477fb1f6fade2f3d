// The view registry (widgets/views/view.h): every view a variant lists is a
// registered view, names are unique, lookups refuse unknown names in one
// line; and the one down-sampling rule (poolDense) never hides a peak.
#include "widgets/views/view.h"

#include "engine/error.h"
#include "tests/app_test_support.h"
#include "engine/registry.h"
#include "engine/sparse.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <set>

namespace attn {
namespace {

TEST(ViewRegistry, EveryVariantsViewIsRegisteredAndNamesAreUnique) {
  std::set<std::string> names;
  for (const ViewInfo* v : viewRegistry()) {
    ASSERT_NE(v, nullptr);
    EXPECT_TRUE(names.insert(v->name).second) << "two views named " << v->name;
    EXPECT_TRUE(v->layout && v->height && v->refusal) << v->name;
    EXPECT_FALSE(v->help.empty()) << v->name;
    EXPECT_EQ(findView(v->name), v);
  }
  EXPECT_GE(names.size(), 8u);
  for (const VariantInfo& info : variants()) {
    ASSERT_FALSE(info.views.empty()) << info.name;
    for (const std::string& view : info.views) EXPECT_NE(findView(view), nullptr) << info.name << " lists '" << view << "'";
  }
}

TEST(ViewRegistry, UnknownViewIsRefusedNamingTheFlagAndTheViews) {
  EXPECT_EQ(findView("heatmapp"), nullptr);
  try {
    viewOrThrow("heatmapp", "--view");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--view: unknown view 'heatmapp'"), std::string::npos) << what;
    EXPECT_NE(what.find("walkthrough"), std::string::npos) << what;
  }
}

// A 1000 × 1000 matrix with one peak, shrunk to 100 × 100: the block that
// holds it shows it (keeping every 10th row and column would show 0), and a
// negative extreme of a signed matrix survives as itself.
TEST(PoolDense, BlockExtremesNeverHideAPeak) {
  Mat m = Mat::Constant(1000, 1000, 0.001f);
  m(523, 787) = 0.9f;
  m(101, 3) = -0.7f;
  const Mat pooled = poolDense(m, nullptr, 100, 100, std::nanf(""));
  ASSERT_EQ(pooled.rows(), 100);
  ASSERT_EQ(pooled.cols(), 100);
  EXPECT_FLOAT_EQ(pooled(52, 78), 0.9f);
  EXPECT_FLOAT_EQ(pooled(10, 0), -0.7f);
  EXPECT_FLOAT_EQ(pooled(0, 0), 0.001f);
  EXPECT_FLOAT_EQ(pooled.maxCoeff(), 0.9f);
  // Masked cells are left out: a block with nothing left is `empty`.
  Mat mask = Mat::Ones(1000, 1000);
  mask.block(0, 0, 10, 10).setZero();
  mask(523, 787) = 0;
  const Mat masked = poolDense(m, &mask, 100, 100, std::nanf(""));
  EXPECT_TRUE(std::isnan(masked(0, 0)));
  EXPECT_FLOAT_EQ(masked(52, 78), 0.001f);
  // A matrix smaller than the device: cell for cell.
  const Mat small = poolDense(m.block(0, 0, 7, 5), nullptr, 100, 100, 0.0f);
  EXPECT_EQ(small.rows(), 7);
  EXPECT_EQ(small.cols(), 5);
}

// "L1 H2", as the model's views name a head.
std::string headLabel(int layer, int head) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "L%d H%d", layer, head);
  return buf;
}

// The model table's plot: every point at its scores inside the plot; every
// label reads as its own point's (the mark rule: nearer its dot than any
// other, over none, or on a leader to it), inside the plot and clear of the
// other labels; a point left without a label is named over the plot.
TEST(ScatterLayout, LabelsNameTheirOwnPointsOrAreListed) {
  const Canvas c = test::monoCanvas(14);
  std::vector<ScatterPoint> points;
  for (int i = 0; i < 8; ++i)
    points.push_back({0.1f * static_cast<float>(i), i == 3 ? 0.9f : 0.02f, headColor(i / 4), headLabel(i / 4, i % 4)});
  points.push_back({0.105f, 0.02f, headColor(1), "L1 H9"});  // on top of another
  for (int i = 0; i < 6; ++i)  // a cluster near the origin, as a small model's heads sit
    points.push_back({0.01f * static_cast<float>(i % 3), 0.012f * static_cast<float>(i / 3), headColor(2), headLabel(2, i)});
  for (const Box area : {Box{0, 0, 600, 400}, Box{0, 0, 360, 220}}) {
    Primitives prims;
    Scatter sc{points, {{headColor(0), "layer 0"}, {headColor(1), "layer 1"}}, "previous-token", "induction"};
    const ScatterLayout g = scatterPrimitives(prims, c, area, sc);
    ASSERT_EQ(g.sx.size(), points.size());
    for (size_t i = 0; i < points.size(); ++i) {
      EXPECT_NEAR(g.sx[i], g.plot.x + points[i].x * g.plot.w, 0.01f);
      EXPECT_NEAR(g.sy[i], g.plot.bottom() - points[i].y * g.plot.h, 0.01f);
    }
    MarkSheet sheet;
    recordMarks(prims, c, sheet);
    EXPECT_EQ(sheet.marks.size(), points.size());
    for (const std::string& v : markRuleViolations(sheet)) ADD_FAILURE() << area.w << "×" << area.h << ": " << v;
    std::string note;  // the line(s) naming the points left unlabelled, over the plot
    for (const Primitive& p : prims)
      if (p.kind == Primitive::Kind::Text && p.role == Role::Muted && p.y0 < g.plot.y) note += p.text + " ";
    for (const ScatterPoint& q : points) {
      const bool labelled = std::any_of(sheet.labels.begin(), sheet.labels.end(), [&](const MarkSheet::Label& l) { return l.text == q.label; });
      EXPECT_TRUE(labelled != (note.find(q.label) != std::string::npos)) << q.label << ": labelled or listed, once";
    }
    EXPECT_GE(sheet.labels.size(), 6u) << "most points are labelled";
    for (size_t a = 0; a < sheet.labels.size(); ++a) {
      const Box& la = sheet.labels[a].box;
      EXPECT_GE(la.x, g.plot.x);
      EXPECT_LE(la.right(), g.plot.right() + 0.01f);
      for (size_t b = 0; b < a; ++b) {
        const Box& lb = sheet.labels[b].box;
        EXPECT_FALSE(la.x < lb.right() && lb.x < la.right() && la.y < lb.bottom() && lb.y < la.bottom())
            << "labels " << sheet.labels[a].text << " and " << sheet.labels[b].text << " overlap";
      }
    }
  }
}

// The rule itself, on the head table's scatter as it was drawn before
// (labels to the right of their dots, whatever lay there): "L0 H1" over L1
// H2's dot and a label nearer another dot than its own are both reported; a
// label on a leader to its own dot is not.
TEST(MarkRules, ReportLabelsThatNameTheWrongMark) {
  MarkSheet s;
  s.marks = {{"d[L0 H1]", {100, 100, 8, 8}, 0}, {"d[L1 H2]", {125, 100, 8, 8}, 0}, {"d[L0 H3]", {100, 160, 8, 8}, 0}};
  s.labels = {{"L0 H1", "d[L0 H1]", {112, 98, 40, 12}},   // right of its dot, over L1 H2's
              {"L1 H2", "d[L1 H2]", {80, 140, 40, 12}},   // nearer L0 H3's dot than its own
              {"L0 H3", "d[L0 H3]", {150, 200, 40, 12}}};  // far off, on a leader
  s.leaders = {{"d[L0 H3]", 150, 200, 106, 166}};
  const std::vector<std::string> v = markRuleViolations(s);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_NE(v[0].find("label 'L0 H1' (of d[L0 H1]) lies as near d[L1 H2]"), std::string::npos) << v[0];
  EXPECT_NE(v[1].find("label 'L0 H1' (of d[L0 H1]) covers d[L1 H2]"), std::string::npos) << v[1];
  EXPECT_NE(v[2].find("label 'L1 H2' (of d[L1 H2]) lies as near d[L0 H3]"), std::string::npos) << v[2];
  s.leaders.clear();  // without its leader the far label is still nearest its own dot: no break
  s.labels.erase(s.labels.begin(), s.labels.begin() + 2);
  s.labels.push_back({"X", "d[nothing]", {0, 0, 5, 5}});
  const std::vector<std::string> w = markRuleViolations(s);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("not drawn"), std::string::npos) << w[0];
}

// A log colour bar's labels never touch: its 0 and its lowest decade are a
// hair apart at the bar's foot, so one of them goes.
TEST(ColorbarLayout, LogScaleLabelsKeepApart) {
  const Canvas c = test::monoCanvas(14);
  for (const float decades : {3.0f, 6.0f}) {
    ValueRange r{0.0f, 0.5f, false, ScaleMode::Log, 0.5f, decades};
    Primitives prims;
    colorbarPrimitives(prims, 0, 0, 12, 180, Colormap::Viridis, r, "", 12, c.measure(12));
    std::vector<float> ys;
    for (const Primitive& p : prims)
      if (p.kind == Primitive::Kind::Text) ys.push_back(p.y0);
    ASSERT_GE(ys.size(), 2u) << decades;
    for (size_t a = 0; a < ys.size(); ++a)
      for (size_t b = 0; b < a; ++b) EXPECT_GE(std::abs(ys[a] - ys[b]), 12 * 1.1f) << decades << " decades: labels " << a << ", " << b;
  }
}

}  // namespace
}  // namespace attn
