#include "widgets/view_layouts.h"

#include "widgets/plot_layouts.h"

#include "engine/attention_math.h"
#include "widgets/value_range.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// The query the image and compare views mark.
constexpr Rgb8 kQueryMark{220, 20, 60};

// The theme's text colour as a data colour (legend entries are data colours).
Rgb8 textColour(const Canvas& c) { return c.dark ? Rgb8{235, 235, 235} : Rgb8{20, 20, 20}; }

std::string printf1(const char* format, double v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

// [SECTION] Pieces

uint32_t packRgba(Rgb8 c) { return 255u << 24 | uint32_t{c.b} << 16 | uint32_t{c.g} << 8 | c.r; }

uint32_t heatOverPicture(float r, float g, float b, float t, Colormap cmap) {
  const float grey = 0.3f + 0.35f * (0.3f * r + 0.59f * g + 0.11f * b);
  const Rgb8 heat = colormapAt(cmap, t);
  const float a = std::sqrt(std::clamp(t, 0.0f, 1.0f));
  auto mix = [&](uint8_t v) {
    return static_cast<uint8_t>(std::lround(std::clamp(grey * (1 - a) + static_cast<float>(v) / 255.0f * a, 0.0f, 1.0f) * 255.0f));
  };
  return packRgba({mix(heat.r), mix(heat.g), mix(heat.b)});
}

float panelTitle(Primitives& out, const Canvas& c, const std::string& title, float x, float y, float width, bool draw) {
  if (title.empty()) return 0;
  return addFormula(out, c, title, x, y, c.unit, width, Role::Text, true, draw) + c.unit * 0.3f;
}

AxesMargins cellAxesMargins(const Canvas& c, int64_t rows, bool row_caption) {
  const float px = labelPx(c);
  const float tick_w = c.textWidth(groupDigits(std::max<int64_t>(rows - 1, 0)), px);
  return {tick_w + c.unit * 0.7f + (row_caption ? px * 1.5f : 0.0f), c.unit * 0.4f + px * 1.3f + px * 1.5f};
}

void cellAxesPrimitives(Primitives& out, const Canvas& c, const Box& pic, int64_t rows, int64_t cols, const std::string& row_caption,
                        const std::string& col_caption) {
  if (rows <= 0 || cols <= 0) return;
  const float px = labelPx(c), tick = c.unit * 0.3f;
  const float ch = pic.h / static_cast<float>(rows), cw = pic.w / static_cast<float>(cols);
  // Ticks three label heights apart at the least; few rows tall enough (heads) each get one.
  // A few cells (up to 64): every k-th, as many as fit a label apart (labelStride); more: nice ticks.
  auto ticks = [](int64_t n, float cell, float label, int max_ticks) {
    std::vector<float> t;
    if (n <= 64) {
      for (int64_t i = 0, k = labelStride(cell, label); i < n; i += k) t.push_back(static_cast<float>(i));
      return t;
    }
    return niceTicks(0, static_cast<float>(n - 1), max_ticks);
  };
  const std::vector<float> row_ticks = ticks(rows, ch, px * 1.3f, std::clamp(static_cast<int>(pic.h / (px * 3.5f)), 2, 6));
  float widest = 0;
  for (const float t : row_ticks) {
    const float y = pic.y + (t + 0.5f) * ch;
    addLine(out, pic.x - tick, y, pic.x, y, Role::Frame);
    const std::string label = groupDigits(static_cast<int64_t>(t));
    addText(out, pic.x - tick * 1.5f, y, label, px, Role::Text, 1.0f, 0.5f);
    widest = std::max(widest, c.textWidth(label, px));
  }
  // Column ticks: as many as their widest label allows, a label's width apart at the least.
  const float col_label_w = c.textWidth(groupDigits(cols - 1), px) + px * 1.5f;
  const int max_cols = std::clamp(static_cast<int>(pic.w / std::max(col_label_w, c.unit * 4)), 2, 6);
  const std::vector<float> col_ticks = ticks(cols, cw, col_label_w, max_cols);
  for (const float t : col_ticks) {
    const float x = pic.x + (t + 0.5f) * cw;
    addLine(out, x, pic.bottom(), x, pic.bottom() + tick, Role::Frame);
    addText(out, x, pic.bottom() + tick * 1.3f, groupDigits(static_cast<int64_t>(t)), px, Role::Text, 0.5f, 0.0f);
  }
  if (!col_caption.empty()) {
    // Wider than the picture: set smaller, down to 0.6× (the callers' captions fit at that size).
    const float w = c.textWidth(col_caption, px), size = w > pic.w ? px * std::max(0.6f, pic.w / w) : px;
    addText(out, pic.x + pic.w * 0.5f, pic.bottom() + tick + px * 1.5f, col_caption, size, Role::Muted, 0.5f, 0.0f);
  }
  // Taller than the picture: a little smaller, or left out where that is not enough (the ticks stay readable).
  const float fit = pic.h / std::max(1.0f, c.textWidth(row_caption, px));
  if (!row_caption.empty() && fit >= 0.85f) {
    Primitive& t = addText(out, pic.x - tick * 1.5f - widest - px * 0.4f, pic.y + pic.h * 0.5f, row_caption, px * std::min(fit, 1.0f),
                           Role::Muted, 0.5f, 1.0f);
    t.vertical = true;
  }
}

// [SECTION] Token lines

namespace {

// One line per (query, key, head): beyond this many the frame stalls (L = 4096
// would be 16M lines a head), and the picture is a solid fill anyway.
constexpr int64_t kMaxLines = 64 * 1024;

std::string tokenAt(const std::vector<std::string>& tokens, int64_t i) {
  return i < static_cast<int64_t>(tokens.size()) ? tokens[static_cast<size_t>(i)] : std::to_string(i);
}

}  // namespace

int64_t TokenLinesLayout::queryAt(float y) const {
  const auto i = static_cast<int64_t>(std::floor((y - y0q) / sq));
  return i >= 0 && y >= y0q ? i : -1;
}
int64_t TokenLinesLayout::keyAt(float y) const {
  const auto j = static_cast<int64_t>(std::floor((y - y0k) / sk));
  return j >= 0 && y >= y0k ? j : -1;
}

TokenLinesLayout tokenLinesPrimitives(Primitives& out, const Canvas& c, const Box& area, const Result& r,
                                      const std::vector<bool>& visible, bool hidden_in_legend, int64_t hover_q, int64_t hover_k) {
  TokenLinesLayout g;
  const int64_t lq = r.queries(), lk = r.keys();
  const float px = labelPx(c), line = px;
  auto shown = [&](int h) { return visible.empty() || (h < static_cast<int>(visible.size()) && visible[static_cast<size_t>(h)]); };
  // The legend: a colour per head (on screen a click on one hides or shows it).
  std::vector<LegendEntry> legend;
  std::vector<int> legend_heads;
  for (int h = 0; h < r.heads(); ++h)
    if (shown(h) || hidden_in_legend) {
      legend.push_back({headColor(h), "head " + std::to_string(h), false, shown(h) ? 1.0f : 0.25f});
      legend_heads.push_back(h);
    }
  std::vector<Box> boxes;
  const float legend_h = legendPrimitives(out, c, Box{area.x, area.y, area.w, 0}, legend, false, true, &boxes) + px * 0.4f;
  g.head_boxes.assign(static_cast<size_t>(r.heads()), Box{});
  for (size_t k = 0; k < boxes.size(); ++k) g.head_boxes[static_cast<size_t>(legend_heads[k])] = boxes[k];
  if (lq == 0 || lk == 0) return g;
  int64_t heads_shown = 0;
  for (int h = 0; h < r.heads(); ++h) heads_shown += shown(h);
  const Box body{area.x, area.y + legend_h, area.w, area.h - legend_h};
  if (lq * lk * heads_shown > kMaxLines) {
    g.too_many = true;
    const std::string msg = "The lines view is for short sequences: " + groupDigits(lq) + " queries × " + groupDigits(lk) +
                            " keys × " + std::to_string(heads_shown) + " heads = " + groupDigits(lq * lk * heads_shown) +
                            " lines (limit " + groupDigits(kMaxLines) + "). Use the heatmap view, or hide heads.";
    const std::vector<std::string> lines = wrapLines(c, msg, px, body.w * 0.9f);
    const float lh = px * 1.3f, top = body.y + std::max(0.0f, (body.h - lh * static_cast<float>(lines.size())) * 0.5f);
    for (size_t k = 0; k < lines.size(); ++k)
      addText(out, body.x + body.w * 0.5f, top + lh * static_cast<float>(k), lines[k], px, Role::Muted, 0.5f, 0.0f);
    return g;
  }
  // Rows are spaced evenly (a short sequence spreads over the height, up to
  // 5 lines a row); when they get closer than a text line only every k-th
  // label is written, but every token keeps its lines.
  const float top = body.y + line * 1.8f, height = std::max(line, body.h - line * 2.2f);
  g.sq = std::min(line * 5.0f, height / static_cast<float>(lq));
  g.sk = std::min(line * 5.0f, height / static_cast<float>(lk));
  g.y0q = top + (height - g.sq * static_cast<float>(lq)) * 0.5f;
  g.y0k = top + (height - g.sk * static_cast<float>(lk)) * 0.5f;
  // Tokens are written larger when their rows are far apart (up to 1.6×, for
  // a projector), smaller (down to half) where long tokens would take more
  // than 30 % of the width a side: the lines take all the width the labels leave.
  g.label_px = std::clamp(std::min(g.sq, g.sk) * 0.4f, px, px * 1.6f);
  auto widestAt = [&](float size) {
    float w = c.textWidth("queries", px);
    for (int64_t i = 0; i < lq; ++i) w = std::max(w, c.textWidth(tokenAt(r.q_tokens, i), size));
    for (int64_t j = 0; j < lk; ++j) w = std::max(w, c.textWidth(tokenAt(r.k_tokens, j), size));
    return w;
  };
  float widest = widestAt(g.label_px);
  if (widest > body.w * 0.3f) {
    g.label_px = std::max(px * 0.5f, g.label_px * body.w * 0.3f / widest);
    widest = widestAt(g.label_px);
  }
  const float mid = body.x + body.w * 0.5f, gap = std::max(line * 4.0f, body.w - 2.0f * (widest + line * 1.5f));
  g.xq = mid - gap * 0.5f;
  g.xk = mid + gap * 0.5f;
  auto yq = [&](int64_t i) { return g.y0q + g.sq * (static_cast<float>(i) + 0.5f); };
  auto yk = [&](int64_t j) { return g.y0k + g.sk * (static_cast<float>(j) + 0.5f); };
  addText(out, g.xq, body.y + line * 0.2f, "queries", px, Role::Muted, 1.0f, 0.0f);
  addText(out, g.xk, body.y + line * 0.2f, "keys", px, Role::Muted, 0.0f, 0.0f);

  // Opacity is |w| / max |w| over the result (its precomputed stats). The
  // faintest lines are drawn first, so a head's strong lines stay on top of
  // the other heads' faint ones.
  const float thick = std::clamp(std::min(g.sq, g.sk) * 0.18f, c.unit * 0.07f, c.unit * 0.2f);
  struct Link {
    float alpha;
    int head;
    int64_t i, j;
  };
  std::vector<Link> links;
  for (int h = 0; h < r.heads(); ++h) {
    if (!shown(h)) continue;
    const Mat& w = r.weights[static_cast<size_t>(h)];
    for (int64_t i = 0; i < lq; ++i) {
      if (hover_q >= 0 && i != hover_q) continue;
      for (int64_t j = 0; j < lk; ++j) {
        if (hover_k >= 0 && j != hover_k) continue;
        const float a = lineOpacity(w(i, j), r.weights_stats);
        if (a > 0.02f) links.push_back({a, h, i, j});  // fainter: invisible; keeps vector files small
      }
    }
  }
  std::stable_sort(links.begin(), links.end(), [](const Link& a, const Link& b) { return a.alpha < b.alpha; });
  for (const Link& k : links) {  // each line a mark: head h's weight of query i on key j
    Primitive& l = addLine(out, g.xq + line * 0.3f, yq(k.i), g.xk - line * 0.3f, yk(k.j), headColor(k.head), thick);
    l.alpha = k.alpha;
    l.mark = "h" + std::to_string(k.head) + "[" + std::to_string(k.i) + "\xE2\x86\x92" + std::to_string(k.j) + "]";
    l.mark_value = r.weights[static_cast<size_t>(k.head)](k.i, k.j);
  }
  // Labels, thinned when rows are denser than the text; the hovered one on a plate.
  const int64_t step_q = labelStride(g.sq, g.label_px * 1.1f), step_k = labelStride(g.sk, g.label_px * 1.1f);
  auto label = [&](const std::string& s, float x, float y, float align_x, bool hovered, bool dim) {
    if (hovered) {
      const float w = c.textWidth(s, g.label_px), left = x - align_x * w, pad = g.label_px * 0.25f;
      addFill(out, left - pad, y - g.label_px * 0.7f, left + w + pad, y + g.label_px * 0.7f, Role::Accent, 0.35f);
    }
    addText(out, x, y, s, g.label_px, dim ? Role::Muted : Role::Text, align_x, 0.5f);
  };
  for (int64_t i = 0; i < lq; ++i)
    if (i % step_q == 0 || i == hover_q) label(tokenAt(r.q_tokens, i), g.xq, yq(i), 1.0f, i == hover_q, hover_k >= 0);
  for (int64_t j = 0; j < lk; ++j)
    if (j % step_k == 0 || j == hover_k) label(tokenAt(r.k_tokens, j), g.xk, yk(j), 0.0f, j == hover_k, hover_q >= 0);
  return g;
}

// [SECTION] Image view

int64_t imageWidth(const Result& r) {
  if (r.image_width > 0) return r.image_width;
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(r.keys())))));
}

int64_t defaultImageQuery(const Result& r) {
  const int64_t lq = r.queries();
  if (lq <= 0) return 0;
  const int64_t w = imageWidth(r), full_rows = lq / w;
  const int64_t centre = full_rows == 0 ? lq / 2 : (full_rows / 2) * w + w / 2;
  const Extra* g = r.firstExtra(ExtraKind::QueryGroup);
  if (!g || centre >= g->value.size()) return centre;
  std::vector<int64_t> block;
  for (int64_t i = 0; i < std::min(lq, g->value.size()); ++i)
    if (g->value.data[static_cast<size_t>(i)] == g->value.data[static_cast<size_t>(centre)]) block.push_back(i);
  return block[block.size() / 2];
}

int64_t ImageViewLayout::pixelAt(float x, float y) const {
  if (x < image.x || y < image.y || x >= image.right() || y >= image.bottom()) return -1;
  const auto px = static_cast<int64_t>((x - image.x) / image.w * static_cast<float>(width));
  const auto py = static_cast<int64_t>((y - image.y) / image.h * static_cast<float>(height));
  const int64_t i = std::min(py, height - 1) * width + std::min(px, width - 1);
  return i < rows ? i : -1;
}
int64_t ImageViewLayout::rowAt(float x, float y) const {
  if (x < matrix.x || y < matrix.y || x >= matrix.right() || y >= matrix.bottom() || rows <= 0) return -1;
  return std::clamp<int64_t>(static_cast<int64_t>((y - matrix.y) / matrix.h * static_cast<float>(rows)), 0, rows - 1);
}
int64_t ImageViewLayout::colAt(float x) const {
  return std::clamp<int64_t>(static_cast<int64_t>((x - matrix.x) / matrix.w * static_cast<float>(cols)), 0, std::max<int64_t>(cols - 1, 0));
}

ImageViewLayout imageViewPrimitives(Primitives& out, const Canvas& c, const Box& area, const SparseRows& s,
                                    const std::vector<std::string>& set_names, int64_t image_width, int64_t q,
                                    const Extra* groups, const std::string& key) {
  ImageViewLayout g;
  const int64_t lq = s.rows, lk = s.cols, w = std::max<int64_t>(1, image_width), h = (std::max(lq, lk) + w - 1) / w;
  g.width = w;
  g.height = std::max<int64_t>(h, 1);
  g.rows = lq;
  g.cols = lk;
  if (lq <= 0 || lk <= 0 || q < 0 || q >= lq) return g;
  if (groups && groups->value.size() != lq) groups = nullptr;
  const Rgb8 base = patternBackground(c.dark);                                 // a position of the sequence
  const Rgb8 shade = c.dark ? Rgb8{105, 105, 115} : Rgb8{178, 178, 188};       // memory of the query's block

  // The legend names each set with the query's keys in it.
  const size_t n_sets = std::max<size_t>(1, set_names.size());
  std::vector<int64_t> per_set(n_sets, 0);
  bool several = false;
  for (int64_t e = s.rowBegin(q); e < s.rowEnd(q); ++e) {
    const unsigned bits = s.sets.empty() ? 1u : s.sets[static_cast<size_t>(e)];
    several = several || (bits & (bits - 1)) != 0;
    for (size_t b = 0; b < n_sets; ++b) per_set[b] += bits >> b & 1;
  }
  std::vector<LegendEntry> legend;
  for (size_t b = 0; b < n_sets; ++b)
    legend.push_back({setColor(1u << b), (set_names.empty() ? std::string("attended key") : set_names[b]) + " (" +
                                             groupDigits(per_set[b]) + ")"});
  if (several) legend.push_back({setColor(3), n_sets == 2 ? "both" : "several"});
  if (groups) {
    legend.push_back({shade, "keys of the block's other queries"});
    legend.push_back({textColour(c), "the query's block", true});
  }
  legend.push_back({kQueryMark, "query " + groupDigits(q), true});
  Primitives none;
  const float legend_h = legendPrimitives(none, c, Box{area.x, 0, area.w, 0}, legend, false, false);

  // Two panels under their titles, side by side or (a wide, short image) the image over the connectivity,
  // whichever draws both larger; the image keeps square pixels, the connectivity fills its panel (cells up to 1.6:1).
  const float gap = c.unit * 2;
  std::string image_title = std::to_string(w) + " × " + std::to_string(h) + " image: query " + groupDigits(q) + " (row " +
                            std::to_string(q / w) + ", column " + std::to_string(q % w) + ")";
  if (groups) image_title += " in block " + formatValueShort(groups->value.data[static_cast<size_t>(q)]);
  const std::string matrix_title = "connectivity " + groupDigits(lq) + " × " + groupDigits(lk) + ": " + groupDigits(s.nnz()) +
                                   " connections";
  const AxesMargins image_m = cellAxesMargins(c, g.height, true), matrix_m = cellAxesMargins(c, lq, true);
  const float marker = c.unit * 1.1f;  // the query row's arrow right of the matrix
  const auto imageIn = [&](float x0, float y0, float room_w, float room_h) {
    const float px = std::max(0.1f, std::min((room_w - image_m.left) / static_cast<float>(w), room_h / static_cast<float>(g.height)));
    return Box{x0 + image_m.left + std::max(0.0f, (room_w - image_m.left - px * static_cast<float>(w)) * 0.5f), y0,
               px * static_cast<float>(w), px * static_cast<float>(g.height)};
  };
  const auto matrixIn = [&](float x0, float y0, float room_w, float room_h) {
    constexpr float kMaxAspect = 1.6f;
    const float matrix_w = room_w - matrix_m.left - marker;
    float cw = matrix_w / static_cast<float>(lk), ch = std::max(c.unit, room_h) / static_cast<float>(lq);
    cw = std::min(cw, ch * kMaxAspect);
    ch = std::min(ch, cw * kMaxAspect);
    return Box{x0 + matrix_m.left + std::max(0.0f, (matrix_w - cw * static_cast<float>(lk)) * 0.5f), y0,
               cw * static_cast<float>(lk), ch * static_cast<float>(lq)};
  };
  const float panel_w = (area.w - gap) * 0.5f;
  const float side_title = std::max(panelTitle(none, c, image_title, 0, 0, panel_w, false),
                                    panelTitle(none, c, matrix_title, 0, 0, panel_w, false));
  const float side_h = std::max(c.unit, area.h - side_title - legend_h - std::max(image_m.bottom, matrix_m.bottom) - c.unit * 0.5f);
  g.image = imageIn(area.x, area.y + side_title, panel_w, side_h);
  g.matrix = matrixIn(area.x + panel_w + gap, area.y + side_title, panel_w, side_h);
  Box image_title_at{area.x, area.y, panel_w, 0}, matrix_title_at{area.x + panel_w + gap, area.y, panel_w, 0};
  {
    const float image_title_h = panelTitle(none, c, image_title, 0, 0, area.w, false);
    const float matrix_title_h = panelTitle(none, c, matrix_title, 0, 0, area.w, false);
    const float room = area.h - image_title_h - matrix_title_h - image_m.bottom - matrix_m.bottom - legend_h - c.unit;
    const Box image = imageIn(area.x, area.y + image_title_h, area.w, room * 0.35f);
    const float matrix_title_y = image.bottom() + image_m.bottom + c.unit * 0.5f;
    const Box matrix = matrixIn(area.x, matrix_title_y + matrix_title_h, area.w, room - image.h);
    const auto drawn = [](const Box& a, const Box& b) { return a.w * a.h + b.w * b.h; };
    if (drawn(image, matrix) > drawn(g.image, g.matrix)) {
      g.image = image;
      g.matrix = matrix;
      image_title_at = {area.x, area.y, area.w, 0};
      matrix_title_at = {area.x, matrix_title_y, area.w, 0};
    }
  }
  const float px = g.image.w / static_cast<float>(w);

  // [image] Sequence positions, the block's memory, the query's keys by set; past the end: nothing.
  auto raster = std::make_shared<Raster>();
  raster->rows = g.height;
  raster->cols = w;
  raster->pixels.assign(static_cast<size_t>(w * g.height), 0u);
  std::fill(raster->pixels.begin(), raster->pixels.begin() + std::min(lk, w * g.height), packRgba(base));
  std::vector<int64_t> block;
  if (groups) {
    const float id = groups->value.data[static_cast<size_t>(q)];
    for (int64_t i = 0; i < lq; ++i)
      if (groups->value.data[static_cast<size_t>(i)] == id) block.push_back(i);
    for (const int64_t i : block)
      for (int64_t e = s.rowBegin(i); e < s.rowEnd(i); ++e) raster->pixels[static_cast<size_t>(s.indices[static_cast<size_t>(e)])] = packRgba(shade);
  }
  for (int64_t e = s.rowBegin(q); e < s.rowEnd(q); ++e)
    raster->pixels[static_cast<size_t>(s.indices[static_cast<size_t>(e)])] =
        packRgba(setColor(s.sets.empty() ? 1u : s.sets[static_cast<size_t>(e)]));
  raster->key = key + "/image";
  raster->version = std::to_string(reinterpret_cast<uintptr_t>(&s)) + ":" + std::to_string(q) + ":" + std::to_string(w) +
                    (groups ? "g" : "") + (c.dark ? "d" : "l");
  Primitive& image = addRect(out, g.image.x, g.image.y, g.image.right(), g.image.bottom(), Role::Frame);
  image.kind = Primitive::Kind::Raster;
  image.raster = std::move(raster);
  auto X = [&](int64_t x) { return g.image.x + static_cast<float>(x) * px; };
  auto Y = [&](int64_t y) { return g.image.y + static_cast<float>(y) * px; };
  if (px >= c.unit * 0.45f) {  // the pixel grid, where pixels are big enough to count
    const Rgb8 grid = c.dark ? Rgb8{0, 0, 0} : Rgb8{255, 255, 255};
    for (int64_t x = 1; x < w; ++x) addLine(out, X(x), g.image.y, X(x), g.image.bottom(), grid).alpha = 0.5f;
    for (int64_t y = 1; y < g.height; ++y) addLine(out, g.image.x, Y(y), g.image.right(), Y(y), grid).alpha = 0.5f;
  }
  addRect(out, g.image.x, g.image.y, g.image.right(), g.image.bottom(), Role::Frame);
  const float thick = std::max(1.5f, c.unit * 0.2f);
  if (!block.empty()) {
    // The block's outline: every pixel edge between a member and a non-member.
    std::vector<uint8_t> in_block(static_cast<size_t>(w * g.height), 0);
    for (const int64_t i : block) in_block[static_cast<size_t>(i)] = 1;
    auto inside = [&](int64_t x, int64_t y) { return x >= 0 && x < w && y >= 0 && y < g.height && in_block[static_cast<size_t>(y * w + x)]; };
    for (const int64_t i : block) {
      const int64_t x = i % w, y = i / w;
      if (!inside(x, y - 1)) addLine(out, X(x), Y(y), X(x + 1), Y(y), Role::Text, thick);
      if (!inside(x, y + 1)) addLine(out, X(x), Y(y + 1), X(x + 1), Y(y + 1), Role::Text, thick);
      if (!inside(x - 1, y)) addLine(out, X(x), Y(y), X(x), Y(y + 1), Role::Text, thick);
      if (!inside(x + 1, y)) addLine(out, X(x + 1), Y(y), X(x + 1), Y(y + 1), Role::Text, thick);
    }
  }
  // The query: a frame just outside its pixel (the pixel keeps its set's
  // colour), at least a text line wide so it shows on a fine image.
  const float qx = X(q % w) + px * 0.5f, qy = Y(q / w) + px * 0.5f, half = std::max(px * 0.5f + thick, c.unit * 0.6f);
  addRect(out, qx - half, qy - half, qx + half, qy + half, Role::Text, thick).colour = kQueryMark;
  cellAxesPrimitives(out, c, g.image, g.height, w, "row", "column");
  panelTitle(out, c, image_title, image_title_at.x, image_title_at.y, image_title_at.w);

  // [connectivity] Pooled at the device's resolution by the backend (rasterize(), sets ORed).
  auto sets = std::make_shared<Raster>();
  sets->sparse = &s;
  sets->sets = true;
  sets->rows = lq;
  sets->cols = lk;
  sets->key = key + "/sets";
  Primitive& matrix = addRect(out, g.matrix.x, g.matrix.y, g.matrix.right(), g.matrix.bottom(), Role::Frame);
  matrix.kind = Primitive::Kind::Raster;
  matrix.raster = std::move(sets);
  addRect(out, g.matrix.x, g.matrix.y, g.matrix.right(), g.matrix.bottom(), Role::Frame);
  const float row_y = g.matrix.y + (static_cast<float>(q) + 0.5f) * g.matrix.h / static_cast<float>(lq);
  addLine(out, g.matrix.x, row_y, g.matrix.right(), row_y, kQueryMark, std::max(1.0f, c.unit * 0.1f)).alpha = 0.6f;
  const float t = c.unit * 0.45f, tx = g.matrix.right() + c.unit * 0.15f;
  Primitive& arrow = addFill(out, 0, 0, 0, 0, kQueryMark);
  arrow.kind = Primitive::Kind::Polygon;
  arrow.points = {tx, row_y, tx + 1.6f * t, row_y - t, tx + 1.6f * t, row_y + t};
  cellAxesPrimitives(out, c, g.matrix, lq, lk, "query", "key");
  panelTitle(out, c, matrix_title, matrix_title_at.x, matrix_title_at.y, matrix_title_at.w);

  const float legend_top = std::max(g.image.bottom() + image_m.bottom, g.matrix.bottom() + matrix_m.bottom) + c.unit * 0.3f;
  legendPrimitives(out, c, Box{area.x, legend_top, area.w, 0}, legend, false);
  return g;
}

// [SECTION] Picture view

int64_t PictureViewLayout::pixelAt(float x, float y, int* panel) const {
  auto under = [&](const Box& b) -> int64_t {
    if (b.w <= 0 || b.h <= 0 || x < b.x || y < b.y || x >= b.right() || y >= b.bottom()) return -1;
    const int64_t px = std::min<int64_t>(static_cast<int64_t>((x - b.x) / b.w * static_cast<float>(width)), width - 1);
    const int64_t py = std::min<int64_t>(static_cast<int64_t>((y - b.y) / b.h * static_cast<float>(height)), height - 1);
    return py * width + px;
  };
  if (panel) *panel = -1;
  if (const int64_t p = under(image); p >= 0) return p;
  for (size_t k = 0; k < maps.size(); ++k)
    if (const int64_t p = under(maps[k]); p >= 0) {
      if (panel) *panel = static_cast<int>(k);
      return p;
    }
  return -1;
}

PictureViewLayout pictureViewPrimitives(Primitives& out, const Canvas& c, const Box& area, const Array& picture,
                                        const Mat& weights, int64_t key_width, const std::vector<int64_t>& queries,
                                        int active, const std::string& key) {
  PictureViewLayout g;
  if (picture.rank() != 3 || picture.shape[2] != 3 || picture.shape[0] <= 0 || picture.shape[1] <= 0) return g;
  const int64_t h = picture.shape[0], w = picture.shape[1], n = h * w;
  g.width = w;
  g.height = h;
  if (weights.rows() != n || weights.cols() <= 0) return g;
  const int64_t kw = key_width > 0 ? key_width : w, kh = (weights.cols() + kw - 1) / kw;
  const int nq = static_cast<int>(queries.size());
  auto rgb = [&](int64_t p, int k) { return picture.data[static_cast<size_t>(p * 3 + k)]; };
  auto byte = [](float v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)); };
  // A map's title: "query 1 (11, 9): max weight 0.0126", or only "1 (11,9)" (no space to break the pixel
  // apart at) where that would take over two lines.
  auto mapTitle = [&](int k, int64_t q, float top, float width = 0) {
    const std::string row = std::to_string(q / w), col = std::to_string(q % w);
    const std::string full = "query " + std::to_string(k + 1) + " (" + row + ", " + col + "): max weight " + printf1("%.3g", top);
    return width <= 0 || c.textWidth(full, c.unit, true) <= 1.6f * width ? full
                                                                          : std::to_string(k + 1) + " (" + row + "," + col + ")";
  };

  // The picture left and the maps in a grid right of it, the picture on top
  // (centred over them) and the maps under it, or the picture as the first
  // cell of the maps' grid; one colour bar at the far right. Of the
  // picture's shares of the width or height tried, the one that covers the
  // most of the area with pixels, counting a map only up to the picture's
  // scale (the picture stays the anchor) and the picture only up to 2.5 times a
  // map's (the maps are what the view is for).
  Primitives none;
  const float gap = c.unit * 1.5f, bar_w = c.unit * 0.9f, bar_space = bar_w + c.unit * 5.0f;
  const std::string image_title = std::to_string(w) + " × " + std::to_string(h) + " image, " + std::to_string(nq) +
                                  " query pixels (row, column)";
  const float aspect_h = static_cast<float>(h), aspect_w = static_cast<float>(w);
  const std::string longest = mapTitle(nq - 1, n - 1, 0.0001234f);
  float image_title_w = 0, image_title_h = 0, image_x = area.x, maps_x = 0, maps_y = 0, map_title_h = 0, map_px = 0,
        image_px = 0, best = -1;
  GridLayout grid;
  int first_cell = 0;  // the maps' first cell in the grid: 1 where the picture takes the first
  const auto consider = [&](float ipx, float mpx, float ith, float mth, float sw, float ix, float mx, float my, const GridLayout& gl,
                            int first) {
    const float map_counted = std::min(mpx, ipx), image_counted = std::min(ipx, 2.5f * mpx);
    const float score = image_counted * image_counted + static_cast<float>(nq) * map_counted * map_counted;
    if (score <= best) return;
    best = score;
    image_title_w = sw, image_title_h = ith, maps_x = mx, maps_y = my, map_title_h = mth, map_px = mpx, image_px = ipx, grid = gl;
    image_x = ix;
    first_cell = first;
  };
  {
    const float gw = area.w - bar_space;
    const float mth0 = panelTitle(none, c, longest, 0, 0, gw / 3 - gap, false) + gap;
    const GridLayout first = bestGrid(nq + 1, gw, area.h, gap, mth0);
    const float th = std::max(panelTitle(none, c, image_title, 0, 0, first.cell_w - gap, false),
                              panelTitle(none, c, mapTitle(nq - 1, n - 1, 0.0001234f, first.cell_w - gap), 0, 0, first.cell_w - gap, false));
    const GridLayout gl = bestGrid(nq + 1, gw, area.h, gap, th + gap);
    const float px = std::max(0.1f, std::min((gl.cell_w - gap) / aspect_w, (gl.cell_h - th - gap) / aspect_h));
    consider(px, px, th, th, gl.cell_w - gap, area.x, area.x, area.y, gl, 1);
  }
  for (int stacked = 0; stacked < 2; ++stacked)
    for (const float share : {0.25f, 0.3f, 0.35f, 0.4f, 0.45f, 0.5f, 0.55f}) {
      // The picture's box (under its title) and the maps' area.
      const float sw = stacked ? area.w - bar_space : std::min(area.w * share, area.h * aspect_w / aspect_h);
      const float ith = panelTitle(none, c, image_title, 0, 0, sw, false);
      const float sh = stacked ? area.h * share - ith : area.h - ith;
      const float ipx = std::max(0.1f, std::min(sw / aspect_w, sh / aspect_h));
      const float mx = stacked ? area.x : area.x + sw + gap, my = stacked ? area.y + ith + ipx * aspect_h + gap : area.y;
      const float mw = std::max(c.unit, stacked ? area.w - bar_space : area.w - sw - gap - bar_space);
      const float mh = std::max(c.unit, area.bottom() - my);
      // The maps' titles wrap to their cells: sized at two columns, then at the grid's.
      const GridLayout first = bestGrid(std::max(1, nq), mw, mh, gap, panelTitle(none, c, longest, 0, 0, mw / 2 - gap, false) + gap);
      const float mth = panelTitle(none, c, mapTitle(nq - 1, n - 1, 0.0001234f, first.cell_w - gap), 0, 0, first.cell_w - gap, false);
      const GridLayout gl = bestGrid(std::max(1, nq), mw, mh, gap, mth + gap);
      const float mpx = std::max(0.1f, std::min((gl.cell_w - gap) / aspect_w, (gl.cell_h - mth - gap) / aspect_h));
      consider(ipx, mpx, ith, mth, sw, stacked ? area.x + std::max(0.0f, (sw - ipx * aspect_w) / 2) : area.x, mx, my, gl, 0);
    }
  const float cell_w = grid.cell_w - gap;
  // The maps' rows one under the other, no taller than a map and its title.
  const float row_pitch = std::min(grid.cell_h, map_title_h + map_px * aspect_h + gap);

  // [picture] As it is, the queries marked in their colours and numbered.
  g.image = {image_x, area.y + image_title_h, image_px * static_cast<float>(w), image_px * static_cast<float>(h)};
  auto pic = std::make_shared<Raster>();
  pic->rows = h;
  pic->cols = w;
  pic->pixels.resize(static_cast<size_t>(n));
  for (int64_t p = 0; p < n; ++p) pic->pixels[static_cast<size_t>(p)] = packRgba({byte(rgb(p, 0)), byte(rgb(p, 1)), byte(rgb(p, 2))});
  pic->key = key + "/picture";
  pic->version = std::to_string(reinterpret_cast<uintptr_t>(picture.data.data())) + ":" + std::to_string(n);
  Primitive& image = addRect(out, g.image.x, g.image.y, g.image.right(), g.image.bottom(), Role::Frame);
  image.kind = Primitive::Kind::Raster;
  image.raster = std::move(pic);
  addRect(out, g.image.x, g.image.y, g.image.right(), g.image.bottom(), Role::Frame);
  panelTitle(out, c, image_title, area.x, area.y, image_title_w);
  const float thick = std::max(1.0f, c.unit * 0.12f);
  auto mark = [&](const Box& b, float px, int64_t q, Rgb8 colour, bool selected, const std::string& label) {
    const float cx = b.x + (static_cast<float>(q % w) + 0.5f) * px, cy = b.y + (static_cast<float>(q / w) + 0.5f) * px;
    const float half = std::max(px * 0.5f + thick, c.unit * 0.35f), t = selected ? thick * 2 : thick;
    addRect(out, cx - half - t, cy - half - t, cx + half + t, cy + half + t, Role::Frame, t).colour = Rgb8{255, 255, 255};
    addRect(out, cx - half, cy - half, cx + half, cy + half, Role::Text, t).colour = colour;
    if (!label.empty()) addText(out, cx + half + t * 2, cy - half - labelPx(c) * 0.2f, label, labelPx(c) * 1.2f).colour = colour;
  };
  for (int k = 0; k < nq; ++k)
    if (queries[static_cast<size_t>(k)] >= 0 && queries[static_cast<size_t>(k)] < n)
      mark(g.image, image_px, queries[static_cast<size_t>(k)], headColor(k), k == active, std::to_string(k + 1));

  // [maps] Query k's weights over the grey picture: a key cell colours the pixels it covers.
  for (int k = 0; k < nq; ++k) {
    const int64_t q = std::clamp<int64_t>(queries[static_cast<size_t>(k)], 0, n - 1);
    const float cx = maps_x + static_cast<float>((k + first_cell) % grid.cols) * grid.cell_w;
    const float cy = maps_y + static_cast<float>((k + first_cell) / grid.cols) * row_pitch;
    const Box b{cx, cy + map_title_h, map_px * static_cast<float>(w), map_px * static_cast<float>(h)};
    g.maps.push_back(b);
    const float top = weights.row(q).maxCoeff();
    auto map = std::make_shared<Raster>();
    map->rows = h;
    map->cols = w;
    map->pixels.resize(static_cast<size_t>(n));
    for (int64_t p = 0; p < n; ++p) {
      const int64_t cell = (p / w) * kh / h * kw + (p % w) * kw / w;
      const float t = top > 0 ? weights(q, std::min<int64_t>(cell, weights.cols() - 1)) / top : 0.0f;
      map->pixels[static_cast<size_t>(p)] = heatOverPicture(rgb(p, 0), rgb(p, 1), rgb(p, 2), t, c.cmap);
    }
    map->key = key + "/map" + std::to_string(k);
    map->version = std::to_string(reinterpret_cast<uintptr_t>(&weights)) + ":" + std::to_string(q) + ":" +
                   std::to_string(static_cast<int>(c.cmap));
    Primitive& m = addRect(out, b.x, b.y, b.right(), b.bottom(), Role::Frame);
    m.kind = Primitive::Kind::Raster;
    m.raster = std::move(map);
    addRect(out, b.x, b.y, b.right(), b.bottom(), Role::Text, k == active ? thick * 2 : thick).colour = headColor(k);
    mark(b, map_px, q, headColor(k), k == active, "");
    panelTitle(out, c, mapTitle(k, q, top, std::max(cell_w, b.w)), cx, cy, std::max(cell_w, b.w));
  }
  if (nq > 0) {  // beside the maps, from the first's top to the last's bottom
    const float bar_top = g.maps.front().y, bar_h = std::max(c.unit * 4, g.maps.back().bottom() - bar_top);
    colorbarPrimitives(out, area.right() - bar_space + c.unit * 0.8f, bar_top, bar_w, bar_h, c.cmap, ValueRange{0, 1},
                       "weight ÷ the map's largest", labelPx(c), c.measure(labelPx(c)));
  }
  return g;
}

// [SECTION] Walkthrough

WalkthroughLayout walkthroughPrimitives(Primitives& out, const Canvas& c, const Box& area, const Result& r,
                                        const ValueRange& range, Colormap cmap) {
  WalkthroughLayout g;
  for (const Extra& e : r.extras) {
    if (e.kind == ExtraKind::Points) g.picture_extras.push_back(&e);
    if (e.kind == ExtraKind::CategoryValues || e.kind == ExtraKind::TokenCategories) g.other_extras.push_back(&e);
  }
  const int n = static_cast<int>(r.stages.size());
  if (n == 0) return g;
  const float px = labelPx(c), line = px * 1.3f, gap = c.unit * 0.8f, bar_space = c.unit * 6.5f;
  // The extras beside the stages where the area is wide (68 % for the
  // stages), else under them (64 % above).
  const bool side = !g.picture_extras.empty() || !g.other_extras.empty();
  const bool wide = area.w >= area.h * 1.2f;
  const Box grid_area = !side ? area : wide ? Box{area.x, area.y, area.w * 0.68f, area.h} : Box{area.x, area.y, area.w, area.h * 0.64f};
  const GridLayout grid = bestGrid(n, grid_area.w - bar_space, grid_area.h, 0, line * 2.5f);
  // Titles and captions wrap inside their panel; the matrices start under
  // the tallest header, so the stages line up.
  const float text_w = grid.cell_w - gap;
  float header_h = 0, titles_h = 0;
  for (const Stage& st : r.stages) {
    const float title_h = panelTitle(out, c, st.title, 0, 0, text_w, false);
    titles_h = std::max(titles_h, title_h);
    header_h = std::max(header_h, title_h + formulaHeight(c, st.caption, px, text_w));
  }
  // Where the captions would leave the matrices under 12 units, the titles alone head them (the
  // captions are the stages' tooltips' and the figure's at a larger size).
  const bool captions = grid.cell_h - header_h - gap >= c.unit * 12;
  header_h = (captions ? header_h : titles_h) + gap * 0.5f;
  float matrices_top = area.y + area.h, matrices_bottom = area.y;
  for (int i = 0; i < n; ++i) {
    const Stage& st = r.stages[static_cast<size_t>(i)];
    const float x = grid_area.x + grid.cell_w * static_cast<float>(i % grid.cols);
    const float y = grid_area.y + grid.cell_h * static_cast<float>(i / grid.cols);
    const float title_h = panelTitle(out, c, st.title, x, y, text_w);
    if (captions) addFormula(out, c, st.caption, x, y + title_h, px, text_w, Role::Muted);
    const Box panel{x, y + header_h, text_w, grid.cell_h - header_h - gap};
    g.stages.push_back(panel);
    matrices_top = std::min(matrices_top, panel.y);
    matrices_bottom = std::max(matrices_bottom, panel.bottom());
  }
  // One colour bar for every stage, right of the grid.
  const float bar_x = grid_area.x + grid.cell_w * static_cast<float>(grid.cols) + c.unit * 0.5f;
  colorbarPrimitives(out, bar_x, matrices_top + line, c.unit * 0.8f, std::max(line, matrices_bottom - matrices_top - line * 3), cmap,
                     range, r.weights_label, px, c.measure(px));
  if (!side) return g;
  // The extras' box, beside or under the grid: the pictures in a grid on its
  // upper half, then the token strips (the rows their tokens need) and the
  // bars (the rest).
  const size_t np = g.picture_extras.size(), no = g.other_extras.size();
  const Box box = wide ? Box{grid_area.right() + gap, area.y, area.right() - grid_area.right() - gap, area.h}
                       : Box{area.x, grid_area.bottom() + gap, area.w, area.bottom() - grid_area.bottom() - gap};
  float y = box.y;
  if (np > 0) {
    const float pictures_h = no == 0 ? box.h : box.h * 0.5f;
    const GridLayout pg = bestGrid(static_cast<int>(np), box.w, pictures_h, 0, line);
    for (size_t k = 0; k < np; ++k)
      g.pictures.push_back({box.x + pg.cell_w * static_cast<float>(k % static_cast<size_t>(pg.cols)),
                            y + pg.cell_h * static_cast<float>(k / static_cast<size_t>(pg.cols)), pg.cell_w - gap, pg.cell_h - gap});
    y += pictures_h;
  }
  const float rest_h = box.bottom() - y, strip_h = std::min(rest_h / 3.0f, line * 5.0f);
  const auto strips = static_cast<size_t>(std::count_if(g.other_extras.begin(), g.other_extras.end(),
                                                        [](const Extra* e) { return e->kind == ExtraKind::TokenCategories; }));
  const size_t bars = no - strips;
  const float bars_h = bars ? (rest_h - strip_h * static_cast<float>(strips)) / static_cast<float>(bars) : 0.0f;
  for (const Extra* e : g.other_extras) {
    const float each = e->kind == ExtraKind::TokenCategories ? (bars ? strip_h : rest_h / static_cast<float>(strips)) : bars_h;
    g.others.push_back({box.x, y, box.w, each - gap});
    y += each;
  }
  return g;
}

// [SECTION] Compare

const std::vector<std::string>& comparisonNotes() {
  static const std::vector<std::string> notes = {
      "share of full attention's weight on the pattern's keys, mean over heads and queries",
      "∞ where full attention puts weight on a dropped key",
      "‖O_pattern − O_full‖ / ‖O_full‖",
      "attention alone: scores, softmax and the weighted sum (no projections)",
      "the weights held: dense [H, L, L] against the pattern's entries",
      "(query, key) pairs summed over heads",
  };
  return notes;
}

namespace {

// The numbers of a comparison as rows of (what, full attention, pattern).
std::vector<std::vector<std::string>> comparisonRows(const Comparison& c) {
  const int64_t pairs = static_cast<int64_t>(c.heads) * c.length;
  std::string kl = formatValueShort(c.kl_mean) + " nats";
  if (!std::isfinite(c.kl_mean))
    kl = "∞; finite for " + groupDigits(c.kl_finite) + " of " + groupDigits(pairs) + " pairs (mean " +
         formatValueShort(c.kl_finite_mean) + " nats)";
  return {
      {"", "full attention", "pattern"},
      {"mass kept", "100 %", printf1("%.2f %%", 100.0 * c.mass_kept_mean)},
      {"KL(full ‖ pattern)", "0", kl},
      {"output relative error", "0", printf1("%.3g", c.output_rel_error)},
      {"FLOPs", formatFlops(c.full_flops), formatFlops(c.pattern_flops) + printf1(" (%.3g× fewer)", c.full_flops / std::max(1.0, c.pattern_flops))},
      {"memory (weights held)", formatBytes(c.full_bytes),
       formatBytes(c.pattern_bytes) + printf1(" (%.3g× less)", c.full_bytes / std::max(1.0, c.pattern_bytes))},
      {"connections", groupDigits(c.full_connections),
       groupDigits(c.pattern_connections) +
           printf1(" (%.1f per query)", static_cast<double>(c.pattern_connections) / static_cast<double>(std::max<int64_t>(1, pairs)))},
  };
}

// A table of text in `width` from (x, y): columns as wide as their widest
// cell, the last one wrapped; set smaller (down to 0.6×) where the first two
// would leave the last less than 35 % of the width, or where the table would
// be taller than `max_h`. Returns each row's box.
// Column k of a text table at `px`: its widest entry (the body's values in
// bold) and the pad after it.
float textColumnWidth(const Canvas& c, const std::vector<std::vector<std::string>>& rows, size_t k, float px) {
  float w = 0;
  for (const auto& row : rows) w = std::max(w, c.textWidth(row[k], px, k > 0 && &row != &rows[0]));
  return w + c.unit * 0.8f;
}

// The width at which textTable keeps its full size and wraps nothing: each
// column as wide as its widest entry, the first two at most 65 % of it.
float textTableWidth(const Canvas& c, const std::vector<std::vector<std::string>>& rows) {
  const float px = labelPx(c), fixed = textColumnWidth(c, rows, 0, px) + textColumnWidth(c, rows, 1, px);
  return std::max(fixed + textColumnWidth(c, rows, 2, px), fixed / 0.65f + 1);
}

std::vector<Box> textTable(Primitives& out, const Canvas& c, float x, float y, float width, float max_h,
                           const std::vector<std::vector<std::string>>& rows) {
  const float pad = c.unit * 0.8f;
  auto columnWidth = [&](size_t k, float size) { return textColumnWidth(c, rows, k, size); };
  auto layout = [&](Primitives& o, float px) {
    const float w0 = columnWidth(0, px), w1 = columnWidth(1, px), w2 = std::max(px * 4, width - w0 - w1);
    const float line_h = px * 1.45f;
    std::vector<Box> boxes;
    float top = y;
    for (size_t r = 0; r < rows.size(); ++r) {
      const bool header = r == 0;
      const std::vector<std::string> last = wrapLines(c, rows[r][2], px, w2 - pad * 0.5f, !header);
      const float h = line_h * static_cast<float>(std::max<size_t>(1, last.size())) + px * 0.2f;
      if (r % 2 == 1) addFill(o, x, top, x + width, top + h, Role::Frame, 0.15f);
      const float ty = top + px * 0.1f + line_h * 0.5f;
      addText(o, x + pad * 0.25f, ty, rows[r][0], px, Role::Muted, 0, 0.5f);
      addText(o, x + w0, ty, rows[r][1], px, header ? Role::Muted : Role::Text, 0, 0.5f).bold = !header;
      for (size_t l = 0; l < last.size(); ++l)
        addText(o, x + w0 + w1, ty + line_h * static_cast<float>(l), last[l], px, header ? Role::Muted : Role::Text, 0, 0.5f).bold = !header;
      boxes.push_back({x, top, width, h});
      top += h;
    }
    return boxes;
  };
  const float full = labelPx(c);
  float px = full;
  const float fixed = columnWidth(0, px) + columnWidth(1, px);
  if (fixed > width * 0.65f) px *= std::max(0.6f, width * 0.65f / fixed);
  Primitives none;
  while (px > full * 0.6f && layout(none, px).back().bottom() - y > max_h) {
    px = std::max(full * 0.6f, px * 0.92f);
    none.clear();
  }
  return layout(out, px);
}

}  // namespace

float columnsTablePrimitives(Primitives& out, const Canvas& c, const Box& area, const std::vector<std::string>& columns,
                             const std::vector<std::vector<std::string>>& rows) {
  if (columns.empty()) return 0;
  const float row_h = std::min(c.unit * 1.8f, area.h / static_cast<float>(rows.size() + 1));
  const float n = static_cast<float>(columns.size());
  // The gaps between columns take at most 30 % of the width; the text shrinks
  // (in proportion: widths scale with the size) until the rest holds it.
  const float min_pad = std::min(row_h * 0.6f, area.w * 0.3f / n), room = area.w - min_pad * n;
  float px = row_h * 0.6f, total = 0;
  std::vector<float> width(columns.size(), 0.0f);
  // Measured again after each shrink (text does not scale exactly with its size) until the columns fit.
  for (int pass = 0; pass < 6; ++pass) {
    total = 0;
    for (size_t k = 0; k < columns.size(); ++k) {
      width[k] = c.textWidth(columns[k], px, true);
      for (const auto& row : rows) width[k] = std::max(width[k], c.textWidth(k < row.size() ? row[k] : std::string(), px, true));
      total += width[k];
    }
    if (total <= room || pass == 5) break;
    px *= room / total * 0.98f;
  }
  const float pad = std::max(min_pad, (area.w - total) / n);
  auto row = [&](float y, const std::vector<std::string>& cells, bool bold) {
    float x = area.x;
    for (size_t k = 0; k < cells.size() && k < width.size(); ++k) {
      addText(out, x + width[k] + pad * 0.8f, y + row_h * 0.5f, cells[k], px, Role::Text, 1.0f, 0.5f).bold = bold;
      x += width[k] + pad;
    }
  };
  row(area.y, columns, true);
  addLine(out, area.x, area.y + row_h, area.right(), area.y + row_h, Role::Frame);
  for (size_t i = 0; i < rows.size(); ++i) {
    const float y = area.y + row_h * static_cast<float>(i + 1);
    if (i % 2) addFill(out, area.x, y, area.right(), y + row_h, Role::Frame, 0.2f);
    row(y, rows[i], false);
  }
  return row_h * static_cast<float>(rows.size() + 1);
}

namespace {

// Per-query mass kept [H, L] as one strip per head under a title, with axes
// and a colour bar; more queries than device pixels keep the smallest share
// of each pixel's queries (a loss stays visible). Returns the strip's cells.
Box massStrip(Primitives& out, const Canvas& c, const Box& area, const Mat& kept, Colormap cmap) {
  const int64_t heads = kept.rows(), n = kept.cols();
  const float px = labelPx(c);
  float top = area.y;
  for (const std::string& l : wrapLines(c, "share of full attention's mass the pattern keeps, per query", px, area.w)) {
    addText(out, area.x, top, l, px, Role::Muted);
    top += px * 1.3f;
  }
  top += px * 0.3f;
  if (heads == 0 || n == 0) return {};
  const AxesMargins m = cellAxesMargins(c, heads, heads > 1);
  const float bar_w = c.unit * 4.5f;
  const float h = std::clamp(area.h - (top - area.y) - m.bottom, c.unit, std::max(c.unit, static_cast<float>(heads) * c.unit * 2.5f));
  const Box strip{area.x + m.left, top, std::max(c.unit, area.w - m.left - bar_w), h};
  const int64_t out_cols = std::clamp<int64_t>(static_cast<int64_t>(strip.w * c.raster_scale), 1, n);
  auto raster = std::make_shared<Raster>();
  raster->rows = heads;
  raster->cols = out_cols;
  raster->pixels.resize(static_cast<size_t>(heads * out_cols));
  for (int64_t hh = 0; hh < heads; ++hh)
    for (int64_t b = 0; b < out_cols; ++b) {
      const int64_t j0 = b * n / out_cols, j1 = std::max((b + 1) * n / out_cols, j0 + 1);
      raster->pixels[static_cast<size_t>(hh * out_cols + b)] = packRgba(colormapAt(cmap, kept.row(hh).segment(j0, j1 - j0).minCoeff()));
    }
  raster->key = "mass";
  raster->version = std::to_string(reinterpret_cast<uintptr_t>(kept.data())) + ":" + std::to_string(static_cast<int>(cmap));
  Primitive& p = addRect(out, strip.x, strip.y, strip.right(), strip.bottom(), Role::Frame);
  p.kind = Primitive::Kind::Raster;
  p.raster = std::move(raster);
  addRect(out, strip.x, strip.y, strip.right(), strip.bottom(), Role::Frame);
  cellAxesPrimitives(out, c, strip, heads, n, heads > 1 ? "head" : "",
                     out_cols < n ? "query (a pixel: its queries' smallest share)" : "query");
  colorbarPrimitives(out, strip.right() + c.unit * 0.6f, strip.y, c.unit * 0.7f, strip.h, cmap, {0.0f, 1.0f, false}, "", px,
                     c.measure(px));
  return strip;
}

}  // namespace

namespace {

// A matrix panel's overhead beside and under its cells (labels, colour bar,
// title), and what the numbers and the strip under a row of panels take; units.
constexpr float kPanelOverW = 9, kPanelOverH = 6, kNumbersH = 26;

float compareSide(int cols, float w, float h, float unit) {
  const float gap = unit, cell_w = (w - static_cast<float>(cols - 1) * gap) / static_cast<float>(cols);
  const float cell_h = cols == 1 ? (h - kNumbersH * unit - 3 * gap) / 3 : cols == 2 ? (h - gap) / 2 : h - kNumbersH * unit - gap;
  if (h > 0 && cols == 2 && cell_h < kNumbersH * unit) return 0;  // the fourth cell holds the numbers
  return std::min(cell_w - kPanelOverW * unit, h > 0 ? cell_h - kPanelOverH * unit : cell_w);
}

}  // namespace

int compareColumns(float w, float h, float unit) {
  if (h <= 0) {
    for (int cols = 3; cols > 1; --cols)
      if (compareSide(cols, w, 0, unit) >= 16 * unit) return cols;
    return 1;
  }
  int best = 3;
  for (int cols = 1; cols <= 3; ++cols)
    if (compareSide(cols, w, h, unit) > compareSide(best, w, h, unit)) best = cols;
  return best;
}

float compareHeight(float w, float unit) {
  const int cols = compareColumns(w, 0, unit);
  const float side = compareSide(cols, w, 0, unit) + kPanelOverH * unit;
  return cols == 1 ? 3 * side + (kNumbersH + 3) * unit : cols == 2 ? 2 * std::max(side, kNumbersH * unit) + unit : side + (kNumbersH + 1) * unit;
}

CompareLayout comparePrimitives(Primitives& out, const Canvas& c, const Box& area, const Comparison& cmp, Colormap cmap) {
  CompareLayout g;
  const float gap = c.unit, px = labelPx(c);
  const std::vector<std::vector<std::string>> rows = comparisonRows(cmp);
  Box numbers = area;
  const char* titles[] = {"full attention", "pattern", "pattern − full"};
  // On screen, in a row of three, the table and the strip sit side by side under the matrices where the
  // table keeps its natural width (textTableWidth) and the strip 20 units: the matrices get the height the
  // strip would have taken. (A figure's height follows the stacked arrangement.)
  const float table_w = textTableWidth(c, rows);
  Primitives none;
  const float table_h = textTable(none, c, 0, 0, table_w, 1e9f, rows).back().bottom() + px * 0.5f;
  const float strip_h = static_cast<float>(cmp.mass_kept.rows()) * c.unit * 1.8f + px * 1.6f + cellAxesMargins(c, 1, false).bottom;
  const float beside_h = std::max(table_h, strip_h);
  bool beside = false;
  if (!cmp.full.empty()) {
    const int cols = compareColumns(area.w, area.h, c.unit);
    g.columns = cols;
    beside = c.screen && cols == 3 && area.w - table_w - gap >= c.unit * 20 && beside_h < kNumbersH * c.unit;
    const float numbers_h = beside ? beside_h : kNumbersH * c.unit;
    const float cell_w = (area.w - static_cast<float>(cols - 1) * gap) / static_cast<float>(cols);
    const float cell_h = std::max(c.unit * 4, cols == 1   ? (area.h - numbers_h - 3 * gap) / 3
                                              : cols == 2 ? (area.h - gap) / 2
                                                          : area.h - numbers_h - gap);
    for (int i = 0; i < 3; ++i) {
      const float x = area.x + (cell_w + gap) * static_cast<float>(i % cols), y = area.y + (cell_h + gap) * static_cast<float>(i / cols);
      const float title_h = panelTitle(out, c, titles[i], x, y, cell_w);
      g.panels.push_back({x, y + title_h, cell_w, cell_h - title_h});
    }
    if (cols == 2) numbers = {area.x + cell_w + gap, area.y + cell_h + gap, cell_w, cell_h};
    else {
      const float top = area.y + (cell_h + gap) * static_cast<float>(3 / cols);
      numbers = {area.x, top, area.w, area.bottom() - top};
    }
  } else {
    const std::string msg = "L = " + groupDigits(cmp.length) +
                            ": the L×L matrices are not kept (they would not fit); the numbers and the per-query strip "
                            "come from full attention in row blocks.";
    float y = area.y;
    for (const std::string& l : wrapLines(c, msg, px, area.w)) {
      addText(out, area.x, y, l, px, Role::Muted);
      y += px * 1.3f;
    }
    numbers = {area.x, y + px * 0.5f, area.w, area.bottom() - y - px * 0.5f};
  }
  if (beside) {
    g.table_rows = textTable(out, c, numbers.x, numbers.y, table_w, numbers.h, rows);
    g.strip = massStrip(out, c, {numbers.x + table_w + gap, numbers.y, numbers.w - table_w - gap, numbers.h}, cmp.mass_kept, cmap);
  } else {
    // The table leaves the strip under it room for its title and a thin strip.
    const float strip_min = c.unit * 4.5f;
    g.table_rows = textTable(out, c, numbers.x, numbers.y, numbers.w, numbers.h - strip_min, rows);
    const float strip_top = g.table_rows.back().bottom() + c.unit * 0.8f;
    g.strip = massStrip(out, c, {numbers.x, strip_top, numbers.w, numbers.bottom() - strip_top}, cmp.mass_kept, cmap);
  }
  g.strip_rows = cmp.mass_kept.rows();
  g.strip_cols = cmp.mass_kept.cols();
  return g;
}

}  // namespace attn
