// BertViz-style token lines on screen: the layout of widgets/view_layouts.h
// (queries left, keys right, a line per (query, key, head) whose opacity is
// the weight, a colour per head), replayed into the window. Hovering a token
// isolates its lines; a click on a head's legend entry hides or shows it.
#pragma once

#include "engine/result.h"

#include <imgui.h>

#include <vector>

namespace attn {

// Caller-owned, lives across frames.
struct TokenLinesState {
  std::vector<bool> heads_visible;  // resized to the result's head count; new heads start visible
};

void tokenLines(const char* id, const Result& r, TokenLinesState& state, ImVec2 size);

}  // namespace attn
