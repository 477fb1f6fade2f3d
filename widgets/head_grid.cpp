#include "widgets/head_grid.h"

#include "widgets/value_range.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>

namespace attn {

HeadPick headGrid(const char* id, const std::vector<std::vector<Mat>>& attention, const Mat* mask,
                  const MatrixStyle& style, int focus_layer, int focus_head, HeatmapZoom& zoom, HeatmapRenderer& gl,
                  ImVec2 size) {
  HeadPick pick;
  const int layers = static_cast<int>(attention.size());
  const int heads = layers ? static_cast<int>(attention[0].size()) : 0;
  if (layers == 0 || heads == 0) return pick;
  ImGui::PushID(id);
  const float line = ImGui::GetTextLineHeight();
  const float left = ImGui::CalcTextSize("L00").x + line * 0.6f, top = line * 1.4f;
  const float gap = std::max(2.0f, line * 0.3f);
  // Square thumbnails, as large as the area allows.
  const float cell = std::max(8.0f, std::min((size.x - left) / heads, (size.y - top) / layers));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  // Crowded captions thin out (H0 H5 H10 …); the focused one is always shown,
  // and the regular ones too close to it give way.
  char widest[16];
  std::snprintf(widest, sizeof widest, "H%d", heads - 1);
  const int head_step = labelStride(cell, ImGui::CalcTextSize(widest).x * 1.2f);
  const int layer_step = labelStride(cell, line * 1.2f);
  for (int h = 0; h < heads; ++h) {
    if (h != focus_head && (h % head_step != 0 || std::abs(h - focus_head) < head_step)) continue;
    char s[16];
    std::snprintf(s, sizeof s, "H%d", h);
    const float w = ImGui::CalcTextSize(s).x;
    dl->AddText(ImVec2(origin.x + left + cell * (h + 0.5f) - w * 0.5f, origin.y), h == focus_head ? text : dim, s);
  }
  MatrixStyle st = style;
  st.labels = false;
  st.colorbar = false;
  st.tooltip = false;
  for (int l = 0; l < layers; ++l) {
    char s[16];
    std::snprintf(s, sizeof s, "L%d", l);
    if (l == focus_layer || (l % layer_step == 0 && std::abs(l - focus_layer) >= layer_step))
      dl->AddText(ImVec2(origin.x, origin.y + top + cell * (l + 0.5f) - line * 0.5f), l == focus_layer ? text : dim, s);
    for (int h = 0; h < heads; ++h) {
      ImGui::PushID(l * heads + h);
      ImGui::SetCursorScreenPos(ImVec2(origin.x + left + cell * h, origin.y + top + cell * l));
      MatrixSpec v = MatrixSpec::of(attention[static_cast<size_t>(l)][static_cast<size_t>(h)]);
      v.mask = mask;
      st.highlight = l == focus_layer && h == focus_head;
      const HeatmapEvents ev = heatmap("thumb", v, st, zoom, gl, ImVec2(cell - gap, cell - gap));
      if (ev.clicked) pick = {l, h};
      if (ev.hovered) ImGui::SetTooltip("layer %d, head %d: click to focus it", l, h);
      ImGui::PopID();
    }
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(left + cell * heads, top + cell * layers));
  ImGui::PopID();
  return pick;
}

}  // namespace attn
