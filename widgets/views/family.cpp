// The family view: every variant of the subject's family on the same input,
// each under its title, the subject framed; one colour scale (the union of
// the members' ranges, so equal colours are equal weights) with one colour
// bar at the right, or each member on its own scale with its own bar. On
// screen the panels share one zoom and a click selects the variant.
#include "widgets/views/view.h"

#include <algorithm>

namespace attn {

namespace family_view {

float barWidth(const Canvas& c, const ViewParams& p) { return p.own_scales ? 0.0f : c.unit * 7; }

ViewLayout layout(Primitives& out, const Canvas& c, const Box& area, const ViewInput& in, const ViewParams& p) {
  ViewLayout l;
  std::vector<const Result*> members;
  for (const ViewMember& m : in.family)
    if (m.result && m.result->heads() > 0) members.push_back(m.result);
  const ValueRange shared = members.empty() ? ValueRange{} : scaledWeightsRange(sharedWeightsRange(members), p.scale, *in.result, p.head);
  const Colormap shared_cmap = colormapFor(shared, p.colormap);
  const float bar_w = barWidth(c, p);
  const Box grid_area{area.x, area.y, area.w - bar_w, area.h};
  // Every member's panel (one that could not run keeps its place, with why), then the grid: small multiples,
  // the tokens along its left and top edges only (the members share the input).
  std::vector<ViewPanel> panels;
  for (const ViewMember& m : in.family) {
    const VariantInfo* info = findVariant(m.variant);
    const Result* r = m.result && m.result->heads() > 0 ? m.result : in.result;
    ViewPanel panel = weightsPanel(c, *r, std::clamp(p.head, 0, r->heads() - 1), p, grid_area, p.own_scales ? nullptr : &shared);
    panel.spec.title = info ? info->title : m.variant;
    panel.style.colorbar = p.own_scales;
    panel.shared_scale = !p.own_scales;
    panel.style.max_cell_aspect = std::max(panel.style.max_cell_aspect, 1.5f);
    const bool subject = m.variant == in.result->variant;
    panel.style.highlight = subject;
    panel.anchor = subject;  // the subject carries a lesson's marks
    panel.zoom = "family";
    panel.click_variant = m.variant;
    panels.push_back(std::move(panel));
  }
  labelledGrid(c, grid_area, panels, c.unit * 1.5f);
  float top = area.bottom(), bottom = area.y;
  for (size_t i = 0; i < panels.size(); ++i) {
    const ViewMember& m = in.family[i];
    ViewPanel& panel = panels[i];
    if (!m.result || m.result->heads() == 0) {  // why it could not run, under its title
      const Box& b = panel.area;
      float y = b.y + panelTitle(out, c, panel.spec.title, b.x, b.y, b.w);
      for (const std::string& line : wrapLines(c, m.error.empty() ? "no weights" : m.error, labelPx(c), b.w)) {
        addText(out, b.x, y, line, labelPx(c), Role::Muted);
        y += labelPx(c) * 1.3f;
      }
      continue;
    }
    if (const MatrixPlacement cells = placeMatrix(c, panel); cells.valid()) {
      top = std::min(top, cells.y0);
      bottom = std::max(bottom, cells.y1);
    }
    l.panels.push_back(std::move(panel));
  }
  if (!p.own_scales && !members.empty()) sideColorbar(out, c, area, bar_w, top, bottom, shared, shared_cmap, "weight (shared scale)");
  return l;
}

float height(const Canvas& c, float width, const ViewInput& in, const ViewParams& p) {
  const int n = static_cast<int>(in.family.size());
  const float w = width - barWidth(c, p);
  const int cols = std::clamp(static_cast<int>(w / (c.unit * 16)), 1, std::max(1, n));
  return static_cast<float>((n + cols - 1) / cols) * (w / static_cast<float>(cols) * 0.85f + c.unit * 5);
}

std::string refusal(const ViewInput& in, const ViewParams&) {
  return in.family.empty() ? "--view family: the family of '" + in.result->variant + "' was not computed" : "";
}

}  // namespace family_view

extern const ViewInfo kFamilyView = {
    .name = "family",
    .help = "every variant of this family on the same input",
    .hint = "every variant on the same input; click one to select it",
    .head = true,
    .own_scales = true,
    .family = true,
    .title_suffix = " and its family",
    .steps = ViewSteps::None,
    .layout = family_view::layout,
    .height = family_view::height,
    .refusal = family_view::refusal};

}  // namespace attn
