#include "widgets/primitives_imgui.h"

#include "widgets/heatmap.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace attn {

MeasureText imguiMeasure(float px) {
  return [px](const std::string& s, float scale) { return ImGui::GetFont()->CalcTextSizeA(px * scale, FLT_MAX, 0.0f, s.c_str()).x; };
}

void drawPrimitives(ImDrawList* dl, const Primitives& prims) {
  ImFont* font = ImGui::GetFont();
  auto colourOf = [](Role r, float alpha = 1.0f) {
    const ImGuiCol col = r == Role::Text    ? ImGuiCol_Text
                         : r == Role::Muted ? ImGuiCol_TextDisabled
                         : r == Role::Frame ? ImGuiCol_Border
                         : r == Role::Background ? ImGuiCol_WindowBg
                                            : ImGuiCol_PlotHistogram;  // the accent: focus frames
    return ImGui::GetColorU32(col, alpha);
  };
  for (const Primitive& p : prims) {
    const float thick = std::max(1.0f, p.thickness);
    switch (p.kind) {
      case Primitive::Kind::StrokeRect:
        dl->AddRect(ImVec2(p.x0, p.y0), ImVec2(p.x1, p.y1), colourOf(p.role, p.alpha), 0.0f, 0, thick);
        break;
      case Primitive::Kind::FillRect: dl->AddRectFilled(ImVec2(p.x0, p.y0), ImVec2(p.x1, p.y1), colourOf(p.role, p.alpha)); break;
      case Primitive::Kind::Line: dl->AddLine(ImVec2(p.x0, p.y0), ImVec2(p.x1, p.y1), colourOf(p.role, p.alpha), thick); break;
      case Primitive::Kind::Arrow: {
        const ArrowHead h = arrowHead(p);
        dl->AddLine(ImVec2(p.x0, p.y0), ImVec2(h.base_x, h.base_y), colourOf(p.role, p.alpha), thick);
        dl->AddTriangleFilled(ImVec2(p.x1, p.y1), ImVec2(h.left_x, h.left_y), ImVec2(h.right_x, h.right_y),
                              colourOf(p.role, p.alpha));
        break;
      }
      case Primitive::Kind::Ellipse: {
        const ImVec2 c((p.x0 + p.x1) * 0.5f, (p.y0 + p.y1) * 0.5f);
        const float rx = std::abs(p.x1 - p.x0) * 0.5f, ry = std::abs(p.y1 - p.y0) * 0.5f;
        constexpr int n = 48;  // ImGui 1.86 has circles only: the ellipse as a closed path
        for (int i = 0; i < n; ++i) {
          const float a = 6.2831853f * static_cast<float>(i) / n;
          dl->PathLineTo(ImVec2(c.x + rx * std::cos(a), c.y + ry * std::sin(a)));
        }
        dl->PathStroke(colourOf(p.role, p.alpha), ImDrawFlags_Closed, thick);
        break;
      }
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
          dl->AddText(font, p.size, ImVec2(p.x0 - p.align_x * ts.x, p.y0 - p.align_y * ts.y), colourOf(p.role, p.alpha), p.text.c_str());
        } else {
          // Turned 90° counter-clockwise: the text's x runs up the screen, its y to the right.
          addTextVertical(dl, ImVec2(p.x0 - p.align_y * ts.y, p.y0 + p.align_x * ts.x), colourOf(p.role, p.alpha), p.text.c_str(), p.size);
        }
        break;
      }
    }
  }
}

}  // namespace attn
