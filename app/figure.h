// Figure export through QPainter: PNG (QImage), SVG (QSvgGenerator, one
// rect per cell for small matrices, an embedded image for large ones, text
// labels) and PDF (QPdfWriter). Draws the same figure a view shows: title,
// token axes, colorbar, key bands, legends. Needs a Q(Gui)Application; with
// QT_QPA_PLATFORM=offscreen it runs with no DISPLAY.
#pragma once

#include "engine/compare.h"
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
  int64_t query = -1;               // image: the query pixel; -1: defaultImageQuery()
  std::vector<std::string> panel_titles;  // heads: one per head (a model's "L0 H0", …); empty: "head h"
  std::string subtitle;             // empty: the variant's formula and citation
};

// The query the image view shows until the user picks one: the middle of the
// last full block (QueryGroup extra) or of the last full image row, so a
// causal pattern shows its whole reach above it.
int64_t defaultImageQuery(const Result& r);

// `results[0]` is the figure's subject; the family view draws all of them.
// The compare view draws `comparison` (compareWithFull(results[0]), computed
// by the caller: it can take seconds at large L). The format comes from the
// extension (.png, .svg, .pdf). Writes to a temp file and renames, so a
// failure leaves nothing. Throws InputError.
void exportFigure(const std::vector<Result>& results, const FigureOptions& options, const std::string& path,
                  const Comparison* comparison = nullptr);

// A table of text (the model workspace's head summaries): a header row and
// `rows`, title from options.title, in the format of the extension.
void exportTableFigure(const std::vector<std::string>& columns, const std::vector<std::vector<std::string>>& rows,
                       const FigureOptions& options, const std::string& path);

}  // namespace attn
