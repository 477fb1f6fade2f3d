#include "app/gui/gui_state.h"

#include "engine/compare.h"
#include "engine/error.h"
#include "engine/result.h"

#include <algorithm>
#include <tuple>

namespace attn {

namespace {

auto inputKey(const InputOptions& o) {
  return std::tie(o.seed, o.length, o.source_length, o.dim, o.heads, o.preset, o.text, o.source_text, o.x, o.q, o.k,
                  o.v);
}

}  // namespace

bool sameScene(const Scene& a, const Scene& b) {
  return a.variant == b.variant && a.params == b.params && a.mode == b.mode && inputKey(a.input) == inputKey(b.input);
}

InputOptions effectiveInput(const Scene& s) {
  InputOptions o;
  o.seed = s.input.seed;
  o.dim = s.input.dim;
  o.heads = s.input.heads;
  switch (s.mode) {
    case InputMode::Text:
      o.text = s.input.text;
      o.source_text = s.input.source_text;  // used by cross-attention variants only
      break;
    case InputMode::Synthetic:
      o.length = s.input.length;
      o.source_length = s.input.source_length;
      o.preset = s.input.preset;
      break;
    case InputMode::Files:
      o.x = s.input.x;
      o.q = s.input.q;
      o.k = s.input.k;
      o.v = s.input.v;
      break;
  }
  return o;
}

namespace {

// Stats over every head's matrix, for one shared colour range.
ValueStats statsOver(const std::vector<Mat>& heads) {
  ValueStats all;
  for (size_t h = 0; h < heads.size(); ++h) {
    const ValueStats one = ValueStats::of(heads[h].data(), heads[h].size());
    all = h == 0 ? one : ValueStats{std::min(all.min, one.min), std::max(all.max, one.max)};
  }
  return all;
}

void compareResult(SceneOutput& out, const RunContext& ctx) {
  out.has_comparison = true;
  if (!out.result || !canCompare(*out.result)) {
    out.comparison_error = "This result records no projected q, k, v and output to compare with full attention.";
    return;
  }
  try {
    auto c = std::make_shared<const Comparison>(compareWithFull(*out.result, ctx));
    out.full_stats = statsOver(c->full);
    out.difference_stats = statsOver(c->difference);
    out.comparison = std::move(c);
  } catch (const InputError& e) {
    out.comparison_error = e.what();
  }
}

}  // namespace

SceneOutput computeScene(const Scene& s, bool family, bool compare, const RunContext& ctx) {
  const VariantInfo& info = variantOrThrow(s.variant);
  // resolveInputs would fall back to a synthetic input, which Files mode must not show.
  if (s.mode == InputMode::Files && s.input.x.empty() && s.input.q.empty() && s.input.k.empty() && s.input.v.empty())
    throw InputError("input: open an X .npy file or Q/K/V files (File menu)");
  const Inputs inputs = resolveInputs(effectiveInput(s));
  SceneOutput out;
  out.has_family = family;
  if (!family) {
    out.result = shareResult(runVariant(info, inputs, s.params, ctx), ctx.pool);
  } else {
    out.family = runFamily(info, inputs, s.params, ctx);
    for (const FamilyMember& m : out.family)
      if (m.variant == info.name) out.result = m.result;
  }
  if (compare) compareResult(out, ctx);
  return out;
}

void UndoStack::push(const Scene& before) {
  undo_.push_back(before);
  if (undo_.size() > 256) undo_.erase(undo_.begin());
  redo_.clear();
}

namespace {

// Moves the top of `from` into `current`, saving `current` on `to`.
bool step(std::vector<Scene>& from, std::vector<Scene>& to, Scene& current) {
  if (from.empty()) return false;
  to.push_back(std::move(current));
  current = std::move(from.back());
  from.pop_back();
  return true;
}

}  // namespace

bool UndoStack::undo(Scene& current) { return step(undo_, redo_, current); }
bool UndoStack::redo(Scene& current) { return step(redo_, undo_, current); }

void ViewState::resetZoom() { zoom.clear(); }

}  // namespace attn
