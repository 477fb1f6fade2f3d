#include "app/gui/gui_lesson.h"

#include "app/gui/gui_panels.h"
#include "widgets/annotations.h"
#include "widgets/formula_view.h"
#include "widgets/primitives_imgui.h"

#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

const LessonStep* currentStep(const AppState& s) {
  const Lesson* l = s.lesson.lesson.get();
  if (!l || s.lesson.step < 0 || s.lesson.step >= static_cast<int>(l->steps.size())) return nullptr;
  return &l->steps[static_cast<size_t>(s.lesson.step)];
}

void goToStep(AppState& s, int step) {
  if (!s.lesson.lesson) return;
  s.lesson.step = std::clamp(step, 0, static_cast<int>(s.lesson.lesson->steps.size()) - 1);
}

std::string stepLine(const AppState& s) {
  const Lesson& l = *s.lesson.lesson;
  return l.title + "  \xC2\xB7  step " + std::to_string(s.lesson.step + 1) + " of " + std::to_string(l.steps.size());
}

const char* kBack = "\xE2\x86\x90 Back";
const char* kNext = "Next \xE2\x86\x92";

}  // namespace

bool lessonKey(AppState& s, int key, bool text_input) {
  if (key == GLFW_KEY_F5) {
    s.present.on = !s.present.on;
    s.present.laser = s.present.pen = false;
    return true;
  }
  if (key == GLFW_KEY_ESCAPE && s.present.on) {
    s.present = PresentState{};
    return true;
  }
  if (text_input) return false;
  if (s.present.on && key == GLFW_KEY_L) {
    s.present.laser = !s.present.laser;
    s.present.pen = false;
    return true;
  }
  if (s.present.on && key == GLFW_KEY_P) {
    s.present.pen = !s.present.pen;
    s.present.laser = false;
    return true;
  }
  if (!s.lesson.lesson) return false;
  if (key == GLFW_KEY_RIGHT || key == GLFW_KEY_SPACE || key == GLFW_KEY_PAGE_DOWN) {
    goToStep(s, s.lesson.step + 1);
    return true;
  }
  if (key == GLFW_KEY_LEFT || key == GLFW_KEY_PAGE_UP) {
    goToStep(s, s.lesson.step - 1);
    return true;
  }
  return false;
}

float lessonStripHeight(const AppState& s, float width) {
  const LessonStep* step = currentStep(s);
  if (!step) return 0.0f;
  const ImGuiStyle& st = ImGui::GetStyle();
  const float wrap = std::max(50.0f, width - st.WindowPadding.x * 2);
  const float line = ImGui::GetTextLineHeightWithSpacing();
  float h = st.WindowPadding.y * 2 + std::max(line, ImGui::GetFrameHeightWithSpacing()) + st.ItemSpacing.y;
  // Narration and prompt are typeset like formulas (p_t, q_i·k_j), broken at spaces only.
  h += formulaTextHeight(step->narration, wrap) + st.ItemSpacing.y;
  if (!step->formula.empty()) h += formulaTextHeight(step->formula, wrap) + st.ItemSpacing.y;
  if (!step->prompt.empty()) h += formulaTextHeight("Try it: " + step->prompt, wrap) + st.ItemSpacing.y;
  return std::ceil(h + 2);
}

void drawLessonStrip(AppState& s, ImVec2 pos, ImVec2 size) {
  const LessonStep* step = currentStep(s);
  if (!step) return;
  beginFixedWindow("##lesson", pos, size, false);
  const ImU32 accent = ImGui::GetColorU32(ImGuiCol_PlotHistogram);
  ImGui::PushStyleColor(ImGuiCol_Text, accent);
  ImGui::TextUnformatted(step->title.c_str());
  ImGui::PopStyleColor();
  ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
  ImGui::TextDisabled("%s", stepLine(s).c_str());
  if (!s.present.on) {
    // Back and Next at the right end of the first line.
    const ImGuiStyle& st = ImGui::GetStyle();
    const float bw = ImGui::CalcTextSize(kBack).x + st.FramePadding.x * 2, nw = ImGui::CalcTextSize(kNext).x + st.FramePadding.x * 2;
    const float close_w = ImGui::CalcTextSize("Close").x + st.FramePadding.x * 2;
    const float x = ImGui::GetWindowContentRegionMax().x - bw - nw - close_w - st.ItemSpacing.x * 2;
    ImGui::SameLine(std::max(ImGui::GetCursorPosX(), x));
    ImGui::BeginDisabled(s.lesson.step == 0);
    if (ImGui::Button(kBack)) goToStep(s, s.lesson.step - 1);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("previous step (\xE2\x86\x90, PageUp)");
    ImGui::SameLine();
    ImGui::BeginDisabled(s.lesson.step + 1 >= static_cast<int>(s.lesson.lesson->steps.size()));
    if (ImGui::Button(kNext)) goToStep(s, s.lesson.step + 1);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("next step (\xE2\x86\x92, Space, PageDown)");
    ImGui::SameLine();
    if (ImGui::Button("Close")) {
      s.lesson = LessonState{};
      ImGui::End();
      return;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("close the lesson; the scene stays open");
  }
  formulaText(step->narration, ImGui::GetColorU32(ImGuiCol_Text));
  if (!step->formula.empty()) formulaText(step->formula, ImGui::GetColorU32(ImGuiCol_PlotLinesHovered));
  if (!step->prompt.empty()) {
    formulaText("Try it: " + step->prompt, accent);
  }
  ImGui::End();
}

std::string drawLessonOverlay(AppState& s, ImVec2 pos, ImVec2 size, float animate_seconds) {
  ImDrawList* dl = ImGui::GetForegroundDrawList();
  dl->PushClipRect(pos, ImVec2(pos.x + size.x, pos.y + size.y), true);
  std::string warning;
  if (const LessonStep* step = currentStep(s); step && !step->highlights.empty() && s.lesson.shown == s.lesson.step) {
    if (!s.anchor.valid()) {
      warning = "its marks need a matrix, and this view shows none";
    } else {
      for (const Annotation& a : step->highlights)
        if (const std::string e = annotationRangeError(a, s.anchor.rows, s.anchor.cols); !e.empty() && warning.empty())
          warning = std::string(annotationKindName(a.kind)) + ": " + e + " (the matrix is " + std::to_string(s.anchor.rows) +
                    " \xC3\x97 " + std::to_string(s.anchor.cols) + ")";
      const float progress =
          animate_seconds > 0 ? static_cast<float>((ImGui::GetTime() - s.lesson.opened) / animate_seconds) : 1.0f;
      Primitives prims;
      annotationPrimitives(prims, s.anchor, step->highlights, progress, ImGui::GetFontSize(), imguiMeasure(ImGui::GetFontSize()));
      drawPrimitives(dl, prims);
    }
  }
  // The pen: while on, an invisible window over the view takes the mouse.
  const ImU32 ink = IM_COL32(230, 40, 60, 255);
  if (s.present.pen) {
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(size);
    ImGui::Begin("##pen", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoBackground | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing);
    ImGui::SetCursorScreenPos(pos);
    ImGui::InvisibleButton("##canvas", size);
    if (ImGui::IsItemActivated()) s.present.strokes.emplace_back();
    if (ImGui::IsItemActive() && !s.present.strokes.empty()) {
      const ImVec2 m = ImGui::GetIO().MousePos;
      std::vector<ImVec2>& stroke = s.present.strokes.back();
      if (stroke.empty() || std::abs(stroke.back().x - m.x) + std::abs(stroke.back().y - m.y) > 1.5f) stroke.push_back(m);
    }
    ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    ImGui::End();
  }
  const float pen_w = std::max(2.5f, ImGui::GetFontSize() * 0.18f);
  for (const std::vector<ImVec2>& stroke : s.present.strokes)
    if (stroke.size() >= 2) dl->AddPolyline(stroke.data(), static_cast<int>(stroke.size()), ink, 0, pen_w);
  if (s.present.laser) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (ImGui::IsMousePosValid(&m)) {
      const float r = ImGui::GetFontSize() * 0.35f;
      dl->AddCircleFilled(m, r * 2.2f, IM_COL32(255, 30, 30, 60));
      dl->AddCircleFilled(m, r, IM_COL32(255, 30, 30, 230));
      ImGui::SetMouseCursor(ImGuiMouseCursor_None);
    }
  }
  dl->PopClipRect();
  return warning;
}

void lessonMenu(AppState& s) {
  if (!ImGui::BeginMenu("Lessons")) return;
  if (ImGui::IsWindowAppearing()) {
    s.menu_errors.clear();
    s.menu_lessons = allLessons(s.menu_errors);
  }
  for (const Lesson& l : s.menu_lessons) {
    const bool open = s.lesson.lesson && s.lesson.lesson->name == l.name;
    if (ImGui::MenuItem(l.title.c_str(), nullptr, open)) s.request = {Request::Kind::OpenLesson, l.name};
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s\n%zu steps  (%s)", l.summary.c_str(), l.steps.size(), l.file.c_str());
  }
  for (const std::string& e : s.menu_errors) ImGui::TextDisabled("%s", e.c_str());
  ImGui::Separator();
  if (ImGui::MenuItem("Next step", "\xE2\x86\x92", false, s.lesson.lesson != nullptr)) goToStep(s, s.lesson.step + 1);
  if (ImGui::MenuItem("Previous step", "\xE2\x86\x90", false, s.lesson.lesson != nullptr)) goToStep(s, s.lesson.step - 1);
  if (ImGui::MenuItem("Close lesson", nullptr, false, s.lesson.lesson != nullptr)) s.lesson = LessonState{};
  ImGui::Separator();
  if (ImGui::MenuItem("Presentation mode", "F5", s.present.on)) s.present.on = !s.present.on;
  ImGui::EndMenu();
}

}  // namespace attn
