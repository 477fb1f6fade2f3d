// Formulas with sub- and superscripts, laid out once for both backends (the
// ImGui screen and QPainter figures): the registry's caret text "W^q_i",
// "r_{i−j}", "p_t^n", "base^(2i/d)" becomes runs of text at two sizes and
// three baselines. A small layout of our own rather than a TeX engine: the
// formulas are one line of Unicode (Greek, √, Σ, ᵀ are already characters),
// and what they need is scripts that stack, and line breaks at spaces.
//
// Scripts: after '^' (up) or '_' (down) comes a {group}, a (group) after '^'
// (drawn without its parentheses), a run of ASCII letters and digits
// ("d_head", "2^31"), or else one character. A superscript and a subscript
// that follow one another stack at the same x ("W^q_i"). A backslash makes
// the next '^', '_' or '\\' literal (a folder name "tiny_llama" in a figure's
// subtitle). Everything else is literal text.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace attn {

constexpr float kScriptScale = 0.7f;  // scripts' size relative to the text

struct FormulaRun {
  std::string text;
  float x = 0;       // from the line's start, pixels
  float dy = 0;      // baseline shift, pixels (negative: up)
  float scale = 1;   // font size relative to the text's
};

struct FormulaLine {
  std::vector<FormulaRun> runs;
  float width = 0;
};

// Width in pixels of `text` set at `scale` × the text's font size.
using MeasureText = std::function<float(const std::string& text, float scale)>;

// Lays `text` out at font size `px` in lines at most `max_width` wide
// (≤ 0: one line), breaking at spaces; a word wider than a line gets a line
// of its own. Lines are `formulaLineHeight(px)` apart.
std::vector<FormulaLine> layoutFormula(const std::string& text, float px, float max_width, const MeasureText& measure);
float formulaLineHeight(float px);

}  // namespace attn
