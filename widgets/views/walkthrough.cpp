// The walkthrough view: Result::stages panel by panel (LSH: the paper's
// Figure 2), each under its title and typeset caption, one colour bar for
// all, with the categorical pictures (points around the origin, bars per
// category, token strips) beside the stages or under them. The stage a
// lesson or the timeline points at is framed and carries the marks.
#include "widgets/views/view.h"

#include <algorithm>

namespace attn {

namespace walkthrough_view {

ViewLayout layout(Primitives& out, const Canvas& c, const Box& area, const ViewInput& in, const ViewParams& p) {
  const Result& r = *in.result;
  ViewLayout l;
  const ValueRange range = withScale({0.0f, std::max(1e-6f, r.weights_stats.max), false}, p.scale, r.keys(), nullptr, 0);
  const Colormap cmap = colormapFor(range, p.colormap);
  const WalkthroughLayout g = walkthroughPrimitives(out, c, area, r, range, cmap);
  for (size_t i = 0; i < g.stages.size(); ++i) {
    const Stage& st = r.stages[i];
    ViewPanel panel;
    panel.area = g.stages[i];
    panel.spec = MatrixSpec::of(st.matrix);
    panel.spec.row_labels = &st.row_labels;
    panel.spec.col_labels = &st.col_labels;
    panel.spec.row_categories = st.row_categories.empty() ? nullptr : &st.row_categories;
    panel.spec.col_categories = st.col_categories.empty() ? nullptr : &st.col_categories;
    panel.spec.category_axis = st.category_axis;
    panel.spec.row_dividers = &st.row_dividers;
    panel.spec.col_dividers = &st.col_dividers;
    panel.spec.value_label = r.weights_label;
    panel.style.range = range;
    panel.style.colormap = cmap;
    panel.style.colorbar = false;
    panel.style.labels = st.matrix.rows <= 64 && panel.area.h > c.unit * 11;
    panel.style.max_cell_aspect = 1.6f;
    panel.style.highlight = static_cast<int>(i) == p.stage;
    panel.anchor = static_cast<int>(i) == p.stage;
    panel.zoom = "stage" + std::to_string(i);
    l.panels.push_back(std::move(panel));
  }
  // The pictures and bars under their titles.
  const auto plot = [&](PanelKind kind, const Extra& e, const Box& b, const std::string& title, bool square) {
    const float title_h = panelTitle(out, c, title, b.x, b.y, b.w);
    ViewPanel panel;
    panel.title = title;
    panel.kind = kind;
    panel.extra = &e;
    const float h = std::max(1.0f, b.h - title_h);
    panel.area = {b.x, b.y + title_h, square ? std::min(b.w, h) : b.w, square ? std::min(b.w, h) : h};
    panel.range = {0.0f, std::max(1e-6f, e.stats.max), false};
    panel.style.colormap = cmap;
    panel.labels = &r.q_tokens;
    l.panels.push_back(std::move(panel));
  };
  for (size_t k = 0; k < g.pictures.size(); ++k)
    plot(PanelKind::Points, *g.picture_extras[k], g.pictures[k], "b = " + std::to_string(g.picture_extras[k]->categories.size()), true);
  for (size_t k = 0; k < g.others.size(); ++k) {
    const Extra& e = *g.other_extras[k];
    plot(e.kind == ExtraKind::CategoryValues ? PanelKind::CategoryBars : PanelKind::TokenStrip, e, g.others[k], extraLabel(e), false);
  }
  return l;
}

// Rows of stages 24 units wide, and a row for the pictures.
float height(const Canvas& c, float width, const ViewInput& in, const ViewParams&) {
  const int n = static_cast<int>(in.result->stages.size()) + 1;
  const int cols = std::clamp(static_cast<int>(width / (c.unit * 24)), 1, std::max(1, n));
  return static_cast<float>((n + cols - 1) / cols) * (width / static_cast<float>(cols) * 0.85f + c.unit * 3);
}

std::string refusal(const ViewInput& in, const ViewParams&) {
  return in.result->stages.empty() ? "--view walkthrough: variant '" + in.result->variant + "' has no walkthrough stages" : "";
}

}  // namespace walkthrough_view

extern const ViewInfo kWalkthroughView = {
    .name = "walkthrough",
    .help = "the computation stage by stage (LSH: the paper's Figure 2), with the categorical pictures",
    .hint = "stage by stage; hover a cell for its tokens and categories, scroll to zoom",
    .steps = ViewSteps::Stages,
    .layout = walkthrough_view::layout,
    .height = walkthrough_view::height,
    .refusal = walkthrough_view::refusal};

}  // namespace attn
