// The layers × heads grid of a real model (the model view): one heatmap
// thumbnail per head, a row per layer and a column per head, with L/H
// captions and the focused head framed. Grouped-query attention: the query
// heads sharing a key/value head stand together, a gap between groups and a
// bracket "kv g" over each. A share per head (the first-token share) is a
// bar along each thumbnail's foot, in the accent colour at or above a
// threshold. Draws; never computes.
#pragma once

#include "engine/tensor.h"
#include "widgets/heatmap.h"

#include <imgui.h>

#include <vector>

namespace attn {

struct HeadPick {
  int layer = -1, head = -1;  // clicked thumbnail, -1 when none
};

struct HeadGridMarks {
  int group = 1;  // query heads per key/value head (consecutive heads); 1: no grouping drawn
  // [layers · heads] layer-major, in [0, 1]: a bar under each thumbnail; null: none.
  const std::vector<float>* share = nullptr;
  float share_threshold = 1.0f;  // at or above: the bar in the accent colour
  const char* share_name = "";   // in the tooltip ("first-token share")
};

// `attention[l][h]` is [L, L]; `mask` (may be null) is drawn as in the heatmap.
HeadPick headGrid(const char* id, const std::vector<std::vector<Mat>>& attention, const Mat* mask,
                  const MatrixStyle& style, int focus_layer, int focus_head, HeatmapZoom& zoom, HeatmapRenderer& gl,
                  ImVec2 size, const HeadGridMarks& marks = {});

}  // namespace attn
