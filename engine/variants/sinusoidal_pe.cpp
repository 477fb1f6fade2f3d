// Sinusoidal positional encoding (Vaswani et al. 2017, §3.5), positions
// counted from 0, sine and cosine interleaved:
//   PE(pos, 2i)   = sin(pos / base^(2i/d))
//   PE(pos, 2i+1) = cos(pos / base^(2i/d))          [L, d], base = 10000
// PE(i)·PE(j) = Σ_k cos((i − j)·ω_k) for even d: the similarity depends on
// the offset i − j only (a Toeplitz matrix).
#include "engine/attention_math.h"
#include "engine/variants/positional_encoding.h"

namespace attn {

VariantInfo makeSinusoidalPeVariant() {
  return positionVariant(
      "sinusoidal-pe", "Sinusoidal positional encoding",
      "PE(pos, 2i) = sin(pos / base^(2i/d)),  PE(pos, 2i+1) = cos(pos / base^(2i/d));  shown: PE·PEᵀ",
      "Vaswani et al. 2017, §3.5",
      {{.key = "base", .symbol = "10000", .type = ParamType::Float,
        .help = "Base of the geometric progression of wavelengths (10000 in the paper)", .min = 2, .max = 1e9,
        .log_scale = true, .def = 10000.0}},
      [](const Inputs& in, const Params& p, const RunContext& ctx) {
        const int64_t l = in.query().rows(), d = in.dim();
        const Mat pe = sinusoidalEncoding(l, d, p.getFloat("base"));
        ctx.check();
        Result r = positionEncodingResult(pe, in.tokens, "sinusoidal-pe");
        r.flops += 4.0 * l * d;  // angle, pow, sin/cos counted as one op each
        return r;
      });
}

}  // namespace attn
