#include "widgets/head_grid.h"

#include "widgets/value_range.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <string>

namespace attn {

HeadPick headGrid(const char* id, const std::vector<std::vector<Mat>>& attention, const Mat* mask,
                  const MatrixStyle& style, int focus_layer, int focus_head, HeatmapZoom& zoom, HeatmapRenderer& gl,
                  ImVec2 size, const HeadGridMarks& marks) {
  HeadPick pick;
  const int layers = static_cast<int>(attention.size());
  const int heads = layers ? static_cast<int>(attention[0].size()) : 0;
  if (layers == 0 || heads == 0) return pick;
  ImGui::PushID(id);
  const float line = ImGui::GetTextLineHeight();
  const int group = marks.group > 1 && heads % marks.group == 0 && marks.group < heads ? marks.group : 1;
  const int groups = heads / group;
  // Grouped: a row of "kv g" brackets over the H captions, and a gap between groups.
  const float left = ImGui::CalcTextSize("L00").x + line * 0.6f, top = line * (group > 1 ? 2.8f : 1.4f);
  const float gap = std::max(2.0f, line * 0.3f), group_gap = group > 1 ? line * 0.7f : 0.0f;
  // Square thumbnails, as large as the area allows; with shares, a bar under each.
  const float bar = marks.share ? std::max(3.0f, line * 0.3f) : 0.0f, bar_room = marks.share ? bar + 1.0f : 0.0f;
  const float cell = std::max(8.0f, std::min((size.x - left - group_gap * static_cast<float>(groups - 1)) / heads,
                                             (size.y - top) / layers - bar_room));
  const float pitch = cell + bar_room;  // row to row
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const auto headX = [&](int h) { return origin.x + left + cell * static_cast<float>(h) + group_gap * static_cast<float>(h / group); };
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
    dl->AddText(ImVec2(headX(h) + cell * 0.5f - w * 0.5f, origin.y + top - line * 1.4f), h == focus_head ? text : dim, s);
  }
  if (group > 1) {
    // ┌── kv g ──┐ over the query heads reading key/value head g
    const bool room = ImGui::CalcTextSize("kv 00").x + line < cell * static_cast<float>(group) - gap;
    for (int g = 0; g < groups; ++g) {
      const float x0 = headX(g * group), x1 = headX((g + 1) * group - 1) + cell - gap, y = origin.y + line * 0.55f;
      const bool focused = focus_head / group == g;
      const ImU32 col = focused ? text : dim;
      char s[16];
      std::snprintf(s, sizeof s, room ? "kv %d" : "%d", g);
      const ImVec2 ts = ImGui::CalcTextSize(s);
      const float cx = (x0 + x1) * 0.5f;
      dl->AddText(ImVec2(cx - ts.x * 0.5f, origin.y), col, s);
      if (cx - ts.x * 0.5f - line * 0.3f > x0) {
        dl->AddLine(ImVec2(x0, y + line * 0.4f), ImVec2(x0, y), col);
        dl->AddLine(ImVec2(x0, y), ImVec2(cx - ts.x * 0.5f - line * 0.3f, y), col);
        dl->AddLine(ImVec2(cx + ts.x * 0.5f + line * 0.3f, y), ImVec2(x1, y), col);
        dl->AddLine(ImVec2(x1, y), ImVec2(x1, y + line * 0.4f), col);
      }
    }
  }
  const ImVec4 accent = ImGui::GetStyle().Colors[ImGuiCol_PlotHistogram];
  MatrixStyle st = style;
  st.labels = false;
  st.colorbar = false;
  st.tooltip = false;
  for (int l = 0; l < layers; ++l) {
    char s[16];
    std::snprintf(s, sizeof s, "L%d", l);
    if (l == focus_layer || (l % layer_step == 0 && std::abs(l - focus_layer) >= layer_step))
      dl->AddText(ImVec2(origin.x, origin.y + top + pitch * l + cell * 0.5f - line * 0.5f), l == focus_layer ? text : dim, s);
    for (int h = 0; h < heads; ++h) {
      ImGui::PushID(l * heads + h);
      const ImVec2 at(headX(h), origin.y + top + pitch * l);
      ImGui::SetCursorScreenPos(at);
      MatrixSpec v = MatrixSpec::of(attention[static_cast<size_t>(l)][static_cast<size_t>(h)]);
      v.mask = mask;
      st.highlight = l == focus_layer && h == focus_head;
      const HeatmapEvents ev = heatmap("thumb", v, st, zoom, gl, ImVec2(cell - gap, cell - gap));
      if (ev.clicked) pick = {l, h};
      const size_t at_share = static_cast<size_t>(l) * static_cast<size_t>(heads) + static_cast<size_t>(h);
      const bool has_share = marks.share && at_share < marks.share->size();
      const float share = has_share ? std::clamp((*marks.share)[at_share], 0.0f, 1.0f) : 0.0f;
      if (has_share) {
        // The share as a bar under the thumbnail, on a dark track of the thumbnail's width.
        const float w = cell - gap, y0 = at.y + w + 1.0f, y1 = y0 + bar;
        const bool over = share >= marks.share_threshold;
        dl->AddRectFilled(ImVec2(at.x, y0), ImVec2(at.x + w, y1), IM_COL32(0, 0, 0, 170));
        dl->AddRectFilled(ImVec2(at.x, y0), ImVec2(at.x + w * share, y1),
                          over ? ImGui::GetColorU32(accent) : IM_COL32(235, 235, 235, 230));
      }
      if (ev.hovered) {
        if (has_share)
          ImGui::SetTooltip("layer %d, head %d%s%s: %s %.3f%s; click to focus it", l, h, group > 1 ? ", kv " : "",
                            group > 1 ? std::to_string(h / group).c_str() : "", marks.share_name, share,
                            share >= marks.share_threshold ? " (a sink)" : "");
        else
          ImGui::SetTooltip("layer %d, head %d: click to focus it", l, h);
      }
      ImGui::PopID();
    }
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(headX(heads - 1) + cell - origin.x, top + pitch * layers));
  ImGui::PopID();
  return pick;
}

}  // namespace attn
