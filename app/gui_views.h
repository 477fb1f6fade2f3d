// The main view area: heatmap, heads grid, token lines, extras and family,
// all drawn from the current immutable result with the generic widgets.
#pragma once

#include "app/gui_state.h"
#include "widgets/heatmap.h"

#include <imgui.h>

namespace attn {

void drawMainView(AppState& s, HeatmapRenderer& gl, ImVec2 pos, ImVec2 size);

// The title the current view exports and shows: "<variant title> — head h".
std::string viewTitle(const AppState& s);

}  // namespace attn
