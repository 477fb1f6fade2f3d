#include "widgets/plots.h"

#include "widgets/plot_layouts.h"
#include "widgets/primitives_imgui.h"

#include "widgets/colormap.h"
#include "widgets/value_range.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

// The shared legend (legendPrimitives, when `entries` is not empty) above a
// hoverable plot area that fills the rest of `size`.
struct PlotArea {
  ImVec2 origin, size;
  bool hovered = false;
};
PlotArea legendAndArea(const char* button, const std::vector<LegendEntry>& entries, ImVec2 size) {
  const ImVec2 top_left = ImGui::GetCursorScreenPos();
  Primitives prims;
  const float legend_h = legendPrimitives(prims, imguiCanvas(), Box{top_left.x, top_left.y, size.x, 0}, entries, false);
  drawPrimitives(ImGui::GetWindowDrawList(), prims);
  if (legend_h > 0) ImGui::Dummy(ImVec2(size.x, legend_h));
  PlotArea a{ImGui::GetCursorScreenPos(), ImVec2(size.x, std::max(1.0f, size.y - (ImGui::GetCursorScreenPos().y - top_left.y)))};
  ImGui::InvisibleButton(button, a.size);
  a.hovered = ImGui::IsItemHovered();
  return a;
}

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

void categoryGrid(const char* id, const Array& values, const std::vector<std::string>& categories,
                  const std::string& row_axis, const std::string& col_axis, ImVec2 size) {
  ImGui::PushID(id);
  std::vector<Rgb8> colours;
  std::vector<LegendEntry> legend;
  for (size_t i = 0; i < categories.size(); ++i) {
    colours.push_back(headColor(static_cast<int>(i)));
    legend.push_back({colours.back(), categories[i]});
  }
  const PlotArea grid = legendAndArea("##grid", legend, size);
  const ImVec2 origin = grid.origin, area = grid.size;
  const bool hovered = grid.hovered;
  const int64_t rows = values.rank() == 2 ? values.shape[0] : 0, cols = values.rank() == 2 ? values.shape[1] : 0;
  const float line = ImGui::GetTextLineHeight();
  const float left = ImGui::CalcTextSize((row_axis + " 000").c_str()).x + line * 0.5f, top = line * 1.4f;
  if (rows == 0 || cols == 0 || area.x <= left || area.y <= top) {
    ImGui::PopID();
    return;
  }
  // Square cells; many cells are sampled to at most one per pixel.
  const float cell = std::min((area.x - left) / static_cast<float>(cols), (area.y - top) / static_cast<float>(rows));
  const ImVec2 p0(origin.x + left, origin.y + top);
  const int64_t step_r = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(1.0f / cell))), step_c = step_r;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float gap = cell >= 8.0f ? 1.0f : 0.0f;
  for (int64_t r = 0; r < rows; r += step_r)
    for (int64_t c = 0; c < cols; c += step_c) {
      const float v = values.data[static_cast<size_t>(r * cols + c)];
      const int k = std::isfinite(v) ? static_cast<int>(v) : -1;
      const ImU32 col = k >= 0 && k < static_cast<int>(colours.size()) ? toU32(colours[static_cast<size_t>(k)]) : IM_COL32(128, 128, 128, 255);
      const ImVec2 a(p0.x + cell * static_cast<float>(c), p0.y + cell * static_cast<float>(r));
      dl->AddRectFilled(ImVec2(a.x + gap, a.y + gap), ImVec2(a.x + cell * static_cast<float>(step_c), a.y + cell * static_cast<float>(step_r)), col);
    }
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const int64_t label_r = labelStride(cell, line * 1.1f);
  for (int64_t r = 0; r < rows; r += label_r) {
    const std::string s = row_axis + " " + std::to_string(r);
    dl->AddText(ImVec2(p0.x - ImGui::CalcTextSize(s.c_str()).x - line * 0.3f, p0.y + cell * (static_cast<float>(r) + 0.5f) - line * 0.5f), text, s.c_str());
  }
  const int64_t label_c = labelStride(cell, ImGui::CalcTextSize("000").x * 1.5f);
  for (int64_t c = 0; c < cols; c += label_c) {
    const std::string s = std::to_string(c);
    dl->AddText(ImVec2(p0.x + cell * (static_cast<float>(c) + 0.5f) - ImGui::CalcTextSize(s.c_str()).x * 0.5f, origin.y), text, s.c_str());
  }
  dl->AddText(ImVec2(origin.x, origin.y), dim, (col_axis + " \xE2\x86\x92").c_str());
  const ImVec2 m = ImGui::GetIO().MousePos;
  const int64_t r = static_cast<int64_t>(std::floor((m.y - p0.y) / cell)), c = static_cast<int64_t>(std::floor((m.x - p0.x) / cell));
  if (hovered && r >= 0 && r < rows && c >= 0 && c < cols) {
    const float v = values.data[static_cast<size_t>(r * cols + c)];
    const int k = std::isfinite(v) ? static_cast<int>(v) : -1;
    ImGui::SetTooltip("%s %lld, %s %lld: %s", row_axis.c_str(), static_cast<long long>(r), col_axis.c_str(),
                      static_cast<long long>(c),
                      k >= 0 && k < static_cast<int>(categories.size()) ? categories[static_cast<size_t>(k)].c_str() : "?");
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
  const BarsLayout g = barsPrimitives(prims, imguiCanvas(), area, values, nullptr, ValueRange{0.0f, std::max(1e-6f, hi)},
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
