// The main view area: the shown view's layout (widgets/views/) replayed
// with ImGui, with its interaction.
#pragma once

#include "app/gui/gui_state.h"
#include "widgets/heatmap.h"

#include <imgui.h>

namespace attn {

// The parameters the shown view reads: the view's own (ViewState::params)
// with the colour settings and presentation mode. What the screen draws and
// what an export of it reads.
ViewParams viewParams(const AppState& s);

void drawMainView(AppState& s, HeatmapRenderer& gl, ImVec2 pos, ImVec2 size);

}  // namespace attn
