// Adaptive attention span and Transformer-XL against plain-loop references
// written here from the papers' formulas, plus the per-head FloatList
// parameter they use.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/variants/transformer_xl.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace attn {
namespace {

using ref::DMat;
using ref::expectInputError;

// [SECTION] FloatList parameters

const std::vector<ParamSpec>& spanSpecs() { return variantOrThrow("adaptive-span").params; }

TEST(FloatList, ParsesOneValuePerHeadAndRepeatsTheLast) {
  Params p = Params::defaults(spanSpecs());
  p.set(spanSpecs(), "z", "8, 16,32 ,64");
  EXPECT_EQ(p.getFloatList("z"), (std::vector<double>{8, 16, 32, 64}));
  EXPECT_EQ(p.floatForHead("z", 2), 32);
  EXPECT_EQ(p.floatForHead("z", 7), 64);  // heads past the list take the last value
  p.set(spanSpecs(), "z", "5");
  EXPECT_EQ(p.floatForHead("z", 3), 5);
  EXPECT_EQ(formatValue(std::vector<double>{8, 2.5}), "8,2.5");
  EXPECT_EQ(p.toJson()["z"], nlohmann::json::array({5.0}));
  const nlohmann::json spec = specToJson(*findParam(spanSpecs(), "z"));
  EXPECT_EQ(spec["type"], "float list");
  EXPECT_EQ(spec["min"], 0);
  EXPECT_TRUE(spec["default"].is_array());
}

TEST(FloatList, ErrorsNameTheElement) {
  Params p = Params::defaults(spanSpecs());
  expectInputError([&] { p.set(spanSpecs(), "z", "8,16,-3"); }, {"z: element 2 must be in 0..65536, got -3"});
  expectInputError([&] { p.set(spanSpecs(), "z", "8,,3"); }, {"z: element 1 is ''", "comma-separated numbers"});
  expectInputError([&] { p.set(spanSpecs(), "z", "8,abc"); }, {"z: element 1 is 'abc'"});
  expectInputError([&] { p.set(spanSpecs(), "z", "nan"); }, {"z: element 0"});
  expectInputError([&] { p.setValue(spanSpecs(), "z", std::vector<double>{}); }, {"'z'", "one per head"});
}

TEST(FloatList, CarriedOverAndComparedByValue) {
  Params p = Params::defaults(spanSpecs());
  p.set(spanSpecs(), "z", "1,2");
  const Params carried = carryParams(p, variantOrThrow("adaptive-span"));
  EXPECT_TRUE(carried == p);
  Params q = p;
  q.set(spanSpecs(), "z", "1,3");
  EXPECT_FALSE(q == p);
}

// [SECTION] Adaptive span

// m_z(x) = clamp((R + z − x)/R, 0, 1)
double softMask(double x, double z, double r) { return std::clamp((r + z - x) / r, 0.0, 1.0); }

// w_ij = m(i−j) e^{s_ij} / Σ over distances 1 … S; `z` [H][L] per head and query.
struct SpanRef {
  std::vector<DMat> weights;
  DMat output;
};
SpanRef spanReference(const Result& r, int64_t heads, int64_t S, double R, const std::vector<std::vector<double>>& z) {
  const DMat x = ref::fromMat(ref::recorded(r, "x"));
  const DMat q = ref::matmul(x, ref::fromMat(ref::recorded(r, "w_q")));
  const DMat k = ref::matmul(x, ref::fromMat(ref::recorded(r, "w_k")));
  const DMat v = ref::matmul(x, ref::fromMat(ref::recorded(r, "w_v")));
  const int64_t L = x.rows, dh = x.cols / heads;
  SpanRef out{{}, DMat(L, x.cols)};
  for (int64_t h = 0; h < heads; ++h) {
    DMat w(L, L);
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(static_cast<size_t>(L), 0.0);
      double mx = -1e300;
      for (int64_t j = std::max<int64_t>(0, i - S); j < i; ++j) {
        for (int64_t c = 0; c < dh; ++c) s[j] += q(i, h * dh + c) * k(j, h * dh + c);
        s[j] /= std::sqrt(static_cast<double>(dh));
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (int64_t j = std::max<int64_t>(0, i - S); j < i; ++j) {
        w(i, j) = softMask(static_cast<double>(i - j), z[h][i], R) * std::exp(s[j] - mx);
        sum += w(i, j);
      }
      for (int64_t j = 0; j < L && sum > 0; ++j) w(i, j) /= sum;
      for (int64_t j = 0; j < L; ++j)
        for (int64_t c = 0; c < dh; ++c) out.output(i, h * dh + c) += w(i, j) * v(j, h * dh + c);
    }
    out.weights.push_back(w);
  }
  return out;
}

TEST(AdaptiveSpan, MatchesPlainLoopsPerHeadSpan) {
  const Inputs in = ref::gaussianInputs(5, 150, 150, 16, 4);
  const Result r = ref::run("adaptive-span", in, {{"max_span", "12"}, {"ramp", "3"}, {"z", "2,5.5,9,30"}});
  const std::vector<double> zs = {2, 5.5, 9, 12};  // 30 is clamped to S
  std::vector<std::vector<double>> z;
  for (double zh : zs) z.push_back(std::vector<double>(150, zh));
  const SpanRef want = spanReference(r, 4, 12, 3.0, z);
  ASSERT_EQ(r.sparse.size(), 4u);
  ASSERT_EQ(r.weights.size(), 4u);  // 4·150² fits: dense copies too
  for (int h = 0; h < 4; ++h) {
    const SparseRows& s = r.sparse[h];
    ref::expectClose(toDenseValues(s), want.weights[h], 1e-5, "weights h" + std::to_string(h));
    ref::expectClose(r.weights[h], want.weights[h], 1e-5, "dense weights h" + std::to_string(h));
    EXPECT_EQ(s.rowEnd(0), 0) << "query 0 has no keys (the current token is excluded)";
    for (int64_t i = 1; i < s.rows; ++i) {
      // Every entry has m_z > 0, and every distance with m_z > 0 is an entry.
      const int64_t reach = std::min<int64_t>(i, static_cast<int64_t>(std::ceil(zs[h] + 3.0)) - 1);
      ASSERT_EQ(s.rowEnd(i) - s.rowBegin(i), std::min<int64_t>(reach, 12)) << "h" << h << " i" << i;
      double sum = 0;
      for (int64_t e = s.rowBegin(i); e < s.rowEnd(i); ++e) {
        sum += s.values[e];
        EXPECT_LT(s.indices[e], i);
        if (e > s.rowBegin(i)) {
          EXPECT_GT(s.indices[e], s.indices[e - 1]);
        }
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
  }
  ref::expectClose(r.output, want.output, 1e-5, "output");
  // The compare contract: projected q, k, v and [L, H·d_head] output.
  EXPECT_EQ(ref::recorded(r, "q").cols(), 16);
  EXPECT_EQ(r.output.rows(), 150);
  EXPECT_EQ(r.output.cols(), 16);
}

TEST(AdaptiveSpan, DynamicSpanMatchesPlainLoops) {
  const Inputs in = ref::gaussianInputs(6, 60, 60, 16, 2);
  const Result r = ref::run("adaptive-span", in, {{"max_span", "10"}, {"ramp", "2"}, {"dynamic", "true"},
                                                  {"span_bias", "-0.5"}});
  const DMat x = ref::fromMat(ref::recorded(r, "x")), sv = ref::fromMat(ref::recorded(r, "span_v"));
  std::vector<std::vector<double>> z(2, std::vector<double>(60));
  for (int h = 0; h < 2; ++h)
    for (int t = 0; t < 60; ++t) {
      double a = -0.5;
      for (int c = 0; c < 16; ++c) a += sv(h, c) * x(t, c);
      z[h][t] = 10.0 / (1.0 + std::exp(-a));  // z_t = S σ(v·x_t + b)
    }
  const SpanRef want = spanReference(r, 2, 10, 2.0, z);
  for (int h = 0; h < 2; ++h) ref::expectClose(r.weights[h], want.weights[h], 1e-5, "dynamic weights");
  ref::expectClose(r.output, want.output, 1e-5, "dynamic output");
  const Extra* zt = r.findExtra("z_t");
  ASSERT_NE(zt, nullptr);
  EXPECT_EQ(zt->value.shape, (std::vector<int64_t>{2, 60}));
  EXPECT_NEAR(zt->value.data[61], z[1][1], 1e-4);
  ASSERT_NE(r.findExtra("z_t_h0"), nullptr);
  EXPECT_EQ(r.findExtra("z_t_h0")->kind, ExtraKind::TokenValues);
}

// z ≥ S and R → 0: the mask is 1 on every distance 1 … S, so the weights are
// plain causal softmax over the S previous tokens.
TEST(AdaptiveSpan, FullSpanTinyRampIsCausalWindowAttention) {
  const Inputs in = ref::gaussianInputs(7, 50, 50, 8, 2);
  const int64_t S = 7;
  const Result r = ref::run("adaptive-span", in, {{"max_span", "7"}, {"ramp", "1e-6"}, {"z", "7,100"}});
  const DMat x = ref::fromMat(ref::recorded(r, "x"));
  const DMat q = ref::matmul(x, ref::fromMat(ref::recorded(r, "w_q")));
  const DMat k = ref::matmul(x, ref::fromMat(ref::recorded(r, "w_k")));
  for (int h = 0; h < 2; ++h) {
    DMat s(50, 50), mask(50, 50);
    for (int i = 0; i < 50; ++i)
      for (int j = 0; j < 50; ++j) {
        for (int c = 0; c < 4; ++c) s(i, j) += q(i, h * 4 + c) * k(j, h * 4 + c) / 2.0;  // √d_head = 2
        mask(i, j) = j < i && i - j <= S ? 1.0 : 0.0;
      }
    ref::expectClose(r.weights[h], ref::softmaxRows(s, mask), 1e-5, "causal window h" + std::to_string(h));
  }
  EXPECT_NEAR(r.findExtra("flops_saved")->value.data[0], 0.0, 1e-6);
}

TEST(AdaptiveSpan, RampCurvesSpanBarsAndFlopsSaved) {
  const Inputs in = ref::gaussianInputs(8, 200, 200, 16, 2);
  const Result r = ref::run("adaptive-span", in, {{"max_span", "64"}, {"ramp", "4"}, {"z", "8,30"}});
  const Extra* ramp = r.findExtra("ramp");
  ASSERT_NE(ramp, nullptr);
  EXPECT_EQ(ramp->kind, ExtraKind::Curves);
  EXPECT_EQ(ramp->value.shape, (std::vector<int64_t>{2, 65}));
  for (int x = 0; x <= 64; ++x) EXPECT_NEAR(ramp->value.data[65 + x], softMask(x, 30, 4), 1e-6);
  ASSERT_EQ(ramp->markers.size(), 4u);
  EXPECT_EQ(ramp->markers[2].x, 30);
  EXPECT_EQ(ramp->markers[3].x, 34);
  EXPECT_EQ(ramp->markers[3].series, 1);
  EXPECT_NE(ramp->markers[3].label.find("R=4"), std::string::npos);
  const Extra* span = r.findExtra("span");
  ASSERT_NE(span, nullptr);
  EXPECT_EQ(span->kind, ExtraKind::HeadValues);
  EXPECT_EQ(span->value.data, (std::vector<float>{8, 30}));
  // Entries: Σ_i min(i, reach) with reach = z + R − 1 (integer z + R), against Σ_i min(i, S).
  double used = 0, full = 0;
  for (int i = 0; i < 200; ++i) used += std::min(i, 11) + std::min(i, 33), full += 2 * std::min(i, 64);
  const double saved = 1.0 - used / full;
  EXPECT_NEAR(r.findExtra("flops_saved")->value.data[0], saved, 1e-6);
  EXPECT_NEAR(r.findExtra("flops_used")->value.data[0] / r.findExtra("flops_full_span")->value.data[0], 1 - saved,
              1e-6);
}

TEST(AdaptiveSpan, LongSequenceStaysSparse) {
  const Inputs in = ref::gaussianInputs(9, 5000, 5000, 16, 4);
  const Result r = ref::run("adaptive-span", in, {{"max_span", "64"}, {"z", "16"}});
  EXPECT_TRUE(r.weights.empty()) << "4·5000² does not fit the dense view limit";
  ASSERT_EQ(r.sparse.size(), 4u);
  EXPECT_LE(r.sparse[0].nnz(), 5000 * 17);
  EXPECT_EQ(r.heads(), 4);
  EXPECT_EQ(r.queries(), 5000);
}

TEST(AdaptiveSpan, BadParameters) {
  const Inputs in = ref::gaussianInputs(1, 20, 20, 16, 4);
  expectInputError([&] { ref::run("adaptive-span", in, {{"z", "4,-1"}}); }, {"z: element 1", "got -1"});
  expectInputError([&] { ref::run("adaptive-span", in, {{"max_span", "0"}}); }, {"'max_span'", "an integer in [1,"});
  expectInputError([&] { ref::run("adaptive-span", in, {{"max_span", "-4"}}); }, {"'max_span'"});
  expectInputError([&] { ref::run("adaptive-span", in, {{"ramp", "0"}}); }, {"ramp R must be > 0, got 0"});
  expectInputError([&] { ref::run("adaptive-span", in, {{"ramp", "-2"}}); }, {"'ramp'", "a number in [0,"});
}

// [SECTION] Transformer-XL

TEST(RelShift, EqualsTheNaiveGather) {
  for (const auto& [lq, lk] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {4, 4}, {5, 9}, {7, 20}, {3, 4}}) {
    const Mat bd = randomNormal(lq, lk, 3, "bd");
    const Mat got = relShift(bd);
    ASSERT_EQ(got.rows(), lq);
    ASSERT_EQ(got.cols(), lk);
    // column k of bd is distance Lk − 1 − k; (i, j) has distance (Lk − Lq) + i − j
    for (int64_t i = 0; i < lq; ++i)
      for (int64_t j = 0; j <= i + lk - lq; ++j)
        EXPECT_EQ(got(i, j), bd(i, lk - 1 - ((lk - lq) + i - j))) << lq << "x" << lk << " (" << i << "," << j << ")";
  }
}

// PE(pos, 2i) = sin(pos / 10000^{2i/d}), PE(pos, 2i+1) = cos(…)
double sinusoid(int64_t pos, int64_t c, int64_t d) {
  const double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(c - c % 2) / d);
  return c % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

// The four terms of A^rel per head by the naive O(L²) gather of r_{i−j}, for
// segment rows [s0, s0 + lq) and memory [s0 − lm, s0).
struct XlRef {
  std::vector<DMat> a, b, c, d, weights;
  DMat output;
};
XlRef xlReference(const Result& r, int64_t heads, int64_t s0, int64_t lq, int64_t lm) {
  const DMat x = ref::fromMat(ref::recorded(r, "x"));
  const DMat wq = ref::fromMat(ref::recorded(r, "w_q")), wk = ref::fromMat(ref::recorded(r, "w_k"));
  const DMat wv = ref::fromMat(ref::recorded(r, "w_v")), wr = ref::fromMat(ref::recorded(r, "w_r"));
  const DMat wo = ref::fromMat(ref::recorded(r, "w_o"));
  const DMat u = ref::fromMat(ref::recorded(r, "u")), v = ref::fromMat(ref::recorded(r, "v"));
  const int64_t d = x.cols, dh = d / heads, lk = lm + lq;
  DMat seg(lq, d), ext(lk, d), rel(lk, d);  // rel row m: W_R r_m for distance m
  for (int64_t j = 0; j < lk; ++j)
    for (int64_t c = 0; c < d; ++c) {
      ext(j, c) = x(s0 - lm + j, c);
      if (j >= lm) seg(j - lm, c) = x(s0 - lm + j, c);
    }
  DMat r_dist(lk, d);
  for (int64_t m = 0; m < lk; ++m)
    for (int64_t c = 0; c < d; ++c) r_dist(m, c) = sinusoid(m, c, d);
  rel = ref::matmul(r_dist, wr);
  const DMat q = ref::matmul(seg, wq), k = ref::matmul(ext, wk), val = ref::matmul(ext, wv);
  XlRef out;
  DMat concat(lq, d);
  const double scale = 1.0 / std::sqrt(static_cast<double>(dh));
  for (int64_t h = 0; h < heads; ++h) {
    DMat a(lq, lk), b(lq, lk), c(lq, lk), dd(lq, lk), s(lq, lk), mask(lq, lk);
    for (int64_t i = 0; i < lq; ++i)
      for (int64_t j = 0; j <= lm + i; ++j) {
        const int64_t dist = lm + i - j;  // i − j in absolute positions
        for (int64_t e = h * dh; e < (h + 1) * dh; ++e) {
          a(i, j) += q(i, e) * k(j, e) * scale;
          b(i, j) += q(i, e) * rel(dist, e) * scale;
          c(i, j) += u(h, e - h * dh) * k(j, e) * scale;
          dd(i, j) += v(h, e - h * dh) * rel(dist, e) * scale;
        }
        s(i, j) = a(i, j) + b(i, j) + c(i, j) + dd(i, j);
        mask(i, j) = 1;
      }
    const DMat w = ref::softmaxRows(s, mask);
    for (int64_t i = 0; i < lq; ++i)
      for (int64_t j = 0; j < lk; ++j)
        for (int64_t e = h * dh; e < (h + 1) * dh; ++e) concat(i, e) += w(i, j) * val(j, e);
    out.a.push_back(a), out.b.push_back(b), out.c.push_back(c), out.d.push_back(dd), out.weights.push_back(w);
  }
  out.output = ref::matmul(concat, wo);
  return out;
}

TEST(TransformerXl, FourTermsAndWeightsMatchTheNaiveGather) {
  const Inputs in = ref::gaussianInputs(11, 30, 30, 16, 2);
  // τ = 2: segment x[12, 18), memory x[5, 12) (M = 7 > L = 6)
  const Result r = ref::run("transformer-xl", in, {{"segment", "6"}, {"memory", "7"}, {"tau", "2"}});
  const XlRef want = xlReference(r, 2, 12, 6, 7);
  ASSERT_EQ(r.weights.size(), 2u);
  ASSERT_EQ(r.weights[0].rows(), 6);
  ASSERT_EQ(r.weights[0].cols(), 13);
  for (int h = 0; h < 2; ++h) {
    const std::string hs = " h" + std::to_string(h);
    ref::expectClose(ref::slice(r.findExtra("a")->value, h), want.a[h], 1e-4, "(a)" + hs);
    ref::expectClose(ref::slice(r.findExtra("b")->value, h), want.b[h], 1e-4, "(b) by rel-shift" + hs);
    ref::expectClose(ref::slice(r.findExtra("c")->value, h), want.c[h], 1e-4, "(c)" + hs);
    ref::expectClose(ref::slice(r.findExtra("d")->value, h), want.d[h], 1e-4, "(d) by rel-shift" + hs);
    ref::expectClose(r.weights[h], want.weights[h], 1e-5, "weights" + hs);
  }
  ref::expectClose(r.output, want.output, 1e-4, "output");
  EXPECT_TRUE(r.findExtra("b")->signed_values);
  ASSERT_EQ(r.key_bands.size(), 2u);
  EXPECT_EQ(r.key_bands[0].label, "memory");
  EXPECT_EQ(r.key_bands[0].end, 7);
  EXPECT_EQ(r.key_bands[1].label, "segment 2");
  EXPECT_EQ(r.k_tokens.front(), in.tokens[5]);
  EXPECT_EQ(r.q_tokens.front(), in.tokens[12]);
  // The vanilla baseline sees its own segment only: memory columns are empty.
  const Extra* vanilla = r.findExtra("vanilla");
  ASSERT_NE(vanilla, nullptr);
  EXPECT_EQ(vanilla->value.shape, (std::vector<int64_t>{2, 6, 13}));
  const Mat v0 = ref::slice(vanilla->value, 0);
  EXPECT_EQ(v0.leftCols(7).cwiseAbs().maxCoeff(), 0.0f);
  EXPECT_NEAR(v0.row(3).sum(), 1.0, 1e-5);
  EXPECT_EQ(v0(3, 7 + 4), 0.0f);  // causal within the segment
}

// M = 0 and u = v = 0: plain causal attention with score
// (q_i·k_j + q_i·W_R r_{i−j}) / √d_head, written here without the four-term split.
TEST(TransformerXl, NoMemoryNoBiasIsCausalRelativeAttention) {
  const Inputs in = ref::gaussianInputs(12, 20, 20, 8, 2);
  const Result r = ref::run("transformer-xl", in, {{"segment", "5"}, {"memory", "0"}, {"tau", "3"},
                                                   {"bias_scale", "0"}});
  EXPECT_EQ(ref::recorded(r, "u").cwiseAbs().maxCoeff(), 0.0f);
  const DMat x = ref::fromMat(ref::recorded(r, "x"));
  const DMat wq = ref::fromMat(ref::recorded(r, "w_q")), wk = ref::fromMat(ref::recorded(r, "w_k"));
  const DMat wr = ref::fromMat(ref::recorded(r, "w_r"));
  ASSERT_EQ(r.weights[0].cols(), 5);
  ASSERT_TRUE(r.key_bands.size() == 1 && r.key_bands[0].label == "segment 3");
  for (int h = 0; h < 2; ++h) {
    DMat s(5, 5), mask(5, 5);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j <= i; ++j) {
        mask(i, j) = 1;
        for (int e = h * 4; e < h * 4 + 4; ++e) {
          double qe = 0, ke = 0, re = 0;
          for (int c = 0; c < 8; ++c) {
            qe += x(15 + i, c) * wq(c, e);
            ke += x(15 + j, c) * wk(c, e);
            re += sinusoid(i - j, c, 8) * wr(c, e);
          }
          s(i, j) += qe * (ke + re) / 2.0;
        }
      }
    ref::expectClose(r.weights[h], ref::softmaxRows(s, mask), 1e-5, "relative attention h" + std::to_string(h));
  }
}

TEST(TransformerXl, FirstSegmentHasNoMemoryBand) {
  const Inputs in = ref::gaussianInputs(13, 12, 12, 8, 2);
  const Result r = ref::run("transformer-xl", in, {{"tau", "0"}});
  ASSERT_EQ(r.key_bands.size(), 1u);
  EXPECT_EQ(r.keys(), 4);
  // Last, shorter segment: 12 tokens, L = 5 → τ = 2 has 2 queries.
  const Result last = ref::run("transformer-xl", in, {{"segment", "5"}, {"tau", "2"}});
  EXPECT_EQ(last.queries(), 2);
  EXPECT_EQ(last.keys(), 6);
}

TEST(TransformerXl, BadParameters) {
  const Inputs in = ref::gaussianInputs(1, 12, 12, 8, 2);
  expectInputError([&] { ref::run("transformer-xl", in, {{"tau", "3"}}); },
                   {"tau τ=3 is past the end", "segments τ = 0 … 2"});
  expectInputError([&] { ref::run("transformer-xl", in, {{"segment", "13"}}); }, {"segment L=13", "12-token"});
  expectInputError([&] { ref::run("transformer-xl", in, {{"segment", "0"}}); }, {"'segment'"});
  expectInputError([&] { ref::run("transformer-xl", in, {{"memory", "12"}}); }, {"memory M=12", "12-token"});
  expectInputError([&] { ref::run("transformer-xl", in, {{"memory", "-1"}}); }, {"'memory'"});
}

// [SECTION] State reuse against recomputation

std::vector<int64_t> segmentEnds(int64_t n, int64_t seg) {
  std::vector<int64_t> t;
  for (int64_t e = seg - 1; e < n; e += seg) t.push_back(e);
  return t;
}

TEST(XlReuse, OneLayerLastQueryEqualsTheRecomputedWindow) {
  const Mat x = randomNormal(64, 16, 4, "x");
  const XlStack s = makeXlStack(1, 16, 2, 8, 8, 4);
  const Mat reuse = xlEvaluateWithReuse(s, x);
  const std::vector<int64_t> ends = segmentEnds(64, 8);
  const Mat again = xlEvaluateRecompute(s, x, ends);
  for (size_t p = 0; p < ends.size(); ++p)
    EXPECT_LT(ref::maxAbsDiff(reuse.row(ends[p]), again.row(static_cast<int64_t>(p))), 1e-4) << ends[p];
}

// Deeper, the memory states carry their own context: both agree while the
// whole history fits in memory (τL ≤ M) and part ways after it.
TEST(XlReuse, DeepStackAgreesWhileTheHistoryFitsInMemory) {
  const Mat x = randomNormal(48, 16, 5, "x");
  const XlStack s = makeXlStack(3, 16, 2, 4, 16, 5);
  const Mat reuse = xlEvaluateWithReuse(s, x);
  const std::vector<int64_t> ends = segmentEnds(48, 4);
  const Mat again = xlEvaluateRecompute(s, x, ends);
  for (size_t tau = 0; tau < ends.size(); ++tau) {
    const double diff = ref::maxAbsDiff(reuse.row(ends[tau]), again.row(static_cast<int64_t>(tau)));
    if (static_cast<int64_t>(tau) * 4 <= 16) {
      EXPECT_LT(diff, 1e-4) << "τ=" << tau;
    } else if (tau >= 8) {
      EXPECT_GT(diff, 1e-3) << "τ=" << tau << ": XL's context reaches past the window";
    }
  }
}

}  // namespace
}  // namespace attn
