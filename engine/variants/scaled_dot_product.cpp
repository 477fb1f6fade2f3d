// Scaled dot-product attention (Vaswani et al. 2017, eq. 1):
//   Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V
// on the given Q, K, V directly (no projections, one head).
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/mat_pool.h"
#include "engine/npy.h"
#include "engine/parallel.h"
#include "engine/registry.h"

#include <algorithm>
#include <cmath>

namespace attn {

VariantInfo makeScaledDotProductVariant() {
  VariantInfo v;
  v.name = "scaled-dot-product";
  v.family = "core";
  v.title = "Scaled dot-product attention";
  v.summary = "Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V";
  v.citation = "Vaswani et al. 2017, eq. 1";
  v.input = InputKind::SelfAttention;
  v.given_qkv = GivenQkv::OneHead;
  v.params = {
      scaleParam(),
      causalParam(),
      {.key = "mask", .symbol = "M", .type = ParamType::File,
       .help = "Optional .npy mask [Lq, Lk]: nonzero = allowed; combined with causal", .def = std::string(),
       .file_shape = "[Lq, Lk]"},
  };
  v.views = {"heatmap", "lines", "family"};
  v.run = [](const Inputs& in, const Params& p, const RunContext& ctx) {
    const Mat& q = in.query();
    const Mat& k = in.key();
    const Mat& val = in.value();
    const int64_t lq = q.rows(), lk = k.rows();
    const std::string& mask_path = p.getString("mask");
    const float scale = p.getBool("scale") ? 1.0f / std::sqrt(static_cast<float>(q.cols())) : 1.0f;
    Result r;
    r.q_tokens = in.tokens;
    r.k_tokens = in.k ? in.source_tokens : in.tokens;
    r.output.resize(lq, val.cols());
    if (!ctx.keep_weights && mask_path.empty()) {
      // Output only: query rows in blocks, keys streamed (no [Lq, Lk] matrix).
      const int64_t block = 64;
      parallelFor((lq + block - 1) / block, ctx, [&](int64_t b) {
        attendRowsStreaming(q, k, val, scale, p.getBool("causal"), r.output, b * block, std::min(block, lq - b * block));
      });
      r.streamed_shape = {1, lq, lk};
    } else {
      checkDenseBudget(1, lq, lk, 2, "scaled-dot-product");
      Mat mask;
      if (!mask_path.empty()) {
        const Array a = readNpy(mask_path, "mask");
        mask = a.toMat(mask_path + " (mask)");
        if (mask.rows() != lq || mask.cols() != lk)
          throw InputError(mask_path + " (mask): expected shape [" + std::to_string(lq) + ", " + std::to_string(lk) +
                           "] (Lq, Lk), got " + a.shapeString());
        mask = (mask.array() != 0.0f).cast<float>();
      }
      if (p.getBool("causal")) {
        const Mat c = causalMask(lq, lk);
        mask = mask.size() ? Mat(mask.cwiseProduct(c)) : c;
      }
      r.scores.resize(1);
      r.weights.resize(1);
      ensureShape(r.scores[0], lq, lk, ctx.pool.get());  // from the GUI's pool when it has one
      ensureShape(r.weights[0], lq, lk, ctx.pool.get());
      ctx.check();
      attendHead(q, k, val, scale, mask, r.scores[0], r.weights[0], r.output);
      r.mask = mask;
      if (mask.size()) r.inputs["mask"] = mask;
    }
    r.flops = 2.0 * lq * lk * q.cols() + 2.0 * lq * lk * val.cols();
    r.inputs["q"] = q;
    r.inputs["k"] = k;
    r.inputs["v"] = val;
    return r;
  };
  return v;
}

}  // namespace attn
