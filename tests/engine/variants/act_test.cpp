// Adaptive computation: the ACT halting rule against its definition, the ACT
// RNN, the Universal Transformer's recurrence and halting, and the GTrXL gate,
// each against a plain-loop reference written here.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/inputs.h"
#include "engine/registry.h"
#include "engine/variants/adaptive_computation.h"

#include <gtest/gtest.h>

#include <tuple>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace attn {
namespace {

// [SECTION] Reference: Graves 2016, §2, from the full list h^1 … h^M.
struct Halting {
  int64_t n = 0;
  double r = 0;
  std::vector<double> p;
};

Halting haltingByDefinition(const std::vector<double>& h, double eps, int64_t M) {
  // N(t) = min(min{n′ : Σ_{n≤n′} h^n ≥ 1 − ε}, M)
  int64_t n = M;
  for (int64_t k = 1; k <= M; ++k) {
    double sum = 0;
    for (int64_t j = 1; j <= k; ++j) sum += h[static_cast<size_t>(j - 1)];
    if (sum >= 1.0 - eps) {
      n = k;
      break;
    }
  }
  // R(t) = 1 − Σ_{n<N} h^n;  p^n = h^n (n < N), R (n = N)
  Halting out{n, 1.0, {}};
  for (int64_t j = 1; j < n; ++j) out.r -= h[static_cast<size_t>(j - 1)];
  for (int64_t j = 1; j < n; ++j) out.p.push_back(h[static_cast<size_t>(j - 1)]);
  out.p.push_back(out.r);
  return out;
}

ActHalting runHalting(const std::vector<double>& h, double eps, int64_t M) {
  ActHalting a(eps, M, "test");
  for (size_t k = 0; !a.halted(); ++k) a.add(h.at(k));
  return a;
}

void expectMatchesDefinition(const std::vector<double>& h, double eps, int64_t M) {
  const ActHalting a = runHalting(h, eps, M);
  const Halting ref = haltingByDefinition(h, eps, M);
  EXPECT_EQ(a.steps(), ref.n);
  EXPECT_NEAR(a.remainder(), ref.r, 1e-12);
  ASSERT_EQ(a.weights().size(), ref.p.size());
  for (size_t k = 0; k < ref.p.size(); ++k) EXPECT_NEAR(a.weights()[k], ref.p[k], 1e-12) << k;
  EXPECT_NEAR(std::accumulate(a.weights().begin(), a.weights().end(), 0.0), 1.0, 1e-12);
  EXPECT_NEAR(a.ponder(), static_cast<double>(ref.n) + ref.r, 1e-12);
}

TEST(Act, FirstStepAlreadyOverThresholdHaltsAtOneWithRemainderOne) {
  const ActHalting a = runHalting({0.995, 0.5}, 0.01, 10);
  EXPECT_EQ(a.steps(), 1);
  EXPECT_DOUBLE_EQ(a.remainder(), 1.0);  // R = 1 − (empty sum)
  EXPECT_EQ(a.weights(), std::vector<double>{1.0});
  EXPECT_DOUBLE_EQ(a.ponder(), 2.0);
  expectMatchesDefinition({0.995, 0.5}, 0.01, 10);
}

TEST(Act, NeverReachingThresholdStopsAtMWithTheRest) {
  // Σ of four 0.1 is 0.4 < 0.99: N = M = 5, R = 1 − 0.4 = 0.6.
  const ActHalting a = runHalting({0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 0.01, 5);
  EXPECT_EQ(a.steps(), 5);
  EXPECT_NEAR(a.remainder(), 0.6, 1e-12);
  EXPECT_NEAR(a.ponder(), 5.6, 1e-12);
  expectMatchesDefinition({0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 0.01, 5);
}

TEST(Act, HandComputedCases) {
  // 0.1 + 0.3 + 0.2 = 0.6 < 0.99, + 0.5 ≥ 0.99: N = 4, R = 0.4.
  const ActHalting a = runHalting({0.1, 0.3, 0.2, 0.5, 0.4}, 0.01, 10);
  EXPECT_EQ(a.steps(), 4);
  EXPECT_NEAR(a.remainder(), 0.4, 1e-12);
  // Exactly 1 − ε counts as reached: 0.5 + 0.25 = 0.75 = 1 − 0.25: N = 2, R = 0.5.
  const ActHalting b = runHalting({0.5, 0.25, 0.9}, 0.25, 10);
  EXPECT_EQ(b.steps(), 2);
  EXPECT_DOUBLE_EQ(b.remainder(), 0.5);
  // M = 1: always one step with all the weight.
  const ActHalting c = runHalting({0.01}, 0.01, 1);
  EXPECT_EQ(c.steps(), 1);
  EXPECT_DOUBLE_EQ(c.remainder(), 1.0);
}

TEST(Act, RandomListsMatchTheDefinitionAndWeightsSumToOne) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const Mat u = randomNormal(1, 12, seed, "h");
    std::vector<double> h;
    for (int64_t k = 0; k < 12; ++k) h.push_back(1.0 / (1.0 + std::exp(-2.0 * u(0, k) + 1.5)));
    const double eps = 0.01 + 0.4 * static_cast<double>(seed % 5) / 5.0;
    expectMatchesDefinition(h, eps, 1 + static_cast<int64_t>(seed % 12));
  }
}

TEST(Act, BadEpsilonAndMaxStepsAreInputErrors) {
  EXPECT_THROW(ActHalting(0.0, 5, "act"), InputError);
  EXPECT_THROW(ActHalting(1.0, 5, "act"), InputError);
  EXPECT_THROW(ActHalting(0.1, 0, "act"), InputError);
  const VariantInfo& v = variantOrThrow("act");
  Params p = Params::defaults(v.params);
  EXPECT_THROW(p.set(v.params, "max_steps", "0"), InputError);
  p.set(v.params, "epsilon", "1");
  EXPECT_THROW(runVariant(v, makeSynthetic({.length = 4, .dim = 8, .heads = 1}), p), InputError);
}

TEST(Act, ManualModeShowsTheRuleOnTheUsersValues) {
  const VariantInfo& v = variantOrThrow("act");
  Params p = Params::defaults(v.params);
  p.set(v.params, "mode", "manual");
  p.set(v.params, "h", "0.1,0.3,0.2,0.5");
  p.set(v.params, "max_steps", "6");
  const Result r = runVariant(v, makeSynthetic({.length = 4, .dim = 8, .heads = 1}), p);
  const Extra* stacked = r.findExtra("p");
  ASSERT_NE(stacked, nullptr);
  EXPECT_EQ(stacked->kind, ExtraKind::Stacked);
  EXPECT_EQ(stacked->value.shape, (std::vector<int64_t>{1, 6}));
  const std::vector<float> expect = {0.1f, 0.3f, 0.2f, 0.4f, 0.0f, 0.0f};
  for (size_t k = 0; k < expect.size(); ++k) EXPECT_NEAR(stacked->value.data[k], expect[k], 1e-6) << k;
  ASSERT_EQ(stacked->row_labels.size(), 1u);
  EXPECT_NE(stacked->row_labels[0].find("N=4"), std::string::npos) << stacked->row_labels[0];
  EXPECT_NE(stacked->row_labels[0].find("R=0.40"), std::string::npos) << stacked->row_labels[0];
  EXPECT_NEAR(r.findExtra("ponder_cost")->value.data[0], 4.4f, 1e-6);
  // Past the list its last value: 0.5 + 0.5 ≥ 0.99 at n = 2.
  p.set(v.params, "h", "0.5");
  const Result r2 = runVariant(v, makeSynthetic({.length = 4, .dim = 8, .heads = 1}), p);
  EXPECT_NEAR(r2.findExtra("ponder_cost")->value.data[0], 2.5f, 1e-6);
}

// p_t^n alone is ambiguous: h = 0, 0, 1 gives p = 0, 0, 1 and N = 3, R = 1.
// N(t) and R(t) are extras of their own, as data (not drawn: N and R caption the stacked bars).
TEST(Act, StepsAndRemainderAreDataExtras) {
  const VariantInfo& v = variantOrThrow("act");
  Params p = Params::defaults(v.params);
  p.set(v.params, "mode", "manual");
  p.set(v.params, "h", "0,0,1");
  const Result r = runVariant(v, makeSynthetic({.length = 4, .dim = 8, .heads = 1}), p);
  const Halting want = haltingByDefinition({0, 0, 1, 1, 1, 1, 1, 1, 1, 1}, 0.01, 10);
  ASSERT_EQ(want.n, 3);
  const Extra* n = r.findExtra("n");
  const Extra* rem = r.findExtra("r");
  ASSERT_NE(n, nullptr);
  ASSERT_NE(rem, nullptr);
  EXPECT_EQ(n->kind, ExtraKind::Data);
  EXPECT_TRUE(n->integer);
  EXPECT_EQ(rem->kind, ExtraKind::Data);
  EXPECT_FALSE(rem->integer);
  EXPECT_EQ(n->value.data, (std::vector<float>{3.0f}));
  EXPECT_EQ(rem->value.data, (std::vector<float>{static_cast<float>(want.r)}));
  EXPECT_EQ(std::vector<float>(r.weights[0].data(), r.weights[0].data() + 3), (std::vector<float>{0, 0, 1}));
}

// The halting rule as it runs: Σ_{n′≤n} h^n′ over n = 0 … M, against 1 − ε,
// recomputed by a plain loop; it crosses the line exactly at N.
TEST(Act, RunningSumCrossesOneMinusEpsilonAtN) {
  const VariantInfo& v = variantOrThrow("act");
  for (const auto& [h, eps, n_expected] : {std::tuple<std::string, double, int>{"0.1,0.3,0.2,0.5", 0.01, 4},
                                           {"0.1,0.3,0.2,0.5", 0.5, 3}, {"0.995", 0.01, 1}, {"0.01", 0.01, 7}}) {
    Params p = Params::defaults(v.params);
    p.set(v.params, "mode", "manual");
    p.set(v.params, "h", h);
    p.set(v.params, "epsilon", std::to_string(eps));
    p.set(v.params, "max_steps", "7");
    const Result r = runVariant(v, makeSynthetic({.length = 4, .dim = 8, .heads = 1}), p);
    const Extra* run = r.findExtra("halting_sum");
    ASSERT_NE(run, nullptr);
    EXPECT_EQ(run->kind, ExtraKind::Curves);
    EXPECT_TRUE(run->stepwise);
    ASSERT_EQ(run->value.shape, (std::vector<int64_t>{1, 8}));
    ASSERT_EQ(run->levels.size(), 1u);
    EXPECT_NEAR(run->levels[0].x, 1.0 - eps, 1e-12);
    ASSERT_EQ(run->markers.size(), 1u);
    EXPECT_EQ(run->markers[0].x, n_expected) << h << " ε=" << eps;
    // The plain loop: h from the list (its last value past the end), summed until N.
    std::vector<double> list;
    for (size_t at = 0; at <= h.size();) {
      const size_t comma = std::min(h.find(',', at), h.size());
      list.push_back(std::stod(h.substr(at, comma - at)));
      at = comma + 1;
    }
    double sum = 0;
    int crossed = 0;
    for (int n = 0; n <= 7; ++n) {
      if (n >= 1 && n <= n_expected) sum += list[std::min<size_t>(static_cast<size_t>(n - 1), list.size() - 1)];
      EXPECT_NEAR(run->value.data[static_cast<size_t>(n)], sum, 1e-6) << h << " n=" << n;
      if (!crossed && sum >= 1.0 - eps) crossed = n;
    }
    EXPECT_EQ(crossed ? crossed : 7, n_expected) << "N is where the sum first reaches 1 − ε (or M)";
  }
}

// Each process names the parameter it steps and how many steps there are.
TEST(Timeline, VariantsNameTheirProcessAndItsLength) {
  const Inputs in = makeSynthetic({.length = 24, .dim = 16, .heads = 2});
  auto run = [&](const std::string& name, const std::vector<std::pair<std::string, std::string>>& sets) {
    const VariantInfo& v = variantOrThrow(name);
    Params p = Params::defaults(v.params);
    for (const auto& [k, val] : sets) p.set(v.params, k, val);
    return runVariant(v, in, p);
  };
  const Result txl = run("transformer-xl", {{"segment", "5"}, {"memory", "5"}});
  EXPECT_EQ(txl.timeline.param, "tau");
  EXPECT_EQ(txl.timeline.count, 5);  // ⌈24 / 5⌉ segments
  const Result lsh = run("lsh", {{"rounds", "3"}});
  EXPECT_EQ(lsh.timeline.param, "round");
  EXPECT_EQ(lsh.timeline.count, 3);
  EXPECT_EQ(lsh.timeline.labels.at(1), "round 2 of 3");
  const Result span = run("adaptive-span", {{"max_span", "6"}});
  EXPECT_EQ(span.timeline.param, "z");
  EXPECT_EQ(span.timeline.count, 7);  // z = 0 … S
  EXPECT_TRUE(run("adaptive-span", {{"dynamic", "true"}}).timeline.param.empty());  // z is not a parameter then
  EXPECT_TRUE(run("multi-head", {}).timeline.param.empty());
  // Every step the timeline can reach is a valid parameter value.
  for (const Result* r : {&txl, &lsh, &span}) {
    const VariantInfo& v = variantOrThrow(r->variant);
    Params p = r->params;
    EXPECT_NO_THROW(p.set(v.params, r->timeline.param, std::to_string(r->timeline.count - 1))) << r->variant;
  }
}

// The RNN recomputed with plain loops from the weights the run records.
TEST(Act, RnnMatchesAPlainLoopReference) {
  const VariantInfo& v = variantOrThrow("act");
  Params p = Params::defaults(v.params);
  p.set(v.params, "max_steps", "7");
  const Inputs in = makeSynthetic({.seed = 5, .length = 9, .dim = 12, .heads = 1});
  const Result r = runVariant(v, in, p);
  const Mat &x = r.inputs.at("x"), &w_x = r.inputs.at("w_x"), &w_s = r.inputs.at("w_s"), &w_h = r.inputs.at("w_h"),
            &w_y = r.inputs.at("w_y");
  const int64_t T = x.rows(), d = x.cols(), M = 7;
  const double eps = 0.01, b_h = p.getFloat("halt_bias");
  const Mat& pm = r.weights[0];
  std::vector<double> s_prev(static_cast<size_t>(d), 0.0);
  double cost = 0;
  std::set<int64_t> distinct_n;
  for (int64_t t = 0; t < T; ++t) {
    std::vector<double> s = s_prev, mean(static_cast<size_t>(d), 0.0), y(static_cast<size_t>(d), 0.0);
    double sum = 0;
    int64_t n = 1;
    for (;; ++n) {
      std::vector<double> next(static_cast<size_t>(d));
      for (int64_t j = 0; j < d; ++j) {
        double a = n == 1 ? w_x(d, j) : 0.0;
        for (int64_t k = 0; k < d; ++k) a += s[static_cast<size_t>(k)] * w_s(k, j) + x(t, k) * w_x(k, j);
        next[static_cast<size_t>(j)] = std::tanh(a);
      }
      s = next;
      double logit = b_h;
      for (int64_t k = 0; k < d; ++k) logit += s[static_cast<size_t>(k)] * w_h(k, 0);
      const double h = 1.0 / (1.0 + std::exp(-logit));
      const bool halt = sum + h >= 1.0 - eps || n == M;
      const double pn = halt ? 1.0 - sum : h;
      EXPECT_NEAR(pm(t, n - 1), pn, 1e-4) << "t=" << t << " n=" << n;
      for (int64_t k = 0; k < d; ++k) mean[static_cast<size_t>(k)] += pn * s[static_cast<size_t>(k)];
      if (halt) {
        cost += static_cast<double>(n) + pn;
        // N(t) and R(t) as numbers (extras n, r), not read back from p.
        EXPECT_EQ(r.findExtra("n")->value.data[static_cast<size_t>(t)], static_cast<float>(n)) << "t=" << t;
        EXPECT_NEAR(r.findExtra("r")->value.data[static_cast<size_t>(t)], pn, 1e-5) << "t=" << t;
        break;
      }
      sum += h;
    }
    distinct_n.insert(n);
    for (int64_t j = 0; j < d; ++j) {
      double yj = 0;
      for (int64_t k = 0; k < d; ++k) yj += mean[static_cast<size_t>(k)] * w_y(k, j);
      EXPECT_NEAR(r.output(t, j), yj, 1e-4) << "t=" << t << " j=" << j;
    }
    EXPECT_NEAR(pm.row(t).sum(), 1.0, 1e-5);
    s_prev = mean;
  }
  EXPECT_GT(distinct_n.size(), 1u) << "the default scene should ponder for different N(t)";
  EXPECT_NEAR(r.findExtra("ponder_cost")->value.data[0], cost, 1e-3);
}

// [SECTION] Universal Transformer

// Every step against a double-precision plain loop: tests/engine/reference_layers_test.cpp.

TEST(UniversalTransformer, HaltedPositionsStayUnchangedAfterwards) {
  const Inputs in = makeSynthetic({.seed = 1, .length = 12, .dim = 16, .heads = 2});
  const UtWeights w = makeUtWeights(16, 2, 1);
  const UtRun run = universalTransformer(in.x, w, 2, 0.01, 8, -1.0, RunContext{});
  const int64_t T = static_cast<int64_t>(run.states.size()) - 1;
  ASSERT_EQ(run.p.cols(), T);
  const auto [lo, hi] = std::minmax_element(run.steps.begin(), run.steps.end());
  ASSERT_LT(*lo, *hi) << "the scene should halt positions at different steps";
  EXPECT_EQ(*hi, T);  // the run stops once every position has halted
  for (int64_t i = 0; i < 12; ++i) {
    const int64_t n = run.steps[static_cast<size_t>(i)];
    for (int64_t t = 1; t <= T; ++t) {
      const bool same = run.states[static_cast<size_t>(t)].row(i) == run.states[static_cast<size_t>(t) - 1].row(i);
      // Updated at steps 1 … N_i, copied after.
      EXPECT_EQ(same, t > n) << "position " << i << " step " << t << " N " << n;
    }
    EXPECT_NEAR(run.p.row(i).sum(), 1.0, 1e-5);
    EXPECT_NEAR(run.p(i, n - 1), run.remainders[static_cast<size_t>(i)], 1e-6);
  }
}

TEST(UniversalTransformer, VariantShowsPonderMapStepsAndTimeSignal) {
  const VariantInfo& v = variantOrThrow("universal-transformer");
  const Result r = runVariant(v, makeSynthetic({.seed = 1, .length = 12, .dim = 16, .heads = 2}),
                              Params::defaults(v.params));
  EXPECT_EQ(v.family, "adaptive computation");
  const int64_t T = static_cast<int64_t>(r.findExtra("steps_run")->value.data[0]);
  const Extra* map = r.findExtra("ponder_map");
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->value.shape, (std::vector<int64_t>{12, T}));
  EXPECT_EQ(map->categories.size(), 3u);
  const Extra* steps = r.findExtra("attention_steps");
  EXPECT_EQ(steps->value.shape, (std::vector<int64_t>{T, 12, 12}));
  EXPECT_EQ(steps->slice_axis, "step");
  EXPECT_EQ(r.findExtra("time_signal")->value.shape, (std::vector<int64_t>{T, 16}));
  const Extra* ponder = r.findExtra("ponder_time");
  double cost = 0;
  for (int64_t i = 0; i < 12; ++i) {
    // Ponder time N + R against the map: N = the step marked "halts here".
    int64_t n = 0;
    for (int64_t t = 0; t < T; ++t)
      if (map->value.data[static_cast<size_t>(i * T + t)] == 1.0f) n = t + 1;
    EXPECT_GE(ponder->value.data[static_cast<size_t>(i)], static_cast<float>(n));
    EXPECT_LE(ponder->value.data[static_cast<size_t>(i)], static_cast<float>(n + 1));
    cost += ponder->value.data[static_cast<size_t>(i)];
  }
  EXPECT_NEAR(r.findExtra("ponder_cost")->value.data[0], cost, 1e-3);
}

// Each position's halting step N_i as data [L], against the recurrence's own steps.
TEST(UniversalTransformer, HaltingStepIsADataExtra) {
  const VariantInfo& v = variantOrThrow("universal-transformer");
  const Inputs in = makeSynthetic({.seed = 1, .length = 12, .dim = 16, .heads = 2});
  const Params p = Params::defaults(v.params);
  const Result r = runVariant(v, in, p);
  const UtRun run = universalTransformer(in.x, makeUtWeights(16, 2, 1), 2, p.getFloat("epsilon"),
                                         p.getInt("max_steps"), p.getFloat("halt_bias"), RunContext{});
  const Extra* e = r.findExtra("halting_step");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->kind, ExtraKind::Data);
  EXPECT_TRUE(e->integer);
  ASSERT_EQ(e->value.shape, (std::vector<int64_t>{12}));
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ(e->value.data[i], static_cast<float>(run.steps[i])) << i;
  EXPECT_GT(std::set<float>(e->value.data.begin(), e->value.data.end()).size(), 1u);
}

// [SECTION] GTrXL gate

TEST(GtrxlGate, MatchesAPlainLoopReference) {
  const int64_t L = 5, d = 8;
  const Mat x = randomNormal(L, d, 1, "x"), y = randomNormal(L, d, 1, "y");
  const GruGateWeights w = makeGruGateWeights(d, 4);
  const double b_g = 0.7;
  const GruGate g = gruGate(x, y, w, b_g);
  auto sig = [](double a) { return 1.0 / (1.0 + std::exp(-a)); };
  for (int64_t i = 0; i < L; ++i) {
    std::vector<double> r(static_cast<size_t>(d));
    for (int64_t j = 0; j < d; ++j) {
      double a = 0;
      for (int64_t k = 0; k < d; ++k) a += y(i, k) * w.w_r(k, j) + x(i, k) * w.u_r(k, j);
      r[static_cast<size_t>(j)] = sig(a);
    }
    for (int64_t j = 0; j < d; ++j) {
      double az = -b_g, ah = 0;
      for (int64_t k = 0; k < d; ++k) {
        az += y(i, k) * w.w_z(k, j) + x(i, k) * w.u_z(k, j);
        ah += y(i, k) * w.w_g(k, j) + r[static_cast<size_t>(k)] * x(i, k) * w.u_g(k, j);
      }
      const double z = sig(az), h = std::tanh(ah);
      EXPECT_NEAR(g.z(i, j), z, 1e-5);
      EXPECT_NEAR(g.h_hat(i, j), h, 1e-5);
      EXPECT_NEAR(g.g(i, j), (1 - z) * x(i, j) + z * h, 1e-5);
    }
  }
}

TEST(GtrxlGate, LargeBiasGivesXAndVeryNegativeBiasGivesCandidate) {
  const Mat x = randomNormal(6, 8, 2, "x"), y = randomNormal(6, 8, 2, "y");
  const GruGateWeights w = makeGruGateWeights(8, 9);
  const GruGate open = gruGate(x, y, w, -1e4), closed = gruGate(x, y, w, 1e4);
  // b_g → +∞: z → 0, g → x;  b_g → −∞: z → 1, g → ĥ
  EXPECT_EQ(closed.z.maxCoeff(), 0.0f);
  EXPECT_TRUE(closed.g.isApprox(x, 1e-6f));
  EXPECT_EQ(open.z.minCoeff(), 1.0f);
  EXPECT_TRUE(open.g.isApprox(open.h_hat, 1e-6f));
  // The variant's default b_g = 2 starts near the identity: closer to x than x + y is.
  const VariantInfo& v = variantOrThrow("gtrxl-gate");
  const Result r = runVariant(v, makeSynthetic({.seed = 4, .length = 10, .dim = 16, .heads = 2}),
                              Params::defaults(v.params));
  EXPECT_LT(r.findExtra("gate_from_x")->value.data[0], r.findExtra("residual_from_x")->value.data[0]);
  EXPECT_EQ(r.findExtra("z")->value.shape, (std::vector<int64_t>{10, 16}));
  EXPECT_TRUE(r.findExtra("g")->signed_values);
}

}  // namespace
}  // namespace attn
