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

const Mat& HeatmapRenderer::denseTile(const float* data, int64_t rows, int64_t cols, const Mat* mask, int64_t r0, int64_t r1,
                                      int64_t c0, int64_t c1, int64_t out_rows, int64_t out_cols) {
  Tile& t = tiles_[TileKey(data, r0, r1, c0, c1, out_rows, out_cols, RasterValue::Values)];
  if (t.values.size() == 0) {
    const Eigen::Map<const Mat> all(data, rows, cols);
    const Mat mask_window = mask && mask->size() ? Mat(mask->block(r0, c0, r1 - r0, c1 - c0)) : Mat();
    t.values = poolDense(all.block(r0, c0, r1 - r0, c1 - c0), mask_window.size() ? &mask_window : nullptr, out_rows, out_cols,
                         std::numeric_limits<float>::quiet_NaN());
  }
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

void clampZoom(HeatmapZoom& z, int64_t rows, int64_t cols) {
  const float max_zoom = std::max(1.0f, static_cast<float>(std::max(rows, cols)) / 2.0f);
  z.zoom = std::clamp(z.zoom, 1.0f, max_zoom);
  const float half = 0.5f / z.zoom;
  z.center.x = std::clamp(z.center.x, half, 1.0f - half);
  z.center.y = std::clamp(z.center.y, half, 1.0f - half);
}

void zoomWindow(const HeatmapZoom& z, MatrixStyle& s) {
  const float half = 0.5f / z.zoom;
  s.u0 = z.center.x - half, s.v0 = z.center.y - half, s.u1 = z.center.x + half, s.v1 = z.center.y + half;
}

void handleInput(const MatrixPlacement& f, HeatmapZoom& z, HeatmapEvents& ev) {
  ImGuiIO& io = ImGui::GetIO();
  const ImVec2 size(f.x1 - f.x0, f.y1 - f.y0);
  ImGui::SetCursorScreenPos(ImVec2(f.x0, f.y0));
  ImGui::InvisibleButton("##heatmap", ImVec2(std::max(1.0f, size.x), std::max(1.0f, size.y)));
  ImGui::SetItemUsingMouseWheel();
  ev.hovered = ImGui::IsItemHovered();
  if (ev.hovered && io.MouseWheel != 0.0f) {
    // Zoom about the mouse: the data point under the cursor stays put.
    const ImVec2 frac((io.MousePos.x - f.x0) / size.x, (io.MousePos.y - f.y0) / size.y);
    const ImVec2 under(f.u0 + frac.x * (f.u1 - f.u0), f.v0 + frac.y * (f.v1 - f.v0));
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
    const float u = f.u0 + (io.MousePos.x - f.x0) / size.x * (f.u1 - f.u0);
    const float v = f.v0 + (io.MousePos.y - f.y0) / size.y * (f.v1 - f.v0);
    ev.col = std::clamp<int64_t>(static_cast<int64_t>(u * static_cast<float>(f.cols)), 0, f.cols - 1);
    ev.row = std::clamp<int64_t>(static_cast<int64_t>(v * static_cast<float>(f.rows)), 0, f.rows - 1);
  }
}

// Category of entry i of `cats` as " · bucket 3", or "" without categories.
std::string categoryText(const std::vector<int32_t>* cats, int64_t i, const std::string& axis) {
  if (!cats || i < 0 || i >= static_cast<int64_t>(cats->size())) return "";
  return " \xC2\xB7 " + axis + " " + std::to_string((*cats)[static_cast<size_t>(i)]);
}

void drawTooltip(const MatrixSpec& view, int64_t r, int64_t c) {
  ImGui::BeginTooltip();
  ImGui::Text("%s %lld: %s%s", view.row_axis.c_str(), static_cast<long long>(r), axisLabel(view.row_labels, r).c_str(),
              categoryText(view.row_categories, r, view.category_axis).c_str());
  ImGui::Text("%s %lld: %s%s", view.col_axis.c_str(), static_cast<long long>(c), axisLabel(view.col_labels, c).c_str(),
              categoryText(view.col_categories, c, view.category_axis).c_str());
  if (view.key_bands)
    for (const KeyBand& b : *view.key_bands)
      if (c >= b.begin && c < b.end) ImGui::TextDisabled("in %s", b.label.c_str());
  ImGui::Separator();
  if (view.sparse) {
    sparseEntryText(*view.sparse, r, c, view.value_label, view.set_names);
  } else if (view.categories) {
    const float v = view.value(r, c);
    const bool named = view.category_names && v >= 0 && v < static_cast<float>(view.category_names->size());
    ImGui::TextUnformatted(named ? (*view.category_names)[static_cast<size_t>(v)].c_str() : "none");
  } else {
    ImGui::Text("%s: %s", view.value_label.c_str(), formatValueShort(view.value(r, c)).c_str());
  }
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

HeatmapEvents heatmap(const char* id, const MatrixSpec& view, const MatrixStyle& style, HeatmapZoom& zoom,
                      HeatmapRenderer& gl, ImVec2 size) {
  HeatmapEvents ev;
  if ((!view.data && !view.sparse) || view.rows <= 0 || view.cols <= 0 || size.x < 8 || size.y < 8) {
    ImGui::Dummy(size);
    return ev;
  }
  ImGui::PushID(id);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const Canvas canvas = imguiCanvas();
  const Box area{origin.x, origin.y, size.x, size.y};
  MatrixStyle st = style;
  st.min_label = kLabelScale;  // the screen's labels keep the font's size (a scaled bitmap font blurs)
  clampZoom(zoom, view.rows, view.cols);
  zoomWindow(zoom, st);
  // Laid out once for where the cells are, then again with what the input changed (zoom, the hovered cell).
  Primitives prims;
  const MatrixPlacement before = matrixPanelPrimitives(prims, canvas, area, view, st);
  if (before.valid()) {
    handleInput(before, zoom, ev);
    zoomWindow(zoom, st);
    st.hover_row = ev.hovered ? ev.row : -1;
    st.hover_col = ev.hovered ? ev.col : -1;
    prims.clear();
    ev.placed = matrixPanelPrimitives(prims, canvas, area, view, st);
    drawPrimitives(ImGui::GetWindowDrawList(), prims, &gl);
    if (ev.hovered && style.tooltip) drawTooltip(view, ev.row, ev.col);
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(size);
  ImGui::PopID();
  return ev;
}

}  // namespace attn
