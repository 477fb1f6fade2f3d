// The compare view: a pattern against full causal attention on the same
// q, k, v — full attention, the pattern and their difference for the shown
// head, the numbers (mass kept, KL, output error, FLOPs, memory) and the
// per-query mass strip of every head; without the L×L matrices (long L) a
// line saying so, the numbers and the strip.
#include "widgets/views/view.h"

#include "widgets/view_layouts.h"

#include <algorithm>
#include <cstdio>

namespace attn {

namespace compare_view {

ViewLayout layout(Primitives& out, const Canvas& c, const Box& area, const ViewInput& in, const ViewParams& p) {
  const Result& r = *in.result;
  const Comparison& cmp = *in.comparison;
  ViewLayout l;
  const CompareLayout g = comparePrimitives(out, c, area, cmp, p.colormap);
  for (size_t k = 1; k < g.table_rows.size(); ++k)
    l.hits.push_back({g.table_rows[k], 1, 1, [k](int64_t, int64_t) { return comparisonNotes()[k - 1]; }});
  if (g.strip_cols > 0)
    l.hits.push_back({g.strip, g.strip_rows, g.strip_cols, [&cmp](int64_t row, int64_t col) {
                        char buf[96];
                        std::snprintf(buf, sizeof buf, "head %lld, query %lld: %.2f %% of full attention's mass kept",
                                      static_cast<long long>(row), static_cast<long long>(col), 100.0 * cmp.mass_kept(row, col));
                        return std::string(buf);
                      }});
  const size_t h = static_cast<size_t>(std::clamp(p.head, 0, std::max(cmp.heads - 1, 0)));
  if (g.panels.empty() || h >= cmp.full.size()) return l;
  // Full attention and the pattern on one scale (the larger of their maxima), the difference signed.
  const float hi = std::max({cmp.full[h].maxCoeff(), cmp.pattern[h].maxCoeff(), 1e-12f});
  const ValueRange weights = withScale({0.0f, hi, false}, p.scale, cmp.length, cmp.full[h].data(), cmp.full[h].size());
  const Mat& diff = cmp.difference[h];
  const ValueRange signed_range = valueRange(ValueStats::of(diff.data(), diff.size()), true);
  const bool mask_fits = r.mask.rows() == cmp.length && r.mask.cols() == cmp.length;
  const struct {
    const Mat& m;
    const ValueRange& range;
    const Mat* mask;
    const char* value;
  } panels[] = {{cmp.full[h], weights, nullptr, "weight"},
                {cmp.pattern[h], weights, mask_fits ? &r.mask : nullptr, "weight"},
                {diff, signed_range, nullptr, "difference"}};
  for (size_t k = 0; k < 3; ++k) {
    ViewPanel panel;
    panel.area = g.panels[k];
    panel.spec = MatrixSpec::of(panels[k].m);
    panel.spec.mask = panels[k].mask;
    panel.spec.row_labels = &r.q_tokens;
    panel.spec.col_labels = &r.k_tokens;
    panel.spec.value_label = panels[k].value;
    panel.style.range = panels[k].range;
    panel.style.colormap = colormapFor(panels[k].range, p.colormap);
    panel.style.labels = cmp.length <= 32 && panel.area.h > c.unit * 10;
    panel.style.max_cell_aspect = cellAspect(c, panel.spec, p);
    if (g.columns == 3) {  // in a row: the tokens and axis titles at the left only, one colour bar for full and pattern
      panel.style.row_labels = k == 0;
      panel.style.colorbar = k > 0;
      if (k > 0) panel.spec.row_axis = panel.spec.col_axis = "";
    }
    panel.zoom = "compare";
    panel.anchor = k == 0;
    l.panels.push_back(std::move(panel));
  }
  if (g.columns == 3) {
    // One cell size for the three (the smallest each would take) and one top: their rows line up.
    float cw = 1e30f, ch = 1e30f, top = 0;
    std::vector<MatrixPlacement> placed;
    for (const ViewPanel& panel : l.panels) {
      const MatrixPlacement& at = placed.emplace_back(placeMatrix(c, panel));
      cw = std::min(cw, (at.x1 - at.x0) / static_cast<float>(cmp.length));
      ch = std::min(ch, (at.y1 - at.y0) / static_cast<float>(cmp.length));
      top = std::max(top, at.y0);
    }
    for (size_t k = 0; k < l.panels.size(); ++k) {
      ViewPanel& panel = l.panels[k];
      const MatrixPlacement& at = placed[k];
      panel.area.w -= (at.x1 - at.x0) - cw * static_cast<float>(cmp.length);
      panel.area.h -= (at.y1 - at.y0) - ch * static_cast<float>(cmp.length) + (top - at.y0);
      panel.area.y += top - at.y0;
    }
  }
  return l;
}

float height(const Canvas& c, float width, const ViewInput&, const ViewParams&) { return compareHeight(width, c.unit); }

std::string refusal(const ViewInput& in, const ViewParams&) {
  return in.comparison ? "" : "--view compare: no comparison with full attention given";
}

}  // namespace compare_view

extern const ViewInfo kCompareView = {
    .name = "compare",
    .help = "against full causal attention on the same q, k, v: mass kept, KL, output error, FLOPs, memory",
    .hint = "against full causal attention on the same q, k, v; hover a number for its meaning",
    .head = true,
    .comparison = true,
    .one_head = true,
    .title_suffix = " against full attention",
    .steps = ViewSteps::None,
    .layout = compare_view::layout,
    .height = compare_view::height,
    .refusal = compare_view::refusal};

}  // namespace attn
