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

#include "app/export/figure.h"
#include "app/gui/gui_lesson.h"
#include "app/gui/gui_panels.h"
#include "app/gui/gui_timeline.h"
#include "engine/attention_math.h"
#include "widgets/bars.h"
#include "widgets/formula_view.h"
#include "widgets/pattern_image.h"
#include "widgets/plots.h"
#include "widgets/token_lines.h"
#include "widgets/value_range.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

// [SECTION] Shared pieces

namespace {

// Head h of the main weights (dense, or sparse drawn tile by tile), with
// scores, mask, tokens, key bands and overlays.
MatrixView weightsView(const Result& r, int h) {
  const size_t hh = static_cast<size_t>(h);
  MatrixView v = r.weights.empty() ? MatrixView::of(r.sparse[hh]) : MatrixView::of(r.weights[hh]);
  if (hh < r.scores.size() && r.scores[hh].size()) v.scores = &r.scores[hh];
  if (r.mask.size()) v.mask = &r.mask;
  v.row_labels = &r.q_tokens;
  v.col_labels = &r.k_tokens;
  v.value_label = r.weights_label;
  v.score_label = r.scores_label;
  v.key_bands = &r.key_bands;
  v.set_names = &r.set_names;
  const WeightAxes axes = weightAxes(r);
  v.row_axis = axes.rows;
  v.col_axis = axes.cols;
  if (const Extra* e = r.firstExtra(ExtraKind::QueryPosition)) v.query_position = &e->value;
  if (const Extra* e = r.firstExtra(ExtraKind::QueryWindow)) v.query_window = &e->value;
  return v;
}

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

HeatmapStyle weightsStyle(const AppState& s, const Result& r) {
  HeatmapStyle st;
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
  HeatmapStyle st = weightsStyle(s, r);
  // Presentation mode fills the wide screen: square matrices may stretch too.
  st.max_cell_aspect = r.queries() == r.keys() && !s.present.on ? 1.0f : 1.6f;
  offerAnchor(s, heatmap("main", weightsView(r, s.view.head), st, s.view.main_zoom, gl, ImGui::GetContentRegionAvail()).placed);
}

// [SECTION] Heads view

void headsView(AppState& s, const Result& r, HeatmapRenderer& gl) {
  header(s, r, std::to_string(r.heads()) + " heads, linked zoom; click one to focus it");
  const HeatmapStyle base = weightsStyle(s, r);
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
    HeatmapStyle st = base;
    st.labels = false;
    st.colorbar = false;
    st.max_cell_aspect = 1.5f;  // thumbnails fill their grid cell
    st.highlight = h == s.view.head;
    const float pad = ImGui::GetFontSize() * 0.5f;
    const ImVec2 size(cell_w - pad, cell_h - ImGui::GetTextLineHeightWithSpacing() - pad);
    const HeatmapEvents ev = heatmap("thumb", weightsView(r, h), st, s.view.heads_zoom, gl, size);
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
  MatrixView v;
  v.data = e.value.data.data();
  v.rows = e.value.shape[0];
  v.cols = e.value.shape[1];
  if (r.rowsAreTokens(e)) v.row_labels = &r.q_tokens;  // one row per token, as the figures label it
  v.row_axis = e.row_axis.empty() ? "row" : e.row_axis;
  v.col_axis = e.col_axis.empty() ? "column" : e.col_axis;
  v.value_label = labelOf(e);
  HeatmapStyle st;
  st.range = extraRange(e);
  st.colormap = colormapFor(st.range, s.settings.colormap);
  st.max_cell_aspect = 8.0f;
  heatmap(e.name.c_str(), v, st, s.view.extra_zoom[e.name], gl, size);
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
  MatrixView v;
  v.data = e.value.data.data() + h * lq * lk;
  v.rows = lq;
  v.cols = lk;
  v.row_labels = &r.q_tokens;
  v.col_labels = &r.k_tokens;
  if (lk == r.keys()) v.key_bands = &r.key_bands;
  v.value_label = labelOf(e);
  HeatmapStyle st;
  st.range = extraRange(e);
  st.colormap = colormapFor(st.range, s.settings.colormap);
  if (!by_head) {
    offerAnchor(s, heatmap("extra", v, st, s.view.extra_zoom[e.name], gl, size).placed);
    return;
  }
  const ImVec2 half((size.x - ImGui::GetStyle().ItemSpacing.x) * 0.5f, size.y - ImGui::GetTextLineHeightWithSpacing());
  ImGui::BeginGroup();
  formulaText(r.weights_label + ", head " + std::to_string(h), ImGui::GetColorU32(ImGuiCol_TextDisabled));
  offerAnchor(s, heatmap("main", weightsView(r, h), weightsStyle(s, r), s.view.extra_zoom[e.name], gl, half).placed);
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
        categoryGrid("categories", e.value, e.categories, e.row_axis.empty() ? "row" : e.row_axis,
                     e.col_axis.empty() ? "column" : e.col_axis, size);
      else
        matrixExtra(s, r, e, gl, size);
      return;
    case ExtraKind::Weights: weightsExtra(s, r, e, gl, size); return;
    case ExtraKind::TokenValues: {
      const std::vector<std::string>* labels = e.value.size() == r.queries() ? &r.q_tokens : nullptr;
      valueBars("bars", e.value, labels, range, colormapFor(range, s.settings.colormap), labelOf(e), size);
      return;
    }
    case ExtraKind::HeadValues: {
      const std::vector<std::string> labels = headLabels(e.value.size());
      valueBars("bars", e.value, &labels, range, colormapFor(range, s.settings.colormap), labelOf(e), size, "head");
      return;
    }
    case ExtraKind::Curves:
      linePlot("curves", e.value, e.row_axis.empty() ? "series" : e.row_axis, e.col_axis.empty() ? "x" : e.col_axis,
               "", e.markers, size, e.categories, e.levels, e.stepwise ? s.view.stage : -1);  // titled by the panel
      return;
    case ExtraKind::Points: pointPlot("points", e, size); return;
    case ExtraKind::CategoryValues: categoryBars("bars", e.value, e.categories, e.col_axis, size); return;
    case ExtraKind::TokenCategories: categoryStrip("strip", e.value, r.q_tokens, e.categories, size); return;
    case ExtraKind::Stacked:
      stackedBars("stacked", e.value, e.row_labels, e.row_axis.empty() ? "row" : e.row_axis,
                  e.col_axis.empty() ? "segment" : e.col_axis, "", size);  // the panel's title is the label
      return;
    case ExtraKind::QueryPosition:
    case ExtraKind::QueryWindow:
    case ExtraKind::QueryGroup:
    case ExtraKind::Scalar:
    case ExtraKind::Data: break;
  }
  ImGui::TextDisabled("(no view for shape %s)", e.value.shapeString().c_str());
}

void extrasView(AppState& s, const Result& r, HeatmapRenderer& gl) {
  header(s, r, "extras");
  std::vector<const Extra*> panels;
  std::string overlays, outlines;
  for (const Extra& e : r.extras) {
    if (e.kind == ExtraKind::Scalar && !e.value.data.empty()) {
      // On the header's line while they fit, then on the next lines: never past the window's edge.
      const std::string item = labelOf(e) + " = " + formatValueShort(e.value.data[0]);
      ImGui::SameLine();
      if (ImGui::GetCursorPosX() + ImGui::CalcTextSize(item.c_str()).x + ImGui::GetFontSize() * 2 > ImGui::GetWindowWidth())
        ImGui::NewLine();
      else
        ImGui::SameLine(0.0f, ImGui::GetFontSize() * 1.5f);
      ImGui::TextUnformatted(item.c_str());
    } else if (e.kind == ExtraKind::QueryPosition || e.kind == ExtraKind::QueryWindow) {
      overlays += (overlays.empty() ? "" : ", ") + labelOf(e);
    } else if (e.kind == ExtraKind::QueryGroup) {
      outlines += (outlines.empty() ? "" : ", ") + labelOf(e);
    } else if (e.kind != ExtraKind::Data) {  // Data is for compute's files only
      panels.push_back(&e);
    }
  }
  if (!overlays.empty()) formulaText("drawn as overlays on the heatmap: " + overlays, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  if (!outlines.empty()) ImGui::TextDisabled("outlined around the selected query in the image view: %s", outlines.c_str());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (panels.empty()) {
    centeredText(avail, "This variant returns no matrix, weights or per-token extras.");
    return;
  }
  // Up to two panels fill the view; more scroll.
  const float panel_h = std::max(avail.y / static_cast<float>(std::min<size_t>(panels.size(), 2)),
                                 ImGui::GetFontSize() * 16.0f);
  ImGui::BeginChild("##extras", avail, false);
  for (const Extra* e : panels) {
    ImGui::PushID(e->name.c_str());
    // The panel the timeline plays scrolls into view when it moves (or a lesson's step opens on it).
    const bool played = (e->kind == ExtraKind::Weights && e->slice_axis != "head") || (e->kind == ExtraKind::Curves && e->stepwise);
    const bool framed = e->name == s.view.focus_panel;
    if ((framed || (played && s.view.focus_panel.empty())) && s.view.scroll_to_played) {
      ImGui::SetScrollHereY(0.0f);
      s.view.scroll_to_played = false;
    }
    const ImVec2 top_left = ImGui::GetCursorScreenPos();
    const float w = ImGui::GetContentRegionAvail().x;
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
      HeatmapStyle st = weightsStyle(s, r);
      if (shared) {
        st.range = shared_range;
        st.colormap = colormapFor(shared_range, s.settings.colormap);
        st.colorbar = false;
      }
      st.max_cell_aspect = 1.5f;
      st.highlight = selected;
      st.labels = size.y > ImGui::GetFontSize() * 14;
      const HeatmapEvents ev = heatmap("member", weightsView(r, clampHead(r, s.view.head)), st, s.view.family_zoom, gl, size);
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

void imageView(AppState& s, const Result& r, HeatmapRenderer& gl) {
  s.view.head = clampHead(r, s.view.head);
  const int64_t n = r.queries(), w = r.image_width;
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
  if (groups && groups->value.size() != n) groups = nullptr;
  patternLegend(r.set_names, groups != nullptr);
  // Keys of the query per set bit: one CSR row.
  std::vector<int64_t> per_set(std::max<size_t>(1, r.set_names.size()), 0);
  for (int64_t e = p.rowBegin(q); e < p.rowEnd(q); ++e)
    for (size_t b = 0; b < per_set.size(); ++b)
      per_set[b] += p.sets.empty() ? b == 0 : (p.sets[static_cast<size_t>(e)] >> b & 1);
  std::string counts;
  for (size_t b = 0; b < r.set_names.size() && r.set_names.size() > 1; ++b)
    counts += (b ? ", " : " — ") + r.set_names[b] + " " + std::to_string(per_set[b]);
  ImGui::Text("query %lld (x %lld, y %lld): %lld keys%s", static_cast<long long>(q), static_cast<long long>(q % w),
              static_cast<long long>(q / w), static_cast<long long>(p.rowEnd(q) - p.rowBegin(q)), counts.c_str());
  if (groups) {
    ImGui::SameLine();
    ImGui::TextDisabled("  %s %s", labelOf(*groups).c_str(), formatValueShort(groups->value.data[static_cast<size_t>(q)]).c_str());
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float gap = ImGui::GetFontSize() * 2.0f, caption = ImGui::GetTextLineHeightWithSpacing();
  // Two panels side by side at the full height: the image keeps square pixels, the connectivity matrix fills.
  const float side = std::max(8.0f, (avail.x - gap) * 0.5f), height = std::max(8.0f, avail.y - caption);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::BeginGroup();
  ImGui::TextDisabled("image %lld × %lld (raster order)", static_cast<long long>(w), static_cast<long long>((n + w - 1) / w));
  const int64_t picked = patternImage("image", p, w, q, groups ? &groups->value : nullptr, gl, ImVec2(side, height));
  ImGui::EndGroup();
  ImGui::SetCursorScreenPos(ImVec2(origin.x + side + gap, origin.y));
  ImGui::BeginGroup();
  ImGui::TextDisabled("connectivity %lld × %lld (query row marked)", static_cast<long long>(p.rows),
                      static_cast<long long>(p.cols));
  const int64_t row = connectivityMatrix("connectivity", p, q, r.set_names, gl, ImVec2(side, height));
  ImGui::EndGroup();
  if (picked >= 0) s.view.image_query = picked;
  if (row >= 0) s.view.image_query = row;
}

// [SECTION] Compare view

std::string formatCount(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// The numbers of a Comparison, full attention against the pattern.
// The numbers of a comparison in `width`; what each one means is the
// tooltip of its name, and the pattern's values wrap.
void compareTable(const Comparison& c, float width) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##numbers", 3, flags, ImVec2(width, 0))) return;
  ImGui::TableSetupColumn("hover a name for its meaning");
  ImGui::TableSetupColumn("full attention");
  ImGui::TableSetupColumn("pattern", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  auto row = [](const char* what, const std::string& full, const std::string& pattern, const std::string& note) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(what);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", note.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(full.c_str());
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", pattern.c_str());
  };
  const int64_t pairs = static_cast<int64_t>(c.heads) * c.length;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.2f %%", 100.0 * c.mass_kept_mean);
  row("mass kept", "100 %", buf, "share of full attention's weight on the pattern's keys, mean over heads and queries");
  std::string kl = formatValueShort(c.kl_mean) + " nats";
  if (!std::isfinite(c.kl_mean)) {
    std::snprintf(buf, sizeof buf, "\xE2\x88\x9E; finite for %lld of %lld pairs (mean %s nats)",
                  static_cast<long long>(c.kl_finite), static_cast<long long>(pairs), formatValueShort(c.kl_finite_mean).c_str());
    kl = buf;
  }
  row("KL(full \xE2\x80\x96 pattern)", "0", kl, "\xE2\x88\x9E where full attention puts weight on a dropped key");
  std::snprintf(buf, sizeof buf, "%.3g", c.output_rel_error);
  row("output relative error", "0", buf, "\xE2\x80\x96O_pattern \xE2\x88\x92 O_full\xE2\x80\x96 / \xE2\x80\x96O_full\xE2\x80\x96");
  std::snprintf(buf, sizeof buf, "%.3g\xC3\x97 fewer", c.full_flops / std::max(1.0, c.pattern_flops));
  row("FLOPs", formatFlops(c.full_flops), formatFlops(c.pattern_flops), buf);
  std::snprintf(buf, sizeof buf, "%.3g\xC3\x97 less", c.full_bytes / std::max(1.0, c.pattern_bytes));
  row("memory (weights held)", formatBytes(c.full_bytes), formatBytes(c.pattern_bytes), buf);
  std::snprintf(buf, sizeof buf, "%.1f per query", static_cast<double>(c.pattern_connections) / std::max<int64_t>(1, pairs));
  row("connections", formatCount(static_cast<double>(c.full_connections)), formatCount(static_cast<double>(c.pattern_connections)), buf);
  ImGui::EndTable();
}

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
  // Mass kept per query as a strip: one cell per query, exact value on hover.
  auto massStrip = [&](float width) {
    ImGui::TextDisabled("mass kept per query, head %d", h);
    if (c.mass_kept.rows() <= h) return;
    MatrixView strip;
    strip.data = c.mass_kept.data() + static_cast<int64_t>(h) * c.mass_kept.cols();
    strip.rows = 1;
    strip.cols = c.mass_kept.cols();
    strip.row_axis = "head";
    strip.value_label = "mass kept";
    HeatmapStyle st;
    st.range = {0.0f, 1.0f, false};
    st.colormap = s.settings.colormap;
    st.labels = false;
    st.max_cell_aspect = 1e6f;
    HeatmapZoom flat;
    heatmap("mass", strip, st, flat, gl, ImVec2(width, ImGui::GetFontSize() * 3.0f));
  };
  if (c.full.empty()) {
    compareTable(c, ImGui::GetContentRegionAvail().x);
    ImGui::Spacing();
    massStrip(ImGui::GetContentRegionAvail().x);
    centeredText(ImGui::GetContentRegionAvail(),
                 "At this length the full matrices are not kept (they would not fit): the numbers and the "
                 "per-query strip are computed in row blocks.");
    return;
  }
  // A 2 × 2 layout that fills the view: full attention and the pattern on
  // top, their difference below left, the numbers and the strip below right.
  const ImVec2 avail = ImGui::GetContentRegionAvail(), origin = ImGui::GetCursorScreenPos();
  const size_t hh = static_cast<size_t>(h);
  const float gap = ImGui::GetFontSize();
  const ImVec2 cell((avail.x - gap) * 0.5f, (avail.y - gap) * 0.5f);
  const ImVec2 map_size(cell.x, cell.y - ImGui::GetTextLineHeightWithSpacing());
  HeatmapStyle prob;
  prob.range = valueRange(out.full_stats, false);
  prob.colormap = colormapFor(prob.range, s.settings.colormap);
  prob.labels = map_size.y > ImGui::GetFontSize() * 10;
  prob.max_cell_aspect = 1.6f;
  HeatmapStyle diff = prob;
  diff.range = valueRange(out.difference_stats, true);
  diff.colormap = colormapFor(diff.range, s.settings.colormap);
  const struct {
    const char* title;
    const Mat& m;
    const HeatmapStyle& style;
  } panels[] = {{"full attention", c.full[hh], prob},
                {"pattern", c.pattern[hh], prob},
                {"pattern \xE2\x88\x92 full", c.difference[hh], diff}};
  for (int i = 0; i < 3; ++i) {
    ImGui::SetCursorScreenPos(ImVec2(origin.x + (cell.x + gap) * static_cast<float>(i % 2),
                                     origin.y + (cell.y + gap) * static_cast<float>(i / 2)));
    ImGui::BeginGroup();
    ImGui::PushID(i);
    ImGui::TextDisabled("%s", panels[i].title);
    MatrixView v = MatrixView::of(panels[i].m);
    v.row_labels = &r.q_tokens;
    v.col_labels = &r.k_tokens;
    v.value_label = panels[i].title;
    offerAnchor(s, heatmap("cmp", v, panels[i].style, s.view.compare_zoom, gl, map_size).placed);
    ImGui::PopID();
    ImGui::EndGroup();
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x + cell.x + gap, origin.y + cell.y + gap));
  ImGui::BeginGroup();
  compareTable(c, cell.x);
  ImGui::Spacing();
  massStrip(cell.x);
  ImGui::EndGroup();
}

// [SECTION] Walkthrough view

// The result's stages side by side (one row, or two when they are four and
// the view is tall), each in its own row/column order with its category
// strips and dividers; under them the categorical extras (points, bars,
// token strip), the points pictures in one row.
void walkthroughView(AppState& s, const Result& r, HeatmapRenderer& gl) {
  header(s, r, "stage by stage; hover a cell for its tokens and categories, scroll to zoom");
  if (r.stages.empty()) {
    centeredText(ImGui::GetContentRegionAvail(), "This result has no walkthrough stages.");
    return;
  }
  std::vector<const Extra*> pictures, others;
  for (const Extra& e : r.extras) {
    if (e.kind == ExtraKind::Points) pictures.push_back(&e);
    if (e.kind == ExtraKind::CategoryValues || e.kind == ExtraKind::TokenCategories) others.push_back(&e);
  }
  // Two columns: the stages in a grid on the left (62 % when there are
  // pictures), the hash pictures, the token strip and the bars on the right.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float gap = ImGui::GetStyle().ItemSpacing.x, line = ImGui::GetTextLineHeightWithSpacing();
  const float bar_space = ImGui::GetFontSize() * 6.0f;
  const bool side = !pictures.empty() || !others.empty();
  const float left_w = side ? avail.x * 0.62f : avail.x;
  const int n = static_cast<int>(r.stages.size());
  const GridLayout g = bestGrid(n, left_w - bar_space, avail.y, 0, line * 4);
  // Titles and captions wrap inside their panel: the header is as tall as the tallest.
  float header_h = 0;
  for (const Stage& stage : r.stages)
    header_h = std::max(header_h, ImGui::CalcTextSize(stage.title.c_str(), nullptr, false, g.cell_w - gap).y +
                                      formulaTextHeight(stage.caption, g.cell_w - gap));
  const float title = header_h + gap * 2;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  HeatmapStyle st;
  st.range = {0.0f, std::max(1e-6f, r.weights_stats.max), false};
  st.colormap = colormapFor(st.range, s.settings.colormap);
  st.colorbar = false;
  for (int i = 0; i < n; ++i) {
    const Stage& stage = r.stages[static_cast<size_t>(i)];
    ImGui::PushID(i);
    const ImVec2 p(origin.x + g.cell_w * static_cast<float>(i % g.cols), origin.y + g.cell_h * static_cast<float>(i / g.cols));
    ImGui::SetCursorScreenPos(p);
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(p.x - ImGui::GetWindowPos().x + g.cell_w - gap);  // window-local x
    ImGui::TextUnformatted(stage.title.c_str());
    ImGui::PopTextWrapPos();
    formulaText(stage.caption, ImGui::GetColorU32(ImGuiCol_TextDisabled), g.cell_w - gap);  // q_i·k_j typeset
    ImGui::SetCursorScreenPos(ImVec2(p.x, p.y + title));
    MatrixView v = MatrixView::of(stage.matrix);
    v.row_labels = &stage.row_labels;
    v.col_labels = &stage.col_labels;
    v.row_categories = stage.row_categories.empty() ? nullptr : &stage.row_categories;
    v.col_categories = stage.col_categories.empty() ? nullptr : &stage.col_categories;
    v.category_axis = stage.category_axis;
    v.row_dividers = &stage.row_dividers;
    v.col_dividers = &stage.col_dividers;
    v.value_label = r.weights_label;
    HeatmapStyle cell = st;
    cell.labels = g.cell_h > ImGui::GetFontSize() * 14;
    cell.max_cell_aspect = 1.6f;
    cell.highlight = i == s.view.stage;  // the stage a lesson points at is framed, and its marks go on it
    const HeatmapEvents ev =
        heatmap("stage", v, cell, s.view.extra_zoom["stage" + std::to_string(i)], gl, ImVec2(g.cell_w - gap, g.cell_h - title - gap));
    if (i == s.view.stage) offerAnchor(s, ev.placed);
    ImGui::EndGroup();
    ImGui::PopID();
  }
  const float grid_h = g.cell_h * static_cast<float>(g.rows);
  colorbar(ImGui::GetWindowDrawList(), ImVec2(origin.x + left_w - bar_space + line, origin.y + title + line),
           ImVec2(line * 0.7f, std::max(line, grid_h - title - line * 3)), st.colormap, st.range, r.weights_label);
  if (!side) return;
  // Right column: the pictures in a grid on the upper half, then the token
  // strips (the rows their tokens need) and the bars (the rest).
  const float x0 = origin.x + left_w + gap, column_w = avail.x - left_w - gap;
  float y = origin.y;
  if (!pictures.empty()) {
    const float pictures_h = others.empty() ? avail.y : avail.y * 0.5f;
    const GridLayout pg = bestGrid(static_cast<int>(pictures.size()), column_w, pictures_h, 0, line);
    for (size_t k = 0; k < pictures.size(); ++k) {
      ImGui::PushID(static_cast<int>(k) + 100);
      ImGui::SetCursorScreenPos(ImVec2(x0 + pg.cell_w * static_cast<float>(k % static_cast<size_t>(pg.cols)),
                                       y + pg.cell_h * static_cast<float>(k / static_cast<size_t>(pg.cols))));
      ImGui::BeginGroup();
      ImGui::TextDisabled("b = %zu", pictures[k]->categories.size());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", labelOf(*pictures[k]).c_str());
      const float d = std::min(pg.cell_w, pg.cell_h - line) - gap;
      pointPlot("points", *pictures[k], ImVec2(d, d));
      ImGui::EndGroup();
      ImGui::PopID();
    }
    y += pictures_h;
  }
  const float rest_h = origin.y + avail.y - y;
  const float strip_h = std::min(rest_h / 3.0f, line * 4.0f);
  const size_t strips = static_cast<size_t>(std::count_if(others.begin(), others.end(), [](const Extra* e) {
    return e->kind == ExtraKind::TokenCategories;
  }));
  const size_t bars = others.size() - strips;
  const float bars_h = bars ? (rest_h - strip_h * static_cast<float>(strips)) / static_cast<float>(bars) : 0.0f;
  for (size_t k = 0; k < others.size(); ++k) {
    const Extra& e = *others[k];
    const float each = e.kind == ExtraKind::TokenCategories ? (bars ? strip_h : rest_h / static_cast<float>(strips)) : bars_h;
    ImGui::PushID(static_cast<int>(k) + 200);
    ImGui::SetCursorScreenPos(ImVec2(x0, y));
    y += each;
    ImGui::BeginGroup();
    ImGui::TextDisabled("%s", labelOf(e).c_str());
    const ImVec2 size(column_w, each - line - gap);
    if (e.kind == ExtraKind::CategoryValues) categoryBars("bars", e.value, e.categories, e.col_axis, size);
    else categoryStrip("strip", e.value, r.q_tokens, e.categories, size);
    ImGui::EndGroup();
    ImGui::PopID();
  }
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
