// Index
//   [SECTION] Shared pieces (matrix views of a result, headers)
//   [SECTION] Heatmap view
//   [SECTION] Heads view
//   [SECTION] Lines view
//   [SECTION] Extras view
//   [SECTION] Family view
//   [SECTION] Image view
//   [SECTION] Compare view
//   [SECTION] Walkthrough view
//   [SECTION] drawMainView
#include "app/gui/gui_views.h"

#include "app/gui/gui_lesson.h"
#include "app/gui/gui_panels.h"
#include "app/gui/gui_timeline.h"
#include "engine/attention_math.h"
#include "widgets/bars.h"
#include "widgets/formula_view.h"
#include "widgets/pattern_image.h"
#include "widgets/plot_layouts.h"
#include "widgets/plots.h"
#include "widgets/primitives_imgui.h"
#include "widgets/token_lines.h"
#include "widgets/value_range.h"
#include "widgets/view_layouts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

// [SECTION] Shared pieces

namespace {

std::string labelOf(const Extra& e) { return e.label.empty() ? e.name : e.label; }

// A head slider at the right end of the header line.
void headSlider(const char* id, int& head, int heads) {
  if (heads <= 1) return;
  ImGui::SameLine();
  // On the header's line when it leaves room, else on the next line: never past the window's edge.
  if (ImGui::GetCursorPosX() + ImGui::GetFontSize() * 17 > ImGui::GetWindowWidth()) ImGui::NewLine();
  ImGui::SetCursorPosX(std::max(ImGui::GetCursorPosX() + ImGui::GetFontSize(), ImGui::GetWindowWidth() - ImGui::GetFontSize() * 16));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12);
  ImGui::SliderInt(id, &head, 0, heads - 1);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the head this view shows");
}

int clampHead(const Result& r, int h) { return std::clamp(h, 0, std::max(0, r.heads() - 1)); }

MatrixStyle weightsStyle(const AppState& s, const Result& r) {
  MatrixStyle st;
  st.range = scaledWeightsRange(weightsRange(r), s.scale, r, s.view.head);
  st.colormap = colormapFor(st.range, s.settings.colormap);
  return st;
}

// After an error, or while a newer job computes, the result shown is not the
// scene's: say so next to its title.
void previousResultMarker(const AppState& s) {
  if (s.output_current) return;
  ImGui::SameLine();
  ImGui::TextDisabled("(previous result)");
}

// Title line of the shown result `r` (not the scene, which may be newer),
// then what the view shows.
void header(const AppState& s, const Result& r, const std::string& detail) {
  const VariantInfo* info = findVariant(r.variant);
  ImGui::TextUnformatted(info ? info->title.c_str() : r.variant.c_str());
  if (!detail.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("— %s", detail.c_str());
  }
  previousResultMarker(s);
}

// [SECTION] Heatmap view

void heatmapView(AppState& s, const Result& r, HeatmapRenderer& gl) {
  s.view.head = clampHead(r, s.view.head);
  header(s, r, "head " + std::to_string(s.view.head) + " of " + std::to_string(r.heads()) +
                  (r.weights.empty() ? ", sparse: drawn at screen resolution" : ""));
  headSlider("head##view", s.view.head, r.heads());
  ImGui::Spacing();
  // The view takes its area: a matrix that is not square may stretch its cells up to 1.6:1.
  MatrixStyle st = weightsStyle(s, r);
  // Presentation mode fills the wide screen: square matrices may stretch too.
  st.max_cell_aspect = r.queries() == r.keys() && !s.present.on ? 1.0f : 1.6f;
  offerAnchor(s, heatmap("main", weightsSpec(r, s.view.head), st, s.view.main_zoom, gl, ImGui::GetContentRegionAvail()).placed);
}

// [SECTION] Heads view

void headsView(AppState& s, const Result& r, HeatmapRenderer& gl) {
  header(s, r, std::to_string(r.heads()) + " heads, linked zoom; click one to focus it");
  const MatrixStyle base = weightsStyle(s, r);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float bar_space = ImGui::GetFontSize() * 6.0f;
  const GridLayout g = bestGrid(r.heads(), avail.x - bar_space, avail.y, 0, ImGui::GetTextLineHeightWithSpacing());
  const float cell_w = g.cell_w, cell_h = g.cell_h;
  const int best_cols = g.cols;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  for (int h = 0; h < r.heads(); ++h) {
    ImGui::PushID(h);
    const ImVec2 p(origin.x + cell_w * (h % best_cols), origin.y + cell_h * (h / best_cols));
    ImGui::SetCursorScreenPos(p);
    ImGui::BeginGroup();
    ImGui::Text("head %d", h);
    MatrixStyle st = base;
    st.labels = false;
    st.colorbar = false;
    st.max_cell_aspect = 1.5f;  // thumbnails fill their grid cell
    st.highlight = h == s.view.head;
    const float pad = ImGui::GetFontSize() * 0.5f;
    const ImVec2 size(cell_w - pad, cell_h - ImGui::GetTextLineHeightWithSpacing() - pad);
    const HeatmapEvents ev = heatmap("thumb", weightsSpec(r, h), st, s.view.heads_zoom, gl, size);
    if (h == s.view.head) offerAnchor(s, ev.placed);
    if (ev.clicked) {
      s.view.head = h;
      s.view.view = ViewKind::Heatmap;
      s.view.main_zoom = s.view.heads_zoom;
    }
    ImGui::EndGroup();
    ImGui::PopID();
  }
  const float line = ImGui::GetTextLineHeight();
  colorbar(ImGui::GetWindowDrawList(), ImVec2(origin.x + avail.x - bar_space + line, origin.y + line * 1.5f),
           ImVec2(line * 0.9f, std::max(line, avail.y - line * 3.0f)), base.colormap, base.range, r.weights_label);
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(avail);
}

// [SECTION] Lines view

void linesView(AppState& s, const Result& r) {
  header(s, r, "token lines: opacity = weight, colour = head; hover a token to isolate it");
  tokenLines("lines", r, s.view.lines, ImGui::GetContentRegionAvail());
}

// [SECTION] Extras view

void matrixExtra(AppState& s, const Result& r, const Extra& e, HeatmapRenderer& gl, ImVec2 size) {
  MatrixSpec v;
  v.data = e.value.data.data();
  v.rows = e.value.shape[0];
  v.cols = e.value.shape[1];
  if (!e.row_labels.empty())
    v.row_labels = &e.row_labels;
  else if (r.rowsAreTokens(e))
    v.row_labels = &r.q_tokens;  // one row per token, as the figures label it
  v.row_axis = e.row_axis.empty() ? "row" : e.row_axis;
  v.col_axis = e.col_axis.empty() ? "column" : e.col_axis;
  v.value_label = labelOf(e);
  MatrixStyle st;
  st.range = extraRange(e);
  st.colormap = colormapFor(st.range, s.settings.colormap);
  st.max_cell_aspect = 8.0f;
  heatmap(e.name.c_str(), v, st, s.view.extra_zoom[e.name], gl, size);
}

// A matrix of category indices (which pattern each layer × head uses): the
// categories' colours, named in a legend in place of the colour bar.
void categoryExtra(AppState& s, const Extra& e, HeatmapRenderer& gl, ImVec2 size) {
  MatrixSpec v;
  v.data = e.value.data.data();
  v.rows = e.value.shape[0];
  v.cols = e.value.shape[1];
  v.categories = true;
  v.category_names = &e.categories;
  v.row_axis = e.row_axis.empty() ? "row" : e.row_axis;
  v.col_axis = e.col_axis.empty() ? "column" : e.col_axis;
  v.value_label = labelOf(e);
  heatmap(e.name.c_str(), v, MatrixStyle{}, s.view.extra_zoom[e.name], gl, size);  // square cells, as a grid of choices
}

void weightsExtra(AppState& s, const Result& r, const Extra& e, HeatmapRenderer& gl, ImVec2 size) {
  // [H, Lq, Lk] next to the main weights of the same head, chosen per extra;
  // or [n, Lq, Lk] over the extra's own axis (slice_axis "step"), alone.
  if (e.value.rank() != 3 || e.value.shape[0] < 1) return;
  const int64_t hs = e.value.shape[0], lq = e.value.shape[1], lk = e.value.shape[2];
  const bool by_head = e.slice_axis == "head";
  // Over its own axis, the timeline (gui_timeline.h) picks the slice.
  int stage = static_cast<int>(std::clamp<int64_t>(s.view.stage, 0, hs - 1));
  int& head = by_head ? s.view.extra_head.try_emplace(e.name, s.view.head).first->second : stage;
  if (by_head) head = static_cast<int>(std::clamp<int64_t>(head, 0, std::min<int64_t>(r.heads(), hs) - 1));
  if (by_head && hs > 1) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
    ImGui::SliderInt("head", &head, 0, static_cast<int>(hs - 1));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the head shown for %s (and the main weights beside it)", labelOf(e).c_str());
  }
  const int h = head;
  MatrixSpec v;
  v.data = e.value.data.data() + h * lq * lk;
  v.rows = lq;
  v.cols = lk;
  v.row_labels = &r.q_tokens;
  v.col_labels = &r.k_tokens;
  if (!e.row_axis.empty()) v.row_axis = e.row_axis;  // as the figures caption it
  if (!e.col_axis.empty()) v.col_axis = e.col_axis;
  if (lk == r.keys()) v.key_bands = &r.key_bands;
  v.value_label = labelOf(e);
  MatrixStyle st;
  st.range = extraRange(e);
  st.colormap = colormapFor(st.range, s.settings.colormap);
  if (!by_head) {
    offerAnchor(s, heatmap("extra", v, st, s.view.extra_zoom[e.name], gl, size).placed);
    return;
  }
  const ImVec2 half((size.x - ImGui::GetStyle().ItemSpacing.x) * 0.5f, size.y - ImGui::GetTextLineHeightWithSpacing());
  ImGui::BeginGroup();
  formulaText(r.weights_label + ", head " + std::to_string(h), ImGui::GetColorU32(ImGuiCol_TextDisabled));
  offerAnchor(s, heatmap("main", weightsSpec(r, h), weightsStyle(s, r), s.view.extra_zoom[e.name], gl, half).placed);
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  formulaText(labelOf(e) + ", head " + std::to_string(h) + (e.signed_values ? " (signed, centred on 0)" : ""),
              ImGui::GetColorU32(ImGuiCol_TextDisabled));
  heatmap("extra", v, st, s.view.extra_zoom[e.name], gl, half);
  ImGui::EndGroup();
}

// "h0", "h1", … for HeadValues bars.
std::vector<std::string> headLabels(int64_t n) {
  std::vector<std::string> out;
  for (int64_t h = 0; h < n; ++h) out.push_back("h" + std::to_string(h));
  return out;
}

void extraPanel(AppState& s, const Result& r, const Extra& e, HeatmapRenderer& gl, ImVec2 size) {
  const ValueRange range = extraRange(e);
  switch (e.kind) {
    case ExtraKind::Matrix:
      if (e.value.rank() != 2) break;
      if (!e.categories.empty())
        categoryExtra(s, e, gl, size);
      else
        matrixExtra(s, r, e, gl, size);
      return;
    case ExtraKind::Weights: weightsExtra(s, r, e, gl, size); return;
    case ExtraKind::TokenValues: {
      const std::vector<std::string>* labels = !e.row_labels.empty()            ? &e.row_labels
                                               : e.value.size() == r.queries() ? &r.q_tokens
                                                                               : nullptr;
      valueBars("bars", e.value, labels, range, colormapFor(range, s.settings.colormap), labelOf(e), size);
      return;
    }
    case ExtraKind::HeadValues: {
      const std::vector<std::string> labels = headLabels(e.value.size());
      valueBars("bars", e.value, &labels, range, colormapFor(range, s.settings.colormap), labelOf(e), size, "head", true);
      return;
    }
    case ExtraKind::Curves:
      linePlot("curves", e.value, e.row_axis.empty() ? "series" : e.row_axis, e.col_axis.empty() ? "x" : e.col_axis, e.markers,
               size, e.categories, e.levels, e.stepwise ? s.view.stage : -1);
      return;
    case ExtraKind::Points: pointPlot("points", e, size); return;
    case ExtraKind::CategoryValues: categoryBars("bars", e.value, e.categories, e.col_axis, size); return;
    case ExtraKind::TokenCategories: categoryStrip("strip", e.value, r.q_tokens, e.categories, gl, size); return;
    case ExtraKind::Stacked:
      stackedBars("stacked", e.value, e.row_labels, e.row_axis.empty() ? "row" : e.row_axis,
                  e.col_axis.empty() ? "segment" : e.col_axis, size);
      return;
    case ExtraKind::QueryPosition:
    case ExtraKind::QueryWindow:
    case ExtraKind::QueryGroup:
    case ExtraKind::Scalar:
    case ExtraKind::Picture:
    case ExtraKind::Data: break;
  }
  ImGui::TextDisabled("(no view for shape %s)", e.value.shapeString().c_str());
}

void extrasView(AppState& s, const Result& r, HeatmapRenderer& gl) {
  header(s, r, "extras");
  std::vector<const Extra*> panels;
  std::vector<ScalarItem> scalars;
  std::string overlays, outlines;
  for (const Extra& e : r.extras) {
    if (e.kind == ExtraKind::Scalar && !e.value.data.empty()) {
      scalars.push_back(scalarItem(e));
    } else if (e.kind == ExtraKind::QueryPosition || e.kind == ExtraKind::QueryWindow) {
      overlays += (overlays.empty() ? "" : ", ") + labelOf(e);
    } else if (e.kind == ExtraKind::QueryGroup) {
      outlines += (outlines.empty() ? "" : ", ") + labelOf(e);
    } else if (e.kind != ExtraKind::Data && e.kind != ExtraKind::Picture) {  // Data: compute's files; Picture: the image view's
      panels.push_back(&e);
    }
  }
  if (!scalars.empty()) {  // the figure's "values" panel: the same layout, in columns across the view
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float w = ImGui::GetContentRegionAvail().x;
    Primitives prims;
    const float h = scalarsPrimitives(prims, imguiCanvas(), Box{p.x, p.y, w, 0}, scalars);
    drawPrimitives(ImGui::GetWindowDrawList(), prims);
    ImGui::Dummy(ImVec2(w, h));
  }
  if (!overlays.empty()) formulaText("drawn as overlays on the heatmap: " + overlays, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  if (!outlines.empty()) ImGui::TextDisabled("outlined around the selected query in the image view: %s", outlines.c_str());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (panels.empty()) {
    centeredText(avail, "This variant returns no matrix, weights or per-token extras.");
    return;
  }
  // Up to two panels fill the view. Four or more sit in a grid where each
  // cell stays readable (NTM's four stages and its memory at 1600×1000);
  // else they scroll (three in a row would squeeze a wide matrix such as PE,
  // and a per-head pair of matrices, Transformer-XL's terms, needs the width).
  const float font = ImGui::GetFontSize();
  const GridLayout grid = bestGrid(static_cast<int>(panels.size()), avail.x, avail.y, 0, 0);
  const bool pairs = std::any_of(panels.begin(), panels.end(),
                                 [](const Extra* e) { return e->kind == ExtraKind::Weights && e->slice_axis == "head"; });
  const bool tiled = panels.size() >= 4 && !pairs && grid.cell_w >= font * 20 && grid.cell_h >= font * 13;
  const float panel_h = tiled ? grid.cell_h - font * 0.5f
                              : std::max(avail.y / static_cast<float>(std::min<size_t>(panels.size(), 2)), font * 16.0f);
  ImGui::BeginChild("##extras", avail, false);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  for (size_t i = 0; i < panels.size(); ++i) {
    const Extra* e = panels[i];
    ImGui::PushID(e->name.c_str());
    if (tiled) {
      const int col = static_cast<int>(i) % grid.cols, row = static_cast<int>(i) / grid.cols;
      ImGui::SetCursorScreenPos(ImVec2(origin.x + grid.cell_w * static_cast<float>(col), origin.y + grid.cell_h * static_cast<float>(row)));
    }
    ImGui::BeginGroup();  // a wrapped title's next line starts at the cell's left edge
    // The panel the timeline plays scrolls into view when it moves (or a lesson's step opens on it).
    const bool played = (e->kind == ExtraKind::Weights && e->slice_axis != "head") || (e->kind == ExtraKind::Curves && e->stepwise);
    const bool framed = e->name == s.view.focus_panel;
    if ((framed || (played && s.view.focus_panel.empty())) && s.view.scroll_to_played) {
      ImGui::SetScrollHereY(0.0f);
      s.view.scroll_to_played = false;
    }
    const ImVec2 top_left = ImGui::GetCursorScreenPos();
    const float w = tiled ? grid.cell_w - font : ImGui::GetContentRegionAvail().x;
    // A per-head Weights extra's halves are captioned each (the weights, the extra): no title over both.
    if (!(e->kind == ExtraKind::Weights && e->slice_axis == "head")) {
      formulaText(labelOf(*e), ImGui::GetColorU32(ImGuiCol_Text), w * 0.75f);
      ImGui::SameLine();
    }
    ImGui::TextDisabled("%s  %s", e->name.c_str(), e->value.shapeString().c_str());
    extraPanel(s, r, *e, gl, ImVec2(w, panel_h - ImGui::GetTextLineHeightWithSpacing() * 2));
    if (framed) {  // the panel a lesson's step points at
      const ImVec2 bottom_right(top_left.x + w, ImGui::GetCursorScreenPos().y);
      ImGui::GetWindowDrawList()->AddRect(ImVec2(top_left.x - 2, top_left.y - 2), bottom_right,
                                          ImGui::GetColorU32(ImGuiCol_PlotHistogram), 4.0f, 0, 3.0f);
    }
    ImGui::EndGroup();
    ImGui::Spacing();
    ImGui::PopID();
  }
  ImGui::EndChild();
}

// [SECTION] Family view

void familyView(AppState& s, const Result& r, HeatmapRenderer& gl) {
  const VariantInfo* info = findVariant(r.variant);
  const SceneOutput& out = *s.output;
  if (!out.has_family) {
    centeredText(ImGui::GetContentRegionAvail(), "computing the family…");
    return;
  }
  ImGui::Text("Family: %s", info ? info->family.c_str() : "");
  ImGui::SameLine();
  ImGui::TextDisabled("— every variant on the same input, head %d; click one to select it", s.view.head);
  ImGui::SameLine();
  ImGui::Checkbox("own scales", &s.view.family_own_scales);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Off: one colour scale for every member, so equal colours mean equal weights.\n"
                      "On: each member stretched to its own range, with its own colour bar.");
  previousResultMarker(s);
  // One shared scale (the union of the members' ranges) and one colour bar at the right, unless asked otherwise.
  std::vector<const Result*> members;
  for (const FamilyMember& m : out.family)
    if (m.result && m.result->heads() > 0) members.push_back(m.result.get());
  const bool shared = !s.view.family_own_scales && !members.empty();
  const ValueRange shared_range = shared ? scaledWeightsRange(sharedWeightsRange(members), s.scale, r, s.view.head) : ValueRange{};
  const float font = ImGui::GetFontSize(), bar_space = shared ? font * 5.5f : 0.0f;
  ImVec2 avail = ImGui::GetContentRegionAvail();
  avail.x -= bar_space;
  const GridLayout g = bestGrid(static_cast<int>(out.family.size()), avail.x, avail.y, font * (shared ? 6 : 12), font * 6);
  const int cols = g.cols;
  const ImVec2 cell(g.cell_w, g.cell_h);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  for (int i = 0; i < static_cast<int>(out.family.size()); ++i) {
    const FamilyMember& m = out.family[static_cast<size_t>(i)];
    const VariantInfo* v = findVariant(m.variant);
    ImGui::PushID(i);
    const ImVec2 p(origin.x + cell.x * (i % cols), origin.y + cell.y * (i / cols));
    ImGui::SetCursorScreenPos(p);
    ImGui::BeginGroup();
    const bool selected = m.variant == s.scene.variant;
    if (selected) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_PlotHistogram]);
    // A title wider than its cell wraps (never runs into the next one); the matrix takes what is left.
    const char* title = v ? v->title.c_str() : m.variant.c_str();
    const float title_w = cell.x - ImGui::GetFontSize();
    const float title_h = ImGui::CalcTextSize(title, nullptr, false, title_w).y;
    ImGui::PushTextWrapPos(p.x - ImGui::GetWindowPos().x + title_w);  // window-local x
    ImGui::TextUnformatted(title);
    ImGui::PopTextWrapPos();
    if (selected) ImGui::PopStyleColor();
    const ImVec2 size(cell.x - ImGui::GetFontSize(), cell.y - title_h - ImGui::GetStyle().ItemSpacing.y - ImGui::GetFontSize() * 0.5f);
    if (!m.result || m.result->heads() == 0) {
      ImGui::PushTextWrapPos(p.x - ImGui::GetWindowPos().x + size.x);  // window-local x
      ImGui::TextColored(ImVec4(0.95f, 0.35f, 0.3f, 1.0f), "%s", m.error.empty() ? "no weights" : m.error.c_str());
      ImGui::PopTextWrapPos();
    } else {
      const Result& r = *m.result;
      MatrixStyle st = weightsStyle(s, r);
      if (shared) {
        st.range = shared_range;
        st.colormap = colormapFor(shared_range, s.settings.colormap);
        st.colorbar = false;
      }
      st.max_cell_aspect = 1.5f;
      st.highlight = selected;
      st.labels = size.y > ImGui::GetFontSize() * 14;
      const HeatmapEvents ev = heatmap("member", weightsSpec(r, clampHead(r, s.view.head)), st, s.view.family_zoom, gl, size);
      if (selected) offerAnchor(s, ev.placed);
      if (ev.clicked && v) selectVariant(s, *v);
    }
    ImGui::EndGroup();
    ImGui::PopID();
  }
  if (shared) {
    const float line = ImGui::GetTextLineHeight();
    colorbar(ImGui::GetWindowDrawList(), ImVec2(origin.x + avail.x + line, origin.y + line * 1.5f),
             ImVec2(line * 0.9f, std::max(line, avail.y - line * 3.0f)), colormapFor(shared_range, s.settings.colormap),
             shared_range, "weight (shared scale)");
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(avail.x + bar_space, avail.y));
}

// [SECTION] Image view

// Head h's pattern as CSR: the result's own, or built once from a dense-only result.
const SparseRows& patternOf(AppState& s, const Result& r, int h) {
  if (r.isSparse()) return r.sparse[static_cast<size_t>(h)];
  DensePattern& d = s.view.dense_pattern;
  if (d.generation != s.generation || d.head != h) {
    d.rows = sparseFromDense(r.weights[static_cast<size_t>(h)], r.mask);
    d.generation = s.generation;
    d.head = h;
  }
  return d.rows;
}

// A result with a Picture extra: the picture with several query pixels, each beside its map.
void pictureImageView(AppState& s, const Result& r, const Extra& picture, HeatmapRenderer& gl) {
  header(s, r, "click the image: move the selected query; a map: select it; arrows move it");
  const int64_t n = r.queries();
  std::vector<int64_t>& qs = s.view.picture_queries;
  int& slot = s.view.picture_slot;
  if (qs.empty() || s.view.picture_defaults != r.image_queries) {  // another picture: its own queries
    // The first picture keeps a query given on the command line (gui --query) in the first slot.
    if (!qs.empty()) s.view.image_query = -1;
    qs = r.image_queries.empty() ? std::vector<int64_t>{defaultImageQuery(r)} : r.image_queries;
    s.view.picture_defaults = r.image_queries;
    slot = 0;
  }
  for (int64_t& q : qs) q = std::clamp<int64_t>(q, 0, n - 1);
  slot = std::clamp(slot, 0, static_cast<int>(qs.size()) - 1);
  if (s.view.image_query < 0) s.view.image_query = qs[static_cast<size_t>(slot)];
  s.view.image_query = std::clamp<int64_t>(s.view.image_query, 0, n - 1);
  qs[static_cast<size_t>(slot)] = s.view.image_query;
  int panel = -1;
  const int64_t picked = pictureView("picture", picture.value, r.weights[static_cast<size_t>(s.view.head)], r.key_image_width, qs,
                                     slot, gl, ImGui::GetContentRegionAvail(), panel);
  if (picked < 0) return;
  if (panel >= 0) {  // a map: select its query
    slot = panel;
    s.view.image_query = qs[static_cast<size_t>(panel)];
  } else {
    s.view.image_query = picked;
  }
}

void imageView(AppState& s, const Result& r, HeatmapRenderer& gl) {
  s.view.head = clampHead(r, s.view.head);
  const int64_t n = r.queries(), w = r.image_width;
  if (const Extra* picture = r.firstExtra(ExtraKind::Picture); picture && !r.weights.empty() && w > 0) {
    pictureImageView(s, r, *picture, gl);
    return;
  }
  header(s, r, "the sequence as an image; click or drag on a query pixel, arrow keys move it");
  headSlider("head##image", s.view.head, r.heads());
  if (w <= 0 || n == 0) {
    centeredText(ImGui::GetContentRegionAvail(), "This result has no image layout (image_width is 0).");
    return;
  }
  const SparseRows& p = patternOf(s, r, s.view.head);
  // Until the user picks one, the same query as the exported figure.
  if (s.view.image_query < 0) s.view.image_query = defaultImageQuery(r);
  s.view.image_query = std::clamp<int64_t>(s.view.image_query, 0, n - 1);
  const int64_t q = s.view.image_query;
  const Extra* groups = r.firstExtra(ExtraKind::QueryGroup);
  const int64_t picked = patternView("image", p, r.set_names, w, q, groups, gl, ImGui::GetContentRegionAvail());
  if (picked >= 0) s.view.image_query = picked;
}

// [SECTION] Compare view

void compareView(AppState& s, const Result& r, HeatmapRenderer& gl) {
  const SceneOutput& out = *s.output;
  if (!out.has_comparison) {
    centeredText(ImGui::GetContentRegionAvail(), "computing the comparison with full attention…");
    return;
  }
  if (!out.comparison) {
    centeredText(ImGui::GetContentRegionAvail(), out.comparison_error.c_str());
    return;
  }
  const Comparison& c = *out.comparison;
  s.view.head = std::clamp(s.view.head, 0, std::max(0, c.heads - 1));
  const int h = s.view.head;
  header(s, r, "against full causal attention on the same q, k, v; head " + std::to_string(h));
  headSlider("head##compare", s.view.head, c.heads);
  // The layout of widgets/view_layouts.h: the numbers, the mass strip and
  // the rects the three matrices go into.
  const ImVec2 avail = ImGui::GetContentRegionAvail(), origin = ImGui::GetCursorScreenPos();
  Primitives prims;
  const CompareLayout g = comparePrimitives(prims, imguiCanvas(), {origin.x, origin.y, avail.x, avail.y}, c, s.settings.colormap);
  drawPrimitives(ImGui::GetWindowDrawList(), prims, &gl);
  if (!g.panels.empty()) {
    const size_t hh = static_cast<size_t>(h);
    MatrixStyle prob;
    prob.range = valueRange(out.full_stats, false);
    prob.colormap = colormapFor(prob.range, s.settings.colormap);
    prob.labels = g.panels[0].h > ImGui::GetFontSize() * 10;
    prob.max_cell_aspect = 1.6f;
    MatrixStyle diff = prob;
    diff.range = valueRange(out.difference_stats, true);
    diff.colormap = colormapFor(diff.range, s.settings.colormap);
    const struct {
      const char* title;
      const Mat& m;
      const MatrixStyle& style;
    } panels[] = {{"full attention", c.full[hh], prob},
                  {"pattern", c.pattern[hh], prob},
                  {"pattern \xE2\x88\x92 full", c.difference[hh], diff}};
    for (int i = 0; i < 3; ++i) {
      const Box& b = g.panels[static_cast<size_t>(i)];
      ImGui::SetCursorScreenPos(ImVec2(b.x, b.y));
      ImGui::PushID(i);
      MatrixSpec v = MatrixSpec::of(panels[i].m);
      v.row_labels = &r.q_tokens;
      v.col_labels = &r.k_tokens;
      v.value_label = panels[i].title;
      offerAnchor(s, heatmap("cmp", v, panels[i].style, s.view.compare_zoom, gl, ImVec2(b.w, b.h)).placed);
      ImGui::PopID();
    }
  }
  // What a number means, on its name; a strip cell's exact share.
  const ImVec2 m = ImGui::GetIO().MousePos;
  const bool inside = ImGui::IsWindowHovered() && !ImGui::IsAnyItemHovered();
  for (size_t k = 1; k < g.table_rows.size() && inside; ++k) {
    const Box& b = g.table_rows[k];
    if (m.x >= b.x && m.x < b.right() && m.y >= b.y && m.y < b.bottom()) ImGui::SetTooltip("%s", comparisonNotes()[k - 1].c_str());
  }
  const Box& st = g.strip;
  if (inside && g.strip_cols > 0 && m.x >= st.x && m.x < st.right() && m.y >= st.y && m.y < st.bottom()) {
    const int64_t row = std::min<int64_t>(g.strip_rows - 1, static_cast<int64_t>((m.y - st.y) / st.h * static_cast<float>(g.strip_rows)));
    const int64_t col = std::min<int64_t>(g.strip_cols - 1, static_cast<int64_t>((m.x - st.x) / st.w * static_cast<float>(g.strip_cols)));
    ImGui::SetTooltip("head %lld, query %lld: %.2f %% of full attention's mass kept", static_cast<long long>(row),
                      static_cast<long long>(col), 100.0 * c.mass_kept(row, col));
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(avail);
}

// [SECTION] Walkthrough view

// The layout of widgets/view_layouts.h (stages in a grid under their typeset
// headers, one colour bar, the categorical extras beside or under them);
// the matrices and plots go into its rects.
void walkthroughView(AppState& s, const Result& r, HeatmapRenderer& gl) {
  header(s, r, "stage by stage; hover a cell for its tokens and categories, scroll to zoom");
  if (r.stages.empty()) {
    centeredText(ImGui::GetContentRegionAvail(), "This result has no walkthrough stages.");
    return;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail(), origin = ImGui::GetCursorScreenPos();
  MatrixStyle st;
  st.range = {0.0f, std::max(1e-6f, r.weights_stats.max), false};
  st.colormap = colormapFor(st.range, s.settings.colormap);
  st.colorbar = false;
  Primitives prims;
  const WalkthroughLayout g =
      walkthroughPrimitives(prims, imguiCanvas(), {origin.x, origin.y, avail.x, avail.y}, r, st.range, st.colormap);
  drawPrimitives(ImGui::GetWindowDrawList(), prims, &gl);
  for (size_t i = 0; i < g.stages.size(); ++i) {
    const Stage& stage = r.stages[i];
    const Box& b = g.stages[i];
    ImGui::PushID(static_cast<int>(i));
    ImGui::SetCursorScreenPos(ImVec2(b.x, b.y));
    MatrixSpec v = MatrixSpec::of(stage.matrix);
    v.row_labels = &stage.row_labels;
    v.col_labels = &stage.col_labels;
    v.row_categories = stage.row_categories.empty() ? nullptr : &stage.row_categories;
    v.col_categories = stage.col_categories.empty() ? nullptr : &stage.col_categories;
    v.category_axis = stage.category_axis;
    v.row_dividers = &stage.row_dividers;
    v.col_dividers = &stage.col_dividers;
    v.value_label = r.weights_label;
    MatrixStyle cell = st;
    cell.labels = b.h > ImGui::GetFontSize() * 11;
    cell.max_cell_aspect = 1.6f;
    const int stage_i = static_cast<int>(i);
    cell.highlight = stage_i == s.view.stage;  // the stage a lesson points at is framed, and its marks go on it
    const HeatmapEvents ev = heatmap("stage", v, cell, s.view.extra_zoom["stage" + std::to_string(i)], gl, ImVec2(b.w, b.h));
    if (stage_i == s.view.stage) offerAnchor(s, ev.placed);
    ImGui::PopID();
  }
  const float line = ImGui::GetTextLineHeightWithSpacing(), gap = ImGui::GetStyle().ItemSpacing.y;
  for (size_t k = 0; k < g.pictures.size(); ++k) {
    const Extra& e = *g.picture_extras[k];
    const Box& b = g.pictures[k];
    ImGui::PushID(static_cast<int>(k) + 100);
    ImGui::SetCursorScreenPos(ImVec2(b.x, b.y));
    ImGui::BeginGroup();  // the plot under its title at the rect's x, not the window's
    ImGui::TextDisabled("b = %zu", e.categories.size());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", labelOf(e).c_str());
    const float d = std::max(1.0f, std::min(b.w, b.h - line));
    pointPlot("points", e, ImVec2(d, d));
    ImGui::EndGroup();
    ImGui::PopID();
  }
  for (size_t k = 0; k < g.others.size(); ++k) {
    const Extra& e = *g.other_extras[k];
    const Box& b = g.others[k];
    ImGui::PushID(static_cast<int>(k) + 200);
    ImGui::SetCursorScreenPos(ImVec2(b.x, b.y));
    ImGui::BeginGroup();
    ImGui::TextDisabled("%s", labelOf(e).c_str());
    const ImVec2 size(b.w, std::max(1.0f, b.h - line - gap));
    if (e.kind == ExtraKind::CategoryValues) categoryBars("bars", e.value, e.categories, e.col_axis, size);
    else categoryStrip("strip", e.value, r.q_tokens, e.categories, gl, size);
    ImGui::EndGroup();
    ImGui::PopID();
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(avail);
}

}  // namespace

// [SECTION] drawMainView

void drawMainView(AppState& s, HeatmapRenderer& gl, ImVec2 pos, ImVec2 size) {
  beginFixedWindow("##view", pos, size, false);
  if (!s.output || !s.output->result) {
    centeredText(ImGui::GetContentRegionAvail(), s.status_is_error ? s.status.c_str() : "computing…");
  } else {
    const Result& r = *s.output->result;
    timelineControl(s, r);
    switch (s.view.view) {
      case ViewKind::Heatmap:
        if (r.heads() > 0) heatmapView(s, r, gl);
        break;
      case ViewKind::Heads:
        if (r.heads() > 0) headsView(s, r, gl);
        break;
      case ViewKind::Lines:
        if (!r.weights.empty()) linesView(s, r);
        else centeredText(ImGui::GetContentRegionAvail(), "Token lines need dense weights; this result is sparse.");
        break;
      case ViewKind::Extras: extrasView(s, r, gl); break;
      case ViewKind::Family: familyView(s, r, gl); break;
      case ViewKind::Image:
        if (r.heads() > 0) imageView(s, r, gl);
        break;
      case ViewKind::Compare: compareView(s, r, gl); break;
      case ViewKind::Walkthrough: walkthroughView(s, r, gl); break;
    }
  }
  ImGui::End();
}

}  // namespace attn
