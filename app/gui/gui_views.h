// The main view area: heatmap, heads grid, token lines, extras and family,
// all drawn from the current immutable result with the generic widgets.
#pragma once

#include "app/gui/gui_state.h"
#include "widgets/heatmap.h"

#include <imgui.h>

namespace attn {

void drawMainView(AppState& s, HeatmapRenderer& gl, ImVec2 pos, ImVec2 size);

}  // namespace attn
