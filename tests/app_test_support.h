// Monospace text measures for the layout tests (tests/app_*_test.cpp), so
// positions and widths can be checked by hand. Widths count UTF-8 code
// points: "×" and "∞" are one glyph each.
#pragma once

#include "widgets/formula.h"
#include "widgets/primitives.h"

#include <string>

namespace attn::test {

inline float codePoints(const std::string& s) {
  float n = 0;
  for (const unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

// Every glyph `advance` × its size wide (`bold_advance` in bold), ascent 0.8 × its size.
inline Canvas monoCanvas(float unit = 14, float advance = 0.6f, float bold_advance = 0.6f) {
  Canvas c;
  c.unit = unit;
  c.width_of = [=](const std::string& s, float px, bool bold) { return codePoints(s) * px * (bold ? bold_advance : advance); };
  c.ascent_of = [](float px) { return px * 0.8f; };
  return c;
}

// widgets/formula.h's measure: every glyph `px` × scale wide.
inline MeasureText monoMeasure(float px) {
  return [px](const std::string& s, float scale) { return codePoints(s) * px * scale; };
}

}  // namespace attn::test
