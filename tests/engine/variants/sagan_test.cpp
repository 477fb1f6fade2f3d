// SAGAN self-attention (Zhang et al. 2019, eq. 1–3) against a plain-loop
// reference written here, with and without the 2×2 max-pooling of keys and
// values; the default scene; and the refusals of bad x and image files.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/npy.h"
#include "engine/variants/sagan.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

namespace attn {
namespace {

using ref::DMat;

// sagan reads its own picture or file; the sequence input is not used.
Inputs saganInputs() { return ref::gaussianInputs(1, 4, 4, 8, 1); }

struct SaganRef {
  DMat s, beta, o, y;  // s, β [N, N_keys]; o, y [C, N]
};

// f = W_f x, g = W_g x, h = W_h x; keys (f, h) max-pooled over 2×2 windows
// clipped at the edges when `pool`; s_ij = f_iᵀ g_j; β_{j,i} = softmax_i;
// o_j = Σ_i β_{j,i} h_i; y = x + γ o. Loops only.
SaganRef saganRef(const Mat& x, int64_t height, int64_t width, const Mat& w_f, const Mat& w_g, const Mat& w_h,
                  double gamma, bool pool) {
  const int64_t c = x.rows(), n = x.cols(), c_bar = w_f.rows();
  auto conv = [&](const Mat& w) {
    DMat out(w.rows(), n);
    for (int64_t k = 0; k < w.rows(); ++k)
      for (int64_t p = 0; p < n; ++p)
        for (int64_t ch = 0; ch < c; ++ch) out(k, p) += double(w(k, ch)) * x(ch, p);
    return out;
  };
  DMat f = conv(w_f), g = conv(w_g), h = conv(w_h);
  if (pool) {
    const int64_t kh = (height + 1) / 2, kw = (width + 1) / 2;
    auto maxPool = [&](const DMat& m) {
      DMat out(m.rows, kh * kw);
      for (int64_t r = 0; r < m.rows; ++r)
        for (int64_t a = 0; a < kh; ++a)
          for (int64_t b = 0; b < kw; ++b) {
            double best = -std::numeric_limits<double>::infinity();
            for (int64_t yy = 2 * a; yy < 2 * a + 2 && yy < height; ++yy)
              for (int64_t xx = 2 * b; xx < 2 * b + 2 && xx < width; ++xx) best = std::max(best, m(r, yy * width + xx));
            out(r, a * kw + b) = best;
          }
      return out;
    };
    f = maxPool(f);
    h = maxPool(h);
  }
  const int64_t nk = f.cols;
  SaganRef r;
  r.s = DMat(n, nk);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < nk; ++i)
      for (int64_t k = 0; k < c_bar; ++k) r.s(j, i) += f(k, i) * g(k, j);
  r.beta = ref::softmaxRows(r.s);
  r.o = DMat(c, n);
  r.y = DMat(c, n);
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < nk; ++i) r.o(ch, j) += r.beta(j, i) * h(ch, i);
      r.y(ch, j) = x(ch, j) + gamma * r.o(ch, j);
    }
  return r;
}

Mat asMat(const Array& a) { return Eigen::Map<const Mat>(a.data.data(), a.shape[0], a.size() / a.shape[0]); }

class SaganReference : public ::testing::TestWithParam<bool> {};

TEST_P(SaganReference, MatchesPlainLoopsOnAGivenFeatureMap) {
  const bool pool = GetParam();
  // Odd height and width: the pooled edge windows are clipped (⌈5/2⌉ × ⌈7/2⌉ = 12 keys).
  constexpr int64_t kC = 6, kH = 5, kW = 7;
  const Mat x = randomNormal(kC, kH * kW, 11, "x");
  const ref::TempPath file("sagan_x.npy");
  writeNpy(file.path, Array{{kC, kH, kW}, std::vector<float>(x.data(), x.data() + x.size())});
  const Result r = ref::run("sagan", saganInputs(), {{"x", file.path.string()}, {"pool", pool ? "true" : "false"},
                                                {"c_bar", "3"}, {"gamma", "0.7"}, {"tie_fg", "false"}});
  const int64_t nk = pool ? 12 : kH * kW;
  ASSERT_EQ(r.weights.size(), 1u);
  ASSERT_EQ(r.weights[0].rows(), kH * kW);
  ASSERT_EQ(r.weights[0].cols(), nk);
  EXPECT_EQ(r.image_width, kW);
  EXPECT_EQ(r.key_image_width, pool ? 4 : kW);
  const Mat& w_f = ref::recorded(r, "w_f");
  const Mat& w_g = ref::recorded(r, "w_g");
  const Mat& w_h = ref::recorded(r, "w_h");
  EXPECT_EQ(w_f.rows(), 3);
  EXPECT_EQ(w_f.cols(), kC);
  EXPECT_NE(w_f, w_g);
  EXPECT_EQ(w_h.rows(), kC);
  EXPECT_EQ(ref::recorded(r, "x"), x);
  EXPECT_EQ(r.input_shapes.at("x"), (std::vector<int64_t>{kC, kH, kW}));

  const SaganRef want = saganRef(x, kH, kW, w_f, w_g, w_h, 0.7, pool);
  ref::expectClose(r.scores[0], want.s, ref::scaledTol(want.s, 1e-5), "s");
  ref::expectClose(r.weights[0], want.beta, 1e-5, "beta");
  const Extra* o = r.findExtra("o");
  const Extra* y = r.findExtra("y");
  ASSERT_TRUE(o && y);
  EXPECT_EQ(o->value.shape, (std::vector<int64_t>{kC, kH, kW}));
  EXPECT_EQ(y->value.shape, (std::vector<int64_t>{kC, kH, kW}));
  ref::expectClose(asMat(o->value), want.o, ref::scaledTol(want.o, 1e-5), "o");
  ref::expectClose(asMat(y->value), want.y, ref::scaledTol(want.y, 1e-5), "y");
  ref::expectClose(r.output, ref::transpose(want.y), ref::scaledTol(want.y, 1e-5), "output = yᵀ");

  // Invariants: each query pixel's map is a distribution over the keys.
  for (int64_t j = 0; j < r.weights[0].rows(); ++j) {
    EXPECT_NEAR(r.weights[0].row(j).sum(), 1.0f, 1e-5f) << "row " << j;
    EXPECT_GE(r.weights[0].row(j).minCoeff(), 0.0f) << "row " << j;
  }
  // γ = 0 leaves x as it is.
  const Result zero = ref::run("sagan", saganInputs(), {{"x", file.path.string()}, {"pool", pool ? "true" : "false"},
                                                   {"gamma", "0"}});
  EXPECT_EQ(asMat(zero.findExtra("y")->value), x);
}

INSTANTIATE_TEST_SUITE_P(Pool, SaganReference, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Pooled" : "Full"; });

// Issue 40's case, C = 16 channels over 6 × 8 pixels with the defaults
// (C̄ = 2, W_g = W_f, γ = 1), full and pooled, over seeds: s, o and y within
// 1e-5 of their largest magnitude from the double loops, β within 1e-5. The
// float engine is measured at ~2e-7 of max |y| here (f, g, h and o are sums of
// 16 or 48 float products). Against each entry's own size there is no float
// bound: an entry of y that cancels to near 0 (x_j + γ o_j, terms of size 1)
// keeps its terms' absolute error, ~1e-7, and seed 1 has one where that is
// 1e-4 of the entry.
TEST(Sagan, SixteenChannelsOnSixByEightAreWithinOneInTenToTheFiveOfDouble) {
  constexpr int64_t kC = 16, kH = 6, kW = 8;
  for (const uint64_t seed : {1, 2, 3, 11})
    for (const bool pool : {false, true}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + (pool ? " pooled" : " full"));
      const Mat x = randomNormal(kC, kH * kW, seed, "x");
      const ref::TempPath file("sagan_x16.npy");
      writeNpy(file.path, Array{{kC, kH, kW}, std::vector<float>(x.data(), x.data() + x.size())});
      const Result r = ref::run("sagan", saganInputs(), {{"x", file.path.string()}, {"pool", pool ? "true" : "false"}});
      const Mat& w_f = ref::recorded(r, "w_f");
      ASSERT_EQ(w_f.rows(), 2);  // C̄ = C/8
      const SaganRef want = saganRef(x, kH, kW, w_f, ref::recorded(r, "w_g"), ref::recorded(r, "w_h"), 1.0, pool);
      ref::expectClose(r.scores[0], want.s, 1e-5 * ref::maxAbs(want.s), "s");
      ref::expectClose(r.weights[0], want.beta, 1e-5, "beta");
      ref::expectClose(asMat(r.findExtra("o")->value), want.o, 1e-5 * ref::maxAbs(want.o), "o");
      ref::expectClose(asMat(r.findExtra("y")->value), want.y, 1e-5 * ref::maxAbs(want.y), "y");
      ref::expectClose(r.output, ref::transpose(want.y), 1e-5 * ref::maxAbs(want.y), "output = yᵀ");
    }
}

TEST(Sagan, MaxPoolTakesTheLargestOfEachClippedWindow) {
  // One channel, 3 × 3: windows {0,1,3,4}, {2,5}, {6,7}, {8}.
  Mat m(1, 9);
  m << 1, 5, 2, 3, 4, 9, 7, 0, 6;
  const Mat p = maxPool2x2(m, 3, 3);
  ASSERT_EQ(p.cols(), 4);
  EXPECT_EQ(p(0, 0), 5);
  EXPECT_EQ(p(0, 1), 9);
  EXPECT_EQ(p(0, 2), 7);
  EXPECT_EQ(p(0, 3), 6);
}

TEST(Sagan, DefaultSceneIsAThirtyTwoPixelPictureWithFourQueries) {
  const Result r = ref::run("sagan", saganInputs());
  const Extra* pic = r.firstExtra(ExtraKind::Picture);
  ASSERT_NE(pic, nullptr);
  EXPECT_EQ(pic->value.shape, (std::vector<int64_t>{32, 32, 3}));
  EXPECT_EQ(pic->value.data, defaultSaganScene().data);
  EXPECT_EQ(r.queries(), 32 * 32);
  EXPECT_EQ(r.keys(), 32 * 32);
  EXPECT_EQ(r.image_width, 32);
  ASSERT_EQ(r.image_queries.size(), 4u);
  for (const int64_t q : r.image_queries) EXPECT_TRUE(q >= 0 && q < 32 * 32) << q;
  // C = 32 channels, C̄ = C/8; W_g = W_f by default.
  EXPECT_EQ(ref::recorded(r, "x").rows(), 32);
  EXPECT_EQ(ref::recorded(r, "w_f").rows(), 4);
  EXPECT_EQ(ref::recorded(r, "w_g"), ref::recorded(r, "w_f"));
  // Pooled: a quarter of the keys, on a 16-cell-wide grid.
  const Result pooled = ref::run("sagan", saganInputs(), {{"pool", "true"}});
  EXPECT_EQ(pooled.keys(), 16 * 16);
  EXPECT_EQ(pooled.key_image_width, 16);
  // The maps are not uniform: the red disc's centre attends to the disc more than to the sky.
  const Mat& beta = r.weights[0];
  const int64_t disc = 11 * 32 + 9, disc_edge = 11 * 32 + 5, sky = 1 * 32 + 30;
  EXPECT_GT(beta(disc, disc_edge), beta(disc, sky));
}

TEST(Sagan, BadFilesAreRefusedNamingTheFileAndWhatWasExpected) {
  const ref::TempPath flat("sagan_flat.npy"), big("sagan_big.npy"), junk("sagan_junk.png"), huge("sagan_huge.png");
  writeNpy(flat.path, Array{{4, 8}, std::vector<float>(32, 0.5f)});
  ref::expectInputError([&] { ref::run("sagan", saganInputs(), {{"x", flat.path.string()}}); },
                        {flat.path.string() + " (x)", "[C, H, W]", "[4, 8]"});
  writeNpy(big.path, Array{{1, 200, 200}, std::vector<float>(40000, 0.5f)});
  ref::expectInputError([&] { ref::run("sagan", saganInputs(), {{"x", big.path.string()}}); },
                        {big.path.string() + " (x)", "at most 16384"});
  std::ofstream(junk.path, std::ios::binary) << "this is not a picture";
  ref::expectInputError([&] { ref::run("sagan", saganInputs(), {{"image", junk.path.string()}}); },
                        {junk.path.string() + " (image)", "expected a PNG or JPEG"});
  // A PNG header claiming 4000 × 3000 pixels: refused from the header, nothing decoded.
  const unsigned char header[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                                  0, 0, 0x0f, 0xa0, 0, 0, 0x0b, 0xb8, 8, 2, 0, 0, 0, 0, 0, 0, 0};
  std::ofstream(huge.path, std::ios::binary).write(reinterpret_cast<const char*>(header), sizeof header);
  ref::expectInputError([&] { ref::run("sagan", saganInputs(), {{"image", huge.path.string()}}); },
                        {huge.path.string() + " (image)", "4000 × 3000", "at most 16384"});
  // 20,000 channels of one pixel: an 80 kB file whose W_h [C, C] would take 1.6 GB, refused before allocating.
  const ref::TempPath deep("sagan_deep.npy");
  writeNpy(deep.path, Array{{20000, 1, 1}, std::vector<float>(20000, 0.5f)});
  {
    const ref::ScopedEnv limit("ATTNLAB_MEMORY_LIMIT_MB", "100");
    ref::expectInputError([&] { ref::run("sagan", saganInputs(), {{"x", deep.path.string()}}); },
                          {"sagan: C = 20000 channels", "more than the 100.0 MiB"});
  }
  ref::expectInputError([&] { ref::run("sagan", saganInputs(), {{"image", "/nonexistent/cat.png"}}); },
                        {"/nonexistent/cat.png (image)", "no such file"});
  ref::expectInputError(
      [&] { ref::run("sagan", saganInputs(), {{"image", huge.path.string()}, {"x", flat.path.string()}}); },
      {"either x", "not both"});
}

}  // namespace
}  // namespace attn
