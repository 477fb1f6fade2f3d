// Pointer networks (Vinyals et al. 2015, eq. 3): attention whose weights are
// the output, a distribution over the input positions at each decoder step:
//   u_j^i       = vᵀ tanh(W₁ e_j + W₂ d_i)      j ∈ 1…n (input), i ∈ 1…m (decoder)
//   p(C_i = j)  = softmax_j(u^i)
// e [n, d_e] are the encoder states, d [m, d_d] the decoder states. Rows are
// positions, so W₁ e_j is the row e_j W₁ᵀ here.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/registry.h"
#include "engine/variants/score_functions.h"

#include <cmath>

namespace attn {

namespace {

Result pointer(const Inputs& in, const Params& p, const RunContext& ctx) {
  // e [n, d_e], d [m, d_d]: the files, else as in cross-attention the source
  // x_kv is what is attended to (the encoded input, n = S) and the target x
  // asks (the decoder steps, m = L).
  const std::string& enc_path = p.getString("enc");
  const std::string& dec_path = p.getString("dec");
  const Mat e = enc_path.empty() ? in.key() : readInputMatrix(enc_path, "enc", "[n, d_e]");
  const Mat d = dec_path.empty() ? in.query() : readInputMatrix(dec_path, "dec", "[m, d_d]");
  const int64_t n = e.rows(), m = d.rows(), d_a = p.getInt("d_a");
  checkDenseBudget(1, m, n, 2, "pointer");  // u, p
  // W₁, W₂ ~ N(0, 1/d) give unit-variance projections of unit-variance
  // states; v ~ N(0, 9/d_a) spreads u over a few units, as in `additive`.
  const Mat w_1 = randomNormal(d_a, e.cols(), in.seed, "w_1", 1.0f / std::sqrt(static_cast<float>(e.cols())));
  const Mat w_2 = randomNormal(d_a, d.cols(), in.seed, "w_2", 1.0f / std::sqrt(static_cast<float>(d.cols())));
  const Vec v = randomNormal(d_a, 1, in.seed, "v", 3.0f / std::sqrt(static_cast<float>(d_a))).col(0);
  // u_j^i = vᵀ tanh(W₁ e_j + W₂ d_i)                         [m, n]
  const Mat w1e = e * w_1.transpose();  // W₁ e_j             [n, d_a]
  const Mat w2d = d * w_2.transpose();  // W₂ d_i             [m, d_a]
  Result r;
  r.scores.assign(1, tanhScores(w2d, w1e, v));
  ctx.check();
  // p(C_i = j) = softmax_j(u^i)                              [m, n]
  r.weights.resize(1);
  maskedSoftmaxRows(r.scores[0], Mat(), r.weights[0]);
  r.weights_label = "pointer p(C_i = j)";
  r.scores_label = "score u_j^i";
  r.q_tokens = !dec_path.empty() || static_cast<int64_t>(in.tokens.size()) != m ? positionTokens(m, "d") : in.tokens;
  r.k_tokens = !enc_path.empty() || static_cast<int64_t>(in.source_tokens.size()) != n ? positionTokens(n, "e")
                                                                                         : in.source_tokens;
  // argmax_j p(C_i = j): the position each decoder step points to    [m]
  Vec pointed(m);
  for (int64_t i = 0; i < m; ++i) {
    Eigen::Index j = 0;
    r.weights[0].row(i).maxCoeff(&j);
    pointed(i) = static_cast<float>(j);
  }
  r.extras.push_back({.name = "pointed", .label = "pointed-to input argmax_j p(C_i = j)",
                      .kind = ExtraKind::QueryPosition, .value = Array::fromVec(pointed)});
  r.inputs["enc"] = e;
  r.inputs["dec"] = d;
  r.inputs["w_1"] = w_1;
  r.inputs["w_2"] = w_2;
  r.inputs["v"] = v;
  r.vector_inputs = {"v"};
  r.flops = 2.0 * static_cast<double>(n * e.cols() + m * d.cols()) * d_a  // W₁ e_j, W₂ d_i
            + 4.0 * static_cast<double>(m) * n * d_a                    // add, tanh, multiply-add with v
            + 3.0 * static_cast<double>(m) * n;                         // softmax
  return r;
}

}  // namespace

VariantInfo makePointerVariant() {
  VariantInfo v;
  v.name = "pointer";
  v.family = "memory and pointers";
  v.title = "Pointer network";
  v.summary = "u_j^i = vᵀ tanh(W₁ e_j + W₂ d_i);  p(C_i = j) = softmax_j(u^i)";
  v.citation = "Vinyals et al. 2015";
  v.input = InputKind::CrossAttention;
  v.params = {
      {.key = "d_a", .symbol = "d_a", .type = ParamType::Int,
       .help = "Hidden size of W₁, W₂ and v (rows of W₁ and W₂)", .min = 1, .max = 1024, .def = int64_t{32}},
      {.key = "enc", .symbol = "e", .type = ParamType::File,
       .help = "Encoder states e as a .npy [n, d_e] (it decides n); empty: the source x_kv (n = --source-length)",
       .def = std::string(), .file_shape = "[n, d_e]"},
      {.key = "dec", .symbol = "d", .type = ParamType::File,
       .help = "Decoder states d as a .npy [m, d_d] (it decides m); empty: the input x (m = --length)",
       .def = std::string(), .file_shape = "[m, d_d]"},
  };
  v.views = {"heatmap", "family"};
  v.row_axis = "decoder step";
  v.col_axis = "input position";
  v.run = pointer;
  return v;
}

}  // namespace attn
