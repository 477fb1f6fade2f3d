// Generate in the model workspace: the panel's section (the button, the
// number of new tokens, greedy or sampling, the text with its new part), the
// timeline over the new tokens above the views and its keys, and the newest
// token's marks over the view's matrix. The job itself is the main loop's
// (gui.cpp): generateModelScene on the job runner, its partial outputs
// handed over through GenerationFeed as the tokens arrive.
#pragma once

#include "app/gui/gui_state.h"

#include <memory>
#include <mutex>
#include <string>

namespace attn {

// The newest partial output of a running generation, from the worker thread
// to the UI thread (taken at frame start, like a finished job).
class GenerationFeed {
 public:
  void put(std::shared_ptr<const ModelOutput> o);
  std::shared_ptr<const ModelOutput> take();  // null when nothing new arrived

 private:
  std::mutex mutex_;
  std::shared_ptr<const ModelOutput> latest_;
};

// Why the open model cannot generate; empty when it can.
std::string generateUnavailable(const ModelState& m);
GenerateOptions generateOptions(const GenerationState& g);
// Ctrl+G and the button: asks the main loop for a generation when the model can generate.
void requestGeneration(ModelState& m);
// A new text (or model) discards the generation shown.
void discardStaleGeneration(ModelState& m);

void generateSection(AppState& s);
// The timeline's row over the new tokens (nothing without a generation).
void generationTimeline(AppState& s);
// ',' / '←' back, '.' / '→' forward, K play or pause.
void generationKey(AppState& s, int key);
// The newest token's row outlined and its position marked on both token axes
// of the view's matrix (s.anchor), clipped to the view.
void drawGenerationMarks(const AppState& s, ImVec2 pos, ImVec2 size);

}  // namespace attn
