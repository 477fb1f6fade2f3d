#include "widgets/plots.h"

#include "widgets/colormap.h"
#include "widgets/value_range.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

ImU32 toU32(Rgb8 c, int alpha = 255) { return IM_COL32(c.r, c.g, c.b, alpha); }

// One legend row of coloured swatches, wrapping to `right`.
void legend(const std::vector<std::string>& names, const std::vector<Rgb8>& colours, float right) {
  const float s = ImGui::GetTextLineHeight();
  for (size_t i = 0; i < names.size(); ++i) {
    const float w = s * 1.1f + ImGui::CalcTextSize(names[i].c_str()).x;
    if (i > 0 && ImGui::GetItemRectMax().x + s + w < right) ImGui::SameLine(0, s);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + s * 0.15f), ImVec2(p.x + s * 0.7f, p.y + s * 0.85f),
                                              toU32(colours[i]));
    ImGui::Dummy(ImVec2(s * 0.8f, s));
    ImGui::SameLine(0, s * 0.3f);
    ImGui::TextUnformatted(names[i].c_str());
  }
}

}  // namespace

void linePlot(const char* id, const Array& curves, const std::string& series_axis, const std::string& x_axis,
              const std::string& y_label, const std::vector<Marker>& markers, ImVec2 size) {
  ImGui::PushID(id);
  const int64_t series = curves.rank() == 2 ? curves.shape[0] : 1, n = curves.rank() == 2 ? curves.shape[1] : curves.size();
  std::vector<std::string> names;
  std::vector<Rgb8> colours;
  for (int64_t s = 0; s < series; ++s) {
    names.push_back(series_axis + " " + std::to_string(s));
    colours.push_back(headColor(static_cast<int>(s)));
  }
  const ImVec2 top_left = ImGui::GetCursorScreenPos();
  if (series > 1) legend(names, colours, top_left.x + size.x);
  const float legend_h = ImGui::GetCursorScreenPos().y - top_left.y;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 area(size.x, std::max(1.0f, size.y - legend_h));
  ImGui::InvisibleButton("##plot", area);
  const bool hovered = ImGui::IsItemHovered();
  float lo = 0.0f, hi = 0.0f;
  for (float v : curves.data)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(hi > lo)) hi = lo + 1.0f;
  const float line = ImGui::GetTextLineHeight();
  const ImVec2 p0(origin.x + ImGui::CalcTextSize("-0.0000").x + line * 0.8f, origin.y + line * 1.4f);
  const ImVec2 p1(origin.x + area.x - line, origin.y + area.y - line * 2.6f);
  if (n < 1 || p1.x <= p0.x || p1.y <= p0.y) {
    ImGui::PopID();
    return;
  }
  const double x_hi = std::max<double>(1.0, static_cast<double>(n - 1));
  auto X = [&](double x) { return p0.x + static_cast<float>(x / x_hi) * (p1.x - p0.x); };
  auto Y = [&](float y) { return p1.y - (y - lo) / (hi - lo) * (p1.y - p0.y); };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), grid = ImGui::GetColorU32(ImGuiCol_Border),
              dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  for (float t : niceTicks(lo, hi, std::max(2, static_cast<int>((p1.y - p0.y) / (line * 2.5f))))) {
    dl->AddLine(ImVec2(p0.x, Y(t)), ImVec2(p1.x, Y(t)), grid);
    const std::string s = formatValueShort(t);
    dl->AddText(ImVec2(p0.x - ImGui::CalcTextSize(s.c_str()).x - line * 0.3f, Y(t) - line * 0.5f), text, s.c_str());
  }
  for (float t : niceTicks(0.0f, static_cast<float>(x_hi), std::max(2, static_cast<int>((p1.x - p0.x) / (line * 5.0f))))) {
    dl->AddLine(ImVec2(X(t), p1.y), ImVec2(X(t), p1.y + 4), text);
    const std::string s = formatValueShort(t);
    dl->AddText(ImVec2(X(t) - ImGui::CalcTextSize(s.c_str()).x * 0.5f, p1.y + 5), text, s.c_str());
  }
  dl->AddRect(p0, p1, grid);
  dl->AddText(ImVec2((p0.x + p1.x - ImGui::CalcTextSize(x_axis.c_str()).x) * 0.5f, p1.y + line * 1.3f), dim, x_axis.c_str());
  dl->AddText(ImVec2(p0.x, origin.y), dim, y_label.c_str());
  dl->PushClipRect(ImVec2(p0.x, origin.y), ImVec2(p1.x + line, p1.y + 1), true);
  // Dashed lines; labels inside the top of the plot, staggered so neighbours do not overlap.
  for (size_t i = 0; i < markers.size(); ++i) {
    const Marker& m = markers[i];
    const ImU32 c = m.series >= 0 ? toU32(headColor(m.series)) : text;
    const float x = X(m.x);
    for (float y = p0.y; y < p1.y; y += 8.0f) dl->AddLine(ImVec2(x, y), ImVec2(x, std::min(p1.y, y + 4.0f)), c, 1.5f);
    dl->AddText(ImVec2(x + 3, p0.y + 2 + line * static_cast<float>(i % 3)), c, m.label.c_str());
  }
  // Step through x at about one sample per pixel.
  const int64_t step = std::max<int64_t>(1, n / std::max<int64_t>(1, static_cast<int64_t>(p1.x - p0.x)));
  for (int64_t s = 0; s < series; ++s) {
    std::vector<ImVec2> pts;
    for (int64_t x = 0; x < n; x += step) {
      const float v = curves.data[static_cast<size_t>(s * n + x)];
      if (std::isfinite(v)) pts.emplace_back(X(static_cast<double>(x)), Y(v));
    }
    if (n == 1 && !pts.empty()) dl->AddCircleFilled(pts[0], 3.0f, toU32(colours[static_cast<size_t>(s)]));
    dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), toU32(colours[static_cast<size_t>(s)]), 0, 2.0f);
  }
  dl->PopClipRect();
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (hovered && m.x >= p0.x && m.x <= p1.x) {
    const int64_t x = std::clamp<int64_t>(std::lround((m.x - p0.x) / (p1.x - p0.x) * x_hi), 0, n - 1);
    dl->AddLine(ImVec2(X(static_cast<double>(x)), p0.y), ImVec2(X(static_cast<double>(x)), p1.y), text);
    ImGui::BeginTooltip();
    ImGui::Text("%s = %lld", x_axis.c_str(), static_cast<long long>(x));
    for (int64_t s = 0; s < series; ++s) {
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(toU32(colours[static_cast<size_t>(s)])), "%s: %s",
                         names[static_cast<size_t>(s)].c_str(),
                         formatValueShort(curves.data[static_cast<size_t>(s * n + x)]).c_str());
    }
    ImGui::EndTooltip();
  }
  ImGui::PopID();
}

void categoryGrid(const char* id, const Array& values, const std::vector<std::string>& categories,
                  const std::string& row_axis, const std::string& col_axis, ImVec2 size) {
  ImGui::PushID(id);
  std::vector<Rgb8> colours;
  for (size_t i = 0; i < categories.size(); ++i) colours.push_back(headColor(static_cast<int>(i)));
  const ImVec2 top_left = ImGui::GetCursorScreenPos();
  legend(categories, colours, top_left.x + size.x);
  const float legend_h = ImGui::GetCursorScreenPos().y - top_left.y;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 area(size.x, std::max(1.0f, size.y - legend_h));
  ImGui::InvisibleButton("##grid", area);
  const bool hovered = ImGui::IsItemHovered();
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
  const int64_t label_r = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(line * 1.1f / cell)));
  for (int64_t r = 0; r < rows; r += label_r) {
    const std::string s = row_axis + " " + std::to_string(r);
    dl->AddText(ImVec2(p0.x - ImGui::CalcTextSize(s.c_str()).x - line * 0.3f, p0.y + cell * (static_cast<float>(r) + 0.5f) - line * 0.5f), text, s.c_str());
  }
  const int64_t label_c = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(ImGui::CalcTextSize("000").x * 1.5f / cell)));
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

void stackedBars(const char* id, const Array& values, const std::vector<std::string>& row_labels,
                 const std::string& row_axis, const std::string& segment_axis, const std::string& y_label, ImVec2 size) {
  ImGui::PushID(id);
  const int64_t rows = values.rank() == 2 ? values.shape[0] : 0, n = values.rank() == 2 ? values.shape[1] : 0;
  auto at = [&](int64_t t, int64_t k) { return values.data[static_cast<size_t>(t * n + k)]; };
  // Segments used anywhere, and the tallest stack.
  int64_t used = 0;
  float hi = 0.0f;
  for (int64_t t = 0; t < rows; ++t) {
    float sum = 0.0f;
    for (int64_t k = 0; k < n; ++k) {
      if (std::isfinite(at(t, k)) && at(t, k) > 0.0f) {
        used = std::max(used, k + 1);
        sum += at(t, k);
      }
    }
    hi = std::max(hi, sum);
  }
  if (!(hi > 0.0f)) hi = 1.0f;
  std::vector<std::string> names;
  std::vector<Rgb8> colours;
  for (int64_t k = 0; k < used; ++k) {
    names.push_back(segment_axis + " " + std::to_string(k + 1));
    colours.push_back(headColor(static_cast<int>(k)));
  }
  const ImVec2 top_left = ImGui::GetCursorScreenPos();
  legend(names, colours, top_left.x + size.x);
  const float legend_h = ImGui::GetCursorScreenPos().y - top_left.y;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 area(size.x, std::max(1.0f, size.y - legend_h));
  ImGui::InvisibleButton("##stacked", area);
  const bool hovered = ImGui::IsItemHovered();
  int label_lines = 1;
  float label_w = 0.0f;
  for (const std::string& l : row_labels) {
    label_lines = std::max(label_lines, 1 + static_cast<int>(std::count(l.begin(), l.end(), '\n')));
    label_w = std::max(label_w, ImGui::CalcTextSize(l.c_str()).x);
  }
  const float line = ImGui::GetTextLineHeight();
  const ImVec2 p0(origin.x + ImGui::CalcTextSize("-0.000").x + line * 0.8f, origin.y + line * 1.4f);
  const ImVec2 p1(origin.x + area.x - line, origin.y + area.y - line * (static_cast<float>(label_lines) + 1.6f));
  if (rows == 0 || p1.x <= p0.x || p1.y <= p0.y) {
    ImGui::PopID();
    return;
  }
  auto Y = [&](float v) { return p1.y - v / hi * (p1.y - p0.y); };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), grid = ImGui::GetColorU32(ImGuiCol_Border),
              dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  for (float t : niceTicks(0.0f, hi, std::max(2, static_cast<int>((p1.y - p0.y) / (line * 2.5f))))) {
    dl->AddLine(ImVec2(p0.x, Y(t)), ImVec2(p1.x, Y(t)), grid);
    const std::string s = formatValueShort(t);
    dl->AddText(ImVec2(p0.x - ImGui::CalcTextSize(s.c_str()).x - line * 0.3f, Y(t) - line * 0.5f), text, s.c_str());
  }
  dl->AddText(ImVec2(p0.x, origin.y), dim, y_label.c_str());
  const float bw = (p1.x - p0.x) / static_cast<float>(rows), gap = std::min(3.0f, bw * 0.15f);
  for (int64_t t = 0; t < rows; ++t) {
    float base = 0.0f;
    const float x0 = p0.x + bw * static_cast<float>(t) + gap, x1 = p0.x + bw * static_cast<float>(t + 1) - gap;
    for (int64_t k = 0; k < used; ++k) {
      const float v = at(t, k);
      if (!std::isfinite(v) || v <= 0.0f) continue;
      dl->AddRectFilled(ImVec2(x0, Y(base + v)), ImVec2(x1, Y(base)), toU32(colours[static_cast<size_t>(k)]));
      if (bw > 6.0f) dl->AddLine(ImVec2(x0, Y(base + v)), ImVec2(x1, Y(base + v)), IM_COL32(255, 255, 255, 140));
      base += v;
    }
  }
  dl->AddLine(ImVec2(p0.x, p1.y), ImVec2(p1.x, p1.y), text);
  // Captions under the bars, thinned so they do not overlap.
  const int64_t stride = std::max<int64_t>(1, static_cast<int64_t>(std::ceil((label_w + line * 0.4f) / bw)));
  for (int64_t t = 0; t < rows && t < static_cast<int64_t>(row_labels.size()); t += stride) {
    const std::string& l = row_labels[static_cast<size_t>(t)];
    float y = p1.y + line * 0.2f;
    for (size_t a = 0; a <= l.size();) {
      const size_t b = std::min(l.find('\n', a), l.size());
      const std::string part = l.substr(a, b - a);
      dl->AddText(ImVec2(p0.x + bw * (static_cast<float>(t) + 0.5f) - ImGui::CalcTextSize(part.c_str()).x * 0.5f, y),
                  text, part.c_str());
      y += line;
      a = b + 1;
    }
  }
  dl->AddText(ImVec2((p0.x + p1.x - ImGui::CalcTextSize(row_axis.c_str()).x) * 0.5f,
                     p1.y + line * (static_cast<float>(label_lines) + 0.4f)),
              dim, row_axis.c_str());
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (hovered && m.x >= p0.x && m.x < p1.x) {
    const int64_t t = std::min<int64_t>(rows - 1, static_cast<int64_t>((m.x - p0.x) / bw));
    ImGui::BeginTooltip();
    ImGui::Text("%s %lld", row_axis.c_str(), static_cast<long long>(t));
    if (t < static_cast<int64_t>(row_labels.size())) ImGui::TextUnformatted(row_labels[static_cast<size_t>(t)].c_str());
    for (int64_t k = 0; k < used; ++k)
      if (at(t, k) > 0.0f)
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(toU32(colours[static_cast<size_t>(k)])), "%s: %s",
                           names[static_cast<size_t>(k)].c_str(), formatValueShort(at(t, k)).c_str());
    ImGui::EndTooltip();
  }
  ImGui::PopID();
}

}  // namespace attn
