// The view registry and what the views share: grids, the colour bar beside
// a grid, panel titles, and a figure's rendering of each kind of panel.
#include "widgets/views/view.h"

#include "engine/error.h"
#include "widgets/view_layouts.h"

#include <algorithm>
#include <cmath>

namespace attn {

// [SECTION] The registry

// The registry: one line per view, whose entry and layout are in
// widgets/views/<view>.cpp (a view there defines `extern const ViewInfo kNameView`).
#define ATTN_VIEWS(X) \
  X(kHeatmapView)     \
  X(kHeadsView)       \
  X(kLinesView)       \
  X(kExtrasView)      \
  X(kFamilyView)      \
  X(kImageView)       \
  X(kCompareView)     \
  X(kWalkthroughView)

#define ATTN_DECLARE_VIEW(entry) extern const ViewInfo entry;
ATTN_VIEWS(ATTN_DECLARE_VIEW)

const std::vector<const ViewInfo*>& viewRegistry() {
#define ATTN_VIEW_ADDRESS(entry) &entry,
  static const std::vector<const ViewInfo*> views = {ATTN_VIEWS(ATTN_VIEW_ADDRESS)};
  return views;
}

const ViewInfo* findView(const std::string& name) {
  for (const ViewInfo* v : viewRegistry())
    if (v->name == name) return v;
  return nullptr;
}

const ViewInfo& viewOrThrow(const std::string& name, const std::string& flag) {
  if (const ViewInfo* v = findView(name)) return *v;
  throw InputError(flag + ": unknown view '" + name + "' (expected one of: " + viewNames() + ")");
}

std::string viewNames() {
  std::string names;
  for (const ViewInfo* v : viewRegistry()) names += (names.empty() ? "" : ", ") + v->name;
  return names;
}

// [SECTION] Panels

MatrixPlacement panelPrimitives(Primitives& out, const Canvas& c, const ViewPanel& p, const std::vector<Annotation>& marks) {
  const Box& a = p.area;
  if (a.w <= 1 || a.h <= 1) return {};
  const Extra* e = p.extra;
  switch (p.kind) {
    case PanelKind::Matrix: {
      const MatrixPlacement placed = matrixPanelPrimitives(out, c, a, p.spec, p.style);
      if (!marks.empty()) {
        const float px = labelPx(c);
        annotationPrimitives(out, placed, marks, 1.0f, px, c.measure(px));
      }
      return placed;
    }
    case PanelKind::Bars: barsPrimitives(out, c, a, e->value, e->name, p.labels, p.range, p.style.colormap, p.colour_per_bar); break;
    case PanelKind::Curves:
      curvesPrimitives(out, c, a, e->value,
                       seriesNames(e->value.rank() == 2 ? e->value.shape[0] : 1, e->categories, e->row_axis.empty() ? "series" : e->row_axis),
                       e->col_axis.empty() ? "x" : e->col_axis, e->markers, e->levels, p.reveal);
      break;
    case PanelKind::Points: pointsPrimitives(out, c, a, *e); break;
    case PanelKind::CategoryBars: barsPrimitives(out, c, a, e->value, e->name, nullptr, p.range, p.style.colormap, true); break;
    case PanelKind::TokenStrip: tokenStripPrimitives(out, c, a, e->value, *p.labels, e->name); break;
    case PanelKind::Stacked:
      stackedPrimitives(out, c, a, e->value, e->row_labels, e->row_axis.empty() ? "row" : e->row_axis,
                        e->col_axis.empty() ? "segment" : e->col_axis);
      break;
    case PanelKind::Lines: tokenLinesPrimitives(out, c, a, *p.result, p.visible, false); break;
    case PanelKind::Image:
      imageViewPrimitives(out, c, a, *p.pattern, p.result->set_names, imageWidth(*p.result), p.queries.at(0),
                          p.result->firstExtra(ExtraKind::QueryGroup), "figure");
      break;
    case PanelKind::Picture:
      pictureViewPrimitives(out, c, a, p.result->firstExtra(ExtraKind::Picture)->value,
                            p.result->weights[static_cast<size_t>(p.head)], p.result->key_image_width, p.queries, p.active,
                            "figure");
      break;
  }
  return {};
}

nlohmann::json describeLayout(const ViewLayout& l, const Canvas& c, const std::vector<MatrixPlacement>* placed) {
  static const char* const kKinds[] = {"matrix", "bars", "curves", "points", "category bars", "token strip", "stacked", "lines",
                                       "image", "picture"};
  nlohmann::json panels = nlohmann::json::array();
  for (size_t i = 0; i < l.panels.size(); ++i) {
    const ViewPanel& p = l.panels[i];
    nlohmann::json j = {{"kind", kKinds[static_cast<int>(p.kind)]}};
    const bool matrix = p.kind == PanelKind::Matrix;
    const ValueRange& range = matrix ? p.style.range : p.range;
    j["title"] = matrix ? p.spec.title : p.title;
    if (matrix) {  // what the cells hold and along which dimensions
      j["value_label"] = p.spec.value_label;
      j["row_axis"] = p.spec.row_axis;
      j["col_axis"] = p.spec.col_axis;
    }
    j["range"] = {range.lo, range.hi};
    j["scale"] = range.mode == ScaleMode::Log ? "log" : range.mode == ScaleMode::Power ? "power" : "linear";
    if (p.shared_scale) j["shared_scale"] = true;
    j["colormap"] = colormapName(p.style.colormap);
    j["area"] = {p.area.x, p.area.y, p.area.w, p.area.h};
    const MatrixSpec& m = p.spec;
    // The strongest cell: dense (unmasked) or a sparse matrix's entries.
    int64_t best = -1;
    float value = 0;
    const auto consider = [&](int64_t k, float v) {
      if (std::isfinite(v) && (best < 0 || std::abs(v) > std::abs(value))) best = k, value = v;
    };
    if (matrix && !m.categories && m.data) {
      for (int64_t k = 0; k < m.rows * m.cols; ++k)
        if (!(m.mask && m.mask->size() && (*m.mask)(k / m.cols, k % m.cols) == 0.0f)) consider(k, m.data[k]);
    } else if (matrix && !m.categories && m.sparse && !m.sparse->values.empty()) {
      for (int64_t r = 0; r < m.sparse->rows; ++r)
        for (int64_t e = m.sparse->rowBegin(r); e < m.sparse->rowEnd(r); ++e)
          consider(r * m.cols + m.sparse->indices[static_cast<size_t>(e)], m.sparse->values[static_cast<size_t>(e)]);
    }
    {
      if (best >= 0) {
        const int64_t r = best / m.cols, col = best % m.cols;
        const MatrixPlacement at = placed && i < placed->size() ? (*placed)[i] : placeMatrix(c, p);
        j["rows"] = m.rows;
        j["dense"] = m.data != nullptr;
        j["cols"] = m.cols;
        j["strongest"] = {{"row", r}, {"col", col}, {"value", value},
                          {"x", at.colX(static_cast<double>(col) + 0.5)}, {"y", at.rowY(static_cast<double>(r) + 0.5)},
                          {"cell", std::min((at.x1 - at.x0) / static_cast<float>(m.cols), (at.y1 - at.y0) / static_cast<float>(m.rows))}};
      }
    }
    panels.push_back(std::move(j));
  }
  return {{"panels", panels}, {"message", l.message}};
}

nlohmann::json markSheetJson(const MarkSheet& sheet) {
  const auto box = [](const Box& b) { return nlohmann::json::array({b.x, b.y, b.w, b.h}); };
  nlohmann::json marks = nlohmann::json::array(), labels = nlohmann::json::array(), leaders = nlohmann::json::array();
  for (const MarkSheet::Mark& m : sheet.marks) marks.push_back({{"id", m.id}, {"box", box(m.box)}, {"value", m.value}});
  for (const MarkSheet::Label& l : sheet.labels) labels.push_back({{"text", l.text}, {"names", l.names}, {"box", box(l.box)}});
  for (const MarkSheet::Leader& d : sheet.leaders)
    leaders.push_back({{"names", d.names}, {"from", {d.x0, d.y0}}, {"to", {d.x1, d.y1}}});
  return {{"marks", marks}, {"labels", labels}, {"leaders", leaders}};
}

MarkSheet markSheetFromJson(const nlohmann::json& j) {
  const auto box = [](const nlohmann::json& b) { return Box{b.at(0).get<float>(), b.at(1).get<float>(), b.at(2).get<float>(), b.at(3).get<float>()}; };
  MarkSheet s;
  for (const nlohmann::json& m : j.value("marks", nlohmann::json::array()))
    s.marks.push_back({m.at("id").get<std::string>(), box(m.at("box")), m.at("value").get<double>()});
  for (const nlohmann::json& l : j.value("labels", nlohmann::json::array()))
    s.labels.push_back({l.at("text").get<std::string>(), l.at("names").get<std::string>(), box(l.at("box"))});
  for (const nlohmann::json& d : j.value("leaders", nlohmann::json::array()))
    s.leaders.push_back({d.at("names").get<std::string>(), d.at("from").at(0).get<float>(), d.at("from").at(1).get<float>(),
                         d.at("to").at(0).get<float>(), d.at("to").at(1).get<float>()});
  return s;
}

MatrixPlacement placeMatrix(const Canvas& c, const ViewPanel& p) {
  Primitives scratch;
  return matrixPanelPrimitives(scratch, c, p.area, p.spec, p.style);
}

// [SECTION] Pieces the views share

namespace {
bool sameLabels(const std::vector<std::string>* a, const std::vector<std::string>* b) {
  return a == b || (a && b && *a == *b);
}
}  // namespace

void labelledGrid(const Canvas& c, const Box& area, std::vector<ViewPanel>& panels, float gap) {
  if (panels.empty()) return;
  // The room the labels take, measured on the first panel: where its cells start with and without them
  // (a probe as wide as a cell of a square grid, tall enough that the width sets the cells).
  const int n = static_cast<int>(panels.size());
  const int side = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n))));
  // The column axis title only in the first panel's corner ("key →"), where it fits: a row of its own
  // over one panel would leave the top row's cells uneven.
  ViewPanel probe = panels[0];
  probe.area = {0, 0, area.w / static_cast<float>(side), 1e6f};
  probe.style.max_cell_aspect = 1.0f;
  probe.style.corner_title = true;
  ViewPanel untitled = probe;
  untitled.spec.col_axis.clear();
  const bool corner = placeMatrix(c, probe).y0 <= placeMatrix(c, untitled).y0 + 0.5f;
  for (size_t i = 0; i < panels.size(); ++i) {
    panels[i].style.corner_title = true;
    if (i > 0 || !corner) panels[i].spec.col_axis.clear();
  }
  probe.spec.col_axis = panels[0].spec.col_axis;
  const MatrixPlacement with = placeMatrix(c, probe);
  probe.style.row_labels = probe.style.col_labels = false;
  const MatrixPlacement without = placeMatrix(c, probe);
  const bool labels = panels[0].style.labels;
  const float room_w = labels ? std::max(0.0f, with.x0 - without.x0) : 0.0f, room_h = labels ? std::max(0.0f, with.y0 - without.y0) : 0.0f;
  const float title_h = without.y0;  // the panel's title over its cells
  const Box inner{area.x + room_w, area.y + room_h, area.w - room_w, area.h - room_h};
  const GridLayout g = bestGrid(n, inner.w + gap, inner.h + gap, 0, title_h);
  for (int i = 0; i < n; ++i) {
    ViewPanel& p = panels[static_cast<size_t>(i)];
    const int col = i % g.cols, row = i / g.cols;
    Box b{inner.x + static_cast<float>(col) * g.cell_w, inner.y + static_cast<float>(row) * g.cell_h, g.cell_w - gap, g.cell_h - gap};
    // A last row with fewer panels shares the width; its cells then no longer sit under the top row's
    // columns, so it labels its own, as does a panel whose keys differ from the first's (cross-attention).
    const int in_row = std::min(g.cols, n - row * g.cols);
    if (in_row < g.cols) {
      const float w = (inner.w + gap) / static_cast<float>(in_row);
      b.x = inner.x + static_cast<float>(col) * w;
      b.w = w - gap;
    }
    p.style.row_labels = col == 0 || !sameLabels(p.spec.row_labels, panels[0].spec.row_labels);
    p.style.col_labels = row == 0 || in_row < g.cols || !sameLabels(p.spec.col_labels, panels[0].spec.col_labels);
    if (col == 0) b.x -= room_w, b.w += room_w;
    if (row == 0) b.y -= room_h, b.h += room_h;
    p.area = b;
  }
}

float cellAspect(const Canvas& c, const MatrixSpec& m, const ViewParams& p) {
  // A square map: square cells in a figure, up to 1.6:1 on the desk, 2.5:1 in presentation mode (a wide
  // area over the caption).
  if (m.rows == m.cols) return !c.screen ? 1.0f : p.fill ? 2.5f : 1.6f;
  if (c.screen) return 8.0f;  // the screen fills its panel with a matrix of any shape
  return m.cols > m.rows ? 4.0f : 1.6f;
}

int shownHead(const Result& r, const ViewParams& p) { return std::clamp(p.head, 0, std::max(0, r.heads() - 1)); }

ViewPanel weightsPanel(const Canvas& c, const Result& r, int head, const ViewParams& p, const Box& area, const ValueRange* shared) {
  ViewPanel panel;
  panel.area = area;
  panel.spec = weightsSpec(r, head);
  panel.style.range = shared ? *shared : scaledWeightsRange(weightsRange(r), p.scale, r, head);
  panel.style.colormap = colormapFor(panel.style.range, p.colormap);
  panel.style.max_cell_aspect = cellAspect(c, panel.spec, p);
  return panel;
}

void sideColorbar(Primitives& out, const Canvas& c, const Box& area, float width, float top, float bottom,
                  const ValueRange& range, Colormap cmap, const std::string& caption) {
  if (bottom <= top) return;
  const float px = labelPx(c);
  colorbarPrimitives(out, area.right() - width + c.unit * 1.2f, top, c.unit * 1.1f, bottom - top, cmap, range, caption, px,
                     c.measure(px));
}

std::string extraLabel(const Extra& e) { return e.label.empty() ? e.name : e.label; }

}  // namespace attn
