// The model workspace of the window, whatever the model's kind: the left
// panel (the workspace switch, MODEL, the kind's sections, DISPLAY's view
// bar from the registry and the kind's controls) and the view area, which
// hands the view to the kind's screen (gui_kinds.h), or replays a body
// view's layout. The kinds' own parts: gui_text.cpp, gui_seq2seq.cpp,
// gui_vision.cpp.
// Index
//   [SECTION] Shared pieces
//   [SECTION] Control panel
//   [SECTION] Model view
//   [SECTION] drawModelView
#include "app/gui/gui_model.h"

#include "app/gui/gui_kinds.h"
#include "app/gui/gui_panels.h"
#include "engine/error.h"
#include "widgets/head_table.h"
#include "widgets/primitives_imgui.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

namespace attn {

// [SECTION] Shared pieces

// "83.9%  'And'" over a bar `share` (0..1) of `width` long: a next-token
// prediction, or a key a query attends to.
void shareRow(float share, const std::string& what, float width) {
  // Two significant digits below 1 %: over thousands of keys a head's
  // largest weights are hundredths of a percent, not "0.0%".
  char pct[16];
  const double p = 100.0 * share;
  std::snprintf(pct, sizeof pct,
                p >= 1.0 || p == 0.0 ? "%5.1f%%" : p >= 0.1 ? "%5.2f%%" : p >= 0.01 ? "%5.3f%%" : "%.1e%%", p);
  const ImVec2 a = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  const ImVec4 acc = ImGui::GetStyle().Colors[ImGuiCol_PlotHistogram];
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(a, ImVec2(a.x + width, a.y + h), ImGui::GetColorU32(ImVec4(acc.x, acc.y, acc.z, 0.07f)), 2.0f);  // 100 %
  dl->AddRectFilled(a, ImVec2(a.x + width * std::clamp(share, 0.0f, 1.0f), a.y + h),
                    ImGui::GetColorU32(ImVec4(acc.x, acc.y, acc.z, 0.35f)), 2.0f);
  ImGui::Text("%s  %s", pct, what.c_str());
}

void workspaceSwitch(AppState& s) {
  const struct {
    const char* label;
    Workspace w;
    const char* help;
  } items[] = {{"Variants", Workspace::Variants, "the attention variants of the registry on your input"},
               {"Real model", Workspace::Model, "a trained GPT-2 / BERT checkpoint: every layer and head, live text"}};
  for (int i = 0; i < 2; ++i) {
    if (i) ImGui::SameLine();
    const bool on = s.workspace == items[i].w;
    if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyle().Colors[ImGuiCol_ButtonActive]);
    if (ImGui::Button(items[i].label)) s.workspace = items[i].w;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", items[i].help);
    if (on) ImGui::PopStyleColor();
  }
}

// [SECTION] Control panel

namespace {

void modelSection(AppState& s) {
  ModelState& m = s.model;
  if (m.scene.model) {
    const ModelInfo& info = modelInfo(*m.scene.model);
    const ModelConfig& c = info.config;
    ImGui::TextUnformatted(modelShortName(*m.scene.model).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", info.label.c_str());
    ImGui::TextDisabled("%s \xC2\xB7 %s \xC2\xB7 d %lld \xC2\xB7 vocab %lld", info.config.arch_name.c_str(),
                        layersByHeads(c.layers, c.heads).c_str(),
                        static_cast<long long>(c.d_model), static_cast<long long>(c.vocab));
  } else if (const AttentionSource* src = m.scene.source.get()) {
    ImGui::TextUnformatted(src->name.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", src->inputs.path.c_str());
    ImGui::TextDisabled("attention from a file \xC2\xB7 %s", layersByHeads(src->analysis->run.layers, src->analysis->run.heads).c_str());
  } else {
    // A load that failed leaves no model (its reason is in the status bar); otherwise one is on its way.
    ImGui::TextDisabled(s.status_is_error ? "no model: open one" : "loading the model\xE2\x80\xA6");
  }
  if (ImGui::Button("Open Model\xE2\x80\xA6")) s.request.kind = Request::Kind::OpenModel;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("a Hugging Face folder, a .safetensors file or a GGUF model (.gguf) (Ctrl+O)");
  ImGui::SameLine();
  ImGui::BeginDisabled(!m.scene.model);
  if (ImGui::Button("Info\xE2\x80\xA6")) s.request.kind = Request::Kind::ModelInfo;
  ImGui::EndDisabled();
}

// The view bar (the kind's views, keys 1, 2, …), the kind's controls, the colours.
void displaySection(AppState& s, const ModelKindInfo& kind) {
  ModelViewState& v = s.model.view;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  const std::vector<ModelKindView>& all = kind.views;
  for (size_t i = 0; i < all.size(); ++i) {
    const int digit = modelViewDigit(i);
    const std::string label = (digit < 0 ? "" : std::to_string(digit) + " ") + all[i].name;
    const float w = ImGui::CalcTextSize(label.c_str()).x + ImGui::GetStyle().FramePadding.x * 2;
    if (i && ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w < right) ImGui::SameLine();
    const bool on = v.view == all[i].name;
    if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyle().Colors[ImGuiCol_ButtonActive]);
    if (ImGui::Button(label.c_str())) v.view = all[i].name;
    if (ImGui::IsItemHovered()) {
      if (digit < 0) ImGui::SetTooltip("%s", all[i].help.c_str());
      else ImGui::SetTooltip("%s (key %d)", all[i].help.c_str(), digit);
    }
    if (on) ImGui::PopStyleColor();
  }
  guiModelKind(kind).controls(s);
  colourControls(s);
}

}  // namespace

void drawModelPanel(AppState& s, ImVec2 pos, ImVec2 size) {
  beginFixedWindow("##modelcontrols", pos, size, true);
  ImGui::PushItemWidth(-ImGui::GetFontSize() * 5.5f);
  workspaceSwitch(s);
  sectionTitle("MODEL");
  modelSection(s);
  const ModelKindInfo& kind = modelKindOf(s.model.scene);
  const GuiModelKind& gui = guiModelKind(kind);
  gui.sections(s);
  sectionTitle("DISPLAY");
  displaySection(s, kind);
  if (gui.below) gui.below(s);
  ImGui::PopItemWidth();
  ImGui::End();
}

// [SECTION] Model view

void modelHeader(const AppState& s, const std::string& what) {
  const ModelState& m = s.model;
  ImGui::TextUnformatted(m.output ? outputName(*m.output).c_str() : "model");
  // The description on the same line while it fits, else wrapped under it: never past the window's edge.
  const std::string rest = "\xE2\x80\x94 " + what;
  ImGui::SameLine();
  if (ImGui::CalcTextSize(rest.c_str()).x > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(rest.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
  if (!m.output_current) {
    ImGui::SameLine();
    ImGui::TextDisabled("(previous result)");
  }
}

// The focused head's row of the head table, one number per line with its
// column's name, in `width` (under the grid of the model view).
void focusedHeadNumbers(const std::vector<HeadSummary>& summaries, int layer, int head, float width,
                        const std::vector<int>& shown) {
  const std::vector<std::string> columns = headTableColumnNames(shown);
  for (const HeadSummary& summary : summaries) {
    if (summary.layer != layer || summary.head != head) continue;
    const std::vector<std::string> row = headTableRows({summary}, shown)[0];  // this head's row only
    ImGui::TextDisabled("FOCUSED HEAD");
    if (ImGui::BeginTable("##focused", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp, ImVec2(width, 0))) {
      for (size_t c = 0; c < columns.size(); ++c) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", columns[c].c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(row[c].c_str());
      }
      ImGui::EndTable();
    }
    return;
  }
}

void strongestKeys(const std::string& title, const Mat& map, int64_t query, const std::function<std::string(int64_t)>& name,
                   float width, float height) {
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const int rows = static_cast<int>(height / line) - 2;
  if (rows < 1 || query < 0 || query >= map.rows()) return;
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);  // a long title wraps inside the column
  ImGui::TextDisabled("%s", title.c_str());
  ImGui::PopTextWrapPos();
  const auto w = map.row(query);
  std::vector<int64_t> keys(static_cast<size_t>(w.size()));
  for (int64_t j = 0; j < w.size(); ++j) keys[static_cast<size_t>(j)] = j;
  const size_t shown = std::min(keys.size(), static_cast<size_t>(rows));
  std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(shown), keys.end(),
                    [&](int64_t a, int64_t b) { return w(a) > w(b); });
  for (size_t i = 0; i < shown; ++i) shareRow(w(keys[i]), name(keys[i]), width);
}

namespace {
// A view with no screen of its own: its figure's layout in the rest of the window.
void bodyView(AppState& s, const ModelKindView& view, const ModelOutput& o, HeatmapRenderer& gl) {
  ViewParams colours;  // the colours an export of the view takes
  colours.colormap = s.settings.colormap;
  colours.scale = s.scale;
  ModelViewBody body;
  try {
    body = view.body(o, modelSelection(s.model.view, o), colours);
  } catch (const InputError& e) {
    centeredText(ImGui::GetContentRegionAvail(), e.what());
    return;
  }
  modelHeader(s, body.hint);
  const ImVec2 avail = ImGui::GetContentRegionAvail(), origin = ImGui::GetCursorScreenPos();
  Primitives prims;
  body.layout(prims, imguiCanvas(), {origin.x, origin.y, avail.x, avail.y});
  drawPrimitives(ImGui::GetWindowDrawList(), prims, &gl);
  ImGui::Dummy(avail);
}

}  // namespace

// The window's side of each kind, one line each (a kind's entry is in its own file).
#define ATTN_GUI_MODEL_KINDS(X) \
  X(kGuiTextKind)               \
  X(kGuiSeq2SeqKind)            \
  X(kGuiVisionKind)             \
  X(kGuiAttentionKind)

#define ATTN_DECLARE_GUI_MODEL_KIND(entry) extern const GuiModelKind entry;
ATTN_GUI_MODEL_KINDS(ATTN_DECLARE_GUI_MODEL_KIND)

const std::vector<const GuiModelKind*>& guiModelKinds() {
#define ATTN_GUI_MODEL_KIND_ADDRESS(entry) &entry,
  static const std::vector<const GuiModelKind*> kinds = {ATTN_GUI_MODEL_KINDS(ATTN_GUI_MODEL_KIND_ADDRESS)};
  return kinds;
}

const GuiModelKind& guiModelKind(const ModelKindInfo& k) {
  for (const GuiModelKind* g : guiModelKinds())
    if (g->kind == k.name) return *g;
  throw std::logic_error("guiModelKind: no window side for the model kind '" + k.name + "'");
}

ModelFigureSelection modelSelection(const ModelViewState& v, const ModelOutput& o) {
  ModelFigureSelection f;
  f.layer = v.layer;
  f.head = v.head;
  f.query = v.query;
  f.key = v.key;
  if (const GuiModelKind& gui = guiModelKind(modelKindOf(o)); gui.select) gui.select(v, f);
  return f;
}

// [SECTION] drawModelView

void drawModelView(AppState& s, HeatmapRenderer& gl, ImVec2 pos, ImVec2 size) {
  beginFixedWindow("##modelview", pos, size, false);
  const ModelOutput* o = s.model.output.get();
  if (o && !o->error.empty()) {
    centeredText(ImGui::GetContentRegionAvail(), o->error.c_str());
  } else if (!o || !hasModelRun(*o)) {
    const char* msg = o && o->too_long_tokens > 0 ? o->too_long_message.c_str()
                      : s.status_is_error         ? s.status.c_str()
                                                  : "loading and running the model\xE2\x80\xA6";
    centeredText(ImGui::GetContentRegionAvail(), msg);
  } else {
    const ModelKindInfo& kind = modelKindOf(*o);
    const GuiModelKind& gui = guiModelKind(kind);
    // The view a model of this kind shows (after another kind's was open).
    if (!findModelView(kind, s.model.view.view)) s.model.view.view = kind.views.front().name;
    if (gui.prepare(s, *o)) {
      const auto screen = std::find_if(gui.screens.begin(), gui.screens.end(),
                                       [&](const ModelScreen& m) { return m.view == s.model.view.view; });
      if (screen != gui.screens.end()) screen->draw(s, *o, gl);
      else bodyView(s, *findModelView(kind, s.model.view.view), *o, gl);
    }
  }
  ImGui::End();
}

}  // namespace attn
