#include "widgets/annotations.h"

#include <algorithm>
#include <cmath>

namespace attn {

float MatrixPlacement::colX(double col) const {
  return x0 + static_cast<float>((col / static_cast<double>(cols) - u0) / (u1 - u0)) * (x1 - x0);
}
float MatrixPlacement::rowY(double row) const {
  return y0 + static_cast<float>((row / static_cast<double>(rows) - v0) / (v1 - v0)) * (y1 - y0);
}

const char* annotationKindName(Annotation::Kind k) {
  switch (k) {
    case Annotation::Kind::Ring: return "ring";
    case Annotation::Kind::Row: return "row";
    case Annotation::Kind::Column: return "column";
    case Annotation::Kind::Box: return "box";
    case Annotation::Kind::Arrow: return "arrow";
    case Annotation::Kind::Token: return "token";
  }
  return "?";
}

std::string annotationRangeError(const Annotation& a, int64_t rows, int64_t cols) {
  using K = Annotation::Kind;
  auto check = [](const char* what, int64_t v, int64_t n) -> std::string {
    if (v >= 0 && v < n) return {};
    return std::string(what) + " " + std::to_string(v) + " is outside 0.." + std::to_string(n - 1);
  };
  std::string e;
  auto add = [&](std::string s) {
    if (e.empty()) e = std::move(s);
  };
  if (a.kind != K::Column) add(check("query", a.query, rows));
  if (a.kind == K::Ring || a.kind == K::Column || a.kind == K::Box || a.kind == K::Arrow) add(check("key", a.key, cols));
  if (a.kind == K::Box || a.kind == K::Arrow) {
    add(check("query_end", a.query_end, rows));
    add(check("key_end", a.key_end, cols));
  }
  if (a.kind == K::Token) add(check("token", a.query, std::min(rows, cols)));
  return e;
}

void annotationPrimitives(Primitives& out, const MatrixPlacement& m, const std::vector<Annotation>& marks, float progress,
                          float text_px, const MeasureText& measure) {
  if (!m.valid()) return;
  using K = Annotation::Kind;
  const float t = std::clamp(progress, 0.0f, 1.0f);
  const float ease = 1.0f - (1.0f - t) * (1.0f - t);
  const float cell = std::min(m.colX(1) - m.colX(0), m.rowY(1) - m.rowY(0));
  const float thick = std::clamp(cell * 0.12f, 2.0f, 4.0f);
  auto push = [&](Primitive::Kind kind, float x0, float y0, float x1, float y1, float alpha, float thickness) -> Primitive& {
    Primitive p;
    p.kind = kind;
    p.role = Role::Accent;
    p.x0 = x0;
    p.y0 = y0;
    p.x1 = x1;
    p.y1 = y1;
    p.alpha = alpha;
    p.thickness = thickness;
    out.push_back(p);
    return out.back();
  };
  auto label = [&](const std::string& text, float x, float y, float align_x, float align_y) {
    if (text.empty()) return;
    // On a plate of the background colour, so it reads over cells and labels alike.
    const float w = measure(text, 1.0f), h = text_px * 1.25f, pad = text_px * 0.25f;
    const float left = x - align_x * w, top = y - align_y * h;
    push(Primitive::Kind::FillRect, left - pad, top - pad * 0.5f, left + w + pad, top + h + pad * 0.5f, 0.85f * ease, 0).role =
        Role::Background;
    Primitive& t = push(Primitive::Kind::Text, x, y, x, y, ease, 0);
    t.text = text;
    t.size = text_px;
    t.align_x = align_x;
    t.align_y = align_y;
  };
  // Labels go right of a mark when it sits in the matrix's left half, else left of it.
  auto sideLabel = [&](const std::string& text, float left, float right, float y) {
    const bool right_side = (left + right) * 0.5f < (m.x0 + m.x1) * 0.5f;
    label(text, right_side ? right + text_px * 0.4f : left - text_px * 0.4f, y, right_side ? 0.0f : 1.0f, 0.5f);
  };
  for (const Annotation& a : marks) {
    if (!annotationRangeError(a, m.rows, m.cols).empty()) continue;
    switch (a.kind) {
      case K::Ring: {
        const float cx = (m.colX(a.key) + m.colX(a.key + 1)) * 0.5f, cy = (m.rowY(a.query) + m.rowY(a.query + 1)) * 0.5f;
        const float r = std::max(cell * 0.75f, text_px * 0.6f) * (1.0f + 2.0f * (1.0f - ease));
        push(Primitive::Kind::Ellipse, cx - r, cy - r, cx + r, cy + r, ease, thick);
        sideLabel(a.label, cx - r, cx + r, cy);
        break;
      }
      case K::Row: {
        const float y0 = m.rowY(a.query), y1 = m.rowY(a.query + 1);
        push(Primitive::Kind::FillRect, m.x0, y0, m.x1, y1, 0.28f * ease, 0);
        push(Primitive::Kind::StrokeRect, m.x0, y0, m.x1, y1, ease, thick * 0.6f);
        label(a.label, m.x0 + text_px * 0.4f, (y0 + y1) * 0.5f, 0.0f, 0.5f);  // inside the band: the colour bar is right of it
        break;
      }
      case K::Column: {
        const float x0 = m.colX(a.key), x1 = m.colX(a.key + 1);
        push(Primitive::Kind::FillRect, x0, m.y0, x1, m.y1, 0.28f * ease, 0);
        push(Primitive::Kind::StrokeRect, x0, m.y0, x1, m.y1, ease, thick * 0.6f);
        // Inside, at its top, kept within the matrix (never over the row labels or the colour bar).
        const float half = a.label.empty() ? 0.0f : measure(a.label, 1.0f) * 0.5f + text_px * 0.3f;
        const float cx = half * 2 < m.x1 - m.x0 ? std::clamp((x0 + x1) * 0.5f, m.x0 + half, m.x1 - half) : (m.x0 + m.x1) * 0.5f;
        label(a.label, cx, m.y0 + text_px * 0.4f, 0.5f, 0.0f);
        break;
      }
      case K::Box: {
        const int64_t q0 = std::min(a.query, a.query_end), q1 = std::max(a.query, a.query_end);
        const int64_t k0 = std::min(a.key, a.key_end), k1 = std::max(a.key, a.key_end);
        const float x0 = m.colX(k0), x1 = m.colX(k1 + 1), y0 = m.rowY(q0), y1 = m.rowY(q1 + 1);
        const float grow = (1.0f - ease) * text_px * 2;
        push(Primitive::Kind::StrokeRect, x0 - grow, y0 - grow, x1 + grow, y1 + grow, ease, thick);
        sideLabel(a.label, x0, x1, (y0 + y1) * 0.5f);
        break;
      }
      case K::Arrow: {
        const float ax = (m.colX(a.key) + m.colX(a.key + 1)) * 0.5f, ay = (m.rowY(a.query) + m.rowY(a.query + 1)) * 0.5f;
        const float bx = (m.colX(a.key_end) + m.colX(a.key_end + 1)) * 0.5f,
                    by = (m.rowY(a.query_end) + m.rowY(a.query_end + 1)) * 0.5f;
        push(Primitive::Kind::Arrow, ax, ay, ax + (bx - ax) * ease, ay + (by - ay) * ease, 1.0f, thick);
        sideLabel(a.label, std::min(ax, bx), std::max(ax, bx), (ay + by) * 0.5f);
        break;
      }
      case K::Token: {
        // A bar beside the row's label and one above the column's, both the cell's width.
        const float gap = thick * 1.5f;
        const float y0 = m.rowY(a.query), y1 = m.rowY(a.query + 1), x0 = m.colX(a.query), x1 = m.colX(a.query + 1);
        push(Primitive::Kind::FillRect, m.x0 - gap - thick * 1.5f, y0, m.x0 - gap, y1, ease, 0);
        push(Primitive::Kind::FillRect, x0, m.y0 - gap - thick * 1.5f, x1, m.y0 - gap, ease, 0);
        push(Primitive::Kind::StrokeRect, x0, y0, x1, y1, ease, thick * 0.6f);
        sideLabel(a.label, x0, x1, (y0 + y1) * 0.5f);
        break;
      }
    }
  }
}

}  // namespace attn
