// The view registry (widgets/views/view.h): every view a variant lists is a
// registered view, names are unique, lookups refuse unknown names in one
// line; and the one down-sampling rule (poolDense) never hides a peak.
#include "widgets/views/view.h"

#include "engine/error.h"
#include "engine/registry.h"
#include "engine/sparse.h"

#include <gtest/gtest.h>

#include <cmath>
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

}  // namespace
}  // namespace attn
