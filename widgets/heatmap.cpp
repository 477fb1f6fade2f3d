#include "widgets/heatmap.h"

#include "widgets/primitives_imgui.h"

#include "embedded_shaders.h"
#include "widgets/gl_util.h"
#include "widgets/value_range.h"

#include <imgui_internal.h>  // SetItemUsingMouseWheel

#include <algorithm>
#include <limits>
#include <cmath>
#include <cstdio>

namespace attn {

// [SECTION] HeatmapRenderer

HeatmapRenderer::~HeatmapRenderer() {
  for (auto& [key, tex] : textures_) glDeleteTextures(1, &tex);
  for (auto& [name, rgba] : rgba_) glDeleteTextures(1, &rgba.texture);
  for (auto& [cmap, tex] : luts_) glDeleteTextures(1, &tex);
  if (vbo_) glDeleteBuffers(1, &vbo_);
  if (vao_) glDeleteVertexArrays(1, &vao_);
  if (program_) glDeleteProgram(program_);
}

bool HeatmapRenderer::init() {
  program_ = gl::buildProgram("heatmap", kShader_heatmap_vert, kShader_heatmap_frag);
  if (!program_) return false;
  loc_display_pos_ = glGetUniformLocation(program_, "uDisplayPos");
  loc_display_size_ = glGetUniformLocation(program_, "uDisplaySize");
  loc_data_ = glGetUniformLocation(program_, "uData");
  loc_lut_ = glGetUniformLocation(program_, "uLut");
  loc_range_ = glGetUniformLocation(program_, "uRange");
  loc_data_size_ = glGetUniformLocation(program_, "uDataSize");
  loc_cell_px_ = glGetUniformLocation(program_, "uCellPx");
  loc_grid_ = glGetUniformLocation(program_, "uGridColor");
  loc_mode_ = glGetUniformLocation(program_, "uMode");
  loc_diverging_ = glGetUniformLocation(program_, "uDiverging");
  loc_gamma_ = glGetUniformLocation(program_, "uGamma");
  loc_decades_ = glGetUniformLocation(program_, "uDecades");

  GLint last_vao = 0, last_buffer = 0, last_texture = 0;
  glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &last_vao);
  glGetIntegerv(GL_ARRAY_BUFFER_BINDING, &last_buffer);
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &last_texture);
  glGenVertexArrays(1, &vao_);
  glGenBuffers(1, &vbo_);
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, vbo_);
  glBufferData(GL_ARRAY_BUFFER, 16 * sizeof(float), nullptr, GL_STREAM_DRAW);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 4 * sizeof(float), nullptr);
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, 4 * sizeof(float), reinterpret_cast<void*>(2 * sizeof(float)));

  // One 256×1 RGB lookup texture per colormap, from the same table the
  // figure export uses.
  for (Colormap c : allColormaps()) {
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB8, 256, 1, 0, GL_RGB, GL_UNSIGNED_BYTE, colormapTable(c).data());
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    luts_[c] = tex;
  }
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(last_texture));
  glBindBuffer(GL_ARRAY_BUFFER, static_cast<GLuint>(last_buffer));
  glBindVertexArray(static_cast<GLuint>(last_vao));
  return true;
}

void HeatmapRenderer::beginFrame(uint64_t data_generation) {
  commands_.clear();
  ++frame_;
  // Tiles not drawn last frame belong to an old zoom: drop them with their
  // textures (a new tile may reuse the address).
  for (auto it = tiles_.begin(); it != tiles_.end();) {
    if (it->second.last_frame + 1 >= frame_ && data_generation == generation_) {
      ++it;
      continue;
    }
    dropTexture(it->second.values.data(), it->second.values.rows(), it->second.values.cols());
    it = tiles_.erase(it);
  }
  if (data_generation == generation_) return;
  generation_ = data_generation;
  for (auto& [key, tex] : textures_) glDeleteTextures(1, &tex);
  textures_.clear();
  for (auto& [name, rgba] : rgba_) rgba.version.clear();  // a new result: every picture is stale
  masked_.clear();
}

const float* HeatmapRenderer::maskedData(const float* data, int64_t rows, int64_t cols, const Mat& mask) {
  if (mask.rows() != rows || mask.cols() != cols) return data;
  Mat& m = masked_[data];
  if (m.size() == 0) {
    m = Eigen::Map<const Mat>(data, rows, cols);
    m = (mask.array() == 0.0f).select(std::numeric_limits<float>::quiet_NaN(), m);
  }
  return m.data();
}

void HeatmapRenderer::dropTexture(const float* data, int64_t rows, int64_t cols) {
  const auto it = textures_.find(std::make_tuple(data, rows, cols));
  if (it == textures_.end()) return;
  glDeleteTextures(1, &it->second);
  textures_.erase(it);
}

const Mat& HeatmapRenderer::sparseTile(const SparseRows& s, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                                       int64_t out_rows, int64_t out_cols, RasterValue what) {
  Tile& t = tiles_[TileKey(&s, r0, r1, c0, c1, out_rows, out_cols, what)];
  // Values: a cell with no entry is NaN, which the shader draws grey like a
  // masked cell, so the pattern stays visible where its weights are tiny.
  // Sets: no entry is 0 (no bits).
  const float empty = what == RasterValue::Values ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
  if (t.values.size() == 0) t.values = rasterize(s, r0, r1, c0, c1, out_rows, out_cols, what, empty);
  t.last_frame = frame_;
  return t.values;
}

ImTextureID HeatmapRenderer::rgbaTexture(const std::string& name, const std::string& version, int w, int h,
                                         const std::function<void(std::vector<uint32_t>&)>& fill) {
  Rgba& t = rgba_[name];
  if (t.texture && t.version == version) return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(t.texture));
  std::vector<uint32_t> px(static_cast<size_t>(w) * static_cast<size_t>(h), 0);
  fill(px);
  GLint last_texture = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &last_texture);
  if (!t.texture) glGenTextures(1, &t.texture);
  glBindTexture(GL_TEXTURE_2D, t.texture);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(last_texture));
  t.version = version;
  return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(t.texture));
}

GLuint HeatmapRenderer::textureFor(const float* data, int64_t rows, int64_t cols) {
  const auto key = std::make_tuple(data, rows, cols);
  if (auto it = textures_.find(key); it != textures_.end()) return it->second;
  GLint max_size = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
  // Beyond the texture limit, keep every k-th row/column (nearest sampling).
  const int64_t step_r = (rows + max_size - 1) / max_size, step_c = (cols + max_size - 1) / max_size;
  const int64_t tr = (rows + step_r - 1) / step_r, tc = (cols + step_c - 1) / step_c;
  std::vector<float> sampled;
  const float* upload = data;
  if (step_r > 1 || step_c > 1) {
    sampled.resize(static_cast<size_t>(tr * tc));
    for (int64_t r = 0; r < tr; ++r)
      for (int64_t c = 0; c < tc; ++c) sampled[static_cast<size_t>(r * tc + c)] = data[r * step_r * cols + c * step_c];
    upload = sampled.data();
  }
  GLint last_texture = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &last_texture);
  GLuint tex = 0;
  glGenTextures(1, &tex);
  glBindTexture(GL_TEXTURE_2D, tex);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, static_cast<GLsizei>(tc), static_cast<GLsizei>(tr), 0, GL_RED, GL_FLOAT,
               upload);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(last_texture));
  textures_[key] = tex;
  return tex;
}

void HeatmapRenderer::draw(ImDrawList* dl, const float* data, int64_t rows, int64_t cols, ImVec2 p0, ImVec2 p1,
                           ImVec2 uv0, ImVec2 uv1, const ValueRange& range, Colormap cmap, ImVec4 grid_color) {
  if (!program_ || !data || rows <= 0 || cols <= 0) return;
  Command& c = commands_.emplace_back();
  c.self = this;
  c.texture = textureFor(data, rows, cols);
  c.cols = static_cast<float>(cols);
  c.rows = static_cast<float>(rows);
  const float v[16] = {p0.x, p0.y, uv0.x, uv0.y, p1.x, p0.y, uv1.x, uv0.y,
                       p0.x, p1.y, uv0.x, uv1.y, p1.x, p1.y, uv1.x, uv1.y};
  std::copy(std::begin(v), std::end(v), c.verts);
  c.range[0] = range.lo;
  c.range[1] = range.hi;
  c.mode = static_cast<int>(range.mode);
  c.diverging = range.diverging ? 1 : 0;
  c.gamma = range.gamma;
  c.decades = range.decades;
  c.cell_px = std::min((p1.x - p0.x) / (c.cols * (uv1.x - uv0.x)), (p1.y - p0.y) / (c.rows * (uv1.y - uv0.y)));
  c.grid[0] = grid_color.x;
  c.grid[1] = grid_color.y;
  c.grid[2] = grid_color.z;
  c.grid[3] = grid_color.w;
  c.cmap = cmap;
  dl->AddCallback(&HeatmapRenderer::callback, &c);
  dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

void HeatmapRenderer::callback(const ImDrawList*, const ImDrawCmd* cmd) {
  const Command* c = static_cast<const Command*>(cmd->UserCallbackData);
  c->self->execute(*c, cmd);
}

void HeatmapRenderer::execute(const Command& c, const ImDrawCmd* cmd) {
  const ImDrawData* dd = ImGui::GetDrawData();
  if (!dd) return;
  gl::StateBackup backup;
  // The backend does not set the scissor for callbacks: clip like it does.
  const ImVec2 off = dd->DisplayPos, scale = dd->FramebufferScale;
  const float fb_height = dd->DisplaySize.y * scale.y;
  const ImVec2 clip_min((cmd->ClipRect.x - off.x) * scale.x, (cmd->ClipRect.y - off.y) * scale.y);
  const ImVec2 clip_max((cmd->ClipRect.z - off.x) * scale.x, (cmd->ClipRect.w - off.y) * scale.y);
  if (clip_max.x <= clip_min.x || clip_max.y <= clip_min.y) return;
  glEnable(GL_SCISSOR_TEST);
  glScissor(static_cast<GLint>(clip_min.x), static_cast<GLint>(fb_height - clip_max.y),
            static_cast<GLsizei>(clip_max.x - clip_min.x), static_cast<GLsizei>(clip_max.y - clip_min.y));
  glDisable(GL_BLEND);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_CULL_FACE);
  glUseProgram(program_);
  glUniform2f(loc_display_pos_, off.x, off.y);
  glUniform2f(loc_display_size_, dd->DisplaySize.x, dd->DisplaySize.y);
  glUniform1i(loc_data_, 0);
  glUniform1i(loc_lut_, 1);
  glUniform2f(loc_range_, c.range[0], c.range[1]);
  glUniform1i(loc_mode_, c.mode);
  glUniform1i(loc_diverging_, c.diverging);
  glUniform1f(loc_gamma_, c.gamma);
  glUniform1f(loc_decades_, c.decades);
  glUniform2f(loc_data_size_, c.cols, c.rows);
  glUniform1f(loc_cell_px_, c.cell_px);
  glUniform4f(loc_grid_, c.grid[0], c.grid[1], c.grid[2], c.grid[3]);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, c.texture);
  glBindSampler(0, 0);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, luts_.at(c.cmap));
  glBindSampler(1, 0);
  glBindVertexArray(vao_);
  glBindBuffer(GL_ARRAY_BUFFER, vbo_);
  glBufferData(GL_ARRAY_BUFFER, sizeof c.verts, c.verts, GL_STREAM_DRAW);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

// [SECTION] heatmap()

namespace {


std::string labelOf(const std::vector<std::string>* labels, int64_t i) {
  if (labels && i >= 0 && i < static_cast<int64_t>(labels->size())) return (*labels)[static_cast<size_t>(i)];
  return std::to_string(i);
}

float maxLabelWidth(const std::vector<std::string>* labels, int64_t n) {
  float w = 0.0f;
  // Long axes are thinned anyway; measuring a sample bounds the cost.
  const int64_t step = std::max<int64_t>(1, n / 512);
  for (int64_t i = 0; i < n; i += step) w = std::max(w, ImGui::CalcTextSize(labelOf(labels, i).c_str()).x);
  return w;
}

// The screen rectangle of the matrix and the part of it shown.
struct Frame {
  ImVec2 p0, p1, uv0, uv1;
  int64_t rows, cols;
  float x(double col) const { return p0.x + static_cast<float>((col / cols - uv0.x) / (uv1.x - uv0.x)) * (p1.x - p0.x); }
  float y(double row) const { return p0.y + static_cast<float>((row / rows - uv0.y) / (uv1.y - uv0.y)) * (p1.y - p0.y); }
  float cellW() const { return (p1.x - p0.x) / (cols * (uv1.x - uv0.x)); }
  float cellH() const { return (p1.y - p0.y) / (rows * (uv1.y - uv0.y)); }
  int64_t firstRow() const { return std::clamp<int64_t>(static_cast<int64_t>(std::floor(uv0.y * rows)), 0, rows - 1); }
  int64_t lastRow() const { return std::clamp<int64_t>(static_cast<int64_t>(std::ceil(uv1.y * rows)) - 1, 0, rows - 1); }
  int64_t firstCol() const { return std::clamp<int64_t>(static_cast<int64_t>(std::floor(uv0.x * cols)), 0, cols - 1); }
  int64_t lastCol() const { return std::clamp<int64_t>(static_cast<int64_t>(std::ceil(uv1.x * cols)) - 1, 0, cols - 1); }
};

void clampZoom(HeatmapZoom& z, int64_t rows, int64_t cols) {
  const float max_zoom = std::max(1.0f, static_cast<float>(std::max(rows, cols)) / 2.0f);
  z.zoom = std::clamp(z.zoom, 1.0f, max_zoom);
  const float half = 0.5f / z.zoom;
  z.center.x = std::clamp(z.center.x, half, 1.0f - half);
  z.center.y = std::clamp(z.center.y, half, 1.0f - half);
}

void handleInput(const Frame& f, HeatmapZoom& z, HeatmapEvents& ev) {
  ImGuiIO& io = ImGui::GetIO();
  ImGui::SetCursorScreenPos(f.p0);
  ImGui::InvisibleButton("##heatmap", ImVec2(std::max(1.0f, f.p1.x - f.p0.x), std::max(1.0f, f.p1.y - f.p0.y)));
  ImGui::SetItemUsingMouseWheel();
  ev.hovered = ImGui::IsItemHovered();
  const ImVec2 size(f.p1.x - f.p0.x, f.p1.y - f.p0.y);
  if (ev.hovered && io.MouseWheel != 0.0f) {
    // Zoom about the mouse: the data point under the cursor stays put.
    const ImVec2 frac((io.MousePos.x - f.p0.x) / size.x, (io.MousePos.y - f.p0.y) / size.y);
    const ImVec2 under(f.uv0.x + frac.x * (f.uv1.x - f.uv0.x), f.uv0.y + frac.y * (f.uv1.y - f.uv0.y));
    z.zoom *= std::pow(1.25f, io.MouseWheel);
    clampZoom(z, f.rows, f.cols);
    z.center = ImVec2(under.x - (frac.x - 0.5f) / z.zoom, under.y - (frac.y - 0.5f) / z.zoom);
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f)) {
    z.center.x -= io.MouseDelta.x / size.x / z.zoom;
    z.center.y -= io.MouseDelta.y / size.y / z.zoom;
  }
  if (ev.hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) z.reset();
  ev.clicked = ImGui::IsItemDeactivated() && ev.hovered && io.MouseDragMaxDistanceSqr[0] < 16.0f;
  clampZoom(z, f.rows, f.cols);
  if (ev.hovered) {
    const float u = f.uv0.x + (io.MousePos.x - f.p0.x) / size.x * (f.uv1.x - f.uv0.x);
    const float v = f.uv0.y + (io.MousePos.y - f.p0.y) / size.y * (f.uv1.y - f.uv0.y);
    ev.col = std::clamp<int64_t>(static_cast<int64_t>(u * f.cols), 0, f.cols - 1);
    ev.row = std::clamp<int64_t>(static_cast<int64_t>(v * f.rows), 0, f.rows - 1);
  }
}

void drawRowLabels(ImDrawList* dl, const Frame& f, const MatrixView& view, float x_right, int64_t hover_row) {
  const float line = ImGui::GetTextLineHeight();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const int64_t step = labelStride(f.cellH(), line * 1.05f);
  for (int64_t r = f.firstRow() / step * step; r <= f.lastRow(); r += step) {
    const std::string s = labelOf(view.row_labels, r);
    const ImVec2 ts = ImGui::CalcTextSize(s.c_str());
    dl->AddText(ImVec2(x_right - ts.x, f.y(r + 0.5) - ts.y * 0.5f), text, s.c_str());
  }
  if (hover_row >= 0) {
    const std::string s = labelOf(view.row_labels, hover_row);
    const ImVec2 ts = ImGui::CalcTextSize(s.c_str());
    const ImVec2 a(x_right - ts.x - 2, f.y(hover_row + 0.5) - ts.y * 0.5f - 1);
    dl->AddRectFilled(a, ImVec2(x_right + 2, a.y + ts.y + 2), ImGui::GetColorU32(ImGuiCol_Header), 3.0f);
    dl->AddText(ImVec2(a.x + 2, a.y + 1), text, s.c_str());
  }
}

void drawColLabels(ImDrawList* dl, const Frame& f, const MatrixView& view, float y_bottom, bool vertical,
                   float max_width, int64_t hover_col) {
  const float line = ImGui::GetTextLineHeight();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const float need = vertical ? line * 1.05f : max_width + line * 0.5f;
  const int64_t step = labelStride(f.cellW(), need);
  auto put = [&](int64_t c, bool highlight) {
    const std::string s = labelOf(view.col_labels, c);
    const ImVec2 ts = ImGui::CalcTextSize(s.c_str());
    const float cx = f.x(c + 0.5);
    if (highlight) {
      const ImVec2 a = vertical ? ImVec2(cx - ts.y * 0.5f - 1, y_bottom - ts.x - 2) : ImVec2(cx - ts.x * 0.5f - 2, y_bottom - ts.y - 1);
      const ImVec2 b = vertical ? ImVec2(cx + ts.y * 0.5f + 1, y_bottom + 2) : ImVec2(cx + ts.x * 0.5f + 2, y_bottom + 1);
      dl->AddRectFilled(a, b, ImGui::GetColorU32(ImGuiCol_Header), 3.0f);
    }
    if (vertical)
      addTextVertical(dl, ImVec2(cx - ts.y * 0.5f, y_bottom), text, s.c_str());
    else
      dl->AddText(ImVec2(cx - ts.x * 0.5f, y_bottom - ts.y), text, s.c_str());
  };
  for (int64_t c = f.firstCol() / step * step; c <= f.lastCol(); c += step) put(c, false);
  if (hover_col >= 0) put(hover_col, true);
}

void drawOverlays(ImDrawList* dl, const Frame& f, const MatrixView& view) {
  const ImU32 light = IM_COL32(255, 255, 255, 235), dark = IM_COL32(0, 0, 0, 200);
  if (const Array* w = view.query_window; w && w->rank() == 2 && w->shape[1] == 2 && w->shape[0] == view.rows) {
    // Rows sharing a window become one outline.
    int64_t start = 0;
    for (int64_t r = 1; r <= view.rows; ++r) {
      const bool same = r < view.rows && w->data[2 * r] == w->data[2 * start] && w->data[2 * r + 1] == w->data[2 * start + 1];
      if (same) continue;
      const float a = w->data[2 * start], b = w->data[2 * start + 1];
      if (std::isfinite(a) && std::isfinite(b) && b >= a) {
        const ImVec2 p0(f.x(a), f.y(static_cast<double>(start))), p1(f.x(b + 1.0), f.y(static_cast<double>(r)));
        dl->AddRect(p0, p1, dark, 0.0f, 0, 3.0f);
        dl->AddRect(p0, p1, light, 0.0f, 0, 1.5f);
      }
      start = r;
    }
  }
  if (const Array* p = view.query_position; p && p->size() == view.rows) {
    const float rad = std::clamp(std::min(f.cellW(), f.cellH()) * 0.3f, 2.5f, ImGui::GetTextLineHeight() * 0.4f);
    for (int64_t r = f.firstRow(); r <= f.lastRow(); ++r) {
      const float pos = p->data[static_cast<size_t>(r)];
      if (!std::isfinite(pos)) continue;
      const ImVec2 c(f.x(pos + 0.5), f.y(r + 0.5));
      const ImVec2 d[4] = {{c.x, c.y - rad}, {c.x + rad, c.y}, {c.x, c.y + rad}, {c.x - rad, c.y}};
      dl->AddConvexPolyFilled(d, 4, light);
      dl->AddPolyline(d, 4, dark, ImDrawFlags_Closed, 1.5f);
    }
  }
}

// Category of entry i of `cats` as " · bucket 3", or "" without categories.
std::string categoryText(const std::vector<int32_t>* cats, int64_t i, const std::string& axis) {
  if (!cats || i < 0 || i >= static_cast<int64_t>(cats->size())) return "";
  return " \xC2\xB7 " + axis + " " + std::to_string((*cats)[static_cast<size_t>(i)]);
}

void drawTooltip(const MatrixView& view, int64_t r, int64_t c) {
  ImGui::BeginTooltip();
  ImGui::Text("%s %lld: %s%s", view.row_axis.c_str(), static_cast<long long>(r), labelOf(view.row_labels, r).c_str(),
              categoryText(view.row_categories, r, view.category_axis).c_str());
  ImGui::Text("%s %lld: %s%s", view.col_axis.c_str(), static_cast<long long>(c), labelOf(view.col_labels, c).c_str(),
              categoryText(view.col_categories, c, view.category_axis).c_str());
  if (view.key_bands)
    for (const KeyBand& b : *view.key_bands)
      if (c >= b.begin && c < b.end) ImGui::TextDisabled("in %s", b.label.c_str());
  ImGui::Separator();
  if (view.sparse)
    sparseEntryText(*view.sparse, r, c, view.value_label, view.set_names);
  else
    ImGui::Text("%s: %s", view.value_label.c_str(), formatValueShort(view.data[r * view.cols + c]).c_str());
  if (view.scores && r < view.scores->rows() && c < view.scores->cols())
    ImGui::Text("%s: %s", view.score_label.c_str(), formatValueShort((*view.scores)(r, c)).c_str());
  if (view.mask && view.mask->size() && r < view.mask->rows() && c < view.mask->cols())
    ImGui::TextUnformatted((*view.mask)(r, c) != 0.0f ? "mask: key allowed" : "mask: key masked");
  if (view.query_position && view.query_position->size() == view.rows)
    ImGui::Text("marker at key %s", formatValueShort(view.query_position->data[static_cast<size_t>(r)]).c_str());
  if (view.query_window && view.query_window->size() == 2 * view.rows)
    ImGui::Text("window: keys %s – %s", formatValueShort(view.query_window->data[static_cast<size_t>(2 * r)]).c_str(),
                formatValueShort(view.query_window->data[static_cast<size_t>(2 * r + 1)]).c_str());
  ImGui::EndTooltip();
}

// Dividers at the band boundaries across the matrix, labels in the strip
// [y0, y1) above the columns.
void drawKeyBands(ImDrawList* dl, const Frame& f, const std::vector<KeyBand>& bands, float y0, float y1) {
  const ImU32 light = IM_COL32(255, 255, 255, 230), dark = IM_COL32(0, 0, 0, 200);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), rule = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  dl->PushClipRect(f.p0, f.p1, true);
  for (const KeyBand& b : bands)
    for (int64_t c : {b.begin, b.end})
      if (c > 0 && c < f.cols) {
        const float x = std::round(f.x(static_cast<double>(c)));
        dl->AddLine(ImVec2(x, f.p0.y), ImVec2(x, f.p1.y), dark, 3.0f);
        dl->AddLine(ImVec2(x, f.p0.y), ImVec2(x, f.p1.y), light, 1.5f);
      }
  dl->PopClipRect();
  dl->PushClipRect(ImVec2(f.p0.x, y0), ImVec2(f.p1.x, y1), true);
  for (const KeyBand& b : bands) {
    const float x0 = std::max(f.p0.x, f.x(static_cast<double>(b.begin))) + 2;
    const float x1 = std::min(f.p1.x, f.x(static_cast<double>(b.end))) - 2;
    if (x1 <= x0) continue;
    dl->AddLine(ImVec2(x0, y1 - 2), ImVec2(x1, y1 - 2), rule, 1.5f);
    const ImVec2 ts = ImGui::CalcTextSize(b.label.c_str());
    dl->AddText(ImVec2(std::max(x0, (x0 + x1 - ts.x) * 0.5f), y0), text, b.label.c_str());
  }
  dl->PopClipRect();
}

// Colour strips of per-row / per-column categories just outside the matrix
// (`strip` pixels wide), one rect per run of equal categories in view.
void drawCategoryStrips(ImDrawList* dl, const Frame& f, const MatrixView& view, float strip) {
  auto runs = [](const std::vector<int32_t>& cats, int64_t first, int64_t last, auto&& draw) {
    for (int64_t a = first; a <= last && a < static_cast<int64_t>(cats.size());) {
      int64_t b = a + 1;
      while (b <= last && b < static_cast<int64_t>(cats.size()) && cats[static_cast<size_t>(b)] == cats[static_cast<size_t>(a)]) ++b;
      draw(a, b, cats[static_cast<size_t>(a)]);
      a = b;
    }
  };
  if (view.row_categories) {
    dl->PushClipRect(ImVec2(f.p0.x - strip - 2, f.p0.y), ImVec2(f.p0.x, f.p1.y), true);
    runs(*view.row_categories, f.firstRow(), f.lastRow(), [&](int64_t a, int64_t b, int32_t c) {
      dl->AddRectFilled(ImVec2(f.p0.x - strip - 2, f.y(static_cast<double>(a))), ImVec2(f.p0.x - 2, f.y(static_cast<double>(b))),
                        toU32(headColor(c)));
    });
    dl->PopClipRect();
  }
  if (view.col_categories) {
    dl->PushClipRect(ImVec2(f.p0.x, f.p0.y - strip - 2), ImVec2(f.p1.x, f.p0.y), true);
    runs(*view.col_categories, f.firstCol(), f.lastCol(), [&](int64_t a, int64_t b, int32_t c) {
      dl->AddRectFilled(ImVec2(f.x(static_cast<double>(a)), f.p0.y - strip - 2), ImVec2(f.x(static_cast<double>(b)), f.p0.y - 2),
                        toU32(headColor(c)));
    });
    dl->PopClipRect();
  }
}

// Divider lines across the matrix before the given rows and columns.
void drawDividers(ImDrawList* dl, const Frame& f, const MatrixView& view) {
  const ImU32 light = IM_COL32(255, 255, 255, 230), dark = IM_COL32(0, 0, 0, 200);
  // Dividers closer than 6 px are thinned (every chunk of 64 at L = 65,536 would be a solid sheet).
  float last = -1e9f;
  if (view.col_dividers)
    for (const int64_t c : *view.col_dividers) {
      if (c < f.firstCol() || c > f.lastCol()) continue;
      const float x = std::round(f.x(static_cast<double>(c)));
      if (x - last < 6.0f) continue;
      last = x;
      dl->AddLine(ImVec2(x, f.p0.y), ImVec2(x, f.p1.y), dark, 2.5f);
      dl->AddLine(ImVec2(x, f.p0.y), ImVec2(x, f.p1.y), light, 1.0f);
    }
  last = -1e9f;
  if (view.row_dividers)
    for (const int64_t r : *view.row_dividers) {
      if (r < f.firstRow() || r > f.lastRow()) continue;
      const float y = std::round(f.y(static_cast<double>(r)));
      if (y - last < 6.0f) continue;
      last = y;
      dl->AddLine(ImVec2(f.p0.x, y), ImVec2(f.p1.x, y), dark, 2.5f);
      dl->AddLine(ImVec2(f.p0.x, y), ImVec2(f.p1.x, y), light, 1.0f);
    }
}

// The visible tile of a sparse matrix, rasterized to about its on-screen
// pixel size and drawn over the cells it covers.
void drawSparse(HeatmapRenderer& gl, ImDrawList* dl, const Frame& f, const SparseRows& s, const HeatmapStyle& style,
                ImVec4 grid) {
  const int64_t r0 = f.firstRow(), r1 = f.lastRow() + 1, c0 = f.firstCol(), c1 = f.lastCol() + 1;
  const ImVec2 a(f.x(static_cast<double>(c0)), f.y(static_cast<double>(r0)));
  const ImVec2 b(f.x(static_cast<double>(c1)), f.y(static_cast<double>(r1)));
  const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  const int64_t out_cols = std::max<int64_t>(1, static_cast<int64_t>(std::ceil((b.x - a.x) * scale.x)));
  const int64_t out_rows = std::max<int64_t>(1, static_cast<int64_t>(std::ceil((b.y - a.y) * scale.y)));
  const Mat& tile = gl.sparseTile(s, r0, r1, c0, c1, out_rows, out_cols, RasterValue::Values);
  dl->PushClipRect(f.p0, f.p1, true);
  gl.draw(dl, tile.data(), tile.rows(), tile.cols(), a, b, ImVec2(0, 0), ImVec2(1, 1), style.range, style.colormap, grid);
  dl->PopClipRect();
}

}  // namespace

void sparseEntryText(const SparseRows& s, int64_t r, int64_t c, const std::string& value_label,
                     const std::vector<std::string>* set_names) {
  // Row r's keys are sorted: binary search.
  const auto begin = s.indices.begin() + s.rowBegin(r), end = s.indices.begin() + s.rowEnd(r);
  const auto it = std::lower_bound(begin, end, static_cast<int32_t>(c));
  if (it == end || *it != c) {
    ImGui::Text("%s: 0 (not in the pattern)", value_label.c_str());
  } else {
    const size_t e = static_cast<size_t>(it - s.indices.begin());
    ImGui::Text("%s: %s", value_label.c_str(), formatValueShort(s.values.empty() ? 1.0f : s.values[e]).c_str());
    if (!s.sets.empty() && set_names) {
      std::string names;
      for (size_t b = 0; b < set_names->size() && b < 8; ++b)
        if (s.sets[e] >> b & 1) names += (names.empty() ? "" : ", ") + (*set_names)[b];
      ImGui::Text("admitted by %s", names.c_str());
    }
  }
  ImGui::TextDisabled("row %lld has %lld connections", static_cast<long long>(r),
                      static_cast<long long>(s.rowEnd(r) - s.rowBegin(r)));
}

void addTextVertical(ImDrawList* dl, ImVec2 pos, ImU32 col, const char* text, float size) {
  // Glyphs are culled against the clip rect before we rotate them, so cull
  // against the clip rect rotated back (+90°); the GPU scissor still clips
  // the rotated quads with the real one.
  const ImVec4 c = dl->_ClipRectStack.back();
  const ImVec4 unrotated(pos.x + pos.y - c.w, pos.y + c.x - pos.x, pos.x + pos.y - c.y, pos.y + c.z - pos.x);
  const int first = dl->VtxBuffer.Size;
  ImGui::GetFont()->RenderText(dl, size > 0.0f ? size : ImGui::GetFontSize(), pos, col, unrotated, text, nullptr);
  // Rotate the new glyph quads by −90° about `pos`: (dx, dy) → (dy, −dx).
  for (int i = first; i < dl->VtxBuffer.Size; ++i) {
    ImDrawVert& v = dl->VtxBuffer[i];
    const float dx = v.pos.x - pos.x, dy = v.pos.y - pos.y;
    v.pos = ImVec2(pos.x + dy, pos.y - dx);
  }
}

void colorbar(ImDrawList* dl, ImVec2 p0, ImVec2 size, Colormap cmap, const ValueRange& range, const std::string& caption) {
  // The same colour bar as the figures' (widgets/primitives.h), with the padding the screen's views leave.
  const float px = ImGui::GetFontSize();
  Primitives prims;
  colorbarPrimitives(prims, p0.x, p0.y, size.x, size.y, cmap, range, caption, px, imguiMeasure(px));
  drawPrimitives(dl, prims);
}

HeatmapEvents heatmap(const char* id, const MatrixView& view, const HeatmapStyle& style, HeatmapZoom& zoom,
                      HeatmapRenderer& gl, ImVec2 size) {
  HeatmapEvents ev;
  if ((!view.data && !view.sparse) || view.rows <= 0 || view.cols <= 0 || size.x < 8 || size.y < 8) {
    ImGui::Dummy(size);
    return ev;
  }
  ImGui::PushID(id);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float line = ImGui::GetTextLineHeight(), pad = line * 0.4f;
  const float rows = static_cast<float>(view.rows), cols = static_cast<float>(view.cols);
  clampZoom(zoom, view.rows, view.cols);

  // Margins: row labels left, column labels on top, colorbar right.
  const bool bands = view.key_bands && !view.key_bands->empty();
  const float band_h = bands ? line + pad : 0.0f;
  const float strip = line * 0.6f;
  const float row_strip = view.row_categories ? strip + 2 : 0.0f, col_strip = view.col_categories ? strip + 2 : 0.0f;
  float left = row_strip, top = band_h + col_strip, right = 0;
  const float col_label_w = style.labels ? maxLabelWidth(view.col_labels, view.cols) : 0.0f;
  if (style.labels) {
    left += std::min(maxLabelWidth(view.row_labels, view.rows), size.x * 0.35f) + pad * 2;
    top += line + pad;
  }
  const float bar_w = line * 0.9f;
  if (style.colorbar) right = pad * 2 + bar_w + 8 + ImGui::CalcTextSize("-0.0000").x + line * 1.5f;

  auto fit = [&](float l, float t, ImVec2& cell) {
    const float aw = std::max(1.0f, size.x - l - right), ah = std::max(1.0f, size.y - t - pad);
    cell = ImVec2(aw / cols, ah / rows);
    cell.x = std::min(cell.x, cell.y * style.max_cell_aspect);
    cell.y = std::min(cell.y, cell.x * style.max_cell_aspect);
  };
  ImVec2 cell;
  fit(left, top, cell);
  const bool vertical = style.labels && col_label_w > cell.x * zoom.zoom - pad;
  if (vertical) {
    top = band_h + col_strip + std::min(col_label_w, size.y * 0.35f) + pad;
    fit(left, top, cell);
  }
  const ImVec2 extent(cell.x * cols, cell.y * rows);
  const float slack = std::max(0.0f, size.x - left - right - extent.x) * 0.5f;
  Frame f;
  f.rows = view.rows;
  f.cols = view.cols;
  f.p0 = ImVec2(std::floor(origin.x + left + slack), std::floor(origin.y + top));
  f.p1 = ImVec2(f.p0.x + std::floor(extent.x), f.p0.y + std::floor(extent.y));
  const float half = 0.5f / zoom.zoom;
  f.uv0 = ImVec2(zoom.center.x - half, zoom.center.y - half);
  f.uv1 = ImVec2(zoom.center.x + half, zoom.center.y + half);

  handleInput(f, zoom, ev);
  // Input may have moved the view; redraw with the updated window.
  f.uv0 = ImVec2(zoom.center.x - 0.5f / zoom.zoom, zoom.center.y - 0.5f / zoom.zoom);
  f.uv1 = ImVec2(zoom.center.x + 0.5f / zoom.zoom, zoom.center.y + 0.5f / zoom.zoom);
  ev.placed = {f.p0.x, f.p0.y, f.p1.x, f.p1.y, f.uv0.x, f.uv0.y, f.uv1.x, f.uv1.y, f.rows, f.cols};

  const ImVec4 grid = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  const ImVec4 grid_color(grid.x, grid.y, grid.z, 0.55f);
  if (view.sparse)
    drawSparse(gl, dl, f, *view.sparse, style, grid_color);
  else
    gl.draw(dl, view.mask && view.mask->size() ? gl.maskedData(view.data, view.rows, view.cols, *view.mask) : view.data,
            view.rows, view.cols, f.p0, f.p1, f.uv0, f.uv1, style.range, style.colormap, grid_color);
  if (bands) drawKeyBands(dl, f, *view.key_bands, origin.y, origin.y + band_h);
  dl->PushClipRect(f.p0, f.p1, true);
  drawOverlays(dl, f, view);
  drawDividers(dl, f, view);
  if (ev.hovered) {
    const ImVec2 a(f.x(static_cast<double>(ev.col)), f.y(static_cast<double>(ev.row)));
    const ImVec2 b(f.x(ev.col + 1.0), f.y(ev.row + 1.0));
    dl->AddRect(a, b, IM_COL32(0, 0, 0, 220), 0.0f, 0, 3.0f);
    dl->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0.0f, 0, 1.5f);
  }
  dl->PopClipRect();
  dl->AddRect(ImVec2(f.p0.x - 1, f.p0.y - 1), ImVec2(f.p1.x + 1, f.p1.y + 1), ImGui::GetColorU32(ImGuiCol_Border));
  drawCategoryStrips(dl, f, view, strip);
  if (style.highlight)
    dl->AddRect(ImVec2(f.p0.x - 3, f.p0.y - 3), ImVec2(f.p1.x + 3, f.p1.y + 3), ImGui::GetColorU32(ImGuiCol_PlotHistogram),
                2.0f, 0, 3.0f);

  if (style.labels) {
    dl->PushClipRect(ImVec2(origin.x, f.p0.y - line), ImVec2(f.p0.x - row_strip, f.p1.y + line), true);
    drawRowLabels(dl, f, view, f.p0.x - pad - row_strip, ev.row);
    dl->PopClipRect();
    dl->PushClipRect(ImVec2(f.p0.x - line, origin.y + band_h), ImVec2(f.p1.x + line, f.p0.y - col_strip), true);
    drawColLabels(dl, f, view, f.p0.y - pad * 0.5f - col_strip, vertical, col_label_w, ev.col);
    dl->PopClipRect();
    // Axis captions in the corner the labels leave free.
    const std::string col_caption = view.col_axis + " \xE2\x86\x92", row_caption = view.row_axis + " \xE2\x86\x93";
    const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    const ImVec2 cs = ImGui::CalcTextSize(col_caption.c_str());
    const float caption_w = std::max(cs.x, ImGui::CalcTextSize(row_caption.c_str()).x);
    if (top >= line * 2 + pad && f.p0.x - origin.x >= caption_w + pad) {
      dl->AddText(ImVec2(f.p0.x - pad - cs.x, f.p0.y - pad - line * 2), dim, col_caption.c_str());
      dl->AddText(ImVec2(f.p0.x - pad - ImGui::CalcTextSize(row_caption.c_str()).x, f.p0.y - pad - line), dim,
                  row_caption.c_str());
    }
  }
  if (style.colorbar)
    colorbar(dl, ImVec2(f.p1.x + pad * 2, f.p0.y), ImVec2(bar_w, f.p1.y - f.p0.y), style.colormap, style.range,
             view.value_label);
  if (ev.hovered && style.tooltip) drawTooltip(view, ev.row, ev.col);

  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(size);
  ImGui::PopID();
  return ev;
}

}  // namespace attn
