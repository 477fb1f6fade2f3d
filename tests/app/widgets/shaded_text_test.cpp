// The text view's layout (widgets/shaded_text.h) as both backends receive it,
// measured with a monospace canvas: tokens wrap inside the width and never
// overlap, each cell's colour is its weight through the range and colour
// map, its text contrasts with it, the query is outlined, and a text of
// thousands of tokens keeps the base text size, a page showing the lines
// about the query and saying which tokens they are.
#include "widgets/shaded_text.h"

#include "tests/app_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace attn {
namespace {

using test::monoCanvas;

// WCAG 2's relative luminance and contrast ratio.
double luminance(Rgb8 c) {
  const auto lin = [](uint8_t v) {
    const double u = v / 255.0;
    return u <= 0.04045 ? u / 12.92 : std::pow((u + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
}
double contrast(Rgb8 a, Rgb8 b) {
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

// Words of varied length, a line break every `lines` tokens.
std::vector<std::string> words(int64_t n, int64_t lines = 0) {
  const char* w[] = {" the", " attention", " of", " a", " head", " reads", " previous", " tokens", ",", " and"};
  std::vector<std::string> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(std::string(w[i % 10]) + (lines > 0 && i % lines == lines - 1 ? "\n" : ""));
  return out;
}

// A causal row: seeded weights on keys 0 … query summing to 1, −1 after it.
std::vector<float> causalRow(int64_t n, int64_t query, uint32_t seed) {
  std::mt19937 rng(seed);
  std::exponential_distribution<float> e(1.0f);
  std::vector<float> w(static_cast<size_t>(n), -1.0f);
  float z = 0;
  for (int64_t j = 0; j <= query; ++j) z += w[static_cast<size_t>(j)] = std::pow(e(rng), 3.0f);
  for (int64_t j = 0; j <= query; ++j) w[static_cast<size_t>(j)] /= z;
  return w;
}

TEST(ShadedText, TokensWrapInsideTheWidthAndNeverOverlap) {
  const Canvas c = monoCanvas();
  const std::vector<std::string> tokens = words(200, 37);
  const float width = 400;
  const TextFlow f = flowTokens(c, tokens, width, c.unit);
  ASSERT_EQ(f.cells.size(), tokens.size());
  EXPECT_GT(f.lines(), 10) << "200 tokens do not fit a 400-unit line";
  for (size_t j = 0; j < f.cells.size(); ++j) {
    const Box& b = f.cells[j];
    EXPECT_GE(b.x, 0.0f) << j;
    EXPECT_LE(b.right(), width + 1e-3f) << j;
    EXPECT_GE(b.w, c.textWidth(shownToken(tokens[j]), c.unit)) << "the cell holds its text: " << j;
    EXPECT_EQ(f.lineOf(static_cast<int64_t>(j)) * f.line_h, b.y) << j;
    for (size_t k = j + 1; k < f.cells.size(); ++k) EXPECT_FALSE(overlaps(b, f.cells[k])) << j << " and " << k;
  }
  // A line ends where it is full (the next token would not fit) or at a line break.
  for (int64_t l = 1; l < f.lines(); ++l) {
    const int64_t first = f.line_start[static_cast<size_t>(l)];
    const Box& prev = f.cells[static_cast<size_t>(first - 1)];
    const bool broke = tokens[static_cast<size_t>(first - 1)].find('\n') != std::string::npos;
    EXPECT_TRUE(broke || prev.right() + f.cells[static_cast<size_t>(first)].w > width - 1e-3f) << "line " << l;
  }
  // Hover finds each cell's token, and nothing between lines.
  for (size_t j = 0; j < f.cells.size(); j += 7) {
    const Box& b = f.cells[j];
    EXPECT_EQ(f.tokenAt(b.x + b.w * 0.5f, b.y + b.h * 0.5f), static_cast<int64_t>(j));
  }
  EXPECT_EQ(f.tokenAt(1, f.line_h - 0.5f), -1) << "the gap under a line's cells";
}

TEST(ShadedText, EachCellIsItsWeightsColourWithContrastingTextAndTheQueryOutlined) {
  const Canvas c = monoCanvas();
  const int64_t n = 60, query = 41;
  const std::vector<std::string> tokens = words(n);
  const std::vector<float> weights = causalRow(n, query, 7);
  for (const Colormap cmap : {Colormap::Viridis, Colormap::Magma, Colormap::Blues}) {
    ShadedText t;
    t.tokens = &tokens;
    t.weights = &weights;
    t.query = query;
    t.range = {0.0f, 0.5f, false, ScaleMode::Log};
    t.cmap = cmap;
    t.what = "L1 H2 weight";
    const TextFlow f = flowTokens(c, tokens, 500, c.unit);
    Primitives prims;
    shadedTextPrimitives(prims, c, f, 10, 20, 0, f.lines(), t);
    std::map<std::string, Rgb8> fills;
    int outlines = 0;
    for (const Primitive& p : prims) {
      if (p.kind == Primitive::Kind::FillRect) {
        ASSERT_TRUE(p.colour.has_value());
        const int64_t j = std::stoll(p.mark.substr(p.mark.find('[') + 1));
        const float w = weights[static_cast<size_t>(j)];
        ASSERT_GE(w, 0.0f) << "a key after a causal query is not shaded: " << j;
        EXPECT_FLOAT_EQ(static_cast<float>(p.mark_value), w);
        const Rgb8 want = colormapAt(cmap, scaleToUnit(t.range, w));
        EXPECT_EQ(p.colour->r, want.r) << j;
        EXPECT_EQ(p.colour->g, want.g) << j;
        EXPECT_EQ(p.colour->b, want.b) << j;
        const Box& b = f.cells[static_cast<size_t>(j)];
        EXPECT_FLOAT_EQ(p.x0, 10 + b.x);
        EXPECT_FLOAT_EQ(p.y0, 20 + b.y);
        fills[p.mark] = *p.colour;
      }
      if (p.kind == Primitive::Kind::Text && !p.labels.empty()) {
        // The token's text against its cell: dark on light, light on dark, at least 4:1 either way.
        const Rgb8 cell = fills.at(p.labels);
        ASSERT_TRUE(p.colour.has_value());
        EXPECT_GE(contrast(*p.colour, cell), 4.0) << p.labels;
        EXPECT_GE(contrast(*p.colour, cell), contrast(textOn(Rgb8{0, 0, 0}), cell)) << p.labels;
        EXPECT_GE(contrast(*p.colour, cell), contrast(textOn(Rgb8{255, 255, 255}), cell)) << p.labels;
        EXPECT_EQ(p.size, c.unit);
      }
      if (p.kind == Primitive::Kind::StrokeRect && p.role == Role::Accent) {
        ++outlines;
        const Box& b = f.cells[static_cast<size_t>(query)];
        EXPECT_FLOAT_EQ(p.x0, 10 + b.x);
        EXPECT_FLOAT_EQ(p.x1, 10 + b.right());
      }
    }
    EXPECT_EQ(static_cast<int64_t>(fills.size()), query + 1) << "the keys the query sees, each once";
    EXPECT_EQ(outlines, 1);
  }
  EXPECT_LT(luminance(textOn(Rgb8{255, 255, 255})), 0.1) << "dark text on white";
  EXPECT_GT(luminance(textOn(Rgb8{0, 0, 0})), 0.9) << "light text on black";
}

TEST(ShadedText, ShownTokensMarkLineBreaksAndBreakTheLine) {
  EXPECT_EQ(shownToken("a\nb\tc\r"), "a\xE2\x86\xB5" "b\xE2\x86\x92" "c");
  const Canvas c = monoCanvas();
  const TextFlow f = flowTokens(c, {"one", "two\n", "three"}, 1000, c.unit);
  ASSERT_EQ(f.lines(), 2);
  EXPECT_EQ(f.line_start[1], 2);
}

// 3,000 tokens on a page: the text stays at the base size, the page shows
// whole lines about the query (more before it, which a causal query reads),
// names them in its caption, and everything stays inside the area.
TEST(ShadedText, ThousandsOfTokensShowAReadableWindowAboutTheQuery) {
  const Canvas c = monoCanvas(12);
  const int64_t n = 3000;
  const std::vector<std::string> tokens = words(n, 113);
  for (const int64_t query : {int64_t{0}, int64_t{1500}, n - 1}) {
    const std::vector<float> weights = causalRow(n, query, 3);
    ShadedText t;
    t.tokens = &tokens;
    t.weights = &weights;
    t.query = query;
    t.range = {0.0f, 0.2f, false, ScaleMode::Log, 0.5f, 4.0f};
    t.what = "L0 H0 weight";
    const Box area{30, 40, 900, 600};
    Primitives prims;
    const ShadedTextPage p = shadedTextPagePrimitives(prims, c, area, t);
    EXPECT_LE(p.first, query);
    EXPECT_GT(p.last, query);
    EXPECT_LT(p.last - p.first, n) << "a window, not the whole text";
    EXPECT_GT(p.last - p.first, 200) << "the window fills the page";
    if (query == 1500) {
      EXPECT_GT(query - p.first, p.last - query) << "a causal query's window reads mostly before it";
    }
    bool caption = false, outlined = false;
    int64_t tokens_drawn = 0;
    for (const Primitive& q : prims) {
      if (q.kind == Primitive::Kind::Text && !q.vertical) {
        const float w = c.textWidth(q.text, q.size);
        EXPECT_GE(q.x0 - q.align_x * w, area.x - 0.5f) << q.text;
        EXPECT_LE(q.x0 + (1 - q.align_x) * w, area.right() + 0.5f) << q.text;
        EXPECT_GE(q.y0 - q.align_y * q.size, area.y - 0.5f) << q.text;
        EXPECT_LE(q.y0 + (1 - q.align_y) * q.size, area.bottom() + 0.5f) << q.text;
        if (q.size == c.unit) ++tokens_drawn;
        else EXPECT_GE(q.size, labelPx(c)) << "no text below the labels' size: " << q.text;
        caption = caption || q.text.find("tokens " + groupDigits(p.first) + "\xE2\x80\x93" + groupDigits(p.last - 1) +
                                         " of 3,000") != std::string::npos;
      }
      outlined = outlined || (q.kind == Primitive::Kind::StrokeRect && q.role == Role::Accent);
    }
    EXPECT_EQ(tokens_drawn, p.last - p.first) << "every shown token at the base text size";
    EXPECT_TRUE(caption) << "the caption names the tokens shown, query " << query;
    EXPECT_TRUE(outlined);
  }
  // A page whose height follows the content stops growing at kShadedTextPageLines lines.
  const std::vector<float> weights = causalRow(n, n - 1, 3);
  ShadedText t;
  t.tokens = &tokens;
  t.weights = &weights;
  const TextFlow f = flowTokens(c, tokens, 600 - shadedTextBarWidth(c, t.range), c.unit);
  EXPECT_LT(shadedTextPageHeight(c, 600, t), f.line_h * static_cast<float>(kShadedTextPageLines + 4));
  EXPECT_GT(shadedTextPageHeight(c, 600, t), f.line_h * static_cast<float>(kShadedTextPageLines));
}

}  // namespace
}  // namespace attn
