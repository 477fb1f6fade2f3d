// The view registry: every view of a variant's result is one entry (its
// name, help, the parameters it reads, what it can show) and one GUI-free
// layout function in widgets/views/<view>.cpp that turns a result and the
// view's parameters into primitives and panels — grids, titles, colour
// ranges and colour bars decided once. The screen (app/gui/gui_views.cpp)
// replays a layout with ImGui and adds interaction on the geometry it
// returns; a figure (app/export/figure.cpp) is page + title + the same
// layout + the Qt backend. A new view is one file and one line in
// views.cpp.
//
// Index
//   [SECTION] What a view reads: ViewParams, ViewInput
//   [SECTION] What a layout returns: panels, hit regions
//   [SECTION] The registry
//   [SECTION] Pieces the views share
#pragma once

#include "engine/compare.h"
#include "engine/registry.h"
#include "engine/result.h"
#include "widgets/annotations.h"
#include "widgets/matrix_panel.h"
#include "widgets/plot_layouts.h"
#include "widgets/primitives.h"
#include "widgets/value_range.h"
#include "widgets/view_layouts.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace attn {

// [SECTION] What a view reads

// One set of parameters for every view: what the screen edits and what an
// export reads (the screen hands the same struct to the figure), so a figure
// shows what the screen shows without a field copied by hand. Each view
// reads the fields its registry entry lists.
struct ViewParams {
  int head = 0;                  // the head shown (heatmap, image, compare; the focused thumbnail; extras' per-head panels)
  ColorScale scale;              // how weights map to colours
  Colormap colormap = Colormap::Viridis;
  bool own_scales = false;       // family: each member on its own colour scale (default: one shared scale)
  std::vector<bool> heads_visible;  // lines: the heads drawn (empty: all)
  int64_t query = -1;            // image: the query pixel (−1: defaultImageQuery); a picture's active query
  std::vector<int64_t> queries;  // a picture's query pixels (empty: Result::image_queries, `query` in the first)
  int active_query = 0;          // which of `queries` `query` is
  std::vector<std::string> panel_titles;  // heads: one per head (a model's "L0 H0", …); empty: "head h"
  int stage = -1;                // the timeline's step the view plays: walkthrough stage, an extra's step (−1: all)
  std::string focus_panel;       // extras: the panel a lesson frames (an extra's name)
  bool fill = false;             // presentation mode (on a screen): a wide area over the caption, nothing scrolls by hand
  // A lesson step's marks, drawn by a figure over the view's anchor panel
  // (the screen animates them itself over the same panel).
  std::vector<Annotation> marks;
};

// A member of the family view.
struct ViewMember {
  std::string variant;
  const Result* result = nullptr;  // null: it could not run
  std::string error;
};

// The data a view draws; nothing is owned.
struct ViewInput {
  const Result* result = nullptr;          // the subject
  std::vector<ViewMember> family;          // family view: every member in the family's order (the subject among them)
  const Comparison* comparison = nullptr;  // compare view: compareWithFull(result)
  // Image view of a dense result: the shown head's pattern as CSR, built
  // once by the caller (sparse results carry theirs).
  const SparseRows* dense_pattern = nullptr;
};

// [SECTION] What a layout returns

// A panel the view places: a matrix panel (widgets/matrix_panel.h), a plot
// (widgets/plot_layouts.h) or one of the composite pictures
// (widgets/view_layouts.h). A figure appends its primitives
// (panelPrimitives); the screen draws it with the widget that lays out the
// same primitives from the same arguments and adds hover, zoom and clicks.
enum class PanelKind { Matrix, Bars, Curves, Points, CategoryBars, TokenStrip, Stacked, Lines, Image, Picture };

struct ViewPanel {
  PanelKind kind = PanelKind::Matrix;
  Box area;
  // Matrix
  MatrixSpec spec;
  MatrixStyle style;
  std::string zoom = "main";  // panels with the same key share the screen's zoom (the heads grid)
  bool anchor = false;        // where a lesson's marks go: the view's main matrix
  int click_head = -1;        // a click focuses this head in the heatmap view (the heads grid)
  // Its colour range is the one the view's panels share, said on their one colour bar (the family: equal
  // colours are equal weights across members; the heads grid): a member of small weights is drawn dark on purpose.
  bool shared_scale = false;
  std::string click_variant;  // a click selects this variant (the family grid)
  // Plots: the extra drawn and how, under the title the layout drew over it
  const Extra* extra = nullptr;
  std::string title;
  const std::vector<std::string>* labels = nullptr;  // bars: per bar; token strip: the tokens
  ValueRange range;
  bool colour_per_bar = false;
  std::string item_axis = "token";  // bars: what a bar is
  int64_t reveal = -1;              // curves: drawn up to this x (a timeline playing the process)
  // Lines, Image, Picture
  const Result* result = nullptr;
  std::vector<bool> visible;            // Lines: the heads drawn (empty: all)
  const SparseRows* pattern = nullptr;  // Image: the head's pattern
  int head = 0;                         // Picture: the head whose weights the maps show
  std::vector<int64_t> queries;         // Image: the query; Picture: its query pixels
  int active = 0;                       // Picture: the query a click moves
};

// A region of the view with a tooltip per cell of a rows × cols grid over
// it (the compare view's numbers and mass strip).
struct ViewHit {
  Box box;
  int64_t rows = 1, cols = 1;
  std::function<std::string(int64_t row, int64_t col)> tooltip;
};

struct ViewLayout {
  std::vector<ViewPanel> panels;
  std::vector<ViewHit> hits;
  std::string message;   // no panel to draw: why (centred where the view would be)
  float content_h = 0;   // the height the view takes: more than its area when its panels scroll (extras)
  // What the panels point into that the layout made (labels, slices).
  std::deque<std::vector<std::string>> owned_labels;
  std::deque<Mat> owned_mats;
};

// A panel's primitives (a figure's rendering of it); `marks` over a matrix panel.
MatrixPlacement panelPrimitives(Primitives& out, const Canvas& c, const ViewPanel& p, const std::vector<Annotation>& marks = {});
// Where a matrix panel's cells go (laid out without drawing).
MatrixPlacement placeMatrix(const Canvas& c, const ViewPanel& p);

// What a laid-out view holds, as JSON (gui and render --describe): per
// panel its kind, title, colour range and colormap, and for a dense matrix
// its strongest cell (largest |value| not masked), the value and, from
// `placed` (the screen's placements, by panel; else laid out on `c`), the
// cell's centre. A test holds the screen and a figure of one view to each
// other with it, and to their pixels and text.
nlohmann::json describeLayout(const ViewLayout& l, const Canvas& c, const std::vector<MatrixPlacement>* placed = nullptr);

// The data marks a view drew, their labels and leaders (MarkSheet), as
// `--describe` writes them beside the panels: {"marks": [{id, box, value}],
// "labels": [{text, names, box}], "leaders": [{names, from, to}]}, boxes as
// [x, y, w, h]; and read back (the tests' rules run on what was written).
nlohmann::json markSheetJson(const MarkSheet& sheet);
MarkSheet markSheetFromJson(const nlohmann::json& j);

// [SECTION] The registry

using ViewLayoutFn = ViewLayout (*)(Primitives& out, const Canvas& c, const Box& area, const ViewInput& in, const ViewParams& p);
// The height the view wants at `width` for a figure whose height follows its content.
using ViewHeightFn = float (*)(const Canvas& c, float width, const ViewInput& in, const ViewParams& p);
// Why the view cannot show `in` (a one-line InputError text), or empty.
using ViewRefusalFn = std::string (*)(const ViewInput& in, const ViewParams& p);

// What the timeline steps through in a view: the variant's timeline
// parameter (Result::timeline), a walkthrough's stages, an extra's steps
// (ACT's ponder steps, a curve revealed step by step), or nothing.
enum class ViewSteps { Param, Stages, Extras, None };

struct ViewInfo {
  std::string name;          // what --view, lessons and VariantInfo::views call it
  std::string help;          // the view menu's tooltip
  std::string hint;          // the screen's header: what the view shows, what a click does
  // The parameters it reads (the screen's controls): the head slider, the
  // family's own-scales switch, the query pixel (arrow keys move it).
  bool head = false, own_scales = false, query = false;
  // What it needs computed beside the result.
  bool family = false, comparison = false;
  // A figure's title: the variant's title, then this, then "— head h" where
  // `one_head` and the result has several.
  bool one_head = false;
  std::string title_suffix;
  ViewSteps steps = ViewSteps::Param;
  ViewLayoutFn layout = nullptr;
  ViewHeightFn height = nullptr;
  ViewRefusalFn refusal = nullptr;
};

// Every view, in the order of their shortcut keys (view.cpp: one line each).
const std::vector<const ViewInfo*>& viewRegistry();
// The views' names in that order: "heatmap, heads, …" (for --help and errors).
std::string viewNames();
// The view called `name`, or null.
const ViewInfo* findView(const std::string& name);
// The view called `name`; else an InputError naming `flag` and the views there are.
const ViewInfo& viewOrThrow(const std::string& name, const std::string& flag = "--view");

// [SECTION] Pieces the views share


// Small multiples: matrix panels of one shape (`panels`, their spec and
// style set) in the grid of `area` whose cells come out largest, `gap`
// apart, the token labels only along the left column (rows) and the top row
// (columns), every panel's cells the same size. A last row with fewer panels
// shares the width and labels its own columns, as does a panel whose tokens
// differ from the first's (cross-attention in a family). Sets each panel's
// area and label flags.
void labelledGrid(const Canvas& c, const Box& area, std::vector<ViewPanel>& panels, float gap);
// How far a matrix's cells may stretch. In a figure square matrices keep
// square cells, a wide one up to 4:1 (a 12 × 64 gate map is not a thin
// strip), a tall one 1.6:1. On screen (Canvas::screen) a square one up to
// 1.6:1 (2.5:1 in presentation mode, a wide area over the caption) and any
// other shape fills its panel (up to 8:1).
float cellAspect(const Canvas& c, const MatrixSpec& m, const ViewParams& p);
// The head `p.head` clamped to the result's heads.
int shownHead(const Result& r, const ViewParams& p);
// Head `head`'s weights as a matrix panel on the result's colour scale, or
// on `shared` (a grid's one scale, computed once for all its panels).
ViewPanel weightsPanel(const Canvas& c, const Result& r, int head, const ViewParams& p, const Box& area,
                       const ValueRange* shared = nullptr);
// A vertical colour bar for `range` at the right of `area` (`width` wide), from `top` to `bottom`.
void sideColorbar(Primitives& out, const Canvas& c, const Box& area, float width, float top, float bottom,
                  const ValueRange& range, Colormap cmap, const std::string& caption);
// An extra's title: its label, else its name.
std::string extraLabel(const Extra& e);

}  // namespace attn
