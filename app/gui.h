// The interactive window: GLFW + Dear ImGui, Qt for dialogs.
#pragma once

#include "app/input_options.h"

#include <string>
#include <vector>

namespace attn {

struct GuiOptions {
  std::string variant;             // empty: the default scene (multi-head on a sentence)
  std::vector<std::string> sets;   // KEY=VALUE
  InputOptions input;
  bool input_given = false;        // any INPUT flag was passed; else the default text
  std::string view = "heatmap";    // initial view
  std::string screenshot;          // save the last frame as PNG and exit
  int frames = 0;                  // exit after N frames; prints median/worst frame time
  int width = 1600, height = 1000;
};

// Returns the process exit status (0 ok, 2 bad input, 1 internal error).
int runGui(const GuiOptions& options);

}  // namespace attn
