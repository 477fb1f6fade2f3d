#include "engine/variants/positional_encoding.h"

#include "engine/attention_math.h"

namespace attn {

Result positionEncodingResult(const Mat& pe, std::vector<std::string> tokens, const std::string& what) {
  const int64_t l = pe.rows(), d = pe.cols();
  checkDenseBudget(1, l, l, 2, what);
  Result r;
  r.q_tokens = tokens;
  r.k_tokens = std::move(tokens);
  // S = PE·PEᵀ: S_ij = Σ_k PE(i, k) PE(j, k)      [L, L]
  Mat sim(l, l);
  sim.noalias() = pe * pe.transpose();
  r.scores.assign(1, sim);
  r.weights.assign(1, std::move(sim));
  r.weights_are_probabilities = false;
  r.weights_label = "PE·PEᵀ";
  r.scores_label = "PE·PEᵀ";
  r.extras.push_back({.name = "pe", .label = "positional encoding PE", .kind = ExtraKind::Matrix,
                      .value = Array::fromMat(pe), .row_axis = "position", .col_axis = "dimension",
                      .signed_values = true});
  r.flops += 2.0 * l * l * d;
  return r;
}

VariantInfo positionVariant(std::string name, std::string title, std::string summary, std::string citation,
                            std::vector<ParamSpec> params, decltype(VariantInfo::run) run) {
  return {.name = std::move(name), .family = "positions", .title = std::move(title), .summary = std::move(summary),
          .citation = std::move(citation), .input = InputKind::PositionsOnly, .params = std::move(params),
          .views = {"heatmap", "extras", "family"}, .run = std::move(run)};
}

}  // namespace attn
