// Sparse Transformer (strided, fixed) and Image Transformer local (1D, 2D)
// patterns against plain-loop rules written here from the papers, at several
// (n, ℓ, c, block) values including n not a multiple of ℓ, c = ℓ, ℓ > n and
// blocks larger than the image; the sparse compute against masked dense
// attention in double; rows sum to 1; thread-count independence; bad
// parameters.
#include "engine/attention_math.h"
#include "engine/parallel.h"
#include "engine/sparse_attention.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>

#include <omp.h>

namespace attn {
namespace {

using ref::DMat;

// bits(i, j): bit 0 = first set admits j for query i, bit 1 = second set.
using Rule = std::function<int(int64_t i, int64_t j)>;

Rule stridedRule(int64_t l, bool openai) {
  return [=](int64_t i, int64_t j) {
    if (j > i) return 0;
    const int64_t lo = openai ? i - l + 1 : i - l;
    return (j >= lo ? 1 : 0) | ((i - j) % l == 0 ? 2 : 0);
  };
}

Rule fixedRule(int64_t l, int64_t c) {
  return [=](int64_t i, int64_t j) {
    if (j > i) return 0;
    return (j / l == i / l ? 1 : 0) | (j % l >= l - c ? 2 : 0);
  };
}

Rule local1dRule(int64_t lq, int64_t lm) {
  return [=](int64_t i, int64_t j) {
    const int64_t start = (i / lq) * lq;
    if (j > i || j < start - lm) return 0;
    return j >= start ? 1 : 2;
  };
}

// local-2d written the long way: number every pixel by its generation step
// (blocks in raster order over the block grid, raster order inside a block),
// then test rectangle membership directly.
Rule local2dRule(int64_t len, int64_t w, int64_t bh, int64_t bw, int64_t fh, int64_t fw, bool blocks) {
  const int64_t h = len / w;
  bh = std::min(bh, h);
  bw = std::min(bw, w);
  std::vector<int64_t> step(static_cast<size_t>(len));
  int64_t n = 0;
  for (int64_t by = 0; by < h; by += bh)
    for (int64_t bx = 0; bx < w; bx += bw)
      for (int64_t y = by; y < std::min(h, by + bh); ++y)
        for (int64_t x = bx; x < std::min(w, bx + bw); ++x) step[static_cast<size_t>(y * w + x)] = n++;
  return [=](int64_t i, int64_t j) {
    const int64_t yi = i / w, xi = i % w, yj = j / w, xj = j % w;
    const int64_t r0 = yi - yi % bh, c0 = xi - xi % bw;  // query block corner
    const bool in_block = yj >= r0 && yj < r0 + bh && xj >= c0 && xj < c0 + bw;
    const bool in_memory = yj >= r0 - fh && yj < r0 + bh && xj >= c0 - fw && xj < c0 + bw + fw;
    const bool before = blocks ? step[static_cast<size_t>(j)] <= step[static_cast<size_t>(i)] : j <= i;
    if (!in_memory || !before) return 0;
    return in_block ? 1 : 2;
  };
}

// Head h's pattern must be {j : rule(i, j) & which} with sets = rule(i, j).
void expectPattern(const SparseRows& s, int64_t n, const Rule& rule, int which, const std::string& what) {
  ASSERT_EQ(s.rows, n) << what;
  ASSERT_EQ(s.cols, n) << what;
  ASSERT_EQ(s.indptr.size(), static_cast<size_t>(n + 1)) << what;
  ASSERT_EQ(s.sets.size(), s.indices.size()) << what;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> keys;
    std::vector<int> bits;
    for (int64_t j = 0; j < n; ++j)
      if (rule(i, j) & which) {
        keys.push_back(j);
        bits.push_back(rule(i, j));
      }
    ASSERT_EQ(s.rowEnd(i) - s.rowBegin(i), static_cast<int64_t>(keys.size())) << what << " row " << i;
    for (size_t e = 0; e < keys.size(); ++e) {
      const size_t at = static_cast<size_t>(s.rowBegin(i)) + e;
      ASSERT_EQ(s.indices[at], keys[e]) << what << " row " << i << " entry " << e;
      ASSERT_EQ(s.sets[at], bits[e]) << what << " row " << i << " key " << keys[e];
    }
  }
}

Inputs inputs(int64_t n, int64_t d, int64_t heads, uint64_t seed = 5) {
  return ref::gaussianInputs(seed, n, n + 4, d, heads);
}

// [SECTION] Patterns against the rules
TEST(SparsePatterns, StridedBothWindowsAndAllSets) {
  struct P { int64_t n, l; };
  for (const P c : {P{12, 4}, P{13, 4}, P{10, 3}, P{7, 1}, P{5, 8}, P{30, 5}})
    for (const std::string window : {"paper", "openai"})
      for (const auto& [set, which] : std::map<std::string, int>{{"A1", 1}, {"A2", 2}, {"union", 3}}) {
        const std::string what = "n=" + std::to_string(c.n) + " ℓ=" + std::to_string(c.l) + " " + window + " " + set;
        const Result r = ref::run("sparse-strided", inputs(c.n, 8, 2),
                                  {{"stride", std::to_string(c.l)}, {"window", window}, {"set", set}});
        ASSERT_EQ(r.heads(), 2);
        for (int h = 0; h < 2; ++h) expectPattern(r.sparse[h], c.n, stridedRule(c.l, window == "openai"), which, what);
      }
}

TEST(SparsePatterns, FixedIncludingCEqualsL) {
  struct P { int64_t n, l, c; };
  for (const P p : {P{12, 4, 1}, P{13, 4, 2}, P{10, 3, 3}, P{9, 1, 1}, P{6, 8, 8}, P{31, 6, 2}})
    for (const auto& [set, which] : std::map<std::string, int>{{"A1", 1}, {"A2", 2}, {"union", 3}}) {
      const std::string what = "n=" + std::to_string(p.n) + " ℓ=" + std::to_string(p.l) + " c=" + std::to_string(p.c) + " " + set;
      const Result r = ref::run("sparse-fixed", inputs(p.n, 8, 1),
                                {{"block", std::to_string(p.l)}, {"c", std::to_string(p.c)}, {"set", set}});
      expectPattern(r.sparse[0], p.n, fixedRule(p.l, p.c), which, what);
    }
}

TEST(SparsePatterns, LayoutsChooseTheSetPerHeadAndLayer) {
  const int64_t n = 11, heads = 4;
  const Rule rule = stridedRule(3, false);
  auto run = [&](const std::map<std::string, std::string>& set) {
    std::map<std::string, std::string> s = set;
    s.insert_or_assign("stride", std::string(1, '3'));  // (s["stride"] = "3" trips a GCC 12 -Wrestrict false positive here)
    return ref::run("sparse-strided", inputs(n, 16, heads), s);
  };
  // merged: every head attends to A¹ ∪ A².
  Result r = run({{"layout", "merged"}, {"set", "A1"}});
  for (int h = 0; h < heads; ++h) expectPattern(r.sparse[h], n, rule, 3, "merged");
  // split: head h uses A^{(h mod 2)+1}.
  r = run({{"layout", "split"}});
  for (int h = 0; h < heads; ++h) expectPattern(r.sparse[h], n, rule, h % 2 == 0 ? 1 : 2, "split head " + std::to_string(h));
  // interleaved: residual block l uses A^{(l mod 2)+1}, every head.
  for (const int layer : {0, 1, 2, 3}) {
    r = run({{"layout", "interleaved"}, {"layers", "4"}, {"layer", std::to_string(layer)}});
    for (int h = 0; h < heads; ++h) expectPattern(r.sparse[h], n, rule, layer % 2 == 0 ? 1 : 2, "interleaved");
  }
  // The layer × head picture: 0 = A¹, 1 = A², 2 = A¹ ∪ A².
  r = run({{"layout", "interleaved"}, {"layers", "3"}});
  const Extra* pic = r.findExtra("layout");
  ASSERT_NE(pic, nullptr);
  ASSERT_EQ(pic->value.shape, (std::vector<int64_t>{3, heads}));
  EXPECT_EQ(pic->categories, (std::vector<std::string>{"A¹", "A²", "A¹ ∪ A²"}));
  for (int64_t l = 0; l < 3; ++l)
    for (int64_t h = 0; h < heads; ++h) EXPECT_EQ(pic->value.data[static_cast<size_t>(l * heads + h)], l % 2);
  r = run({{"layout", "split"}, {"layers", "2"}});
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t h = 0; h < heads; ++h)
      EXPECT_EQ(r.findExtra("layout")->value.data[static_cast<size_t>(l * heads + h)], h % 2);
  r = run({{"layout", "single"}, {"set", "union"}, {"layers", "1"}});
  for (const float v : r.findExtra("layout")->value.data) EXPECT_EQ(v, 2);
}

TEST(LocalPatterns, OneDimensional) {
  struct P { int64_t n, lq, lm; };
  for (const P p : {P{12, 4, 4}, P{13, 4, 2}, P{10, 3, 0}, P{9, 9, 5}, P{17, 5, 12}}) {
    const std::string what = "n=" + std::to_string(p.n) + " l_q=" + std::to_string(p.lq) + " l_m=" + std::to_string(p.lm);
    const Result r = ref::run("local-1d", inputs(p.n, 8, 2), {{"l_q", std::to_string(p.lq)}, {"l_m", std::to_string(p.lm)}});
    for (int h = 0; h < 2; ++h) expectPattern(r.sparse[h], p.n, local1dRule(p.lq, p.lm), 3, what);
    const Extra* group = r.findExtra("query_block");
    ASSERT_NE(group, nullptr);
    EXPECT_EQ(group->kind, ExtraKind::QueryGroup);
    for (int64_t i = 0; i < p.n; ++i) EXPECT_EQ(group->value.data[static_cast<size_t>(i)], i / p.lq) << what;
  }
}

TEST(LocalPatterns, TwoDimensionalBothOrdersAndClippedBlocks) {
  struct P { int64_t n, w, bh, bw, fh, fw; };
  // 4×6 images … a 3×8 block on a 4-wide image (clipped to 3×4), blocks
  // not dividing the image, flanks wider than the image, a 1-row image.
  for (const P p : {P{24, 6, 2, 2, 1, 1}, P{24, 6, 2, 3, 1, 2}, P{30, 5, 2, 2, 3, 0}, P{24, 4, 3, 8, 1, 1},
                    P{20, 4, 8, 2, 2, 9}, P{12, 12, 1, 5, 0, 2}, P{36, 6, 4, 4, 2, 2}})
    for (const std::string order : {"blocks", "raster"}) {
      const std::string what = "n=" + std::to_string(p.n) + " w=" + std::to_string(p.w) + " b=" + std::to_string(p.bh) +
                               "×" + std::to_string(p.bw) + " f=" + std::to_string(p.fh) + "," + std::to_string(p.fw) +
                               " " + order;
      const Result r = ref::run("local-2d", inputs(p.n, 8, 1),
                                {{"width", std::to_string(p.w)}, {"b_h", std::to_string(p.bh)},
                                 {"b_w", std::to_string(p.bw)}, {"f_h", std::to_string(p.fh)},
                                 {"f_w", std::to_string(p.fw)}, {"order", order}});
      EXPECT_EQ(r.image_width, p.w);
      expectPattern(r.sparse[0], p.n, local2dRule(p.n, p.w, p.bh, p.bw, p.fh, p.fw, order == "blocks"), 3, what);
    }
}

TEST(LocalPatterns, BlockLargerThanTheImageIsClipped) {
  // A 3×8 block on a 6×4 image is the 3×4 block (clipped in width).
  const Inputs in = inputs(24, 8, 1);
  const Result big = ref::run("local-2d", in, {{"width", "4"}, {"b_h", "3"}, {"b_w", "8"}});
  const Result fit = ref::run("local-2d", in, {{"width", "4"}, {"b_h", "3"}, {"b_w", "4"}});
  EXPECT_EQ(big.sparse[0].indices, fit.sparse[0].indices);
  EXPECT_EQ(big.sparse[0].indptr, fit.sparse[0].indptr);
  EXPECT_EQ(big.findExtra("query_block")->value.data, fit.findExtra("query_block")->value.data);
}

// [SECTION] Compute against masked dense attention
// Recomputes Q, K, V from x and the recorded W^q, W^k, W^v, then per head
// softmax(Q_h K_hᵀ/√d_head over the rule's mask) V_h in double.
void expectMatchesDense(const Result& r, const Inputs& in, const Rule& rule, const std::vector<int>& which,
                        const std::string& what) {
  const int64_t n = in.x.rows(), d = in.x.cols(), heads = in.heads, dh = d / heads;
  const DMat x = ref::fromMat(in.x);
  const DMat q = ref::matmul(x, ref::fromMat(ref::recorded(r, "w_q")));
  const DMat k = ref::matmul(x, ref::fromMat(ref::recorded(r, "w_k")));
  const DMat v = ref::matmul(x, ref::fromMat(ref::recorded(r, "w_v")));
  ref::expectClose(ref::recorded(r, "q"), q, ref::scaledTol(q, 1e-5), what + " q");
  DMat out(n, d);
  for (int64_t h = 0; h < heads; ++h) {
    DMat s = ref::matmulT(ref::cols(q, h * dh, dh), ref::cols(k, h * dh, dh));
    for (double& e : s.a) e /= std::sqrt(static_cast<double>(dh));
    DMat mask(n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) mask(i, j) = (rule(i, j) & which[static_cast<size_t>(h)]) ? 1.0 : 0.0;
    const DMat p = ref::softmaxRows(s, mask);
    const DMat o = ref::matmul(p, ref::cols(v, h * dh, dh));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < dh; ++c) out(i, h * dh + c) = o(i, c);
    ref::expectClose(toDenseValues(r.sparse[static_cast<size_t>(h)]), p, 2e-5, what + " sparse weights");
    ASSERT_EQ(r.weights.size(), static_cast<size_t>(heads)) << what << ": small L fills dense weights";
    ref::expectClose(r.weights[static_cast<size_t>(h)], p, 2e-5, what + " dense weights");
    ref::expectClose(r.scores[static_cast<size_t>(h)], s, ref::scaledTol(s, 2e-5), what + " scores");
  }
  ref::expectClose(r.output, out, ref::scaledTol(out, 2e-5), what + " output");
}

TEST(SparseCompute, EqualsMaskedDenseAttention) {
  const Inputs in = inputs(23, 16, 2, 9);
  expectMatchesDense(ref::run("sparse-strided", in, {{"stride", "4"}}), in, stridedRule(4, false), {3, 3}, "strided");
  expectMatchesDense(ref::run("sparse-strided", in, {{"stride", "5"}, {"window", "openai"}, {"layout", "split"}}), in,
                     stridedRule(5, true), {1, 2}, "strided openai split");
  expectMatchesDense(ref::run("sparse-fixed", in, {{"block", "4"}, {"c", "2"}, {"set", "A2"}}), in, fixedRule(4, 2),
                     {2, 2}, "fixed A2 (rows with no key)");
  expectMatchesDense(ref::run("local-1d", in, {{"l_q", "5"}, {"l_m", "3"}}), in, local1dRule(5, 3), {3, 3}, "local-1d");
  const Inputs img = inputs(24, 16, 2, 9);
  expectMatchesDense(ref::run("local-2d", img, {{"width", "6"}, {"b_h", "2"}, {"b_w", "3"}}), img,
                     local2dRule(24, 6, 2, 3, 1, 1, true), {3, 3}, "local-2d");
}

TEST(SparseCompute, RowsSumToOneAndCostsAreReported) {
  const Inputs in = inputs(40, 16, 2);
  for (const std::string name : {"sparse-strided", "sparse-fixed", "local-1d", "local-2d"}) {
    const Result r = ref::run(name, in);
    ASSERT_TRUE(r.isSparse()) << name;
    double nnz = 0;
    for (const SparseRows& s : r.sparse) {
      nnz += static_cast<double>(s.nnz());
      for (int64_t i = 0; i < s.rows; ++i) {
        if (s.rowBegin(i) == s.rowEnd(i)) continue;
        double sum = 0;
        for (int64_t e = s.rowBegin(i); e < s.rowEnd(i); ++e) sum += s.values[static_cast<size_t>(e)];
        EXPECT_NEAR(sum, 1.0, 1e-5) << name << " row " << i;
      }
    }
    EXPECT_EQ(r.findExtra("connections")->value.data[0], static_cast<float>(nnz)) << name;
    EXPECT_NEAR(r.findExtra("connections_per_query")->value.data[0], nnz / (2 * 40), 1e-4) << name;
    const double causal = 2.0 * 40 * 41 / 2;
    EXPECT_NEAR(r.findExtra("flops_ratio")->value.data[0], nnz / causal, 1e-5) << name;
    EXPECT_EQ(r.findExtra("pattern_flops")->value.data[0], static_cast<float>(4 * 8 * nnz)) << name;
    EXPECT_EQ(r.output.rows(), 40) << name;
    EXPECT_EQ(r.output.cols(), 16) << name;
    EXPECT_GT(r.image_width, 0) << name;
    EXPECT_EQ(r.set_names.size(), 2u) << name;
  }
}

TEST(SparseCompute, LargeLLeavesDenseArraysEmpty) {
  // 2 heads × 4096² > kDenseViewLimit: sparse only.
  const Inputs in = inputs(4096, 16, 2);
  const Result r = ref::run("sparse-strided", in, {{"stride", "64"}});
  EXPECT_TRUE(r.weights.empty());
  EXPECT_TRUE(r.scores.empty());
  EXPECT_EQ(r.mask.size(), 0);
  EXPECT_EQ(r.queries(), 4096);
  EXPECT_EQ(r.image_width, 64);
  expectPattern(r.sparse[1], 4096, stridedRule(64, false), 3, "L=4096");
}

TEST(SparseCompute, IndependentOfThreadCount) {
  const Inputs in = inputs(300, 16, 2);
  const int threads = std::max(2, omp_get_max_threads());
  for (const std::string name : {"sparse-strided", "sparse-fixed", "local-1d", "local-2d"}) {
    auto runOn = [&](int n) {
      const ThreadScope scope(n);
      RunContext ctx;
      ctx.adapt_threads = false;  // exactly `n`, however busy the machine is
      return ref::run(name, in, {}, ctx);
    };
    const Result one = runOn(1), many = runOn(threads);
    ASSERT_EQ(one.threads, 1) << name;
    ASSERT_EQ(many.threads, threads) << name;
    for (size_t h = 0; h < one.sparse.size(); ++h) EXPECT_EQ(one.sparse[h].values, many.sparse[h].values) << name;
    EXPECT_TRUE(one.output == many.output) << name;
  }
}

// [SECTION] Bad parameters
TEST(SparseBadInput, EachParameterGetsAClearError) {
  using ref::expectInputError;
  const Inputs in = inputs(12, 8, 2);
  expectInputError([&] { ref::run("sparse-strided", in, {{"stride", "0"}}); }, {"'stride'", "an integer in [1,"});
  expectInputError([&] { ref::run("sparse-fixed", in, {{"block", "-3"}}); }, {"'block'", "an integer in [1,"});
  expectInputError([&] { ref::run("sparse-fixed", in, {{"block", "4"}, {"c", "5"}}); },
                   {"sparse-fixed", "c must be ≤ block ℓ", "c=5 > ℓ=4"});
  expectInputError([&] { ref::run("sparse-strided", in, {{"layers", "2"}, {"layer", "2"}}); },
                   {"layer must be < layers", "layer=2"});
  expectInputError([&] { ref::run("sparse-strided", in, {{"layout", "diagonal"}}); }, {"'layout'", "interleaved"});
  expectInputError([&] { ref::run("local-1d", in, {{"l_q", "13"}}); }, {"local-1d", "l_q=13", "L=12"});
  expectInputError([&] { ref::run("local-1d", in, {{"l_m", "-1"}}); }, {"'l_m'"});
  expectInputError([&] { ref::run("local-2d", in, {{"b_h", "4"}, {"b_w", "4"}}); },
                   {"local-2d", "b_h×b_w = 4×4", "L=12"});
  expectInputError([&] { ref::run("local-2d", in, {{"width", "5"}}); }, {"local-2d", "w=5 does not divide L=12"});
  expectInputError([&] { ref::run("local-2d", in, {{"f_w", "-2"}}); }, {"'f_w'"});
}

}  // namespace
}  // namespace attn
