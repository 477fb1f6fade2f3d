#include "engine/model/analysis/head_patterns.h"

#include "engine/error.h"

#include <algorithm>

namespace attn {

std::vector<const VariantInfo*> headPatternVariants() {
  std::vector<const VariantInfo*> out;
  for (const VariantInfo& v : variants())
    if (std::find(v.views.begin(), v.views.end(), "compare") != v.views.end()) out.push_back(&v);
  return out;
}

WindowPattern slidingWindowPattern(const ModelRun& run) {
  WindowPattern w;
  const VariantInfo* local = findVariant("local-1d");
  if (run.sliding_window <= 0 || !local) return w;
  w.variant = local;
  w.params = Params::defaults(local->params);
  w.params.setValue(local->params, "l_q", int64_t{1});                     // one query per block
  w.params.setValue(local->params, "l_m", int64_t{run.sliding_window - 1});  // and the W − 1 keys before it
  w.title = "window W = " + std::to_string(run.sliding_window) + " (this model)";
  return w;
}

HeadPattern applyPatternToHead(const VariantInfo& variant, const Params& params, const ModelRun& run, int64_t layer,
                               int64_t head, const RunContext& ctx) {
  if (layer < 0 || layer >= run.layers)
    throw InputError("layer: " + std::to_string(layer) + " is outside 0 … " + std::to_string(run.layers - 1));
  if (head < 0 || head >= run.heads)
    throw InputError("head: " + std::to_string(head) + " is outside 0 … " + std::to_string(run.heads - 1));
  const std::vector<const VariantInfo*> usable = headPatternVariants();
  if (std::none_of(usable.begin(), usable.end(), [&](const VariantInfo* v) { return v->name == variant.name; })) {
    std::string names;
    for (const VariantInfo* v : usable) names += (names.empty() ? "" : ", ") + v->name;
    throw InputError("variant: '" + variant.name + "' is not a pattern that runs on a model head (expected one of: " +
                     names + ")");
  }
  const int64_t dh = run.d_head;
  const size_t l = static_cast<size_t>(layer);
  // The head's own projections q_h, k_h, v_h                      [L, d_head] each
  Inputs in;
  in.q = run.q[l].middleCols(head * dh, dh);
  in.k = run.k[l].middleCols(head * dh, dh);
  in.v = run.v[l].middleCols(head * dh, dh);
  // A checkpoint's weights can hold anything: its q, k, v are admitted as a user's file would be.
  const std::string where = "layer " + std::to_string(layer) + " head " + std::to_string(head) + " of the model";
  checkInputMagnitude({in.q->data(), static_cast<size_t>(in.q->size())}, where + " (q)");
  checkInputMagnitude({in.k->data(), static_cast<size_t>(in.k->size())}, where + " (k)");
  checkInputMagnitude({in.v->data(), static_cast<size_t>(in.v->size())}, where + " (v)");
  in.x = *in.q;
  in.tokens = run.tokens;
  in.heads = 1;
  in.projected = true;

  HeadPattern p;
  p.layer = layer;
  p.head = head;
  p.result = runVariant(variant, in, params, ctx);
  p.real = run.attention[l][static_cast<size_t>(head)];
  // mass_kept_i = Σ_{j ∈ pattern(i)} real_ij                        [1, L]
  const int64_t L = p.real.rows();
  p.mass_kept = Mat::Zero(1, L);
  const Result& r = p.result;
  for (int64_t i = 0; i < L; ++i) {
    double kept = 0;
    if (r.isSparse()) {
      const SparseRows& s = r.sparse[0];
      for (int64_t e = s.rowBegin(i); e < s.rowEnd(i); ++e) kept += p.real(i, s.indices[static_cast<size_t>(e)]);
    } else {
      // A dense pattern: the keys its mask allows (or, without a mask, those it weights).
      for (int64_t j = 0; j < L; ++j)
        if (r.mask.size() ? r.mask(i, j) != 0 : r.weights[0](i, j) > 0) kept += p.real(i, j);
    }
    p.mass_kept(0, i) = static_cast<float>(kept);
  }
  p.mass_kept_mean = L > 0 ? p.mass_kept.mean() : 0.0;
  return p;
}

}  // namespace attn
