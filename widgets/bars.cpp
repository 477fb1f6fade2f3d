#include "widgets/bars.h"

#include "widgets/plot_layouts.h"
#include "widgets/primitives_imgui.h"

#include <algorithm>
#include <cmath>

namespace attn {

void valueBars(const char* id, const Array& values, const std::vector<std::string>* labels, const ValueRange& range,
               Colormap cmap, const std::string& value_label, ImVec2 size, const std::string& item_axis, bool colour_per_bar) {
  ImGui::PushID(id);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##bars", ImVec2(std::max(1.0f, size.x), std::max(1.0f, size.y)));
  const bool hovered = ImGui::IsItemHovered();
  Primitives prims;
  const BarsLayout g =
      barsPrimitives(prims, imguiCanvas(), Box{origin.x, origin.y, size.x, size.y}, values, id, labels, range, cmap, colour_per_bar);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  drawPrimitives(dl, prims);
  const ImVec2 m = ImGui::GetIO().MousePos;
  const int64_t bar = hovered && m.y >= g.plot.y && m.y < g.plot.bottom() ? g.barAt(m.x) : -1;
  if (bar >= 0) {
    const float x0 = g.plot.x + g.bar_w * static_cast<float>(bar);
    dl->AddRectFilled(ImVec2(x0, g.plot.y), ImVec2(x0 + g.bar_w, g.plot.bottom()), ImGui::GetColorU32(ImGuiCol_Text, 0.12f));
    auto label = [&](int64_t i) {
      return labels && i < static_cast<int64_t>(labels->size()) ? (*labels)[static_cast<size_t>(i)] : std::to_string(i);
    };
    const int64_t first = g.first(bar), last = g.first(bar + 1) - 1;
    ImGui::BeginTooltip();
    if (first == last) {
      ImGui::Text("%s %lld: %s", item_axis.c_str(), static_cast<long long>(first), label(first).c_str());
      ImGui::Text("%s: %s", value_label.c_str(), formatValueShort(values.data[static_cast<size_t>(first)]).c_str());
    } else {  // one bar per pixel: the mean of its items
      double sum = 0;
      int64_t count = 0;
      for (int64_t i = first; i <= last; ++i)
        if (const float v = values.data[static_cast<size_t>(i)]; std::isfinite(v)) sum += v, ++count;
      ImGui::Text("%s %lld … %lld", item_axis.c_str(), static_cast<long long>(first), static_cast<long long>(last));
      ImGui::Text("%s (mean): %s", value_label.c_str(), formatValueShort(sum / static_cast<double>(std::max<int64_t>(1, count))).c_str());
    }
    ImGui::EndTooltip();
  }
  ImGui::PopID();
}

}  // namespace attn
