// Index
//   [SECTION] Commands shared by menus and shortcuts
//   [SECTION] Menu bar
//   [SECTION] Control panel: variant, parameters, input, display, settings
//   [SECTION] Status bar and help overlay
#include "app/gui/gui_panels.h"

#include "app/gui/gui_generate.h"
#include "app/gui/gui_lesson.h"
#include "app/gui/gui_kinds.h"
#include "app/gui/gui_model.h"
#include "app/gui/gui_timeline.h"
#include "app/export/model_kinds.h"
#include "engine/error.h"
#include "engine/model/kinds/vision.h"
#include "widgets/formula_view.h"
#include "widgets/value_range.h"

#include <GLFW/glfw3.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>
#include <functional>

namespace attn {

// [SECTION] Commands shared by menus and shortcuts

void centeredText(ImVec2 size, const char* text) {
  // Wrapped at 80 % of the area's width, so a long message stays whole.
  const float wrap = std::max(1.0f, size.x * 0.8f);
  const ImVec2 ts = ImGui::CalcTextSize(text, nullptr, false, wrap);
  const ImVec2 c = ImGui::GetCursorPos();
  ImGui::SetCursorPos(ImVec2(c.x + std::max(0.0f, (size.x - ts.x) * 0.5f), c.y + std::max(0.0f, (size.y - ts.y) * 0.5f)));
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap);
  ImGui::TextDisabled("%s", text);
  ImGui::PopTextWrapPos();
}

void sectionTitle(const char* text) {
  ImGui::Spacing();
  ImGui::TextDisabled("%s", text);
  ImGui::Separator();
}

namespace {

// The views offered are the ones the scene's variant lists (VariantInfo::views).
bool hasView(const AppState& s, const ViewInfo* v) {
  const VariantInfo* info = findVariant(s.scene.variant);
  return !info || std::find(info->views.begin(), info->views.end(), v->name) != info->views.end();
}

void setView(AppState& s, const ViewInfo* v) {
  if (hasView(s, v)) s.view.view = v;
}

// After the variant changed: keep the view if the new variant has it, else its first.
void fitViewToVariant(AppState& s) {
  const VariantInfo* info = findVariant(s.scene.variant);
  if (info && !info->views.empty() && !hasView(s, s.view.view)) s.view.view = &viewOrThrow(info->views.front());
}

}  // namespace

void undoScene(AppState& s) {
  if (s.undo.undo(s.scene)) s.committed = s.scene;
  fitViewToVariant(s);
}

void redoScene(AppState& s) {
  if (s.undo.redo(s.scene)) s.committed = s.scene;
  fitViewToVariant(s);
}

void selectVariant(AppState& s, const VariantInfo& v) {
  if (v.name == s.scene.variant) return;
  s.scene.params = carryParams(s.scene.params, v);
  s.scene.variant = v.name;
  fitViewToVariant(s);
}

namespace {

struct Shortcut {
  const char* keys;
  const char* what;
};
const Shortcut kShortcuts[] = {
    {"Arrow keys", "move the selected query pixel (image view, no lesson open)"},
    {"Ctrl+G", "real model: generate new tokens from the text"},
    {"W", "text model: value-weighted maps (\xCE\xB1 \xE2\x80\x96v W_O\xE2\x80\x96, Kobayashi et al. 2020) on and off"},
    {"\u2190 \u2192 / , . / K", "real model, after Generate: step back / forward through the new tokens, play or pause"},
    {"\u2190 \u2192 / \u2191 \u2193 / H / S",
     "real model, text view: previous / next query token, layer up / down, next head, shade by the head, the layer's mean or rollout"},
    {"B", "real model: the compare view, run A against run B (a second prompt or checkpoint, typed under RUN B)"},
    {"\u2192 / Space / PageDown", "lesson: next step"},
    {"\u2190 / PageUp", "lesson: previous step"},
    {"F5", "presentation mode: no panel or menus, larger text (Esc leaves)"},
    {", / . / K", "timeline: step back / step forward / play or pause (stages, steps, segments, rounds)"},
    {"L / P", "presentation mode: laser dot / pen (the pen clears at the next step)"},
    {"Ctrl+Z / Ctrl+Y", "undo / redo a parameter or input change"},
    {"Ctrl+E", "export the current view (PNG, SVG, PDF)"},
    {"Ctrl+Shift+E", "export a page of every head of the model (HTML, offline, to share)"},
    {"Ctrl+O", "open a model (real model) or an X .npy input (variants)"},
    {"Ctrl+I", "open a picture for a vision model (real model)"},
    {"Mouse wheel", "zoom the heatmap about the cursor"},
    {"Drag", "pan the heatmap"},
    {"Double click / Home", "reset zoom"},
    {"Click a thumbnail", "focus that head (heads view)"},
    {"Tab", "hide or show the side panel (the view takes the window)"},
    {"F1", "this help"},
};

}  // namespace

namespace {

// Arrow keys step the image view's query pixel: ±1 along a row, ±width across rows.
void moveImageQuery(AppState& s, const Result& r, int key) {
  const int64_t w = std::max<int64_t>(1, r.image_width), n = r.queries();
  int64_t& q = s.view.params.query;
  if (q < 0) return;  // not drawn yet: the view picks the centre first
  if (key == GLFW_KEY_LEFT) q -= 1;
  if (key == GLFW_KEY_RIGHT) q += 1;
  if (key == GLFW_KEY_UP && q >= w) q -= w;
  if (key == GLFW_KEY_DOWN && q + w < n) q += w;
  q = std::clamp<int64_t>(q, 0, std::max<int64_t>(0, n - 1));
}

}  // namespace

void handleShortcuts(AppState& s, const std::vector<KeyPress>& presses) {
  const ImGuiIO& io = ImGui::GetIO();
  const std::vector<const ViewInfo*>& views = viewRegistry();
  for (const KeyPress& k : presses) {
    if (k.key == GLFW_KEY_F1) s.show_help = !s.show_help;
    if (lessonKey(s, k.key, k.ctrl || io.WantTextInput)) continue;
    const bool model = s.workspace == Workspace::Model;
    if (k.ctrl) {
      if (k.key == GLFW_KEY_E) s.request.kind = k.shift ? Request::Kind::ExportPage : Request::Kind::Export;
      if (k.key == GLFW_KEY_O) s.request.kind = model ? Request::Kind::OpenModel : Request::Kind::OpenX;
      if (k.key == GLFW_KEY_I && model && s.model.scene.model && isVisionModel(*s.model.scene.model))
        s.request.kind = Request::Kind::OpenPicture;
      if (k.key == GLFW_KEY_G && model) requestGeneration(s.model);
      // Text fields have their own undo while they are being edited.
      if (k.key == GLFW_KEY_Z && !io.WantTextInput) undoScene(s);
      if (k.key == GLFW_KEY_Y && !io.WantTextInput) redoScene(s);
      continue;
    }
    if (io.WantTextInput) continue;
    if (k.key == GLFW_KEY_TAB) s.show_panel = !s.show_panel;
    if (model) {
      const std::vector<ModelKindView>& mv = modelKindOf(s.model.scene).views;
      for (size_t i = 0; i < mv.size(); ++i)
        if (modelViewDigit(i) >= 0 && k.key == GLFW_KEY_0 + modelViewDigit(i)) s.model.view.view = mv[i].name;
      generationKey(s, k.key);
      if (const GuiModelKind& kind = guiModelKind(modelKindOf(s.model.scene)); kind.key) kind.key(s, k.key);
      if (k.key == GLFW_KEY_ESCAPE) s.show_help = false;
      continue;
    }
    // Keys follow the view registry's order; setView ignores views the variant lacks.
    if (k.key >= GLFW_KEY_1 && k.key < GLFW_KEY_1 + static_cast<int>(std::min<size_t>(views.size(), 9)))
      setView(s, views[static_cast<size_t>(k.key - GLFW_KEY_1)]);
    if (k.key == GLFW_KEY_HOME) s.view.resetZoom();
    if (s.output && s.output->result && (k.key == GLFW_KEY_COMMA || k.key == GLFW_KEY_PERIOD || k.key == GLFW_KEY_K))
      timelineKey(s, *s.output->result, k.key);
    if (s.view.view->query && s.output && s.output->result) moveImageQuery(s, *s.output->result, k.key);
    if (k.key == GLFW_KEY_ESCAPE) s.show_help = false;
  }
}

// [SECTION] Menu bar

float drawMenuBar(AppState& s) {
  float h = 0;
  if (!ImGui::BeginMainMenuBar()) return h;
  const bool model = s.workspace == Workspace::Model;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open Model…", model ? "Ctrl+O" : nullptr)) {
      s.workspace = Workspace::Model;
      s.request.kind = Request::Kind::OpenModel;
    }
    if (ImGui::BeginMenu("Recent models", !s.settings.recent_models.empty())) {
      for (const std::string& path : s.settings.recent_models)
        if (ImGui::MenuItem(path.c_str())) {
          s.workspace = Workspace::Model;
          s.request = {Request::Kind::OpenRecentModel, path};
        }
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Model info…", nullptr, false, s.model.scene.model != nullptr)) s.request.kind = Request::Kind::ModelInfo;
    const bool vision = s.model.scene.model && isVisionModel(*s.model.scene.model);
    if (ImGui::MenuItem("Open Picture…", "Ctrl+I", false, vision)) {
      s.workspace = Workspace::Model;
      s.request.kind = Request::Kind::OpenPicture;
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Open X .npy…", model ? nullptr : "Ctrl+O")) {
      s.workspace = Workspace::Variants;
      s.request.kind = Request::Kind::OpenX;
    }
    if (ImGui::MenuItem("Open Q, K, V .npy…")) s.request.kind = Request::Kind::OpenQkv;
    if (ImGui::MenuItem("Export view…", "Ctrl+E")) s.request.kind = Request::Kind::Export;
    if (ImGui::MenuItem("Export page of every head (HTML)…", "Ctrl+Shift+E", false, model))
      s.request.kind = Request::Kind::ExportPage;
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("One offline web page of the model's heads to share: hover, zoom, pick heads, sort the table");
    ImGui::Separator();
    if (ImGui::MenuItem("Quit")) s.quit = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Edit")) {
    if (ImGui::MenuItem("Undo", "Ctrl+Z", false, s.undo.canUndo())) undoScene(s);
    if (ImGui::MenuItem("Redo", "Ctrl+Y", false, s.undo.canRedo())) redoScene(s);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    if (ImGui::MenuItem("Real model workspace", nullptr, model)) s.workspace = Workspace::Model;
    if (ImGui::MenuItem("Variants workspace", nullptr, !model)) s.workspace = Workspace::Variants;
    ImGui::Separator();
    int i = 1;
    if (model) {
      for (const ModelKindView& v : modelKindOf(s.model.scene).views) {
        const std::string shortcut = std::to_string(i++);
        if (ImGui::MenuItem(v.name.c_str(), shortcut.c_str(), s.model.view.view == v.name)) s.model.view.view = v.name;
      }
    } else {
      for (const ViewInfo* v : viewRegistry()) {
        const std::string shortcut = std::to_string(i++);
        if (ImGui::MenuItem(v->name.c_str(), shortcut.c_str(), s.view.view == v, hasView(s, v))) setView(s, v);
      }
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Side panel", "Tab", s.show_panel)) s.show_panel = !s.show_panel;
    if (ImGui::MenuItem("Reset zoom", "Home")) s.view.resetZoom();
    ImGui::EndMenu();
  }
  lessonMenu(s);
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Keyboard shortcuts", "F1", s.show_help)) s.show_help = !s.show_help;
    ImGui::EndMenu();
  }
  h = ImGui::GetWindowSize().y;
  ImGui::EndMainMenuBar();
  return h;
}

// [SECTION] Control panel

namespace {

void helpTooltip(const ParamSpec& p) {
  if (!ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
  ImGui::TextUnformatted(p.help.c_str());
  ImGui::TextDisabled("--set %s=…  (%s)", p.key.c_str(), paramTypeName(p.type).c_str());
  if (!p.file_shape.empty()) ImGui::TextDisabled("expected shape %s", p.file_shape.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

void variantList(AppState& s) {
  const float rows = 11.0f;
  ImGui::BeginChild("##variants", ImVec2(0, ImGui::GetTextLineHeightWithSpacing() * rows), true);
  for (const std::string& family : families()) {
    ImGui::TextDisabled("%s", family.c_str());
    for (const VariantInfo& v : variants()) {
      if (v.family != family) continue;
      ImGui::PushID(v.name.c_str());
      ImGui::Indent();
      const bool selected = v.name == s.scene.variant;
      if (ImGui::Selectable(v.title.c_str(), selected)) selectVariant(s, v);
      if (selected && ImGui::IsWindowAppearing()) ImGui::SetScrollHereY();
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", v.name.c_str());
      ImGui::Unindent();
      ImGui::PopID();
    }
  }
  ImGui::EndChild();
}

void variantCard(const VariantInfo& v) {
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(v.title.c_str());
  formulaText(v.summary, ImGui::GetColorU32(ImGuiCol_PlotLinesHovered));
  ImGui::TextDisabled("%s", v.citation.c_str());
  ImGui::PopTextWrapPos();
}

// A plain float list (ParamSpec::per_head false): one slider per element,
// "name 1", "name 2", …, with buttons that add an element (a copy of the
// last) or remove the last one. A centred list (NTM's shift s(−K)…s(K)) is
// labelled by offset and grows and shrinks at both ends; a distribution
// keeps its sum at 1: moving one entry rescales the others, and an entry
// added at an end starts at 0.
// `used`: the values the shown result ran with (its inputs/ entry of this name), offered for
// editing while the list is empty (pointer-sort's numbers drawn from the seed).
void floatListControl(const ParamSpec& p, std::vector<double> list, const Mat* used,
                      const std::function<void(const ParamValue&)>& set) {
  const std::string name = p.symbol.empty() ? p.key : p.symbol;
  if (list.empty() && used && used->size() > 0) {
    const std::string take = "edit the " + std::to_string(used->size()) + " values used##take" + p.key;
    if (ImGui::SmallButton(take.c_str())) {
      for (const float v : values(*used)) list.push_back(std::clamp(static_cast<double>(v), p.min, p.max));
      set(list);
      return;
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Fill %s with the values this result used, one slider each, to drag them", name.c_str());
  }
  const ImGuiSliderFlags flags = ImGuiSliderFlags_AlwaysClamp | (p.log_scale ? ImGuiSliderFlags_Logarithmic : 0);
  const int64_t half = static_cast<int64_t>(list.size()) / 2;
  bool changed = false;
  for (size_t i = 0; i < list.size(); ++i) {
    const int64_t offset = static_cast<int64_t>(i) - half;
    const std::string index = p.centred ? "(" + std::string(offset > 0 ? "+" : "") + std::to_string(offset) + ")"
                                        : " " + std::to_string(i + 1);
    const std::string label = name + index + "##" + p.key + std::to_string(i);
    if (ImGui::SliderScalar(label.c_str(), ImGuiDataType_Double, &list[i], &p.min, &p.max, "%.3g", flags)) {
      if (p.sums_to_one) rescaleOthersToSumOne(list, i);
      changed = true;
    }
    helpTooltip(p);
  }
  // A new entry repeats the last one; the first entry of an empty list (pointer-sort's numbers, empty
  // until the user gives some) starts in the middle of the range.
  const double added = p.sums_to_one ? 0.0 : list.empty() ? 0.5 * (p.min + p.max) : list.back();
  if (ImGui::SmallButton(("+##" + p.key).c_str())) {
    if (p.centred) list.insert(list.begin(), p.sums_to_one ? 0.0 : list.front());
    list.push_back(added);
    changed = true;
  }
  ImGui::SameLine();
  const size_t step = p.centred ? 2 : 1;
  if (list.size() > step && ImGui::SmallButton(("-##" + p.key).c_str())) {
    list.pop_back();
    if (p.centred) list.erase(list.begin());
    if (p.sums_to_one) rescaleOthersToSumOne(list, list.size() / 2);
    changed = true;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("%s: %zu values", name.c_str(), list.size());
  if (changed) set(list);
}

}  // namespace

void paramControl(AppState& s, Params& params, const VariantInfo& info, const ParamSpec& p, int64_t heads,
                  bool pattern) {
  const std::string label = (p.symbol.empty() ? p.key : p.symbol) + "##" + p.key;
  auto set = [&](const ParamValue& v) {
    try {
      params.setValue(info.params, p.key, v);
    } catch (const InputError& e) {
      s.status = e.what();
      s.status_is_error = true;
    }
  };
  switch (p.type) {
    case ParamType::Bool: {
      bool v = params.getBool(p.key);
      if (ImGui::Checkbox(label.c_str(), &v)) set(v);
      break;
    }
    case ParamType::Int: {
      int64_t v = params.getInt(p.key);
      const int64_t lo = static_cast<int64_t>(p.min), hi = static_cast<int64_t>(p.max);
      const ImGuiSliderFlags flags = ImGuiSliderFlags_AlwaysClamp | (p.log_scale ? ImGuiSliderFlags_Logarithmic : 0);
      if (ImGui::SliderScalar(label.c_str(), ImGuiDataType_S64, &v, &lo, &hi, "%lld", flags)) set(v);
      break;
    }
    case ParamType::Float: {
      double v = params.getFloat(p.key);
      const ImGuiSliderFlags flags = ImGuiSliderFlags_AlwaysClamp | (p.log_scale ? ImGuiSliderFlags_Logarithmic : 0);
      if (ImGui::SliderScalar(label.c_str(), ImGuiDataType_Double, &v, &p.min, &p.max, "%.3g", flags)) set(v);
      break;
    }
    case ParamType::Choice: {
      const std::string& cur = params.getString(p.key);
      if (ImGui::BeginCombo(label.c_str(), cur.c_str())) {
        for (const std::string& c : p.choices)
          if (ImGui::Selectable(c.c_str(), c == cur)) set(c);
        ImGui::EndCombo();
      }
      break;
    }
    case ParamType::File: {
      std::string path = params.getString(p.key);
      const float button = ImGui::GetFrameHeight() * 1.4f;
      ImGui::SetNextItemWidth(ImGui::CalcItemWidth() - button - ImGui::GetStyle().ItemInnerSpacing.x);
      if (ImGui::InputText(("##path" + p.key).c_str(), &path, ImGuiInputTextFlags_EnterReturnsTrue)) set(path);
      helpTooltip(p);
      ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
      if (ImGui::Button(("…##" + p.key).c_str(), ImVec2(button, 0))) s.request = {Request::Kind::OpenParamFile, p.key, pattern};
      ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
      ImGui::TextUnformatted(p.symbol.empty() ? p.key.c_str() : p.symbol.c_str());
      break;
    }
    case ParamType::Text: {
      // Applied on Enter: a half-typed spec ("attn(16,") would fail every keystroke.
      std::string text = params.getString(p.key);
      if (ImGui::InputText(label.c_str(), &text, ImGuiInputTextFlags_EnterReturnsTrue)) set(text);
      break;
    }
    case ParamType::FloatList: {
      if (!p.per_head) {
        const Mat* used = nullptr;
        if (!pattern && s.output && s.output->result && s.output->result->variant == info.name)
          if (const auto it = s.output->result->inputs.find(p.key); it != s.output->result->inputs.end()) used = &it->second;
        floatListControl(p, params.getFloatList(p.key), used, set);
        break;
      }
      // One slider per head of the current input ("z h0", "z h1", …). Heads
      // beyond the list show its last element (Params::floatForHead); moving
      // such a slider first extends the list to that head.
      const std::string name = p.symbol.empty() ? p.key : p.symbol;
      const ImGuiSliderFlags flags = ImGuiSliderFlags_AlwaysClamp | (p.log_scale ? ImGuiSliderFlags_Logarithmic : 0);
      for (int64_t h = 0; h < std::max<int64_t>(1, heads); ++h) {
        double v = params.floatForHead(p.key, h);
        const std::string head_label = name + " h" + std::to_string(h) + "##" + p.key + std::to_string(h);
        if (ImGui::SliderScalar(head_label.c_str(), ImGuiDataType_Double, &v, &p.min, &p.max, "%.3g", flags)) {
          std::vector<double> list = params.getFloatList(p.key);
          const double last = list.back();
          list.resize(std::max(list.size(), static_cast<size_t>(h) + 1), last);
          list[static_cast<size_t>(h)] = v;
          set(list);
        }
        if (h + 1 < heads) helpTooltip(p);
      }
      break;
    }
  }
  helpTooltip(p);
}

namespace {

void intField(const char* label, int64_t& v, int64_t lo, int64_t hi, const char* help) {
  const int64_t step = 1, fast = 8;
  if (ImGui::InputScalar(label, ImGuiDataType_S64, &v, &step, &fast, "%lld")) v = std::clamp(v, lo, hi);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", help);
}

void inputSection(AppState& s, const VariantInfo& info) {
  InputOptions& in = s.scene.input;
  int mode = static_cast<int>(s.scene.mode);
  ImGui::RadioButton("text", &mode, 0);
  ImGui::SameLine();
  ImGui::RadioButton("synthetic", &mode, 1);
  ImGui::SameLine();
  ImGui::RadioButton(".npy files", &mode, 2);
  s.scene.mode = static_cast<InputMode>(mode);
  switch (s.scene.mode) {
    case InputMode::Text:
      ImGui::TextDisabled("tokens (split at whitespace)");
      ImGui::InputTextMultiline("##text", &in.text, ImVec2(-1, ImGui::GetTextLineHeight() * 3.6f));
      if (info.input == InputKind::CrossAttention) {
        ImGui::TextDisabled("source tokens (keys and values)");
        ImGui::InputTextMultiline("##source", &in.source_text, ImVec2(-1, ImGui::GetTextLineHeight() * 3.6f));
      }
      break;
    case InputMode::Synthetic: {
      intField("L##length", in.length, 1, 4096, "L: query (target) length");
      if (info.input == InputKind::CrossAttention)
        intField("S##source", in.source_length, 0, 4096, "S: source length (0: L + 4)");
      uint64_t seed = in.seed;
      const uint64_t one = 1;
      if (ImGui::InputScalar("seed", ImGuiDataType_U64, &seed, &one, nullptr, "%llu")) in.seed = seed;
      if (ImGui::BeginCombo("preset", in.preset.c_str())) {
        for (const std::string& p : presetNames())
          if (ImGui::Selectable(p.c_str(), p == in.preset)) in.preset = p;
        ImGui::EndCombo();
      }
      break;
    }
    case InputMode::Files: {
      auto pathRow = [](const char* name, const std::string& path) {
        ImGui::Text("%s", name);
        ImGui::SameLine();
        ImGui::TextDisabled("%s", path.empty() ? "(none)" : path.c_str());
      };
      if (ImGui::Button("Open X…")) s.request.kind = Request::Kind::OpenX;
      ImGui::SameLine();
      if (ImGui::Button("Open Q/K/V…")) s.request.kind = Request::Kind::OpenQkv;
      pathRow("X", in.x);
      pathRow("Q", in.q);
      pathRow("K", in.k);
      pathRow("V", in.v);
      break;
    }
  }
  if (s.scene.mode != InputMode::Files) intField("d##dim", in.dim, 1, 4096, "d: model dimension");
  intField("h##heads", in.heads, 1, 64, "h: number of heads (must divide d)");
}

void displaySection(AppState& s, const VariantInfo& info) {
  // One button per view the variant has, numbered by its shortcut key; they
  // wrap to the panel width.
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  const std::vector<const ViewInfo*>& all = viewRegistry();
  bool first = true;
  for (const std::string& name : info.views) {
    const ViewInfo* v = &viewOrThrow(name);
    const auto key = std::find(all.begin(), all.end(), v) - all.begin() + 1;
    const std::string label = std::to_string(key) + " " + name;
    const float w = ImGui::CalcTextSize(label.c_str()).x + ImGui::GetStyle().FramePadding.x * 2;
    if (!first && ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w < right) ImGui::SameLine();
    first = false;
    const bool on = s.view.view == v;
    if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyle().Colors[ImGuiCol_ButtonActive]);
    if (ImGui::Button(label.c_str())) s.view.view = v;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s (key %d)", v->help.c_str(), static_cast<int>(key));
    if (on) ImGui::PopStyleColor();
  }
  const int heads = s.output && s.output->result ? s.output->result->heads() : 1;
  if (heads > 1) ImGui::SliderInt("head", &s.view.params.head, 0, heads - 1);
  colourControls(s);
}

void settingsSection(AppState& s) {
  ImGui::SliderFloat("UI scale", &s.settings.ui_scale, 0.75f, 3.0f, "%.2f");
  ImGui::SliderFloat("font size", &s.settings.font_size, 10.0f, 32.0f, "%.0f px");
  int theme = s.settings.dark ? 0 : 1;
  ImGui::RadioButton("dark", &theme, 0);
  ImGui::SameLine();
  ImGui::RadioButton("light", &theme, 1);
  s.settings.dark = theme == 0;
  ImGui::Checkbox("export in this theme", &s.settings.export_screen_theme);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Off: exported figures are light, for paper and slides, whatever the screen's theme");
}

}  // namespace

void colourControls(AppState& s) {
  if (ImGui::BeginCombo("colormap", colormapName(s.settings.colormap).c_str())) {
    for (Colormap c : allColormaps())
      if (ImGui::Selectable(colormapName(c).c_str(), c == s.settings.colormap)) s.settings.colormap = c;
    ImGui::EndCombo();
  }
  const std::vector<std::string>& kinds = scaleKindNames();
  if (ImGui::BeginCombo("scale", kinds[static_cast<size_t>(s.scale.kind)].c_str())) {
    for (size_t k = 0; k < kinds.size(); ++k)
      if (ImGui::Selectable(kinds[k].c_str(), static_cast<size_t>(s.scale.kind) == k)) s.scale.kind = static_cast<ScaleKind>(k);
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("How weights map to colours. auto: log from %lld keys on, else linear; log: three decades below "
                      "the largest weight; power: w^\xCE\xB3; percentile: the top clipped at a percentile",
                      static_cast<long long>(kLogScaleKeys));
  if (s.scale.kind == ScaleKind::Power) ImGui::SliderFloat("\xCE\xB3", &s.scale.gamma, 0.1f, 2.0f, "%.2f");
  if (s.scale.kind == ScaleKind::Percentile) ImGui::SliderFloat("percentile", &s.scale.percentile, 50.0f, 100.0f, "%.1f");
}

void beginFixedWindow(const char* id, ImVec2 pos, ImVec2 size, bool scroll) {
  ImGui::SetNextWindowPos(pos);
  ImGui::SetNextWindowSize(size);
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                           ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoBringToFrontOnFocus;
  if (!scroll) flags |= ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  ImGui::Begin(id, nullptr, flags);
}

void drawControlPanel(AppState& s, ImVec2 pos, ImVec2 size) {
  beginFixedWindow("##controls", pos, size, true);
  ImGui::PushItemWidth(-ImGui::GetFontSize() * 5.5f);
  workspaceSwitch(s);
  sectionTitle("VARIANT");
  variantList(s);
  const VariantInfo* info = findVariant(s.scene.variant);  // after the list, which may change it
  if (info) {
    variantCard(*info);
    sectionTitle("PARAMETERS");
    if (info->params.empty()) ImGui::TextDisabled("(none)");
    for (const ParamSpec& p : info->params) {
      ImGui::PushID(p.key.c_str());
      paramControl(s, s.scene.params, *info, p, s.scene.input.heads, false);
      ImGui::PopID();
    }
    if (!info->params.empty() && ImGui::SmallButton("defaults")) s.scene.params = Params::defaults(info->params);
    sectionTitle("INPUT");
    inputSection(s, *info);
    sectionTitle("DISPLAY");
    displaySection(s, *info);
  }
  sectionTitle("SETTINGS");
  settingsSection(s);
  ImGui::PopItemWidth();
  ImGui::End();
}

// [SECTION] Status bar and help overlay

void drawStatusBar(AppState& s, JobRunner& runner, ImVec2 pos, ImVec2 size) {
  beginFixedWindow("##status", pos, size, false);
  if (runner.busy()) {
    ImGui::ProgressBar(runner.progress(), ImVec2(ImGui::GetFontSize() * 8, 0));
    ImGui::SameLine();
    if (ImGui::SmallButton("Cancel")) runner.cancel();
    ImGui::SameLine();
    ImGui::TextDisabled("computing… %.1f s", runner.runningSeconds());
    ImGui::SameLine();
  }
  const ModelOutput* mo = s.model.output.get();
  if (s.workspace == Workspace::Model && mo && mo->analysis) {
    const ModelRun& r = mo->analysis->run;
    // A generation's run is assembled from its steps: its time is the generation's.
    char pass[64];
    if (mo->source)
      std::snprintf(pass, sizeof pass, "read from a file");
    else if (mo->generation)
      std::snprintf(pass, sizeof pass, "generated %zu tokens in %.2f s", mo->generation->tokens.size(), mo->generation->seconds);
    else
      std::snprintf(pass, sizeof pass, "forward %.1f ms", r.compute_seconds * 1e3);
    ImGui::Text("%s   %lld tokens   %s   %s   %s   frame %.1f ms", outputName(*mo).c_str(), static_cast<long long>(r.tokens.size()),
                layersByHeads(r.layers, r.heads).c_str(), mo->source ? mo->source->described.c_str() : formatFlops(r.flops).c_str(),
                pass, s.frame_ms);
  } else if (s.workspace == Workspace::Variants && s.output && s.output->result) {
    const Result& r = *s.output->result;
    std::string out_shape = r.output.size() ? "  output [" + std::to_string(r.output.rows()) + ", " +
                                                  std::to_string(r.output.cols()) + "]"
                                            : "";
    ImGui::Text("%s   weights [%d, %lld, %lld]%s   %s   compute %.2f ms   frame %.1f ms", r.variant.c_str(), r.heads(),
                static_cast<long long>(r.queries()), static_cast<long long>(r.keys()), out_shape.c_str(),
                formatFlops(r.flops).c_str(), r.compute_seconds * 1e3, s.frame_ms);
    // The scalars that fit on the line; all of them are in the extras view.
    for (const Extra& e : r.extras)
      if (e.kind == ExtraKind::Scalar && !e.value.data.empty()) {
        const std::string item = "  " + e.name + " = " + formatValueShort(e.value.data[0]);
        ImGui::SameLine();
        if (ImGui::GetCursorPosX() + ImGui::CalcTextSize(item.c_str()).x > ImGui::GetWindowWidth() - ImGui::GetFontSize()) break;
        ImGui::TextDisabled("%s", item.c_str());
      }
  } else {
    ImGui::Text("frame %.1f ms", s.frame_ms);
  }
  if (!s.status.empty()) {
    const float w = ImGui::CalcTextSize(s.status.c_str()).x;
    ImGui::SameLine(std::max(ImGui::GetCursorPosX() + 20.0f, ImGui::GetWindowWidth() - w - 16.0f));
    if (s.status_is_error)
      ImGui::TextColored(ImVec4(0.95f, 0.35f, 0.3f, 1.0f), "%s", s.status.c_str());
    else
      ImGui::TextDisabled("%s", s.status.c_str());
  }
  ImGui::End();
}

void drawHelpOverlay(AppState& s) {
  if (!s.show_help) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + vp->Size.x * 0.5f, vp->Pos.y + vp->Size.y * 0.5f), ImGuiCond_Always,
                          ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowBgAlpha(0.96f);
  ImGui::Begin("Keyboard shortcuts", &s.show_help,
               ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings);
  // The view keys from the registries: the variants' views, then each model kind's.
  std::vector<std::pair<std::string, std::string>> rows;
  const auto viewKeys = [&rows](const std::string& who, const std::vector<std::string>& names) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    const std::string keys = names.size() <= 9 ? "1 \xE2\x80\x93 " + std::to_string(names.size()) : "1 \xE2\x80\x93 9, 0";
    rows.emplace_back(keys, who + ": " + list + " view" + (names.size() > 10 ? " (past the tenth: the view bar)" : ""));
  };
  std::vector<std::string> names;
  for (const ViewInfo* v : viewRegistry()) names.push_back(v->name);
  viewKeys("variants", names);
  for (const ModelKindInfo* k : modelKindRegistry()) {
    names.clear();
    for (const ModelKindView& v : k->views) names.push_back(v.name);
    viewKeys(k->name + " model", names);
  }
  for (const Shortcut& k : kShortcuts) rows.emplace_back(k.keys, k.what);
  if (ImGui::BeginTable("##keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
    for (const auto& [keys, what] : rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(keys.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(what.c_str());
    }
    ImGui::EndTable();
  }
  ImGui::TextDisabled("F1 or Esc closes this window");
  ImGui::End();
}

}  // namespace attn
