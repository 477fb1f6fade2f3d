// Lesson handouts: a PDF with one page per step, each with the step's
// figure (drawn by the figure export, app/export/figure.h), its title,
// narration, formula and prompt as paper prints them (app/lesson:
// paperNarration). `attnlab lesson export` writes them.
#pragma once

#include "app/export/figure.h"

#include <functional>
#include <string>
#include <vector>

namespace attn {

struct HandoutPage {
  // The step's figure laid out at a size (points): the page asks for the
  // room the heading and the text leave.
  std::function<PreparedFigure(int width, int height)> figure;
  std::string heading;  // "Lesson title · step 2 of 6"
  std::string title, narration, formula, prompt;
};

// Writes the pages to `path` (.pdf) through a temp file: a failure leaves
// nothing. Text is never clipped: a long narration is set smaller (down to
// 8 pt, then it takes more of the page). The figure is laid out at the size
// of the room the text leaves, whole, and printed at that size: its labels
// and tables at the figure's own type size, never scaled down. Throws InputError.
void writeHandout(const std::vector<HandoutPage>& pages, const std::string& title, int width, int height,
                  const std::string& path);

}  // namespace attn
