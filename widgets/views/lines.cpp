// The token lines view (BertViz): queries left, keys right, a line per
// (query, key, head) whose opacity is the weight, a colour per head, the
// shown heads in the legend. On screen a token's hover isolates its lines
// and a click on a head's legend entry hides or shows it.
#include "widgets/views/view.h"

#include <algorithm>

namespace attn {

namespace lines_view {

ViewLayout layout(Primitives&, const Canvas&, const Box& area, const ViewInput& in, const ViewParams& p) {
  ViewLayout l;
  ViewPanel panel;
  panel.kind = PanelKind::Lines;
  panel.area = area;
  panel.result = in.result;
  panel.visible = p.heads_visible;
  l.panels.push_back(std::move(panel));
  return l;
}

float height(const Canvas& c, float width, const ViewInput& in, const ViewParams&) {
  const Result& r = *in.result;
  return std::max(width * 0.6f, static_cast<float>(std::max(r.queries(), r.keys())) * c.unit * 1.3f + c.unit * 2);
}

std::string refusal(const ViewInput& in, const ViewParams&) {
  if (!in.result->weights.empty()) return "";
  return "--view lines: " + std::to_string(in.result->queries()) +
         " queries are too many for token lines (the weights are sparse); use heatmap";
}

}  // namespace lines_view

extern const ViewInfo kLinesView = {
    .name = "lines",
    .help = "token lines: opacity = weight, colour = head",
    .hint = "token lines: opacity = weight, colour = head; hover a token to isolate it",
    .layout = lines_view::layout,
    .height = lines_view::height,
    .refusal = lines_view::refusal};

}  // namespace attn
