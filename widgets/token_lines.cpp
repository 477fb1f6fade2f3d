#include "widgets/token_lines.h"

#include "widgets/colormap.h"
#include "widgets/value_range.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>

namespace attn {

namespace {

// One line per (query, key, head): beyond this many the frame stalls (L = 4096
// would be 16M lines a head), and the picture is a solid fill anyway.
constexpr int64_t kMaxLines = 64 * 1024;

const std::string& tokenAt(const std::vector<std::string>& tokens, int64_t i, std::string& fallback) {
  if (i < static_cast<int64_t>(tokens.size())) return tokens[static_cast<size_t>(i)];
  fallback = std::to_string(i);
  return fallback;
}

}  // namespace

bool headToggles(int heads, std::vector<bool>& visible) {
  visible.resize(static_cast<size_t>(heads), true);
  bool changed = false;
  for (int h = 0; h < heads; ++h) {
    ImGui::PushID(h);
    const Rgb8 c = headColor(h);
    const ImVec4 col(c.r / 255.0f, c.g / 255.0f, c.b / 255.0f, 1.0f);
    ImGui::PushStyleColor(ImGuiCol_CheckMark, ImVec4(1, 1, 1, 1));
    ImGui::PushStyleColor(ImGuiCol_FrameBg, visible[h] ? col : ImVec4(col.x, col.y, col.z, 0.25f));
    ImGui::PushStyleColor(ImGuiCol_FrameBgHovered, col);
    bool v = visible[h];
    const std::string label = "head " + std::to_string(h);
    if (ImGui::Checkbox(label.c_str(), &v)) {
      visible[h] = v;
      changed = true;
    }
    ImGui::PopStyleColor(3);
    ImGui::PopID();
    ImGui::SameLine();
  }
  ImGui::NewLine();
  return changed;
}

void tokenLines(const char* id, const Result& r, TokenLinesState& state, ImVec2 size) {
  ImGui::PushID(id);
  headToggles(r.heads(), state.heads_visible);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  size = ImVec2(std::max(1.0f, size.x), std::max(1.0f, ImGui::GetContentRegionAvail().y));
  ImGui::InvisibleButton("##lines", size);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  const int64_t lq = r.queries(), lk = r.keys();
  if (lq == 0 || lk == 0) {
    ImGui::PopID();
    return;
  }
  const int64_t visible = std::count(state.heads_visible.begin(), state.heads_visible.end(), true);
  if (lq * lk * visible > kMaxLines) {
    char msg[256];
    std::snprintf(msg, sizeof msg,
                  "The lines view is for short sequences: %lld queries × %lld keys × %lld heads = %lld lines "
                  "(limit %lld).\nUse the heatmap view, or hide heads.",
                  static_cast<long long>(lq), static_cast<long long>(lk), static_cast<long long>(visible),
                  static_cast<long long>(lq * lk * visible), static_cast<long long>(kMaxLines));
    const ImVec2 ts = ImGui::CalcTextSize(msg);
    const ImVec2 p(origin.x + std::max(0.0f, (size.x - ts.x) * 0.5f), origin.y + std::max(0.0f, (size.y - ts.y) * 0.5f));
    dl->AddText(p, ImGui::GetColorU32(ImGuiCol_TextDisabled), msg);
    ImGui::PopID();
    return;
  }
  // Rows are spaced evenly; when they get closer than a text line only every
  // k-th label is written, but every token keeps its lines.
  const float top = origin.y + line * 1.8f, height = size.y - line * 2.4f;
  // A short sequence spreads over the height (up to 5 lines a row) and the
  // columns stand apart by about half the width, so the view fills its area.
  const float sq = std::min(line * 5.0f, height / static_cast<float>(lq));
  const float sk = std::min(line * 5.0f, height / static_cast<float>(lk));
  const float y0q = top + (height - sq * lq) * 0.5f, y0k = top + (height - sk * lk) * 0.5f;
  // Tokens are written larger when their rows are far apart (up to 1.6×, for
  // a projector); the label columns sit at the sides and the lines take all
  // the width the labels leave.
  ImFont* font = ImGui::GetFont();
  const float label_px = std::clamp(std::min(sq, sk) * 0.4f, ImGui::GetFontSize(), ImGui::GetFontSize() * 1.6f);
  auto labelSize = [&](const std::string& t) { return font->CalcTextSizeA(label_px, FLT_MAX, 0.0f, t.c_str()); };
  std::string fallback_w;
  float widest = ImGui::CalcTextSize("queries").x;
  for (int64_t i = 0; i < lq; ++i) widest = std::max(widest, labelSize(tokenAt(r.q_tokens, i, fallback_w)).x);
  for (int64_t j = 0; j < lk; ++j) widest = std::max(widest, labelSize(tokenAt(r.k_tokens, j, fallback_w)).x);
  const float mid = origin.x + size.x * 0.5f, gap = std::max(line * 4.0f, size.x - 2.0f * (widest + line * 1.5f));
  const float xq = mid - gap * 0.5f, xk = mid + gap * 0.5f;
  auto yq = [&](int64_t i) { return y0q + sq * (static_cast<float>(i) + 0.5f); };
  auto yk = [&](int64_t j) { return y0k + sk * (static_cast<float>(j) + 0.5f); };

  // Which token is under the mouse (query side, key side or none).
  int64_t hover_q = -1, hover_k = -1;
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (hovered) {
    if (m.x < xq + line * 0.5f && m.x > origin.x) {
      const int64_t i = static_cast<int64_t>(std::floor((m.y - y0q) / sq));
      if (i >= 0 && i < lq) hover_q = i;
    } else if (m.x > xk - line * 0.5f) {
      const int64_t j = static_cast<int64_t>(std::floor((m.y - y0k) / sk));
      if (j >= 0 && j < lk) hover_k = j;
    }
  }

  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  dl->AddText(ImVec2(xq - ImGui::CalcTextSize("queries").x - line * 0.4f, origin.y + line * 0.2f), dim, "queries");
  dl->AddText(ImVec2(xk + line * 0.4f, origin.y + line * 0.2f), dim, "keys");

  // Lines: opacity is |w| / max |w| over the result (its precomputed stats), as in exported figures.
  const float thick = std::clamp(std::min(sq, sk) * 0.18f, 1.0f, 3.0f);
  for (int h = 0; h < r.heads(); ++h) {
    if (h < static_cast<int>(state.heads_visible.size()) && !state.heads_visible[static_cast<size_t>(h)]) continue;
    const Rgb8 c = headColor(h);
    const Mat& w = r.weights[static_cast<size_t>(h)];
    for (int64_t i = 0; i < lq; ++i) {
      if (hover_q >= 0 && i != hover_q) continue;
      for (int64_t j = 0; j < lk; ++j) {
        if (hover_k >= 0 && j != hover_k) continue;
        const float a = lineOpacity(w(i, j), r.weights_stats);
        if (!(a > 0.02f)) continue;
        const int alpha = static_cast<int>(a * 255.0f);
        dl->AddLine(ImVec2(xq + line * 0.3f, yq(i)), ImVec2(xk - line * 0.3f, yk(j)), IM_COL32(c.r, c.g, c.b, alpha),
                    thick);
      }
    }
  }

  // Labels, thinned when rows are denser than the text.
  std::string fallback;
  const int64_t step_q = labelStride(sq, label_px);
  const int64_t step_k = labelStride(sk, label_px);
  for (int64_t i = 0; i < lq; ++i) {
    if (i % step_q != 0 && i != hover_q) continue;
    const std::string& s = tokenAt(r.q_tokens, i, fallback);
    const ImVec2 ts = labelSize(s);
    const ImVec2 p(xq - ts.x, yq(i) - ts.y * 0.5f);
    if (i == hover_q) dl->AddRectFilled(ImVec2(p.x - 3, p.y - 1), ImVec2(xq + 3, p.y + ts.y + 1), ImGui::GetColorU32(ImGuiCol_Header), 3);
    dl->AddText(font, label_px, p, hover_k >= 0 ? dim : text, s.c_str());
  }
  for (int64_t j = 0; j < lk; ++j) {
    if (j % step_k != 0 && j != hover_k) continue;
    const std::string& s = tokenAt(r.k_tokens, j, fallback);
    const ImVec2 ts = labelSize(s);
    const ImVec2 p(xk, yk(j) - ts.y * 0.5f);
    if (j == hover_k) dl->AddRectFilled(ImVec2(p.x - 3, p.y - 1), ImVec2(p.x + ts.x + 3, p.y + ts.y + 1), ImGui::GetColorU32(ImGuiCol_Header), 3);
    dl->AddText(font, label_px, p, hover_q >= 0 ? dim : text, s.c_str());
  }
  ImGui::PopID();
}

}  // namespace attn
