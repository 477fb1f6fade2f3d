// The main view area: the current view's layout (widgets/views/) replayed
// with ImGui, and interaction added on the geometry it returns. Nothing here
// lays a view out: every panel is drawn by the widget that lays out the same
// primitives from the same arguments a figure uses, adding hover, zoom and
// clicks.
//
// Index
//   [SECTION] Parameters and input of the shown view
//   [SECTION] Header (title, hint, the view's controls)
//   [SECTION] Panels on screen
//   [SECTION] drawMainView
#include "app/gui/gui_views.h"

#include "app/gui/gui_lesson.h"
#include "app/gui/gui_panels.h"
#include "app/gui/gui_timeline.h"
#include "widgets/bars.h"
#include "widgets/pattern_image.h"
#include "widgets/plots.h"
#include "widgets/primitives_imgui.h"
#include "widgets/token_lines.h"
#include "widgets/view_layouts.h"

#include <algorithm>

namespace attn {

// [SECTION] Parameters and input of the shown view

ViewParams viewParams(const AppState& s) {
  ViewParams p = s.view.params;
  p.scale = s.scale;
  p.colormap = s.settings.colormap;
  p.fill = s.present.on;
  return p;
}

namespace {

// Head h's pattern as CSR for the image view: built once from a dense-only result.
const SparseRows& densePattern(AppState& s, const Result& r, int h) {
  DensePattern& d = s.view.dense_pattern;
  if (d.generation != s.generation || d.head != h) {
    d.rows = sparseFromDense(r.weights[static_cast<size_t>(h)], r.mask);
    d.generation = s.generation;
    d.head = h;
  }
  return d.rows;
}

// A picture's query pixels: the result's own until the user moves one (the
// first keeps a query given on the command line); `query` is the active one.
void syncPictureQueries(ViewState& v, const Result& r) {
  ViewParams& p = v.params;
  const int64_t n = r.queries();
  if (p.queries.empty() || v.picture_defaults != r.image_queries) {  // another picture: its own queries
    if (!p.queries.empty()) p.query = -1;
    p.queries = r.image_queries.empty() ? std::vector<int64_t>{defaultImageQuery(r)} : r.image_queries;
    v.picture_defaults = r.image_queries;
    p.active_query = 0;
  }
  for (int64_t& q : p.queries) q = std::clamp<int64_t>(q, 0, n - 1);
  p.active_query = std::clamp(p.active_query, 0, static_cast<int>(p.queries.size()) - 1);
  if (p.query < 0) p.query = p.queries[static_cast<size_t>(p.active_query)];
  p.query = std::clamp<int64_t>(p.query, 0, n - 1);
  p.queries[static_cast<size_t>(p.active_query)] = p.query;
}

// What the view reads, or why it cannot draw yet (a job still computing what it needs).
std::string viewInput(AppState& s, const ViewInfo& info, const Result& r, ViewInput& in) {
  const SceneOutput& out = *s.output;
  in.result = &r;
  if (info.family) {
    if (!out.has_family) return "computing the family\xE2\x80\xA6";
    for (const FamilyMember& m : out.family) in.family.push_back({m.variant, m.result.get(), m.error});
  }
  if (info.comparison) {
    if (!out.has_comparison) return "computing the comparison with full attention\xE2\x80\xA6";
    if (!out.comparison) return out.comparison_error;
    in.comparison = out.comparison.get();
  }
  if (info.query) {
    s.view.params.head = std::clamp(s.view.params.head, 0, r.heads() - 1);
    if (r.firstExtra(ExtraKind::Picture) && !r.weights.empty() && r.image_width > 0) syncPictureQueries(s.view, r);
    else if (!r.isSparse() && !r.weights.empty()) in.dense_pattern = &densePattern(s, r, s.view.params.head);
  }
  return "";
}

// [SECTION] Header

// After an error, or while a newer job computes, the result shown is not the
// scene's: say so next to its title.
void previousResultMarker(const AppState& s) {
  if (s.output_current) return;
  ImGui::SameLine();
  ImGui::TextDisabled("(previous result)");
}

// A head slider at the right end of the header line.
void headSlider(int& head, int heads) {
  if (heads <= 1) return;
  ImGui::SameLine();
  // On the header's line when it leaves room, else on the next line: never past the window's edge.
  if (ImGui::GetCursorPosX() + ImGui::GetFontSize() * 17 > ImGui::GetWindowWidth()) ImGui::NewLine();
  ImGui::SetCursorPosX(std::max(ImGui::GetCursorPosX() + ImGui::GetFontSize(), ImGui::GetWindowWidth() - ImGui::GetFontSize() * 16));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12);
  ImGui::SliderInt("head##view", &head, 0, heads - 1);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the head this view shows");
}

// The shown result's title (not the scene's, which may be newer), the view's
// hint and the controls of the parameters its entry lists.
void header(AppState& s, const ViewInfo& info, const Result& r) {
  const VariantInfo* v = findVariant(r.variant);
  if (info.family) ImGui::Text("Family: %s", v ? v->family.c_str() : r.variant.c_str());
  else ImGui::TextUnformatted(v ? v->title.c_str() : r.variant.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("\xE2\x80\x94 %s", info.hint.c_str());
  if (info.own_scales) {
    ImGui::SameLine();
    ImGui::Checkbox("own scales", &s.view.params.own_scales);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Off: one colour scale for every member, so equal colours mean equal weights.\n"
                        "On: each member stretched to its own range, with its own colour bar.");
  }
  previousResultMarker(s);
  if (info.head) headSlider(s.view.params.head, info.comparison && s.output->comparison ? s.output->comparison->heads : r.heads());
  ImGui::Spacing();
}

// [SECTION] Panels on screen

// A panel the timeline plays (an extra over steps, a stepwise curve).
bool played(const Extra& e) {
  return (e.kind == ExtraKind::Weights && e.slice_axis != "head") || (e.kind == ExtraKind::Curves && e.stepwise);
}

// Draws panel `p`; returns where a matrix panel's cells went.
MatrixPlacement drawPanel(AppState& s, const ViewPanel& p, int index, HeatmapRenderer& gl) {
  ViewParams& params = s.view.params;
  ImGui::PushID(index);
  ImGui::SetCursorScreenPos(ImVec2(p.area.x, p.area.y));
  const ImVec2 size(p.area.w, p.area.h);
  const Extra* e = p.extra;
  MatrixPlacement placed;
  switch (p.kind) {
    case PanelKind::Matrix: {
      const HeatmapEvents ev = heatmap("matrix", p.spec, p.style, s.view.zoom[p.zoom], gl, size);
      placed = ev.placed;
      if (p.anchor) offerAnchor(s, ev.placed);
      if (ev.clicked && p.click_head >= 0) {  // a thumbnail: focus it
        params.head = p.click_head;
        s.view.view = findView("heatmap");
        s.view.zoom["main"] = s.view.zoom[p.zoom];
      }
      if (ev.clicked && !p.click_variant.empty())
        if (const VariantInfo* v = findVariant(p.click_variant)) selectVariant(s, *v);
      break;
    }
    case PanelKind::Bars:
      valueBars(e->name.c_str(), e->value, p.labels, p.range, p.style.colormap, extraLabel(*e), size, p.item_axis, p.colour_per_bar);
      break;
    case PanelKind::Curves:
      linePlot("curves", e->value, e->row_axis.empty() ? "series" : e->row_axis, e->col_axis.empty() ? "x" : e->col_axis,
               e->markers, size, e->categories, e->levels, p.reveal);
      break;
    case PanelKind::Points: pointPlot("points", *e, size); break;
    case PanelKind::CategoryBars: categoryBars(e->name.c_str(), e->value, e->categories, e->col_axis, size); break;
    case PanelKind::TokenStrip: categoryStrip("strip", e->value, *p.labels, e->categories, gl, size); break;
    case PanelKind::Stacked:
      stackedBars("stacked", e->value, e->row_labels, e->row_axis.empty() ? "row" : e->row_axis,
                  e->col_axis.empty() ? "segment" : e->col_axis, size);
      break;
    case PanelKind::Lines: {
      TokenLinesState lines{params.heads_visible};
      tokenLines("lines", *p.result, lines, size);
      params.heads_visible = lines.heads_visible;
      break;
    }
    case PanelKind::Image: {
      const int64_t picked = patternView("image", *p.pattern, p.result->set_names, imageWidth(*p.result), p.queries.at(0),
                                         p.result->firstExtra(ExtraKind::QueryGroup), gl, size);
      if (picked >= 0) params.query = picked;
      break;
    }
    case PanelKind::Picture: {
      int panel = -1;
      const int64_t picked = pictureView("picture", p.result->firstExtra(ExtraKind::Picture)->value,
                                         p.result->weights[static_cast<size_t>(p.head)], p.result->key_image_width, p.queries,
                                         p.active, gl, size, panel);
      if (picked >= 0 && panel >= 0) {  // a map: select its query
        params.active_query = panel;
        params.query = params.queries[static_cast<size_t>(panel)];
      } else if (picked >= 0) {
        params.query = picked;
      }
      break;
    }
  }
  ImGui::PopID();
  return placed;
}

// The tooltip of the region under the mouse (a number's meaning, a strip cell's value).
void hitTooltips(const ViewLayout& l) {
  if (!ImGui::IsWindowHovered() || ImGui::IsAnyItemHovered()) return;
  const ImVec2 m = ImGui::GetIO().MousePos;
  for (const ViewHit& h : l.hits) {
    const Box& b = h.box;
    if (!(m.x >= b.x && m.x < b.right() && m.y >= b.y && m.y < b.bottom())) continue;
    const auto cell = [](float t, float extent, int64_t n) {
      return std::clamp<int64_t>(static_cast<int64_t>(t / extent * static_cast<float>(n)), 0, n - 1);
    };
    ImGui::SetTooltip("%s", h.tooltip(cell(m.y - b.y, b.h, h.rows), cell(m.x - b.x, b.w, h.cols)).c_str());
    return;
  }
}

// A lesson's step opening on a panel (or the timeline moving a played one) scrolls it into view, once.
void scrollToPlayed(AppState& s, const ViewLayout& l) {
  if (!s.view.scroll_to_played) return;
  const std::string& focus = s.view.params.focus_panel;
  for (const ViewPanel& p : l.panels)
    if (p.extra && (p.extra->name == focus || (focus.empty() && played(*p.extra)))) {
      ImGui::SetScrollY(ImGui::GetScrollY() + p.area.y - ImGui::GetWindowPos().y - ImGui::GetFontSize() * 2);
      break;
    }
  s.view.scroll_to_played = false;
}

// The view's layout in the rest of the window: scrolling where its panels
// are taller than the window (extras), the panels drawn by their widgets.
void drawLayout(AppState& s, const ViewInfo& info, const ViewInput& in, HeatmapRenderer& gl) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  ImGui::BeginChild("##body", avail, false);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 room = ImGui::GetContentRegionAvail();
  Primitives prims;
  const ViewLayout l = info.layout(prims, imguiCanvas(), {origin.x, origin.y, room.x, avail.y}, in, viewParams(s));
  drawPrimitives(ImGui::GetWindowDrawList(), prims, &gl);
  if (!l.message.empty()) {
    centeredText(room, l.message.c_str());
  } else {
    std::vector<MatrixPlacement> placed;
    for (size_t i = 0; i < l.panels.size(); ++i) placed.push_back(drawPanel(s, l.panels[i], static_cast<int>(i), gl));
    if (s.describe) s.described = describeLayout(l, imguiCanvas(), &placed);
    hitTooltips(l);
    scrollToPlayed(s, l);
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(ImVec2(room.x, std::max(l.content_h, avail.y - ImGui::GetStyle().WindowPadding.y)));
  }
  ImGui::EndChild();
}

}  // namespace

// [SECTION] drawMainView

void drawMainView(AppState& s, HeatmapRenderer& gl, ImVec2 pos, ImVec2 size) {
  beginFixedWindow("##view", pos, size, false);
  if (!s.output || !s.output->result) {
    centeredText(ImGui::GetContentRegionAvail(), s.status_is_error ? s.status.c_str() : "computing…");
  } else if (s.output->result->heads() == 0) {
    centeredText(ImGui::GetContentRegionAvail(), "This result has no heads to draw.");
  } else {
    const Result& r = *s.output->result;
    timelineControl(s, r);
    const ViewInfo& info = *s.view.view;
    ViewInput in;
    const std::string waiting = viewInput(s, info, r, in);
    header(s, info, r);
    const std::string why = waiting.empty() ? info.refusal(in, viewParams(s)) : waiting;
    if (!why.empty()) centeredText(ImGui::GetContentRegionAvail(), why.c_str());
    else drawLayout(s, info, in, gl);
  }
  ImGui::End();
}

}  // namespace attn
