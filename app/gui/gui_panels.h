// The window's fixed panels: menu bar, left control panel (variant list,
// parameters generated from the registry, inputs, display, settings),
// status bar, help overlay, and keyboard shortcuts.
#pragma once

#include "app/gui/gui_state.h"
#include "app/gui/job_runner.h"

#include <imgui.h>

#include <vector>

namespace attn {

// Returns the menu bar height.
float drawMenuBar(AppState& s);
void drawControlPanel(AppState& s, ImVec2 pos, ImVec2 size);
void drawStatusBar(AppState& s, JobRunner& runner, ImVec2 pos, ImVec2 size);
void drawHelpOverlay(AppState& s);
// `presses`: GLFW key presses since the last frame, recorded by a key
// callback so a press and release within one frame is not lost (imgui 1.86
// only keeps the key-down state).
struct KeyPress {
  int key = 0;
  bool ctrl = false;
  bool shift = false;
};
void handleShortcuts(AppState& s, const std::vector<KeyPress>& presses);

// Disabled text centred in an area of `size` from the cursor (placeholders, errors).
void centeredText(ImVec2 size, const char* text);
// A panel section's caption with a rule under it.
void sectionTitle(const char* text);
// The colormap and the colour scale (linear, log, power, percentile), shared
// by both workspaces' display sections.
void colourControls(AppState& s);
// Begin() of a window pinned at `pos` with `size` (no title, move, resize or
// collapse): the side panels (scrolling) and the views (no scrolling).
void beginFixedWindow(const char* id, ImVec2 pos, ImVec2 size, bool scroll);

// Applies undo / redo to the scene (and the committed snapshot).
void undoScene(AppState& s);
void redoScene(AppState& s);
// The control of parameter `p` of `info` (built from its ParamSpec), editing
// `params`; FloatList parameters get one slider per head of `heads`.
// `pattern`: the params are the model workspace's pattern (file requests go there).
void paramControl(AppState& s, Params& params, const VariantInfo& info, const ParamSpec& p, int64_t heads,
                  bool pattern);

// Selects a variant: its default parameters, shared keys carried over.
void selectVariant(AppState& s, const VariantInfo& v);

}  // namespace attn
