// State of the interactive window, kept in structs (no function statics):
// the scene being computed, its undo history, view state and requests the
// main loop carries out between frames (Qt modals, exports).
#pragma once

#include "app/gui/gui_settings.h"
#include "app/shared/input_options.h"
#include "app/gui/job_runner.h"
#include "app/lesson/lesson.h"
#include "app/model/model_scene.h"
#include "engine/registry.h"
#include "widgets/head_table.h"
#include "widgets/heatmap.h"
#include "widgets/token_lines.h"
#include "widgets/views/view.h"

#include <any>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <typeindex>
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

// The one step control of every process a view plays (gui_timeline.h).
struct TimelineState {
  bool playing = false;
  double last = 0;   // ImGui time of the last step
  int speed = 1;     // index into kTimelineSpeeds
};

struct ViewState {
  const ViewInfo* view = findView("heatmap");  // never null
  TimelineState timeline;
  // What the view shows (widgets/views/view.h): the head, the image's query
  // pixels, the family's own scales, the visible heads, the timeline's step
  // (a lesson's "stage"), the panel a lesson frames. An export reads this
  // same struct (viewParams() adds the colour settings).
  ViewParams params;
  std::map<std::string, HeatmapZoom> zoom;  // by the panels' zoom key (panels with one key are linked)
  // The Result::image_queries params.queries started from (another picture: its own queries).
  std::vector<int64_t> picture_defaults;
  bool scroll_to_played = false;  // the extras view scrolls its played (or framed) panel into view (once)
  DensePattern dense_pattern;
  void resetZoom();
};

// [SECTION] Model workspace: a real checkpoint, live text

enum class Workspace { Variants, Model };

// The view state every kind shares; a kind's own (an encoder–decoder's
// attention, a ViT's token, the text views' caches) is a struct in its file,
// kept in `kinds` (kindView, gui_kinds.h).
struct ModelViewState {
  std::string view = "model";   // a view of the model's kind, by name (app/export/model_kinds.h)
  int layer = 0, head = 0;       // the focused head
  int64_t query = -1, key = -1;  // the selected pair (Q/K view, predictions); −1: last token, its strongest key
  HeatmapZoom grid_zoom, focus_zoom, qk_zoom;
  TokenLinesState lines;
  HeadTableState table;
  // The focused layer's heads as a Result for the token lines, rebuilt when
  // the output or the layer changes.
  std::shared_ptr<const Result> layer_result;
  uint64_t layer_generation = ~uint64_t{0};
  int layer_of_result = -1;
  // Each kind's own state by its struct's type, made on first use and kept
  // while a model of another kind is open.
  std::map<std::type_index, std::any> kinds;
};

// Generate in the model workspace: the options of the next generation, and
// the timeline over the new tokens of the one shown (ModelScene::generation).
struct GenerationState {
  int new_tokens = 12;
  bool sample = false;        // off: greedy (the most probable token each step)
  int top_k = 40;
  float temperature = 0.8f;
  int seed = 0;
  bool requested = false;     // Generate was pressed: the main loop submits the job
  bool running = false;       // its job is outstanding: partial outputs arrive as tokens do
  std::string text;           // the prompt the shown generation continues (a new text discards it)
  TimelineState timeline;
};

struct ModelState {
  ModelScene scene;            // model, text and pattern: what is computed
  std::string path;            // where the model came from; empty: the embedded default
  std::shared_ptr<const ModelOutput> output;
  uint64_t generation = 0;     // bumps on every swap
  bool output_current = false;
  // Debounce: a text edit is computed once no key was typed for kTextDebounce.
  std::chrono::steady_clock::time_point text_edited{};
  std::string asked_truncate_for;  // the text the truncation question was last asked for
  ModelViewState view;
  GenerationState gen;
};
constexpr std::chrono::milliseconds kTextDebounce{150};

// [SECTION] Lessons and presentation mode

struct LessonState {
  std::shared_ptr<const Lesson> lesson;  // none: no lesson open
  int step = 0;          // the step asked for (keys, buttons)
  int shown = -1;        // the step whose scene was applied
  double opened = 0;     // ImGui time the shown step opened: its marks animate in from there
  std::string warned;    // the last warning printed about this step's marks (once each)
};

struct PresentState {
  bool on = false;     // F5 / --present: no panel or menus, larger text, narration as captions
  bool laser = false;  // L: a laser dot at the pointer
  bool pen = false;    // P: drag to draw on the view
  std::vector<std::vector<ImVec2>> strokes;  // the pen's lines; cleared at the next step
};

// [SECTION] Requests for the main loop (modals open after the frame is swapped)

struct Request {
  enum class Kind { None, OpenX, OpenQkv, OpenParamFile, Export, ExportPage, OpenModel, OpenRecentModel, ModelInfo, OpenLesson, OpenPicture } kind =
      Kind::None;
  std::string key;  // OpenParamFile: the parameter; OpenRecentModel: the path; OpenLesson: the lesson's name
  bool pattern = false;  // OpenParamFile: of the model workspace's pattern
};

struct AppState {
  Workspace workspace = Workspace::Variants;
  ModelState model;
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
  bool show_panel = true;  // the side panel; Tab hides it and the view takes the window
  ColorScale scale;        // how weights map to colours, in both workspaces
  LessonState lesson;
  PresentState present;
  // The Lessons menu's list, read when the menu opens (not every frame it stays open).
  std::vector<Lesson> menu_lessons;
  std::vector<std::string> menu_errors;
  // The view's main matrix as drawn this frame (the first a view offers):
  // where a lesson's marks go. Reset at the start of every frame.
  MatrixPlacement anchor;
  // --describe: the shown view's layout as describeLayout() has it, each frame.
  bool describe = false;
  nlohmann::json described;
  bool quit = false;
};

}  // namespace attn
