#include "widgets/primitives.h"

#include <algorithm>
#include <cmath>

namespace attn {

Rgb8 patternBackground(bool dark) { return dark ? Rgb8{46, 49, 56} : Rgb8{232, 232, 236}; }

MeasureText Canvas::measure(float px, bool bold) const {
  return [this, px, bold](const std::string& s, float scale) { return width_of(s, px * scale, bold); };
}

Primitive& addRect(Primitives& out, float x0, float y0, float x1, float y1, Role role, float thickness) {
  Primitive& p = out.emplace_back();
  p.kind = Primitive::Kind::StrokeRect;
  p.x0 = x0, p.y0 = y0, p.x1 = x1, p.y1 = y1;
  p.role = role;
  p.thickness = thickness;
  return p;
}

Primitive& addFill(Primitives& out, float x0, float y0, float x1, float y1, Role role, float alpha) {
  Primitive& p = addRect(out, x0, y0, x1, y1, role);
  p.kind = Primitive::Kind::FillRect;
  p.alpha = alpha;
  return p;
}

Primitive& addFill(Primitives& out, float x0, float y0, float x1, float y1, Rgb8 colour, float alpha) {
  Primitive& p = addFill(out, x0, y0, x1, y1, Role::Text, alpha);
  p.colour = colour;
  return p;
}

Primitive& addLine(Primitives& out, float x0, float y0, float x1, float y1, Role role, float thickness) {
  Primitive& p = addRect(out, x0, y0, x1, y1, role, thickness);
  p.kind = Primitive::Kind::Line;
  return p;
}

Primitive& addLine(Primitives& out, float x0, float y0, float x1, float y1, Rgb8 colour, float thickness) {
  Primitive& p = addLine(out, x0, y0, x1, y1, Role::Text, thickness);
  p.colour = colour;
  return p;
}

Primitive& addText(Primitives& out, float x, float y, std::string text, float px, Role role, float align_x, float align_y) {
  Primitive& p = out.emplace_back();
  p.kind = Primitive::Kind::Text;
  p.x0 = x, p.y0 = y;
  p.text = std::move(text);
  p.size = px;
  p.role = role;
  p.align_x = align_x, p.align_y = align_y;
  return p;
}

void pushClip(Primitives& out, float x0, float y0, float x1, float y1) {
  addRect(out, x0, y0, x1, y1, Role::Frame).kind = Primitive::Kind::PushClip;
}

void popClip(Primitives& out) { out.emplace_back().kind = Primitive::Kind::PopClip; }

float addFormula(Primitives& out, const Canvas& c, const std::string& text, float x, float y, float px, float max_width,
                 Role role, bool bold, bool draw) {
  if (text.empty()) return 0;
  const std::vector<FormulaLine> lines = layoutFormula(text, px, max_width, c.measure(px, bold));
  const float line_h = formulaLineHeight(px), ascent = c.ascent_of(px);
  if (draw)
    for (size_t l = 0; l < lines.size(); ++l) {
      // The baseline leaves the headroom a superscript needs.
      const float baseline = y + line_h * static_cast<float>(l) + (line_h - px) + ascent;
      for (const FormulaRun& r : lines[l].runs) {
        Primitive& t = addText(out, x + r.x, baseline + r.dy, r.text, px * r.scale, role);
        t.baseline = true;
        t.script = r.scale < 1;
        t.bold = bold;
      }
    }
  return line_h * static_cast<float>(lines.size());
}

float formulaHeight(const Canvas& c, const std::string& text, float px, float max_width, bool bold) {
  Primitives none;
  return addFormula(none, c, text, 0, 0, px, max_width, Role::Text, bold, false);
}

std::vector<std::string> wrapLines(const Canvas& c, const std::string& text, float px, float max_width, bool bold) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t nl = text.find('\n', start);
    const std::string para = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    std::string line;
    size_t i = 0;
    while (i <= para.size()) {
      const size_t sp = std::min(para.find(' ', i), para.size());
      const std::string word = para.substr(i, sp - i);
      const std::string joined = line.empty() ? word : line + " " + word;
      if (!line.empty() && max_width > 0 && c.textWidth(joined, px, bold) > max_width) {
        lines.push_back(line);
        line = word;
      } else {
        line = joined;
      }
      i = sp + 1;
    }
    lines.push_back(line);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

// [SECTION] Marks and their labels

Box textBox(const Primitive& t, float w, float h, float ascent) {
  const float top = t.baseline ? t.y0 - ascent : t.y0 - t.align_y * h;
  if (t.vertical) return {t.x0 - t.align_y * h, t.y0 + t.align_x * w - w, h, w};
  return {t.x0 - t.align_x * w, top, w, h};
}

Box markBox(const Primitive& p) {
  const bool own = p.mark_area != std::array<float, 4>{};
  const float x0 = own ? p.mark_area[0] : p.x0, y0 = own ? p.mark_area[1] : p.y0, x1 = own ? p.mark_area[2] : p.x1,
              y1 = own ? p.mark_area[3] : p.y1;
  return {std::min(x0, x1), std::min(y0, y1), std::abs(x1 - x0), std::abs(y1 - y0)};
}

void recordMarks(const Primitives& prims, const Canvas& c, MarkSheet& sheet) {
  for (const Primitive& p : prims) {
    if (!p.mark.empty()) sheet.marks.push_back({p.mark, markBox(p), p.mark_value});
    if (p.labels.empty()) continue;
    if (p.kind == Primitive::Kind::Text)
      sheet.labels.push_back({p.text, p.labels, textBox(p, c.textWidth(p.text, p.size, p.bold), p.size, c.ascent_of(p.size))});
    else if (p.kind == Primitive::Kind::Line)
      sheet.leaders.push_back({p.labels, p.x0, p.y0, p.x1, p.y1});
  }
}

namespace {

// The distance from (x, y) to the nearest point of `b` (0 inside).
float distanceTo(const Box& b, float x, float y) {
  return std::hypot(std::max({b.x - x, 0.0f, x - b.right()}), std::max({b.y - y, 0.0f, y - b.bottom()}));
}

// Boxes of a label and a mark that touch by half a pixel do not cover each other.
constexpr float kTouch = 0.5f;

}  // namespace

bool labelNamesOnly(const Box& label, size_t own, const std::vector<Box>& marks) {
  const float cx = label.x + label.w / 2, cy = label.y + label.h / 2, mine = distanceTo(marks[own], cx, cy);
  for (size_t i = 0; i < marks.size(); ++i)
    if (i != own && (distanceTo(marks[i], cx, cy) <= mine || overlaps(label, marks[i], kTouch))) return false;
  return true;
}

std::vector<std::string> markRuleViolations(const MarkSheet& sheet) {
  std::vector<std::string> out;
  std::vector<Box> boxes;
  for (const MarkSheet::Mark& m : sheet.marks) boxes.push_back(m.box);
  const auto quoted = [](const MarkSheet::Label& l) { return "label '" + l.text + "' (of " + l.names + ")"; };
  for (const MarkSheet::Label& l : sheet.labels) {
    const auto own = std::find_if(sheet.marks.begin(), sheet.marks.end(), [&](const MarkSheet::Mark& m) { return m.id == l.names; });
    if (own == sheet.marks.end()) {
      out.push_back(quoted(l) + " names a mark that is not drawn");
      continue;
    }
    const size_t k = static_cast<size_t>(own - sheet.marks.begin());
    const auto leader = std::find_if(sheet.leaders.begin(), sheet.leaders.end(), [&](const MarkSheet::Leader& d) {
      return d.names == l.names && distanceTo(l.box, d.x0, d.y0) <= 2.0f && distanceTo(own->box, d.x1, d.y1) <= 2.0f;
    });
    if (leader == sheet.leaders.end()) {  // no leader: the nearest mark is the one it names
      const float cx = l.box.x + l.box.w / 2, cy = l.box.y + l.box.h / 2;
      const MarkSheet::Mark* nearest = &*own;
      for (const MarkSheet::Mark& m : sheet.marks)
        if (&m != &*own && distanceTo(m.box, cx, cy) <= distanceTo(nearest->box, cx, cy)) nearest = &m;
      if (nearest != &*own) out.push_back(quoted(l) + " lies as near " + nearest->id + " as its own mark, or nearer");
    }
    for (size_t i = 0; i < boxes.size(); ++i)
      if (i != k && overlaps(l.box, boxes[i], kTouch)) out.push_back(quoted(l) + " covers " + sheet.marks[i].id);
  }
  return out;
}

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
  // A tick whose label would touch one already placed goes without it (a log scale's 0 sits a hair below
  // its lowest decade): the ends first, then the inner ticks.
  std::vector<float> labelled;
  const auto clear = [&](float ty) {
    return std::none_of(labelled.begin(), labelled.end(), [&](float o) { return std::abs(o - ty) < text_px * 1.1f; });
  };
  std::vector<float> order = ticks;
  if (order.size() > 2) std::rotate(order.begin() + 1, order.end() - 1, order.end());  // first, last, then the rest
  std::vector<float> shown;
  for (const float t : order) {
    const float ty = y + h * (1.0f - scaleToUnit(range, t));
    if (!clear(ty)) continue;
    labelled.push_back(ty);
    shown.push_back(t);
  }
  for (const float t : ticks) {
    const float ty = y + h * (1.0f - scaleToUnit(range, t));
    if (std::find(shown.begin(), shown.end(), t) == shown.end()) continue;
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
