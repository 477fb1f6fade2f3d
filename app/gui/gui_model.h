// The model workspace of the window: the left panel and the view area of
// the current immutable ModelOutput, whatever the model's kind (each kind's
// own parts: gui_kinds.h).
#pragma once

#include "app/gui/gui_state.h"
#include "widgets/heatmap.h"

#include <imgui.h>

namespace attn {

void drawModelPanel(AppState& s, ImVec2 pos, ImVec2 size);
void drawModelView(AppState& s, HeatmapRenderer& gl, ImVec2 pos, ImVec2 size);
// The workspace switch drawn at the top of both control panels.
void workspaceSwitch(AppState& s);

}  // namespace attn
