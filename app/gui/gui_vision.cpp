// The model workspace on a Vision Transformer: the picture in the panel
// (the model's shipped examples or a file), and the views — one token's
// attention over the picture per head and averaged (click a patch or the
// [CLS] chip to pick the token), the grid of every head, the rollout from
// [CLS] after each layer, and the heads' attention distance against layer.
#include "app/gui/gui_kinds.h"

#include "app/gui/gui_lesson.h"
#include "app/gui/gui_panels.h"
#include "app/model/embedded_model.h"
#include "widgets/head_grid.h"
#include "widgets/primitives_imgui.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace attn {

namespace {

// A ViT's own view state: the token whose attention the picture view shows (0 [CLS], 1 + p patch p).
struct VisionViewState {
  int64_t token = 0;
};

// A PatchMaps layout in the rest of the window; a click picks the token under it.
void patchMapsArea(AppState& s, const PatchMaps& maps, HeatmapRenderer& gl, bool clickable) {
  const ImVec2 avail = ImGui::GetContentRegionAvail(), origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##patchmaps", ImVec2(std::max(1.0f, avail.x), std::max(1.0f, avail.y)));
  const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
  Primitives prims;
  const PatchMapsLayout g = patchMapsPrimitives(prims, imguiCanvas(), {origin.x, origin.y, avail.x, avail.y}, maps);
  drawPrimitives(ImGui::GetWindowDrawList(), prims, &gl);
  if (s.describe) {  // each picture's box, under its title: the input's first where it is shown
    nlohmann::json panels = nlohmann::json::array();
    const size_t first = maps.picture_title.empty() ? 0 : 1;
    for (size_t i = 0; i < g.pictures.size(); ++i) {
      const Box& b = g.pictures[i];
      panels.push_back({{"kind", "picture"},
                        {"title", i < first ? maps.picture_title : maps.maps[i - first].title},
                        {"grid", {maps.grid_h, maps.grid_w}},
                        {"area", {b.x, b.y, b.w, b.h}}});
    }
    s.described["panels"] = panels;
  }
  if (!hovered || !s.model.output || !s.model.output->vision) return;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const int64_t token = g.tokenAt(mouse.x, mouse.y);
  if (token < 0) return;
  ImGui::SetTooltip("%s%s", patchTokenName(*s.model.output->vision, token).c_str(), clickable ? "\nclick: show its attention" : "");
  if (clickable && clicked) kindView<VisionViewState>(s.model.view).token = token;
}

void pictureView(AppState& s, const VisionAnalysis& a, HeatmapRenderer& gl) {
  ModelViewState& v = s.model.view;
  const int64_t token = kindView<VisionViewState>(v).token;
  modelHeader(s, "layer " + std::to_string(v.layer) + ": the attention of " + patchTokenName(a, token) + " over the " +
                     std::to_string(a.shown.shape[1]) + " \xC3\x97 " + std::to_string(a.shown.shape[0]) + " input in " +
                     std::to_string(a.patch_size) + "-pixel patches, the heads' mean and each head, with the patches each weighs most (row, column) where "
                     "there is room; click a patch or a [CLS] chip to pick the token");
  patchMapsArea(s, headsOverPicture(a, v.layer, token), gl, true);
}

void rolloutView(AppState& s, const VisionAnalysis& a, HeatmapRenderer& gl) {
  modelHeader(s, "attention rollout (Abnar & Zuidema) from [CLS] over the " + std::to_string(a.run.grid_h) + " \xC3\x97 " +
                     std::to_string(a.run.grid_w) + " patches, each layer's mean of heads and the rollout to it: "
                     "\xC2\xBD mean of heads + \xC2\xBD identity, multiplied layer by layer");
  patchMapsArea(s, rolloutOverPicture(a), gl, false);
}

void distanceView(AppState& s, const VisionAnalysis& a) {
  char uniform[96];
  std::snprintf(uniform, sizeof uniform, "; attending to every patch alike scores %.1f px", a.uniform_distance);
  modelHeader(s, "each head's mean attention distance in pixels against its layer (Dosovitskiy et al. 2021, Figure 7): "
                 "the ViT's receptive field, from the maps" + std::string(uniform));
  const ImVec2 avail = ImGui::GetContentRegionAvail(), origin = ImGui::GetCursorScreenPos();
  const Scatter sc = distanceScatter(a);
  Primitives prims;
  const ScatterLayout g = scatterPrimitives(prims, imguiCanvas(), {origin.x, origin.y, avail.x, avail.y}, sc);
  drawPrimitives(ImGui::GetWindowDrawList(), prims);
  if (s.describe)  // the plot's frame
    s.described["panels"] = {{{"kind", "points"}, {"title", sc.y_axis + " against " + sc.x_axis}, {"area", {g.plot.x, g.plot.y, g.plot.w, g.plot.h}}}};
  ImGui::Dummy(avail);
}

void gridView(AppState& s, const VisionAnalysis& a, HeatmapRenderer& gl) {
  ModelViewState& v = s.model.view;
  const int64_t token = kindView<VisionViewState>(v).token;
  const VisionRun& r = a.run;
  modelHeader(s, layersByHeads(r.layers, r.heads) + " over [CLS] and the patches; click a thumbnail to focus it (right: " + headLabel(v.layer, v.head) + ")");
  const ImVec2 avail = ImGui::GetContentRegionAvail(), origin = ImGui::GetCursorScreenPos();
  const float font = ImGui::GetFontSize(), gap = font * 1.5f;
  const float layers = static_cast<float>(r.layers), heads = static_cast<float>(r.heads);
  const float grid_w = std::min(avail.x * 0.4f, (avail.y * 0.8f - font * 2) * heads / layers + font * 3);
  const float grid_h = std::min(avail.y * 0.8f, (grid_w - font * 3) * layers / heads + font * 2);
  // One scale for every map up to the largest weight, as the figure's (visionGridScale: weights near
  // 1/(1 + P) are not drawn flat).
  const float top = std::max(1e-6f, a.max_weight);
  const Mat& focus = r.attention[static_cast<size_t>(v.layer)][static_cast<size_t>(v.head)];
  MatrixStyle st;
  st.range = withScale({0.0f, top, false}, visionGridScale(s.scale), focus.cols(), focus.data(), focus.size());
  st.colormap = s.settings.colormap;
  const HeadPick pick = headGrid("vit_grid", r.attention, nullptr, st, v.layer, v.head, v.grid_zoom, gl, ImVec2(grid_w, grid_h));
  if (pick.layer >= 0) {
    v.layer = pick.layer;
    v.head = pick.head;
  }
  // Under the grid: the tokens the chosen token reads most in the focused head.
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + grid_h + font));
  strongestKeys("TOKEN " + std::to_string(token) + ", " + patchTokenName(a, token) + ", READS MOST", r.attention[static_cast<size_t>(v.layer)][static_cast<size_t>(v.head)],
                token, [&a](int64_t k) { return patchTokenName(a, k); }, grid_w,
                origin.y + avail.y - ImGui::GetCursorScreenPos().y);
  ImGui::SetCursorScreenPos(ImVec2(origin.x + grid_w + gap, origin.y));
  ImGui::BeginGroup();
  ImGui::Text("layer %d, head %d: token 0 is [CLS], 1 + p patch p", v.layer, v.head);
  MatrixSpec m = MatrixSpec::of(r.attention[static_cast<size_t>(v.layer)][static_cast<size_t>(v.head)]);
  m.row_axis = "query token";
  m.col_axis = "key token";
  st.max_cell_aspect = 1.6f;
  offerAnchor(s, heatmap("vit_focus", m, st, v.focus_zoom, gl, ImVec2(avail.x - grid_w - gap, avail.y - ImGui::GetTextLineHeightWithSpacing())).placed);
  ImGui::EndGroup();
}

// PICTURE: the examples, Open Picture…, the predicted labels
void pictureSection(AppState& s) {
  ModelState& m = s.model;
  sectionTitle("PICTURE");
  const std::vector<std::string> examples = modelExamplePictures(m.path);
  VisionInputs& in = m.scene.inputs.vision;
  const std::string shown = in.picture.empty() ? "(none)" : std::filesystem::path(in.picture).filename().string();
  if (!examples.empty() && ImGui::BeginCombo("example", in.example ? shown.c_str() : "(a file)")) {
    for (const std::string& e : examples) {
      const bool on = in.example && in.picture == e;
      if (ImGui::Selectable(std::filesystem::path(e).filename().string().c_str(), on) && !on) in = {e, true};
    }
    ImGui::EndCombo();
  }
  if (ImGui::Button("Open Picture\xE2\x80\xA6")) s.request.kind = Request::Kind::OpenPicture;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("a PNG or JPEG, resized and normalised as the model's preprocessor_config.json says (Ctrl+I)");
  if (!in.example && !in.picture.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", shown.c_str());
  }
  const ModelOutput* o = m.output.get();
  if (!o || !o->vision || o->vision->run.top_k.empty()) return;
  sectionTitle("PREDICTED");
  const float w = ImGui::GetContentRegionAvail().x;
  for (const Prediction& p : o->vision->run.top_k) shareRow(p.probability, "'" + p.token + "'", w);
}

// The layer, the head (grid), the token whose attention is shown.
void visionDisplayControls(AppState& s) {
  ModelViewState& v = s.model.view;
  int64_t& token = kindView<VisionViewState>(v).token;
  const VisionAnalysis* a = s.model.output ? s.model.output->vision.get() : nullptr;
  if (!a) return;
  const VisionRun& r = a->run;
  ImGui::SliderInt("layer", &v.layer, 0, static_cast<int>(r.layers) - 1);
  ImGui::SliderInt("head", &v.head, 0, static_cast<int>(r.heads) - 1);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the head the model view focuses");
  int chosen = static_cast<int>(token);
  if (ImGui::SliderInt("token", &chosen, 0, static_cast<int>(r.grid_h * r.grid_w))) token = chosen;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the token whose attention the picture view shows: 0 is [CLS], 1 + p patch p");
  ImGui::TextDisabled("%s", patchTokenName(*a, token).c_str());
}

bool visionPrepare(AppState& s, const ModelOutput& o) {
  ModelViewState& v = s.model.view;
  int64_t& token = kindView<VisionViewState>(v).token;
  const VisionAnalysis& a = *o.vision;
  v.layer = std::clamp<int>(v.layer, 0, static_cast<int>(a.run.layers) - 1);
  v.head = std::clamp<int>(v.head, 0, static_cast<int>(a.run.heads) - 1);
  token = std::clamp<int64_t>(token, 0, a.run.grid_h * a.run.grid_w);
  return true;
}

}  // namespace

extern const GuiModelKind kGuiVisionKind = {
    "vision",
    pictureSection,
    visionDisplayControls,
    nullptr,
    visionPrepare,
    {
        {"picture", [](AppState& s, const ModelOutput& o, HeatmapRenderer& gl) { pictureView(s, *o.vision, gl); }},
        {"model", [](AppState& s, const ModelOutput& o, HeatmapRenderer& gl) { gridView(s, *o.vision, gl); }},
        {"rollout", [](AppState& s, const ModelOutput& o, HeatmapRenderer& gl) { rolloutView(s, *o.vision, gl); }},
        {"distance", [](AppState& s, const ModelOutput& o, HeatmapRenderer&) { distanceView(s, *o.vision); }},
    },
    // A figure's query of a ViT's picture view is its token.
    [](const ModelViewState& v, ModelFigureSelection& f) { f.query = kindView<VisionViewState>(v).token; },
    // --query picks the token (none: [CLS]).
    [](ModelViewState& v) { kindView<VisionViewState>(v).token = v.query >= 0 ? v.query : 0; },
    nullptr,
};

}  // namespace attn
