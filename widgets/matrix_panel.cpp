#include "widgets/matrix_panel.h"

#include "engine/registry.h"
#include "widgets/plot_layouts.h"
#include "widgets/value_range.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

namespace attn {

MatrixSpec MatrixSpec::of(const Mat& m) {
  MatrixSpec v;
  v.data = m.data();
  v.rows = m.rows();
  v.cols = m.cols();
  return v;
}

MatrixSpec MatrixSpec::of(const SparseRows& s) {
  MatrixSpec v;
  v.sparse = &s;
  v.rows = s.rows;
  v.cols = s.cols;
  return v;
}

MatrixSpec weightsSpec(const Result& r, int head) {
  const size_t h = static_cast<size_t>(head);
  MatrixSpec v = r.weights.empty() ? MatrixSpec::of(r.sparse[h]) : MatrixSpec::of(r.weights[h]);
  if (h < r.scores.size() && r.scores[h].size()) v.scores = &r.scores[h];
  if (r.mask.size()) v.mask = &r.mask;
  v.row_labels = &r.q_tokens;
  v.col_labels = &r.k_tokens;
  v.value_label = r.weights_label;
  v.score_label = r.scores_label;
  v.key_bands = &r.key_bands;
  v.set_names = &r.set_names;
  const WeightAxes axes = weightAxes(r);
  v.row_axis = axes.rows;
  v.col_axis = axes.cols;
  if (const Extra* e = r.firstExtra(ExtraKind::QueryPosition)) v.query_position = &e->value;
  if (const Extra* e = r.firstExtra(ExtraKind::QueryWindow)) v.query_window = &e->value;
  return v;
}

std::string axisLabel(const std::vector<std::string>* labels, int64_t i) {
  if (labels && i >= 0 && i < static_cast<int64_t>(labels->size())) return (*labels)[static_cast<size_t>(i)];
  return std::to_string(i);
}

namespace {

constexpr Rgb8 kDark{0, 0, 0}, kLight{255, 255, 255};

float widestLabel(const Canvas& c, const std::vector<std::string>* labels, int64_t n, float px) {
  float w = 0.0f;
  // Long axes are thinned anyway; measuring a sample bounds the cost.
  const int64_t step = std::max<int64_t>(1, n / 512);
  for (int64_t i = 0; i < n; i += step) w = std::max(w, c.textWidth(axisLabel(labels, i), px));
  return w;
}

// The category legend's entries: each name on its headColor().
std::vector<LegendEntry> categoryEntries(const std::vector<std::string>& names) {
  std::vector<LegendEntry> out;
  for (size_t i = 0; i < names.size(); ++i) out.push_back({headColor(static_cast<int>(i)), names[i]});
  return out;
}

std::string cornerTitle(const std::string& axis) { return axis + " \xE2\x86\x92"; }

// Where everything goes; computed before anything is drawn.
struct Geometry {
  float unit = 0, lp = 0, gap = 0;  // the base unit, the label size, the gap between a label and what it names
  float title_h = 0, axis_h = 0;    // the panel's title, an axis title's band
  float row_margin = 0, col_margin = 0;  // room for the row labels (left), column labels (above)
  float row_px = 0, col_px = 0;          // their sizes
  bool col_vertical = false;
  bool col_title_corner = false;  // the column axis title left of the column labels, not above them
  float band_h = 0;
  float strip = 0, row_strip = 0, col_strip = 0;  // category strips: width, and the room each takes
  float bar_w = 0, bar_gap = 0;
  bool legend = false, legend_beside = false;
  float legend_w = 0;  // beside: the column's width
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // the cells
  float cw = 0, ch = 0;                  // one cell on screen (zoom included)
  float band_top = 0;                    // the top of the key bands (under the titles)
  float bottom = 0;                      // the lowest y taken
};

float bandWidth(const Geometry& g, const MatrixPlacement& p, const KeyBand& b) {
  return std::min(g.x1, p.colX(static_cast<double>(b.end))) - std::max(g.x0, p.colX(static_cast<double>(b.begin))) -
         g.unit * 0.3f;
}

MatrixPlacement placementOf(const Geometry& g, const MatrixSpec& m, const MatrixStyle& s) {
  return {g.x0, g.y0, g.x1, g.y1, s.u0, s.v0, s.u1, s.v1, m.rows, m.cols};
}

// The size a band's label is set at to fit its band (a word longer than the
// band shrinks it, down to half size), or 0 when it cannot fit at all.
float bandLabelPx(const Canvas& c, const std::string& label, float px, float width) {
  if (width <= 0) return 0;
  float word = 0;
  size_t i = 0;
  while (i <= label.size()) {
    const size_t sp = std::min(label.find(' ', i), label.size());
    word = std::max(word, c.textWidth(label.substr(i, sp - i), px));
    i = sp + 1;
  }
  if (word <= width) return px;
  return word * 0.5f <= width ? px * width / word : 0.0f;
}

Geometry layout(const Canvas& c, const Box& area, const MatrixSpec& m, const MatrixStyle& s) {
  Geometry g;
  const float u = c.unit;
  g.unit = u;
  g.lp = kLabelScale * u;
  g.gap = u * 0.3f;
  const float zoom_x = 1.0f / std::max(1e-6f, s.u1 - s.u0), zoom_y = 1.0f / std::max(1e-6f, s.v1 - s.v0);
  g.title_h = m.title.empty() ? 0.0f : formulaHeight(c, m.title, u * 1.05f, area.w, true) + u * 0.4f;
  const bool labels = s.labels && s.row_labels, col_labels = s.labels && s.col_labels;
  g.axis_h = g.lp * 1.5f;
  const float row_title = labels && !m.row_axis.empty() ? g.axis_h : 0.0f;
  // Long tokens cannot squeeze the matrix away: their margin is capped (and they shrink to it).
  const float cap = 0.3f * std::min(area.w, area.h);
  const float row_w = labels ? widestLabel(c, m.row_labels, m.rows, g.lp) : 0.0f;
  const float col_w = col_labels ? widestLabel(c, m.col_labels, m.cols, g.lp) : 0.0f;
  g.row_margin = labels ? std::min(row_w, cap) + g.gap * 2 : 0.0f;
  g.strip = u * 0.6f;
  g.row_strip = m.row_categories ? g.strip + u * 0.15f : 0.0f;
  g.col_strip = m.col_categories ? g.strip + u * 0.15f : 0.0f;
  float right = 0, bottom = g.gap, top_reserve = 0;
  g.legend = s.colorbar && m.categories && m.category_names && !m.category_names->empty();
  if (g.legend) {
    // The shared legend (plot_layouts): in a column beside the cells where it takes at most a third of the width, else in rows under them.
    const std::vector<LegendEntry> entries = categoryEntries(*m.category_names);
    Primitives none;
    g.legend_w = legendWidth(c, entries);
    const float column_h = legendPrimitives(none, c, Box{0, 0, g.legend_w, 0}, entries, true, false);
    g.legend_beside = g.legend_w + u <= area.w / 3 && column_h <= area.h - g.title_h;
    if (g.legend_beside) right = g.legend_w + u;
    else bottom += legendPrimitives(none, c, Box{0, 0, area.w, 0}, entries, false, false) + u * 0.5f;
  } else if (s.colorbar && !m.categories) {
    // The bar, its ticks and their widest label, and the caption turned beside them (colorbarPrimitives);
    // the end ticks' labels are centred on the bar's ends.
    bottom = std::max(bottom, g.lp * 0.65f);
    top_reserve = g.lp * 0.65f;
    g.bar_gap = u;
    g.bar_w = u * 0.9f;
    right = g.bar_gap + g.bar_w + g.lp * 0.35f * 1.5f + c.textWidth("-0.0000", g.lp) + g.lp * 1.7f;
  }
  const float left = area.x + row_title + g.row_margin + g.row_strip;
  // The column axis title goes in the corner left of the column labels where it fits ("key →", as the
  // screen always had it), else in a row of its own above them.
  g.col_title_corner = col_labels && s.corner_title && !m.col_axis.empty() &&
                       c.textWidth(cornerTitle(m.col_axis), g.lp) + g.gap <= row_title + g.row_margin + g.row_strip;
  const float col_title = col_labels && !m.col_axis.empty() && !g.col_title_corner ? g.axis_h : 0.0f;
  auto fit = [&](float top) {
    const float aw = std::max(1.0f, area.x + area.w - right - left), ah = std::max(1.0f, area.y + area.h - bottom - top);
    float cw = aw / static_cast<float>(m.cols), ch = ah / static_cast<float>(m.rows);
    cw = std::min(cw, ch * s.max_cell_aspect);
    ch = std::min(ch, cw * s.max_cell_aspect);
    const float slack = std::max(0.0f, aw - cw * static_cast<float>(m.cols)) * 0.5f;
    g.x0 = std::floor(left + slack);
    g.y0 = std::floor(top);
    g.x1 = g.x0 + std::floor(cw * static_cast<float>(m.cols));
    g.y1 = g.y0 + std::floor(ch * static_cast<float>(m.rows));
    g.cw = (g.x1 - g.x0) / static_cast<float>(m.cols) * zoom_x;
    g.ch = (g.y1 - g.y0) / static_cast<float>(m.rows) * zoom_y;
  };
  const float top0 = std::max(area.y + g.title_h + col_title, area.y + top_reserve);
  const bool bands = m.key_bands && !m.key_bands->empty();
  auto top = [&] { return top0 + g.band_h + g.col_margin + g.col_strip; };
  g.band_h = bands ? g.lp * 1.25f + u * 0.5f : 0.0f;
  g.col_margin = col_labels ? g.lp * 1.3f + g.gap : 0.0f;
  fit(top());
  // Column labels lie flat where the widest fits a cell, else they are turned up.
  g.col_vertical = col_labels && col_w + g.lp * 0.5f > g.cw;
  if (g.col_vertical) g.col_margin = std::min(col_w, cap) + g.gap * 2;
  // Band labels wrap to their band's width: the room above grows to the tallest.
  if (bands) {
    const MatrixPlacement p = placementOf(g, m, s);
    size_t lines = 1;
    for (const KeyBand& b : *m.key_bands) {
      const float w = bandWidth(g, p, b), px = bandLabelPx(c, b.label, g.lp, w);
      if (px > 0) lines = std::max(lines, wrapLines(c, b.label, px, w).size());
    }
    g.band_h = g.lp * 1.25f * static_cast<float>(lines) + u * 0.5f;
  }
  fit(top());
  // Labels across small cells are set smaller (down to min_label units) and thinned by labelStride;
  // long ones shrink to their margin.
  auto fitted = [&](float cell, float widest_at_lp, float room) {
    const float px = std::clamp(cell * 0.8f, std::min(g.lp, s.min_label * u), g.lp), w = widest_at_lp * px / g.lp;
    return w > room ? std::max(u * 0.3f, px * room / w) : px;
  };
  g.row_px = fitted(g.ch, row_w, g.row_margin - g.gap * 2);
  g.col_px = g.col_vertical ? fitted(g.cw, col_w, g.col_margin - g.gap * 2) : g.lp;
  g.band_top = top0;
  g.bottom = g.y1 + bottom;
  return g;
}

// An outline dark under light, as twoTone.
void twoToneRect(Primitives& out, float x0, float y0, float x1, float y1, float dark, float light) {
  Primitive& d = addRect(out, x0, y0, x1, y1, Role::Text, dark);
  d.colour = kDark;
  d.alpha = 0.8f;
  addRect(out, x0, y0, x1, y1, Role::Text, light).colour = kLight;
}

// A line dark under light: it shows on every colour of every colormap.
void twoTone(Primitives& out, float x0, float y0, float x1, float y1, float dark, float light) {
  addLine(out, x0, y0, x1, y1, kDark, dark).alpha = 0.8f;
  addLine(out, x0, y0, x1, y1, kLight, light).alpha = 0.92f;
}

// Runs of equal categories among [first, last], each filled as one piece from at(a) to at(b).
void categoryRuns(const std::vector<int32_t>& cats, int64_t first, int64_t last, float min_extent,
                  const std::function<float(double)>& at, const std::function<void(float, float, Rgb8)>& fill) {
  const int64_t n = std::min<int64_t>(last + 1, static_cast<int64_t>(cats.size()));
  for (int64_t a = first; a < n;) {
    int64_t b = a + 1;
    // Runs thinner than a device pixel merge into their neighbour: a 4,096-long axis stays a few hundred rects.
    while (b < n && (cats[static_cast<size_t>(b)] == cats[static_cast<size_t>(a)] ||
                     at(static_cast<double>(b)) - at(static_cast<double>(a)) < min_extent))
      ++b;
    fill(at(static_cast<double>(a)), at(static_cast<double>(b)), headColor(cats[static_cast<size_t>(a)]));
    a = b;
  }
}

}  // namespace

MatrixPlacement matrixPanelPrimitives(Primitives& out, const Canvas& c, const Box& area, const MatrixSpec& m,
                                      const MatrixStyle& s) {
  if ((!m.data && !m.sparse) || m.rows <= 0 || m.cols <= 0 || area.w < 8 || area.h < 8) return {};
  const Geometry g = layout(c, area, m, s);
  const MatrixPlacement p = placementOf(g, m, s);
  if (!p.valid()) return {};
  const float u = g.unit;
  const auto clampRow = [&](int64_t r) { return std::clamp<int64_t>(r, 0, m.rows - 1); };
  const auto clampCol = [&](int64_t col) { return std::clamp<int64_t>(col, 0, m.cols - 1); };
  const int64_t first_row = clampRow(static_cast<int64_t>(std::floor(s.v0 * static_cast<float>(m.rows))));
  const int64_t last_row = clampRow(static_cast<int64_t>(std::ceil(s.v1 * static_cast<float>(m.rows))) - 1);
  const int64_t first_col = clampCol(static_cast<int64_t>(std::floor(s.u0 * static_cast<float>(m.cols))));
  const int64_t last_col = clampCol(static_cast<int64_t>(std::ceil(s.u1 * static_cast<float>(m.cols))) - 1);
  const auto X = [&](double col) { return p.colX(col); };
  const auto Y = [&](double row) { return p.rowY(row); };

  if (!m.title.empty()) addFormula(out, c, m.title, area.x, area.y, u * 1.05f, area.w, Role::Text, true);

  // The cells.
  auto raster = std::make_shared<Raster>();
  raster->values = m.data;
  raster->sparse = m.sparse;
  raster->mask = m.mask;
  raster->rows = m.rows;
  raster->cols = m.cols;
  raster->range = s.range;
  raster->cmap = colormapFor(s.range, s.colormap);
  raster->categories = m.categories;
  if (m.categories) raster->key = "categories " + std::to_string(reinterpret_cast<uintptr_t>(m.data));
  raster->u0 = s.u0, raster->v0 = s.v0, raster->u1 = s.u1, raster->v1 = s.v1;
  raster->grid = true;
  Primitive& cells = addRect(out, p.x0, p.y0, p.x1, p.y1, Role::Frame);
  cells.kind = Primitive::Kind::Raster;
  cells.raster = std::move(raster);
  addRect(out, p.x0 - 1, p.y0 - 1, p.x1 + 1, p.y1 + 1, Role::Frame);

  // Over the cells, clipped to them: dividers, key-band boundaries, query windows and markers, the hovered cell.
  pushClip(out, p.x0, p.y0, p.x1, p.y1);
  const float dark = std::max(1.5f, u * 0.18f), light = std::max(0.75f, u * 0.08f);
  // Dividers closer than 0.4 units are thinned: every chunk of 64 at L = 65,536 would paint a solid sheet.
  auto dividers = [&](const std::vector<int64_t>* at, int64_t first, int64_t last, bool columns) {
    if (!at) return;
    float prev = -1e9f;
    for (const int64_t k : *at) {
      if (k < first || k > last + 1) continue;
      const float v = std::round(columns ? X(static_cast<double>(k)) : Y(static_cast<double>(k)));
      if (v - prev < u * 0.4f) continue;
      prev = v;
      if (columns) twoTone(out, v, p.y0, v, p.y1, dark, light);
      else twoTone(out, p.x0, v, p.x1, v, dark, light);
    }
  };
  dividers(m.col_dividers, first_col, last_col, true);
  dividers(m.row_dividers, first_row, last_row, false);
  if (m.key_bands)
    for (const KeyBand& b : *m.key_bands)
      if (b.begin > 0 && b.begin < m.cols) {
        const float x = std::round(X(static_cast<double>(b.begin)));
        twoTone(out, x, p.y0, x, p.y1, dark * 1.3f, light * 1.3f);
      }
  if (const Array* w = m.query_window; w && w->rank() == 2 && w->shape[1] == 2 && w->shape[0] == m.rows) {
    // Rows sharing a window become one outline.
    int64_t start = 0;
    for (int64_t r = 1; r <= m.rows; ++r) {
      const bool same = r < m.rows && w->data[static_cast<size_t>(2 * r)] == w->data[static_cast<size_t>(2 * start)] &&
                        w->data[static_cast<size_t>(2 * r + 1)] == w->data[static_cast<size_t>(2 * start + 1)];
      if (same) continue;
      const float a = w->data[static_cast<size_t>(2 * start)], b = w->data[static_cast<size_t>(2 * start + 1)];
      if (std::isfinite(a) && std::isfinite(b) && b >= a && r > first_row && start <= last_row) {
        const float x0 = X(a), x1 = X(b + 1.0), y0 = Y(static_cast<double>(start)), y1 = Y(static_cast<double>(r));
        twoToneRect(out, x0, y0, x1, y1, dark, light * 1.2f);
      }
      start = r;
    }
  }
  if (const int64_t w = m.sliding_window; w > 0) {
    // A staircase along a window edge: row r's edge sits left of key edge(r), down the row, across to the next.
    const auto stairs = [&](const auto& edge) {
      std::vector<float> stair;
      for (int64_t r = first_row; r <= last_row; ++r) {
        const double k = static_cast<double>(edge(r));
        if (k <= 0 || k >= static_cast<double>(m.cols)) continue;  // at the matrix's edge: nothing masked there
        stair.insert(stair.end(), {X(k), Y(static_cast<double>(r)), X(k), Y(static_cast<double>(r + 1))});
        if (r < last_row && edge(r + 1) > 0 && edge(r + 1) < m.cols) stair.insert(stair.end(), {X(static_cast<double>(edge(r + 1))), Y(static_cast<double>(r + 1))});
        else stair.insert(stair.end(), {X(k), Y(static_cast<double>(r + 1))});
      }
      if (stair.size() < 4) return;
      // Dark under light, as twoTone: it shows on every colour of every colormap.
      const auto polyline = [&](Rgb8 colour, float width, float alpha) {
        Primitive& line = addLine(out, 0, 0, 0, 0, colour, width);
        line.kind = Primitive::Kind::Polyline;
        line.alpha = alpha;
        line.points = stair;
      };
      polyline(kDark, dark, 0.8f);
      polyline(kLight, light * 1.3f, 0.92f);
    };
    if (m.window_centered) {
      // Bidirectional (ModernBERT): row r keeps keys with |r − j| ≤ W/2.
      stairs([&](int64_t r) { return r - w / 2; });
      stairs([&](int64_t r) { return r + w / 2 + 1; });
    } else {
      // Causal (Mistral): row r keeps keys r − W + 1 … r.
      stairs([&](int64_t r) { return r - w + 1; });
    }
  }
  if (const Array* pos = m.query_position; pos && pos->size() == m.rows) {
    const float rad = std::clamp(std::min(g.cw, g.ch) * 0.3f, std::min(2.5f, u * 0.2f), g.lp * 0.4f);
    for (int64_t r = first_row; r <= last_row; ++r) {
      const float k = pos->data[static_cast<size_t>(r)];
      if (!std::isfinite(k)) continue;
      const float cx = X(k + 0.5), cy = Y(r + 0.5);
      Primitive& fill = addFill(out, 0, 0, 0, 0, kLight, 0.92f);
      fill.kind = Primitive::Kind::Polygon;
      fill.points = {cx, cy - rad, cx + rad, cy, cx, cy + rad, cx - rad, cy};
      Primitive& edge = addLine(out, 0, 0, 0, 0, kDark, std::max(1.0f, light * 1.5f));
      edge.kind = Primitive::Kind::Polyline;
      edge.alpha = 0.8f;
      edge.points = {cx, cy - rad, cx + rad, cy, cx, cy + rad, cx - rad, cy, cx, cy - rad};
    }
  }
  if (s.hover_row >= 0 && s.hover_col >= 0) {
    const float x0 = X(static_cast<double>(s.hover_col)), x1 = X(s.hover_col + 1.0);
    const float y0 = Y(static_cast<double>(s.hover_row)), y1 = Y(s.hover_row + 1.0);
    twoToneRect(out, x0, y0, x1, y1, dark * 1.3f, light * 1.3f);
  }
  popClip(out);

  // Category strips beside the rows and above the columns, one rect per run in view.
  const float min_run = 0.5f / std::max(1e-3f, c.raster_scale);
  if (m.row_categories) {
    const float sx = p.x0 - g.row_strip;
    pushClip(out, sx, p.y0, p.x0, p.y1);
    categoryRuns(*m.row_categories, first_row, last_row, min_run, Y,
                    [&](float a, float b, Rgb8 col) { addFill(out, sx, a, sx + g.strip, b, col); });
    popClip(out);
  }
  if (m.col_categories) {
    const float sy = p.y0 - g.col_strip;
    pushClip(out, p.x0, sy, p.x1, p.y0);
    categoryRuns(*m.col_categories, first_col, last_col, min_run, X,
                    [&](float a, float b, Rgb8 col) { addFill(out, a, sy, b, sy + g.strip, col); });
    popClip(out);
  }
  if (s.highlight) addRect(out, p.x0 - 3, p.y0 - 3, p.x1 + 3, p.y1 + 3, Role::Accent, 3.0f);

  // Key bands (Transformer-XL: memory | segment τ): each band's name wrapped above its columns, a rule under it.
  const float band_top = g.band_top;
  if (m.key_bands && !m.key_bands->empty()) {
    const float band_bottom = band_top + g.band_h;
    for (const KeyBand& b : *m.key_bands) {
      const float bx0 = std::max(p.x0, X(static_cast<double>(b.begin))), bx1 = std::min(p.x1, X(static_cast<double>(b.end)));
      if (bx1 - bx0 < u * 0.5f) continue;
      addLine(out, bx0 + u * 0.15f, band_bottom - u * 0.25f, bx1 - u * 0.15f, band_bottom - u * 0.25f, Role::Muted,
              std::max(1.0f, u * 0.1f));
      const float w = bandWidth(g, p, b), px = bandLabelPx(c, b.label, g.lp, w);
      if (px <= 0) continue;
      const std::vector<std::string> lines = wrapLines(c, b.label, px, w);
      const float line_h = g.lp * 1.25f;
      float y = band_bottom - u * 0.45f - line_h * static_cast<float>(lines.size());
      for (const std::string& l : lines) {
        addText(out, (bx0 + bx1) * 0.5f, y + line_h * 0.5f, l, px, Role::Text, 0.5f, 0.5f);
        y += line_h;
      }
    }
  }

  if (s.labels && s.row_labels) {
    // Row labels, right-aligned against the strip; every n-th where cells are small.
    const float row_right = p.x0 - g.row_strip - g.gap;
    pushClip(out, area.x, p.y0 - g.lp, p.x0 - g.row_strip, p.y1 + g.lp);
    // A label's glyphs fit in 1.05 of its size (lower-case letters and digits leave room above and below).
    const int64_t row_step = labelStride(g.ch, g.row_px * 1.05f);
    for (int64_t r = first_row / row_step * row_step; r <= last_row; r += row_step)
      addText(out, row_right, Y(r + 0.5), axisLabel(m.row_labels, r), g.row_px, Role::Text, 1.0f, 0.5f);
    if (s.hover_row >= 0) {
      const std::string t = axisLabel(m.row_labels, s.hover_row);
      const float w = c.textWidth(t, g.row_px), cy = Y(s.hover_row + 0.5);
      addFill(out, row_right - w - 2, cy - g.row_px * 0.65f, row_right + 2, cy + g.row_px * 0.65f, Role::Accent, 0.35f);
      addText(out, row_right, cy, t, g.row_px, Role::Text, 1.0f, 0.5f);
    }
    popClip(out);
    if (!m.row_axis.empty()) {
      // The axis title beside the row labels (the cells may be centred in a wider area), set a little
      // smaller where longer than the side, left out where even that is too long (the labels stay readable).
      const float x = std::max(area.x, p.x0 - g.row_strip - g.row_margin - g.axis_h);
      const float fit = (p.y1 - p.y0) / std::max(1.0f, c.textWidth(m.row_axis, g.lp));
      if (fit >= 0.85f) addText(out, x, (p.y0 + p.y1) * 0.5f, m.row_axis, g.lp * std::min(fit, 1.0f), Role::Muted, 0.5f, 0.0f).vertical = true;
    }
  }
  if (s.labels && s.col_labels) {
    // Column labels, flat or turned up, their foot against the strip.
    const float col_bottom = p.y0 - g.col_strip - g.gap;
    pushClip(out, p.x0 - g.lp, band_top + g.band_h, p.x1 + g.lp, p.y0 - g.col_strip);
    const int64_t col_step =
        labelStride(g.cw, g.col_vertical ? g.col_px * 1.05f : widestLabel(c, m.col_labels, m.cols, g.col_px) + g.col_px * 0.5f);
    auto colLabel = [&](int64_t k) {
      Primitive& t = addText(out, X(k + 0.5), col_bottom, axisLabel(m.col_labels, k), g.col_px, Role::Text, 0.5f, 1.0f);
      if (g.col_vertical) t.vertical = true, t.align_x = 0.0f, t.align_y = 0.5f;
    };
    for (int64_t k = first_col / col_step * col_step; k <= last_col; k += col_step) colLabel(k);
    if (s.hover_col >= 0) {
      const float w = c.textWidth(axisLabel(m.col_labels, s.hover_col), g.col_px), cx = X(s.hover_col + 0.5);
      const float half = g.col_px * 0.65f;
      if (g.col_vertical) addFill(out, cx - half, col_bottom - w - 2, cx + half, col_bottom + 2, Role::Accent, 0.35f);
      else addFill(out, cx - w * 0.5f - 2, col_bottom - half * 2, cx + w * 0.5f + 2, col_bottom + 2, Role::Accent, 0.35f);
      colLabel(s.hover_col);
    }
    popClip(out);
    // The axis title in the corner, or centred above everything over the cells (set smaller where longer
    // than the side, down to half size).
    if (g.col_title_corner) {
      addText(out, p.x0 - g.row_strip - g.gap, col_bottom, cornerTitle(m.col_axis), g.lp, Role::Muted, 1.0f, 1.0f);
    } else if (!m.col_axis.empty()) {
      const float px = g.lp * std::clamp((p.x1 - area.x) / std::max(1.0f, c.textWidth(m.col_axis, g.lp)), 0.5f, 1.0f);
      const float half = c.textWidth(m.col_axis, px) * 0.5f;
      const float cx = std::clamp((p.x0 + p.x1) * 0.5f, area.x + half, std::max(area.x + half, area.x + area.w - half));
      addText(out, cx, band_top - g.axis_h * 0.5f, m.col_axis, px, Role::Muted, 0.5f, 0.5f);
    }
  }

  if (g.legend) {
    const std::vector<LegendEntry> entries = categoryEntries(*m.category_names);
    if (g.legend_beside) legendPrimitives(out, c, Box{p.x1 + u, p.y0, g.legend_w, 0}, entries, true);
    else legendPrimitives(out, c, Box{area.x, p.y1 + u * 0.5f, area.w, 0}, entries, false);
  } else if (s.colorbar && !m.categories) {
    colorbarPrimitives(out, p.x1 + g.bar_gap, p.y0, g.bar_w, p.y1 - p.y0, s.colormap, s.range, m.value_label, g.lp,
                       c.measure(g.lp));
  }
  return p;
}

float matrixPanelHeight(const Canvas& c, float width, const MatrixSpec& m, const MatrixStyle& s) {
  if (m.rows <= 0 || m.cols <= 0) return 0;
  // As tall as anything may be, with square cells: they then take the width.
  MatrixStyle square = s;
  square.max_cell_aspect = 1.0f;
  const Geometry g = layout(c, Box{0, 0, width, 1e6f}, m, square);
  return g.bottom;
}

}  // namespace attn
