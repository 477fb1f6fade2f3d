// Adaptive Computation Time (Graves 2016). An RNN ponders each input step t
// for N(t) updates of its state; a sigmoid halting unit decides when to stop:
//   s_t^1 = S(s_{t−1}, x_t^1),  s_t^n = S(s_t^{n−1}, x_t^n),  x_t^n = [x_t, δ_{n,1}]
//   h_t^n = σ(W_h s_t^n + b_h)
//   N(t)  = min(min{n′ : Σ_{n≤n′} h_t^n ≥ 1 − ε}, M),  R(t) = 1 − Σ_{n<N(t)} h_t^n
//   p_t^n = h_t^n (n < N(t)),  R(t) (n = N(t))
//   s_t = Σ_n p_t^n s_t^n,  y_t = Σ_n p_t^n W_y s_t^n,  ponder cost P = Σ_t N(t) + R(t)
// S is a tanh cell: S(s, x̂) = tanh(s W_s + x̂ W_x + b) with seeded weights.
//
// mode=manual skips the RNN: the user's list gives h^1, h^2, … of one input
// step directly (past the list, its last value), to teach the halting rule.
#include "engine/activations.h"
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/registry.h"
#include "engine/variants/adaptive_computation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

// [SECTION] The halting rule

ActHalting::ActHalting(double eps, int64_t max_steps, const std::string& what) : eps_(eps), max_steps_(max_steps) {
  if (!(eps > 0.0 && eps < 1.0))
    throw InputError(what + ": parameter 'epsilon' (ε) must be in (0, 1), got " + formatValue(eps));
  if (max_steps < 1)
    throw InputError(what + ": parameter 'max_steps' (M) must be ≥ 1, got " + std::to_string(max_steps));
}

bool ActHalting::add(double h) {
  if (halted_) throw std::logic_error("ActHalting::add after N(t)");
  const int64_t n = steps() + 1;
  h_.push_back(h);
  if (sum_ + h >= 1.0 - eps_ || n == max_steps_) {
    // n = N(t): R(t) = 1 − Σ_{n′<N} h_t^n′ replaces h_t^N
    halted_ = true;
    remainder_ = 1.0 - sum_;
    p_.push_back(remainder_);
    return true;
  }
  sum_ += h;
  p_.push_back(h);
  return false;
}

namespace {

// "N=4\nR=0.40": the caption under a stacked bar.
std::string haltingCaption(const std::string& token, const ActHalting& a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "N=%lld\nR=%.2f", static_cast<long long>(a.steps()), a.remainder());
  return token.empty() ? buf : token + "\n" + buf;
}

// [SECTION] The variant

Result act(const Inputs& in, const Params& p, const RunContext& ctx) {
  const double eps = p.getFloat("epsilon");
  const int64_t M = p.getInt("max_steps");
  const bool manual = p.getString("mode") == "manual";

  Result r;
  std::vector<ActHalting> halts;
  Mat out;
  if (manual) {
    // One input step; h_t^n from the list, its last value past the end.
    ActHalting a(eps, M, "act");
    for (int64_t n = 0; !a.halted(); ++n) a.add(p.floatForHead("h", n));
    halts.push_back(std::move(a));
    r.q_tokens = {"t0"};
  } else {
    const Mat& x = in.query();  // [T, d]
    const int64_t T = x.rows(), d = x.cols();
    const float gain = 1.0f / std::sqrt(static_cast<float>(d));
    const Mat w_x = randomNormal(d + 1, d, in.seed, "act_w_x", 1.5f * gain);  // [d + 1, d]: x_t and the flag δ_{n,1}
    const Mat w_s = randomNormal(d, d, in.seed, "act_w_s", 1.2f * gain);      // [d, d]
    const Mat w_h = randomNormal(d, 1, in.seed, "act_w_h", 3.0f * gain);      // [d, 1]
    const Mat w_y = randomNormal(d, d, in.seed, "act_w_y", gain);             // [d, d]
    const double b_h = p.getFloat("halt_bias");
    // x_t W_x[0:d]                                     [T, d]
    const Mat xw = x * w_x.topRows(d);
    RowVec s_prev = RowVec::Zero(d);  // s_0
    Mat states(T, d);                 // s_t = Σ_n p_t^n s_t^n
    for (int64_t t = 0; t < T; ++t) {
      ActHalting a(eps, M, "act");
      RowVec s = s_prev, s_mean = RowVec::Zero(d);
      for (int64_t n = 1; !a.halted(); ++n) {
        // s_t^n = tanh(s W_s + x_t W_x + δ_{n,1} W_x[d])     [d]
        RowVec pre = s * w_s + xw.row(t);
        if (n == 1) pre += w_x.row(d);
        s = pre.array().tanh();
        // h_t^n = σ(s_t^n W_h + b_h)
        a.add(sigmoid(static_cast<double>((s * w_h)(0)) + b_h));
        s_mean += static_cast<float>(a.weights().back()) * s;
      }
      states.row(t) = s_mean;
      s_prev = s_mean;
      halts.push_back(std::move(a));
      ctx.progress(static_cast<float>(t + 1) / static_cast<float>(T));
    }
    // y_t = Σ_n p_t^n W_y s_t^n = (Σ_n p_t^n s_t^n) W_y     [T, d]
    out.noalias() = states * w_y;
    r.q_tokens = in.tokens;
    r.inputs["x"] = x;
    r.inputs["w_x"] = w_x;
    r.inputs["w_s"] = w_s;
    r.inputs["w_h"] = w_h;
    r.inputs["w_y"] = w_y;
    r.inputs["s"] = states;
    for (const ActHalting& a : halts) r.flops += static_cast<double>(a.steps()) * (4.0 * d * d + 2.0 * d);
  }

  // p [T, M]: the halting weights, 0 after N(t); the main matrix and the stacked bars.
  const int64_t T = static_cast<int64_t>(halts.size());
  Mat pm = Mat::Zero(T, M);
  std::vector<float> ponder(static_cast<size_t>(T));
  double cost = 0;
  std::vector<std::string> captions;
  for (int64_t t = 0; t < T; ++t) {
    const ActHalting& a = halts[static_cast<size_t>(t)];
    for (int64_t n = 0; n < a.steps(); ++n) pm(t, n) = static_cast<float>(a.weights()[static_cast<size_t>(n)]);
    ponder[static_cast<size_t>(t)] = static_cast<float>(a.ponder());
    cost += a.ponder();
    captions.push_back(haltingCaption(t < static_cast<int64_t>(r.q_tokens.size()) ? r.q_tokens[static_cast<size_t>(t)] : "",
                                      a));
  }
  if (r.q_tokens.size() != static_cast<size_t>(T)) r.q_tokens = positionTokens(T, "t");
  r.k_tokens = positionTokens(M, "n");
  for (int64_t n = 0; n < M; ++n) r.k_tokens[static_cast<size_t>(n)] = "n=" + std::to_string(n + 1);
  r.weights.assign(1, pm);
  r.scores.assign(1, pm);
  r.weights_label = "halting weight p_t^n";
  r.scores_label = "p_t^n";
  r.output = std::move(out);
  r.extras.push_back({.name = "p", .label = "halting weights p_t^n per input step (N(t), R(t) below)",
                      .kind = ExtraKind::Stacked, .value = Array::fromMat(pm), .row_axis = "input step t",
                      .col_axis = "n", .row_labels = std::move(captions)});
  // The halting rule as it runs: Σ_{n′≤n} h_t^n′ over n = 0 … M (0 at n = 0),
  // crossing 1 − ε at N(t) (or stopped by M); flat after N(t).
  Mat running = Mat::Zero(T, M + 1);
  for (int64_t t = 0; t < T; ++t) {
    const std::vector<double>& h = halts[static_cast<size_t>(t)].halting();
    double sum = 0;
    for (int64_t n = 1; n <= M; ++n) {
      if (n <= static_cast<int64_t>(h.size())) sum += h[static_cast<size_t>(n - 1)];
      running(t, n) = static_cast<float>(sum);
    }
  }
  Extra run{.name = "halting_sum", .label = "running sum Σ_{n′≤n} h_t^{n′} against 1 − ε (halts at N(t))",
            .kind = ExtraKind::Curves, .value = Array::fromMat(running), .row_axis = "input step",
            .col_axis = "ponder step n", .categories = r.q_tokens};
  run.levels.push_back({.x = 1.0 - eps, .label = "1 − ε"});
  if (T <= 4)  // the halting steps, labelled, while they stay readable
    for (int64_t t = 0; t < T; ++t)
      run.markers.push_back({.x = static_cast<double>(halts[static_cast<size_t>(t)].steps()),
                             .label = (T == 1 ? "N" : "N(" + r.q_tokens[static_cast<size_t>(t)] + ")") + " = " +
                                      std::to_string(halts[static_cast<size_t>(t)].steps()),
                             .series = static_cast<int>(t)});
  run.stepwise = true;
  r.extras.push_back(std::move(run));
  r.extras.push_back({.name = "ponder", .label = "ponder time ρ_t = N(t) + R(t)", .kind = ExtraKind::TokenValues,
                      .value = Array::fromVector(ponder)});
  r.extras.push_back({.name = "ponder_cost", .label = "ponder cost Σ_t N(t) + R(t)", .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({static_cast<float>(cost)})});
  // N(t) and R(t) as numbers: p_t^n alone does not give them (h = 0, 0, 1 has p = 0, 0, 1 and N = 3).
  std::vector<float> steps, remainders;
  for (const ActHalting& a : halts) {
    steps.push_back(static_cast<float>(a.steps()));
    remainders.push_back(static_cast<float>(a.remainder()));
  }
  r.extras.push_back({.name = "n", .label = "ponder steps N(t)", .kind = ExtraKind::Data,
                      .value = Array::fromVector(steps), .integer = true});
  r.extras.push_back({.name = "r", .label = "remainder R(t)", .kind = ExtraKind::Data,
                      .value = Array::fromVector(remainders)});
  return r;
}

}  // namespace

VariantInfo makeActVariant() {
  VariantInfo v;
  v.name = "act";
  v.family = "adaptive computation";
  v.title = "Adaptive Computation Time";
  v.summary = "N(t) = min(min{n′ : Σ_{n≤n′} h_t^n ≥ 1−ε}, M),  R(t) = 1 − Σ_{n<N} h_t^n,  p_t^n = h_t^n or R(t),  "
              "ponder cost Σ N(t) + R(t)";
  v.citation = "Graves 2016";
  v.input = InputKind::SelfAttention;
  v.params = {
      {.key = "epsilon", .symbol = "ε", .type = ParamType::Float,
       .help = "Halting threshold: step t stops at the first n where Σ h_t^n ≥ 1 − ε; must be in (0, 1)", .min = 0,
       .max = 1, .def = 0.01},
      {.key = "max_steps", .symbol = "M", .type = ParamType::Int,
       .help = "Maximum ponder steps M per input step (≥ 1): N(t) ≤ M", .min = 1, .max = 100, .def = int64_t{10}},
      {.key = "mode", .symbol = "mode", .type = ParamType::Choice,
       .help = "rnn: a seeded tanh RNN with a sigmoid halting unit reads the input; manual: the list h gives "
               "h^1, h^2, … of one step",
       .def = std::string("rnn"), .choices = {"rnn", "manual"}},
      {.key = "halt_bias", .symbol = "b_h", .type = ParamType::Float,
       .help = "Bias of the halting unit h = σ(W_h s + b_h) (rnn mode): lower ponders longer", .min = -10,
       .max = 10, .def = 0.0},
      {.key = "h", .symbol = "h", .type = ParamType::FloatList,
       .help = "manual mode: halting values h^1, h^2, … (for example 0.1,0.3,0.2,0.5); past the list its last value",
       .min = 0, .max = 1, .def = std::vector<double>{0.1, 0.3, 0.2, 0.5, 0.4}, .per_head = false},
  };
  v.views = {"extras", "heatmap", "family"};
  v.run = act;
  return v;
}

}  // namespace attn
