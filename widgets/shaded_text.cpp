#include "widgets/shaded_text.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

// A cell's padding either side of its token, and its height, in text sizes;
// the line pitch leaves a gap under each cell.
// A gap between cells keeps neighbours of one shade apart.
constexpr float kCellPad = 0.18f, kCellGap = 0.12f, kCellHeight = 1.3f, kLinePitch = 1.5f;

}  // namespace

std::string shownToken(const std::string& token) {
  std::string s;
  for (const char ch : token) {
    if (ch == '\n') s += "\xE2\x86\xB5";  // ↵
    else if (ch == '\t') s += "\xE2\x86\x92";  // →
    else if (ch != '\r') s += ch;
  }
  return s;
}

Rgb8 textOn(Rgb8 cell) {
  // WCAG 2's contrast ratio (L₁ + 0.05) / (L₂ + 0.05) of relative luminances
  // (linearised sRGB, Rec. 709 weights): the text colour with the larger one,
  // at least 4.2:1 on any cell.
  const auto luminance = [](Rgb8 c) {
    const auto lin = [](uint8_t v) {
      const double u = v / 255.0;
      return u <= 0.04045 ? u / 12.92 : std::pow((u + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
  };
  constexpr Rgb8 dark{20, 20, 20}, light{250, 250, 250};
  const double l = luminance(cell);
  return (l + 0.05) / (luminance(dark) + 0.05) > (luminance(light) + 0.05) / (l + 0.05) ? dark : light;
}

int64_t TextFlow::lineOf(int64_t token) const {
  const auto it = std::upper_bound(line_start.begin(), line_start.end(), token);
  return std::max<int64_t>(0, (it - line_start.begin()) - 1);
}

int64_t TextFlow::tokenAt(float x, float y) const {
  if (line_h <= 0 || y < 0) return -1;
  const auto line = static_cast<int64_t>(y / line_h);
  if (line >= lines()) return -1;
  const int64_t end = line + 1 < lines() ? line_start[static_cast<size_t>(line + 1)] : static_cast<int64_t>(cells.size());
  for (int64_t j = line_start[static_cast<size_t>(line)]; j < end; ++j) {
    const Box& b = cells[static_cast<size_t>(j)];
    if (x >= b.x && x < b.right() && y >= b.y && y < b.bottom()) return j;
  }
  return -1;
}

TextFlow flowTokens(const Canvas& c, const std::vector<std::string>& tokens, float width, float px) {
  TextFlow f;
  f.px = px;
  f.line_h = px * kLinePitch;
  const float pad = px * kCellPad, gap = px * kCellGap, h = px * kCellHeight;
  float x = 0;
  bool line_break = true;  // the next token opens a line
  for (size_t j = 0; j < tokens.size(); ++j) {
    const float w = std::min(width, c.textWidth(shownToken(tokens[j]), px) + 2 * pad);
    if (!line_break && x + w > width) line_break = true;  // wrap: the token does not fit what is left of the line
    if (line_break) {
      f.line_start.push_back(static_cast<int64_t>(j));
      x = 0;
      line_break = false;
    }
    f.cells.push_back({x, f.line_h * static_cast<float>(f.lines() - 1), w, h});
    x += w + gap;
    line_break = tokens[j].find('\n') != std::string::npos;
  }
  return f;
}

float shadedTextPx(const Canvas& c, const std::vector<std::string>& tokens, float width, float height) {
  const auto fits = [&](float px) { return flowTokens(c, tokens, width, px).height() <= height; };
  if (!fits(c.unit)) return c.unit;  // a long text: the base size, scrolled or windowed
  for (int tenths = static_cast<int>(std::lround((kShadedTextMaxScale - 1.0f) * 10)); tenths > 0; --tenths)
    if (const float px = c.unit * (1.0f + 0.1f * static_cast<float>(tenths)); fits(px)) return px;
  return c.unit;
}

void shadedTextPrimitives(Primitives& out, const Canvas& c, const TextFlow& flow, float x, float y, int64_t line0,
                          int64_t line1, const ShadedText& t) {
  line0 = std::clamp<int64_t>(line0, 0, flow.lines());
  line1 = std::clamp<int64_t>(line1, line0, flow.lines());
  if (line0 == line1) return;
  const auto n = static_cast<int64_t>(flow.cells.size());
  const int64_t first = flow.line_start[static_cast<size_t>(line0)];
  const int64_t last = line1 < flow.lines() ? flow.line_start[static_cast<size_t>(line1)] : n;
  const float top = y - flow.line_h * static_cast<float>(line0);  // line0 drawn at y
  const float pad = flow.px * kCellPad;
  for (int64_t j = first; j < last; ++j) {
    const Box& b = flow.cells[static_cast<size_t>(j)];
    const float x0 = x + b.x, y0 = top + b.y, x1 = x0 + b.w, y1 = y0 + b.h;
    const float w = (*t.weights)[static_cast<size_t>(j)];
    const std::string id = t.what + "[" + std::to_string(j) + "]";
    Rgb8 ink{0, 0, 0};
    const bool seen = w >= 0;
    if (seen) {
      const Rgb8 cell = colormapAt(t.cmap, scaleToUnit(t.range, w));
      Primitive& fill = addFill(out, x0, y0, x1, y1, cell);
      fill.mark = id;
      fill.mark_value = w;
      ink = textOn(cell);
    }
    const std::string shown = shownToken((*t.tokens)[static_cast<size_t>(j)]);
    const bool wide = c.textWidth(shown, flow.px) + 2 * pad > b.w;  // longer than a line: cut at the cell
    if (wide) pushClip(out, x0, y0, x1, y1);
    Primitive& label = addText(out, x0 + pad, (y0 + y1) * 0.5f, shown, flow.px, seen ? Role::Text : Role::Muted, 0.0f, 0.5f);
    if (seen) {
      label.colour = ink;
      label.labels = id;
    }
    if (wide) popClip(out);
  }
  if (t.query >= first && t.query < last) {  // the query outlined, over its neighbours' cells
    const Box& b = flow.cells[static_cast<size_t>(t.query)];
    const float x0 = x + b.x, y0 = top + b.y;
    addRect(out, x0, y0, x0 + b.w, y0 + b.h, Role::Accent, std::max(2.0f, flow.px * 0.14f));
  }
}

float shadedTextBarWidth(const Canvas& c, const ValueRange& range) {
  // colorbarPrimitives' pieces: the gap, the strip, the tick, its widest label, the turned caption.
  const float lp = labelPx(c);
  float label_w = 0;
  for (const float t : scaleTicks(range, 5)) label_w = std::max(label_w, c.textWidth(formatValueShort(t), lp));
  return c.unit * 0.8f + c.unit * 0.9f + lp * 0.35f * 1.5f + label_w + lp * 0.5f + lp * 1.4f;
}

ShadedTextPage shadedTextPagePrimitives(Primitives& out, const Canvas& c, const Box& area, const ShadedText& t) {
  ShadedTextPage p;
  const float lp = labelPx(c), bar = shadedTextBarWidth(c, t.range);
  const auto n = static_cast<int64_t>(t.tokens->size());
  const std::string query = "query " + groupDigits(t.query) + " '" + shownToken((*t.tokens)[static_cast<size_t>(t.query)]) + "' (outlined)";
  const auto caption = [&](int64_t first, int64_t last) {
    return first == 0 && last == n ? "each token shaded by the attention " + query + " gives it"
                                   : "tokens " + groupDigits(first) + "\xE2\x80\x93" + groupDigits(last - 1) + " of " +
                                         groupDigits(n) + ", the lines about " + query + ", shaded by the attention it gives each";
  };
  // The caption's room, as its longest form wraps (a narrow page's wraps).
  const float caption_h = static_cast<float>(wrapLines(c, caption(n, n + 1), lp, area.w).size()) * lp * 1.3f + lp * 0.5f;
  p.text = {area.x, area.y + caption_h, std::max(c.unit * 4, area.w - bar), std::max(0.0f, area.h - caption_h)};
  p.flow = flowTokens(c, *t.tokens, p.text.w, shadedTextPx(c, *t.tokens, p.text.w, p.text.h));
  // The whole lines that fit about the query's line: centred on it, or, where
  // the query sees no key after it (causal), mostly the lines before it.
  const int64_t total = p.flow.lines();
  const int64_t fit = std::clamp<int64_t>(static_cast<int64_t>(std::floor(p.text.h / p.flow.line_h)), 1, std::max<int64_t>(1, total));
  const bool causal = t.query + 1 < n && (*t.weights)[static_cast<size_t>(t.query + 1)] < 0;
  const int64_t above = causal ? fit - std::max<int64_t>(1, fit / 6) : fit / 2;
  const int64_t line0 = std::clamp<int64_t>(p.flow.lineOf(t.query) - above, 0, std::max<int64_t>(0, total - fit));
  const int64_t line1 = std::min(total, line0 + fit);
  p.first = total ? p.flow.line_start[static_cast<size_t>(line0)] : 0;
  p.last = line1 < total ? p.flow.line_start[static_cast<size_t>(line1)] : n;
  float cy = area.y;
  for (const std::string& line : wrapLines(c, caption(p.first, p.last), lp, area.w)) {
    addText(out, area.x, cy, line, lp, Role::Muted);
    cy += lp * 1.3f;
  }
  shadedTextPrimitives(out, c, p.flow, p.text.x, p.text.y, line0, line1, t);
  const float bar_h = std::min(p.text.h, std::max(c.unit * 12, p.flow.line_h * static_cast<float>(line1 - line0)));
  colorbarPrimitives(out, p.text.right() + c.unit * 0.8f, p.text.y, c.unit * 0.9f, bar_h, t.cmap, t.range, t.what, lp,
                     c.measure(lp));
  return p;
}

float shadedTextPageHeight(const Canvas& c, float width, const ShadedText& t) {
  const TextFlow f = flowTokens(c, *t.tokens, std::max(c.unit * 4, width - shadedTextBarWidth(c, t.range)), c.unit);
  const float lp = labelPx(c);
  return lp * 3.1f + f.line_h * static_cast<float>(std::min(f.lines(), kShadedTextPageLines)) + c.unit;
}

}  // namespace attn
