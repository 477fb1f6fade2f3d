// The screen's backend for widgets/primitives.h: replays primitives into an
// ImGui draw list, text and frame colours from the current ImGui style.
#pragma once

#include "widgets/primitives.h"

#include <imgui.h>

namespace attn {

void drawPrimitives(ImDrawList* dl, const Primitives& prims);
// A colormap colour as an ImGui colour.
inline ImU32 toU32(Rgb8 c, int alpha = 255) { return IM_COL32(c.r, c.g, c.b, alpha); }
// Text widths in the current ImGui font at `px` × scale, for the layouts.
MeasureText imguiMeasure(float px);

}  // namespace attn
