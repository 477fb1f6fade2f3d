#include "widgets/pattern_image.h"

#include "widgets/primitives_imgui.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

constexpr ImU32 kNoKey = IM_COL32(46, 49, 56, 255);     // a pixel / cell outside the pattern
constexpr ImU32 kOutside = IM_COL32(0, 0, 0, 0);        // past the end of a partial last image row
constexpr ImU32 kQueryRing = IM_COL32(255, 255, 255, 255);
constexpr ImU32 kQueryShadow = IM_COL32(0, 0, 0, 230);


void swatch(ImU32 fill, ImU32 ring, const char* label) {
  const float s = ImGui::GetTextLineHeight();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(ImVec2(p.x, p.y + s * 0.15f), ImVec2(p.x + s * 0.7f, p.y + s * 0.85f), fill);
  if (ring) dl->AddRect(ImVec2(p.x, p.y + s * 0.15f), ImVec2(p.x + s * 0.7f, p.y + s * 0.85f), ring, 0, 0, 2.0f);
  ImGui::Dummy(ImVec2(s * 0.8f, s));
  ImGui::SameLine(0, s * 0.3f);
  ImGui::TextUnformatted(label);
  ImGui::SameLine(0, s * 1.2f);
}

// The texture name of widget `id` in the current ImGui ID scope.
std::string textureName(const char* id, const char* part) { return std::to_string(ImGui::GetID(id)) + part; }

}  // namespace

Rgb8 patternSetColor(unsigned bits) {
  if (bits == 0) return {46, 49, 56};
  return setColor(bits);
}

void patternLegend(const std::vector<std::string>& set_names, bool block) {
  const std::vector<std::string> names = set_names.empty() ? std::vector<std::string>{"key"} : set_names;
  for (size_t b = 0; b < names.size() && b < 8; ++b) swatch(toU32(patternSetColor(1u << b)), 0, names[b].c_str());
  if (names.size() > 1) swatch(toU32(patternSetColor(3)), 0, names.size() == 2 ? "both" : "several");
  swatch(kNoKey, kQueryRing, "query");
  if (block) swatch(kNoKey, IM_COL32(255, 200, 60, 255), "query block");
  ImGui::NewLine();
}

int64_t patternImage(const char* id, const SparseRows& s, int64_t width, int64_t query, const Array* groups,
                     HeatmapRenderer& gl, ImVec2 size) {
  const int64_t n = s.rows;
  const int64_t w = std::max<int64_t>(1, width), h = (n + w - 1) / w;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::PushID(id);
  ImGui::InvisibleButton("##image", ImVec2(std::max(1.0f, size.x), std::max(1.0f, size.y)));
  const bool hovered = ImGui::IsItemHovered(), held = ImGui::IsItemActive();
  if (n == 0 || query < 0 || query >= n) {
    ImGui::PopID();
    return -1;
  }
  // Square pixels: it is an image.
  const float px = std::max(0.1f, std::min(size.x / static_cast<float>(w), size.y / static_cast<float>(h)));
  const float pw = px, ph = px;
  const ImVec2 p0(std::floor(origin.x + (size.x - pw * static_cast<float>(w)) * 0.5f), origin.y);
  const ImVec2 p1(p0.x + pw * static_cast<float>(w), p0.y + ph * static_cast<float>(h));
  // Uploaded only when the query or the pattern changes: one CSR row.
  const std::string version = std::to_string(reinterpret_cast<uintptr_t>(&s)) + ":" + std::to_string(query) + ":" +
                              std::to_string(w);
  const ImTextureID tex = gl.rgbaTexture(textureName(id, "image"), version, static_cast<int>(w), static_cast<int>(h),
                                         [&](std::vector<uint32_t>& pixels) {
                                           std::fill(pixels.begin(), pixels.end(), kOutside);
                                           std::fill(pixels.begin(), pixels.begin() + n, kNoKey);
                                           for (int64_t e = s.rowBegin(query); e < s.rowEnd(query); ++e) {
                                             const unsigned bits = s.sets.empty() ? 1u : s.sets[static_cast<size_t>(e)];
                                             pixels[static_cast<size_t>(s.indices[static_cast<size_t>(e)])] =
                                                 toU32(patternSetColor(bits));
                                           }
                                         });
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddImage(tex, p0, p1);
  dl->AddRect(ImVec2(p0.x - 1, p0.y - 1), ImVec2(p1.x + 1, p1.y + 1), ImGui::GetColorU32(ImGuiCol_Border));
  auto corner = [&](int64_t i) {
    return ImVec2(p0.x + pw * static_cast<float>(i % w), p0.y + ph * static_cast<float>(i / w));
  };
  const float thick = std::clamp(px * 0.25f, 1.5f, 3.0f);
  if (groups && groups->size() == n) {
    // The block's boundary: each side of a block pixel whose neighbour is not in the block.
    const float g = groups->data[static_cast<size_t>(query)];
    auto in = [&](int64_t x, int64_t y) {
      const int64_t i = y * w + x;
      return x >= 0 && x < w && y >= 0 && i < n && groups->data[static_cast<size_t>(i)] == g;
    };
    const ImU32 c = IM_COL32(255, 200, 60, 255);
    for (int64_t i = 0; i < n; ++i) {
      if (groups->data[static_cast<size_t>(i)] != g) continue;
      const int64_t x = i % w, y = i / w;
      const ImVec2 a = corner(i), b(a.x + pw, a.y + ph);
      if (!in(x, y - 1)) dl->AddLine(a, ImVec2(b.x, a.y), c, thick);
      if (!in(x, y + 1)) dl->AddLine(ImVec2(a.x, b.y), b, c, thick);
      if (!in(x - 1, y)) dl->AddLine(a, ImVec2(a.x, b.y), c, thick);
      if (!in(x + 1, y)) dl->AddLine(ImVec2(b.x, a.y), b, c, thick);
    }
  }
  const ImVec2 q = corner(query);
  const float grow = std::max(2.0f, px * 0.2f);
  dl->AddRect(ImVec2(q.x - grow, q.y - grow), ImVec2(q.x + pw + grow, q.y + ph + grow), kQueryShadow, 0, 0, thick + 2);
  dl->AddRect(ImVec2(q.x - grow, q.y - grow), ImVec2(q.x + pw + grow, q.y + ph + grow), kQueryRing, 0, 0, thick);

  int64_t picked = -1;
  const ImVec2 m = ImGui::GetIO().MousePos;
  const int64_t mx = static_cast<int64_t>(std::floor((m.x - p0.x) / pw)), my = static_cast<int64_t>(std::floor((m.y - p0.y) / ph));
  const int64_t under = mx >= 0 && mx < w && my >= 0 && my * w + mx < n ? my * w + mx : -1;
  if (held && under >= 0) picked = under;
  if (hovered && under >= 0) {
    ImGui::BeginTooltip();
    ImGui::Text("pixel (x %lld, y %lld) = position %lld", static_cast<long long>(mx), static_cast<long long>(my),
                static_cast<long long>(under));
    ImGui::Separator();
    ImGui::TextDisabled("as a key of query %lld:", static_cast<long long>(query));
    sparseEntryText(s, query, under, "weight", nullptr);
    ImGui::TextDisabled("click or drag to select the query");
    ImGui::EndTooltip();
  }
  ImGui::PopID();
  return picked;
}

int64_t connectivityMatrix(const char* id, const SparseRows& s, int64_t query, const std::vector<std::string>& set_names,
                           HeatmapRenderer& gl, ImVec2 size) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::PushID(id);
  ImGui::InvisibleButton("##matrix", ImVec2(std::max(1.0f, size.x), std::max(1.0f, size.y)));
  const bool hovered = ImGui::IsItemHovered(), held = ImGui::IsItemActive();
  if (s.rows == 0 || s.cols == 0) {
    ImGui::PopID();
    return -1;
  }
  // Cells fill the area, no more than 1.6 times as tall as wide or wide as tall.
  constexpr float kMaxAspect = 1.6f;
  float cw = size.x / static_cast<float>(s.cols), ch = size.y / static_cast<float>(s.rows);
  cw = std::min(cw, ch * kMaxAspect);
  ch = std::min(ch, cw * kMaxAspect);
  const ImVec2 p0(std::floor(origin.x + (size.x - cw * static_cast<float>(s.cols)) * 0.5f), origin.y);
  const ImVec2 p1(p0.x + std::floor(cw * static_cast<float>(s.cols)), p0.y + std::floor(ch * static_cast<float>(s.rows)));
  const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  const int64_t out_cols = std::max<int64_t>(1, static_cast<int64_t>((p1.x - p0.x) * scale.x));
  const int64_t out_rows = std::max<int64_t>(1, static_cast<int64_t>((p1.y - p0.y) * scale.y));
  const Mat& tile = gl.sparseTile(s, 0, s.rows, 0, s.cols, out_rows, out_cols, RasterValue::Sets);
  const std::string version = std::to_string(reinterpret_cast<uintptr_t>(tile.data())) + ":" +
                              std::to_string(tile.rows()) + "x" + std::to_string(tile.cols());
  const ImTextureID tex = gl.rgbaTexture(textureName(id, "sets"), version, static_cast<int>(tile.cols()),
                                         static_cast<int>(tile.rows()), [&](std::vector<uint32_t>& pixels) {
                                           for (int64_t i = 0; i < tile.size(); ++i) {
                                             const unsigned bits = static_cast<unsigned>(tile.data()[i]);
                                             pixels[static_cast<size_t>(i)] = bits ? toU32(patternSetColor(bits)) : kNoKey;
                                           }
                                         });
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddImage(tex, p0, p1);
  dl->AddRect(ImVec2(p0.x - 1, p0.y - 1), ImVec2(p1.x + 1, p1.y + 1), ImGui::GetColorU32(ImGuiCol_Border));
  // The selected query's row, with ticks outside the matrix so it shows at any size.
  const float y = p0.y + (static_cast<float>(query) + 0.5f) * (p1.y - p0.y) / static_cast<float>(s.rows);
  const float tick = ImGui::GetTextLineHeight() * 0.5f;
  dl->AddLine(ImVec2(p0.x, y), ImVec2(p1.x, y), kQueryShadow, 3.0f);
  dl->AddLine(ImVec2(p0.x, y), ImVec2(p1.x, y), kQueryRing, 1.0f);
  dl->AddTriangleFilled(ImVec2(p0.x - 2, y), ImVec2(p0.x - 2 - tick, y - tick * 0.6f), ImVec2(p0.x - 2 - tick, y + tick * 0.6f),
                        kQueryRing);

  int64_t picked = -1;
  const ImVec2 m = ImGui::GetIO().MousePos;
  if ((hovered || held) && m.x >= p0.x && m.x < p1.x && m.y >= p0.y && m.y < p1.y) {
    const int64_t r = std::clamp<int64_t>(static_cast<int64_t>((m.y - p0.y) / (p1.y - p0.y) * static_cast<float>(s.rows)), 0, s.rows - 1);
    const int64_t c = std::clamp<int64_t>(static_cast<int64_t>((m.x - p0.x) / (p1.x - p0.x) * static_cast<float>(s.cols)), 0, s.cols - 1);
    if (held) picked = r;
    if (hovered) {
      ImGui::BeginTooltip();
      ImGui::Text("query %lld, key %lld", static_cast<long long>(r), static_cast<long long>(c));
      ImGui::Separator();
      sparseEntryText(s, r, c, "weight", &set_names);
      ImGui::TextDisabled("click or drag to select the query row");
      ImGui::EndTooltip();
    }
  }
  ImGui::PopID();
  return picked;
}

}  // namespace attn
