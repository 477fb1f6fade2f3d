#include "widgets/token_lines.h"

#include "widgets/primitives_imgui.h"
#include "widgets/view_layouts.h"

#include <algorithm>

namespace attn {

void tokenLines(const char* id, const Result& r, TokenLinesState& state, ImVec2 size) {
  ImGui::PushID(id);
  state.heads_visible.resize(static_cast<size_t>(r.heads()), true);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  size = ImVec2(std::max(1.0f, size.x), std::max(1.0f, ImGui::GetContentRegionAvail().y));
  ImGui::InvisibleButton("##lines", size);
  const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
  const Canvas canvas = imguiCanvas();
  const Box area{origin.x, origin.y, size.x, size.y};
  // The geometry (hover needs it) is laid out once without hover, then
  // again with the hovered token isolated.
  Primitives prims;
  const TokenLinesLayout g = tokenLinesPrimitives(prims, canvas, area, r, state.heads_visible, true);
  int64_t hover_q = -1, hover_k = -1;
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (hovered && !g.too_many) {
    const float line = ImGui::GetTextLineHeight();
    if (m.x < g.xq + line * 0.5f) hover_q = g.queryAt(m.y) < r.queries() ? g.queryAt(m.y) : -1;
    else if (m.x > g.xk - line * 0.5f) hover_k = g.keyAt(m.y) < r.keys() ? g.keyAt(m.y) : -1;
  }
  for (size_t h = 0; h < g.head_boxes.size(); ++h) {
    const Box& b = g.head_boxes[h];
    if (!(m.x >= b.x && m.x < b.right() && m.y >= b.y && m.y < b.bottom())) continue;
    if (hovered) ImGui::SetTooltip("click to %s head %zu", state.heads_visible[h] ? "hide" : "show", h);
    if (clicked) state.heads_visible[h] = !state.heads_visible[h];
  }
  if (hover_q >= 0 || hover_k >= 0) {
    prims.clear();
    tokenLinesPrimitives(prims, canvas, area, r, state.heads_visible, true, hover_q, hover_k);
  }
  drawPrimitives(ImGui::GetWindowDrawList(), prims);
  ImGui::PopID();
}

}  // namespace attn
