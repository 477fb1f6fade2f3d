// The screen's backend for widgets/primitives.h: replays primitives into an
// ImGui draw list, text and frame colours from the current ImGui style,
// rasters through the heatmap renderer's colormap shader.
#pragma once

#include "widgets/primitives.h"

#include <imgui.h>

#include <string>
#include <vector>

namespace attn {

class HeatmapRenderer;

// `gl` draws Raster primitives (skipped without it).
void drawPrimitives(ImDrawList* dl, const Primitives& prims, HeatmapRenderer* gl = nullptr);

// A text drawPrimitives drew: its box on the screen (the turned ones' too)
// and size. Not kept where the clip rect hides it.
struct DrawnText {
  std::string text;
  float x = 0, y = 0, w = 0, h = 0, px = 0;
  bool script = false;  // a formula's sub- or superscript
};
// While one lives, drawPrimitives appends every text it draws to `sink`
// (`--describe`: what the tests check of the labels' sizes and overlaps),
// and the data marks, their labels and leaders to `marks` where given.
class TextRecorder {
 public:
  explicit TextRecorder(std::vector<DrawnText>& sink, MarkSheet* marks = nullptr);
  ~TextRecorder();
  TextRecorder(const TextRecorder&) = delete;
  TextRecorder& operator=(const TextRecorder&) = delete;
};
// A colormap colour as an ImGui colour.
inline ImU32 toU32(Rgb8 c, int alpha = 255) { return IM_COL32(c.r, c.g, c.b, alpha); }
// Text widths in the current ImGui font at `px` × scale, for the layouts.
MeasureText imguiMeasure(float px);
// The screen as a layout's canvas: text in the current ImGui font, labels
// (kLabelScale units) at its size, rasters at the framebuffer's resolution.
Canvas imguiCanvas();

}  // namespace attn
