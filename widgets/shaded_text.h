// Text coloured by attention (CircuitsVis's coloured tokens, readable at
// thousands of tokens): the running text wrapped at token boundaries, each
// token drawn as its string on a cell shaded by the weight the selected query
// gives it, the query outlined. The text never goes below the base text
// size: a long text scrolls on screen and a page shows the whole lines about
// the query that fit. GUI-free; the weights come from app/model
// (receivedAttention).
#pragma once

#include "widgets/primitives.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// What the text view draws; nothing is owned.
struct ShadedText {
  const std::vector<std::string>* tokens = nullptr;
  const std::vector<float>* weights = nullptr;  // one per token; < 0: a key the query cannot see (drawn unshaded)
  int64_t query = 0;                            // outlined
  ValueRange range;                             // weights → the colour map (scaleToUnit)
  Colormap cmap = Colormap::Viridis;
  std::string what;  // what the weights are ("weight (L1 H2)"): the colour bar's caption and the marks' array
};

// A token as a line shows it: a line break as ↵ (ending its line), a tab as →.
std::string shownToken(const std::string& token);
// Dark text on a light cell, light text on a dark one (relative luminance).
Rgb8 textOn(Rgb8 cell);

// The tokens flowed into lines `width` wide at text size `px`: each token's
// cell from the flow's top-left (0, 0), in token order.
struct TextFlow {
  std::vector<Box> cells;
  std::vector<int64_t> line_start;  // the first token of each line
  float line_h = 0;                 // lines are this far apart; cells are shorter, so lines never touch
  float px = 0;
  int64_t lines() const { return static_cast<int64_t>(line_start.size()); }
  int64_t lineOf(int64_t token) const;
  float height() const { return line_h * static_cast<float>(lines()); }
  // The token whose cell holds (x, y) from the flow's top-left; −1 between cells.
  int64_t tokenAt(float x, float y) const;
};
TextFlow flowTokens(const Canvas& c, const std::vector<std::string>& tokens, float width, float px);

// The text size a text gets in width × height: the base size (c.unit), or,
// for a text that fits at a larger one, up to kShadedTextMaxScale × it, so a
// sentence fills its view as a long text cannot.
constexpr float kShadedTextMaxScale = 1.6f;
float shadedTextPx(const Canvas& c, const std::vector<std::string>& tokens, float width, float height);

// Lines [line0, line1) of `flow` with the flow's top-left at (x, y): each
// cell filled with its weight's colour (a mark "<what>[j]" with the weight),
// its token in the contrasting colour, the query's cell outlined.
void shadedTextPrimitives(Primitives& out, const Canvas& c, const TextFlow& flow, float x, float y, int64_t line0,
                          int64_t line1, const ShadedText& t);

// The colour bar column beside the text, its ticks' labels and caption included.
float shadedTextBarWidth(const Canvas& c, const ValueRange& range);

// A page: a caption line (which tokens are shown, and the query), the text
// (shadedTextPx) beside its colour bar, and, where the whole text
// does not fit the area's height, the whole lines about the query that do.
struct ShadedTextPage {
  int64_t first = 0, last = 0;  // the tokens shown: first … last − 1
  TextFlow flow;
  Box text;  // where the flow's lines are drawn
};
ShadedTextPage shadedTextPagePrimitives(Primitives& out, const Canvas& c, const Box& area, const ShadedText& t);
// The height a page of the text asks for at `width`: the whole text, up to kShadedTextPageLines lines.
constexpr int64_t kShadedTextPageLines = 36;
float shadedTextPageHeight(const Canvas& c, float width, const ShadedText& t);

}  // namespace attn
