// The head summaries of a real model as an ImGui table, sortable by every
// column (click a header); score cells are tinted by their value. A click
// on a row picks that head. Draws and orders rows; the numbers come from
// engine summarizeHeads().
#pragma once

#include "engine/model/blocks/head_metrics.h"

#include <imgui.h>

#include <vector>

namespace attn {

struct HeadTableState {
  std::vector<int> order;  // row order after the last sort
  bool sorted_once = false;
  size_t rows = 0;         // size of the data `order` was built for
};

// The width at which every header of `columns` (indices into
// headTableColumns(); empty: all nine) shows whole, each column taking its
// share (its header's widest piece: a header breaks at its space or hyphen).
float headTableWidth(const std::vector<int>& columns);
// Returns the index into `rows` of the clicked row, or −1. `columns`: the
// indices into headTableColumns() shown, in order (empty: all nine).
int headTable(const char* id, const std::vector<HeadSummary>& rows, int focus_layer, int focus_head,
              HeadTableState& state, ImVec2 size, const std::vector<int>& columns = {});

}  // namespace attn
