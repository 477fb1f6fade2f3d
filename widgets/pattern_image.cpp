#include "widgets/pattern_image.h"

#include "widgets/primitives_imgui.h"
#include "widgets/view_layouts.h"

#include <algorithm>

namespace attn {

Rgb8 patternSetColor(unsigned bits, bool dark) { return bits ? setColor(bits) : patternBackground(dark); }

int64_t patternView(const char* id, const SparseRows& s, const std::vector<std::string>& set_names, int64_t width, int64_t query,
                    const Extra* groups, HeatmapRenderer& gl, ImVec2 size) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::PushID(id);
  size = ImVec2(std::max(1.0f, size.x), std::max(1.0f, size.y));
  ImGui::InvisibleButton("##pattern", size);
  const bool hovered = ImGui::IsItemHovered(), held = ImGui::IsItemActive();
  Primitives prims;
  const ImageViewLayout g = imageViewPrimitives(prims, imguiCanvas(), {origin.x, origin.y, size.x, size.y}, s, set_names, width,
                                                query, groups, std::to_string(ImGui::GetID("pictures")));
  drawPrimitives(ImGui::GetWindowDrawList(), prims, &gl);
  int64_t picked = -1;
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (const int64_t under = g.pixelAt(m.x, m.y); under >= 0) {
    if (held) picked = under;
    if (hovered) {
      ImGui::BeginTooltip();
      ImGui::Text("pixel (x %lld, y %lld) = position %lld", static_cast<long long>(under % g.width),
                  static_cast<long long>(under / g.width), static_cast<long long>(under));
      ImGui::Separator();
      ImGui::TextDisabled("as a key of query %lld:", static_cast<long long>(query));
      sparseEntryText(s, query, under, "weight", nullptr);
      ImGui::TextDisabled("click or drag to select the query");
      ImGui::EndTooltip();
    }
  } else if (const int64_t row = g.rowAt(m.x, m.y); row >= 0) {
    if (held) picked = row;
    if (hovered) {
      const int64_t col = g.colAt(m.x);
      ImGui::BeginTooltip();
      ImGui::Text("query %lld, key %lld", static_cast<long long>(row), static_cast<long long>(col));
      ImGui::Separator();
      sparseEntryText(s, row, col, "weight", &set_names);
      ImGui::TextDisabled("click or drag to select the query row");
      ImGui::EndTooltip();
    }
  }
  ImGui::PopID();
  return picked;
}

int64_t pictureView(const char* id, const Array& picture, const Mat& weights, int64_t key_width,
                    const std::vector<int64_t>& queries, int active, HeatmapRenderer& gl, ImVec2 size, int& panel) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::PushID(id);
  size = ImVec2(std::max(1.0f, size.x), std::max(1.0f, size.y));
  ImGui::InvisibleButton("##picture", size);
  const bool hovered = ImGui::IsItemHovered(), held = ImGui::IsItemActive();
  Primitives prims;
  const PictureViewLayout g = pictureViewPrimitives(prims, imguiCanvas(), {origin.x, origin.y, size.x, size.y}, picture, weights,
                                                    key_width, queries, active, std::to_string(ImGui::GetID("pictures")));
  drawPrimitives(ImGui::GetWindowDrawList(), prims, &gl);
  int64_t picked = -1;
  const ImVec2 m = ImGui::GetIO().MousePos;
  int under_panel = -1;
  if (const int64_t under = g.pixelAt(m.x, m.y, &under_panel); under >= 0) {
    if (held) {
      picked = under;
      panel = under_panel;
    }
    if (hovered) {
      ImGui::BeginTooltip();
      ImGui::Text("pixel (row %lld, column %lld)", static_cast<long long>(under / g.width), static_cast<long long>(under % g.width));
      if (under_panel >= 0) {
        ImGui::TextDisabled("click to select query %d", under_panel + 1);
      } else {
        ImGui::TextDisabled("click or drag to move query %d here", active + 1);
      }
      ImGui::EndTooltip();
    }
  }
  ImGui::PopID();
  return picked;
}

}  // namespace attn
