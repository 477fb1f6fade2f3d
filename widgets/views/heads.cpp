// The heads view: every head as a panel under its name ("head h", or a
// model's "L0 H0"), one colour scale with one colour bar at the right; the
// focused head framed. On screen the panels share one zoom and a click
// focuses a head in the heatmap view.
#include "widgets/views/view.h"

#include <algorithm>

namespace attn {

namespace heads_view {

float barWidth(const Canvas& c) { return c.unit * 7; }

ViewLayout layout(Primitives& out, const Canvas& c, const Box& area, const ViewInput& in, const ViewParams& p) {
  const Result& r = *in.result;
  const int focused = shownHead(r, p);
  ViewLayout l;
  const float bar_w = barWidth(c);
  // One scale for all, read (for a percentile) from the focused head.
  const ValueRange range = scaledWeightsRange(weightsRange(r), p.scale, r, focused);
  const Colormap cmap = colormapFor(range, p.colormap);
  for (int h = 0; h < r.heads(); ++h) {
    ViewPanel panel = weightsPanel(c, r, h, p, area, &range);
    panel.spec.title = static_cast<size_t>(h) < p.panel_titles.size() ? p.panel_titles[static_cast<size_t>(h)] : "head " + std::to_string(h);
    panel.style.colorbar = false;
    panel.shared_scale = true;
    // The tokens along the grid's left column and top row (thinned where cells are small), up to 64 of them:
    // a handout's grid carries its sentence.
    panel.style.labels = r.queries() <= 64;
    panel.style.max_cell_aspect = std::max(panel.style.max_cell_aspect, 1.5f);  // thumbnails fill their cell
    panel.style.highlight = h == focused;
    panel.zoom = "heads";
    panel.anchor = h == focused;
    panel.click_head = h;
    l.panels.push_back(std::move(panel));
  }
  // Small multiples: the tokens along the grid's left and top edges only.
  labelledGrid(c, {area.x, area.y, area.w - bar_w, area.h}, l.panels, c.unit);
  float top = area.bottom(), bottom = area.y;
  for (const ViewPanel& panel : l.panels)
    if (const MatrixPlacement cells = placeMatrix(c, panel); cells.valid()) {
      top = std::min(top, cells.y0);
      bottom = std::max(bottom, cells.y1);
    }
  sideColorbar(out, c, area, bar_w, top, bottom, range, cmap, r.weights_label);
  return l;
}

// Rows of roughly square panels, as many columns as hold one 16 units wide.
float height(const Canvas& c, float width, const ViewInput& in, const ViewParams&) {
  const int n = in.result->heads();
  const float w = width - barWidth(c);
  const int cols = std::clamp(static_cast<int>(w / (c.unit * 16)), 1, std::max(1, n));
  return static_cast<float>((n + cols - 1) / cols) * (w / static_cast<float>(cols) + c.unit * 3);
}

std::string refusal(const ViewInput&, const ViewParams&) { return ""; }

}  // namespace heads_view

extern const ViewInfo kHeadsView = {
    .name = "heads",
    .help = "every head as a thumbnail with linked zoom",
    .hint = "every head, one colour scale, linked zoom; click one to focus it",
    .layout = heads_view::layout,
    .height = heads_view::height,
    .refusal = heads_view::refusal};

}  // namespace attn
