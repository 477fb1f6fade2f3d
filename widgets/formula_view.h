// A formula (widgets/formula.h) drawn with ImGui: scripts at 0.7 size on
// shifted baselines, wrapped at spaces to the content width.
#pragma once

#include <imgui.h>

#include <string>

namespace attn {

// At the cursor, in the current font, wrapped to `wrap_width` (≤ 0: the
// window's content width from the cursor); advances the cursor past it.
void formulaText(const std::string& text, ImU32 colour, float wrap_width = 0.0f);
// The height formulaText takes at `wrap_width` (> 0).
float formulaTextHeight(const std::string& text, float wrap_width);

}  // namespace attn
