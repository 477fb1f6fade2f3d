// Adaptive attention span (Sukhbaatar et al. 2019, §3). Each head h learns a
// span z_h; a soft mask on the distance x = i − j ramps from 1 to 0 over R:
//   m_z(x)  = clamp((R + z − x) / R, 0, 1)
//   w_ij    = m_z(i − j) exp(s_ij) / Σ_j' m_z(i − j') exp(s_ij'),   s_ij = q_i·k_j / √d_head
// The causal window is the distances 1 … S: the current token is NOT a key,
// as in the paper and facebookresearch/adaptive-span (its keys are the S
// cached states before the query). Query 0 therefore has no key at all: its
// weights and output row are 0.
// Dynamic span (§3.2): z_t = S · σ(v·x_t + b), one span per query position.
//
// Only distances with m_z(x) > 0, i.e. 1 … min(S, ⌈z + R⌉ − 1), are computed:
// per head a band of ~L·(z + R) entries kept as SparseRows, never L×L.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/multi_head.h"
#include "engine/parallel.h"
#include "engine/registry.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

// m_z(x) = clamp((R + z − x) / R, 0, 1)
double spanMask(double x, double z, double ramp) { return std::clamp((ramp + z - x) / ramp, 0.0, 1.0); }

// Largest distance x ≤ S with m_z(x) > 0: x < z + R, so ⌈z + R⌉ − 1.
int64_t spanReach(double z, double ramp, int64_t max_span) {
  return std::clamp<int64_t>(static_cast<int64_t>(std::ceil(z + ramp)) - 1, 0, max_span);
}

// Queries per block: a block's scores against its keys [B, B + reach] are
// one GEMM, and rows outside the band are skipped after it.
constexpr int64_t kSpanBlock = 64;

Result adaptiveSpan(const Inputs& in, const Params& p, const RunContext& ctx) {
  const Mat& x = in.query();  // [L, d]
  const int64_t L = x.rows(), d = x.cols(), H = in.heads;
  const int64_t S = p.getInt("max_span");
  const double R = p.getFloat("ramp");
  const bool dynamic = p.getBool("dynamic");
  if (R <= 0) throw InputError("adaptive-span: ramp R must be > 0, got " + formatValue(R));
  const int64_t dh = headDim(d, H);

  // Q = X W^q, K = X W^k, V = X W^v             [L, d]; head h is columns [h·d_head, (h+1)·d_head)
  // (projected inputs, a real model's head: Q, K, V as given, no seeded W)
  const SelfProjections proj = selfProjections(in, "adaptive-span");
  const Mat &q = proj.q, &k = proj.k, &v = proj.v;
  ctx.progress(0.05f);

  // z [H, L]: the span of head h at query t. Static: z_h for every t (the
  // paper clamps z to [0, S]). Dynamic: z_t = S · σ(v_h·x_t + b).
  Mat z(H, L);
  Mat span_v;
  if (dynamic) {
    span_v = randomNormal(H, d, in.seed, "span_v", 1.0f / std::sqrt(static_cast<float>(d)));  // [H, d]
    const Mat logits = span_v * x.transpose();                                                // [H, L]
    const double b = p.getFloat("span_bias");
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < L; ++t) z(h, t) = static_cast<float>(S / (1.0 + std::exp(-(logits(h, t) + b))));
  } else {
    for (int64_t h = 0; h < H; ++h)
      z.row(h).setConstant(static_cast<float>(std::clamp(p.floatForHead("z", h), 0.0, static_cast<double>(S))));
  }

  Result r;
  r.q_tokens = in.tokens;
  r.k_tokens = in.tokens;
  r.sparse.resize(static_cast<size_t>(H));
  Mat out = Mat::Zero(L, d);  // Concat(head_1 … head_H), no W^o (engine/compare.h)
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  double entries = 0, entries_full = 0;
  const int64_t blocks = (L + kSpanBlock - 1) / kSpanBlock;
  for (int64_t h = 0; h < H; ++h) {
    // Row i holds the keys j = i − reach_i … i − 1 (reach_i = spanReach(z_hi) capped at i).
    SparseRows& sr = r.sparse[static_cast<size_t>(h)];
    sr.rows = sr.cols = L;
    sr.indptr.assign(static_cast<size_t>(L) + 1, 0);
    int64_t reach_max = 0;
    for (int64_t i = 0; i < L; ++i) {
      const int64_t reach = std::min(i, spanReach(z(h, i), R, S));
      reach_max = std::max(reach_max, reach);
      sr.indptr[static_cast<size_t>(i) + 1] = sr.indptr[static_cast<size_t>(i)] + reach;
      entries_full += static_cast<double>(std::min(i, S));
    }
    sr.indices.resize(static_cast<size_t>(sr.indptr.back()));
    sr.values.resize(sr.indices.size());
    entries += static_cast<double>(sr.indices.size());
    const Mat qh = q.middleCols(h * dh, dh), kh = k.middleCols(h * dh, dh), vh = v.middleCols(h * dh, dh);

    // Blocks write disjoint rows of `sr` and `out`.
    parallelFor(blocks, ctx, [&](int64_t blk) {
      const int64_t i0 = blk * kSpanBlock, i1 = std::min(L, i0 + kSpanBlock);
      // Keys of the block: [k0, k1) = [i0 − reach_max, i1 − 1)
      const int64_t k0 = std::max<int64_t>(0, i0 - reach_max), k1 = std::max<int64_t>(k0, i1 - 1);
      if (k1 == k0) return;  // only query 0: no keys
      // s = Q_h[block] K_h[keys]ᵀ / √d_head          [B, k1 − k0]
      const Mat s = (qh.middleRows(i0, i1 - i0) * scale) * kh.middleRows(k0, k1 - k0).transpose();
      Mat wb = Mat::Zero(i1 - i0, k1 - k0);
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t e0 = sr.rowBegin(i), n = sr.rowEnd(i) - e0;
        if (n == 0) continue;
        const int64_t j0 = i - n;  // keys j0 … i − 1, distances n … 1
        const float* srow = s.data() + (i - i0) * s.cols() + (j0 - k0);
        const float mx = *std::max_element(srow, srow + n);
        // w_ij = m_z(i − j) exp(s_ij − max) / Σ …
        float sum = 0;
        for (int64_t e = 0; e < n; ++e) {
          const float m = static_cast<float>(spanMask(static_cast<double>(n - e), z(h, i), R));
          const float we = m * std::exp(srow[e] - mx);
          sr.indices[static_cast<size_t>(e0 + e)] = static_cast<int32_t>(j0 + e);
          sr.values[static_cast<size_t>(e0 + e)] = we;
          sum += we;
        }
        float* wrow = wb.data() + (i - i0) * wb.cols() + (j0 - k0);
        for (int64_t e = 0; e < n; ++e) wrow[e] = sr.values[static_cast<size_t>(e0 + e)] /= sum;
      }
      // head_h[block] = W[block] V_h[keys]            [B, d_head]
      out.block(i0, h * dh, i1 - i0, dh).noalias() = wb * vh.middleRows(k0, k1 - k0);
    });
    ctx.progress(0.05f + 0.9f * static_cast<float>(h + 1) / static_cast<float>(H));
  }
  r.output = std::move(out);

  // Dense copies only where they fit (engine/sparse.h).
  if (denseViewsFit(ctx, H, L, L)) {
    for (int64_t h = 0; h < H; ++h) {
      r.weights.push_back(toDenseValues(r.sparse[static_cast<size_t>(h)]));
      r.scores.emplace_back(L, L);
      r.scores.back().noalias() = (q.middleCols(h * dh, dh) * scale) * k.middleCols(h * dh, dh).transpose();
    }
  }
  r.weights_label = "w_ij = m_z(i−j) e^s_ij / Σ";

  // The ramp m_z(x) for x = 0 … S per head, at z_h (dynamic: the mean z_t).
  Mat ramp(H, S + 1);
  std::vector<float> span(static_cast<size_t>(H));
  std::vector<Marker> markers;
  for (int64_t h = 0; h < H; ++h) {
    const double zh = z.row(h).mean();
    span[static_cast<size_t>(h)] = static_cast<float>(zh);
    for (int64_t xd = 0; xd <= S; ++xd) ramp(h, xd) = static_cast<float>(spanMask(static_cast<double>(xd), zh, R));
    const int series = static_cast<int>(h);
    markers.push_back({.x = zh, .label = "z h" + std::to_string(h), .series = series});
    markers.push_back({.x = zh + R, .label = "z+R (R=" + formatValue(R) + ")", .series = series});
  }
  // Attention FLOPs per kept entry: q·k (2 d_head), w·v (2 d_head), mask, exp and normalise (~6).
  const double per_entry = 4.0 * static_cast<double>(dh) + 6.0;
  const double flops_used = per_entry * entries, flops_full = per_entry * entries_full;
  r.extras.push_back({.name = "ramp", .label = "soft mask m_z(x) = clamp((R + z − x)/R, 0, 1)",
                      .kind = ExtraKind::Curves, .value = Array::fromMat(ramp), .row_axis = "head",
                      .col_axis = "distance x = i − j", .markers = std::move(markers)});
  r.extras.push_back({.name = "span", .label = dynamic ? "mean span z_t per head" : "span z per head",
                      .kind = ExtraKind::HeadValues, .value = Array::fromVector(span)});
  if (dynamic) {
    r.extras.push_back({.name = "z_t", .label = "dynamic span z_t = S·σ(v·x_t + b)", .kind = ExtraKind::Matrix,
                        .value = Array::fromMat(z), .row_axis = "head", .col_axis = "position"});
    r.extras.push_back({.name = "z_t_h0", .label = "span z_t per position, head 0", .kind = ExtraKind::TokenValues,
                        .value = Array::fromVec(z.row(0).transpose())});
  }
  r.extras.push_back({.name = "flops_used", .label = "attention FLOPs within the spans", .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({static_cast<float>(flops_used)})});
  r.extras.push_back({.name = "flops_full_span", .label = "attention FLOPs at full span S", .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({static_cast<float>(flops_full)})});
  r.extras.push_back({.name = "flops_saved", .label = "FLOPs saved against span S (fraction)",
                      .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({static_cast<float>(flops_full > 0 ? 1.0 - flops_used / flops_full
                                                                                    : 0.0)})});

  recordSelfProjections(in, proj, r);
  if (dynamic) r.inputs["span_v"] = span_v;
  if (!dynamic) {  // the span growing: every head's z set to 0, 1, … S in turn
    r.timeline.param = "z";
    r.timeline.count = S + 1;
  }
  r.flops = (in.projected ? 0.0 : 3.0 * 2.0 * L * d * d) + flops_used + (dynamic ? 2.0 * H * L * d : 0.0);
  return r;
}

}  // namespace

VariantInfo makeAdaptiveSpanVariant() {
  VariantInfo v;
  v.name = "adaptive-span";
  v.family = "adaptive span";
  v.title = "Adaptive attention span";
  v.summary = "w_ij ∝ m_z(i−j) exp(q_i·k_j/√d_head) over distances 1…S,  m_z(x) = clamp((R + z − x)/R, 0, 1)";
  v.citation = "Sukhbaatar et al. 2019";
  v.input = InputKind::SelfAttention;
  v.given_qkv = GivenQkv::Heads;
  v.params = {
      {.key = "max_span", .symbol = "S", .type = ParamType::Int,
       .help = "Maximum span S: query i attends to the distances 1 … S (not to itself)", .min = 1, .max = 65536,
       .log_scale = true, .def = int64_t{8}},
      {.key = "ramp", .symbol = "R", .type = ParamType::Float,
       .help = "Ramp length R of the soft mask (> 0): m_z falls from 1 at x = z to 0 at x = z + R", .min = 0,
       .max = 4096, .def = 2.0},
      {.key = "z", .symbol = "z", .type = ParamType::FloatList,
       .help = "Span z per head (z=8,16,32,64; heads past the list take its last value; clamped to S as the paper "
               "clamps z to [0, S]); ignored when dynamic",
       .min = 0, .max = 65536, .log_scale = true, .def = std::vector<double>{1, 3, 5, 8}},
      {.key = "dynamic", .symbol = "dynamic", .type = ParamType::Bool,
       .help = "Dynamic span: z_t = S·σ(v·x_t + b) per query position, v seeded per head", .def = false},
      {.key = "span_bias", .symbol = "b", .type = ParamType::Float,
       .help = "Bias b of the dynamic span z_t = S·σ(v·x_t + b)", .min = -20, .max = 20, .def = 0.0},
  };
  v.views = {"heatmap", "heads", "extras", "compare"};
  v.run = adaptiveSpan;
  return v;
}

}  // namespace attn
