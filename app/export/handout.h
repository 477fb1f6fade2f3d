// Lesson handouts: a PDF with one page per step, each with the step's
// figure (drawn by the figure export, app/export/figure.h), its title,
// narration, formula and prompt. `attnlab lesson export` writes them.
#pragma once

#include "app/export/figure.h"

#include <string>
#include <vector>

namespace attn {

struct HandoutPage {
  PreparedFigure figure;
  std::string heading;  // "Lesson title · step 2 of 6"
  std::string title, narration, formula, prompt;
};

// The figure width a page of `width` × `height` points gives its figure, in points.
int handoutFigureWidth(int width);

// Writes the pages to `path` (.pdf) through a temp file: a failure leaves
// nothing. Text is never clipped: a long narration is set smaller and the
// figure is scaled to the room left. Throws InputError.
void writeHandout(const std::vector<HandoutPage>& pages, const std::string& title, int width, int height,
                  const std::string& path);

}  // namespace attn
