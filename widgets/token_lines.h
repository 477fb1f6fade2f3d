// BertViz-style token lines: queries in a left column, keys in a right
// column, one line per (query, key, head) whose opacity is the weight, one
// colour per head. Hovering a token isolates its lines.
#pragma once

#include "engine/result.h"

#include <imgui.h>

#include <vector>

namespace attn {

// Caller-owned, lives across frames.
struct TokenLinesState {
  std::vector<bool> heads_visible;  // resized to the result's head count; new heads start visible
};

// Draws head toggles (checkboxes in the head colours) and the lines in `size`.
void tokenLines(const char* id, const Result& r, TokenLinesState& state, ImVec2 size);

// A legend swatch + checkbox per head; returns true when one was toggled.
bool headToggles(int heads, std::vector<bool>& visible);

}  // namespace attn
