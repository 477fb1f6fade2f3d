#include "widgets/plot_layouts.h"

#include "widgets/colormap.h"
#include "widgets/value_range.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numbers>

namespace attn {

namespace {

// A value axis on the left of a plot: nice ticks two label lines apart at
// the least (two to six), and the margin their labels take — the widest of
// any tick count, so the margin can be fixed before the plot's height is.
struct ValueAxis {
  std::vector<float> ticks;
  float margin = 0;
};
ValueAxis valueAxis(const Canvas& c, float lo, float hi, float height) {
  const float px = labelPx(c);
  ValueAxis a;
  a.ticks = niceTicks(lo, hi, std::clamp(static_cast<int>(height / (px * 2.2f)), 2, 6));
  for (int n = 2; n <= 6; ++n)
    for (const float t : niceTicks(lo, hi, n)) a.margin = std::max(a.margin, c.textWidth(formatValueShort(t), px));
  a.margin += px * 0.6f;
  return a;
}

// The ticks' grid lines across the plot and their labels left of it.
template <class YOf>
void drawValueAxis(Primitives& out, const Canvas& c, const Box& plot, const ValueAxis& a, YOf yOf) {
  const float px = labelPx(c);
  for (const float t : a.ticks) {
    const float y = yOf(t);
    addLine(out, plot.x, y, plot.right(), y, Role::Frame).alpha = 0.45f;
    addText(out, plot.x - px * 0.3f, y, formatValueShort(t), px, Role::Text, 1.0f, 0.5f);
  }
}

// The lines of a label split at '\n'.
std::vector<std::string> splitLines(const std::string& s) {
  std::vector<std::string> out;
  size_t a = 0;
  while (true) {
    const size_t b = s.find('\n', a);
    out.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) return out;
    a = b + 1;
  }
}

}  // namespace

// [SECTION] Legend

float legendPrimitives(Primitives& out, const Canvas& c, Box area, const std::vector<LegendEntry>& entries, bool vertical,
                       bool draw, std::vector<Box>* hit) {
  if (entries.empty()) return 0;
  const float px = labelPx(c), sw = px, row_h = px * 1.7f, gap = px * 0.5f;
  float x = area.x, y = area.y;
  for (size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& e = entries[i];
    const float w = sw + gap + c.textWidth(e.name, px) + px * 1.5f;
    if (i > 0 && (vertical || x + w - px * 1.5f > area.right())) {
      x = area.x;
      y += row_h;
    }
    if (draw) {
      const float top = y + (row_h - sw) / 2;
      if (e.outline) {
        addRect(out, x, top, x + sw, top + sw, Role::Text, c.unit * 0.2f).colour = e.colour;
      } else {
        addFill(out, x, top, x + sw, top + sw, e.colour, e.alpha);
        addRect(out, x, top, x + sw, top + sw, Role::Frame);
      }
      addText(out, x + sw + gap, y + row_h / 2, e.name, px, e.alpha < 1 ? Role::Muted : Role::Text, 0.0f, 0.5f);
    }
    if (hit) hit->push_back({x, y, w - px * 1.5f, row_h});
    x += w;
  }
  return y + row_h - area.y;
}

float legendWidth(const Canvas& c, const std::vector<LegendEntry>& entries) {
  const float px = labelPx(c);
  float w = 0;
  for (const LegendEntry& e : entries) w = std::max(w, c.textWidth(e.name, px));
  return px * 2.0f + w;
}

// [SECTION] Bars

int64_t BarsLayout::barAt(float x) const {
  if (bars <= 0 || x < plot.x || x >= plot.right()) return -1;
  return std::min<int64_t>(bars - 1, static_cast<int64_t>((x - plot.x) / bar_w));
}

BarsLayout barsPrimitives(Primitives& out, const Canvas& c, Box area, const Array& values, const std::string& array,
                          const std::vector<std::string>* labels, const ValueRange& range, Colormap cmap,
                          bool colour_per_bar) {
  BarsLayout g;
  const float px = labelPx(c);
  const int64_t n = values.size();
  const float lo = range.lo, hi = range.hi > range.lo ? range.hi : range.lo + 1.0f;
  auto label = [&](int64_t i) {
    return labels && i < static_cast<int64_t>(labels->size()) ? (*labels)[static_cast<size_t>(i)] : std::to_string(i);
  };
  // Bar b's mark: "array[i]" of its first item, with the item's label where it has one ("mass_kept[5] God").
  auto barMark = [&](int64_t b) {
    const int64_t i = g.first(b);
    return array + "[" + std::to_string(i) + "]" + (labels ? " " + label(i) : std::string());
  };
  // The margin from the ticks of the whole height; the ticks drawn are those of the plot's.
  const float top = area.y + px * 0.6f;
  const float margin = valueAxis(c, lo, hi, area.h).margin;
  g.plot = {area.x + margin, top, area.w - margin - px * 0.5f, 0};
  g.items = n;
  if (n == 0 || g.plot.w <= 0) return g;
  // One bar per value; more values than device pixels: one bar per pixel, their mean.
  g.bars = std::clamp<int64_t>(static_cast<int64_t>(g.plot.w * c.raster_scale), 1, n);
  g.bar_w = g.plot.w / static_cast<float>(g.bars);
  // Labels of the bars' first items: upright when each fits its bar, else
  // turned; turned labels longer than a third of the area are set smaller
  // (to 0.6×) so the plot keeps its height.
  float widest = 0;
  for (int64_t b = 0; b < g.bars; b += std::max<int64_t>(1, g.bars / 256))
    widest = std::max(widest, c.textWidth(label(g.first(b)), px));
  const bool upright = widest <= g.bar_w * 0.95f;
  float label_px = px;
  if (!upright && widest > area.h / 3) label_px = px * std::max(0.6f, area.h / 3 / widest);
  // Turned labels start under the lowest tick's label, which they would touch at the plot's left corner.
  const float label_top = upright ? px * 0.3f : px * 0.7f;
  const float band = label_top + (upright ? px * 1.2f : widest * label_px / px + px * 0.3f);
  g.plot.h = area.bottom() - band - top;
  if (g.plot.h <= px) return g;
  const ValueAxis axis = valueAxis(c, lo, hi, g.plot.h);
  auto yOf = [&](float v) { return g.plot.bottom() - (std::clamp(v, lo, hi) - lo) / (hi - lo) * g.plot.h; };
  drawValueAxis(out, c, g.plot, axis, yOf);
  const float zero = yOf(0.0f);
  const float gap = g.bars == n ? std::min(g.bar_w * 0.12f, px * 0.3f) : 0.0f;  // averaged bars touch, like a strip
  for (int64_t b = 0; b < g.bars; ++b) {
    double sum = 0;
    int64_t count = 0;
    for (int64_t i = g.first(b); i < g.first(b + 1); ++i) {
      const float v = values.data[static_cast<size_t>(i)];
      if (std::isfinite(v)) sum += v, ++count;
    }
    if (count == 0) continue;
    const auto v = static_cast<float>(sum / static_cast<double>(count));
    const Rgb8 colour = colour_per_bar ? headColor(static_cast<int>(b)) : colormapAt(cmap, scaleToUnit(range, v));
    // Averaged bars overlap their neighbour a little: no hairline seams between them in a viewer.
    const float x0 = g.plot.x + g.bar_w * static_cast<float>(b), overlap = gap > 0 || b + 1 == g.bars ? 0.0f : g.bar_w * 0.3f;
    Primitive& bar = addFill(out, x0 + gap, std::min(yOf(v), zero), x0 + g.bar_w - gap + overlap, std::max(yOf(v), zero), colour);
    bar.mark = barMark(b);
    bar.mark_value = v;
    bar.mark_area = {x0 + gap, std::min(yOf(v), zero), x0 + g.bar_w - gap, g.plot.bottom()};  // down to the labels' axis
  }
  addLine(out, g.plot.x, zero, g.plot.right(), zero, Role::Frame);
  const int64_t stride = labelStride(g.bar_w, upright ? widest + px * 0.5f : label_px * 1.2f);
  for (int64_t b = 0; b < g.bars; b += stride) {
    const float x = g.plot.x + g.bar_w * (static_cast<float>(b) + 0.5f);
    Primitive& t = upright ? addText(out, x, g.plot.bottom() + label_top, label(g.first(b)), px, Role::Text, 0.5f, 0.0f)
                           : addText(out, x, g.plot.bottom() + label_top, label(g.first(b)), label_px, Role::Text, 1.0f, 0.5f);
    t.vertical = !upright;  // reads upwards, ending under its bar
    t.labels = barMark(b);
  }
  return g;
}

// [SECTION] Curves

int64_t CurvesLayout::indexAt(float x) const {
  if (n <= 0 || plot.w <= 0) return -1;
  return std::clamp<int64_t>(std::lround((x - plot.x) / plot.w * x_hi), 0, n - 1);
}

std::vector<std::string> seriesNames(int64_t series, const std::vector<std::string>& categories, const std::string& series_axis) {
  std::vector<std::string> names;
  for (int64_t s = 0; s < series; ++s)
    names.push_back(s < static_cast<int64_t>(categories.size()) ? categories[static_cast<size_t>(s)]
                                                                : series_axis + " " + std::to_string(s));
  return names;
}

CurvesLayout curvesPrimitives(Primitives& out, const Canvas& c, Box area, const Array& curves,
                              const std::vector<std::string>& names, const std::string& x_axis,
                              const std::vector<Marker>& all_markers, const std::vector<Marker>& levels, int64_t reveal) {
  CurvesLayout g;
  const float px = labelPx(c);
  const int64_t series = curves.rank() == 2 ? curves.shape[0] : 1;
  g.n = curves.rank() == 2 ? curves.shape[1] : curves.size();
  g.x_hi = std::max<double>(1.0, static_cast<double>(g.n - 1));
  // A marker past the curves' x range (a span beyond the plotted distances) would be drawn outside the plot.
  std::vector<Marker> markers;
  for (const Marker& m : all_markers)
    if (m.x >= 0 && m.x <= g.x_hi) markers.push_back(m);
  float lo = 0.0f, hi = 0.0f;
  for (const float v : curves.data)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  for (const Marker& l : levels) hi = std::max(hi, static_cast<float>(l.x));
  if (!(hi > lo)) hi = lo + 1.0f;
  // One series needs no legend.
  std::vector<LegendEntry> legend;
  if (series > 1)
    for (int64_t s = 0; s < series; ++s)
      legend.push_back({headColor(static_cast<int>(s)), s < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(s)] : ""});
  const float legend_h = legendPrimitives(out, c, area, legend, false);
  const float margin = valueAxis(c, lo, hi, area.h).margin;
  const float left = area.x + margin, right = area.right() - px * 1.2f;
  g.plot = {left, 0, right - left, 0};
  // Marker labels in rows above the plot, none overlapping (stackLabels).
  std::vector<float> centres, widths;
  for (const Marker& m : markers) {
    centres.push_back(g.xAt(m.x));
    widths.push_back(c.textWidth(m.label, px));
  }
  const float row_h = px * 1.3f, labels_top = area.y + legend_h + (legend_h > 0 ? px * 0.3f : 0.0f);
  const LabelRows rows = stackLabels(centres, widths, left, right, px * 0.5f, std::max(3, static_cast<int>(area.h * 0.2f / row_h)));
  // Past the last row a label would overlap another: it is left out (its dashed line stays).
  std::vector<bool> labelled(markers.size(), true);
  for (size_t i = 0; i < markers.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (labelled[j] && rows.placed[j].row == rows.placed[i].row && rows.placed[i].left < rows.placed[j].left + widths[j] &&
          rows.placed[j].left < rows.placed[i].left + widths[i])
        labelled[i] = false;
  g.plot.y = labels_top + row_h * static_cast<float>(rows.rows) + px * 0.6f;
  g.plot.h = area.bottom() - px * 3.0f - g.plot.y;  // x ticks and the x axis's name under it
  if (g.n < 1 || g.plot.w <= px || g.plot.h <= px) return g;
  const Box& p = g.plot;
  auto yOf = [&](float y) { return p.bottom() - (y - lo) / (hi - lo) * p.h; };
  drawValueAxis(out, c, p, valueAxis(c, lo, hi, p.h), yOf);
  for (const float t : niceTicks(0.0f, static_cast<float>(g.x_hi), std::clamp(static_cast<int>(p.w / (px * 5.0f)), 2, 8))) {
    const float x = g.xAt(t);
    addLine(out, x, p.bottom(), x, p.bottom() + px * 0.3f, Role::Frame);
    addText(out, x, p.bottom() + px * 0.35f, formatValueShort(t), px, Role::Text, 0.5f, 0.0f);
  }
  addLine(out, p.x, p.bottom(), p.right(), p.bottom(), Role::Frame);
  addLine(out, p.x, p.y, p.x, p.bottom(), Role::Frame);
  addText(out, p.x + p.w / 2, p.bottom() + px * 1.6f, x_axis, px, Role::Muted, 0.5f, 0.0f);
  const int64_t shown = reveal >= 0 ? std::min(reveal + 1, g.n) : g.n;
  if (reveal >= 0) {  // the step the timeline is at
    const float x = g.xAt(static_cast<double>(shown - 1)), half = std::max(1.5f, px * 0.15f);
    addFill(out, x - half, p.y, x + half, p.bottom(), Role::Accent, 0.6f);
  }
  // The series under the marks: about one sample per device pixel.
  const int64_t step = std::max<int64_t>(1, g.n / std::max<int64_t>(1, static_cast<int64_t>(p.w * c.raster_scale)));
  for (int64_t s = 0; s < series; ++s) {
    Primitive line;
    line.kind = Primitive::Kind::Polyline;
    line.colour = headColor(static_cast<int>(s));
    line.thickness = std::max(1.5f, px * 0.15f);
    auto sample = [&](int64_t x) {
      const float v = curves.data[static_cast<size_t>(s * g.n + x)];
      if (std::isfinite(v)) line.points.insert(line.points.end(), {g.xAt(static_cast<double>(x)), yOf(v)});
    };
    for (int64_t x = 0; x < shown; x += step) sample(x);
    if ((shown - 1) % step != 0) sample(shown - 1);  // the curve ends where the data (or the timeline) does
    if (line.points.empty()) continue;
    if (g.n == 1 || reveal >= 0) {
      const float x = line.points[line.points.size() - 2], y = line.points.back(), r = std::max(3.0f, px * 0.3f);
      addFill(out, x - r, y - r, x + r, y + r, *line.colour).kind = Primitive::Kind::FillEllipse;
    }
    out.push_back(std::move(line));
  }
  const float stroke = std::max(1.0f, px * 0.1f);
  // Markers: a dashed line through the plot, its label in the rows above.
  for (size_t i = 0; i < markers.size(); ++i) {
    const Marker& m = markers[i];
    const float x = g.xAt(m.x);
    Primitive& l = addLine(out, x, p.y - px * 0.3f, x, p.bottom(), Role::Muted, stroke);
    l.dashed = true;
    if (m.series >= 0) l.colour = headColor(m.series);
    const std::optional<Rgb8> colour = l.colour;  // l dangles once addText grows out
    if (!labelled[i]) continue;
    addText(out, rows.placed[i].left, labels_top + row_h * static_cast<float>(rows.placed[i].row), m.label, px).colour = colour;
  }
  // Levels: a dashed line across, the label at its right end above it (under
  // it where above would leave the plot: ACT's 1 − ε near the top).
  for (const Marker& l : levels) {
    const float y = yOf(static_cast<float>(l.x));
    addLine(out, p.x, y, p.right(), y, Role::Text, stroke).dashed = true;
    const bool under = y - px * 1.4f < p.y;
    // On a plate of the background: the series run through the label's corner of the plot.
    const float w = c.textWidth(l.label, px), top = under ? y + px * 0.15f : y - px * 1.35f;
    addFill(out, p.right() - px * 0.45f - w, top, p.right() - px * 0.15f, top + px * 1.2f, Role::Background, 0.85f);
    addText(out, p.right() - px * 0.3f, top, l.label, px, Role::Text, 1.0f, 0.0f);
  }
  return g;
}

// [SECTION] Points

PointsLayout pointsPrimitives(Primitives& out, const Canvas& c, Box area, const Extra& e) {
  const float px = labelPx(c);
  const int64_t n = e.value.rank() == 2 && e.value.shape[1] == 3 ? e.value.shape[0] : 0;
  float radius = 1e-6f;
  for (int64_t i = 0; i < n; ++i)
    radius = std::max(radius, std::hypot(e.value.data[static_cast<size_t>(3 * i)], e.value.data[static_cast<size_t>(3 * i + 1)]));
  for (const Arrow& a : e.arrows) radius = std::max(radius, std::hypot(a.x, a.y));
  PointsLayout g;
  g.radius = std::max(1.0f, std::min(area.w, area.h) * 0.5f - px);
  g.cx = area.x + area.w * 0.5f;
  g.cy = area.y + px + g.radius;
  g.scale = g.radius / (radius * 1.05f);
  // Sectors between consecutive rays in the category counter-clockwise of
  // each, as convex pieces of at most 90° (a polygon fills convex shapes in
  // both backends). Screen y grows downwards: θ is drawn counter-clockwise.
  std::vector<Marker> rays = e.markers;
  std::sort(rays.begin(), rays.end(), [](const Marker& a, const Marker& b) { return a.x < b.x; });
  auto at = [&](double th, float r) { return std::pair(g.cx + r * static_cast<float>(std::cos(th)), g.cy - r * static_cast<float>(std::sin(th))); };
  for (size_t i = 0; i < rays.size(); ++i) {
    const double a0 = rays[i].x, a1 = i + 1 < rays.size() ? rays[i + 1].x : rays[0].x + 2 * std::numbers::pi;
    const int pieces = std::max(1, static_cast<int>(std::ceil((a1 - a0) / (std::numbers::pi / 2))));
    for (int k = 0; k < pieces; ++k) {
      const double b0 = a0 + (a1 - a0) * k / pieces, b1 = a0 + (a1 - a0) * (k + 1) / pieces;
      Primitive fan;
      fan.kind = Primitive::Kind::Polygon;
      fan.colour = headColor(rays[i].series);
      fan.alpha = 0.17f;
      fan.points = {g.cx, g.cy};
      for (int t = 0; t <= 24; ++t) {
        const auto [x, y] = at(b0 + (b1 - b0) * t / 24, g.radius);
        fan.points.insert(fan.points.end(), {x, y});
      }
      out.push_back(std::move(fan));
    }
  }
  for (const Marker& ray : rays) {
    const auto [x, y] = at(ray.x, g.radius);
    Primitive& l = addLine(out, g.cx, g.cy, x, y, headColor(ray.series), std::max(1.0f, px * 0.1f));
    l.alpha = 0.8f;
  }
  addRect(out, g.cx - g.radius, g.cy - g.radius, g.cx + g.radius, g.cy + g.radius, Role::Frame).kind = Primitive::Kind::Ellipse;
  const float dot = std::max(1.5f, px * 0.18f);
  for (int64_t i = 0; i < n; ++i) {
    const float* q = e.value.data.data() + 3 * i;
    const float x = g.cx + q[0] * g.scale, y = g.cy - q[1] * g.scale;
    addFill(out, x - dot, y - dot, x + dot, y + dot, headColor(static_cast<int>(q[2]))).kind = Primitive::Kind::FillEllipse;
  }
  // Arrows: a dark casing under the coloured shaft, so they read over the dots.
  std::vector<Box> labelled;  // the labels placed so far
  for (const Arrow& a : e.arrows) {
    const float x = g.cx + a.x * g.scale, y = g.cy - a.y * g.scale;
    Primitive shaft;
    shaft.kind = Primitive::Kind::Arrow;
    shaft.x0 = g.cx, shaft.y0 = g.cy, shaft.x1 = x, shaft.y1 = y;
    shaft.thickness = std::max(1.5f, px * 0.12f);
    if (a.category >= 0) shaft.colour = headColor(a.category);
    const ArrowHead head = arrowHead(shaft);  // the casing stops under the head
    addLine(out, g.cx, g.cy, head.base_x, head.base_y, Rgb8{20, 20, 20}, std::max(3.0f, px * 0.25f)).alpha = 0.8f;
    out.push_back(shaft);
    // The label past the tip, along the arrow (±r pairs point apart, so
    // their labels do), kept inside the area; where it would touch a label
    // placed before (many rays close together, b = 8), further out along the
    // arrow, and left out where no place is clear.
    const float len = std::max(1e-3f, std::hypot(x - g.cx, y - g.cy)), dx = (x - g.cx) / len, dy = (y - g.cy) / len;
    const float w = c.textWidth(a.label, px), h = px * 1.2f, ax = 0.5f - 0.5f * dx, ay = 0.5f - 0.5f * dy;
    for (const float out_by : {0.4f, 1.4f, 2.4f}) {
      const float lx = std::clamp(x + dx * px * out_by, area.x + ax * w, area.right() - (1 - ax) * w);
      const float ly = std::clamp(y + dy * px * out_by, area.y + ay * h, area.bottom() - (1 - ay) * h);
      const Box box{lx - ax * w, ly - ay * h, w, h};
      if (std::any_of(labelled.begin(), labelled.end(), [&](const Box& o) { return overlaps(box, o); })) continue;
      labelled.push_back(box);
      addText(out, lx, ly, a.label, px, Role::Text, ax, ay);
      break;
    }
  }
  return g;
}

// [SECTION] Token strip

int64_t TokenStripLayout::tokenAt(float x, float y) const {
  for (size_t i = 0; i < boxes.size(); ++i)
    if (x >= boxes[i].x && x < boxes[i].right() && y >= boxes[i].y && y < boxes[i].bottom()) return static_cast<int64_t>(i);
  if (!boxes.empty() || cols <= 0 || x < area.x || y < area.y || cell_w <= 0 || cell_h <= 0) return -1;
  const int64_t col = static_cast<int64_t>((x - area.x) / cell_w), row = static_cast<int64_t>((y - area.y) / cell_h);
  const int64_t i = row * cols + col;
  return col < cols && i < n ? i : -1;
}

TokenStripLayout tokenStripPrimitives(Primitives& out, const Canvas& c, Box area, const Array& categories_of,
                                      const std::vector<std::string>& tokens, const std::string& key) {
  TokenStripLayout g;
  g.area = area;
  g.n = categories_of.size();
  const float px = labelPx(c), pad = px * 0.3f, row_h = px * 1.5f;
  auto token = [&](int64_t i) { return i < static_cast<int64_t>(tokens.size()) ? tokens[static_cast<size_t>(i)] : std::string(); };
  auto category = [&](int64_t i) { return static_cast<int>(categories_of.data[static_cast<size_t>(i)]); };
  // Text boxes, wrapped, while they all fit.
  float x = area.x, y = area.y;
  bool fits = true;
  for (int64_t i = 0; i < g.n && fits; ++i) {
    const float w = c.textWidth(token(i), px) + pad * 2;
    if (x + w > area.right() && x > area.x) {
      x = area.x;
      y += row_h + pad;
    }
    fits = y + row_h <= area.bottom() && w <= area.w;
    g.boxes.push_back({x, y, w, row_h});
    x += w + pad;
  }
  if (fits) {
    for (int64_t i = 0; i < g.n; ++i) {
      const Box& b = g.boxes[static_cast<size_t>(i)];
      if (category(i) >= 0) addFill(out, b.x, b.y, b.right(), b.bottom(), headColor(category(i)));
      else addRect(out, b.x, b.y, b.right(), b.bottom(), Role::Frame);
      Primitive& t = addText(out, b.x + b.w / 2, b.y + b.h / 2, token(i), px, Role::Text, 0.5f, 0.5f);
      if (category(i) >= 0) t.colour = Rgb8{255, 255, 255};
    }
    return g;
  }
  // One cell per token, rows of about one device pixel per cell: the full
  // rows as one category raster of the data in place, the last row as another.
  g.boxes.clear();
  if (g.n == 0 || area.w <= 0 || area.h <= 0) return g;
  g.cols = std::clamp<int64_t>(static_cast<int64_t>(area.w * c.raster_scale), 1, g.n);
  const int64_t full = g.n / g.cols, rest = g.n % g.cols, rows = full + (rest > 0 ? 1 : 0);
  g.cell_w = area.w / static_cast<float>(g.cols);
  g.cell_h = std::min(row_h, area.h / static_cast<float>(rows));
  auto raster = [&](int64_t first, int64_t r, int64_t cols, const char* part) {
    auto ras = std::make_shared<Raster>();
    ras->values = categories_of.data.data() + first;
    ras->rows = r;
    ras->cols = cols;
    ras->categories = true;
    ras->key = key + part;
    const float top = area.y + g.cell_h * static_cast<float>(first / g.cols);
    Primitive& p = addFill(out, area.x, top, area.x + g.cell_w * static_cast<float>(cols), top + g.cell_h * static_cast<float>(r),
                           Role::Text);
    p.kind = Primitive::Kind::Raster;
    p.raster = std::move(ras);
  };
  if (full > 0) raster(0, full, g.cols, "/rows");
  if (rest > 0) raster(full * g.cols, 1, rest, "/last");
  return g;
}

// [SECTION] Stacked bars

int64_t StackedLayout::barAt(float x) const {
  if (rows <= 0 || x < plot.x || x >= plot.right()) return -1;
  return std::min<int64_t>(rows - 1, static_cast<int64_t>((x - plot.x) / bar_w));
}

StackedLayout stackedPrimitives(Primitives& out, const Canvas& c, Box area, const Array& values,
                                const std::vector<std::string>& row_labels, const std::string& row_axis,
                                const std::string& segment_axis) {
  StackedLayout g;
  const float px = labelPx(c);
  g.rows = values.rank() == 2 ? values.shape[0] : 0;
  const int64_t n = values.rank() == 2 ? values.shape[1] : 0;
  auto at = [&](int64_t t, int64_t k) { return values.data[static_cast<size_t>(t * n + k)]; };
  // Segments used anywhere, and the tallest stack.
  float hi = 0.0f;
  for (int64_t t = 0; t < g.rows; ++t) {
    float sum = 0.0f;
    for (int64_t k = 0; k < n; ++k)
      if (std::isfinite(at(t, k)) && at(t, k) > 0.0f) {
        g.used = std::max(g.used, k + 1);
        sum += at(t, k);
      }
    hi = std::max(hi, sum);
  }
  if (!(hi > 0.0f)) hi = 1.0f;
  std::vector<LegendEntry> legend;
  for (int64_t k = 0; k < g.used; ++k) legend.push_back({headColor(static_cast<int>(k)), segment_axis + " " + std::to_string(k + 1)});
  const float legend_h = legendPrimitives(out, c, area, legend, false);
  int lines = 1;
  float widest = 0;
  for (const std::string& l : row_labels) {
    const std::vector<std::string> parts = splitLines(l);
    lines = std::max(lines, static_cast<int>(parts.size()));
    for (const std::string& part : parts) widest = std::max(widest, c.textWidth(part, px));
  }
  const float line_h = px * 1.2f, labels_h = line_h * static_cast<float>(lines) + px * 0.3f;
  const float margin = valueAxis(c, 0.0f, hi, area.h).margin;
  g.plot.x = area.x + margin;
  g.plot.y = area.y + legend_h + px * 0.9f;
  g.plot.w = area.right() - px * 0.5f - g.plot.x;
  g.plot.h = area.bottom() - labels_h - px * 1.5f - g.plot.y;
  if (g.rows == 0 || g.plot.w <= px || g.plot.h <= px) return g;
  const Box& p = g.plot;
  auto yOf = [&](float v) { return p.bottom() - v / hi * p.h; };
  drawValueAxis(out, c, p, valueAxis(c, 0.0f, hi, p.h), yOf);
  g.bar_w = p.w / static_cast<float>(g.rows);
  const float gap = std::min(g.bar_w * 0.12f, px * 0.3f);
  for (int64_t t = 0; t < g.rows; ++t) {
    float base = 0.0f;
    const float x0 = p.x + g.bar_w * static_cast<float>(t) + gap, x1 = p.x + g.bar_w * static_cast<float>(t + 1) - gap;
    for (int64_t k = 0; k < g.used; ++k) {
      const float v = at(t, k);
      if (!std::isfinite(v) || v <= 0.0f) continue;
      addFill(out, x0, yOf(base + v), x1, yOf(base), headColor(static_cast<int>(k)));
      // A light seam between segments where the bars are wide enough to show it.
      if (g.bar_w > px * 0.5f) addLine(out, x0, yOf(base + v), x1, yOf(base + v), Rgb8{255, 255, 255}).alpha = 0.55f;
      base += v;
    }
  }
  addLine(out, p.x, p.bottom(), p.right(), p.bottom(), Role::Frame);
  // Captions under the bars, thinned so they do not overlap.
  const int64_t stride = labelStride(g.bar_w, widest + px * 0.5f);
  for (int64_t t = 0; t < g.rows && t < static_cast<int64_t>(row_labels.size()); t += stride) {
    float y = p.bottom() + px * 0.3f;
    for (const std::string& part : splitLines(row_labels[static_cast<size_t>(t)])) {
      addText(out, p.x + g.bar_w * (static_cast<float>(t) + 0.5f), y, part, px, Role::Text, 0.5f, 0.0f);
      y += line_h;
    }
  }
  addText(out, p.x + p.w / 2, p.bottom() + labels_h + px * 0.2f, row_axis, px, Role::Muted, 0.5f, 0.0f);
  return g;
}

// [SECTION] Scatter
int64_t ScatterLayout::pointAt(float x, float y, float radius) const {
  int64_t best = -1;
  float best_d = radius * radius;
  for (size_t i = 0; i < sx.size(); ++i) {
    const float d = (sx[i] - x) * (sx[i] - x) + (sy[i] - y) * (sy[i] - y);
    if (d <= best_d) best_d = d, best = static_cast<int64_t>(i);
  }
  return best;
}

namespace {

// Whether the segment (x0, y0)–(x1, y1) passes through `b` (sampled every few pixels).
bool crosses(float x0, float y0, float x1, float y1, const Box& b) {
  const int n = std::max(2, static_cast<int>(std::hypot(x1 - x0, y1 - y0) / 2.0f));
  for (int i = 1; i < n; ++i) {
    const float t = static_cast<float>(i) / static_cast<float>(n), x = x0 + (x1 - x0) * t, y = y0 + (y1 - y0) * t;
    if (x > b.x && x < b.right() && y > b.y && y < b.bottom()) return true;
  }
  return false;
}

}  // namespace

ScatterLayout scatterPrimitives(Primitives& out, const Canvas& c, Box area, const Scatter& s) {
  const std::vector<ScatterPoint>& points = s.points;
  const std::string &x_axis = s.x_axis, &y_axis = s.y_axis;
  const float x_hi = s.x_hi, y_lo = s.y_lo, y_hi = s.y_hi > s.y_lo ? s.y_hi : s.y_lo + 1.0f;
  const float px = labelPx(c), r = std::max(3.0f, px * 0.35f), line_h = px * 1.3f;
  const float legend_h = legendPrimitives(out, c, area, s.legend, false);
  float top = area.y + legend_h + (legend_h > 0 ? px * 0.6f : 0.0f);
  const float axis_title = px * 1.5f;  // the y axis's name, turned, at the left
  const auto markId = [&](size_t i) { return "(" + x_axis + ", " + y_axis + ")[" + points[i].label + "]"; };

  // The plot for a top edge; where its labels go. Each label, strongest point first, takes the first of
  // eight places around its dot where it reads as that dot's alone (labelNamesOnly: its centre nearer its
  // own dot than any other, over no dot), inside the plot and clear of the labels placed before it; else
  // a place farther out joined to the dot by a leader that crosses no other dot or label; else none.
  struct Placed {
    size_t point;
    Box box;
    bool leader;
  };
  struct Placement {
    Box plot{};
    std::vector<float> sx, sy;
    std::vector<Placed> labels;
    std::vector<size_t> unlabelled;
  };
  const auto place = [&](float plot_top) {
    Placement g;
    const ValueAxis yaxis = valueAxis(c, y_lo, y_hi, area.bottom() - plot_top);
    g.plot = {area.x + axis_title + yaxis.margin, plot_top + px * 0.5f, 0, 0};
    g.plot.w = area.right() - px * 1.5f - g.plot.x;
    g.plot.h = area.bottom() - px * 3.0f - g.plot.y;  // x ticks and the x axis's name under it
    if (g.plot.w <= px * 4 || g.plot.h <= px * 4) return g;
    const Box& p = g.plot;
    std::vector<Box> dots;
    for (const ScatterPoint& q : points) {
      g.sx.push_back(p.x + std::clamp(q.x, 0.0f, x_hi) / x_hi * p.w);
      g.sy.push_back(p.bottom() - (std::clamp(q.y, y_lo, y_hi) - y_lo) / (y_hi - y_lo) * p.h);
      dots.push_back({g.sx.back() - r, g.sy.back() - r, 2 * r, 2 * r});
    }
    std::vector<size_t> order(points.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::max(points[a].x / x_hi, (points[a].y - y_lo) / (y_hi - y_lo)) >
             std::max(points[b].x / x_hi, (points[b].y - y_lo) / (y_hi - y_lo));
    });
    std::vector<Box> taken;
    const auto inside = [&](const Box& b) { return b.x >= p.x && b.y >= p.y && b.right() <= p.right() && b.bottom() <= p.bottom(); };
    const auto clear = [&](const Box& b) { return std::none_of(taken.begin(), taken.end(), [&](const Box& t) { return overlaps(b, t); }); };
    for (const size_t i : order) {
      if (points[i].label.empty()) continue;
      const float w = c.textWidth(points[i].label, px), x = g.sx[i], y = g.sy[i], d = r * 1.6f;
      const Box near[] = {{x + d, y - line_h / 2, w, line_h},     {x - d - w, y - line_h / 2, w, line_h},
                          {x - w / 2, y - d - line_h, w, line_h}, {x - w / 2, y + d, w, line_h},
                          {x + r, y - r - line_h, w, line_h},     {x - r - w, y - r - line_h, w, line_h},
                          {x + r, y + r, w, line_h},              {x - r - w, y + r, w, line_h}};
      const Box* fits = nullptr;
      for (const Box& b : near)
        if (inside(b) && clear(b) && labelNamesOnly(b, i, dots)) {
          fits = &b;
          break;
        }
      if (fits) {
        taken.push_back(*fits);
        g.labels.push_back({i, *fits, false});
        continue;
      }
      // Farther out, in sixteen directions at three distances, on a leader from the label's nearest point.
      bool found = false;
      for (const float reach : {px * 2.5f, px * 4.5f, px * 7.0f}) {
        for (int k = 0; k < 16 && !found; ++k) {
          const float th = static_cast<float>(k) * 0.3926991f;
          const float cx = x + std::cos(th) * (reach + w / 2), cy = y - std::sin(th) * (reach + line_h / 2);
          const Box b{cx - w / 2, cy - line_h / 2, w, line_h};
          if (!inside(b) || !clear(b)) continue;
          // The leader runs from the label's nearest point to the dot's edge, past no other dot or label.
          const float lx = std::clamp(x, b.x, b.right()), ly = std::clamp(y, b.y, b.bottom());
          const float len = std::max(1e-3f, std::hypot(lx - x, ly - y)), ex = x + (lx - x) / len * r, ey = y + (ly - y) / len * r;
          bool ok = true;
          for (size_t j = 0; j < dots.size() && ok; ++j) {
            const Box grown{dots[j].x - 1, dots[j].y - 1, dots[j].w + 2, dots[j].h + 2};
            ok = !overlaps(b, grown) && (j == i || !crosses(lx, ly, ex, ey, grown));
          }
          for (size_t t = 0; t < taken.size() && ok; ++t) ok = !crosses(lx, ly, ex, ey, taken[t]);
          if (!ok) continue;
          taken.push_back(b);
          g.labels.push_back({i, b, true});
          found = true;
        }
        if (found) break;
      }
      if (!found) g.unlabelled.push_back(i);
    }
    return g;
  };
  Placement g = place(top);
  // Points no label could name alone: a line over the plot names them (the screen adds the hover).
  std::string note;
  if (!g.unlabelled.empty()) {
    std::sort(g.unlabelled.begin(), g.unlabelled.end());
    note = "not labelled where the dots crowd:";
    for (size_t k = 0; k < g.unlabelled.size(); ++k) note += (k ? ", " : " ") + points[g.unlabelled[k]].label;
    g = place(top + line_h * static_cast<float>(wrapLines(c, note, px, area.w).size()));
  }
  ScatterLayout out_g;
  out_g.plot = g.plot;
  out_g.sx = g.sx;
  out_g.sy = g.sy;
  const Box& p = g.plot;
  if (p.w <= px * 4 || p.h <= px * 4) return out_g;
  if (!note.empty()) {
    float y = top;
    for (const std::string& l : wrapLines(c, note, px, area.w)) {
      addText(out, area.x, y, l, px, Role::Muted, 0.0f, 0.0f);
      y += line_h;
    }
  }
  const auto yOf = [&](float y) { return p.bottom() - (y - y_lo) / (y_hi - y_lo) * p.h; };
  const auto xOf = [&](float x) { return p.x + x / x_hi * p.w; };
  drawValueAxis(out, c, p, valueAxis(c, y_lo, y_hi, p.h), yOf);
  for (const float t : niceTicks(0.0f, x_hi, std::clamp(static_cast<int>(p.w / (px * 5.0f)), 2, 8))) {
    if (s.x_counts && t != std::floor(t)) continue;
    addLine(out, xOf(t), p.y, xOf(t), p.bottom(), Role::Frame).alpha = 0.45f;
    addText(out, xOf(t), p.bottom() + px * 0.35f, formatValueShort(t), px, Role::Text, 0.5f, 0.0f);
  }
  addLine(out, p.x, p.bottom(), p.right(), p.bottom(), Role::Frame);
  addLine(out, p.x, p.y, p.x, p.bottom(), Role::Frame);
  addText(out, p.x + p.w / 2, p.bottom() + px * 1.6f, x_axis, px, Role::Muted, 0.5f, 0.0f);
  Primitive& turned = addText(out, area.x, p.y + p.h / 2, y_axis, px, Role::Muted, 0.5f, 0.0f);
  turned.vertical = true;
  for (const Marker& l : s.levels) {  // dashed across; its label on a plate over the line, where it hides no dot
    const float y = yOf(std::clamp(static_cast<float>(l.x), y_lo, y_hi));
    addLine(out, p.x, y, p.right(), y, Role::Muted, 1.5f).dashed = true;
    const float w = c.textWidth(l.label, px) + px * 0.3f, h = px * 1.2f;
    const float above = y - px * 1.35f < p.y ? y + px * 0.15f : y - px * 1.35f, below = y + px * 0.15f + h > p.bottom() ? above : y + px * 0.15f;
    const Box tries[] = {{p.right() - px * 0.15f - w, above, w, h}, {p.x + px * 0.3f, above, w, h},
                         {p.right() - px * 0.15f - w, below, w, h}, {p.x + px * 0.3f, below, w, h}};
    const auto hidesADot = [&](const Box& b) {
      for (size_t i = 0; i < g.sx.size(); ++i)
        if (overlaps(b, {g.sx[i] - r - 1, g.sy[i] - r - 1, 2 * r + 2, 2 * r + 2})) return true;
      return false;
    };
    const Box* at = &tries[0];
    for (const Box& b : tries)
      if (!hidesADot(b)) {
        at = &b;
        break;
      }
    addFill(out, at->x, at->y, at->right(), at->bottom(), Role::Background, 0.85f);
    addText(out, at->x + px * 0.15f, at->y, l.label, px, Role::Muted, 0.0f, 0.0f);
  }
  for (size_t i = 0; i < points.size(); ++i) {
    Primitive& dot = addFill(out, g.sx[i] - r, g.sy[i] - r, g.sx[i] + r, g.sy[i] + r, points[i].colour);
    dot.kind = Primitive::Kind::FillEllipse;
    dot.mark = markId(i);
    dot.mark_value = points[i].y;
  }
  for (const Placed& l : g.labels) {
    const size_t i = l.point;
    if (l.leader) {  // from the text's own box (its line's height less the leading) to the dot's edge
      const float mid = l.box.y + l.box.h / 2;
      const float lx = std::clamp(g.sx[i], l.box.x, l.box.right()), ly = std::clamp(g.sy[i], mid - px / 2, mid + px / 2);
      const float dx = lx - g.sx[i], dy = ly - g.sy[i], len = std::max(1e-3f, std::hypot(dx, dy));
      addLine(out, lx, ly, g.sx[i] + dx / len * r, g.sy[i] + dy / len * r, Role::Muted).labels = markId(i);
    }
    addText(out, l.box.x, l.box.y + l.box.h / 2, points[i].label, px, Role::Text, 0.0f, 0.5f).labels = markId(i);
  }
  return out_g;
}

// [SECTION] Scalars

std::string formatScalar(double v) {
  if (v == std::floor(v) && std::abs(v) >= 1000 && std::abs(v) < 1e15) return groupDigits(static_cast<int64_t>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

ScalarItem scalarItem(const Extra& e) {
  return {e.label.empty() ? e.name : e.label, e.value.data.empty() ? 0.0 : static_cast<double>(e.value.data[0])};
}

float scalarsPrimitives(Primitives& out, const Canvas& c, Box area, const std::vector<ScalarItem>& items, bool draw) {
  if (items.empty() || area.w <= 0) return 0;
  const float px = labelPx(c), value_px = c.unit, gap = px * 1.5f;
  // Columns as wide as the widest item (label on one line), as many as fit.
  float widest = 0;
  for (const ScalarItem& s : items)
    widest = std::max({widest, c.textWidth(s.label, px), c.textWidth(formatScalar(s.value), value_px, true)});
  const int cols = std::max(1, static_cast<int>((area.w + gap) / (std::min(widest, area.w) + gap)));
  const float col_w = (area.w - gap * static_cast<float>(cols - 1)) / static_cast<float>(cols);
  // More than two rows of them, or all in one line: one line each instead, the value then its label (half
  // the height).
  float value_w = 0, line_w = 0;
  for (const ScalarItem& s : items) value_w = std::max(value_w, c.textWidth(formatScalar(s.value), value_px, true));
  for (const ScalarItem& s : items) line_w = std::max(line_w, value_w + px + c.textWidth(s.label, px));
  const int line_cols = std::max(1, static_cast<int>((area.w + gap) / (line_w + gap)));
  const bool one_line = static_cast<size_t>(line_cols) >= items.size();
  if (((items.size() + static_cast<size_t>(cols) - 1) / static_cast<size_t>(cols) > 2 || one_line) && line_w <= area.w) {
    const float pitch = (area.w + gap) / static_cast<float>(line_cols), line_h = value_px * 1.45f;
    for (size_t k = 0; k < items.size(); ++k) {
      const float x = area.x + pitch * static_cast<float>(k % static_cast<size_t>(line_cols));
      const float y = area.y + line_h * static_cast<float>(k / static_cast<size_t>(line_cols)) + line_h * 0.5f;
      if (!draw) continue;
      addText(out, x + value_w, y, formatScalar(items[k].value), value_px, Role::Text, 1.0f, 0.5f).bold = true;
      addFormula(out, c, items[k].label, x + value_w + px, y - px * 0.85f, px, pitch - value_w - px - gap, Role::Muted, false, true);
    }
    return line_h * static_cast<float>((items.size() + static_cast<size_t>(line_cols) - 1) / static_cast<size_t>(line_cols));
  }
  float y = area.y;
  for (size_t first = 0; first < items.size(); first += static_cast<size_t>(cols)) {
    float row_h = 0;
    for (size_t k = first; k < std::min(items.size(), first + static_cast<size_t>(cols)); ++k) {
      const float x = area.x + (col_w + gap) * static_cast<float>(k - first);
      const float label_h = addFormula(out, c, items[k].label, x, y, px, col_w, Role::Muted, false, draw);
      if (draw) addText(out, x, y + label_h + px * 0.2f, formatScalar(items[k].value), value_px).bold = true;
      row_h = std::max(row_h, label_h + px * 0.2f + value_px * 1.3f);
    }
    y += row_h + px * 0.4f;
  }
  return y - px * 0.4f - area.y;
}

}  // namespace attn
