// The heatmap view: one head's [Lq, Lk] weights with its colour bar, token
// axes, key bands and overlays; a lesson's marks go on it.
#include "widgets/views/view.h"

namespace attn {

namespace heatmap_view {

ViewLayout layout(Primitives&, const Canvas& c, const Box& area, const ViewInput& in, const ViewParams& p) {
  ViewLayout l;
  ViewPanel panel = weightsPanel(c, *in.result, shownHead(*in.result, p), p, area);
  panel.anchor = true;
  l.panels.push_back(std::move(panel));
  return l;
}

float height(const Canvas& c, float width, const ViewInput& in, const ViewParams& p) {
  const ViewPanel panel = weightsPanel(c, *in.result, shownHead(*in.result, p), p, {0, 0, width, 0});
  return matrixPanelHeight(c, width, panel.spec, panel.style);
}

std::string refusal(const ViewInput&, const ViewParams&) { return ""; }

}  // namespace heatmap_view

extern const ViewInfo kHeatmapView = {
    .name = "heatmap",
    .help = "one head's weights as a matrix: zoom, pan, hover for exact values",
    .hint = "scroll to zoom, drag to pan, double-click to reset",
    .head = true,
    .one_head = true,
    .layout = heatmap_view::layout,
    .height = heatmap_view::height,
    .refusal = heatmap_view::refusal};

}  // namespace attn
