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

// The model table's plot: every point at its scores inside the plot, labels
// beside their points, inside the plot and clear of each other.
TEST(ScatterLayout, PointsAtTheirScoresLabelsInsideAndApart) {
  const Canvas c = test::monoCanvas(14);
  std::vector<ScatterPoint> points;
  for (int i = 0; i < 8; ++i)
    points.push_back({0.1f * static_cast<float>(i), i == 3 ? 0.9f : 0.02f, headColor(i / 4), headLabel(i / 4, i % 4)});
  points.push_back({0.105f, 0.02f, headColor(1), "L1 H9"});  // on top of another: its label must give way
  Primitives prims;
  const ScatterLayout g = scatterPrimitives(prims, c, {0, 0, 600, 400}, points, 1.0f, 1.0f, "previous-token", "induction",
                                            {{headColor(0), "layer 0"}, {headColor(1), "layer 1"}});
  ASSERT_EQ(g.sx.size(), points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_NEAR(g.sx[i], g.plot.x + points[i].x * g.plot.w, 0.01f);
    EXPECT_NEAR(g.sy[i], g.plot.bottom() - points[i].y * g.plot.h, 0.01f);
    EXPECT_EQ(g.pointAt(g.sx[i] + 1, g.sy[i], 3), static_cast<int64_t>(i)) << i;
  }
  std::vector<Box> labels;
  for (const Primitive& p : prims)
    if (p.kind == Primitive::Kind::Text && p.text.size() == 5 && p.text[0] == 'L') {
      const float w = c.textWidth(p.text, p.size);
      labels.push_back({p.x0, p.y0 - p.size * 0.65f, w, p.size * 1.3f});
    }
  EXPECT_GE(labels.size(), 6u) << "most points are labelled";
  EXPECT_LT(labels.size(), points.size()) << "a label under another point's gives way";
  for (size_t a = 0; a < labels.size(); ++a) {
    EXPECT_GE(labels[a].x, g.plot.x);
    EXPECT_LE(labels[a].right(), g.plot.right() + 0.01f);
    for (size_t b = 0; b < a; ++b)
      EXPECT_FALSE(labels[a].x < labels[b].right() && labels[b].x < labels[a].right() && labels[a].y < labels[b].bottom() &&
                   labels[b].y < labels[a].bottom())
          << "labels " << a << " and " << b << " overlap";
  }
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
