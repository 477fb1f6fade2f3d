// Sinusoidal positional encoding (Vaswani et al. 2017, §3.5), positions
// counted from 0, sine and cosine interleaved:
//   PE(pos, 2i)   = sin(pos / base^(2i/d))
//   PE(pos, 2i+1) = cos(pos / base^(2i/d))          [L, d], base = 10000
// PE(i)·PE(j) = Σ_k cos((i − j)·ω_k) for even d: the similarity depends on
// the offset i − j only (a Toeplitz matrix).
// The paper's reason for sinusoids (§3.5): for any offset k, PE_{pos+k} is a
// linear function of PE_pos, the same for every pos: M_k is block diagonal,
// one rotation by k·ω_i per sin/cos pair,
//   [PE(pos+k, 2i)  ]   [ cos kω_i  sin kω_i] [PE(pos, 2i)  ]
//   [PE(pos+k, 2i+1)] = [−sin kω_i  cos kω_i] [PE(pos, 2i+1)]
// The extras show M_k and, per position, ‖PE_{pos+k} − M_k·PE_pos‖ over the
// paired dimensions (an odd d's last dimension has no partner), on the very
// table the variant computes (extended to L + k positions): float rounding,
// ~1e-6, whatever k and pos.
#include "engine/attention_math.h"
#include "engine/variants/positional_encoding.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attn {

VariantInfo makeSinusoidalPeVariant() {
  return positionVariant(
      "sinusoidal-pe", "Sinusoidal positional encoding",
      "PE(pos, 2i) = sin(pos / base^(2i/d)),  PE(pos, 2i+1) = cos(pos / base^(2i/d));  shown: PE·PEᵀ",
      "Vaswani et al. 2017, §3.5",
      {{.key = "base", .symbol = "10000", .type = ParamType::Float,
        .help = "Base of the geometric progression of wavelengths (10000 in the paper)", .min = 2, .max = 1e9,
        .log_scale = true, .def = 10000.0},
       {.key = "k", .symbol = "k", .type = ParamType::Int,
        .help = "Offset k of the relation PE_{pos+k} = M_k·PE_pos (extras: the rotation M_k and the residual per position)",
        .min = 0, .max = 4096, .def = int64_t{3}}},
      [](const Inputs& in, const Params& p, const RunContext& ctx) {
        const int64_t l = in.query().rows(), d = in.dim(), k = p.getInt("k");
        const double base = p.getFloat("base");
        const Mat pe = sinusoidalEncoding(l, d, base);
        ctx.check();
        Result r = positionEncodingResult(pe, in.tokens, "sinusoidal-pe");
        r.flops += 4.0 * l * d;  // angle, pow, sin/cos counted as one op each
        checkDenseBudget(1, d, d, 1, "sinusoidal-pe M_k");
        // M_k [d, d]: a 2×2 rotation by k·ω_i on each pair (2i, 2i+1).
        Mat m = Mat::Zero(d, d);
        std::vector<double> omega(static_cast<size_t>(d / 2));
        for (int64_t i = 0; 2 * i + 1 < d; ++i) {
          omega[static_cast<size_t>(i)] = 1.0 / std::pow(base, 2.0 * static_cast<double>(i) / static_cast<double>(d));
          const double a = static_cast<double>(k) * omega[static_cast<size_t>(i)];
          m(2 * i, 2 * i) = static_cast<float>(std::cos(a));
          m(2 * i, 2 * i + 1) = static_cast<float>(std::sin(a));
          m(2 * i + 1, 2 * i) = static_cast<float>(-std::sin(a));
          m(2 * i + 1, 2 * i + 1) = static_cast<float>(std::cos(a));
        }
        // ‖PE_{pos+k} − M_k·PE_pos‖ per position, on the table extended to L + k rows.
        checkDenseBudget(1, l + k, d, 1, "sinusoidal-pe with offset k");
        const Mat ext = k == 0 ? pe : sinusoidalEncoding(l + k, d, base);
        const int64_t paired = 2 * static_cast<int64_t>(omega.size());
        std::vector<float> residual(static_cast<size_t>(l));
        float worst = 0;
        for (int64_t pos = 0; pos < l; ++pos) {
          const Vec moved = m.topLeftCorner(paired, paired) * ext.row(pos).head(paired).transpose();
          const float e = (ext.row(pos + k).head(paired).transpose() - moved).norm();
          residual[static_cast<size_t>(pos)] = e;
          worst = std::max(worst, e);
        }
        ctx.check();
        r.flops += 4.0 * static_cast<double>(l) * static_cast<double>(paired);
        const std::string kk = std::to_string(k);
        r.extras.push_back({.name = "m_k", .label = "M_" + kk + ": PE_{pos+" + kk + "} = M_" + kk + "·PE_pos",
                            .kind = ExtraKind::Matrix, .value = Array::fromMat(m), .row_axis = "dimension of PE at pos + k",
                            .col_axis = "dimension of PE at pos", .signed_values = true});
        r.extras.push_back({.name = "shift_residual", .label = "‖PE_{pos+" + kk + "} − M_" + kk + "·PE_pos‖",
                            .kind = ExtraKind::TokenValues, .value = Array::fromVector(residual)});
        r.extras.push_back({.name = "max_shift_residual", .label = "largest residual over the positions",
                            .kind = ExtraKind::Scalar, .value = Array::fromVector({worst})});
        return r;
      });
}

}  // namespace attn
