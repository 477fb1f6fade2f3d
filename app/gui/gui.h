// The interactive window: GLFW + Dear ImGui, Qt for dialogs.
#pragma once

#include "app/cli/input_options.h"

#include <string>
#include <vector>

namespace attn {

struct GuiOptions {
  std::string variant;             // empty: the default scene (multi-head on a sentence)
  std::vector<std::string> sets;   // KEY=VALUE
  InputOptions input;
  bool input_given = false;        // any INPUT flag was passed; else the default text
  std::string view;                // initial view; empty: the workspace's first (heatmap / model)
  // The model workspace (a real checkpoint): opened by default, by --model
  // and --pattern; --variant, --set and synthetic or file inputs open the variant workspace.
  bool model_workspace = true;
  std::string model;               // --model PATH (folder or .safetensors); empty: the embedded default
  std::string pattern;             // --pattern NAME: the pattern view's variant (its --set values)
  int layer = -1, head = -1;       // focused head; -1: the default scene's
  int64_t query = -1, key = -1;    // Q/K pair; -1: last token, its strongest key
  std::string screenshot;          // save the last frame as PNG and exit
  int frames = 0;                  // exit after N frames; prints median/worst frame time
  int width = 1600, height = 1000;
  bool hide_panel = false;         // start with the side panel hidden (Tab shows it)
  std::string scale = "auto";      // colour scale: auto, linear, log, power, percentile
};

// Returns the process exit status (0 ok, 2 bad input, 1 internal error).
int runGui(const GuiOptions& options);

}  // namespace attn
