#include "widgets/primitives.h"

#include <algorithm>

namespace attn {

void colorbarPrimitives(Primitives& out, float x, float y, float w, float h, Colormap cmap, const ValueRange& range,
                        const std::string& caption, float text_px, const MeasureText& measure) {
  Primitive strip;
  strip.kind = Primitive::Kind::ColormapStrip;
  strip.x0 = x;
  strip.y0 = y;
  strip.x1 = x + w;
  strip.y1 = y + h;
  strip.cmap = colormapFor(range, cmap);
  out.push_back(strip);
  Primitive frame = strip;
  frame.kind = Primitive::Kind::StrokeRect;
  frame.role = Role::Frame;
  out.push_back(frame);
  // Ticks two text lines apart at the least, between two and five.
  const int max_ticks = std::clamp(static_cast<int>(h / (text_px * 2.2f)), 2, 5);
  std::vector<float> ticks = scaleTicks(range, max_ticks);
  if (ticks.size() < 2) ticks = {range.lo, range.hi};
  const float tick = text_px * 0.35f, right = x + w;
  float label_w = 0;
  for (const float t : ticks) {
    const float ty = y + h * (1.0f - scaleToUnit(range, t));
    Primitive line;
    line.kind = Primitive::Kind::Line;
    line.x0 = right;
    line.x1 = right + tick;
    line.y0 = line.y1 = ty;
    out.push_back(line);
    Primitive label;
    label.kind = Primitive::Kind::Text;
    label.text = formatValueShort(t);
    label.x0 = right + tick * 1.5f;
    label.y0 = ty;
    label.size = text_px;
    label.align_y = 0.5f;
    out.push_back(label);
    label_w = std::max(label_w, measure(label.text, 1.0f));
  }
  if (caption.empty()) return;
  Primitive c;
  c.kind = Primitive::Kind::Text;
  c.text = caption;
  c.role = Role::Muted;
  c.vertical = true;
  c.size = text_px;
  c.x0 = right + tick * 1.5f + label_w + text_px * 0.5f;  // the caption's top edge (it is turned)
  c.y0 = y + h * 0.5f;
  c.align_x = 0.5f;
  out.push_back(c);
}

}  // namespace attn
