#include "widgets/formula_view.h"

#include "widgets/formula.h"

#include <algorithm>
#include <cfloat>

namespace attn {

namespace {

std::vector<FormulaLine> imguiFormulaLines(const std::string& text, float wrap_width) {
  ImFont* font = ImGui::GetFont();
  const float px = ImGui::GetFontSize();
  const MeasureText measure = [&](const std::string& s, float scale) {
    return font->CalcTextSizeA(px * scale, FLT_MAX, 0.0f, s.c_str()).x;
  };
  return layoutFormula(text, px, wrap_width, measure);
}

}  // namespace

float formulaTextHeight(const std::string& text, float wrap_width) {
  return formulaLineHeight(ImGui::GetFontSize()) * static_cast<float>(imguiFormulaLines(text, wrap_width).size());
}

void formulaText(const std::string& text, ImU32 colour, float wrap_width) {
  ImFont* font = ImGui::GetFont();
  const float px = ImGui::GetFontSize();
  if (wrap_width <= 0.0f) wrap_width = ImGui::GetContentRegionAvail().x;
  const std::vector<FormulaLine> lines = imguiFormulaLines(text, wrap_width);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float line_h = formulaLineHeight(px), ascent = font->Ascent * px / font->FontSize;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float width = 0;
  for (size_t l = 0; l < lines.size(); ++l) {
    // Baseline of the line; a superscript needs the headroom above the text.
    const float baseline = origin.y + line_h * static_cast<float>(l) + (line_h - px) + ascent;
    for (const FormulaRun& r : lines[l].runs)
      dl->AddText(font, px * r.scale, ImVec2(origin.x + r.x, baseline + r.dy - ascent * r.scale), colour, r.text.c_str());
    width = std::max(width, lines[l].width);
  }
  ImGui::Dummy(ImVec2(width, line_h * static_cast<float>(lines.size())));
}

}  // namespace attn
