#include "widgets/patch_layouts.h"

#include "widgets/colormap.h"
#include "widgets/value_range.h"
#include "widgets/view_layouts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// Spacing of the maps' grid: between pictures, the colour bar's column, the [CLS] chip's line.
float gapOf(const Canvas& c) { return c.unit * 1.2f; }
float barSpace(const Canvas& c) { return c.unit * 6.5f; }
float chipHeight(const Canvas& c) { return labelPx(c) * 1.9f; }

float pictureAspect(const PatchMaps& m) {  // height / width
  return m.picture && m.picture->rank() == 3 && m.picture->shape[1] > 0
             ? static_cast<float>(m.picture->shape[0]) / static_cast<float>(m.picture->shape[1])
             : 1.0f;
}

// The tallest title at a picture width.
float titlesHeight(const Canvas& c, const PatchMaps& m, float width) {
  Primitives none;
  float h = panelTitle(none, c, m.picture_title, 0, 0, width, false);
  for (const PatchMap& p : m.maps) h = std::max(h, panelTitle(none, c, p.title, 0, 0, width, false));
  return h;
}

// A picture's pixel (r, g, b in [0, 1]) under a patch's weight t ∈ [0, 1]
// (of the scale's top): the picture in its own colours, a little dimmed,
// the colour map's colour over it with opacity 0.15 + 0.75·t, so a patch
// with little weight leaves the picture readable (grey would lose a shape
// as bright as its background) and the heaviest is almost the colour.
uint32_t heatOverPatch(float r, float g, float b, float t, Colormap cmap) {
  const Rgb8 heat = colormapAt(cmap, t);
  const float a = 0.15f + 0.75f * std::clamp(t, 0.0f, 1.0f);
  auto mix = [&](float v, uint8_t h) {
    return static_cast<uint8_t>(std::lround(std::clamp(0.85f * v * (1 - a) + static_cast<float>(h) / 255.0f * a, 0.0f, 1.0f) * 255.0f));
  };
  return packRgba({mix(r, heat.r), mix(g, heat.g), mix(b, heat.b)});
}

// The largest patch weight of a map (the [CLS] key left out).
float patchTop(const PatchMap& p) {
  float top = 0;
  for (size_t i = 1; i < p.weights.size(); ++i) top = std::max(top, p.weights[i]);
  return top;
}

std::string weightText(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 0.01f ? "%.2f" : "%.1e", static_cast<double>(v));
  return buf;
}

}  // namespace

int64_t PatchMapsLayout::tokenAt(float x, float y) const {
  for (const Box& b : chips)
    if (x >= b.x && x < b.right() && y >= b.y && y < b.bottom()) return 0;
  for (const Box& b : pictures)
    if (x >= b.x && x < b.right() && y >= b.y && y < b.bottom()) {
      const int64_t col = std::clamp<int64_t>(static_cast<int64_t>((x - b.x) / b.w * static_cast<float>(grid_w)), 0, grid_w - 1);
      const int64_t row = std::clamp<int64_t>(static_cast<int64_t>((y - b.y) / b.h * static_cast<float>(grid_h)), 0, grid_h - 1);
      return 1 + row * grid_w + col;
    }
  return -1;
}

int patchMapsColumns(const Canvas& c, float width, size_t maps) {
  const int n = static_cast<int>(std::max<size_t>(1, maps));
  const float gap = gapOf(c);
  // Pictures at least 9 text units wide, then the rows balanced (7 maps in 4 + 3, not 5 + 2).
  const int cols = std::clamp(static_cast<int>(std::floor((width - barSpace(c) + gap) / (c.unit * 9 + gap))), 1, n);
  const int rows = (n + cols - 1) / cols;
  return (n + rows - 1) / rows;
}

// Panels drawn: the picture's, then the maps.
static size_t panelCount(const PatchMaps& m) { return m.maps.size() + (m.picture_title.empty() ? 0 : 1); }

float patchMapsHeight(const Canvas& c, float width, const PatchMaps& m) {
  const int n = static_cast<int>(std::max<size_t>(1, panelCount(m)));
  const int cols = patchMapsColumns(c, width, panelCount(m)), rows = (n + cols - 1) / cols;
  const float gap = gapOf(c), pic_w = (width - barSpace(c)) / static_cast<float>(cols) - gap;
  return static_cast<float>(rows) * (titlesHeight(c, m, pic_w) + pic_w * pictureAspect(m) + chipHeight(c) + gap);
}

PatchMapsLayout patchMapsPrimitives(Primitives& out, const Canvas& c, const Box& area, const PatchMaps& m) {
  PatchMapsLayout g;
  const Array* pic = m.picture;
  if (!pic || pic->rank() != 3 || pic->shape[2] != 3 || m.grid_h <= 0 || m.grid_w <= 0 || m.maps.empty()) return g;
  const int64_t H = pic->shape[0], W = pic->shape[1], P = m.grid_h * m.grid_w;
  g.grid_h = m.grid_h;
  g.grid_w = m.grid_w;
  const int n = static_cast<int>(panelCount(m));
  const int first = m.picture_title.empty() ? 0 : 1;  // the maps' first panel
  const float gap = gapOf(c), chip_h = chipHeight(c), aspect = pictureAspect(m), grid_w = area.w - barSpace(c);

  // The column count holding the most picture the area allows, each with its
  // titles wrapped to its cells (a page sized by patchMapsHeight() gets
  // patchMapsColumns() columns or a grid as large).
  int cols = 1;
  float pic_w = 0, title_h = 0;
  for (int k = 1; k <= n; ++k) {
    const int rows = (n + k - 1) / k;
    const float cw = grid_w / static_cast<float>(k), th = titlesHeight(c, m, cw - gap);
    const float w = std::min(cw - gap, (area.h / static_cast<float>(rows) - th - chip_h - gap) / aspect);
    if (w > pic_w) cols = k, pic_w = w, title_h = th;
  }
  pic_w = std::max(c.unit, pic_w);
  const int rows = (n + cols - 1) / cols;
  const float pic_h = pic_w * aspect, cell_w = grid_w / static_cast<float>(cols), label = labelPx(c), line = label * 1.35f;
  // Room the pictures leave, beside them in their cells (a tall grid) or
  // under them (a wide, short area): there each map's patches it weighs
  // most, as many lines as fit (at least 2, at most 8).
  const float list_w = c.textWidth("00.0%  (00, 00)", label) + label;
  const bool beside = cell_w - gap - pic_w >= list_w;
  const float spare = area.h / static_cast<float>(rows) - (title_h + pic_h + chip_h + gap);
  const int fit = static_cast<int>((beside ? pic_h + chip_h : spare) / line);
  const int listed = fit >= 2 ? std::min(8, fit) : 0;
  const float pitch = title_h + pic_h + chip_h + (beside ? 0.0f : static_cast<float>(listed) * line) + gap;

  float shared = 0;
  for (const PatchMap& p : m.maps) shared = std::max(shared, patchTop(p));
  const float thick = std::max(1.0f, c.unit * 0.12f);
  auto rgb = [&](int64_t y, int64_t x, int k) { return pic->data[static_cast<size_t>((y * W + x) * 3 + k)]; };
  for (int k = 0; k < n; ++k) {
    const bool picture = k < first;
    const PatchMap* map = picture ? nullptr : &m.maps[static_cast<size_t>(k - first)];
    if (map && static_cast<int64_t>(map->weights.size()) != 1 + P) continue;
    const float x = area.x + static_cast<float>(k % cols) * cell_w, y = area.y + static_cast<float>(k / cols) * pitch;
    panelTitle(out, c, picture ? m.picture_title : map->title, x, y, cell_w - gap);  // as wide as titlesHeight measured
    const Box b{x, y + title_h, pic_w, pic_h};
    g.pictures.push_back(b);
    const float top = !map ? 0.0f : m.own_scale ? patchTop(*map) : shared;
    auto raster = std::make_shared<Raster>();
    raster->rows = H;
    raster->cols = W;
    raster->pixels.resize(static_cast<size_t>(H * W));
    auto byte = [](float v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)); };
    for (int64_t py = 0; py < H; ++py)
      for (int64_t px = 0; px < W; ++px) {
        const int64_t patch = (py * m.grid_h / H) * m.grid_w + px * m.grid_w / W;
        const float r = rgb(py, px, 0), gr = rgb(py, px, 1), bl = rgb(py, px, 2);
        if (!map) {
          raster->pixels[static_cast<size_t>(py * W + px)] = packRgba({byte(r), byte(gr), byte(bl)});
          continue;
        }
        const float t = top > 0 ? map->weights[static_cast<size_t>(1 + patch)] / top : 0.0f;
        raster->pixels[static_cast<size_t>(py * W + px)] = heatOverPatch(r, gr, bl, t, c.cmap);
      }
    raster->key = m.key + (picture ? "/picture" : "/map" + std::to_string(k));
    raster->version = m.version + ":" + std::to_string(static_cast<int>(c.cmap));
    Primitive& image = addRect(out, b.x, b.y, b.right(), b.bottom(), Role::Frame);
    image.kind = Primitive::Kind::Raster;
    image.raster = std::move(raster);
    // The patch grid, faint, where a patch is large enough to show it.
    const float sx = b.w / static_cast<float>(m.grid_w), sy = b.h / static_cast<float>(m.grid_h);
    if (std::min(sx, sy) >= c.unit * 0.6f) {
      for (int64_t i = 1; i < m.grid_w; ++i)
        addLine(out, b.x + sx * static_cast<float>(i), b.y, b.x + sx * static_cast<float>(i), b.bottom(), Role::Background).alpha = 0.3f;
      for (int64_t i = 1; i < m.grid_h; ++i)
        addLine(out, b.x, b.y + sy * static_cast<float>(i), b.right(), b.y + sy * static_cast<float>(i), Role::Background).alpha = 0.3f;
    }
    addRect(out, b.x, b.y, b.right(), b.bottom(), Role::Frame);
    const float lx = beside ? b.right() + label * 0.6f : b.x, ly = beside ? b.y : b.bottom() + chip_h;
    if (!map)
      for (size_t i = 0; i < m.picture_notes.size() && i < static_cast<size_t>(listed); ++i)
        addText(out, lx, ly + line * static_cast<float>(i), m.picture_notes[i], label, i == 0 ? Role::Text : Role::Muted);
    if (m.query >= 1 && m.query <= P) {
      const int64_t q = m.query - 1;
      const float qx = b.x + sx * static_cast<float>(q % m.grid_w), qy = b.y + sy * static_cast<float>(q / m.grid_w);
      addRect(out, qx, qy, qx + sx, qy + sy, Role::Accent, thick * 2);
    }
    if (!map) continue;
    // [CLS]: a swatch in the weight's colour (clamped to the scale's top) and the weight.
    const float cy = b.bottom() + chip_h * 0.2f, side = chip_h * 0.6f;
    const float w0 = map->weights[0];
    addFill(out, b.x, cy, b.x + side, cy + side, colormapAt(c.cmap, top > 0 ? w0 / top : 0.0f));
    addRect(out, b.x, cy, b.x + side, cy + side, m.query == 0 ? Role::Accent : Role::Frame, m.query == 0 ? thick * 2 : 0);
    // "[CLS] 0.02", or the number alone where the label would reach the next picture.
    std::string text = "[CLS] " + weightText(w0);
    if (side + label * 0.4f + c.textWidth(text, label) > pic_w + gap * 0.8f) text = weightText(w0);
    addText(out, b.x + side + label * 0.4f, cy + side * 0.5f, text, label, m.query == 0 ? Role::Accent : Role::Muted, 0, 0.5f);
    g.chips.push_back({b.x, cy, side + label * 0.4f + c.textWidth(text, label), side});
    // The patches it weighs most: "24.5%  (3, 3)", (row, column) of the patch.
    std::vector<int64_t> order(static_cast<size_t>(P));
    for (int64_t p = 0; p < P; ++p) order[static_cast<size_t>(p)] = p;
    const size_t shown = std::min(order.size(), static_cast<size_t>(listed));
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(shown), order.end(),
                      [&](int64_t a, int64_t b2) { return map->weights[static_cast<size_t>(1 + a)] > map->weights[static_cast<size_t>(1 + b2)]; });
    for (size_t i = 0; i < shown; ++i) {
      const int64_t p = order[i];
      char row[64];
      std::snprintf(row, sizeof row, "%.1f%%  (%lld, %lld)", 100.0 * map->weights[static_cast<size_t>(1 + p)],
                    static_cast<long long>(p / m.grid_w), static_cast<long long>(p % m.grid_w));
      addText(out, lx, ly + line * static_cast<float>(i), row, label, i == 0 ? Role::Text : Role::Muted);
    }
  }
  if (!g.pictures.empty()) {
    const float bar_top = g.pictures.front().y, bar_h = std::max(c.unit * 4, g.pictures.back().bottom() - bar_top);
    colorbarPrimitives(out, area.x + grid_w + c.unit * 0.8f, bar_top, c.unit * 0.9f, bar_h, c.cmap,
                       m.own_scale ? ValueRange{0, 1} : ValueRange{0, shared > 0 ? shared : 1}, m.scale_caption, labelPx(c),
                       c.measure(labelPx(c)));
  }
  return g;
}

}  // namespace attn
