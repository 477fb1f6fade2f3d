#include "widgets/plots.h"

#include "widgets/plot_layouts.h"
#include "widgets/primitives_imgui.h"

#include "widgets/colormap.h"
#include "widgets/value_range.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

// Reserves `size` as one hoverable item at the cursor: the area a layout fills.
Box reserve(const char* button, ImVec2 size, bool& hovered) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(button, ImVec2(std::max(1.0f, size.x), std::max(1.0f, size.y)));
  hovered = ImGui::IsItemHovered();
  return Box{origin.x, origin.y, size.x, size.y};
}

}  // namespace

void linePlot(const char* id, const Array& curves, const std::string& series_axis, const std::string& x_axis,
              const std::vector<Marker>& markers, ImVec2 size, const std::vector<std::string>& series_names,
              const std::vector<Marker>& levels, int64_t reveal) {
  ImGui::PushID(id);
  bool hovered = false;
  const Box area = reserve("##plot", size, hovered);
  const int64_t series = curves.rank() == 2 ? curves.shape[0] : 1;
  const std::vector<std::string> names = seriesNames(series, series_names, series_axis);
  Primitives prims;
  const CurvesLayout g = curvesPrimitives(prims, imguiCanvas(), area, curves, names, x_axis, markers, levels, reveal);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  drawPrimitives(dl, prims);
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (hovered && g.n > 0 && m.x >= g.plot.x && m.x <= g.plot.right()) {
    const int64_t x = g.indexAt(m.x);
    const float sx = g.xAt(static_cast<double>(x));
    dl->AddLine(ImVec2(sx, g.plot.y), ImVec2(sx, g.plot.bottom()), ImGui::GetColorU32(ImGuiCol_Text));
    ImGui::BeginTooltip();
    ImGui::Text("%s = %lld", x_axis.c_str(), static_cast<long long>(x));
    for (int64_t s = 0; s < series; ++s)
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(toU32(headColor(static_cast<int>(s)))), "%s: %s",
                         names[static_cast<size_t>(s)].c_str(), formatValueShort(curves.data[static_cast<size_t>(s * g.n + x)]).c_str());
    ImGui::EndTooltip();
  }
  ImGui::PopID();
}

void pointPlot(const char* id, const Extra& e, ImVec2 size) {
  ImGui::PushID(id);
  bool hovered = false;
  const Box area = reserve("##points", size, hovered);
  Primitives prims;
  const PointsLayout g = pointsPrimitives(prims, imguiCanvas(), area, e);
  drawPrimitives(ImGui::GetWindowDrawList(), prims);
  if (hovered) {
    // The nearest point within a line's height.
    const int64_t n = e.value.rank() == 2 && e.value.shape[1] == 3 ? e.value.shape[0] : 0;
    const ImVec2 m = ImGui::GetIO().MousePos;
    const float line = ImGui::GetTextLineHeight();
    int64_t best = -1;
    float best_d = line * line;
    for (int64_t i = 0; i < n; ++i) {
      const float* p = e.value.data.data() + 3 * i;
      const float dx = g.cx + p[0] * g.scale - m.x, dy = g.cy - p[1] * g.scale - m.y;
      if (dx * dx + dy * dy < best_d) best_d = dx * dx + dy * dy, best = i;
    }
    if (best >= 0) {
      const auto cat = static_cast<size_t>(e.value.data[static_cast<size_t>(3 * best + 2)]);
      ImGui::SetTooltip("point %lld: %s", static_cast<long long>(best), cat < e.categories.size() ? e.categories[cat].c_str() : "?");
    }
  }
  ImGui::PopID();
}

void categoryBars(const char* id, const Array& values, const std::vector<std::string>& categories,
                  const std::string& value_label, ImVec2 size) {
  ImGui::PushID(id);
  bool hovered = false;
  const Box area = reserve("##bars", size, hovered);
  float hi = 0;
  for (const float v : values.data) hi = std::max(hi, v);
  Primitives prims;
  const BarsLayout g = barsPrimitives(prims, imguiCanvas(), area, values, id, nullptr, ValueRange{0.0f, std::max(1e-6f, hi)},
                                      Colormap::Viridis, true);
  drawPrimitives(ImGui::GetWindowDrawList(), prims);
  const ImVec2 m = ImGui::GetIO().MousePos;
  const int64_t bar = hovered && m.y >= g.plot.y && m.y < g.plot.bottom() ? g.barAt(m.x) : -1;
  if (bar >= 0 && g.bars == g.items) {
    const auto i = static_cast<size_t>(bar);
    ImGui::SetTooltip("%s: %s %s", i < categories.size() ? categories[i].c_str() : "?", formatValueShort(values.data[i]).c_str(),
                      value_label.c_str());
  }
  ImGui::PopID();
}

void categoryStrip(const char* id, const Array& categories_of, const std::vector<std::string>& tokens,
                   const std::vector<std::string>& categories, HeatmapRenderer& gl, ImVec2 size) {
  ImGui::PushID(id);
  bool hovered = false;
  const Box area = reserve("##strip", size, hovered);
  Primitives prims;
  // The raster's texture is named by this widget's id: one per strip on screen.
  const TokenStripLayout g = tokenStripPrimitives(prims, imguiCanvas(), area, categories_of, tokens,
                                                  "token-strip/" + std::to_string(ImGui::GetID("##strip")));
  drawPrimitives(ImGui::GetWindowDrawList(), prims, &gl);
  const ImVec2 m = ImGui::GetIO().MousePos;
  const int64_t hover = hovered ? g.tokenAt(m.x, m.y) : -1;
  if (hover >= 0) {
    const auto c = static_cast<size_t>(categories_of.data[static_cast<size_t>(hover)]);
    ImGui::SetTooltip("token %lld: %s\n%s", static_cast<long long>(hover),
                      hover < static_cast<int64_t>(tokens.size()) ? tokens[static_cast<size_t>(hover)].c_str() : "",
                      c < categories.size() ? categories[c].c_str() : "?");
  }
  ImGui::PopID();
}

void stackedBars(const char* id, const Array& values, const std::vector<std::string>& row_labels,
                 const std::string& row_axis, const std::string& segment_axis, ImVec2 size) {
  ImGui::PushID(id);
  bool hovered = false;
  const Box area = reserve("##stacked", size, hovered);
  Primitives prims;
  const StackedLayout g = stackedPrimitives(prims, imguiCanvas(), area, values, row_labels, row_axis, segment_axis);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  drawPrimitives(dl, prims);
  const ImVec2 m = ImGui::GetIO().MousePos;
  const int64_t t = hovered && m.y >= g.plot.y && m.y < g.plot.bottom() ? g.barAt(m.x) : -1;
  if (t >= 0) {
    const int64_t n = values.shape[1];
    const float x0 = g.plot.x + g.bar_w * static_cast<float>(t);
    dl->AddRectFilled(ImVec2(x0, g.plot.y), ImVec2(x0 + g.bar_w, g.plot.bottom()), ImGui::GetColorU32(ImGuiCol_Text, 0.12f));
    ImGui::BeginTooltip();
    ImGui::Text("%s %lld", row_axis.c_str(), static_cast<long long>(t));
    if (t < static_cast<int64_t>(row_labels.size())) ImGui::TextUnformatted(row_labels[static_cast<size_t>(t)].c_str());
    for (int64_t k = 0; k < g.used; ++k)
      if (const float v = values.data[static_cast<size_t>(t * n + k)]; v > 0.0f)
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(toU32(headColor(static_cast<int>(k)))), "%s %lld: %s", segment_axis.c_str(),
                           static_cast<long long>(k + 1), formatValueShort(v).c_str());
    ImGui::EndTooltip();
  }
  ImGui::PopID();
}

}  // namespace attn
