// Colour scales and ticks shared by the views and the figures
// (widgets/value_range.h): each scale mode against its formula, percentile
// clipping against a sorted copy, and signed ranges' ticks symmetric about 0.
#include "widgets/value_range.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <cmath>
#include <vector>

namespace attn {
namespace {

TEST(ScaleToUnit, EachModeFollowsItsFormula) {
  ValueRange r{0.0f, 2.0f, false};
  for (const float v : {0.0f, 0.02f, 0.5f, 1.0f, 2.0f}) EXPECT_FLOAT_EQ(scaleToUnit(r, v), v / 2.0f) << v;
  r.mode = ScaleMode::Power;
  r.gamma = 0.5f;
  for (const float v : {0.0f, 0.02f, 0.5f, 1.0f, 2.0f}) EXPECT_FLOAT_EQ(scaleToUnit(r, v), std::sqrt(v / 2.0f)) << v;
  r.mode = ScaleMode::Log;
  r.decades = 3.0f;
  EXPECT_FLOAT_EQ(scaleToUnit(r, 2.0f), 1.0f);
  EXPECT_NEAR(scaleToUnit(r, 0.2f), 2.0f / 3.0f, 1e-6);   // one decade down
  EXPECT_NEAR(scaleToUnit(r, 0.02f), 1.0f / 3.0f, 1e-6);  // two
  EXPECT_FLOAT_EQ(scaleToUnit(r, 0.002f), 0.0f);          // three: the bottom
  EXPECT_FLOAT_EQ(scaleToUnit(r, 1e-9f), 0.0f);
  EXPECT_FLOAT_EQ(scaleToUnit(r, 0.0f), 0.0f);
}

TEST(ScaleToUnit, SignedRangesBendEachSideAboutTheMiddle) {
  ValueRange r{-4.0f, 4.0f, true};
  r.mode = ScaleMode::Power;
  r.gamma = 0.5f;
  EXPECT_FLOAT_EQ(scaleToUnit(r, 0.0f), 0.5f);
  EXPECT_FLOAT_EQ(scaleToUnit(r, 1.0f), 0.5f + 0.5f * 0.5f);
  EXPECT_FLOAT_EQ(scaleToUnit(r, -1.0f), 0.5f - 0.5f * 0.5f);
  EXPECT_FLOAT_EQ(scaleToUnit(r, 9.0f), 1.0f);
  EXPECT_FLOAT_EQ(scaleToUnit(r, -9.0f), 0.0f);
}

TEST(WithScale, AutoIsLogFromManyKeysOnAndPercentileClipsTheTop) {
  const ValueRange base{0.0f, 1.0f, false};
  EXPECT_EQ(withScale(base, {}, kLogScaleKeys - 1, nullptr, 0).mode, ScaleMode::Linear);
  EXPECT_EQ(withScale(base, {}, kLogScaleKeys, nullptr, 0).mode, ScaleMode::Log);
  // 1000 values 0.001 … 1 (and zeros, which are left out): the 90th percentile of the non-zero ones.
  std::vector<float> values;
  for (int i = 1; i <= 1000; ++i) values.push_back(static_cast<float>(i) / 1000.0f);
  values.insert(values.end(), 500, 0.0f);
  std::shuffle(values.begin(), values.end(), std::mt19937(7));
  ColorScale s;
  s.kind = ScaleKind::Percentile;
  s.percentile = 90.0f;
  const ValueRange clipped = withScale(base, s, 16, values.data(), static_cast<int64_t>(values.size()));
  EXPECT_EQ(clipped.mode, ScaleMode::Linear);
  EXPECT_NEAR(clipped.hi, 0.9f, 0.002f);
  EXPECT_FLOAT_EQ(clipped.lo, 0.0f);
  // Signed: both ends clipped alike.
  const ValueRange signed_clip = withScale({-1.0f, 1.0f, true}, s, 16, values.data(), static_cast<int64_t>(values.size()));
  EXPECT_FLOAT_EQ(signed_clip.lo, -signed_clip.hi);
}

TEST(Ticks, SignedRangesGetSymmetricTicksWithAtLeastOneEachSide) {
  for (const float m : {0.003f, 0.7f, 1.0f, 5.0f, 13.0f, 250.0f})
    for (const int max_ticks : {2, 3, 5, 7}) {
      const std::vector<float> t = niceTicks(-m, m, max_ticks);
      ASSERT_GE(t.size(), 3u) << m << " " << max_ticks;
      EXPECT_EQ(t[t.size() / 2], 0.0f);
      for (size_t i = 0; i < t.size(); ++i) {
        EXPECT_FLOAT_EQ(t[i], -t[t.size() - 1 - i]) << m;
        EXPECT_LE(std::abs(t[i]), m * (1 + 1e-5f)) << m;
      }
    }
}

TEST(Ticks, LogScaleTicksAreDecadesBelowTheTop) {
  ValueRange r{0.0f, 0.5f, false};
  r.mode = ScaleMode::Log;
  r.decades = 3.0f;
  const std::vector<float> t = scaleTicks(r, 6);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_FLOAT_EQ(t[0], 0.0f);
  EXPECT_NEAR(t[1], 0.0005f, 1e-9);
  EXPECT_NEAR(t[4], 0.5f, 1e-7);
  for (size_t i = 1; i < t.size(); ++i) EXPECT_NEAR(scaleToUnit(r, t[i]), (i - 1) / 3.0, 1e-5);
}

}  // namespace
}  // namespace attn
