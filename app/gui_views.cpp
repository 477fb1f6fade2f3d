// Index
//   [SECTION] Shared pieces (matrix views of a result, headers)
//   [SECTION] Heatmap view
//   [SECTION] Heads view
//   [SECTION] Lines view
//   [SECTION] Extras view
//   [SECTION] Family view
//   [SECTION] drawMainView
#include "app/gui_views.h"

#include "app/gui_panels.h"
#include "widgets/bars.h"
#include "widgets/token_lines.h"
#include "widgets/value_range.h"

#include <algorithm>
#include <cmath>

namespace attn {

// [SECTION] Shared pieces

namespace {

const Extra* firstExtra(const Result& r, ExtraKind k) {
  for (const Extra& e : r.extras)
    if (e.kind == k) return &e;
  return nullptr;
}

// Head h of the main weights, with scores, mask, tokens and overlays.
MatrixView weightsView(const Result& r, int h) {
  MatrixView v = MatrixView::of(r.weights[static_cast<size_t>(h)]);
  if (h < static_cast<int>(r.scores.size()) && r.scores[static_cast<size_t>(h)].size()) v.scores = &r.scores[static_cast<size_t>(h)];
  if (r.mask.size()) v.mask = &r.mask;
  v.row_labels = &r.q_tokens;
  v.col_labels = &r.k_tokens;
  v.value_label = r.weights_label;
  v.score_label = r.scores_label;
  if (const Extra* e = firstExtra(r, ExtraKind::QueryPosition)) v.query_position = &e->value;
  if (const Extra* e = firstExtra(r, ExtraKind::QueryWindow)) v.query_window = &e->value;
  return v;
}

int clampHead(const Result& r, int h) { return std::clamp(h, 0, std::max(0, r.heads() - 1)); }

HeatmapStyle weightsStyle(const AppState& s, const Result& r) {
  HeatmapStyle st;
  st.range = weightsRange(r);
  st.colormap = colormapFor(st.range, s.settings.colormap);
  return st;
}

void centeredText(ImVec2 size, const char* text) {
  const ImVec2 ts = ImGui::CalcTextSize(text);
  const ImVec2 c = ImGui::GetCursorPos();
  ImGui::SetCursorPos(ImVec2(c.x + std::max(0.0f, (size.x - ts.x) * 0.5f), c.y + std::max(0.0f, (size.y - ts.y) * 0.5f)));
  ImGui::TextDisabled("%s", text);
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
  header(s, r, "head " + std::to_string(s.view.head) + " of " + std::to_string(r.heads()));
  if (r.heads() > 1) {
    ImGui::SameLine();
    ImGui::SetCursorPosX(std::max(ImGui::GetCursorPosX() + ImGui::GetFontSize(), ImGui::GetWindowWidth() - ImGui::GetFontSize() * 16));
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12);
    ImGui::SliderInt("head##view", &s.view.head, 0, r.heads() - 1);
  }
  ImGui::Spacing();
  heatmap("main", weightsView(r, s.view.head), weightsStyle(s, r), s.view.main_zoom, gl, ImGui::GetContentRegionAvail());
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
    st.highlight = h == s.view.head;
    const float pad = ImGui::GetFontSize() * 0.5f;
    const ImVec2 size(cell_w - pad, cell_h - ImGui::GetTextLineHeightWithSpacing() - pad);
    if (heatmap("thumb", weightsView(r, h), st, s.view.heads_zoom, gl, size).clicked) {
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

void matrixExtra(AppState& s, const Extra& e, HeatmapRenderer& gl, ImVec2 size) {
  MatrixView v;
  v.data = e.value.data.data();
  v.rows = e.value.shape[0];
  v.cols = e.value.shape[1];
  v.row_axis = e.row_axis.empty() ? "row" : e.row_axis;
  v.col_axis = e.col_axis.empty() ? "column" : e.col_axis;
  v.value_label = e.label.empty() ? e.name : e.label;
  HeatmapStyle st;
  st.range = extraRange(e);
  st.colormap = colormapFor(st.range, s.settings.colormap);
  st.max_cell_aspect = 8.0f;
  heatmap(e.name.c_str(), v, st, s.view.extra_zoom[e.name], gl, size);
}

void weightsExtra(AppState& s, const Result& r, const Extra& e, HeatmapRenderer& gl, ImVec2 size) {
  // [H, Lq, Lk] next to the main weights of the focused head.
  if (e.value.rank() != 3) return;
  const int64_t hs = e.value.shape[0], lq = e.value.shape[1], lk = e.value.shape[2];
  const int h = static_cast<int>(std::min<int64_t>(clampHead(r, s.view.head), hs - 1));
  const ImVec2 half((size.x - ImGui::GetStyle().ItemSpacing.x) * 0.5f, size.y - ImGui::GetTextLineHeightWithSpacing());
  ImGui::BeginGroup();
  ImGui::TextDisabled("%s, head %d", r.weights_label.c_str(), h);
  heatmap("main", weightsView(r, h), weightsStyle(s, r), s.view.extra_zoom[e.name], gl, half);
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::TextDisabled("%s, head %d", (e.label.empty() ? e.name : e.label).c_str(), h);
  MatrixView v;
  v.data = e.value.data.data() + h * lq * lk;
  v.rows = lq;
  v.cols = lk;
  v.row_labels = &r.q_tokens;
  v.col_labels = &r.k_tokens;
  v.value_label = e.label.empty() ? e.name : e.label;
  HeatmapStyle st;
  st.range = extraRange(e);
  st.colormap = colormapFor(st.range, s.settings.colormap);
  heatmap("extra", v, st, s.view.extra_zoom[e.name], gl, half);
  ImGui::EndGroup();
}

void extrasView(AppState& s, const Result& r, HeatmapRenderer& gl) {
  header(s, r, "extras");
  std::vector<const Extra*> panels;
  std::string overlays;
  for (const Extra& e : r.extras) {
    if (e.kind == ExtraKind::Scalar && !e.value.data.empty()) {
      ImGui::SameLine();
      ImGui::Text("   %s = %s", (e.label.empty() ? e.name : e.label).c_str(), formatValueShort(e.value.data[0]).c_str());
    } else if (e.kind == ExtraKind::QueryPosition || e.kind == ExtraKind::QueryWindow) {
      overlays += (overlays.empty() ? "" : ", ") + (e.label.empty() ? e.name : e.label);
    } else {
      panels.push_back(&e);
    }
  }
  if (!overlays.empty()) ImGui::TextDisabled("drawn as overlays on the heatmap: %s", overlays.c_str());
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
    const float w = ImGui::GetContentRegionAvail().x;
    ImGui::TextUnformatted((e->label.empty() ? e->name : e->label).c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("%s  %s", e->name.c_str(), e->value.shapeString().c_str());
    const ImVec2 size(w, panel_h - ImGui::GetTextLineHeightWithSpacing() * 2);
    if (e->kind == ExtraKind::Matrix && e->value.rank() == 2) {
      matrixExtra(s, *e, gl, size);
    } else if (e->kind == ExtraKind::Weights) {
      weightsExtra(s, r, *e, gl, size);
    } else if (e->kind == ExtraKind::TokenValues) {
      const ValueRange range = extraRange(*e);
      const std::vector<std::string>* labels = e->value.size() == r.queries() ? &r.q_tokens : nullptr;
      valueBars("bars", e->value, labels, range, colormapFor(range, s.settings.colormap), e->label, size);
    } else {
      ImGui::TextDisabled("(no view for shape %s)", e->value.shapeString().c_str());
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
  previousResultMarker(s);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float font = ImGui::GetFontSize();
  const GridLayout g = bestGrid(static_cast<int>(out.family.size()), avail.x, avail.y, font * 12, font * 6);
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
    ImGui::TextUnformatted(v ? v->title.c_str() : m.variant.c_str());
    if (selected) ImGui::PopStyleColor();
    const ImVec2 size(cell.x - ImGui::GetFontSize(), cell.y - ImGui::GetTextLineHeightWithSpacing() - ImGui::GetFontSize() * 0.5f);
    if (!m.result || m.result->heads() == 0) {
      ImGui::PushTextWrapPos(p.x + size.x);
      ImGui::TextColored(ImVec4(0.95f, 0.35f, 0.3f, 1.0f), "%s", m.error.empty() ? "no weights" : m.error.c_str());
      ImGui::PopTextWrapPos();
    } else {
      const Result& r = *m.result;
      HeatmapStyle st = weightsStyle(s, r);
      st.highlight = selected;
      st.labels = size.y > ImGui::GetFontSize() * 14;
      if (heatmap("member", weightsView(r, clampHead(r, s.view.head)), st, s.view.family_zoom, gl, size).clicked && v)
        selectVariant(s, *v);
    }
    ImGui::EndGroup();
    ImGui::PopID();
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(avail);
}

}  // namespace

// [SECTION] drawMainView

void drawMainView(AppState& s, HeatmapRenderer& gl, ImVec2 pos, ImVec2 size) {
  ImGui::SetNextWindowPos(pos);
  ImGui::SetNextWindowSize(size);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                 ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar |
                                 ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoBringToFrontOnFocus;
  ImGui::Begin("##view", nullptr, flags);
  if (!s.output || !s.output->result) {
    centeredText(ImGui::GetContentRegionAvail(), s.status_is_error ? s.status.c_str() : "computing…");
  } else {
    const Result& r = *s.output->result;
    switch (s.view.view) {
      case ViewKind::Heatmap:
        if (r.heads() > 0) heatmapView(s, r, gl);
        break;
      case ViewKind::Heads:
        if (r.heads() > 0) headsView(s, r, gl);
        break;
      case ViewKind::Lines:
        if (r.heads() > 0) linesView(s, r);
        break;
      case ViewKind::Extras: extrasView(s, r, gl); break;
      case ViewKind::Family: familyView(s, r, gl); break;
    }
  }
  ImGui::End();
}

}  // namespace attn
