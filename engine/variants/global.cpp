// Luong global attention (Luong et al. 2015, §3.1): soft attention over
// every source state, with the score function as a parameter:
//   a_t(s) = exp(score(h_t, h̄_s)) / Σ_s' exp(score(h_t, h̄_s'))   [Lq, Lk]
//   c_t    = Σ_s a_t(s) h̄_s                                      [Lq, d_v]
#include "engine/variants/score_functions.h"

namespace attn {

VariantInfo makeGlobalVariant() {
  return alignmentVariant(
      "global", "Global attention",
      "a_t(s) = softmax_s score(h_t, h̄_s) over all source states,  c_t = Σ_s a_t(s) h̄_s", "Luong et al. 2015, §3.1",
      {}, false, [](const Inputs& in, const Params& p, const RunContext& ctx) {
        return softAlignment(in, scoreOptions(p), "global", ctx);
      });
}

}  // namespace attn
