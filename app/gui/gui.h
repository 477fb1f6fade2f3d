// The interactive window: GLFW + Dear ImGui, Qt for dialogs.
#pragma once

#include "app/model/attention_scene.h"
#include "app/shared/scene_options.h"

#include <string>
#include <vector>

namespace attn {

struct GuiOptions {
  SceneOptions scene;              // what the window opens on (a lesson's step replaces it)
  std::string lesson;              // --lesson NAME or FILE.json: open this lesson
  int step = 0;                    // --step N: at this step (0-based)
  bool present = false;            // --present: presentation mode (F5)
  std::vector<std::string> keys;   // --keys: key names pressed after the first result, one a frame
  std::string screenshot;          // save the last frame as PNG and exit
  std::string describe;            // with screenshot: what the view's layout held then, as JSON (describeLayout)
  int frames = 0;                  // exit after N frames; prints median/worst frame time
  int width = 1600, height = 1000;
  bool hide_panel = false;         // start with the side panel hidden (Tab shows it)
  std::string scale = "auto";      // colour scale: auto, linear, log, power, percentile
  int generate = 0;                // --generate N: generate N tokens (greedy) once the model is open
  int generate_step = -1;          // --generate-step S: the timeline at new token S (0: the prompt); -1: the last
  // scene.attention, read before the window opens (bad input: one line and no window).
  std::shared_ptr<const AttentionSource> attention;
};

// Returns the process exit status (0 ok, 2 bad input, 1 internal error).
int runGui(const GuiOptions& options);

}  // namespace attn
