// The layers × heads grid of a real model (the model view): one heatmap
// thumbnail per head, a row per layer and a column per head, with L/H
// captions and the focused head framed. Draws; never computes.
#pragma once

#include "engine/tensor.h"
#include "widgets/heatmap.h"

#include <imgui.h>

#include <vector>

namespace attn {

struct HeadPick {
  int layer = -1, head = -1;  // clicked thumbnail, -1 when none
};

// `attention[l][h]` is [L, L]; `mask` (may be null) is drawn as in the heatmap.
HeadPick headGrid(const char* id, const std::vector<std::vector<Mat>>& attention, const Mat* mask,
                  const MatrixStyle& style, int focus_layer, int focus_head, HeatmapZoom& zoom, HeatmapRenderer& gl,
                  ImVec2 size);

}  // namespace attn
