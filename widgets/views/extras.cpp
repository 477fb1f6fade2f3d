// The extras view: a variant's extra arrays, each as its own panel under its
// title — matrices (category matrices with their legend), per-token and
// per-head bars, curves with their markers, points, category bars, token
// strips, stacked bars — after a row of its scalar values. Where there are
// per-head weights extras (Transformer-XL's terms), the main weights of the
// shown head come first, once, as a panel of their own, so each term is read
// against them; one over steps (ACT's ponder steps) shows the timeline's step.
// Panels tile the area where each stays readable, else they fill a grid
// that scrolls on screen. The panel a lesson points at is framed; in
// presentation mode, where the panels do not fit, it takes the area alone.
#include "widgets/views/view.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace extras_view {

bool shown(const Extra& e) {
  switch (e.kind) {
    case ExtraKind::Matrix: return e.value.rank() == 2;
    case ExtraKind::Weights: return e.value.rank() == 3 && e.value.shape[0] > 0;
    case ExtraKind::TokenValues:
    case ExtraKind::HeadValues:
    case ExtraKind::Curves:
    case ExtraKind::TokenCategories:
    case ExtraKind::CategoryValues:
    case ExtraKind::Points:
    case ExtraKind::Stacked: return true;
    case ExtraKind::Scalar:         // in the row of values
    case ExtraKind::QueryPosition:  // overlays of the heatmap
    case ExtraKind::QueryWindow:
    case ExtraKind::QueryGroup:     // outlined in the image view
    case ExtraKind::Picture:        // the image view's
    case ExtraKind::Data: return false;  // written by compute, not drawn
  }
  return false;
}

bool perHead(const Extra& e) { return e.kind == ExtraKind::Weights && e.slice_axis == "head"; }

// The panels are extras, and null for the shown head's main weights (first, where any extra is per head).
using PanelSource = const Extra*;

// A grid of choices (which pattern each layer × head uses, which positions still update at each step) keeps
// square cells in a figure; on screen its cells stretch up to 8:1 to fill the panel.
float categoryAspect(const Canvas& c) { return c.screen ? 8.0f : 1.0f; }

std::vector<ScalarItem> scalarsOf(const Result& r) {
  std::vector<ScalarItem> items;
  for (const Extra& e : r.extras)
    if (e.kind == ExtraKind::Scalar && !e.value.data.empty()) items.push_back(scalarItem(e));
  return items;
}

// A matrix extra [R, C], or one slice of a Weights extra [n, Lq, Lk].
ViewPanel matrixPanel(const Canvas& c, const Result& r, const Extra& e, const ViewParams& p, const Box& area) {
  ViewPanel panel;
  panel.area = area;
  panel.extra = &e;
  MatrixSpec& m = panel.spec;
  const int64_t rank = e.value.rank(), rows = e.value.shape[rank - 2], cols = e.value.shape[rank - 1];
  const int64_t n = rank == 3 ? e.value.shape[0] : 1;
  const bool by_head = e.slice_axis == "head";
  const int64_t slice = std::clamp<int64_t>(by_head ? p.head : p.stage, 0, n - 1);
  m.data = e.value.data.data() + slice * rows * cols;
  m.rows = rows;
  m.cols = cols;
  m.title = extraLabel(e) + (n <= 1     ? std::string()
                          : by_head ? " — head " + std::to_string(slice)  // signed ones: the colour bar's 0 is its middle
                                    : " — " + e.slice_axis + " " + std::to_string(slice + 1) + " of " + std::to_string(n));
  m.value_label.clear();  // the title names it
  m.row_axis = e.row_axis.empty() ? (e.kind == ExtraKind::Weights ? "query" : "row") : e.row_axis;
  m.col_axis = e.col_axis.empty() ? (e.kind == ExtraKind::Weights ? "key" : "column") : e.col_axis;
  if (e.kind == ExtraKind::Weights) {
    m.row_labels = &r.q_tokens;
    m.col_labels = &r.k_tokens;
    if (cols == r.keys()) m.key_bands = &r.key_bands;
  } else if (!e.row_labels.empty()) {
    m.row_labels = &e.row_labels;
  } else if (r.rowsAreTokens(e)) {
    m.row_labels = &r.q_tokens;
  }
  if (!e.categories.empty() && e.kind == ExtraKind::Matrix) {  // which pattern each layer × head uses: a legend
    m.categories = true;
    m.category_names = &e.categories;
    panel.style.max_cell_aspect = categoryAspect(c);
  } else {
    panel.style.range = extraRange(e);
    panel.style.colormap = colormapFor(panel.style.range, p.colormap);
    panel.style.max_cell_aspect = cellAspect(c, m, p);
  }
  panel.zoom = e.name;
  panel.anchor = e.kind == ExtraKind::Weights;
  return panel;
}

// The panels of `source` in `cell` (its title over a plot).
void addPanels(ViewLayout& l, Primitives& out, const Canvas& c, const Result& r, PanelSource source, const ViewParams& p,
               const Box& cell) {
  if (!source) {  // the main weights of the head the per-head extras show
    ViewPanel main = weightsPanel(c, r, shownHead(r, p), p, cell);
    main.spec.title = r.weights_label + " — head " + std::to_string(shownHead(r, p));
    main.zoom = "weights";
    main.anchor = true;
    l.panels.push_back(std::move(main));
    return;
  }
  const Extra& e = *source;
  if (e.kind == ExtraKind::Matrix || e.kind == ExtraKind::Weights) {
    ViewPanel panel = matrixPanel(c, r, e, p, cell);
    panel.anchor = panel.anchor && !perHead(e);  // the main weights are the anchor then
    l.panels.push_back(std::move(panel));
    return;
  }
  ViewPanel panel;
  // Bars over what the extra names (an NTM's weightings: "… over memory slot i"); the bars' labels are its values.
  panel.title = extraLabel(e) + (e.kind == ExtraKind::TokenValues && !e.row_axis.empty() ? " over " + e.row_axis : std::string());
  const float title_h = panelTitle(out, c, panel.title, cell.x, cell.y, cell.w);
  panel.extra = &e;
  panel.area = {cell.x, cell.y + title_h, cell.w, std::max(1.0f, cell.h - title_h)};
  panel.range = extraRange(e);
  panel.style.colormap = colormapFor(panel.range, p.colormap);
  switch (e.kind) {
    case ExtraKind::TokenValues: {
      panel.kind = PanelKind::Bars;
      if (!e.row_labels.empty()) {
        panel.labels = &e.row_labels;
      } else if (e.value.size() == r.queries()) {
        panel.labels = &r.q_tokens;
      } else {
        panel.item_axis = "position";  // a head's q or k: by index
      }
      if (!e.row_axis.empty()) panel.item_axis = e.row_axis;  // what a bar is, where the extra says (an NTM's memory slot)
      break;
    }
    case ExtraKind::HeadValues: {
      panel.kind = PanelKind::Bars;
      std::vector<std::string>& names = l.owned_labels.emplace_back();
      for (int64_t h = 0; h < e.value.size(); ++h) names.push_back("h" + std::to_string(h));
      panel.labels = &names;
      panel.colour_per_bar = true;
      panel.item_axis = "head";
      break;
    }
    case ExtraKind::Curves:
      panel.kind = PanelKind::Curves;
      panel.reveal = e.stepwise ? p.stage : -1;
      break;
    case ExtraKind::Points: panel.kind = PanelKind::Points; break;
    case ExtraKind::CategoryValues:
      panel.kind = PanelKind::CategoryBars;
      panel.range = {0.0f, std::max(1e-6f, e.stats.max), false};
      break;
    case ExtraKind::TokenCategories:
      panel.kind = PanelKind::TokenStrip;
      panel.labels = &r.q_tokens;
      break;
    case ExtraKind::Stacked: panel.kind = PanelKind::Stacked; break;
    default: return;
  }
  l.panels.push_back(std::move(panel));
}

// The area a panel's content gets in a cell of w × h: a matrix's cells as
// the panel lays them out there (after its title, labels, bands and colour
// bar or legend, each cell between 1:A and A:1 for A its cellAspect); a plot
// fills the cell less the room for its title and axes (stacked bars: their
// legend above too).
float contentArea(const Canvas& c, const Result& r, PanelSource source, const ViewParams& p, float w, float h) {
  const bool matrix = !source || source->kind == ExtraKind::Matrix || source->kind == ExtraKind::Weights;
  if (matrix) {
    const Box cell{0, 0, w, h};
    const MatrixPlacement at = placeMatrix(c, source ? matrixPanel(c, r, *source, p, cell) : weightsPanel(c, r, shownHead(r, p), p, cell));
    return at.valid() ? (at.x1 - at.x0) * (at.y1 - at.y0) : 0.0f;
  }
  const float uw = w - c.unit * 4, uh = h - c.unit * (source->kind == ExtraKind::Stacked ? 7.0f : 4.0f);
  return uw > 0 && uh > 0 ? uw * uh : 0.0f;
}

// Where the panels go. Tiled, in the grid whose smallest panel's content
// comes out largest (contentArea; a tenth of their sum as the tie-break): a
// figure always. On screen (presentation mode too) the same where every
// panel keeps 12 × 8 units of content; else a grid of rows at least 16
// units tall that scrolls (to the panel a lesson points at).
struct Arrangement {
  bool tiled = false;
  GridLayout grid;
  float panel_h = 0;
};
Arrangement arrange(const Canvas& c, const Result& r, float w, float h, const std::vector<PanelSource>& panels,
                    const ViewParams& p, bool scrolls) {
  Arrangement a;
  const int n = static_cast<int>(panels.size());
  if (!scrolls) {
    float best = -1;
    for (int cols = 1; cols <= n; ++cols) {
      const int rows = (n + cols - 1) / cols;
      const float cw = w / static_cast<float>(cols), ch = h / static_cast<float>(rows);
      float sum = 0, least = -1;
      for (const PanelSource e : panels) {
        const float area = contentArea(c, r, e, p, cw, ch);
        sum += area;
        least = least < 0 ? area : std::min(least, area);
      }
      const float score = least + 0.1f * sum;  // no panel starved for the others' room
      if (score > best) best = score, a.grid = {cols, rows, cw, ch};
    }
    a.tiled = true;
    a.panel_h = a.grid.cell_h;
    return a;
  }
  // On screen, the figure's tiling where every panel's content keeps at least 12 × 8 units; else a grid that scrolls.
  Arrangement tiled = arrange(c, r, w, h, panels, p, false);
  float least = -1;
  for (const PanelSource e : panels) {
    const float area = contentArea(c, r, e, p, tiled.grid.cell_w, tiled.grid.cell_h);
    least = least < 0 ? area : std::min(least, area);
  }
  if (tiled.grid.cols > 1 && least >= c.unit * c.unit * 96) return tiled;
  // A grid that scrolls: as many rows to the window as keep 16 units each, on the desk at least two where
  // they keep 12 (presentation mode: one, as large as a slide; no row cut at the bottom), in as many columns
  // (up to 3, each at least 18 units wide) as show the most content per row height; more columns where they
  // show within 5 % of that (more panels side by side: a term beside the weights it makes).
  float best = -1;
  const float per_window = std::max(!p.fill && h / 2 >= c.unit * 12 ? 2.0f : 1.0f, std::floor(h / (c.unit * 16)));
  for (int cols = 1; cols <= std::min(n, 3); ++cols) {
    const float cw = w / static_cast<float>(cols);
    if (cols > 1 && cw < c.unit * 18) break;
    const int rows = (n + cols - 1) / cols;
    const float row_h = h / std::min(per_window, static_cast<float>(rows));
    float sum = 0;
    for (const PanelSource e : panels) sum += contentArea(c, r, e, p, cw, row_h);
    const float score = sum / (static_cast<float>(rows) * row_h);
    if (score >= best * 0.95f) best = std::max(best, score), a.grid = {cols, rows, cw, row_h}, a.panel_h = row_h;
  }
  return a;
}

// The panels the extras view draws, in order: the main weights where any extra is per head, then every
// extra it shows.
std::vector<PanelSource> panelSources(const Result& r) {
  std::vector<PanelSource> panels;
  if (std::any_of(r.extras.begin(), r.extras.end(), [](const Extra& e) { return shown(e) && perHead(e); })) panels.push_back(nullptr);
  for (const Extra& e : r.extras)
    if (shown(e)) panels.push_back(&e);
  return panels;
}

ViewLayout layout(Primitives& out, const Canvas& c, const Box& area, const ViewInput& in, const ViewParams& p) {
  const Result& r = *in.result;
  ViewLayout l;
  const std::vector<ScalarItem> scalars = scalarsOf(r);
  float top = area.y;
  if (!scalars.empty()) top += scalarsPrimitives(out, c, Box{area.x, area.y, area.w, 0}, scalars) + c.unit * 0.6f;
  std::vector<PanelSource> panels = panelSources(r);
  if (panels.empty()) {
    if (scalars.empty()) l.message = "This variant returns no matrix, weights or per-token extras.";
    l.content_h = top - area.y;
    return l;
  }
  const float gap = c.unit * 1.2f;
  // Token strips are rows of their own under the values, as tall as their tokens need (at most a third of
  // the area): a strip in a grid cell would leave the cell empty under one line of tokens.
  for (auto it = panels.begin(); it != panels.end();) {
    if (!*it || (*it)->kind != ExtraKind::TokenCategories) {
      ++it;
      continue;
    }
    const Extra& e = **it;
    Primitives none;
    const float title_h = panelTitle(none, c, extraLabel(e), area.x, 0, area.w, false);
    const TokenStripLayout g = tokenStripPrimitives(none, c, {area.x, 0, area.w, area.h / 3 - title_h}, e.value, r.q_tokens, e.name);
    float needed = labelPx(c) * 1.5f;
    for (const Box& b : g.boxes) needed = std::max(needed, b.bottom());
    if (g.boxes.empty()) needed = area.h / 3 - title_h;  // one cell per token: the rows the cells need
    const Box cell{area.x, top, area.w, title_h + needed};
    addPanels(l, out, c, r, &e, p, cell);
    top = cell.bottom() + gap;
    it = panels.erase(it);
  }
  const float h = area.bottom() - top;
  if (panels.empty()) {
    l.content_h = top - area.y;
    return l;
  }
  Arrangement a = arrange(c, r, area.w, h, panels, p, c.screen);
  if (c.screen && p.fill && !a.tiled) {
    // Presentation mode, where the panels do not fit the window: the panel the lesson points at takes it.
    const auto focus = std::find_if(panels.begin(), panels.end(), [&](PanelSource e) { return e && e->name == p.focus_panel; });
    if (focus != panels.end()) {
      panels = {*focus};
      a = arrange(c, r, area.w, h, panels, p, false);
    }
  }
  for (size_t i = 0; i < panels.size(); ++i) {
    // A last row with fewer panels shares the whole width between them: no empty cell at its end.
    const int n = static_cast<int>(panels.size()), col = static_cast<int>(i) % a.grid.cols, row = static_cast<int>(i) / a.grid.cols;
    const int in_row = std::min(a.grid.cols, n - row * a.grid.cols);
    const float cell_w = area.w / static_cast<float>(in_row);
    const Box cell{area.x + cell_w * static_cast<float>(col), top + a.panel_h * static_cast<float>(row), cell_w - gap, a.panel_h - gap};
    addPanels(l, out, c, r, panels[i], p, cell);
    if (panels[i] && panels[i]->name == p.focus_panel) {  // the panel a lesson points at
      const float m = c.unit * 0.3f;
      addRect(out, cell.x - m, cell.y - m, cell.right() + m, cell.bottom() + m, Role::Accent, 3.0f);
    }
  }
  l.content_h = a.tiled ? area.h : top - area.y + a.panel_h * static_cast<float>(a.grid.rows);
  return l;
}

// Panels 24 units wide in rows of roughly square cells, under the values.
float height(const Canvas& c, float width, const ViewInput& in, const ViewParams&) {
  const Result& r = *in.result;
  Primitives none;
  const std::vector<ScalarItem> scalars = scalarsOf(r);
  const float values_h = scalars.empty() ? 0.0f : scalarsPrimitives(none, c, Box{0, 0, width, 0}, scalars, false) + c.unit * 0.6f;
  const int n = static_cast<int>(panelSources(r).size());
  const int cols = std::clamp(static_cast<int>(width / (c.unit * 24)), 1, std::max(1, n));
  const float cell_w = width / static_cast<float>(cols);
  return values_h + static_cast<float>((n + cols - 1) / cols) * (cell_w * 0.85f + c.unit * 3);
}

std::string refusal(const ViewInput& in, const ViewParams&) {
  for (const Extra& e : in.result->extras)
    if (shown(e) || e.kind == ExtraKind::Scalar) return "";
  return "--view extras: variant '" + in.result->variant + "' has no extras to show";
}

}  // namespace extras_view

extern const ViewInfo kExtrasView = {
    .name = "extras",
    .help = "the variant's extra arrays: matrices, per-token and per-head values, curves, term weights",
    .hint = "the variant's extra arrays, each in its own panel; hover for values",
    .head = true,
    .steps = ViewSteps::Extras,
    .layout = extras_view::layout,
    .height = extras_view::height,
    .refusal = extras_view::refusal};

}  // namespace attn
