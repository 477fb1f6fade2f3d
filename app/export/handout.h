// Lesson handouts: a PDF with one page per step, each with the step's
// figure (drawn by the figure export, app/export/figure.h), its title,
// narration, formula and prompt. `attnlab lesson export` writes them.
#pragma once

#include "app/export/figure.h"

#include <functional>
#include <string>
#include <vector>

namespace attn {

struct HandoutPage {
  // The step's figure laid out at a width (points), as tall as its content:
  // the page asks for the width that makes it fit the room the text leaves.
  std::function<PreparedFigure(int width)> figure;
  std::string heading;  // "Lesson title · step 2 of 6"
  std::string title, narration, formula, prompt;
};

// Writes the pages to `path` (.pdf) through a temp file: a failure leaves
// nothing. Text is never clipped: a long narration is set smaller, and the
// figure is laid out narrower (its text keeps its size) until it fits the
// room left, scaled down only past that. Throws InputError.
void writeHandout(const std::vector<HandoutPage>& pages, const std::string& title, int width, int height,
                  const std::string& path);

}  // namespace attn
