#include "widgets/primitives_imgui.h"

#include "widgets/heatmap.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace attn {

MeasureText imguiMeasure(float px) {
  return [px](const std::string& s, float scale) { return ImGui::GetFont()->CalcTextSizeA(px * scale, FLT_MAX, 0.0f, s.c_str()).x; };
}

Canvas imguiCanvas() {
  Canvas c;
  c.unit = ImGui::GetFontSize() / kLabelScale;
  c.raster_scale = ImGui::GetIO().DisplayFramebufferScale.y;
  c.screen = true;
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  c.dark = bg.x * 0.3f + bg.y * 0.59f + bg.z * 0.11f < 0.5f;
  c.width_of = [](const std::string& s, float px, bool) { return ImGui::GetFont()->CalcTextSizeA(px, FLT_MAX, 0.0f, s.c_str()).x; };
  c.ascent_of = [](float px) {
    const ImFont* f = ImGui::GetFont();
    return f->Ascent * px / f->FontSize;
  };
  return c;
}

namespace {

std::vector<DrawnText>* text_sink = nullptr;  // a TextRecorder's
MarkSheet* mark_sink = nullptr;               // its marks, where it has them

// A dashed line as dashes of about 4 × its thickness (ImGui draws only solid lines).
void dashedLine(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col, float thick) {
  const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
  const float dash = std::max(4.0f, thick * 4.0f);
  for (float t = 0; t < len; t += 2 * dash) {
    const float e = std::min(len, t + dash);
    dl->AddLine(ImVec2(a.x + dx * t / len, a.y + dy * t / len), ImVec2(a.x + dx * e / len, a.y + dy * e / len), col, thick);
  }
}

// A raster into [p0, p1]: values through the colormap shader (the data
// uploaded once per result), a sparse matrix's visible tile pooled to about
// its on-screen pixels, categories and given colours as an RGBA texture.
void drawRaster(ImDrawList* dl, HeatmapRenderer& gl, const Raster& r, ImVec2 p0, ImVec2 p1) {
  if (r.rows <= 0 || r.cols <= 0 || p1.x <= p0.x || p1.y <= p0.y) return;
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  const ImVec4 grid(bg.x, bg.y, bg.z, r.grid ? 0.55f : 0.0f);
  const ImVec2 uv0(r.u0, r.v0), uv1(r.u1, r.v1);
  if (!r.pixels.empty() || r.categories) {
    const int w = static_cast<int>(r.cols), h = static_cast<int>(r.rows);
    // A new shape is a new picture under the same name (a strip re-wrapped to a new width).
    const std::string version = (r.pixels.empty() ? std::to_string(reinterpret_cast<uintptr_t>(r.values)) + "/" : std::string()) +
                                r.version + "/" + std::to_string(w) + "x" + std::to_string(h);
    const ImTextureID tex = gl.rgbaTexture(r.key, version, w, h, [&](std::vector<uint32_t>& px) {
      if (!r.pixels.empty()) {
        std::copy(r.pixels.begin(), r.pixels.end(), px.begin());
        return;
      }
      for (size_t i = 0; i < px.size(); ++i) {
        const float v = r.values[i];
        const bool none = !(v >= 0) || (r.mask && r.mask->size() && r.mask->data()[i] == 0.0f);
        px[i] = none ? ImGui::GetColorU32(ImGuiCol_FrameBg) : toU32(headColor(static_cast<int>(v)));
      }
    });
    dl->AddImage(tex, p0, p1, uv0, uv1);
    return;
  }
  // The visible tile and its pixels on screen.
  const auto clampi = [](float v, int64_t n) { return std::clamp<int64_t>(static_cast<int64_t>(v), 0, n); };
  const int64_t r0 = clampi(std::floor(r.v0 * r.rows), r.rows), r1 = std::max(r0 + 1, clampi(std::ceil(r.v1 * r.rows), r.rows));
  const int64_t c0 = clampi(std::floor(r.u0 * r.cols), r.cols), c1 = std::max(c0 + 1, clampi(std::ceil(r.u1 * r.cols), r.cols));
  const auto x = [&](double c) { return p0.x + static_cast<float>((c / r.cols - r.u0) / (r.u1 - r.u0)) * (p1.x - p0.x); };
  const auto y = [&](double row) { return p0.y + static_cast<float>((row / r.rows - r.v0) / (r.v1 - r.v0)) * (p1.y - p0.y); };
  const ImVec2 a(x(static_cast<double>(c0)), y(static_cast<double>(r0))), b(x(static_cast<double>(c1)), y(static_cast<double>(r1)));
  const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  const int64_t out_cols = std::max<int64_t>(1, static_cast<int64_t>(std::ceil((b.x - a.x) * scale.x)));
  const int64_t out_rows = std::max<int64_t>(1, static_cast<int64_t>(std::ceil((b.y - a.y) * scale.y)));
  if (r.sparse) {
    // The visible tile only, at about its on-screen pixel size; never L×L.
    const Mat& tile = gl.sparseTile(*r.sparse, r0, r1, c0, c1, out_rows, out_cols, r.sets ? RasterValue::Sets : RasterValue::Values);
    dl->PushClipRect(p0, p1, true);
    if (r.sets) {
      // Coloured once per tile (the tile is re-rasterized only when it changes).
      const bool dark = imguiCanvas().dark;
      const std::string version = std::to_string(reinterpret_cast<uintptr_t>(tile.data())) + ":" + std::to_string(tile.rows()) +
                                  "x" + std::to_string(tile.cols()) + (dark ? "d" : "l");
      const ImU32 none = toU32(patternBackground(dark));
      const ImTextureID tex = gl.rgbaTexture(r.key, version, static_cast<int>(tile.cols()), static_cast<int>(tile.rows()),
                                             [&](std::vector<uint32_t>& px) {
                                               for (int64_t i = 0; i < tile.size(); ++i) {
                                                 const auto bits = static_cast<unsigned>(tile.data()[i]);
                                                 px[static_cast<size_t>(i)] = bits ? toU32(setColor(bits)) : none;
                                               }
                                             });
      dl->AddImage(tex, a, b);
    } else {
      gl.draw(dl, tile.data(), tile.rows(), tile.cols(), a, b, ImVec2(0, 0), ImVec2(1, 1), r.range, r.cmap, grid);
    }
    dl->PopClipRect();
    return;
  }
  if (!r.values) return;
  if (r1 - r0 > out_rows || c1 - c0 > out_cols) {
    // More cells than pixels: shrunk by the figures' rule (poolDense), never by skipping rows and columns.
    const Mat& tile = gl.denseTile(r.values, r.rows, r.cols, r.mask, r0, r1, c0, c1, out_rows, out_cols);
    dl->PushClipRect(p0, p1, true);
    gl.draw(dl, tile.data(), tile.rows(), tile.cols(), a, b, ImVec2(0, 0), ImVec2(1, 1), r.range, r.cmap, grid);
    dl->PopClipRect();
    return;
  }
  const float* data = r.mask && r.mask->size() ? gl.maskedData(r.values, r.rows, r.cols, *r.mask) : r.values;
  gl.draw(dl, data, r.rows, r.cols, p0, p1, uv0, uv1, r.range, r.cmap, grid);
}

}  // namespace

TextRecorder::TextRecorder(std::vector<DrawnText>& sink, MarkSheet* marks) {
  text_sink = &sink;
  mark_sink = marks;
}
TextRecorder::~TextRecorder() { text_sink = nullptr, mark_sink = nullptr; }

void drawPrimitives(ImDrawList* dl, const Primitives& prims, HeatmapRenderer* gl) {
  ImFont* font = ImGui::GetFont();
  auto roleColour = [](Role r, float alpha = 1.0f) {
    const ImGuiCol col = r == Role::Text    ? ImGuiCol_Text
                         : r == Role::Muted ? ImGuiCol_TextDisabled
                         : r == Role::Frame ? ImGuiCol_Border
                         : r == Role::Background ? ImGuiCol_WindowBg
                                            : ImGuiCol_PlotHistogram;  // the accent: focus frames
    return ImGui::GetColorU32(col, alpha);
  };
  auto colourOf = [&](const Primitive& p) {
    if (!p.colour) return roleColour(p.role, p.alpha);
    return toU32(*p.colour, static_cast<int>(std::lround(255.0f * std::clamp(p.alpha, 0.0f, 1.0f))));
  };
  int clips = 0;
  for (const Primitive& p : prims) {
    const float thick = std::max(1.0f, p.thickness);
    if (mark_sink && !p.mark.empty()) mark_sink->marks.push_back({p.mark, markBox(p), p.mark_value});
    if (mark_sink && !p.labels.empty() && p.kind == Primitive::Kind::Line) mark_sink->leaders.push_back({p.labels, p.x0, p.y0, p.x1, p.y1});
    switch (p.kind) {
      case Primitive::Kind::StrokeRect:
        dl->AddRect(ImVec2(p.x0, p.y0), ImVec2(p.x1, p.y1), colourOf(p), 0.0f, 0, thick);
        break;
      case Primitive::Kind::FillRect: dl->AddRectFilled(ImVec2(p.x0, p.y0), ImVec2(p.x1, p.y1), colourOf(p)); break;
      case Primitive::Kind::Line:
        if (p.dashed) dashedLine(dl, ImVec2(p.x0, p.y0), ImVec2(p.x1, p.y1), colourOf(p), thick);
        else dl->AddLine(ImVec2(p.x0, p.y0), ImVec2(p.x1, p.y1), colourOf(p), thick);
        break;
      case Primitive::Kind::Polyline:
        for (size_t i = 2; i + 1 < p.points.size(); i += 2) {
          const ImVec2 a(p.points[i - 2], p.points[i - 1]), b(p.points[i], p.points[i + 1]);
          if (p.dashed) dashedLine(dl, a, b, colourOf(p), thick);
          else dl->AddLine(a, b, colourOf(p), thick);
        }
        break;
      case Primitive::Kind::Polygon: {
        // ImGui fills convex polygons only, which the layouts emit (sectors,
        // diamonds): one path, anti-aliased at its outline only (a fan of
        // triangles would show its seams through a translucent fill).
        for (size_t i = 0; i + 1 < p.points.size(); i += 2) dl->PathLineTo(ImVec2(p.points[i], p.points[i + 1]));
        dl->PathFillConvex(colourOf(p));
        break;
      }
      case Primitive::Kind::FillEllipse: {
        const ImVec2 c((p.x0 + p.x1) * 0.5f, (p.y0 + p.y1) * 0.5f);
        const float rx = std::abs(p.x1 - p.x0) * 0.5f, ry = std::abs(p.y1 - p.y0) * 0.5f;
        if (std::abs(rx - ry) < 0.5f) {
          dl->AddCircleFilled(c, rx, colourOf(p));
          break;
        }
        constexpr int n = 48;
        for (int i = 0; i < n; ++i) {
          const float a = 6.2831853f * static_cast<float>(i) / n;
          dl->PathLineTo(ImVec2(c.x + rx * std::cos(a), c.y + ry * std::sin(a)));
        }
        dl->PathFillConvex(colourOf(p));
        break;
      }
      case Primitive::Kind::Raster:
        if (gl && p.raster) drawRaster(dl, *gl, *p.raster, ImVec2(p.x0, p.y0), ImVec2(p.x1, p.y1));
        break;
      case Primitive::Kind::PushClip:
        dl->PushClipRect(ImVec2(p.x0, p.y0), ImVec2(p.x1, p.y1), true);
        ++clips;
        break;
      case Primitive::Kind::PopClip:
        if (clips > 0) {
          dl->PopClipRect();
          --clips;
        }
        break;
      case Primitive::Kind::Arrow: {
        const ArrowHead h = arrowHead(p);
        dl->AddLine(ImVec2(p.x0, p.y0), ImVec2(h.base_x, h.base_y), colourOf(p), thick);
        dl->AddTriangleFilled(ImVec2(p.x1, p.y1), ImVec2(h.left_x, h.left_y), ImVec2(h.right_x, h.right_y),
                              colourOf(p));
        break;
      }
      case Primitive::Kind::Ellipse: {
        const ImVec2 c((p.x0 + p.x1) * 0.5f, (p.y0 + p.y1) * 0.5f);
        const float rx = std::abs(p.x1 - p.x0) * 0.5f, ry = std::abs(p.y1 - p.y0) * 0.5f;
        constexpr int n = 48;  // ImGui 1.86 has circles only: the ellipse as a closed path
        for (int i = 0; i < n; ++i) {
          const float a = 6.2831853f * static_cast<float>(i) / n;
          dl->PathLineTo(ImVec2(c.x + rx * std::cos(a), c.y + ry * std::sin(a)));
        }
        dl->PathStroke(colourOf(p), ImDrawFlags_Closed, thick);
        break;
      }
      case Primitive::Kind::ColormapStrip: {
        const auto& table = colormapTable(p.cmap);
        constexpr int n = 64;  // gradient bands, top = the high end
        const float h = p.y1 - p.y0;
        for (int i = 0; i < n; ++i) {
          const Rgb8 top = table[static_cast<size_t>(255 - i * 255 / n)];
          const Rgb8 bottom = table[static_cast<size_t>(255 - std::min(255, (i + 1) * 255 / n))];
          const float a = p.y0 + h * static_cast<float>(i) / n, b = p.y0 + h * static_cast<float>(i + 1) / n;
          dl->AddRectFilledMultiColor(ImVec2(p.x0, a), ImVec2(p.x1, b + 0.5f), toU32(top), toU32(top), toU32(bottom),
                                      toU32(bottom));
        }
        break;
      }
      case Primitive::Kind::Text: {
        const ImVec2 ts = font->CalcTextSizeA(p.size, FLT_MAX, 0.0f, p.text.c_str());
        if (text_sink) {
          const Box b = textBox(p, ts.x, ts.y, font->Ascent * p.size / font->FontSize);
          const ImVec2 lo = dl->GetClipRectMin(), hi = dl->GetClipRectMax();
          if (b.x < hi.x && b.y < hi.y && b.right() > lo.x && b.bottom() > lo.y && !p.text.empty()) {
            text_sink->push_back({p.text, b.x, b.y, b.w, b.h, p.size, p.script});
            if (mark_sink && !p.labels.empty()) mark_sink->labels.push_back({p.text, p.labels, b});
          }
        }
        if (p.baseline) {
          dl->AddText(font, p.size, ImVec2(p.x0 - p.align_x * ts.x, p.y0 - font->Ascent * p.size / font->FontSize), colourOf(p),
                      p.text.c_str());
        } else if (!p.vertical) {
          dl->AddText(font, p.size, ImVec2(p.x0 - p.align_x * ts.x, p.y0 - p.align_y * ts.y), colourOf(p), p.text.c_str());
        } else {
          // Turned 90° counter-clockwise: the text's x runs up the screen, its y to the right.
          addTextVertical(dl, ImVec2(p.x0 - p.align_y * ts.y, p.y0 + p.align_x * ts.x), colourOf(p), p.text.c_str(), p.size);
        }
        break;
      }
    }
  }
  for (; clips > 0; --clips) dl->PopClipRect();
}

}  // namespace attn
