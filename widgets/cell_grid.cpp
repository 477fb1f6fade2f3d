#include "widgets/cell_grid.h"

#include "widgets/plot_layouts.h"
#include "widgets/view_layouts.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

struct GridMetrics {
  float px = 0, left = 0, bottom = 0, right = 0, top = 0;
  bool vertical_cols = false;  // column labels turned (tokens wider than a cell)
};

std::string rowLabel(const CellGrid& g, int64_t r) {
  return r < static_cast<int64_t>(g.row_labels.size()) ? g.row_labels[static_cast<size_t>(r)] : std::to_string(r);
}
std::string colLabel(const CellGrid& g, int64_t c) {
  return c < static_cast<int64_t>(g.col_labels.size()) ? g.col_labels[static_cast<size_t>(c)] : std::to_string(c);
}

// A window has room to spare where a page keeps its cells to a reader's size.
float cellSide(const Canvas& c, const CellGrid& g) {
  return (g.max_cell > 0 ? g.max_cell : 3.2f) * c.unit * (c.screen ? 1.6f : 1.0f);
}

// The margins around the cells for a cell side `s`.
GridMetrics metrics(const Canvas& c, const CellGrid& g, float s) {
  GridMetrics m;
  m.px = labelPx(c);
  float widest_row = 0, widest_col = 0;
  for (int64_t r = 0; r < g.values.rows(); ++r) widest_row = std::max(widest_row, c.textWidth(rowLabel(g, r), m.px));
  for (int64_t k = 0; k < g.values.cols(); ++k) widest_col = std::max(widest_col, c.textWidth(colLabel(g, k), m.px));
  m.vertical_cols = widest_col > s * 0.95f;
  const float caption = m.px * 1.6f;
  m.left = widest_row + m.px * 0.6f + (g.row_caption.empty() ? 0 : caption);
  m.bottom = (m.vertical_cols ? widest_col : m.px * 1.2f) + m.px * 0.6f + (g.col_caption.empty() ? 0 : caption);
  m.right = c.unit * 1.0f + c.textWidth("−0.000", m.px) + m.px * 1.2f + (g.bar_caption.empty() ? 0 : caption);
  m.top = c.unit * 0.3f;
  return m;
}

// The largest side (at most cellSide) at which the grid fits `w` across.
float sideForWidth(const Canvas& c, const CellGrid& g, float w) {
  float s = cellSide(c, g);
  for (int i = 0; i < 3; ++i) {  // the margins depend on the side (turned labels): settle them
    const GridMetrics m = metrics(c, g, s);
    s = std::min(cellSide(c, g), (w - m.left - m.right) / static_cast<float>(std::max<int64_t>(1, g.values.cols())));
  }
  return std::max(s, 1.0f);
}

std::string formatCell(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, std::abs(v) >= 10 ? "%.1f" : "%.2f", static_cast<double>(v));
  return buf;
}

}  // namespace

int64_t CellGridLayout::cellAt(float x, float y) const {
  if (rows <= 0 || cols <= 0 || x < cells.x || y < cells.y || x >= cells.right() || y >= cells.bottom()) return -1;
  const int64_t r = std::min(rows - 1, static_cast<int64_t>((y - cells.y) / cells.h * static_cast<float>(rows)));
  const int64_t k = std::min(cols - 1, static_cast<int64_t>((x - cells.x) / cells.w * static_cast<float>(cols)));
  return r * cols + k;
}

float cellGridHeight(const Canvas& c, float width, const CellGrid& g) {
  const float s = sideForWidth(c, g, width);
  const GridMetrics m = metrics(c, g, s);
  return m.top + s * static_cast<float>(g.values.rows()) + m.bottom;
}

CellGridLayout cellGridPrimitives(Primitives& out, const Canvas& c, const Box& area, const CellGrid& g) {
  CellGridLayout lay;
  lay.rows = g.values.rows();
  lay.cols = g.values.cols();
  if (lay.rows == 0 || lay.cols == 0) return lay;
  float s = sideForWidth(c, g, area.w);
  GridMetrics m = metrics(c, g, s);
  s = std::min(s, (area.h - m.top - m.bottom) / static_cast<float>(lay.rows));
  s = std::max(s, 1.0f);
  m = metrics(c, g, s);
  // cw × ch cells: square on a page; a window stretches them to fill the area, as it does a matrix's
  float cw = s, ch = s;
  if (c.screen) {
    cw = std::max(s, (area.w - m.left - m.right) / static_cast<float>(lay.cols));
    ch = std::max(s, (area.h - m.top - m.bottom) / static_cast<float>(lay.rows));
  }
  lay.cells = {area.x + m.left, area.y + m.top, cw * static_cast<float>(lay.cols), ch * static_cast<float>(lay.rows)};
  const float px = m.px;
  for (int64_t r = 0; r < lay.rows; ++r)
    for (int64_t k = 0; k < lay.cols; ++k) {
      const float v = g.values(r, k);
      const float x0 = lay.cells.x + cw * static_cast<float>(k), y0 = lay.cells.y + ch * static_cast<float>(r);
      const Rgb8 col = colormapAt(g.cmap, scaleToUnit(g.range, v));
      // the mark's name kept here: adding the text below may move the cell's primitive
      const std::string mark = g.array + "[" + rowLabel(g, r) + ", " + colLabel(g, k) + "]";
      Primitive& cell = addFill(out, x0, y0, x0 + cw, y0 + ch, col);
      cell.mark = mark;
      cell.mark_value = v;
      const size_t i = static_cast<size_t>(r * lay.cols + k);
      const std::string text = g.text.empty() ? formatCell(v) : g.text[i];
      if (text.empty()) continue;
      // as large as the cell allows, up to the labels' size; left out where it would be unreadable
      float size = std::min(px, std::min(cw, ch) * 0.42f);
      const float w = c.textWidth(text, size);
      if (w > cw * 0.9f) size *= cw * 0.9f / w;
      if (size < px * 0.55f) continue;
      // dark text on light cells, light on dark (relative luminance of the cell's colour)
      const float lum = (0.2126f * col.r + 0.7152f * col.g + 0.0722f * col.b) / 255.0f;
      Primitive& t = addText(out, x0 + cw * 0.5f, y0 + ch * 0.5f, text, size, Role::Text, 0.5f, 0.5f);
      t.colour = lum > 0.5f ? Rgb8{20, 20, 20} : Rgb8{245, 245, 245};
      t.labels = mark;
    }
  addRect(out, lay.cells.x, lay.cells.y, lay.cells.right(), lay.cells.bottom(), Role::Frame);
  if (g.mark_row >= 0 && g.mark_col >= 0 && g.mark_row < lay.rows && g.mark_col < lay.cols) {
    const float x0 = lay.cells.x + cw * static_cast<float>(g.mark_col), y0 = lay.cells.y + ch * static_cast<float>(g.mark_row);
    addRect(out, x0, y0, x0 + cw, y0 + ch, Role::Accent, std::max(2.0f, c.unit * 0.15f));
  }
  // row labels, one per row where rows are a label tall, else every k-th
  const int64_t row_step = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(px * 1.15f / ch)));
  float widest_row = 0;
  for (int64_t r = 0; r < lay.rows; r += row_step) {
    const std::string label = rowLabel(g, r);
    widest_row = std::max(widest_row, c.textWidth(label, px));
    addText(out, lay.cells.x - px * 0.4f, lay.cells.y + ch * (static_cast<float>(r) + 0.5f), label, px, Role::Text, 1.0f, 0.5f);
  }
  const int64_t col_step = std::max<int64_t>(1, static_cast<int64_t>(std::ceil((m.vertical_cols ? px * 1.15f : 0.0f) / cw)));
  float tallest_col = px * 1.2f;
  for (int64_t k = 0; k < lay.cols; k += col_step) {
    const std::string label = colLabel(g, k);
    const float x = lay.cells.x + cw * (static_cast<float>(k) + 0.5f), y = lay.cells.bottom() + px * 0.4f;
    Primitive& t = addText(out, x, y, label, px, Role::Text, m.vertical_cols ? 1.0f : 0.5f, m.vertical_cols ? 0.5f : 0.0f);
    t.vertical = m.vertical_cols;
    if (m.vertical_cols) tallest_col = std::max(tallest_col, c.textWidth(label, px));
  }
  if (!g.col_caption.empty())
    addText(out, lay.cells.x + lay.cells.w * 0.5f, lay.cells.bottom() + px * 0.6f + tallest_col + px * 0.3f, g.col_caption,
            px, Role::Muted, 0.5f, 0.0f);
  if (!g.row_caption.empty()) {
    Primitive& t = addText(out, lay.cells.x - px * 0.4f - widest_row - px * 0.4f, lay.cells.y + lay.cells.h * 0.5f,
                           g.row_caption, px, Role::Muted, 0.5f, 1.0f);
    t.vertical = true;
  }
  const float bar_x = lay.cells.right() + c.unit * 0.8f, bar_w = c.unit * 0.7f;
  colorbarPrimitives(out, bar_x, lay.cells.y, bar_w, std::max(lay.cells.h, c.unit * 4), g.cmap, g.range, g.bar_caption, px,
                     c.measure(px));
  lay.right = lay.cells.right() + m.right;
  return lay;
}

}  // namespace attn
