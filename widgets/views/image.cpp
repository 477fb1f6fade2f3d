// The image view. A sparse pattern (the Sparse Transformer's figure): the
// sequence as a raster image with the query's keys coloured by the
// sub-pattern that admits them, beside the connectivity with its row marked.
// A result with a Picture extra (SAGAN's figure): the picture with its query
// pixels marked, beside each one's map over the picture. On screen a click
// or drag moves the query.
#include "widgets/views/view.h"

#include "widgets/view_layouts.h"

#include <algorithm>

namespace attn {

namespace image_view {

bool isPicture(const Result& r) { return r.firstExtra(ExtraKind::Picture) && !r.weights.empty() && r.image_width > 0; }

ViewLayout layout(Primitives&, const Canvas&, const Box& area, const ViewInput& in, const ViewParams& p) {
  const Result& r = *in.result;
  const int head = shownHead(r, p);
  const int64_t n = r.queries();
  ViewLayout l;
  ViewPanel panel;
  panel.area = area;
  panel.result = &r;
  panel.head = head;
  if (isPicture(r)) {
    // The query pixels: the screen's, else the result's with `query` in the first.
    panel.kind = PanelKind::Picture;
    panel.queries = !p.queries.empty() ? p.queries : r.image_queries;
    if (panel.queries.empty()) panel.queries.push_back(defaultImageQuery(r));
    if (p.queries.empty() && p.query >= 0) panel.queries[0] = p.query;
    for (int64_t& q : panel.queries) q = std::clamp<int64_t>(q, 0, n - 1);
    panel.active = std::clamp(p.active_query, 0, static_cast<int>(panel.queries.size()) - 1);
  } else {
    panel.kind = PanelKind::Image;
    panel.pattern = r.isSparse() ? &r.sparse[static_cast<size_t>(head)] : in.dense_pattern;
    panel.queries = {std::clamp<int64_t>(p.query >= 0 ? p.query : defaultImageQuery(r), 0, n - 1)};
  }
  l.panels.push_back(std::move(panel));
  return l;
}

float height(const Canvas& c, float width, const ViewInput&, const ViewParams&) { return width * 0.62f + c.unit * 8; }

std::string refusal(const ViewInput& in, const ViewParams& p) {
  const Result& r = *in.result;
  if (!isPicture(r) && !r.isSparse() && !in.dense_pattern)
    return "--view image: variant '" + r.variant + "' has no sparse pattern or picture to draw";
  if (p.query < -1 || p.query >= r.queries())
    return "--query: expected a query 0.." + std::to_string(r.queries() - 1) + ", got " + std::to_string(p.query);
  return "";
}

}  // namespace image_view

extern const ViewInfo kImageView = {
    .name = "image",
    .help = "the sequence as an image: click a query pixel to see its keys by sub-pattern, next to the L\xC3\x97L connectivity",
    .hint = "click or drag on a pixel to move the query (on a map: select its query); arrow keys move it",
    .head = true,
    .query = true,
    .one_head = true,
    .layout = image_view::layout,
    .height = image_view::height,
    .refusal = image_view::refusal};

}  // namespace attn
