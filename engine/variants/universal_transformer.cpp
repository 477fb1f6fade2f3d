// Universal Transformer (Dehghani et al. 2019): one block with shared weights
// applied recurrently over the whole sequence, t = 1 … T:
//   P^t     = PE(position) + PE(t)                   position-plus-time signal   [L, d]
//   A^t     = LayerNorm(H^{t−1} + MultiHeadAttention(H^{t−1} + P^t))             [L, d]
//   H^t     = LayerNorm(A^t + Transition(A^t)),  Transition(A) = ReLU(A W_1) W_2  [L, d]
// with H^0 = x. Dynamic halting (§2.2) is ACT per position: before step t,
// position i's halting unit reads the step's input, h_i^t = σ((H_i^{t−1} +
// P_i^t) w_h + b_h), as the tensor2tensor reference does (ut_function act:
// the halting dense layer sees the state plus timing signal), and N_i, R_i,
// p_i^t follow Graves' rule (engine/variants/adaptive_computation.h). Steps
// 1 … N_i update the position; after N_i its state is copied forward
// unchanged (it still serves as a key and value) until all have halted or
// t = max_steps.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/registry.h"
#include "engine/variants/adaptive_computation.h"

#include <cmath>
#include <cstdio>

namespace attn {

UtWeights makeUtWeights(int64_t d, int64_t heads, uint64_t seed) {
  const float gain = 1.0f / std::sqrt(static_cast<float>(d));
  UtWeights w;
  w.attention = makeMultiHeadWeights(d, heads, seed);
  w.w_1 = randomNormal(d, 2 * d, seed, "ut_w_1", std::sqrt(2.0f) * gain);
  w.w_2 = randomNormal(2 * d, d, seed, "ut_w_2", gain / std::sqrt(2.0f));
  // (H + P) w_h ~ N(0, 2²·2): LayerNorm'd states and the sinusoids are O(1)
  // per entry, so positions differ enough in h to halt at different steps.
  w.w_h = randomNormal(d, 1, seed, "ut_w_h", 2.0f * gain);
  return w;
}

UtRun universalTransformer(const Mat& x, const UtWeights& w, int64_t heads, double eps, int64_t max_steps,
                           double halt_bias, const RunContext& ctx) {
  const int64_t L = x.rows(), d = x.cols();
  std::vector<ActHalting> halting(static_cast<size_t>(L), ActHalting(eps, max_steps, "universal-transformer"));
  const Mat pos = sinusoidalEncoding(L, d);               // PE(position)   [L, d]
  const Mat time = sinusoidalEncoding(max_steps + 1, d);  // PE(t), row t   [M + 1, d]
  RunContext inner;  // the block's own progress is not the run's
  inner.cancel = ctx.cancel;
  UtRun run;
  run.states.push_back(x);
  Mat h = x;  // H^{t−1}
  int64_t running = L;
  for (int64_t t = 1; t <= max_steps && running > 0; ++t) {
    // H^{t−1} + P^t                                        [L, d]
    Mat in = h + pos;
    in.rowwise() += time.row(t);
    // h_i^t = σ((H_i^{t−1} + P_i^t) w_h + b_h) for the positions still running
    const Mat logits = in * w.w_h;  // [L, 1]
    std::vector<bool> update(static_cast<size_t>(L));
    for (int64_t i = 0; i < L; ++i) {
      ActHalting& hi = halting[static_cast<size_t>(i)];
      update[static_cast<size_t>(i)] = !hi.halted();
      if (hi.halted()) continue;
      if (hi.add(1.0 / (1.0 + std::exp(-(static_cast<double>(logits(i, 0)) + halt_bias))))) --running;
    }
    Result mha;
    mha.variant = "universal-transformer";
    multiHeadAttention(in, in, in, w.attention, heads, false, true, inner, mha);
    // A^t = LN(H^{t−1} + MHA(H^{t−1} + P^t))                [L, d]
    const Mat a = layerNormRows(h + mha.output);
    // H^t = LN(A^t + ReLU(A^t W_1) W_2)                     [L, d]
    const Mat hidden = (a * w.w_1).cwiseMax(0.0f);
    Mat next = a;
    next.noalias() += hidden * w.w_2;
    next = layerNormRows(next);
    // Positions that ran this step take H^t; the others are copied forward.
    for (int64_t i = 0; i < L; ++i)
      if (update[static_cast<size_t>(i)]) h.row(i) = next.row(i);
    run.states.push_back(h);
    run.attention.push_back(std::move(mha.weights));
    run.last_scores = std::move(mha.scores);
    ctx.progress(static_cast<float>(t) / static_cast<float>(max_steps));
  }
  const int64_t T = static_cast<int64_t>(run.attention.size());
  run.p = Mat::Zero(L, T);
  for (int64_t i = 0; i < L; ++i) {
    const ActHalting& hi = halting[static_cast<size_t>(i)];
    run.steps.push_back(hi.steps());
    run.remainders.push_back(hi.remainder());
    for (int64_t t = 0; t < hi.steps(); ++t) run.p(i, t) = static_cast<float>(hi.weights()[static_cast<size_t>(t)]);
  }
  run.time_signal = time.middleRows(1, T);
  return run;
}

namespace {

Result universalTransformerVariant(const Inputs& in, const Params& p, const RunContext& ctx) {
  const Mat& x = in.query();  // [L, d]
  const int64_t L = x.rows(), d = x.cols(), H = in.heads;
  const int64_t M = p.getInt("max_steps");
  headDim(d, H);
  checkDenseBudget(H, L, L, M + 2, "universal-transformer");
  const UtWeights w = makeUtWeights(d, H, in.seed);
  UtRun run = universalTransformer(x, w, H, p.getFloat("epsilon"), M, p.getFloat("halt_bias"), ctx);
  const int64_t T = static_cast<int64_t>(run.attention.size());

  Result r;
  r.q_tokens = in.tokens;
  r.k_tokens = in.tokens;
  r.weights = run.attention.back();  // the last step's block
  r.scores = std::move(run.last_scores);
  r.weights_label = "attention weight, step " + std::to_string(T);
  r.output = run.states.back();

  // Ponder map [L, T]: 0 updating, 1 halts at this step (weight R_i), 2 halted (copied).
  Mat map(L, T);
  std::vector<float> ponder(static_cast<size_t>(L));
  std::vector<std::string> captions;
  double cost = 0;
  for (int64_t i = 0; i < L; ++i) {
    const int64_t n = run.steps[static_cast<size_t>(i)];
    for (int64_t t = 0; t < T; ++t) map(i, t) = t + 1 < n ? 0.0f : t + 1 == n ? 1.0f : 2.0f;
    const double rho = static_cast<double>(n) + run.remainders[static_cast<size_t>(i)];
    ponder[static_cast<size_t>(i)] = static_cast<float>(rho);
    cost += rho;
    char buf[64];
    std::snprintf(buf, sizeof buf, "\nN=%lld\nR=%.2f", static_cast<long long>(n), run.remainders[static_cast<size_t>(i)]);
    captions.push_back(in.tokens[static_cast<size_t>(i)] + buf);
  }
  // Step t's weights of head 0                       [T, L, L]
  std::vector<Mat> steps;
  for (const std::vector<Mat>& a : run.attention) steps.push_back(a[0]);
  r.extras.push_back({.name = "ponder_map", .label = "ponder map: which positions still update at each step",
                      .kind = ExtraKind::Matrix, .value = Array::fromMat(map), .row_axis = "position",
                      .col_axis = "step", .categories = {"updating", "halts here (weight R)", "halted, copied"}});
  r.extras.push_back({.name = "ponder_time", .label = "ponder time per token N + R", .kind = ExtraKind::TokenValues,
                      .value = Array::fromVector(ponder)});
  r.extras.push_back({.name = "p", .label = "halting weights p_i^t per position", .kind = ExtraKind::Stacked,
                      .value = Array::fromMat(run.p), .row_axis = "position", .col_axis = "step",
                      .row_labels = std::move(captions)});
  r.extras.push_back({.name = "attention_steps", .label = "attention at each step (head 0)",
                      .kind = ExtraKind::Weights, .value = Array::fromMats(steps), .slice_axis = "step"});
  r.extras.push_back({.name = "time_signal", .label = "time signal PE(t) of P^t = PE(position) + PE(t)",
                      .kind = ExtraKind::Matrix, .value = Array::fromMat(run.time_signal), .row_axis = "step",
                      .col_axis = "dimension", .signed_values = true});
  std::vector<float> halting(run.steps.begin(), run.steps.end());
  r.extras.push_back({.name = "halting_step", .label = "halting step N_i of each position", .kind = ExtraKind::Data,
                      .value = Array::fromVector(halting), .integer = true});
  r.extras.push_back({.name = "steps_run", .label = "steps run", .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({static_cast<float>(T)})});
  r.extras.push_back({.name = "ponder_cost", .label = "ponder cost Σ N + R", .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({static_cast<float>(cost)})});

  r.inputs["x"] = x;
  r.inputs["w_q"] = w.attention.w_q;
  r.inputs["w_k"] = w.attention.w_k;
  r.inputs["w_v"] = w.attention.w_v;
  r.inputs["w_o"] = w.attention.w_o;
  r.inputs["w_1"] = w.w_1;
  r.inputs["w_2"] = w.w_2;
  r.inputs["w_h"] = w.w_h;
  // Per step: the four projections, QKᵀ and PV, the transition.
  r.flops = static_cast<double>(T) * (8.0 * L * d * d + 4.0 * L * L * d + 8.0 * L * d * d);
  return r;
}

}  // namespace

VariantInfo makeUniversalTransformerVariant() {
  VariantInfo v;
  v.name = "universal-transformer";
  v.family = "adaptive computation";
  v.title = "Universal Transformer";
  v.summary = "A^t = LN(H^{t−1} + MHA(H^{t−1} + P^t)),  H^t = LN(A^t + Transition(A^t)); ACT halting per position";
  v.citation = "Dehghani et al. 2019";
  v.input = InputKind::SelfAttention;
  v.params = {
      {.key = "epsilon", .symbol = "ε", .type = ParamType::Float,
       .help = "Halting threshold: position i stops at the first step where Σ h_i^t ≥ 1 − ε; must be in (0, 1)",
       .min = 0, .max = 1, .def = 0.01},
      {.key = "max_steps", .symbol = "M", .type = ParamType::Int,
       .help = "Step limit M (≥ 1): the block runs at most M times", .min = 1, .max = 32, .def = int64_t{8}},
      {.key = "halt_bias", .symbol = "b_h", .type = ParamType::Float,
       .help = "Bias of the halting unit h = σ((H + P) w_h + b_h): lower ponders longer", .min = -10, .max = 10,
       .def = 1.5},
  };
  v.views = {"extras", "heatmap", "heads", "lines", "family"};
  v.run = universalTransformerVariant;
  return v;
}

}  // namespace attn
