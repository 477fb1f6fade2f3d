#include "widgets/primitives_imgui.h"

#include "widgets/heatmap.h"

#include <algorithm>
#include <cfloat>

namespace attn {

MeasureText imguiMeasure(float px) {
  return [px](const std::string& s, float scale) { return ImGui::GetFont()->CalcTextSizeA(px * scale, FLT_MAX, 0.0f, s.c_str()).x; };
}

void drawPrimitives(ImDrawList* dl, const Primitives& prims) {
  ImFont* font = ImGui::GetFont();
  auto colourOf = [](Role r) {
    return ImGui::GetColorU32(r == Role::Text ? ImGuiCol_Text : r == Role::Muted ? ImGuiCol_TextDisabled : ImGuiCol_Border);
  };
  for (const Primitive& p : prims) {
    switch (p.kind) {
      case Primitive::Kind::StrokeRect: dl->AddRect(ImVec2(p.x0, p.y0), ImVec2(p.x1, p.y1), colourOf(p.role)); break;
      case Primitive::Kind::Line: dl->AddLine(ImVec2(p.x0, p.y0), ImVec2(p.x1, p.y1), colourOf(p.role)); break;
      case Primitive::Kind::ColormapStrip: {
        const auto& table = colormapTable(p.cmap);
        constexpr int n = 64;  // gradient bands, top = the high end
        const float h = p.y1 - p.y0;
        for (int i = 0; i < n; ++i) {
          const Rgb8 top = table[static_cast<size_t>(255 - i * 255 / n)];
          const Rgb8 bottom = table[static_cast<size_t>(255 - std::min(255, (i + 1) * 255 / n))];
          const float a = p.y0 + h * static_cast<float>(i) / n, b = p.y0 + h * static_cast<float>(i + 1) / n;
          dl->AddRectFilledMultiColor(ImVec2(p.x0, a), ImVec2(p.x1, b + 0.5f), toU32(top), toU32(top), toU32(bottom),
                                      toU32(bottom));
        }
        break;
      }
      case Primitive::Kind::Text: {
        const ImVec2 ts = font->CalcTextSizeA(p.size, FLT_MAX, 0.0f, p.text.c_str());
        if (!p.vertical) {
          dl->AddText(font, p.size, ImVec2(p.x0 - p.align_x * ts.x, p.y0 - p.align_y * ts.y), colourOf(p.role), p.text.c_str());
        } else {
          // Turned 90° counter-clockwise: the text's x runs up the screen, its y to the right.
          addTextVertical(dl, ImVec2(p.x0 - p.align_y * ts.y, p.y0 + p.align_x * ts.x), colourOf(p.role), p.text.c_str(), p.size);
        }
        break;
      }
    }
  }
}

}  // namespace attn
