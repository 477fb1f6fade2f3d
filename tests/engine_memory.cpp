// Memory and pointers: NTM addressing stage by stage (Graves et al. 2014,
// §3.3) and pointer networks (Vinyals et al. 2015), each against a plain-loop
// reference written here, plus extreme finite inputs.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/npy.h"
#include "engine/variants/ntm.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace attn {
namespace {

using ref::DMat;

// [SECTION] NTM references, from eqs. (5)-(9)

// w_c(i) = exp(β K(k, M_i)) / Σ_j exp(β K(k, M_j)),  K = cosine
std::vector<double> contentRef(const Mat& m, const Vec& k, double beta) {
  std::vector<double> e(static_cast<size_t>(m.rows()));
  double sum = 0;
  for (int64_t i = 0; i < m.rows(); ++i) {
    double dot = 0, nk = 0, nm = 0;
    for (int64_t c = 0; c < m.cols(); ++c) {
      dot += double(k(c)) * m(i, c);
      nk += double(k(c)) * k(c);
      nm += double(m(i, c)) * m(i, c);
    }
    e[static_cast<size_t>(i)] = std::exp(beta * dot / std::sqrt(nk * nm));
    sum += e[static_cast<size_t>(i)];
  }
  for (double& x : e) x /= sum;
  return e;
}

// w̃(i) = Σ_j w_g(j) s(i − j mod N), s indexed −K … K
std::vector<double> shiftRef(const std::vector<double>& w_g, const std::vector<double>& s) {
  const auto n = static_cast<int64_t>(w_g.size()), half = static_cast<int64_t>(s.size()) / 2;
  std::vector<double> out(w_g.size(), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t o = -half; o <= half; ++o)
        if (((i - j - o) % n + n) % n == 0) out[static_cast<size_t>(i)] += w_g[static_cast<size_t>(j)] * s[static_cast<size_t>(o + half)];
  return out;
}

// w(i) = w̃(i)^γ / Σ_j w̃(j)^γ
std::vector<double> sharpenRef(const std::vector<double>& w_tilde, double gamma) {
  std::vector<double> out;
  double sum = 0;
  for (double x : w_tilde) sum += std::pow(x, gamma);
  for (double x : w_tilde) out.push_back(std::pow(x, gamma) / sum);
  return out;
}

void expectVecNear(const Vec& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size())) << what;
  for (int64_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got(i), want[static_cast<size_t>(i)], tol) << what << " at " << i;
}

Vec oneHot(int64_t n, int64_t at) {
  Vec v = Vec::Zero(n);
  v(at) = 1.0f;
  return v;
}

std::vector<double> toDoubles(const Vec& v) { return {v.data(), v.data() + v.size()}; }

// m with its largest magnitude set to `top` (the input limit, or a denormal).
Mat scaledTo(const Mat& m, float top) { return (m.array() * (top / m.cwiseAbs().maxCoeff())).matrix(); }

// [SECTION] NTM stages

TEST(Ntm, ContentAddressingMatchesTheLoopAndFindsTheKeysRow) {
  const Mat m = randomNormal(9, 6, 1, "m");
  const Vec k = randomNormal(6, 1, 1, "k").col(0);
  const Vec uniform = Vec::Constant(9, 1.0f / 9);
  const NtmAddressing a = ntmAddress(m, k, uniform, 3.0, 1.0, {0, 1, 0}, 1.0);
  expectVecNear(a.w_c, contentRef(m, k, 3.0), 1e-5, "w_c");
  // A key equal to row 4 at large β: w_c is (almost) one-hot at 4.
  const NtmAddressing b = ntmAddress(m, m.row(4).transpose(), uniform, 200.0, 1.0, {0, 1, 0}, 1.0);
  Eigen::Index at = 0;
  EXPECT_GT(b.w_c.maxCoeff(&at), 0.99f);
  EXPECT_EQ(at, 4);
}

TEST(Ntm, InterpolationTakesWcAtG1AndWprevAtG0) {
  const Mat m = randomNormal(7, 5, 2, "m");
  const Vec k = randomNormal(5, 1, 2, "k").col(0);
  Vec prev = randomNormal(7, 1, 2, "p").col(0).cwiseAbs();
  prev /= prev.sum();
  const NtmAddressing g1 = ntmAddress(m, k, prev, 4.0, 1.0, {0, 1, 0}, 1.0);
  const NtmAddressing g0 = ntmAddress(m, k, prev, 4.0, 0.0, {0, 1, 0}, 1.0);
  const NtmAddressing half = ntmAddress(m, k, prev, 4.0, 0.3, {0, 1, 0}, 1.0);
  expectVecNear(g1.w_g, toDoubles(g1.w_c), 1e-7, "w_g at g = 1");
  expectVecNear(g0.w_g, toDoubles(prev), 1e-7, "w_g at g = 0");
  std::vector<double> mix;
  for (int64_t i = 0; i < 7; ++i) mix.push_back(0.3 * half.w_c(i) + 0.7 * prev(i));
  expectVecNear(half.w_g, mix, 1e-6, "w_g at g = 0.3");
}

TEST(Ntm, ShiftByPlusOneMovesRowJToJPlusOneAndWraps) {
  const int64_t n = 6;
  const Mat m = randomNormal(n, 4, 3, "m");
  const Vec k = randomNormal(4, 1, 3, "k").col(0);
  for (int64_t j : {2, 5}) {
    // g = 0 makes w_g = w_prev = one-hot(j); s = δ(+1).
    const NtmAddressing a = ntmAddress(m, k, oneHot(n, j), 1.0, 0.0, {0, 0, 1}, 1.0);
    expectVecNear(a.w_tilde, toDoubles(oneHot(n, (j + 1) % n)), 1e-7, "w̃ from row " + std::to_string(j));
    expectVecNear(a.w, toDoubles(oneHot(n, (j + 1) % n)), 1e-7, "w from row " + std::to_string(j));
  }
  // A blurred w_g and a five-entry shift against the loop.
  const std::vector<double> s = {0.1, 0.05, 0.5, 0.15, 0.2};
  const NtmAddressing a = ntmAddress(m, k, Vec::Constant(n, 1.0f / n), 2.0, 0.6, s, 1.0);
  expectVecNear(a.w_tilde, shiftRef(toDoubles(a.w_g), s), 1e-6, "w̃");
  // A shift as long as the memory wraps onto itself: still a weighting.
  const NtmAddressing wide = ntmAddress(m.topRows(2), k, Vec::Constant(2, 0.5f), 2.0, 0.6, s, 1.0);
  EXPECT_NEAR(wide.w_tilde.sum(), 1.0, 1e-6);
}

TEST(Ntm, SharpeningIsThePowerNormalisedAndStaysFiniteAtHugeGamma) {
  const Mat m = randomNormal(8, 5, 4, "m");
  const Vec k = randomNormal(5, 1, 4, "k").col(0);
  const std::vector<double> s = {0.2, 0.5, 0.3};
  for (double gamma : {1.0, 2.5, 7.0}) {
    const NtmAddressing a = ntmAddress(m, k, Vec::Constant(8, 0.125f), 3.0, 0.8, s, gamma);
    expectVecNear(a.w, sharpenRef(toDoubles(a.w_tilde), gamma), 1e-6, "w at γ = " + std::to_string(gamma));
  }
  // w̃ with entries down to 1e-30 and γ = 100: w̃^γ underflows, w must not.
  Vec prev = Vec::Constant(8, 1e-30f);
  prev(3) = 1.0f - 7e-30f;
  const NtmAddressing a = ntmAddress(m, k, prev, 3.0, 0.0, {0, 1, 0}, 100.0);
  EXPECT_TRUE(a.w.allFinite());
  EXPECT_NEAR(a.w(3), 1.0, 1e-6);
}

TEST(Ntm, VariantWritesTheStagesAndTheMemory) {
  const Inputs in = ref::gaussianInputs(5, 10, 10, 8, 1);
  const Result r = ref::run("ntm", in, {{"shift", "0.1,0.8,0.1"}, {"beta", "20"}});
  ASSERT_EQ(r.weights.size(), 1u);
  EXPECT_EQ(r.weights[0].rows(), 1);
  EXPECT_EQ(r.weights[0].cols(), 10);
  for (const char* e : {"w_c", "w_g", "w_tilde", "w"}) {
    const Extra* x = r.findExtra(e);
    ASSERT_NE(x, nullptr) << e;
    EXPECT_EQ(x->kind, ExtraKind::TokenValues) << e;
    EXPECT_EQ(x->value.shape, (std::vector<int64_t>{10})) << e;
  }
  EXPECT_EQ(r.findExtra("memory")->value.shape, (std::vector<int64_t>{10, 8}));
  // The seeded key is a row of M plus noise: the content weighting matches the loop on it.
  const Mat& key = ref::recorded(r, "key");
  expectVecNear(Eigen::Map<const Vec>(r.findExtra("w_c")->value.data.data(), 10),
                contentRef(in.x, Eigen::Map<const Vec>(key.data(), 8), 20.0), 1e-5, "w_c");
}

TEST(Ntm, BadShiftAndFilesAreRefusedNamingThem) {
  const Inputs in = ref::gaussianInputs(5, 6, 6, 4, 1);
  ref::expectInputError([&] { ref::run("ntm", in, {{"shift", "0.5,0.5"}}); }, {"'shift'", "odd"});
  ref::expectInputError([&] { ref::run("ntm", in, {{"shift", "0.2,0.2,0.2"}}); }, {"'shift'", "sum to 1"});
  ref::expectInputError([&] { ref::run("ntm", in, {{"shift", "0.2,-0.1,0.9"}}); }, {"shift"});
  const ref::TempPath key("ntm_key.npy");
  writeNpy(key.path, Array{{5}, {1, 2, 3, 4, 5}});
  ref::expectInputError([&] { ref::run("ntm", in, {{"key", key.path.string()}}); }, {key.path.string(), "(key)", "[4]"});
  const ref::TempPath prev("ntm_prev.npy");
  writeNpy(prev.path, Array{{6}, {0.5, 0.5, 0.5, 0, 0, 0}});
  ref::expectInputError([&] { ref::run("ntm", in, {{"w_prev", prev.path.string()}}); }, {"(w_prev)", "sum to 1"});
}

// The GUI's shift sliders (ParamSpec::sums_to_one): moving one entry rescales
// the others so the list still passes the variant's own check.
TEST(Ntm, MovingOneShiftEntryKeepsTheSumAtOne) {
  const VariantInfo& ntm = variantOrThrow("ntm");
  const ParamSpec* spec = nullptr;
  for (const ParamSpec& p : ntm.params) spec = p.key == "shift" ? &p : spec;
  ASSERT_NE(spec, nullptr);
  EXPECT_TRUE(spec->sums_to_one && spec->centred);
  struct Case {
    std::vector<double> list;
    size_t keep;
    std::vector<double> expected;
  };
  for (const Case& c : {Case{{0.1, 0.2, 0.7}, 2, {0.1, 0.2, 0.7}},      // already 1: unchanged
                        Case{{0.1, 0.3, 0.7}, 1, {0.0875, 0.3, 0.6125}},  // the rest keeps its proportions
                        Case{{0.0, 1.0, 0.0}, 1, {0.0, 1.0, 0.0}},
                        Case{{0.0, 0.4, 0.0}, 1, {0.3, 0.4, 0.3}},      // the rest all 0: shared evenly
                        Case{{0.2, 0.8, 1.0}, 2, {0.0, 0.0, 1.0}},
                        Case{{0.25}, 0, {1.0}}}) {
    std::vector<double> list = c.list;
    rescaleOthersToSumOne(list, c.keep);
    ASSERT_EQ(list.size(), c.expected.size());
    for (size_t i = 0; i < list.size(); ++i) EXPECT_NEAR(list[i], c.expected[i], 1e-12) << i;
    Params p = Params::defaults(ntm.params);
    EXPECT_NO_THROW(p.setValue(ntm.params, "shift", list));
  }
}

TEST(Ntm, ExtremeMemoryAndKeyGiveFiniteWeightings) {
  for (float scale : {kMaxInputMagnitude, 1e-40f}) {
    SCOPED_TRACE(scale);
    const Mat m = scaledTo(randomNormal(7, 16, 6, "m"), scale);
    const Inputs in = makeFromMatrices(m, std::nullopt, std::nullopt, std::nullopt, 1, 6);
    const ref::TempPath key("ntm_extreme_key.npy");
    writeNpy(key.path, Array::fromVec(m.row(2).transpose()));
    const Result r = ref::run("ntm", in, {{"key", key.path.string()}, {"beta", "100"}, {"gamma", "100"}});
    EXPECT_EQ(r.firstNonFinite(true), "");
    // Cosine ignores scale, even at denormals: the key's row is found.
    Eigen::Index at = 0;
    Eigen::Map<const Vec>(r.findExtra("w_c")->value.data.data(), 7).maxCoeff(&at);
    EXPECT_EQ(at, 2);
  }
}

// [SECTION] Pointer networks

// u_j^i = Σ_a v_a tanh(Σ_c W₁(a, c) e_j(c) + Σ_c W₂(a, c) d_i(c))
DMat pointerScoresRef(const DMat& e, const DMat& d, const DMat& w1, const DMat& w2, const DMat& v) {
  DMat u(d.rows, e.rows);
  for (int64_t i = 0; i < d.rows; ++i)
    for (int64_t j = 0; j < e.rows; ++j)
      for (int64_t a = 0; a < w1.rows; ++a) {
        double h = 0;
        for (int64_t c = 0; c < e.cols; ++c) h += w1(a, c) * e(j, c);
        for (int64_t c = 0; c < d.cols; ++c) h += w2(a, c) * d(i, c);
        u(i, j) += v(a, 0) * std::tanh(h);
      }
  return u;
}

TEST(Pointer, ScoresAndSoftmaxRowsMatchTheLoop) {
  const Inputs in = ref::gaussianInputs(8, 7, 5, 6, 1);
  const Result r = ref::run("pointer", in, {{"d_a", "9"}});
  const DMat e = ref::fromMat(ref::recorded(r, "enc")), d = ref::fromMat(ref::recorded(r, "dec"));
  EXPECT_EQ(e.rows, 5);  // the source x_kv is pointed into
  EXPECT_EQ(d.rows, 7);  // the target x asks
  const DMat u = pointerScoresRef(e, d, ref::fromMat(ref::recorded(r, "w_1")), ref::fromMat(ref::recorded(r, "w_2")),
                                  ref::fromMat(ref::recorded(r, "v")));
  ref::expectClose(r.scores[0], u, 1e-4, "u");
  ref::expectClose(r.weights[0], ref::softmaxRows(u), 1e-5, "p");
  for (int64_t i = 0; i < r.weights[0].rows(); ++i) EXPECT_NEAR(r.weights[0].row(i).sum(), 1.0, 1e-5) << i;
  EXPECT_EQ(r.weights[0].rows(), 7);  // decoder steps
  EXPECT_EQ(r.weights[0].cols(), 5);  // input positions
  EXPECT_EQ(weightAxes(r).rows, "decoder step");
  EXPECT_EQ(weightAxes(r).cols, "input position");
}

TEST(Pointer, ExtremeStatesGiveFiniteDistributions) {
  for (float scale : {kMaxInputMagnitude, 1e-40f}) {
    SCOPED_TRACE(scale);
    const Mat e = scaledTo(randomNormal(6, 8, 9, "e"), scale), d = scaledTo(randomNormal(4, 5, 9, "d"), scale);
    const ref::TempPath enc("pointer_enc.npy"), dec("pointer_dec.npy");
    writeNpy(enc.path, Array::fromMat(e));
    writeNpy(dec.path, Array::fromMat(d));
    const Result r = ref::run("pointer", ref::gaussianInputs(9, 3, 3, 4, 1),
                              {{"enc", enc.path.string()}, {"dec", dec.path.string()}});
    EXPECT_EQ(r.firstNonFinite(true), "");
    ASSERT_EQ(r.weights[0].rows(), 4);
    ASSERT_EQ(r.weights[0].cols(), 6);
    for (int64_t i = 0; i < 4; ++i) EXPECT_NEAR(r.weights[0].row(i).sum(), 1.0, 1e-5) << i;
  }
}

}  // namespace
}  // namespace attn
