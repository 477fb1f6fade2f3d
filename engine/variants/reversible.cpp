// Reversible residual layers (Kitaev et al. 2020, §3; Gomez et al. 2017):
//   Y₁ = X₁ + Attention(X₂),  Y₂ = X₂ + FeedForward(Y₁)
//   X₂ = Y₂ − FeedForward(Y₁),  X₁ = Y₁ − Attention(X₂)
// A stack of N layers (Attention = multi-head LSH attention of engine/lsh.h,
// FeedForward chunked, both pre-LN) runs forward from X₁ = X₂ = X, then backward from the
// top output alone. Shown: the float32 reconstruction error of every layer's
// input, the activations a normal stack keeps for the backward pass against
// the reversible one as N grows, and the chunked feed-forward: the same
// result with a c times smaller hidden block.
//
// Its own variant rather than extras of `lsh`: it is a different computation
// (a whole stack with feed-forward layers, N and d_ff), it shares only the
// hash options (lshParamSpecs()), and the lsh views stay about one layer.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/lsh.h"
#include "engine/multi_head.h"
#include "engine/registry.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

// One layer's attention: per head LSH attention on X W^q_h, X W^v_h, then W^o.
struct LshLayer {
  Mat w_q, w_v, w_o;  // [d, d]
  Mat rotations;      // [d_head, rounds·b/2]
  int64_t heads = 1;
  LshOptions o;
  const RunContext* ctx = nullptr;
  mutable std::vector<SparseRows> last_weights;  // of the last call, per head
  mutable double flops = 0;                      // of every call so far

  Mat operator()(const Mat& x) const {
    const int64_t d = x.cols(), dh = d / heads;
    const Mat q = x * w_q, v = x * w_v;  // [L, d]
    Mat cat(x.rows(), d);
    last_weights.clear();
    for (int64_t h = 0; h < heads; ++h) {
      LshHead head = lshAttentionHead(q.middleCols(h * dh, dh), v.middleCols(h * dh, dh), rotations, o, *ctx);
      cat.middleCols(h * dh, dh) = head.output;
      flops += head.flops;
      last_weights.push_back(std::move(head.weights));
    }
    flops += 3.0 * 2.0 * static_cast<double>(x.rows()) * d * d;  // W^q, W^v, W^o
    return cat * w_o;  // Concat(head_1 … head_H) W^o   [L, d]
  }
};

// The LSH work of the whole stack, layers × heads × lshPassCost in hash
// entries, against ctx.work_limit. Unbounded, 64 layers of 4 heads × 7 rounds
// × 4,096 buckets at L = 64 (a fuzz input) took 95-154 s under the
// sanitizers. At 2^25 a run takes ~0.14 s in a Release build, and admitted
// runs still took up to 16 s under the sanitizers, so the fuzz target sets 2^23.
void checkStackWork(int64_t layers, int64_t heads, int64_t length, const LshOptions& o, double limit) {
  const double cost = static_cast<double>(layers) * static_cast<double>(heads) * lshPassCost(o, length);
  if (cost <= limit) return;
  const int64_t m = std::min(o.chunk, o.wrap ? o.rounds * length : length);
  throw InputError("reversible: layers × heads × rounds × L × (n_buckets + 10m), m the chunk length, = " +
                   std::to_string(layers) + " × " + std::to_string(heads) + " × " + std::to_string(o.rounds) + " × " +
                   std::to_string(length) + " × (" + std::to_string(o.n_buckets) + " + 10·" + std::to_string(m) +
                   ") = " + std::to_string(static_cast<int64_t>(cost)) + " hash entries of LSH work per pass, more than " +
                   std::to_string(static_cast<int64_t>(limit)) + ": fewer layers, heads, rounds or buckets, smaller chunks or a shorter input");
}

double relativeError(const Mat& a, const Mat& b) {
  const double n = b.norm();
  return n > 0 ? (a - b).norm() / n : (a - b).norm();
}

Result reversible(const Inputs& in, const Params& p, const RunContext& ctx) {
  const LshOptions o = lshOptionsOf(p);
  const Mat& x = in.query();  // [L, d]
  const int64_t L = x.rows(), d = x.cols(), H = in.heads, N = p.getInt("layers"), c = p.getInt("ff_chunks");
  const int64_t dh = headDim(d, H), d_ff = p.getInt("ff_mult") * d;
  checkStackWork(N, H, L, o, ctx.work_limit);

  std::vector<LshLayer> attn(static_cast<size_t>(N));
  std::vector<FeedForward> ff;
  for (int64_t l = 0; l < N; ++l) {
    const std::string s = "reversible.l" + std::to_string(l);
    LshLayer& a = attn[static_cast<size_t>(l)];
    const float g = 1.0f / std::sqrt(static_cast<float>(d));
    a.w_q = randomNormal(d, d, in.seed, s + ".w_q", g);
    a.w_v = randomNormal(d, d, in.seed, s + ".w_v", g);
    a.w_o = randomNormal(d, d, in.seed, s + ".w_o", g);
    a.rotations = lshRotations(dh, o, in.seed + static_cast<uint64_t>(l));
    a.heads = H;
    a.o = o;
    a.ctx = &ctx;
    ff.push_back(makeFeedForward(d, d_ff, in.seed, s + ".ff"));
  }
  auto block = [&](int64_t l) {
    const LshLayer& a = attn[static_cast<size_t>(l)];
    const FeedForward& f = ff[static_cast<size_t>(l)];
    // F(X₂) = Attention(LN(X₂)), G(Y₁) = FeedForward(LN(Y₁)): pre-LN, so activations grow
    // additively with depth, not geometrically (LN without gain or bias)
    return ReversibleBlock{[&a](const Mat& m) { return a(layerNormRows(m)); },
                           [&f, c](const Mat& m) { return f(layerNormRows(m), c); }};
  };

  // Forward: X₁ = X₂ = X; keep every layer's input only to measure the reconstruction.
  std::vector<Mat> x1{x}, x2{x};
  Result r;
  double attn_bytes_sum = 0, attn_bytes_max = 0;
  for (int64_t l = 0; l < N; ++l) {
    Mat y1, y2;
    reversibleForward(block(l), x1.back(), x2.back(), y1, y2);
    double bytes = 0;
    for (const SparseRows& s : attn[static_cast<size_t>(l)].last_weights) bytes += s.bytes();
    attn_bytes_sum += bytes;
    attn_bytes_max = std::max(attn_bytes_max, bytes);
    if (l == 0) r.sparse = attn[0].last_weights;
    x1.push_back(std::move(y1));
    x2.push_back(std::move(y2));
    ctx.progress(0.45f * static_cast<float>(l + 1) / static_cast<float>(N));
  }

  // Backward from (Y₁, Y₂) of the top layer alone; error of each layer's input.
  Mat err(2, N + 1);  // [X₁, X₂] × layer input 0 … N
  Mat b1 = x1.back(), b2 = x2.back();
  err(0, N) = err(1, N) = 0;
  for (int64_t l = N - 1; l >= 0; --l) {
    Mat a1, a2;
    reversibleInverse(block(l), b1, b2, a1, a2);
    err(0, l) = static_cast<float>(relativeError(a1, x1[static_cast<size_t>(l)]));
    err(1, l) = static_cast<float>(relativeError(a2, x2[static_cast<size_t>(l)]));
    b1 = std::move(a1);
    b2 = std::move(a2);
    ctx.progress(0.45f + 0.45f * static_cast<float>(N - l) / static_cast<float>(N));
  }

  // Activations kept for the backward pass, MiB, for stacks of n = 1 … N layers:
  //   normal:     every layer's X₁, X₂ [L, d], FF hidden [L, d_ff] and attention weights
  //   reversible: the top Y₁, Y₂, plus one layer recomputed at a time (hidden block [L/c, d_ff], weights)
  const double mib = 1.0 / (1 << 20), f32 = sizeof(float);
  const double per_layer = (2.0 * L * d + static_cast<double>(L) * d_ff) * f32 + attn_bytes_sum / static_cast<double>(N);
  const double rev = 2.0 * L * d * f32 + static_cast<double>(ff[0].hiddenPeakFloats(L, c)) * f32 + attn_bytes_max;
  Mat memory(2, N + 1);
  for (int64_t n = 0; n <= N; ++n) {
    memory(0, n) = static_cast<float>(n * per_layer * mib);
    memory(1, n) = static_cast<float>((n == 0 ? 0.0 : rev) * mib);
  }

  // Chunked feed-forward on layer 0's LN(Y₁): the same rows, a smaller hidden block.
  const Mat ff_in = layerNormRows(x1[1]);
  const Mat ff_one = ff[0](ff_in, 1), ff_chunked = ff[0](ff_in, c);
  const double ff_diff = (ff_one - ff_chunked).cwiseAbs().maxCoeff();

  r.q_tokens = r.k_tokens = in.tokens;
  r.weights_label = "layer 0 LSH attention weight";
  r.scores_label = "layer 0: q_i·k_j/√d_head (k = q/‖q‖)";
  if (denseViewsFit(ctx, H, L, L)) {
    const Mat q = layerNormRows(x) * attn[0].w_q;  // layer 0's queries   [L, d]
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
    for (int64_t h = 0; h < H; ++h) {
      r.weights.push_back(toDenseValues(r.sparse[static_cast<size_t>(h)]));
      Mat k = q.middleCols(h * dh, dh);
      for (int64_t j = 0; j < L; ++j)
        if (const float n = k.row(j).norm(); n > 0) k.row(j) /= n;
      r.scores.emplace_back(L, L);
      r.scores.back().noalias() = (q.middleCols(h * dh, dh) * scale) * k.transpose();
    }
  }
  r.output = Mat(L, 2 * d);
  r.output << x1.back(), x2.back();  // [Y₁ | Y₂] of the top layer
  r.extras.push_back({.name = "reconstruction_error", .label = "float32 reconstruction error ‖X′ − X‖/‖X‖ of each layer's input (X′ recomputed from the output)",
                      .kind = ExtraKind::Curves, .value = Array::fromMat(err), .row_axis = "input",
                      .col_axis = "layer", .categories = {"X₁", "X₂"}});
  r.extras.push_back({.name = "activation_memory", .label = "activations kept for the backward pass (MiB)",
                      .kind = ExtraKind::Curves, .value = Array::fromMat(memory), .row_axis = "stack",
                      .col_axis = "layers N", .categories = {"normal", "reversible"}});
  r.extras.push_back({.name = "max_reconstruction_error", .label = "largest reconstruction error (relative)",
                      .kind = ExtraKind::Scalar, .value = Array::fromVector({err.maxCoeff()})});
  r.extras.push_back({.name = "ff_chunked_difference", .label = "chunked FF: max |FF₁(Y) − FF_c(Y)|",
                      .kind = ExtraKind::Scalar, .value = Array::fromVector({static_cast<float>(ff_diff)})});
  r.extras.push_back({.name = "ff_peak_bytes_1", .label = "FF hidden peak, 1 chunk (bytes)", .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({static_cast<float>(ff[0].hiddenPeakFloats(L, 1) * f32)})});
  r.extras.push_back({.name = "ff_peak_bytes_c", .label = "FF hidden peak, c chunks (bytes)", .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({static_cast<float>(ff[0].hiddenPeakFloats(L, c) * f32)})});
  // Every layer's tensors, so a run can be replayed (inputs/<name>.npy): "layer{l}_" + symbol.
  r.inputs["x"] = x;
  for (int64_t l = 0; l < N; ++l) {
    const std::string s = "layer" + std::to_string(l) + "_";
    const LshLayer& a = attn[static_cast<size_t>(l)];
    const FeedForward& f = ff[static_cast<size_t>(l)];
    r.inputs[s + "w_q"] = a.w_q;
    r.inputs[s + "w_v"] = a.w_v;
    r.inputs[s + "w_o"] = a.w_o;
    r.inputs[s + "R"] = a.rotations;
    r.inputs[s + "w_1"] = f.w1;
    r.inputs[s + "b_1"] = f.b1.transpose();
    r.inputs[s + "w_2"] = f.w2;
    r.inputs[s + "b_2"] = f.b2.transpose();
    for (const char* b : {"b_1", "b_2"}) r.vector_inputs.push_back(s + b);
  }
  // Forward and inverse: every attention call, and G twice per layer (2·2·L·d·d_ff each).
  for (const LshLayer& a : attn) r.flops += a.flops;
  r.flops += static_cast<double>(N) * 2.0 * 4.0 * static_cast<double>(L) * d * d_ff;
  return r;
}

}  // namespace

VariantInfo makeReversibleVariant() {
  VariantInfo v;
  v.name = "reversible";
  v.family = "reformer";
  v.title = "Reversible residual layers (Reformer)";
  v.summary = "Y₁ = X₁ + Attention(X₂), Y₂ = X₂ + FeedForward(Y₁); X₂ = Y₂ − FeedForward(Y₁), X₁ = Y₁ − Attention(X₂)";
  v.citation = "Kitaev et al. 2020, §3; Gomez et al. 2017";
  v.input = InputKind::SelfAttention;
  v.params = {
      {.key = "layers", .symbol = "N", .type = ParamType::Int, .help = "Layers in the stack", .min = 1, .max = 64,
       .def = int64_t{12}},
      {.key = "ff_chunks", .symbol = "c", .type = ParamType::Int,
       .help = "Feed-forward computed in c blocks of rows (same result, c times smaller hidden block)", .min = 1,
       .max = 4096, .def = int64_t{4}},
      {.key = "ff_mult", .symbol = "d_ff/d", .type = ParamType::Int, .help = "Feed-forward width d_ff as a multiple of d",
       .min = 1, .max = 16, .def = int64_t{4}},
  };
  const std::vector<ParamSpec> hash = lshParamSpecs();
  v.params.insert(v.params.end(), hash.begin(), hash.end());
  v.views = {"extras", "heatmap"};
  v.run = reversible;
  return v;
}

}  // namespace attn
