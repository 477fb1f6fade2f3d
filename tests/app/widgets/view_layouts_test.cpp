// The composite views' layouts (widgets/view_layouts.h) as both backends
// receive them, measured with a monospace canvas: text stays inside the
// area and does not overlap, lines carry their weights, pixels are square,
// the pieces of a view do not cover one another.
#include "widgets/view_layouts.h"
#include "widgets/plot_layouts.h"

#include "engine/sparse.h"
#include "tests/app_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace attn {
namespace {

using test::monoCanvas;

struct TextBox {
  float x0, y0, x1, y1;
  std::string text;
};

// The box each (horizontal) text primitive covers, from its anchor and alignment.
std::vector<TextBox> textBoxes(const Primitives& prims, const Canvas& c) {
  std::vector<TextBox> out;
  for (const Primitive& p : prims) {
    if (p.kind != Primitive::Kind::Text) continue;
    const float w = c.textWidth(p.text, p.size), h = p.size;
    if (p.vertical) {
      out.push_back({p.x0 - p.align_y * h, p.y0 - (1 - p.align_x) * w, p.x0 + (1 - p.align_y) * h, p.y0 + p.align_x * w, p.text});
    } else {
      const float top = p.baseline ? p.y0 - c.ascent_of(p.size) : p.y0 - p.align_y * h;
      out.push_back({p.x0 - p.align_x * w, top, p.x0 + (1 - p.align_x) * w, top + h, p.text});
    }
  }
  return out;
}

void expectInside(const Primitives& prims, const Canvas& c, const Box& a) {
  for (const TextBox& t : textBoxes(prims, c)) {
    EXPECT_GE(t.x0, a.x - 0.5f) << "'" << t.text << "' runs past the left edge";
    EXPECT_LE(t.x1, a.right() + 0.5f) << "'" << t.text << "' runs past the right edge";
    EXPECT_GE(t.y0, a.y - 0.5f) << "'" << t.text << "' runs past the top";
    EXPECT_LE(t.y1, a.bottom() + 0.5f) << "'" << t.text << "' runs past the bottom";
  }
}

// Two heads over six tokens: head 0 attends to the previous token, head 1 uniformly.
Result smallResult(int64_t n = 6) {
  Result r;
  for (int64_t i = 0; i < n; ++i) {
    r.q_tokens.push_back("tok" + std::to_string(i));
    r.k_tokens.push_back("tok" + std::to_string(i));
  }
  Mat a = Mat::Zero(n, n), b = Mat::Constant(n, n, 1.0f / static_cast<float>(n));
  for (int64_t i = 0; i < n; ++i) a(i, std::max<int64_t>(i - 1, 0)) = 1.0f;
  r.weights = {a, b};
  r.computeStats();
  return r;
}

TEST(TokenLinesLayout, LinesCarryTheirWeightsAndLabelsStayInsideApart) {
  const Canvas c = monoCanvas();
  const Result r = smallResult();
  const Box area{10, 20, 600, 400};
  Primitives prims;
  const TokenLinesLayout g = tokenLinesPrimitives(prims, c, area, r, {}, false);
  ASSERT_FALSE(g.too_many);
  EXPECT_LT(g.xq, g.xk);
  int head0 = 0, head1 = 0;
  for (const Primitive& p : prims) {
    if (p.kind != Primitive::Kind::Line || !p.colour) continue;
    const auto i = g.queryAt(p.y0), j = g.keyAt(p.y1);
    ASSERT_GE(i, 0);
    ASSERT_GE(j, 0);
    if (p.colour->r == headColor(0).r && p.colour->g == headColor(0).g) {
      ++head0;
      EXPECT_EQ(j, std::max<int64_t>(i - 1, 0)) << "head 0 draws only its weights' lines";
      EXPECT_FLOAT_EQ(p.alpha, lineOpacity(1.0f, r.weights_stats));
    } else {
      ++head1;
      EXPECT_FLOAT_EQ(p.alpha, lineOpacity(1.0f / 6, r.weights_stats));
    }
  }
  EXPECT_EQ(head0, 6);
  EXPECT_EQ(head1, 36);
  expectInside(prims, c, area);
  // The token labels of one column never overlap.
  std::vector<TextBox> left;
  for (const TextBox& t : textBoxes(prims, c))
    if (t.text.rfind("tok", 0) == 0 && t.x1 <= g.xq + 0.5f) left.push_back(t);
  ASSERT_EQ(left.size(), 6u);
  for (size_t k = 1; k < left.size(); ++k) EXPECT_GE(left[k].y0, left[k - 1].y1 - 0.5f);
}

TEST(TokenLinesLayout, HoverIsolatesATokenAndHiddenHeadsDrawNothing) {
  const Canvas c = monoCanvas();
  const Result r = smallResult();
  Primitives prims;
  const TokenLinesLayout g = tokenLinesPrimitives(prims, c, {0, 0, 500, 300}, r, {true, false}, true, 3);
  int lines = 0;
  for (const Primitive& p : prims)
    if (p.kind == Primitive::Kind::Line && p.colour) {
      ++lines;
      EXPECT_EQ(g.queryAt(p.y0), 3);
    }
  EXPECT_EQ(lines, 1) << "head 1 is hidden; head 0's query 3 has one key";
  EXPECT_GT(g.head_boxes[1].w, 0.0f) << "a hidden head stays in the screen's legend, to be clicked back";
}

TEST(TokenLinesLayout, LongTokensShrinkAndNarrowAreasKeepTheirWords) {
  const Canvas c = monoCanvas(8);
  Result r = smallResult(40);
  r.q_tokens[5] = r.k_tokens[7] = "an_exceptionally_long_token_name";
  const Box area{0, 0, 230, 500};
  Primitives prims;
  tokenLinesPrimitives(prims, c, area, r, {}, false);
  expectInside(prims, c, area);
}

TEST(LegendLayout, EntriesWrapInsideTheWidthWithoutOverlap) {
  const Canvas c = monoCanvas();
  std::vector<LegendEntry> items;
  for (int k = 0; k < 9; ++k) items.push_back({headColor(k), "entry number " + std::to_string(k)});
  Primitives prims;
  std::vector<Box> hit;
  const float h = legendPrimitives(prims, c, Box{5, 5, 300, 0}, items, false, true, &hit);
  ASSERT_EQ(hit.size(), items.size());
  EXPECT_GT(h, hit[0].h * 2) << "nine entries do not fit one 300-wide row";
  for (size_t a = 0; a < hit.size(); ++a) {
    EXPECT_LE(hit[a].right(), 305.5f);
    for (size_t b = a + 1; b < hit.size(); ++b) EXPECT_FALSE(overlaps(hit[a], hit[b], 0.5f)) << a << " and " << b;
  }
  expectInside(prims, c, {5, 5, 300, h});
}

// A strided pattern over a 16-pixel-wide image: L = 256.
SparseRows stridedPattern(int64_t n, int64_t stride) {
  Mat w = Mat::Zero(n, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j)
      if (i - j < stride || (i - j) % stride == 0) w(i, j) = 1.0f;
  SparseRows s = sparseFromDense(w, Mat());
  s.sets.assign(s.indices.size(), 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t e = s.rowBegin(i); e < s.rowEnd(i); ++e) {
      const int64_t j = s.indices[static_cast<size_t>(e)];
      s.sets[static_cast<size_t>(e)] = static_cast<uint8_t>((i - j < stride ? 1 : 0) | ((i - j) % stride == 0 ? 2 : 0));
    }
  return s;
}

TEST(ImageViewLayout, SquarePixelsClickableAndEverythingInside) {
  const Canvas c = monoCanvas(10);
  const SparseRows s = stridedPattern(256, 16);
  for (const Box area : {Box{0, 0, 1100, 700}, Box{20, 30, 230, 260}}) {
    Primitives prims;
    const ImageViewLayout g = imageViewPrimitives(prims, c, area, s, {"local", "strided"}, 16, 120, nullptr, "t");
    EXPECT_EQ(g.width, 16);
    EXPECT_EQ(g.height, 16);
    EXPECT_NEAR(g.image.w / 16, g.image.h / 16, 1e-3f) << "square pixels";
    EXPECT_FALSE(overlaps(g.image, g.matrix, 0.5f));
    // The centre of pixel 120 (x 8, y 7) is position 120; the matrix row under query 120's centre is 120.
    const float px = g.image.w / 16;
    EXPECT_EQ(g.pixelAt(g.image.x + 8.5f * px, g.image.y + 7.5f * px), 120);
    EXPECT_EQ(g.rowAt(g.matrix.x + 1, g.matrix.y + (120.5f / 256) * g.matrix.h), 120);
    EXPECT_EQ(g.pixelAt(g.image.x - 1, g.image.y), -1);
    bool sets_raster = false, image_raster = false;
    for (const Primitive& p : prims) {
      if (p.kind != Primitive::Kind::Raster) continue;
      if (p.raster->sets) sets_raster = p.raster->sparse == &s;
      if (!p.raster->pixels.empty()) {
        image_raster = true;
        // Query 120's keys: its own pixel is in both sets.
        EXPECT_EQ(p.raster->pixels[120] & 0xffffffu,
                  static_cast<uint32_t>(setColor(3).b) << 16 | static_cast<uint32_t>(setColor(3).g) << 8 | setColor(3).r);
      }
    }
    EXPECT_TRUE(sets_raster);
    EXPECT_TRUE(image_raster);
    expectInside(prims, c, area);
  }
}

TEST(PictureViewLayout, MapsBesideThePictureSquarePixelsClicksAndTextInside) {
  const Canvas c = monoCanvas(10);
  // A 12 × 8 picture, keys pooled to a 6 × 4 grid; query j attends to key cell j mod 24 alone.
  constexpr int64_t kW = 12, kH = 8, kN = kW * kH;
  const Array picture{{kH, kW, 3}, std::vector<float>(kN * 3, 0.5f)};
  Mat weights = Mat::Zero(kN, 24);
  for (int64_t j = 0; j < kN; ++j) weights(j, j % 24) = 1.0f;
  const std::vector<int64_t> queries = {0, 13, 50, 95};
  for (const Box area : {Box{0, 0, 1100, 600}, Box{20, 30, 420, 300}, Box{0, 0, 500, 900}}) {
    Primitives prims;
    const PictureViewLayout g = pictureViewPrimitives(prims, c, area, picture, weights, 6, queries, 1, "t");
    ASSERT_EQ(g.maps.size(), queries.size());
    EXPECT_NEAR(g.image.w / kW, g.image.h / kH, 1e-3f) << "square pixels";
    for (const Box& m : g.maps) {
      EXPECT_NEAR(m.w / kW, m.h / kH, 1e-3f);
      EXPECT_FALSE(overlaps(m, g.image, 0.5f));
      EXPECT_LE(m.right(), area.right() + 0.5f);
      EXPECT_LE(m.bottom(), area.bottom() + 0.5f);
    }
    for (size_t a = 0; a < g.maps.size(); ++a)
      for (size_t b = a + 1; b < g.maps.size(); ++b) EXPECT_FALSE(overlaps(g.maps[a], g.maps[b], 0.5f));
    // Pixel (row 4, column 2) = 50 in the picture and in map 3.
    const float px = g.image.w / kW;
    int panel = 7;
    EXPECT_EQ(g.pixelAt(g.image.x + 2.5f * px, g.image.y + 4.5f * px, &panel), 50);
    EXPECT_EQ(panel, -1);
    const float mpx = g.maps[2].w / kW;
    EXPECT_EQ(g.pixelAt(g.maps[2].x + 2.5f * mpx, g.maps[2].y + 4.5f * mpx, &panel), 50);
    EXPECT_EQ(panel, 2);
    EXPECT_EQ(g.pixelAt(area.x - 5, area.y - 5), -1);
    expectInside(prims, c, area);
  }
}

Comparison smallComparison(int64_t n, bool matrices) {
  Comparison cmp;
  cmp.heads = 2;
  cmp.length = n;
  if (matrices) {
    for (int h = 0; h < 2; ++h) {
      cmp.full.push_back(Mat::Constant(n, n, 1.0f / static_cast<float>(n)));
      cmp.pattern.push_back(Mat::Identity(n, n));
      cmp.difference.push_back(cmp.pattern.back() - cmp.full.back());
    }
  }
  cmp.mass_kept = Mat::Constant(2, n, 0.5f);
  cmp.mass_kept(1, 3) = 0.0f;
  cmp.mass_kept_mean = 0.49;
  cmp.kl_mean = std::numeric_limits<double>::infinity();
  cmp.kl_finite = 5;
  cmp.kl_finite_mean = 0.25;
  cmp.output_rel_error = 0.125;
  cmp.full_flops = 1e9;
  cmp.pattern_flops = 2.5e7;
  cmp.full_bytes = 1 << 26;
  cmp.pattern_bytes = 1 << 20;
  cmp.full_connections = 2 * n * n;
  cmp.pattern_connections = 2 * n;
  return cmp;
}

TEST(CompareLayout, NumbersAndStripFitWithoutCoveringTheMatrices) {
  const Canvas c = monoCanvas(10);
  for (const auto& [area, matrices] : {std::pair{Box{0, 0, 1150, 720}, true}, std::pair{Box{0, 0, 230, compareHeight(230, 10)}, true},
                                       std::pair{Box{0, 0, 1150, 720}, false}}) {
    const Comparison cmp = smallComparison(600, matrices);
    Primitives prims;
    const CompareLayout g = comparePrimitives(prims, c, area, cmp, Colormap::Viridis);
    ASSERT_EQ(g.panels.size(), matrices ? 3u : 0u);
    ASSERT_EQ(g.table_rows.size(), 7u);
    for (size_t k = 1; k < g.table_rows.size(); ++k) EXPECT_GE(g.table_rows[k].y, g.table_rows[k - 1].bottom() - 0.01f);
    EXPECT_GT(g.strip.w, 0.0f);
    EXPECT_EQ(g.strip_rows, 2);
    EXPECT_GE(g.strip.y, g.table_rows.back().bottom());
    for (const Box& p : g.panels) {
      EXPECT_FALSE(overlaps(p, g.strip, 0.5f));
      for (const Box& row : g.table_rows) EXPECT_FALSE(overlaps(p, row, 0.5f));
    }
    // More queries than device pixels: a pixel keeps the smallest share among its queries.
    for (const Primitive& p : prims)
      if (p.kind == Primitive::Kind::Raster && p.raster->key.rfind("mass:", 0) == 0 && p.raster->cols < 600) {
        const uint32_t lost = colormapAt(Colormap::Viridis, 0.0f).r;
        const auto row = [&](int64_t h) { return p.raster->pixels.begin() + h * p.raster->cols; };
        EXPECT_EQ(std::count_if(row(1), row(2), [&](uint32_t px) { return (px & 0xff) == lost; }), 1) << "head 1 lost query 3";
        EXPECT_EQ(std::count_if(row(0), row(1), [&](uint32_t px) { return (px & 0xff) == lost; }), 0);
      }
    expectInside(prims, c, area);
  }
}

TEST(CompareLayout, ArrangementGivesTheLargestMatrices) {
  EXPECT_EQ(compareColumns(1000, 1000, 10), 2) << "a square area: 2 × 2, the numbers in the fourth cell";
  EXPECT_EQ(compareColumns(2000, 700, 10), 3) << "a wide area: the three in a row";
  EXPECT_EQ(compareColumns(230, 0, 10), 1) << "a paper's column: one above the other";
  EXPECT_GT(compareHeight(230, 10), compareHeight(1200, 10) / 2) << "a column stacks three panels";
}

TEST(WalkthroughLayout, StagesInAGridWithTheExtrasBesideOrUnder) {
  const Canvas c = monoCanvas(10);
  Result r;
  for (int k = 0; k < 4; ++k) {
    Stage st;
    st.title = "(" + std::string(1, static_cast<char>('a' + k)) + ") a stage with a title that wraps in a narrow panel";
    st.caption = "q_i·k_j over the chunk and the one before";
    st.matrix = sparseFromDense(Mat::Identity(16, 16), Mat());
    r.stages.push_back(st);
  }
  Extra pts;
  pts.kind = ExtraKind::Points;
  Extra bars;
  bars.kind = ExtraKind::CategoryValues;
  r.extras = {pts, bars};
  for (const Box area : {Box{0, 0, 1150, 700}, Box{0, 0, 230, 1000}}) {
    Primitives prims;
    const WalkthroughLayout g = walkthroughPrimitives(prims, c, area, r, {0.0f, 1.0f, false}, Colormap::Viridis);
    ASSERT_EQ(g.stages.size(), 4u);
    ASSERT_EQ(g.pictures.size(), 1u);
    ASSERT_EQ(g.others.size(), 1u);
    std::vector<Box> all = g.stages;
    all.push_back(g.pictures[0]);
    all.push_back(g.others[0]);
    for (size_t a = 0; a < all.size(); ++a) {
      EXPECT_GT(all[a].w, 0.0f);
      EXPECT_GT(all[a].h, 0.0f);
      EXPECT_LE(all[a].right(), area.right() + 0.5f);
      EXPECT_LE(all[a].bottom(), area.bottom() + 0.5f);
      for (size_t b = a + 1; b < all.size(); ++b) EXPECT_FALSE(overlaps(all[a], all[b], 0.5f)) << a << " and " << b;
    }
    // Every header (title and caption) sits above its stage's matrix and inside the area.
    for (const TextBox& t : textBoxes(prims, c))
      for (const Box& st : g.stages)
        if (t.x0 >= st.x && t.x1 <= st.right() && t.y1 > st.y + 0.5f && t.y0 < st.y) ADD_FAILURE() << "'" << t.text << "' crosses a matrix";
    expectInside(prims, c, area);
  }
}

TEST(ColumnsTableLayout, EveryCellInsideRightAlignedInItsColumnRowsApart) {
  const Canvas c = monoCanvas(10);
  const std::vector<std::string> columns{"layer", "head", "previous-token score", "entropy"};
  std::vector<std::vector<std::string>> rows;
  for (int i = 0; i < 12; ++i) rows.push_back({std::to_string(i / 4), std::to_string(i % 4), "0." + std::to_string(100 + i), "1.25"});
  for (const Box area : {Box{10, 20, 600, 400}, Box{0, 0, 160, 120}}) {
    Primitives prims;
    const float h = columnsTablePrimitives(prims, c, area, columns, rows);
    EXPECT_LE(h, area.h + 0.5f);
    expectInside(prims, c, area);
    std::vector<const Primitive*> texts;
    for (const Primitive& p : prims)
      if (p.kind == Primitive::Kind::Text) texts.push_back(&p);
    ASSERT_EQ(texts.size(), (rows.size() + 1) * columns.size());
    for (size_t r = 0; r <= rows.size(); ++r)
      for (size_t k = 0; k < columns.size(); ++k) {
        const Primitive& t = *texts[r * columns.size() + k];
        EXPECT_FLOAT_EQ(t.align_x, 1.0f) << "right-aligned";
        EXPECT_FLOAT_EQ(t.x0, texts[k]->x0) << "row " << r << " column " << k << " lines up with its header";
        if (r > 0) {
          EXPECT_GT(t.y0, texts[(r - 1) * columns.size() + k]->y0) << "rows go down";
        }
      }
    EXPECT_TRUE(texts[0]->bold) << "the header is bold";
    EXPECT_FALSE(texts[columns.size()]->bold);
  }
}

// The head table of a GQA model (nine columns) at one column's width: the
// gaps give way to the text instead of pushing the last columns off the page.
TEST(ColumnsTableLayout, NineColumnsFitANarrowArea) {
  const Canvas c = monoCanvas(10);
  const std::vector<std::string> columns{"layer", "head", "previous-token", "sink", "induction", "mean distance",
                                         "entropy", "kv head", "group JS"};
  const std::vector<std::vector<std::string>> rows(8, {"1", "3", "0.077", "0.000", "0.000", "2.827", "0.210", "0", "0.781"});
  for (const Box area : {Box{0, 0, 230, 200}, Box{0, 0, 120, 200}}) {
    Primitives prims;
    columnsTablePrimitives(prims, c, area, columns, rows);
    expectInside(prims, c, area);
  }
}

}  // namespace
}  // namespace attn
