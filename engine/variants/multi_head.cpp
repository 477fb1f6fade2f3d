// The `multi-head` (self) and `cross-attention` (encoder–decoder) variants
// (Vaswani et al. 2017, §3.2.2, §3.2.3): multiHeadAttention() with the
// seeded weights, or with none on given projections.
#include "engine/multi_head.h"
#include "engine/registry.h"

namespace attn {

namespace {

// Self- and cross-attention differ only in where keys and values come from.
VariantInfo makeMultiHeadInfo(bool cross) {
  VariantInfo v;
  v.family = "core";
  v.input = cross ? InputKind::CrossAttention : InputKind::SelfAttention;
  v.given_qkv = GivenQkv::Heads;
  v.params = {causalParam(), scaleParam()};
  v.views = {"heatmap", "heads", "lines", "family"};
  if (cross) {
    v.name = "cross-attention";
    v.title = "Encoder–decoder cross-attention";
    v.summary = "queries from the target X [Lq, d]; keys and values from the source X_kv [Lk, d]";
    v.citation = "Vaswani et al. 2017, §3.2.3";
    v.params[0].help = "Mask keys j > i + (Lk − Lq) (rarely used for cross-attention)";
  } else {
    v.name = "multi-head";
    v.title = "Multi-head self-attention";
    v.summary = "MultiHead(X) = Concat(head_1…head_h) W^o,  head_i = softmax(X W^q_i (X W^k_i)ᵀ/√d_k) X W^v_i";
    v.citation = "Vaswani et al. 2017, §3.2.2";
  }
  v.run = [cross, name = v.name](const Inputs& in, const Params& p, const RunContext& ctx) {
    Result r;
    r.variant = name;  // named in errors
    r.q_tokens = in.tokens;
    r.k_tokens = cross || in.k ? in.source_tokens : in.tokens;
    // Given q, k, v are the heads' projections: no seeded weights (multiHeadAttention records them).
    const MultiHeadWeights w = in.projected ? MultiHeadWeights{} : makeMultiHeadWeights(in.dim(), in.heads, in.seed);
    multiHeadAttention(in.query(), in.key(), in.value(), w, in.heads, p.getBool("causal"), p.getBool("scale"), ctx, r);
    if (in.projected) return r;
    r.inputs["x"] = in.query();
    if (cross) r.inputs["x_kv"] = in.key();
    return r;
  };
  return v;
}

}  // namespace

VariantInfo makeMultiHeadVariant() { return makeMultiHeadInfo(false); }
VariantInfo makeCrossAttentionVariant() { return makeMultiHeadInfo(true); }

}  // namespace attn
