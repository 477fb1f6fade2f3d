#include "app/export/primitives_qt.h"

#include "app/export/figure_paint.h"
#include "engine/sparse.h"

#include <QFontMetricsF>
#include <QLinearGradient>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace attn {

Theme themeFor(bool dark) {
  const QColor accent(255, 158, 38);  // the screen's focus colour (ImGuiCol_PlotHistogram)
  if (dark) return {QColor(24, 26, 30), QColor(235, 235, 235), QColor(150, 150, 155), QColor(90, 90, 95), accent};
  return {QColor(255, 255, 255), QColor(20, 20, 20), QColor(110, 110, 115), QColor(160, 160, 165), QColor(230, 110, 0)};
}

QColor toQColor(Rgb8 c, int alpha) { return QColor(c.r, c.g, c.b, alpha); }

// Draws `img` into `target` with hard pixel edges: upscaled by a whole factor
// (nearest neighbour) to about device resolution first, so an SVG or PDF
// viewer's smoothing cannot blur a 64×64 image into mush.
void drawCrispImage(Painter& ctx, const QRectF& target, QImage img) {
  const double k = std::floor(std::min(target.width() * ctx.raster_scale / img.width(),
                                       target.height() * ctx.raster_scale / img.height()));
  if (k >= 2)
    img = img.scaled(static_cast<int>(img.width() * k), static_cast<int>(img.height() * k), Qt::IgnoreAspectRatio,
                     Qt::FastTransformation);
  // What is left is a scale below 2: nearest neighbour would double every
  // n-th pixel and draw bands; a smooth scale blends one pixel at each edge.
  const double rest = std::max(target.width() * ctx.raster_scale / img.width(), target.height() * ctx.raster_scale / img.height());
  ctx.p.save();
  ctx.p.setRenderHint(QPainter::SmoothPixmapTransform, std::abs(rest - std::round(rest)) > 0.01);
  ctx.p.drawImage(target, img);
  ctx.p.restore();
}

MeasureText figureMeasure(double px) {
  return [px](const std::string& s, float scale) {
    return static_cast<float>(QFontMetricsF(figureFont(px * scale)).horizontalAdvance(qs(s)));
  };
}

Canvas figureCanvas(const Painter& ctx) {
  return figureCanvas(ctx.unit, ctx.raster_scale, ctx.cmap, ctx.theme.background.lightness() < 128);
}

Canvas figureCanvas(double unit, double raster_scale, Colormap cmap, bool dark) {
  Canvas c;
  c.unit = static_cast<float>(unit);
  c.raster_scale = static_cast<float>(raster_scale);
  c.cmap = cmap;
  c.dark = dark;
  c.width_of = [](const std::string& s, float px, bool bold) {
    return static_cast<float>(QFontMetricsF(figureFont(px, bold)).horizontalAdvance(qs(s)));
  };
  c.ascent_of = [](float px) { return static_cast<float>(QFontMetricsF(figureFont(px)).ascent()); };
  return c;
}

namespace {

// A raster into `target`: one rect per cell while that stays a modest vector
// file, else an image pooled to the device's resolution (whole blocks, no
// moiré); a sparse matrix through rasterize(), never L×L.
void drawRaster(Painter& ctx, const Raster& r, const QRectF& target) {
  if (r.rows <= 0 || r.cols <= 0 || target.width() <= 0 || target.height() <= 0) return;
  QPainter& p = ctx.p;
  // The data window shown: whole cells of it.
  const int64_t r0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(r.v0 * r.rows)), 0, r.rows - 1);
  const int64_t r1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(r.v1 * r.rows)), r0 + 1, r.rows);
  const int64_t c0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(r.u0 * r.cols)), 0, r.cols - 1);
  const int64_t c1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(r.u1 * r.cols)), c0 + 1, r.cols);
  const int64_t rows = r1 - r0, cols = c1 - c0;
  const QColor none = ctx.theme.background.lightness() > 128 ? QColor(225, 225, 228) : QColor(50, 50, 55);
  auto colourOf = [&](float v) {
    if (v == kNoEntry || std::isnan(v)) return none;
    if (r.categories) return v < 0 ? none : toQColor(headColor(static_cast<int>(v)));
    return toQColor(colormapAt(r.cmap, scaleToUnit(r.range, v)));
  };
  auto masked = [&](int64_t i, int64_t j) { return r.mask && r.mask->size() && (*r.mask)(i, j) == 0.0f; };
  const double cw = target.width() / static_cast<double>(cols), ch = target.height() / static_cast<double>(rows);
  p.save();
  p.setRenderHint(QPainter::Antialiasing, false);  // crisp cells, no seams between them
  if (!r.pixels.empty()) {
    QImage img(static_cast<int>(cols), static_cast<int>(rows), QImage::Format_ARGB32);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const uint32_t c = r.pixels[static_cast<size_t>((r0 + i) * r.cols + c0 + j)];  // 0xAABBGGRR
        img.setPixel(static_cast<int>(j), static_cast<int>(i), qRgba(c & 0xff, c >> 8 & 0xff, c >> 16 & 0xff, c >> 24));
      }
    drawCrispImage(ctx, target, img);
  } else if (r.values && rows * cols <= kMaxVectorCells) {
    p.setPen(Qt::NoPen);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const float v = r.values[(r0 + i) * r.cols + c0 + j];
        // Slight overlap hides hairline seams between rects in viewers.
        p.fillRect(QRectF(target.left() + j * cw, target.top() + i * ch, cw + 0.02, ch + 0.02),
                   masked(r0 + i, c0 + j) ? none : colourOf(v));
      }
  } else {
    const auto out_rows = static_cast<int64_t>(std::ceil(target.height() * ctx.raster_scale));
    const auto out_cols = static_cast<int64_t>(std::ceil(target.width() * ctx.raster_scale));
    Mat pooled;
    if (r.sparse && r.sets) {
      // rasterize() ORs the set bits of each pixel's entries; 0: no entry.
      const Mat bits = rasterize(*r.sparse, r0, r1, c0, c1, out_rows, out_cols, RasterValue::Sets, 0.0f);
      const QRgb background = toQColor(patternBackground(ctx.theme.background.lightness() < 128)).rgb();
      drawCrispImage(ctx, target, colourise(bits, [&](float b) {
                       return b == 0.0f ? background : toQColor(setColor(static_cast<unsigned>(b))).rgb();
                     }));
      p.restore();
      return;
    }
    if (r.sparse) {
      pooled = rasterize(*r.sparse, r0, r1, c0, c1, out_rows, out_cols, RasterValue::Values, kNoEntry);
    } else {
      const Eigen::Map<const Mat> all(r.values, r.rows, r.cols);
      const Mat window = all.block(r0, c0, rows, cols);
      const Mat mask_window = r.mask && r.mask->size() ? Mat(r.mask->block(r0, c0, rows, cols)) : Mat();
      pooled = poolDense(window, mask_window.size() ? &mask_window : nullptr, out_rows, out_cols, kNoEntry);
    }
    drawCrispImage(ctx, target, colourise(pooled, [&](float v) { return colourOf(v).rgb(); }));
  }
  p.restore();
}

}  // namespace

// Replays primitives (widgets/primitives.h) with the figure's theme: the
// figures' backend, the screen's is widgets/primitives_imgui.h.
void drawPrimitives(Painter& ctx, const Primitives& prims) {
  QPainter& p = ctx.p;
  auto roleColour = [&](Role r, float alpha) {
    QColor c = r == Role::Text    ? ctx.theme.text
               : r == Role::Muted ? ctx.theme.muted
               : r == Role::Frame ? ctx.theme.frame
               : r == Role::Background ? ctx.theme.background
                                  : ctx.theme.accent;
    c.setAlphaF(c.alphaF() * std::clamp(alpha, 0.0f, 1.0f));
    return c;
  };
  auto colourOf = [&](const Primitive& pr) {
    if (!pr.colour) return roleColour(pr.role, pr.alpha);
    return toQColor(*pr.colour, static_cast<int>(std::lround(255.0f * std::clamp(pr.alpha, 0.0f, 1.0f))));
  };
  auto polygonOf = [](const Primitive& pr) {
    QPolygonF poly;
    for (size_t i = 0; i + 1 < pr.points.size(); i += 2) poly << QPointF(pr.points[i], pr.points[i + 1]);
    return poly;
  };
  p.save();
  p.setRenderHint(QPainter::Antialiasing, true);
  int clips = 0;
  for (const Primitive& pr : prims) {
    const QRectF rect(QPointF(pr.x0, pr.y0), QPointF(pr.x1, pr.y1));
    QPen pen(colourOf(pr), pr.thickness);
    if (pr.dashed) pen.setStyle(Qt::DashLine);
    p.setBrush(Qt::NoBrush);
    switch (pr.kind) {
      case Primitive::Kind::StrokeRect:
        p.setPen(pen);
        p.drawRect(rect);
        break;
      case Primitive::Kind::FillRect: p.fillRect(rect, colourOf(pr)); break;
      case Primitive::Kind::Line:
        p.setPen(pen);
        p.drawLine(QPointF(pr.x0, pr.y0), QPointF(pr.x1, pr.y1));
        break;
      case Primitive::Kind::Arrow: {
        const ArrowHead h = arrowHead(pr);
        p.setPen(pen);
        p.drawLine(QPointF(pr.x0, pr.y0), QPointF(h.base_x, h.base_y));
        p.setPen(Qt::NoPen);
        p.setBrush(colourOf(pr));
        const QPointF tri[3] = {QPointF(pr.x1, pr.y1), QPointF(h.left_x, h.left_y), QPointF(h.right_x, h.right_y)};
        p.drawPolygon(tri, 3);
        break;
      }
      case Primitive::Kind::Ellipse:
        p.setPen(pen);
        p.drawEllipse(rect.normalized());
        break;
      case Primitive::Kind::FillEllipse:
        p.setPen(Qt::NoPen);
        p.setBrush(colourOf(pr));
        p.drawEllipse(rect.normalized());
        break;
      case Primitive::Kind::Polyline:
        p.setPen(pen);
        p.drawPolyline(polygonOf(pr));
        break;
      case Primitive::Kind::Polygon: {
        QPainterPath path;
        path.addPolygon(polygonOf(pr));
        path.closeSubpath();
        p.fillPath(path, colourOf(pr));
        break;
      }
      case Primitive::Kind::Raster:
        if (pr.raster) drawRaster(ctx, *pr.raster, rect.normalized());
        break;
      case Primitive::Kind::PushClip:
        p.save();
        p.setClipRect(rect.normalized(), Qt::IntersectClip);
        ++clips;
        break;
      case Primitive::Kind::PopClip:
        if (clips > 0) {
          p.restore();
          --clips;
        }
        break;
      case Primitive::Kind::ColormapStrip: {
        // One gradient-filled rect (a <linearGradient> in SVG), bottom = 0.
        QLinearGradient g(rect.bottomLeft(), rect.topLeft());
        constexpr int stops = 32;
        for (int i = 0; i <= stops; ++i)
          g.setColorAt(static_cast<double>(i) / stops, toQColor(colormapAt(pr.cmap, static_cast<float>(i) / stops)));
        p.fillRect(rect, g);
        break;
      }
      case Primitive::Kind::Text: {
        const QFont font = figureFont(pr.size, pr.bold);
        const QFontMetricsF fm(font);
        const QString text = qs(pr.text);
        const double w = fm.horizontalAdvance(text), h = fm.height();
        p.setFont(font);
        p.setPen(colourOf(pr));
        p.save();
        p.translate(pr.x0, pr.y0);
        if (pr.vertical) p.rotate(-90);  // reads bottom to top, as on screen
        p.drawText(QPointF(-pr.align_x * w, pr.baseline ? 0.0 : -pr.align_y * h + fm.ascent()), text);
        p.restore();
        break;
      }
    }
  }
  for (; clips > 0; --clips) p.restore();
  p.restore();
}

}  // namespace attn
