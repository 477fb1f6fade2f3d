#include "widgets/head_table.h"

#include "widgets/colormap.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace attn {

namespace {

constexpr int kColumns = 9;  // headTableColumns()
const char* const kHelp[kColumns] = {
    "layer of the head",
    "head within its layer",
    "mean over queries i \xE2\x89\xA5 1 of A[i, i\xE2\x88\x92" "1]: attends to the previous token",
    "mean over queries i \xE2\x89\xA5 1 of A[i, 0]: the first token's share (attention sink; marked in the grid from 0.3)",
    "on a repeated random sequence, mean over the second copy of A[i, i\xE2\x88\x92T+1]: attends to the token after "
    "the previous occurrence of the current one",
    "mean over queries of \xCE\xA3_j A[i, j]\xC2\xB7|i \xE2\x88\x92 j|, in tokens",
    "mean over queries of \xE2\x88\x92\xCE\xA3_j A[i, j] ln A[i, j], in nats (0: one key)",
    "the key/value head this query head reads (grouped-query attention: h / (heads / kv heads))",
    "how alike the heads sharing this kv head are: mean over pairs of them and over queries of the Jensen\xE2\x80\x93"
    "Shannon divergence of their rows, in bits (0 identical, 1 disjoint); \xE2\x80\x94 when the group is one head"};

// A cell's value; −1 where it means nothing (sorted below every real value).
double value(const HeadSummary& s, int column) {
  const auto known = [](double v) { return std::isnan(v) ? -1.0 : v; };
  switch (column) {
    case 0: return static_cast<double>(s.layer);
    case 1: return static_cast<double>(s.head);
    case 2: return known(s.previous_token);
    case 3: return s.sink;
    case 4: return s.induction;
    case 5: return known(s.mean_distance);
    case 6: return s.entropy;
    case 7: return static_cast<double>(s.kv_head);
    default: return s.group_size > 1 ? s.group_divergence : -1.0;  // single heads sort below every group
  }
}

// A column's share of the table: its header's widest piece (a header breaks at its space or hyphen) or a
// number's width, and the sort arrow: no header is elided where the table leaves each its share.
float headerWidth(const std::string& name) {
  float widest = ImGui::CalcTextSize("0.000").x;
  size_t a = 0;
  while (a < name.size()) {
    const size_t b = name.find_first_of(" -", a);
    const size_t end = b == std::string::npos ? name.size() : b + 1;
    widest = std::max(widest, ImGui::CalcTextSize(name.substr(a, end - a).c_str()).x);
    a = end;
  }
  return widest + ImGui::GetFontSize() * 1.5f;
}

std::vector<int> shownColumns(const std::vector<int>& columns) {
  std::vector<int> shown = columns;
  if (shown.empty())
    for (int c = 0; c < kColumns; ++c) shown.push_back(c);
  return shown;
}

}  // namespace

float headTableWidth(const std::vector<int>& columns) {
  float w = 0;
  for (const int c : shownColumns(columns)) w += headerWidth(headTableColumns()[static_cast<size_t>(c)]) + ImGui::GetStyle().CellPadding.x * 2;
  return w;
}

int headTable(const char* id, const std::vector<HeadSummary>& rows, int focus_layer, int focus_head,
              HeadTableState& state, ImVec2 size, const std::vector<int>& columns) {
  int clicked = -1;
  const std::vector<int> shown = shownColumns(columns);
  const int count = static_cast<int>(shown.size());
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_BordersOuter | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable(id, count, flags, size)) return clicked;
  ImGui::TableSetupScrollFreeze(0, 1);
  const std::vector<std::string>& names = headTableColumns();
  for (int k = 0; k < count; ++k)
    ImGui::TableSetupColumn(names[static_cast<size_t>(shown[static_cast<size_t>(k)])].c_str(),
                            k == 0 ? ImGuiTableColumnFlags_DefaultSort : ImGuiTableColumnFlags_None,
                            headerWidth(names[static_cast<size_t>(shown[static_cast<size_t>(k)])]));
  // Headers with a tooltip each (what the number means).
  ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
  for (int k = 0; k < count; ++k) {
    const int c = shown[static_cast<size_t>(k)];
    ImGui::TableSetColumnIndex(k);
    // A name wider than its column (large text, a narrow window) breaks at its space or hyphen, never elided.
    std::string label = names[static_cast<size_t>(c)];
    if (ImGui::CalcTextSize(label.c_str()).x > ImGui::GetContentRegionAvail().x - ImGui::GetFontSize())
      if (const size_t at = label.find_first_of(" -"); at != std::string::npos)
        label = label.substr(0, at + (label[at] == '-' ? 1 : 0)) + "\n" + label.substr(at + 1);
    label += "##column" + std::to_string(c);
    ImGui::TableHeader(label.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", kHelp[c]);
  }
  if (state.order.size() != rows.size() || state.rows != rows.size()) {
    state.order.resize(rows.size());
    std::iota(state.order.begin(), state.order.end(), 0);
    state.rows = rows.size();
    state.sorted_once = false;
  }
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && (specs->SpecsDirty || !state.sorted_once)) {
    if (specs->SpecsCount > 0) {
      const int column = shown[static_cast<size_t>(std::clamp(static_cast<int>(specs->Specs[0].ColumnIndex), 0, count - 1))];
      const bool ascending = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
      std::stable_sort(state.order.begin(), state.order.end(), [&](int a, int b) {
        const double va = value(rows[static_cast<size_t>(a)], column), vb = value(rows[static_cast<size_t>(b)], column);
        return ascending ? va < vb : va > vb;
      });
    }
    specs->SpecsDirty = false;
    state.sorted_once = true;
  }
  const ImVec4 accent = ImGui::GetStyle().Colors[ImGuiCol_PlotHistogram];
  for (const int i : state.order) {
    const HeadSummary& s = rows[static_cast<size_t>(i)];
    ImGui::TableNextRow();
    ImGui::PushID(i);
    const bool focused = s.layer == focus_layer && s.head == focus_head;
    for (int k = 0; k < count; ++k) {
      const int c = shown[static_cast<size_t>(k)];
      ImGui::TableSetColumnIndex(k);
      const double v = value(s, c);
      const bool meaningless = (c == 2 && std::isnan(s.previous_token)) || (c == 5 && std::isnan(s.mean_distance));
      if (!meaningless && ((c >= 2 && c <= 4) || (c == 8 && s.group_size > 1))) {
        // Shares in [0, 1]: the cell's tint grows with the value.
        const Rgb8 col = colormapAt(Colormap::Viridis, static_cast<float>(v));
        ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, IM_COL32(col.r, col.g, col.b, static_cast<int>(40 + 160 * std::clamp(v, 0.0, 1.0))));
      }
      if (c == 0) {
        // The whole row is one selectable; its label is the layer number.
        char label[32];
        std::snprintf(label, sizeof label, "%d", static_cast<int>(s.layer));
        if (focused) ImGui::PushStyleColor(ImGuiCol_Text, accent);
        if (ImGui::Selectable(label, focused, ImGuiSelectableFlags_SpanAllColumns)) clicked = i;
        if (focused) ImGui::PopStyleColor();
      } else if (c == 1 || c == 7) {
        ImGui::Text("%d", static_cast<int>(v));
      } else if ((c == 8 && s.group_size < 2) || meaningless) {
        ImGui::TextDisabled("\xE2\x80\x94");
      } else {
        ImGui::Text("%.3f", v);
      }
    }
    ImGui::PopID();
  }
  ImGui::EndTable();
  return clicked;
}

}  // namespace attn
