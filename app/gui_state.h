// State of the interactive window, kept in structs (no function statics):
// the scene being computed, its undo history, view state and requests the
// main loop carries out between frames (Qt modals, exports).
#pragma once

#include "app/gui_settings.h"
#include "app/input_options.h"
#include "app/job_runner.h"
#include "engine/registry.h"
#include "widgets/heatmap.h"
#include "widgets/token_lines.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn {

// [SECTION] Scene: what is computed

enum class InputMode { Text, Synthetic, Files };

struct Scene {
  std::string variant;
  Params params;
  InputMode mode = InputMode::Text;
  InputOptions input;  // fields of every mode are kept; `mode` picks the ones used
};
bool sameScene(const Scene& a, const Scene& b);

// The input flags of the scene's mode (the other modes' fields are kept in
// the scene so switching back restores them).
InputOptions effectiveInput(const Scene& s);

// The job body: the scene's variant and, with `family`, its whole family;
// with `compare`, the result against full attention (compare view).
SceneOutput computeScene(const Scene& s, bool family, bool compare, const RunContext& ctx);

// Snapshots of scenes, one per committed change.
class UndoStack {
 public:
  void push(const Scene& before);
  bool undo(Scene& current);
  bool redo(Scene& current);
  bool canUndo() const { return !undo_.empty(); }
  bool canRedo() const { return !redo_.empty(); }

 private:
  std::vector<Scene> undo_, redo_;
};

// [SECTION] View state

// The pattern of a dense-only result's head as CSR, for the image view
// (sparse results carry theirs); rebuilt when the result or head changes.
struct DensePattern {
  uint64_t generation = ~uint64_t{0};
  int head = -1;
  SparseRows rows;
};

struct ViewState {
  ViewKind view = ViewKind::Heatmap;
  int head = 0;
  HeatmapZoom main_zoom, heads_zoom, family_zoom, compare_zoom;  // heads, family, compare: one linked zoom each
  std::map<std::string, HeatmapZoom> extra_zoom;
  std::map<std::string, int> extra_head;  // the head (or step: Extra::slice_axis) each Weights extra shows
  std::map<std::string, double> extra_play;  // Weights extras being played: ImGui time of the last advance
  int64_t image_query = -1;  // the image view's query pixel (−1: defaultImageQuery); kept across recomputes (clamped)
  DensePattern dense_pattern;
  TokenLinesState lines;
  void resetZoom();
};

// [SECTION] Requests for the main loop (modals open after the frame is swapped)

struct Request {
  enum class Kind { None, OpenX, OpenQkv, OpenParamFile, Export } kind = Kind::None;
  std::string key;  // OpenParamFile: the parameter
};

struct AppState {
  Scene scene;      // edited by the panels
  Scene committed;  // last snapshot in the undo history
  UndoStack undo;
  ViewState view;
  GuiSettings settings;

  std::shared_ptr<const SceneOutput> output;  // swapped in at frame start
  uint64_t generation = 0;                    // bumps on every swap
  bool output_current = false;                // `output` is of `scene` (no newer job pending, none failed)
  std::string status;                         // last message for the status bar
  bool status_is_error = false;
  double frame_ms = 0;

  Request request;
  bool show_help = false;
  bool quit = false;
};

}  // namespace attn
