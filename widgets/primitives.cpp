#include "widgets/primitives.h"

#include <algorithm>
#include <cmath>

namespace attn {

ArrowHead arrowHead(const Primitive& a) {
  const float dx = a.x1 - a.x0, dy = a.y1 - a.y0, len = std::max(1e-3f, std::sqrt(dx * dx + dy * dy));
  const float ux = dx / len, uy = dy / len;
  const float head = std::min(len * 0.6f, std::max(6.0f, std::max(1.0f, a.thickness) * 4.0f)), half = head * 0.5f;
  const float bx = a.x1 - ux * head, by = a.y1 - uy * head;
  return {bx, by, bx - uy * half, by + ux * half, bx + uy * half, by - ux * half};
}

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
  // The caption reads along the bar, set smaller (down to 0.6×) where it would run past the bar's ends;
  // a bar too short even for that goes without it (the panel's title names what it shows).
  const float caption_w = caption.empty() ? 0.0f : measure(caption, 1.0f);
  if (caption.empty() || caption_w * 0.6f > h) return;
  Primitive c;
  c.kind = Primitive::Kind::Text;
  c.text = caption;
  c.role = Role::Muted;
  c.vertical = true;
  c.size = caption_w > h ? text_px * h / caption_w : text_px;
  c.x0 = right + tick * 1.5f + label_w + text_px * 0.5f;  // the caption's top edge (it is turned)
  c.y0 = y + h * 0.5f;
  c.align_x = 0.5f;
  out.push_back(c);
}

LabelRows stackLabels(const std::vector<float>& centres, const std::vector<float>& widths, float left, float right, float gap,
                      int max_rows) {
  LabelRows out;
  out.placed.resize(centres.size());
  std::vector<size_t> order(centres.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return centres[a] < centres[b]; });
  std::vector<float> row_end;  // right edge of the last label on each row
  for (const size_t k : order) {
    const float w = widths[k];
    const float l = std::max(left, std::min(centres[k] - w / 2, right - w));
    size_t row = 0;
    while (row < row_end.size() && row_end[row] > l - gap) ++row;
    if (row == row_end.size()) {
      if (static_cast<int>(row_end.size()) < max_rows) row_end.push_back(left);
      else row = static_cast<size_t>(std::min_element(row_end.begin(), row_end.end()) - row_end.begin());
    }
    row_end[row] = l + w;
    out.placed[k] = {static_cast<int>(row), l};
  }
  out.rows = static_cast<int>(row_end.size());
  return out;
}

}  // namespace attn
