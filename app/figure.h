// Figure export through QPainter: PNG (QImage), SVG (QSvgGenerator, one
// rect per cell, text labels) and PDF (QPdfWriter). Draws the same figure a
// view shows: title, token axes, colorbar. Needs a Q(Gui)Application; with
// QT_QPA_PLATFORM=offscreen it runs with no DISPLAY.
#pragma once

#include "engine/registry.h"
#include "engine/result.h"
#include "widgets/colormap.h"

#include <string>
#include <vector>

namespace attn {

struct FigureOptions {
  ViewKind view = ViewKind::Heatmap;
  int head = 0;                     // heatmap: which head
  Colormap colormap = Colormap::Viridis;
  std::string title;                // empty: "<variant title> — head h"
  int width = 1200, height = 900;   // pixels (PNG) or points (SVG/PDF)
  bool dark = false;
  std::vector<bool> heads_visible;  // lines: empty means all
};

// `results[0]` is the figure's subject; the family view draws all of them.
// The format comes from the extension (.png, .svg, .pdf). Writes to a temp
// file and renames, so a failure leaves nothing. Throws InputError.
void exportFigure(const std::vector<Result>& results, const FigureOptions& options, const std::string& path);

}  // namespace attn
