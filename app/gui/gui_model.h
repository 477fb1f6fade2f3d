// The model workspace of the window: the left panel (model, live text,
// views, focus, pattern controls, top-5 predictions) and the main views
// (model grid, head lines, Q/K, rollout, head table, pattern on a head),
// drawn from the current immutable ModelOutput with the generic widgets.
#pragma once

#include "app/gui/gui_state.h"
#include "widgets/heatmap.h"

#include <imgui.h>

namespace attn {

void drawModelPanel(AppState& s, ImVec2 pos, ImVec2 size);
void drawModelView(AppState& s, HeatmapRenderer& gl, ImVec2 pos, ImVec2 size);
// The workspace switch drawn at the top of both control panels.
void workspaceSwitch(AppState& s);
// Clamps the focus and the selected pair to the current output.
void clampModelSelection(ModelState& m);

}  // namespace attn
