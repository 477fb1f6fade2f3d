#include "widgets/bars.h"

#include "widgets/heatmap.h"
#include "widgets/value_range.h"

#include <algorithm>
#include <cmath>

namespace attn {

void valueBars(const char* id, const Array& values, const std::vector<std::string>* labels, const ValueRange& range,
               Colormap cmap, const std::string& value_label, ImVec2 size, const std::string& item_axis) {
  ImGui::PushID(id);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##bars", ImVec2(std::max(1.0f, size.x), std::max(1.0f, size.y)));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int64_t n = values.size();
  const float line = ImGui::GetTextLineHeight();
  const float left = ImGui::CalcTextSize("-0.0000").x + line * 0.6f;
  const ImVec2 p0(origin.x + left, origin.y + line * 0.5f), p1(origin.x + size.x, origin.y + size.y - line * 1.6f);
  if (n == 0 || p1.x <= p0.x || p1.y <= p0.y) {
    ImGui::PopID();
    return;
  }
  auto label = [&](int64_t i) {
    return labels && i < static_cast<int64_t>(labels->size()) ? (*labels)[static_cast<size_t>(i)] : std::to_string(i);
  };
  auto yOf = [&](float v) { return p1.y - (v - range.lo) / (range.hi - range.lo) * (p1.y - p0.y); };
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), grid = ImGui::GetColorU32(ImGuiCol_Border);
  for (float t : niceTicks(range.lo, range.hi, std::max(2, static_cast<int>((p1.y - p0.y) / (line * 2.0f))))) {
    const float y = yOf(t);
    dl->AddLine(ImVec2(p0.x, y), ImVec2(p1.x, y), grid);
    const std::string s = formatValueShort(t);
    dl->AddText(ImVec2(p0.x - ImGui::CalcTextSize(s.c_str()).x - line * 0.3f, y - line * 0.5f), text, s.c_str());
  }
  const float bw = (p1.x - p0.x) / static_cast<float>(n);
  const float base = yOf(std::clamp(0.0f, range.lo, range.hi));
  int64_t hover = -1;
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (hovered && m.x >= p0.x && m.x < p1.x) hover = std::min<int64_t>(n - 1, static_cast<int64_t>((m.x - p0.x) / bw));
  for (int64_t i = 0; i < n; ++i) {
    const float v = values.data[static_cast<size_t>(i)];
    if (!std::isfinite(v)) continue;
    const Rgb8 c = colormapAt(cmap, (v - range.lo) / (range.hi - range.lo));
    const float x0 = p0.x + bw * static_cast<float>(i) + std::min(2.0f, bw * 0.15f), x1 = p0.x + bw * static_cast<float>(i + 1) - std::min(2.0f, bw * 0.15f);
    const float y = yOf(std::clamp(v, range.lo, range.hi));
    dl->AddRectFilled(ImVec2(x0, std::min(y, base)), ImVec2(x1, std::max(y, base)), IM_COL32(c.r, c.g, c.b, 255));
    if (i == hover) dl->AddRect(ImVec2(x0 - 1, std::min(y, base) - 1), ImVec2(x1 + 1, std::max(y, base) + 1), text, 0, 0, 2);
  }
  // Token labels under the bars, thinned to fit.
  float max_w = 0;
  for (int64_t i = 0; i < n; i += std::max<int64_t>(1, n / 256))
    max_w = std::max(max_w, ImGui::CalcTextSize(label(i).c_str()).x);
  const int64_t step = labelStride(bw, max_w + line * 0.5f);
  for (int64_t i = 0; i < n; i += step) {
    const std::string s = label(i);
    const float w = ImGui::CalcTextSize(s.c_str()).x;
    dl->AddText(ImVec2(p0.x + bw * (static_cast<float>(i) + 0.5f) - w * 0.5f, p1.y + line * 0.3f), text, s.c_str());
  }
  if (hover >= 0) {
    ImGui::BeginTooltip();
    ImGui::Text("%s %lld: %s", item_axis.c_str(), static_cast<long long>(hover), label(hover).c_str());
    ImGui::Text("%s: %s", value_label.c_str(), formatValueShort(values.data[static_cast<size_t>(hover)]).c_str());
    ImGui::EndTooltip();
  }
  ImGui::PopID();
}

}  // namespace attn
