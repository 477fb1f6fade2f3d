#include "widgets/plots.h"

#include "widgets/primitives_imgui.h"

#include "widgets/colormap.h"
#include "widgets/value_range.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace attn {

namespace {


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

// A legend (when `names` is not empty) above a hoverable plot area that
// fills the rest of `size`.
struct PlotArea {
  ImVec2 origin, size;
  bool hovered = false;
};
PlotArea legendAndArea(const char* button, const std::vector<std::string>& names, const std::vector<Rgb8>& colours,
                       ImVec2 size) {
  const ImVec2 top_left = ImGui::GetCursorScreenPos();
  if (!names.empty()) legend(names, colours, top_left.x + size.x);
  const float legend_h = ImGui::GetCursorScreenPos().y - top_left.y;
  PlotArea a{ImGui::GetCursorScreenPos(), ImVec2(size.x, std::max(1.0f, size.y - legend_h))};
  ImGui::InvisibleButton(button, a.size);
  a.hovered = ImGui::IsItemHovered();
  return a;
}

}  // namespace

void linePlot(const char* id, const Array& curves, const std::string& series_axis, const std::string& x_axis,
              const std::string& y_label, const std::vector<Marker>& markers, ImVec2 size,
              const std::vector<std::string>& series_names, const std::vector<Marker>& levels, int64_t reveal) {
  ImGui::PushID(id);
  const int64_t series = curves.rank() == 2 ? curves.shape[0] : 1, n = curves.rank() == 2 ? curves.shape[1] : curves.size();
  std::vector<std::string> names;
  std::vector<Rgb8> colours;
  for (int64_t s = 0; s < series; ++s) {
    names.push_back(s < static_cast<int64_t>(series_names.size()) ? series_names[static_cast<size_t>(s)]
                                                                  : series_axis + " " + std::to_string(s));
    colours.push_back(headColor(static_cast<int>(s)));
  }
  // One series needs no legend.
  const PlotArea plot = legendAndArea("##plot", series > 1 ? names : std::vector<std::string>{}, colours, size);
  const ImVec2 origin = plot.origin, area = plot.size;
  const bool hovered = plot.hovered;
  float lo = 0.0f, hi = 0.0f;
  for (float v : curves.data)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  for (const Marker& l : levels) hi = std::max(hi, static_cast<float>(l.x));
  if (!(hi > lo)) hi = lo + 1.0f;
  const float line = ImGui::GetTextLineHeight();
  const float plot_left = origin.x + ImGui::CalcTextSize("-0.0000").x + line * 0.8f, plot_right = origin.x + area.x - line;
  const double x_hi = std::max<double>(1.0, static_cast<double>(n - 1));
  auto X = [&](double x) { return plot_left + static_cast<float>(x / x_hi) * (plot_right - plot_left); };
  // Marker labels in rows above the plot, none overlapping (the figures' rule, stackLabels).
  std::vector<float> centres, widths;
  for (const Marker& m : markers) {
    centres.push_back(X(m.x));
    widths.push_back(ImGui::CalcTextSize(m.label.c_str()).x);
  }
  const LabelRows labels = stackLabels(centres, widths, plot_left, plot_right, line * 0.5f);
  auto labelTop = [&](int row) { return origin.y + line * (1.3f + static_cast<float>(row) * 1.1f); };  // under the y label
  const ImVec2 p0(plot_left, labelTop(labels.rows) + line * 0.2f);
  const ImVec2 p1(plot_right, origin.y + area.y - line * 2.6f);
  if (n < 1 || p1.x <= p0.x || p1.y <= p0.y) {
    ImGui::PopID();
    return;
  }
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
  // Dashed lines through the plot, their labels in the rows above it.
  for (size_t i = 0; i < markers.size(); ++i) {
    const Marker& m = markers[i];
    const ImU32 c = m.series >= 0 ? toU32(headColor(m.series)) : text;
    const float x = X(m.x);
    for (float y = p0.y; y < p1.y; y += 8.0f) dl->AddLine(ImVec2(x, y), ImVec2(x, std::min(p1.y, y + 4.0f)), c, 1.5f);
    dl->AddText(ImVec2(labels.placed[i].left, labelTop(labels.placed[i].row)), c, m.label.c_str());
  }
  for (const Marker& l : levels) {
    const float y = Y(static_cast<float>(l.x));
    for (float x = p0.x; x < p1.x; x += 8.0f) dl->AddLine(ImVec2(x, y), ImVec2(std::min(p1.x, x + 4.0f), y), text, 1.5f);
    const ImVec2 ts = ImGui::CalcTextSize(l.label.c_str());
    dl->AddText(ImVec2(p1.x - ts.x - line * 0.3f, y - ts.y - 2.0f), text, l.label.c_str());
  }
  const int64_t shown = reveal >= 0 ? std::min(reveal + 1, n) : n;
  if (reveal >= 0) {  // the step the timeline is at
    const float x = X(static_cast<double>(shown - 1));
    dl->AddRectFilled(ImVec2(x - 2.0f, p0.y), ImVec2(x + 2.0f, p1.y), ImGui::GetColorU32(ImGuiCol_PlotHistogram, 0.6f));
  }
  dl->PushClipRect(ImVec2(p0.x, origin.y), ImVec2(p1.x + line, p1.y + 1), true);
  // Step through x at about one sample per pixel.
  const int64_t step = std::max<int64_t>(1, n / std::max<int64_t>(1, static_cast<int64_t>(p1.x - p0.x)));
  for (int64_t s = 0; s < series; ++s) {
    std::vector<ImVec2> pts;
    for (int64_t x = 0; x < shown; x += step) {
      const float v = curves.data[static_cast<size_t>(s * n + x)];
      if (std::isfinite(v)) pts.emplace_back(X(static_cast<double>(x)), Y(v));
    }
    if ((n == 1 || reveal >= 0) && !pts.empty()) dl->AddCircleFilled(pts.back(), 4.0f, toU32(colours[static_cast<size_t>(s)]));
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

void pointPlot(const char* id, const Extra& e, ImVec2 size) {
  ImGui::PushID(id);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##points", ImVec2(std::max(1.0f, size.x), std::max(1.0f, size.y)));
  const int64_t n = e.value.rank() == 2 && e.value.shape[1] == 3 ? e.value.shape[0] : 0;
  float radius = 1e-6f;
  for (int64_t i = 0; i < n; ++i)
    radius = std::max(radius, std::hypot(e.value.data[static_cast<size_t>(3 * i)], e.value.data[static_cast<size_t>(3 * i + 1)]));
  for (const Arrow& a : e.arrows) radius = std::max(radius, std::hypot(a.x, a.y));
  const float line = ImGui::GetTextLineHeight();
  const float half = std::max(1.0f, std::min(size.x, size.y) * 0.5f - line);
  const ImVec2 c(origin.x + size.x * 0.5f, origin.y + size.y * 0.5f);
  const float k = half / (radius * 1.05f);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // Sectors: between consecutive rays, tinted in the category of the sector.
  std::vector<Marker> rays = e.markers;
  std::sort(rays.begin(), rays.end(), [](const Marker& a, const Marker& b) { return a.x < b.x; });
  for (size_t i = 0; i < rays.size(); ++i) {
    const double a0 = rays[i].x, a1 = i + 1 < rays.size() ? rays[i + 1].x : rays[0].x + 2 * std::numbers::pi;
    // Filled as convex pieces of at most 90°: one polygon each, no seams between triangles.
    const int pieces = std::max(1, static_cast<int>(std::ceil((a1 - a0) / (std::numbers::pi / 2))));
    for (int k = 0; k < pieces; ++k) {
      const double b0 = a0 + (a1 - a0) * k / pieces, b1 = a0 + (a1 - a0) * (k + 1) / pieces;
      std::vector<ImVec2> fan{c};
      // Screen y grows downwards: the angle θ is drawn counter-clockwise.
      for (int t = 0; t <= 24; ++t) {
        const double th = b0 + (b1 - b0) * t / 24;
        fan.emplace_back(c.x + half * static_cast<float>(std::cos(th)), c.y - half * static_cast<float>(std::sin(th)));
      }
      dl->AddConvexPolyFilled(fan.data(), static_cast<int>(fan.size()), toU32(headColor(rays[i].series), 40));
    }
    const ImVec2 edge(c.x + half * static_cast<float>(std::cos(a0)), c.y - half * static_cast<float>(std::sin(a0)));
    dl->AddLine(c, edge, toU32(headColor(rays[i].series), 200), 1.5f);
  }
  dl->AddCircle(c, half, ImGui::GetColorU32(ImGuiCol_Border), 96);
  for (int64_t i = 0; i < n; ++i) {
    const float* p = e.value.data.data() + 3 * i;
    dl->AddCircleFilled(ImVec2(c.x + p[0] * k, c.y - p[1] * k), std::max(1.5f, line * 0.18f), toU32(headColor(static_cast<int>(p[2]))), 8);
  }
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  for (const Arrow& a : e.arrows) {
    const ImVec2 tip(c.x + a.x * k, c.y - a.y * k);
    const ImU32 col = a.category >= 0 ? toU32(headColor(a.category)) : text;
    dl->AddLine(c, tip, IM_COL32(0, 0, 0, 200), 3.5f);
    dl->AddLine(c, tip, col, 2.0f);
    dl->AddCircleFilled(tip, 3.5f, col);
    dl->AddText(ImVec2(tip.x + 3, tip.y - line), text, a.label.c_str());
  }
  if (ImGui::IsItemHovered()) {
    // The nearest point within a few pixels.
    const ImVec2 m = ImGui::GetIO().MousePos;
    int64_t best = -1;
    float best_d = line * line;
    for (int64_t i = 0; i < n; ++i) {
      const float* p = e.value.data.data() + 3 * i;
      const float dx = c.x + p[0] * k - m.x, dy = c.y - p[1] * k - m.y;
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
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##bars", ImVec2(std::max(1.0f, size.x), std::max(1.0f, size.y)));
  const int64_t n = values.size();
  const float line = ImGui::GetTextLineHeight();
  const ImVec2 p0(origin.x + ImGui::CalcTextSize("00000").x + line * 0.6f, origin.y + line * 0.5f);
  const ImVec2 p1(origin.x + size.x, origin.y + size.y - line * 1.6f);
  float hi = 0;
  for (const float v : values.data) hi = std::max(hi, v);
  if (n == 0 || hi <= 0 || p1.x <= p0.x || p1.y <= p0.y) {
    ImGui::PopID();
    return;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), grid = ImGui::GetColorU32(ImGuiCol_Border);
  auto Y = [&](float v) { return p1.y - v / hi * (p1.y - p0.y); };
  for (const float t : niceTicks(0, hi, std::max(2, static_cast<int>((p1.y - p0.y) / (line * 2.0f))))) {
    dl->AddLine(ImVec2(p0.x, Y(t)), ImVec2(p1.x, Y(t)), grid);
    const std::string s = formatValueShort(t);
    dl->AddText(ImVec2(p0.x - ImGui::CalcTextSize(s.c_str()).x - line * 0.3f, Y(t) - line * 0.5f), text, s.c_str());
  }
  const float bw = (p1.x - p0.x) / static_cast<float>(n);
  const int64_t label_step = labelStride(bw, ImGui::CalcTextSize("000").x * 1.4f);
  const ImVec2 m = ImGui::GetIO().MousePos;
  const bool hovered = ImGui::IsItemHovered() && m.x >= p0.x && m.x < p1.x;
  for (int64_t i = 0; i < n; ++i) {
    const float x0 = p0.x + bw * static_cast<float>(i), gap = std::min(2.0f, bw * 0.15f);
    dl->AddRectFilled(ImVec2(x0 + gap, Y(values.data[static_cast<size_t>(i)])), ImVec2(x0 + bw - gap, p1.y),
                      toU32(headColor(static_cast<int>(i))));
    if (i % label_step == 0) {
      const std::string s = std::to_string(i);
      dl->AddText(ImVec2(x0 + bw * 0.5f - ImGui::CalcTextSize(s.c_str()).x * 0.5f, p1.y + line * 0.3f), text, s.c_str());
    }
  }
  if (hovered) {
    const auto i = static_cast<size_t>(std::min<int64_t>(n - 1, static_cast<int64_t>((m.x - p0.x) / bw)));
    ImGui::SetTooltip("%s: %s %s", i < categories.size() ? categories[i].c_str() : "?",
                      formatValueShort(values.data[i]).c_str(), value_label.c_str());
  }
  ImGui::PopID();
}

void categoryStrip(const char* id, const Array& categories_of, const std::vector<std::string>& tokens,
                   const std::vector<std::string>& categories, ImVec2 size) {
  ImGui::PushID(id);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##strip", ImVec2(std::max(1.0f, size.x), std::max(1.0f, size.y)));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int64_t n = categories_of.size();
  const float line = ImGui::GetTextLineHeight(), pad = line * 0.25f;
  auto colourOf = [&](int64_t i) { return toU32(headColor(static_cast<int>(categories_of.data[static_cast<size_t>(i)]))); };
  // Text boxes, wrapped, while they fit; else one cell per token in rows.
  std::vector<ImVec4> boxes;
  float x = origin.x, y = origin.y;
  bool fits = true;
  for (int64_t i = 0; i < n && fits; ++i) {
    const char* t = i < static_cast<int64_t>(tokens.size()) ? tokens[static_cast<size_t>(i)].c_str() : "";
    const float w = ImGui::CalcTextSize(t).x + pad * 2;
    if (x + w > origin.x + size.x && x > origin.x) {
      x = origin.x;
      y += line + pad * 2;
    }
    fits = y + line + pad * 2 <= origin.y + size.y;
    boxes.emplace_back(x, y, x + w, y + line + pad);
    x += w + pad;
  }
  int64_t hover = -1;
  const ImVec2 m = ImGui::GetIO().MousePos;
  const bool hovered = ImGui::IsItemHovered();
  if (fits) {
    for (int64_t i = 0; i < n; ++i) {
      const ImVec4& b = boxes[static_cast<size_t>(i)];
      dl->AddRectFilled(ImVec2(b.x, b.y), ImVec2(b.z, b.w), colourOf(i), 3.0f);
      dl->AddText(ImVec2(b.x + pad, b.y + pad * 0.5f), IM_COL32(255, 255, 255, 255), tokens[static_cast<size_t>(i)].c_str());
      if (hovered && m.x >= b.x && m.x < b.z && m.y >= b.y && m.y < b.w) hover = i;
    }
  } else {
    const int64_t cols = std::max<int64_t>(1, static_cast<int64_t>(size.x));
    const int64_t rows = (n + cols - 1) / cols;
    const float cell_w = size.x / static_cast<float>(std::min(n, cols)), cell_h = std::min(line, size.y / static_cast<float>(rows));
    for (int64_t i = 0; i < n; ++i) {
      const float cx = origin.x + cell_w * static_cast<float>(i % cols), cy = origin.y + cell_h * static_cast<float>(i / cols);
      dl->AddRectFilled(ImVec2(cx, cy), ImVec2(cx + cell_w, cy + cell_h), colourOf(i));
    }
    if (hovered && m.y >= origin.y && m.x >= origin.x) {
      const int64_t i = static_cast<int64_t>((m.y - origin.y) / cell_h) * cols + static_cast<int64_t>((m.x - origin.x) / cell_w);
      if (i < n) hover = i;
    }
  }
  if (hover >= 0) {
    const auto c = static_cast<size_t>(categories_of.data[static_cast<size_t>(hover)]);
    ImGui::SetTooltip("token %lld: %s\n%s", static_cast<long long>(hover),
                      hover < static_cast<int64_t>(tokens.size()) ? tokens[static_cast<size_t>(hover)].c_str() : "",
                      c < categories.size() ? categories[c].c_str() : "?");
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
  const PlotArea plot = legendAndArea("##stacked", names, colours, size);
  const ImVec2 origin = plot.origin, area = plot.size;
  const bool hovered = plot.hovered;
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
  const int64_t stride = labelStride(bw, label_w + line * 0.4f);
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
