// GTrXL gating (Parisotto et al. 2020, §3.2): the residual connection
// x + y around a sublayer is replaced by a GRU-type gate g(x, y), with x the
// residual stream and y the sublayer's output (here multi-head attention):
//   r = σ(W_r y + U_r x),  z = σ(W_z y + U_z x − b_g),  ĥ = tanh(W_g y + U_g (r ⊙ x))
//   g = (1 − z) ⊙ x + z ⊙ ĥ
// A large b_g closes the update gate z, so g ≈ x: the layer starts near the
// identity, which the paper finds makes RL training stable. Shown next to the
// plain residual x + y and the pre-LayerNorm placement x + MHA(LN(x)).
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/registry.h"
#include "engine/variants/adaptive_computation.h"

#include <cmath>

namespace attn {

GruGateWeights makeGruGateWeights(int64_t d, uint64_t seed) {
  const float gain = 1.0f / std::sqrt(static_cast<float>(d));
  return {.w_r = randomNormal(d, d, seed, "gate_w_r", gain), .u_r = randomNormal(d, d, seed, "gate_u_r", gain),
          .w_z = randomNormal(d, d, seed, "gate_w_z", gain), .u_z = randomNormal(d, d, seed, "gate_u_z", gain),
          .w_g = randomNormal(d, d, seed, "gate_w_g", gain), .u_g = randomNormal(d, d, seed, "gate_u_g", gain)};
}

GruGate gruGate(const Mat& x, const Mat& y, const GruGateWeights& w, double b_g) {
  auto sigmoid = [](const Mat& a) -> Mat { return (1.0f + (-a.array()).exp()).inverse().matrix(); };
  GruGate o;
  // Rows are positions, so W y is y W here.            [L, d] each
  o.r = sigmoid(y * w.w_r + x * w.u_r);
  o.z = sigmoid(((y * w.w_z + x * w.u_z).array() - static_cast<float>(b_g)).matrix());
  o.h_hat = (y * w.w_g + o.r.cwiseProduct(x) * w.u_g).array().tanh();
  // g = (1 − z) ⊙ x + z ⊙ ĥ
  o.g = (1.0f - o.z.array()) * x.array() + o.z.array() * o.h_hat.array();
  return o;
}

namespace {

float relativeDistance(const Mat& a, const Mat& x) { return (a - x).norm() / std::max(x.norm(), 1e-30f); }

Result gtrxlGate(const Inputs& in, const Params& p, const RunContext& ctx) {
  const Mat& x = in.query();  // [L, d]
  const int64_t d = x.cols();
  const bool causal = p.getBool("causal");
  const double b_g = p.getFloat("b_g");
  const MultiHeadWeights mw = makeMultiHeadWeights(d, in.heads, in.seed);
  Result r;
  r.variant = "gtrxl-gate";
  r.q_tokens = in.tokens;
  r.k_tokens = in.tokens;
  // y = MHA(x)                                          [L, d]
  multiHeadAttention(x, x, x, mw, in.heads, causal, true, ctx, r);
  const Mat y = r.output;
  const GruGateWeights gw = makeGruGateWeights(d, in.seed);
  GruGate g = gruGate(x, y, gw, b_g);
  // The two residual placements it replaces: x + y, and pre-LN x + MHA(LN(x)).
  const Mat residual = x + y;
  Result pre;
  pre.variant = "gtrxl-gate";
  RunContext quiet;
  quiet.cancel = ctx.cancel;
  multiHeadAttention(layerNormRows(x), layerNormRows(x), layerNormRows(x), mw, in.heads, causal, true, quiet, pre);
  const Mat pre_ln = x + pre.output;

  auto matrix = [](std::string name, std::string label, const Mat& m, bool is_signed) {
    return Extra{.name = std::move(name), .label = std::move(label), .kind = ExtraKind::Matrix,
                 .value = Array::fromMat(m), .row_axis = "position", .col_axis = "feature",
                 .signed_values = is_signed};
  };
  auto scalar = [](std::string name, std::string label, float v) {
    return Extra{.name = std::move(name), .label = std::move(label), .kind = ExtraKind::Scalar,
                 .value = Array::fromVector({v})};
  };
  r.extras.push_back(matrix("z", "update gate z = σ(W_z y + U_z x − b_g)", g.z, false));
  r.extras.push_back(matrix("g", "gated output g = (1 − z) ⊙ x + z ⊙ ĥ", g.g, true));
  r.extras.push_back(matrix("residual", "plain residual x + y", residual, true));
  r.extras.push_back(matrix("pre_ln", "pre-LayerNorm residual x + MHA(LN(x))", pre_ln, true));
  r.extras.push_back(matrix("h_hat", "candidate ĥ = tanh(W_g y + U_g (r ⊙ x))", g.h_hat, true));
  r.extras.push_back(scalar("z_mean", "mean gate z", g.z.mean()));
  r.extras.push_back(scalar("gate_from_x", "‖g − x‖ / ‖x‖ (0: identity)", relativeDistance(g.g, x)));
  r.extras.push_back(scalar("residual_from_x", "‖(x + y) − x‖ / ‖x‖", relativeDistance(residual, x)));
  r.extras.push_back(scalar("pre_ln_from_x", "‖pre-LN − x‖ / ‖x‖", relativeDistance(pre_ln, x)));
  r.output = std::move(g.g);
  r.inputs["x"] = x;
  r.inputs["y"] = y;
  r.inputs["w_r"] = gw.w_r;
  r.inputs["u_r"] = gw.u_r;
  r.inputs["w_z"] = gw.w_z;
  r.inputs["u_z"] = gw.u_z;
  r.inputs["w_g"] = gw.w_g;
  r.inputs["u_g"] = gw.u_g;
  r.flops = 2.0 * r.flops + 12.0 * static_cast<double>(x.rows()) * d * d;  // two MHAs, six gate GEMMs
  return r;
}

}  // namespace

VariantInfo makeGtrxlGateVariant() {
  VariantInfo v;
  v.name = "gtrxl-gate";
  v.family = "adaptive computation";
  v.title = "GTrXL gating";
  v.summary = "g = (1 − z) ⊙ x + z ⊙ ĥ,  z = σ(W_z y + U_z x − b_g),  ĥ = tanh(W_g y + U_g(r ⊙ x)),  "
              "r = σ(W_r y + U_r x),  y = MHA(x)";
  v.citation = "Parisotto et al. 2020";
  v.input = InputKind::SelfAttention;
  v.params = {
      {.key = "b_g", .symbol = "b_g", .type = ParamType::Float,
       .help = "Gate bias b_g: large b_g closes z so g ≈ x (the near-identity start of training); very negative "
               "b_g gives g ≈ ĥ",
       .min = -20, .max = 20, .def = 2.0},
      causalParam(),
  };
  v.views = {"extras", "heatmap", "heads", "lines", "family"};
  v.run = gtrxlGate;
  return v;
}

}  // namespace attn
