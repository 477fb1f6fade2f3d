// Figure export through QPainter: PNG (QImage), SVG (QSvgGenerator, one
// rect per cell for small matrices, an embedded image for large ones, text
// labels) and PDF (QPdfWriter). Draws the same figure a view shows: title,
// token axes, colorbar, key bands, legends. Needs a Q(Gui)Application; with
// QT_QPA_PLATFORM=offscreen it runs with no DISPLAY.
#pragma once

#include "engine/compare.h"
#include "engine/registry.h"
#include "engine/result.h"
#include "widgets/annotations.h"
#include "widgets/colormap.h"
#include "widgets/plot_layouts.h"
#include "widgets/primitives.h"
#include "widgets/value_range.h"
#include "widgets/views/view.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

class QPainter;

namespace attn {

struct FigureOptions {
  std::string view = "heatmap";  // a view of the registry (widgets/views/)
  // What the view shows and how (head, colour scale, colormap, query,
  // visible heads, a lesson's marks): the screen's own ViewParams when the
  // GUI exports, so the figure is what the screen shows.
  ViewParams params;
  std::optional<std::string> title;  // unset: "<variant title> — head h"; "" draws no title
  int width = 1200;                  // layout units: pixels (PNG) or points (SVG/PDF)
  int height = 900;                  // 0: as tall as the content needs at this width (figureHeightFor)
  double png_scale = 1.0;            // PNG pixels per layout unit (the paper sizes render at 300 dpi)
  double font_size = 0;              // size of labels and ticks in layout units; 0: from the figure's size
  bool dark = false;
  std::string subtitle;             // empty: the variant's formula and citation
};

// A figure size by name, in points: "column" (3.5 in, one column of a
// two-column paper), "two-column" (7 in) and "slide" (16:9, 13.33 × 7.5 in),
// with the label size each is read at; or "WxH" (pixels for PNG, points for
// SVG/PDF; 64 ≤ W, H ≤ 16384). The paper sizes leave the height to the
// content and render PNGs at 300 dpi. Throws InputError naming `flag`.
void applyFigureSize(const std::string& size, const std::string& flag, FigureOptions& o);

// A figure laid out and ready to paint onto any QPainter device at (0, 0,
// options.width, options.height): its options with the height resolved.
struct PreparedFigure {
  FigureOptions options;
  std::string name;  // the document title
  std::function<void(QPainter&, double raster_scale)> paint;
  // What the view's layout held when last painted (describeLayout; render --describe).
  std::shared_ptr<nlohmann::json> described = std::make_shared<nlohmann::json>();
};

// `results[0]` is the figure's subject; the family view draws all of them.
// The compare view draws `comparison` (compareWithFull(results[0]), computed
// by the caller: it can take seconds at large L; it must outlive the
// prepared figure). Throws InputError for a view the results cannot show.
PreparedFigure prepareFigure(std::shared_ptr<const std::vector<Result>> results, const FigureOptions& options,
                             const Comparison* comparison = nullptr);

// A page of primitives under the title: `layout` fills the body's box;
// with FigureOptions::height 0 the page is as tall as `body_height` asks
// for at the body's width (both in layout units).
using FigureLayout = std::function<void(Primitives& out, const Canvas& c, const Box& body)>;
using FigureBodyHeight = std::function<float(const Canvas& c, float width)>;
PreparedFigure prepareLayoutFigure(FigureLayout layout, const FigureBodyHeight& body_height, const FigureOptions& options);

// A table of text (the model workspace's head summaries): a header row and
// `rows`, title from options.title, and `plot` under it where given (as the
// screen draws it under a short table).
PreparedFigure prepareTableFigure(std::vector<std::string> columns, std::vector<std::vector<std::string>> rows,
                                  const FigureOptions& options, std::optional<Scatter> plot = std::nullopt);

// Writes the figure in the format of `path`'s extension (.png, .svg, .pdf)
// through a temp file renamed into place, so a failure leaves nothing.
// Throws InputError.
void writeFigure(const PreparedFigure& figure, const std::string& path);

// prepareFigure and writeFigure; returns the figure's height (options.height,
// or the content's when that is 0). `described`: what its layout held.
int exportFigure(const std::vector<Result>& results, const FigureOptions& options, const std::string& path,
                 const Comparison* comparison = nullptr, nlohmann::json* described = nullptr);

}  // namespace attn
