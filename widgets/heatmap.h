// The heatmap view: the matrix panel (widgets/matrix_panel.h: token axes,
// colour bar, overlays, key bands) on screen, its cells colourised at screen
// resolution by a GLSL colormap shader (through an ImDrawList callback),
// with zoom/pan, hover highlight and tooltip. A sparse matrix (SparseRows) is drawn through engine rasterize():
// only the visible tile, at about its on-screen pixel size, cached until the
// tile or the result changes; L×L is never materialised.
//
// Index
//   [SECTION] HeatmapRenderer: GL program, colormap LUTs, data textures
//   [SECTION] heatmap(): the ImGui widget
#pragma once

#include "engine/result.h"
#include "widgets/annotations.h"
#include "widgets/colormap.h"
#include "widgets/matrix_panel.h"
#include "widgets/value_range.h"

#include <imgui.h>

#include <GL/glcorearb.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace attn {

// [SECTION] HeatmapRenderer

// Owns the GL side. Data textures are uploaded once per result (keyed by the
// data pointer) and dropped when the generation passed to beginFrame()
// changes, i.e. only when a new result is swapped in. Rasterized tiles of
// sparse matrices live until they go unused for a frame (zoom/pan moved on).
class HeatmapRenderer {
 public:
  HeatmapRenderer() = default;
  ~HeatmapRenderer();
  HeatmapRenderer(const HeatmapRenderer&) = delete;
  HeatmapRenderer& operator=(const HeatmapRenderer&) = delete;

  bool init();  // needs a current GL 3.3 context; false (log printed) on failure
  void beginFrame(uint64_t data_generation);
  // Queues the drawing of `data` ([rows, cols], row-major) into the screen
  // rectangle [p0, p1], showing the data-uv window [uv0, uv1] ⊂ [0, 1]².
  void draw(ImDrawList* dl, const float* data, int64_t rows, int64_t cols, ImVec2 p0, ImVec2 p1, ImVec2 uv0,
            ImVec2 uv1, const ValueRange& range, Colormap cmap, ImVec4 grid_color);
  // `data` [rows, cols] with NaN where `mask` is 0, so masked cells are
  // drawn grey as at every length (the sparse path's cells without an
  // entry are NaN too). Built once per result and data.
  const float* maskedData(const float* data, int64_t rows, int64_t cols, const Mat& mask);
  // The tile rows [r0, r1) × columns [c0, c1) of `s`, max-pooled by
  // rasterize() to at most out_rows × out_cols cells (re-rasterized only when
  // one of these changes). Stable until the frame after it is last asked for.
  const Mat& sparseTile(const SparseRows& s, int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t out_rows,
                        int64_t out_cols, RasterValue what);
  // The tile rows [r0, r1) × columns [c0, c1) of dense `data` [rows, cols]
  // shrunk by poolDense() (engine/sparse.h: whole blocks, each its value of
  // largest magnitude, so no peak is skipped; masked cells left out, NaN
  // where a block has nothing left) to at most out_rows × out_cols cells:
  // how a matrix larger than its pixels is drawn, as the figures draw it.
  const Mat& denseTile(const float* data, int64_t rows, int64_t cols, const Mat* mask, int64_t r0, int64_t r1, int64_t c0,
                       int64_t c1, int64_t out_rows, int64_t out_cols);
  // An RGBA8 texture the caller fills on the CPU (categorical pictures: the
  // image view's pixels, set-coloured connectivity). `fill` runs only when
  // `version` differs from the last one given for `name`; pixels are
  // 0xAABBGGRR (IM_COL32), row-major, w × h.
  ImTextureID rgbaTexture(const std::string& name, const std::string& version, int w, int h,
                          const std::function<void(std::vector<uint32_t>&)>& fill);

 private:
  struct Command {
    HeatmapRenderer* self;
    GLuint texture;
    float cols, rows;
    float verts[16];  // 4 × (x, y, u, v)
    float range[2], cell_px;
    int mode;         // ScaleMode
    int diverging;
    float gamma, decades;
    float grid[4];
    Colormap cmap;
  };
  static void callback(const ImDrawList* dl, const ImDrawCmd* cmd);
  void execute(const Command& c, const ImDrawCmd* cmd);
  GLuint textureFor(const float* data, int64_t rows, int64_t cols);
  void dropTexture(const float* data, int64_t rows, int64_t cols);

  struct Tile {
    Mat values;
    uint64_t last_frame = 0;
  };
  // The matrix (a SparseRows, or a dense matrix's data), its window, the pooled size, what was pooled.
  using TileKey = std::tuple<const void*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, RasterValue>;
  struct Rgba {
    GLuint texture = 0;
    std::string version;
  };

  GLuint program_ = 0, vao_ = 0, vbo_ = 0;
  GLint loc_display_pos_ = -1, loc_display_size_ = -1, loc_data_ = -1, loc_lut_ = -1, loc_range_ = -1,
        loc_data_size_ = -1, loc_cell_px_ = -1, loc_grid_ = -1, loc_mode_ = -1, loc_diverging_ = -1, loc_gamma_ = -1,
        loc_decades_ = -1;
  std::map<Colormap, GLuint> luts_;
  std::map<std::tuple<const float*, int64_t, int64_t>, GLuint> textures_;
  std::map<TileKey, Tile> tiles_;
  std::map<std::string, Rgba> rgba_;
  std::map<const float*, Mat> masked_;  // maskedData() copies, by their source
  uint64_t generation_ = ~uint64_t{0};
  uint64_t frame_ = 0;
  std::deque<Command> commands_;  // stable addresses until the next beginFrame()
};

// [SECTION] heatmap()

// Zoom and pan in data-uv space; lives across frames. Views that share one
// instance are linked (the heads grid).
struct HeatmapZoom {
  float zoom = 1.0f;            // 1: whole matrix
  ImVec2 center{0.5f, 0.5f};    // data-uv at the centre of the view
  void reset() { *this = HeatmapZoom{}; }
};

struct HeatmapEvents {
  bool hovered = false;
  bool clicked = false;     // released without dragging
  int64_t row = -1, col = -1;
  MatrixPlacement placed;   // where the cells were drawn (annotations go over them)
};

// The matrix panel (widgets/matrix_panel.h) in `size` at the cursor, its
// labels at the font's size, with zoom (wheel), pan (drag), reset (double
// click), the hovered cell and its labels highlighted and a tooltip.
HeatmapEvents heatmap(const char* id, const MatrixSpec& view, const MatrixStyle& style, HeatmapZoom& zoom,
                      HeatmapRenderer& gl, ImVec2 size);

// Tooltip lines for entry (r, c) of a sparse matrix: its exact value (or "not
// in the pattern"), the sub-patterns admitting it, the row's connection count.
void sparseEntryText(const SparseRows& s, int64_t r, int64_t c, const std::string& value_label,
                     const std::vector<std::string>* set_names);

// A vertical colour bar with tick labels for `range`, at `p0` with `size`.
void colorbar(ImDrawList* dl, ImVec2 p0, ImVec2 size, Colormap cmap, const ValueRange& range, const std::string& caption);

// Text rotated 90° counter-clockwise (reads bottom to top); `pos` is where
// the text starts (its baseline-left corner after rotation is at the bottom).
void addTextVertical(ImDrawList* dl, ImVec2 pos, ImU32 col, const char* text, float size = 0.0f);  // 0: the font's size

}  // namespace attn
