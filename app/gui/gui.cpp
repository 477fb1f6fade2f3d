// runGui: the window's main loop.
//
// Index
//   [SECTION] Theme
//   [SECTION] GuiApp: window, ImGui, Qt, job runner, per-frame steps
//   [SECTION] Frames / screenshot mode
//   [SECTION] runGui
#include "app/gui/gui.h"

#include "app/model/embedded_model.h"
#include "app/export/figure.h"
#include "app/export/model_kinds.h"
#include "app/gui/gui_kinds.h"
#include "app/gui/gui_fonts.h"
#include "app/gui/gui_generate.h"
#include "app/gui/gui_lesson.h"
#include "app/gui/gui_model.h"
#include "app/gui/gui_panels.h"
#include "app/qt/gui_qt.h"
#include "app/gui/gui_state.h"
#include "app/gui/gui_views.h"
#include "app/gui/job_runner.h"
#include "engine/error.h"
#include "engine/npy.h"
#include "widgets/heatmap.h"
#include "widgets/primitives_imgui.h"

#include <nlohmann/json.hpp>

#include <GL/glcorearb.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <thread>

namespace attn {

namespace {

constexpr double kFirstJobTimeout = 60.0;

// A key of --keys by name: Right, Left, Up, Down, Space, PageDown, PageUp,
// Home, Tab, Escape, F1, F5, Comma, Period, a letter or a digit. Throws InputError.
int keyFromName(const std::string& name) {
  static const std::pair<const char*, int> kNamed[] = {
      {"Right", GLFW_KEY_RIGHT}, {"Left", GLFW_KEY_LEFT},     {"Up", GLFW_KEY_UP},         {"Down", GLFW_KEY_DOWN},
      {"Space", GLFW_KEY_SPACE}, {"PageDown", GLFW_KEY_PAGE_DOWN}, {"PageUp", GLFW_KEY_PAGE_UP}, {"Home", GLFW_KEY_HOME},
      {"Tab", GLFW_KEY_TAB},     {"Escape", GLFW_KEY_ESCAPE}, {"F1", GLFW_KEY_F1},         {"F5", GLFW_KEY_F5},
      {"Comma", GLFW_KEY_COMMA}, {"Period", GLFW_KEY_PERIOD}};
  for (const auto& [n, key] : kNamed)
    if (name == n) return key;
  if (name.size() == 1 && name[0] >= 'A' && name[0] <= 'Z') return GLFW_KEY_A + (name[0] - 'A');
  if (name.size() == 1 && name[0] >= '0' && name[0] <= '9') return GLFW_KEY_0 + (name[0] - '0');
  throw InputError("--keys: unknown key '" + name +
                   "' (expected Right, Left, Up, Down, Space, PageDown, PageUp, Home, Tab, Escape, F1, F5, Comma, Period, A-Z or 0-9)");
}

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// [SECTION] Theme

void applyTheme(const GuiSettings& g) {
  ImGuiStyle style;
  if (g.dark) {
    ImGui::StyleColorsDark(&style);
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0.11f, 0.12f, 0.14f, 1.0f);
    style.Colors[ImGuiCol_ChildBg] = ImVec4(0.09f, 0.10f, 0.12f, 1.0f);
    style.Colors[ImGuiCol_MenuBarBg] = ImVec4(0.15f, 0.16f, 0.19f, 1.0f);
    style.Colors[ImGuiCol_PlotLinesHovered] = ImVec4(0.62f, 0.80f, 1.0f, 1.0f);  // formula text
  } else {
    ImGui::StyleColorsLight(&style);
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0.97f, 0.97f, 0.96f, 1.0f);
    style.Colors[ImGuiCol_ChildBg] = ImVec4(1.0f, 1.0f, 1.0f, 1.0f);
    style.Colors[ImGuiCol_PlotLinesHovered] = ImVec4(0.10f, 0.30f, 0.62f, 1.0f);
  }
  style.Colors[ImGuiCol_PlotHistogram] = ImVec4(1.0f, 0.62f, 0.15f, 1.0f);  // focus frames, progress
  style.WindowRounding = 0.0f;
  style.FrameRounding = 4.0f;
  style.GrabRounding = 4.0f;
  style.ChildRounding = 4.0f;
  style.WindowPadding = ImVec2(12, 10);
  style.FramePadding = ImVec2(7, 4);
  style.ItemSpacing = ImVec2(8, 6);
  style.WindowBorderSize = 1.0f;
  style.ScaleAllSizes(g.ui_scale);
  ImGui::GetStyle() = style;
}

// [SECTION] GuiApp

class GuiApp {
 public:
  explicit GuiApp(const GuiOptions& o) : options_(o) {}
  ~GuiApp();
  int run();

 private:
  bool initWindow();
  void submitIfChanged();
  void submitModelIfChanged();
  void submitLoad(bool truncate);  // cut the text (--truncate), or not
  void submitGenerate();
  void stopGenerating();
  void takePartialGeneration();
  void takeModelOutput(const JobOutcome& done);
  void openModelInteractively(const std::string& path);
  // Runs `write` (a figure export to `path`) and reports the outcome in the
  // status bar, or in a message box when it fails.
  void writeExport(const std::string& path, const std::function<void()>& write);
  void exportModelView();
  void exportModelPage();
  void takeFinishedJob();
  void frame();
  void afterSwap();
  void requireGlyphs();
  void applySettingsIfChanged();
  void exportView();
  void repaintLastFrame();
  void applyScene(const SceneOptions& o, bool initial);
  void showLessonStep();
  void openLesson(const std::string& name);
  bool settle();
  bool frameThenSettle();
  std::vector<uint8_t> readPixels(int& w, int& h);

  GuiOptions options_;
  GLFWwindow* window_ = nullptr;
  bool imgui_ready_ = false;
  std::unique_ptr<QtSession> qt_;
  std::unique_ptr<JobRunner> runner_;
  std::unique_ptr<HeatmapRenderer> heatmaps_;
  FontAtlas fonts_;
  AppState state_;
  GuiSettings applied_settings_, saved_settings_;
  bool settings_applied_ = false;

  // Job bookkeeping: what was last submitted, to detect changes.
  Scene submitted_;
  uint64_t submitted_id_ = 0;
  bool submitted_family_ = false, submitted_compare_ = false, ever_submitted_ = false;
  bool first_job_done_ = false;
  JobOutcome::Status first_status_ = JobOutcome::Status::Done;
  std::string pending_error_, last_boxed_error_;

  std::vector<KeyPress> key_presses_;  // filled by the GLFW key callback (and --keys)
  std::shared_ptr<const Lesson> lesson_glyphs_;  // the lesson whose text's glyphs were asked for

  // Model workspace jobs. One runner serves both workspaces, so a job of
  // one supersedes the other's: an outstanding job of the inactive
  // workspace is submitted again when it becomes active.
  ModelScene model_submitted_;
  uint64_t model_submitted_id_ = 0;
  bool model_ever_submitted_ = false, variant_outstanding_ = false, model_outstanding_ = false;
  bool loading_ = false;           // the next model job loads `loading_path_` ("" = the embedded model)
  bool default_view_ = false;      // the scene named no model view: the loaded model's first (a ViT's picture)
  std::string loading_path_;
  bool show_info_after_load_ = false;
  // The running generation's job and the partial outputs it hands over.
  uint64_t generate_id_ = 0;
  std::shared_ptr<GenerationFeed> feed_;

  bool frames_mode() const { return options_.frames > 0 || !options_.screenshot.empty(); }
};

GuiApp::~GuiApp() {
  runner_.reset();  // join the worker before tearing down
  heatmaps_.reset();
  if (imgui_ready_) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  qt_.reset();
  if (window_) glfwDestroyWindow(window_);
  glfwTerminate();
}

bool GuiApp::initWindow() {
  glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "attnlab: GLFW error %d: %s\n", code, text); });
  if (!glfwInit()) {
    std::fprintf(stderr, "attnlab: cannot initialise GLFW (is DISPLAY set?)\n");
    return false;
  }
  qt_ = std::make_unique<QtSession>();  // after glfwInit(), see DESIGN.md
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  window_ = glfwCreateWindow(options_.width, options_.height, "AttnLab", nullptr, nullptr);
  if (!window_) {
    std::fprintf(stderr, "attnlab: cannot create a %dx%d OpenGL 3.3 window\n", options_.width, options_.height);
    return false;
  }
  glfwMakeContextCurrent(window_);
  glfwSwapInterval(frames_mode() ? 0 : 1);
  // Installed before ImGui's backend, which chains to it.
  glfwSetWindowUserPointer(window_, this);
  glfwSetKeyCallback(window_, [](GLFWwindow* w, int key, int, int action, int mods) {
    if (action == GLFW_RELEASE) return;
    static_cast<GuiApp*>(glfwGetWindowUserPointer(w))->key_presses_.push_back({key, (mods & GLFW_MOD_CONTROL) != 0, (mods & GLFW_MOD_SHIFT) != 0});
  });
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // layout is fixed; never write imgui.ini into the working dir
  ImGui_ImplGlfw_InitForOpenGL(window_, true);
  ImGui_ImplOpenGL3_Init("#version 330");
  imgui_ready_ = true;
  heatmaps_ = std::make_unique<HeatmapRenderer>();
  if (!heatmaps_->init()) return false;
  qt_->setRepaint([this] { repaintLastFrame(); });
  return true;
}

void GuiApp::submitIfChanged() {
  // The family and the comparison are computed only while their view is shown.
  const bool family = state_.view.view->family;
  const bool compare = state_.view.view->comparison;
  const bool same = sameScene(submitted_, state_.scene);
  const bool need_family = family && !(state_.output && state_.output->has_family && same);
  const bool need_compare = compare && !(state_.output && state_.output->has_comparison && same);
  if (ever_submitted_ && same && (!need_family || submitted_family_) && (!need_compare || submitted_compare_)) return;
  if (!same) state_.output_current = false;
  submitted_ = state_.scene;
  submitted_family_ = family;
  submitted_compare_ = compare;
  ever_submitted_ = true;
  const Scene scene = state_.scene;
  submitted_id_ = runner_->submit(
      [scene, family, compare](const RunContext& ctx) { return computeScene(scene, family, compare, ctx); });
  variant_outstanding_ = true;
  if (model_outstanding_) model_ever_submitted_ = model_outstanding_ = false;
  stopGenerating();
}

void GuiApp::submitLoad(bool truncate) {
  ModelScene scene = state_.model.scene;
  scene.model.reset();
  scene.truncate = truncate;
  const std::string path = loading_path_;
  model_submitted_ = scene;
  model_ever_submitted_ = true;
  model_outstanding_ = true;
  state_.model.output_current = false;
  stopGenerating();
  model_submitted_id_ = runner_->submit([scene, path](const RunContext& ctx) mutable {
    scene.source.reset();
    scene.inputs.attention = {};
    if (!path.empty() && isAttentionPath(path)) {  // attention from a file (a `model run` folder, an array)
      scene.inputs.attention.path = path;
      scene.source = readAttention(scene.inputs.attention, ctx);
      scene.text = scene.source->text;
    } else {
      const ModelFiles files = path.empty() ? embeddedModelFiles() : modelFiles(path);
      scene.model = loadModel(files, ctx);
      scene.files = std::make_shared<const ModelFiles>(files);
      startOnModel(scene, path);
    }
    SceneOutput out;
    out.model = std::make_shared<const ModelOutput>(computeModelScene(scene, nullptr, ctx));
    return out;
  });
  if (variant_outstanding_) ever_submitted_ = variant_outstanding_ = false;
}

void GuiApp::submitModelIfChanged() {
  ModelState& m = state_.model;
  m.scene.pattern = m.view.view == "pattern";
  m.scene.probe = probeOfView(m.view.view);
  m.scene.compare = m.view.view == "compare";
  m.scene.layer = m.view.layer;
  m.scene.head = m.view.head;
  m.scene.focus_whole = m.output && m.output->analysis && m.output->analysis->pooled;
  m.scene.predict_at = m.view.query;
  if (loading_) {
    if (!model_ever_submitted_) submitLoad(m.scene.truncate);
    return;
  }
  discardStaleGeneration(m);
  if (m.gen.requested) {
    submitGenerate();
    return;
  }
  // A running generation finishes first; a new text supersedes it.
  if (m.gen.running && m.scene.text == model_submitted_.text) return;
  if ((!m.scene.model && !m.scene.source) || (model_ever_submitted_ && sameModelScene(model_submitted_, m.scene))) return;
  // Typing: wait until no key was pressed for kTextDebounce, then compute once.
  if ((m.scene.text != model_submitted_.text || m.scene.corrupted != model_submitted_.corrupted ||
       m.scene.inputs != model_submitted_.inputs) &&
      Clock::now() - m.text_edited < kTextDebounce)
    return;
  stopGenerating();
  m.output_current = false;
  model_submitted_ = m.scene;
  model_ever_submitted_ = true;
  model_outstanding_ = true;
  const ModelScene scene = m.scene;
  const std::shared_ptr<const ModelOutput> previous = m.output;
  model_submitted_id_ = runner_->submit([scene, previous](const RunContext& ctx) {
    SceneOutput out;
    out.model = std::make_shared<const ModelOutput>(computeModelScene(scene, previous.get(), ctx));
    return out;
  });
  if (variant_outstanding_) ever_submitted_ = variant_outstanding_ = false;
}

// Generate: the scene without a generation (the job sets its own after each
// token), generated on the runner; the partial outputs come through feed_.
void GuiApp::submitGenerate() {
  ModelState& m = state_.model;
  m.gen.requested = false;
  if (!m.scene.model || m.gen.running) return;
  m.scene.generation.reset();
  m.scene.generation_steps = 0;
  m.gen.text = m.scene.text;
  m.gen.timeline.playing = false;
  m.gen.running = true;
  m.output_current = false;
  model_submitted_ = m.scene;
  model_ever_submitted_ = model_outstanding_ = true;
  const ModelScene scene = m.scene;
  const GenerateOptions options = generateOptions(m.gen);
  auto feed = feed_ = std::make_shared<GenerationFeed>();
  model_submitted_id_ = generate_id_ = runner_->submit([scene, options, feed](const RunContext& ctx) {
    SceneOutput out;
    out.model = std::make_shared<const ModelOutput>(
        generateModelScene(scene, options, ctx, [&feed](std::shared_ptr<const ModelOutput> o) { feed->put(std::move(o)); }));
    return out;
  });
  if (variant_outstanding_) ever_submitted_ = variant_outstanding_ = false;
}

// Another job supersedes the generation: the tokens so far stay (the scene keeps its partial generation).
void GuiApp::stopGenerating() {
  state_.model.gen.running = false;
  feed_.reset();
}

void GuiApp::takePartialGeneration() {
  ModelState& m = state_.model;
  if (!feed_ || !m.gen.running || m.scene.text != m.gen.text) return;  // a new text supersedes the generation
  std::shared_ptr<const ModelOutput> o = feed_->take();
  if (!o) return;
  m.output = std::move(o);
  ++m.generation;
  m.scene.generation = m.output->generation;
  m.scene.generation_steps = m.output->generation_steps;
  m.output_current = true;
}

void GuiApp::takeModelOutput(const JobOutcome& done) {
  ModelState& m = state_.model;
  const std::shared_ptr<const ModelOutput>& out = done.output->model;
  m.output = out;
  ++m.generation;
  m.output_current = done.id == model_submitted_id_;
  if (done.id == generate_id_) {  // the whole generation: the timeline at its last token
    m.scene.generation = model_submitted_.generation = out->generation;
    m.scene.generation_steps = model_submitted_.generation_steps = out->generation_steps;
  }
  if (m.scene.model != out->model || m.scene.source != out->source) {  // a load finished: the scene now computes on it
    m.scene.generation.reset();
    m.scene.generation_steps = 0;
    m.scene.model = out->model;
    m.scene.source = out->source;
    m.scene.truncate = out->truncate;
    // What the load job chose for this model: its files, its example picture or text.
    m.scene.files = out->files;
    m.scene.text = out->text;
    m.scene.inputs = out->inputs;
    if (done.id == model_submitted_id_) model_submitted_ = m.scene;
    if (std::exchange(default_view_, false)) m.view.view = modelKindOf(*out).views.front().name;
    m.path = loading_path_;
    loading_ = false;
    if (!m.path.empty()) rememberModel(state_.settings, m.path);
    if (show_info_after_load_) state_.request.kind = Request::Kind::ModelInfo;
    show_info_after_load_ = false;
  }
  if (out->too_long_tokens > 0) {
    state_.status = out->too_long_message;
    state_.status_is_error = true;
    if (frames_mode()) {
      std::fprintf(stderr, "attnlab: %s\n", out->too_long_message.c_str());
      if (first_status_ == JobOutcome::Status::Done) first_status_ = JobOutcome::Status::InputError;
    }
  }
}

void GuiApp::takeFinishedJob() {
  std::optional<JobOutcome> done = runner_->poll();
  if (!done) return;
  if (!first_job_done_) {
    first_job_done_ = true;
    first_status_ = done->status;
  }
  const bool model_job = done->id == model_submitted_id_ || (done->output && done->output->model);
  if (done->id == model_submitted_id_) model_outstanding_ = false;
  if (done->id == submitted_id_) variant_outstanding_ = false;
  if (done->id == generate_id_) stopGenerating();
  if (model_job && done->status != JobOutcome::Status::Done && loading_) {
    // The model could not be loaded: say which file and why; keep the previous one.
    loading_ = false;
    show_info_after_load_ = false;
    if (!state_.model.scene.model) model_ever_submitted_ = false;
  }
  switch (done->status) {
    case JobOutcome::Status::Done:
      if (model_job) {
        takeModelOutput(*done);
        if (state_.model.output && state_.model.output->too_long_tokens > 0) break;
        state_.status.clear();
        state_.status_is_error = false;
        last_boxed_error_.clear();
        break;
      }
      state_.output = done->output;
      state_.output_current = done->id == submitted_id_;  // an older job's result may still arrive
      ++state_.generation;
      state_.status.clear();
      state_.status_is_error = false;
      last_boxed_error_.clear();
      break;
    case JobOutcome::Status::Cancelled:
      state_.status = "cancelled";
      state_.status_is_error = false;
      break;
    case JobOutcome::Status::InputError:
    case JobOutcome::Status::InternalError:
      state_.status = done->error;
      state_.status_is_error = true;
      if (frames_mode())
        std::fprintf(stderr, "attnlab: %s\n", done->error.c_str());
      else
        pending_error_ = done->error;
      break;
  }
}

void GuiApp::requireGlyphs() {
  if (state_.output && state_.output->result) {
    for (const std::string& t : state_.output->result->q_tokens) fonts_.require(t);
    for (const std::string& t : state_.output->result->k_tokens) fonts_.require(t);
  }
  fonts_.require(state_.scene.input.text);
  fonts_.require(state_.model.scene.text);
  if (const ModelOutput* o = state_.model.output.get(); o && o->analysis) {
    for (const std::string& t : o->analysis->run.tokens) fonts_.require(t);
    for (const Prediction& p : o->predictions) fonts_.require(p.token);
  }
  fonts_.require(state_.scene.input.source_text);
  fonts_.require(state_.status);
  if (const Lesson* l = state_.lesson.lesson.get(); l && lesson_glyphs_ != state_.lesson.lesson) {
    lesson_glyphs_ = state_.lesson.lesson;
    fonts_.require(l->title + "\xE2\x86\x90\xE2\x86\x92\xC2\xB7");
    for (const LessonStep& st : l->steps) fonts_.require(st.title + st.narration + st.formula + st.prompt);
  }
}

void GuiApp::applySettingsIfChanged() {
  GuiSettings& g = state_.settings;
  g.ui_scale = std::clamp(g.ui_scale, 0.5f, 4.0f);
  g.font_size = std::clamp(g.font_size, 8.0f, 48.0f);
  // While a slider is dragged, keep the old atlas: rebuild on release.
  if (ImGui::GetCurrentContext() && ImGui::IsAnyItemActive() && settings_applied_) return;
  // Presentation mode sets text larger for the back of the room (not saved):
  // 1.25× at 1000 lines (22 px labels from the default 18), up to 1.5× on a
  // large screen; at 720 lines the view needs the room and the text stays.
  int win_w = 0, win_h = 0;
  if (window_) glfwGetWindowSize(window_, &win_w, &win_h);
  const float present = std::clamp(static_cast<float>(win_h) / 1000.0f * 1.25f, 1.0f, 1.5f);
  const float px = std::round(g.font_size * g.ui_scale * (state_.present.on ? present : 1.0f));
  if (!settings_applied_ || g.dark != applied_settings_.dark || g.ui_scale != applied_settings_.ui_scale) applyTheme(g);
  if (fonts_.needsRebuild(px)) fonts_.rebuild(px);
  applied_settings_ = g;
  settings_applied_ = true;
  if (!(g == saved_settings_) && !frames_mode()) {
    std::string error;
    if (!saveSettings(g, settingsPath(), error)) std::fprintf(stderr, "attnlab: %s\n", error.c_str());
    saved_settings_ = g;
  }
}

void GuiApp::frame() {
  takePartialGeneration();
  takeFinishedJob();
  requireGlyphs();
  applySettingsIfChanged();
  // Textures are cached by their data's address: a new output of either
  // workspace (the generation's steps come and go quickly) may reuse one.
  // Both counters only grow, so their sum changes with either.
  heatmaps_->beginFrame(state_.generation + state_.model.generation);

  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  // Scripted frames ignore wherever the X pointer happens to be, so
  // screenshots show no stray hover.
  if (frames_mode()) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  ImGui::NewFrame();
  handleShortcuts(state_, key_presses_);
  key_presses_.clear();
  showLessonStep();
  state_.anchor = MatrixPlacement{};

  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const bool present = state_.present.on;
  const float menu_h = present ? 0.0f : drawMenuBar(state_);
  const float status_h = present ? 0.0f : ImGui::GetFrameHeight() + ImGui::GetStyle().WindowPadding.y * 2;
  const float strip_h = lessonStripHeight(state_, vp->Size.x);
  // The layout rule: the side panel (when shown, never in presentation mode)
  // takes a fixed width, the lesson's caption strip the width under it all,
  // and the view everything else between the menu and the status bar.
  const bool panel = state_.show_panel && !present;
  const float panel_w = panel ? std::min(vp->Size.x * 0.4f, ImGui::GetFontSize() * 23.0f) : 0.0f;
  const ImVec2 top(vp->Pos.x, vp->Pos.y + menu_h);
  const float body_h = vp->Size.y - menu_h - status_h - strip_h;
  const ImVec2 view_pos(top.x + panel_w, top.y), view_size(vp->Size.x - panel_w, body_h);
  // `--describe`: the texts the view and the lesson's marks draw (their boxes and sizes), and the view's
  // data marks with their labels.
  std::vector<DrawnText> texts;
  MarkSheet data_marks;
  std::optional<TextRecorder> recording;
  if (state_.describe) recording.emplace(texts, &data_marks);
  if (state_.workspace == Workspace::Model) {
    if (panel) drawModelPanel(state_, top, ImVec2(panel_w, body_h));
    drawModelView(state_, *heatmaps_, view_pos, view_size);
    drawGenerationMarks(state_, view_pos, view_size);
  } else {
    if (panel) drawControlPanel(state_, top, ImVec2(panel_w, body_h));
    drawMainView(state_, *heatmaps_, view_pos, view_size);
  }
  if (state_.describe) state_.described["view_area"] = {view_pos.x, view_pos.y, view_size.x, view_size.y};
  if (strip_h > 0) drawLessonStrip(state_, ImVec2(vp->Pos.x, top.y + body_h), ImVec2(vp->Size.x, strip_h));
  if (!present) drawStatusBar(state_, *runner_, ImVec2(vp->Pos.x, top.y + body_h + strip_h), ImVec2(vp->Size.x, status_h));
  const std::string marks = drawLessonOverlay(state_, view_pos, view_size, frames_mode() ? 0.0f : 0.6f);
  if (recording) {
    recording.reset();
    state_.described.update(markSheetJson(data_marks));
    nlohmann::json& list = state_.described["texts"] = nlohmann::json::array();
    for (const DrawnText& t : texts)
      if (t.x >= view_pos.x && t.y >= view_pos.y && t.x + t.w <= view_pos.x + view_size.x + 1 && t.y + t.h <= view_pos.y + view_size.y + 1)
        list.push_back({{"text", t.text}, {"x", t.x}, {"y", t.y}, {"w", t.w}, {"h", t.h}, {"px", t.px}, {"script", t.script}});
  }
  // A step whose marks do not fit its view is the lesson's bug: said once per step, on stderr too.
  const bool current = state_.workspace == Workspace::Model ? state_.model.output_current : state_.output_current;
  if (!marks.empty() && current && state_.lesson.warned != marks) {
    state_.lesson.warned = marks;
    const std::string line = state_.lesson.lesson->file + ": step " + std::to_string(state_.lesson.step + 1) + ": " + marks;
    state_.status = line;
    state_.status_is_error = true;
    std::fprintf(stderr, "attnlab: %s\n", line.c_str());
  }
  drawHelpOverlay(state_);

  // A change is committed to the undo history once no widget is held (a
  // slider drag or a text edit is one step), but recomputes right away.
  if (!sameScene(state_.scene, state_.committed) && !ImGui::IsAnyItemActive()) {
    state_.undo.push(state_.committed);
    state_.committed = state_.scene;
  }
  if (state_.workspace == Workspace::Model)
    submitModelIfChanged();
  else
    submitIfChanged();

  ImGui::Render();
  int fb_w = 0, fb_h = 0;
  glfwGetFramebufferSize(window_, &fb_w, &fb_h);
  glViewport(0, 0, fb_w, fb_h);
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void GuiApp::repaintLastFrame() {
  if (!ImGui::GetDrawData()) return;
  int fb_w = 0, fb_h = 0;
  glfwGetFramebufferSize(window_, &fb_w, &fb_h);
  glViewport(0, 0, fb_w, fb_h);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  glfwSwapBuffers(window_);
}

void GuiApp::writeExport(const std::string& path, const std::function<void()>& write) {
  try {
    write();
    state_.status = "exported " + path;
    state_.status_is_error = false;
  } catch (const std::exception& e) {
    state_.status = e.what();
    state_.status_is_error = true;
    qt_->showError("Export failed", e.what());
  }
}

void GuiApp::exportModelView() {
  const ModelState& m = state_.model;
  if (!m.output || !hasModelRun(*m.output)) {
    state_.status = "nothing to export yet";
    return;
  }
  const std::string& view = m.view.view;
  const std::optional<std::string> path = qt_->saveFigure(outputName(*m.output) + "-" + view + ".png");
  if (!path) return;
  FigureOptions fo;
  fo.params.colormap = state_.settings.colormap;
  fo.params.scale = state_.scale;
  fo.params.heads_visible = m.view.lines.heads_visible;
  fo.dark = state_.settings.dark && state_.settings.export_screen_theme;
  writeExport(*path, [&] { exportModelFigure(*m.output, view, modelSelection(m.view, *m.output), fo, *path); });
}

// The page of every head (render --format html), opening on the focused head;
// a long text's page, every head pooled, keeps that head whole.
void GuiApp::exportModelPage() {
  const ModelState& m = state_.model;
  if (state_.workspace != Workspace::Model || !m.output || !hasModelRun(*m.output)) {
    state_.status = "a page shows a model's heads: open a model (File ▸ Open Model…) or attention from a file";
    state_.status_is_error = true;
    return;
  }
  const std::optional<std::string> path = qt_->savePage(outputName(*m.output) + ".html");
  if (!path) return;
  const ModelFigureSelection sel = modelSelection(m.view, *m.output);
  PageRequest r;
  const ModelAnalysis* a = m.output->analysis.get();
  // A long text's page keeps the focused head whole where the window holds it: the run's map, or the one a
  // pooled run recomputed (ModelOutput::focus_map; a folder of pooled maps has none).
  if (a && (a->pooled ? m.output->focus_map != nullptr : static_cast<int64_t>(a->run.tokens.size()) > r.whole_limit))
    r.heads = {{sel.layer, sel.head}};
  PageOptions o;
  o.set = seq2seqMapsNames()[static_cast<size_t>(sel.kind)];  // an encoder–decoder's grid: the kind it shows
  o.layer = sel.layer;
  o.head = sel.head;
  if (!colormapIsDiverging(state_.settings.colormap)) o.colormap = state_.settings.colormap;
  writeExport(*path, [&] { writeFileAtomic(*path, modelPage(*m.output, r, o)); });
}

// Loads `path` in the job runner behind a progress dialog; errors go to a
// message box naming the file (takeFinishedJob), success opens the info dialog.
void GuiApp::openModelInteractively(const std::string& path) {
  loading_ = true;
  loading_path_ = path;
  show_info_after_load_ = true;
  submitLoad(false);  // a model opened from the menu starts on the text whole
  qt_->progressWhile("Loading " + path + "\u2026", [this] { return runner_->busy(); },
                     [this] { return runner_->progress(); }, [this] { runner_->cancel(); });
  takeFinishedJob();
  if (loading_) {  // cancelled (or superseded): nothing changes
    loading_ = false;
    show_info_after_load_ = false;
    if (state_.model.scene.model) model_ever_submitted_ = false;  // recompute the current model's scene
    state_.status = "loading cancelled";
    state_.status_is_error = false;
  }
  if (!pending_error_.empty()) {
    qt_->showError("Cannot open model", path + ":\n" + std::exchange(pending_error_, std::string()));
    last_boxed_error_.clear();
  }
}

void GuiApp::exportView() {
  if (state_.workspace == Workspace::Model) {
    exportModelView();
    return;
  }
  if (!state_.output || !state_.output->result) {
    state_.status = "nothing to export yet";
    return;
  }
  const Comparison* comparison = state_.output->comparison.get();
  if (state_.view.view->comparison && !comparison) {
    state_.status = "the comparison is not computed yet";
    return;
  }
  const std::optional<std::string> path = qt_->saveFigure(state_.scene.variant + "-" + state_.view.view->name + ".png");
  if (!path) return;
  FigureOptions fo;
  fo.view = state_.view.view->name;
  fo.params = viewParams(state_);  // what the screen shows, as it shows it
  fo.dark = state_.settings.dark && state_.settings.export_screen_theme;
  std::vector<Result> results = {*state_.output->result};
  if (state_.view.view->family)
    for (const FamilyMember& m : state_.output->family)
      if (m.result && m.variant != state_.scene.variant) results.push_back(*m.result);
  writeExport(*path, [&] { exportFigure(results, fo, *path, comparison); });
}

// Carries out what the frame asked for; runs after the swap, so Qt modals
// never open inside NewFrame/Render.
void GuiApp::afterSwap() {
  qt_->processEvents();
  if (state_.quit) glfwSetWindowShouldClose(window_, GLFW_TRUE);
  const Request req = std::exchange(state_.request, Request{});
  if (frames_mode()) return;
  switch (req.kind) {
    case Request::Kind::None: break;
    case Request::Kind::OpenX:
      if (auto p = qt_->openFile("Open X [L, d]", "NumPy arrays (*.npy);;All files (*)")) {
        state_.scene.mode = InputMode::Files;
        state_.scene.input.x = *p;
        state_.scene.input.q.clear();
        state_.scene.input.k.clear();
        state_.scene.input.v.clear();
      }
      break;
    case Request::Kind::OpenQkv: {
      InputOptions& in = state_.scene.input;
      auto q = qt_->openFile("Open Q [Lq, d_k]", "NumPy arrays (*.npy);;All files (*)");
      auto k = q ? qt_->openFile("Open K [Lk, d_k]", "NumPy arrays (*.npy);;All files (*)") : std::nullopt;
      auto v = k ? qt_->openFile("Open V [Lk, d_v]", "NumPy arrays (*.npy);;All files (*)") : std::nullopt;
      if (v) {
        state_.scene.mode = InputMode::Files;
        in.x.clear();
        in.q = *q;
        in.k = *k;
        in.v = *v;
      }
      break;
    }
    case Request::Kind::OpenParamFile:
      if (const VariantInfo* info = findVariant(req.pattern ? state_.model.scene.pattern_variant : state_.scene.variant))
        if (auto p = qt_->openFile("Open " + req.key, [&] {
              // A File parameter whose shape is "image" takes a picture (sagan's image), "safetensors" a
              // trained model (ntm-copy's and pointer-sort's weights), the others a .npy.
              const ParamSpec* spec = findParam(info->params, req.key);
              const std::string shape = spec ? spec->file_shape : "";
              return shape == "image"         ? "Images (*.png *.jpg *.jpeg);;All files (*)"
                     : shape == "safetensors" ? "Trained models (*.safetensors);;All files (*)"
                                              : "NumPy arrays (*.npy);;All files (*)";
            }())) {
          try {
            (req.pattern ? state_.model.scene.pattern_params : state_.scene.params).setValue(info->params, req.key, *p);
          } catch (const InputError& e) {
            qt_->showError("Invalid file", e.what());
          }
        }
      break;
    case Request::Kind::Export: exportView(); break;
    case Request::Kind::ExportPage: exportModelPage(); break;
    case Request::Kind::OpenModel:
      if (auto p = qt_->openModel()) openModelInteractively(*p);
      break;
    case Request::Kind::OpenRecentModel: openModelInteractively(req.key); break;
    case Request::Kind::ModelInfo:
      if (state_.model.scene.model) qt_->showModelInfo(modelInfo(*state_.model.scene.model));
      break;
    case Request::Kind::OpenLesson: openLesson(req.key); break;
    case Request::Kind::OpenPicture:
      if (auto p = qt_->openFile("Open Picture", "Pictures (*.png *.jpg *.jpeg);;All files (*)")) {
        state_.model.scene.inputs.vision = {*p, false};
      }
      break;
  }
  if (const ModelOutput* o = state_.model.output.get();
      o && o->too_long_tokens > 0 && state_.model.output_current && o->text != state_.model.asked_truncate_for &&
      !ImGui::IsAnyItemActive()) {
    state_.model.asked_truncate_for = o->text;
    if (qt_->askTruncate(o->too_long_tokens, o->too_long_limit)) state_.model.scene.truncate = true;
  }
  if (!pending_error_.empty()) {
    const std::string error = std::exchange(pending_error_, std::string());
    // Not while the user is typing, and not the same message twice in a row.
    if (error != last_boxed_error_ && !ImGui::IsAnyItemActive()) {
      last_boxed_error_ = error;
      qt_->showError("AttnLab", error);
    }
  }
}

// Frames mode: draws frames until no computation is outstanding (false
// after kFirstJobTimeout, said on stderr).
// One frame (what it asks for is submitted), then frames until that is computed.
bool GuiApp::frameThenSettle() {
  glfwPollEvents();
  frame();
  glfwSwapBuffers(window_);
  afterSwap();
  return settle();
}

bool GuiApp::settle() {
  const auto t0 = Clock::now();
  auto outstanding = [&] {
    return runner_->busy() || (state_.workspace == Workspace::Model ? model_outstanding_ : variant_outstanding_);
  };
  while (outstanding()) {
    glfwPollEvents();
    frame();
    glfwSwapBuffers(window_);
    afterSwap();
    if (msSince(t0) > kFirstJobTimeout * 1e3) {
      std::fprintf(stderr, "attnlab: a computation did not finish within %.0f s\n", kFirstJobTimeout);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Makes `o` the window's scene: its workspace, variant or model view,
// parameters, input and selection. On the first call (`initial`) the other
// workspace gets the default scene's. Throws InputError, changing nothing.
void GuiApp::applyScene(const SceneOptions& o, bool initial) {
  validateScene(o);
  const DefaultScene d = defaultScene();
  ModelState& m = state_.model;
  if (o.model_workspace || initial) {
    const VariantInfo& pattern = headPattern(o.pattern.empty() ? d.pattern : o.pattern);
    const Params params = o.model_workspace ? resolveParams(pattern, o.sets) : Params::defaults(pattern.params);
    const std::string view = o.model_workspace && !o.view.empty() ? o.view : d.model_view;
    checkModelViewName(view);
    if (!o.model.empty()) modelFiles(o.model);  // a missing path is a usage error
    const bool mine = o.model_workspace;
    m.scene.text = textOrExample(mine ? o.input.text : "", o.model);
    m.scene.truncate = mine && o.truncate;
    setModelInputs(m.scene, o.model, mine ? o.target : "", mine ? o.image : "");
    m.scene.corrupted = mine ? o.corrupted : "";
    m.scene.inputs.compare = mine ? CompareInputs{o.text_b, o.model_b} : CompareInputs{};
    m.scene.pattern_variant = pattern.name;
    m.scene.pattern_params = params;
    m.view.view = view;
    default_view_ = mine && o.view.empty();  // no view asked for: the loaded model's kind chooses its first
    m.view.layer = mine && o.layer >= 0 ? o.layer : d.layer;
    m.view.head = mine && o.head >= 0 ? o.head : d.head;
    m.view.query = mine ? o.query : -1;
    m.view.key = mine ? o.key : -1;
    for (const GuiModelKind* kind : guiModelKinds())
      if (kind->open) kind->open(m.view);
    if (!o.attention.empty()) {  // attention from a file: read here (already, for the first scene), no model
      const AttentionInputs in{o.attention, o.tokens, o.input.q, o.input.k};
      if (!m.scene.source || m.scene.source->inputs != in)
        m.scene.source = options_.attention && options_.attention->inputs == in ? options_.attention : readAttention(in);
      m.scene.model.reset();
      m.scene.inputs.attention = in;
      m.scene.text = m.scene.source->text;
      m.path = o.attention;
      loading_ = false;
      model_ever_submitted_ = false;
    } else if (initial || m.path != o.model || m.scene.source) {
      // The scene's model: the embedded one unless a path is given; loaded when it is not the one open.
      m.scene.source.reset();
      m.scene.inputs.attention = {};
      loading_ = true;
      loading_path_ = o.model;
      model_ever_submitted_ = false;
    }
  }
  if (!o.model_workspace || initial) {
    const VariantInfo& info = variantOrThrow(o.variant.empty() ? d.variant : o.variant);
    Scene scene;
    scene.variant = info.name;
    scene.params = o.model_workspace ? Params::defaults(info.params) : resolveParams(info, o.sets);
    const ViewInfo* view = o.model_workspace ? findView(info.views.front()) : &variantView(info, o.view.empty() ? "heatmap" : o.view);
    scene.input = o.model_workspace ? sceneInput(SceneOptions{}) : sceneInput(o);
    const InputOptions& in = scene.input;
    scene.mode = !in.x.empty() || !in.q.empty() ? InputMode::Files
                 : !in.text.empty()              ? InputMode::Text
                                                 : InputMode::Synthetic;
    if (scene.input.text.empty()) scene.input.text = d.text;  // kept for a switch to text input
    if (!initial && !sameScene(scene, state_.scene)) state_.undo.push(state_.committed);  // a lesson's step is one undoable change
    state_.scene = scene;
    state_.committed = scene;
    state_.view.view = view;
    ViewParams& p = state_.view.params;
    p.head = !o.model_workspace && o.head >= 0 ? o.head : 0;
    p.query = !o.model_workspace ? o.query : -1;
    p.stage = o.stage;
    p.focus_panel = o.panel;
    state_.view.scroll_to_played = o.stage >= 0 || !o.panel.empty();
    state_.view.timeline = TimelineState{};
    state_.view.resetZoom();
  }
  state_.workspace = o.model_workspace ? Workspace::Model : Workspace::Variants;
}

// The lesson's step asked for (keys, buttons, the menu) becomes the scene;
// a step that cannot be shown says why in the status bar.
void GuiApp::showLessonStep() {
  LessonState& l = state_.lesson;
  if (!l.lesson || l.step == l.shown) return;
  l.shown = l.step;
  l.opened = ImGui::GetTime();
  l.warned.clear();
  state_.present.strokes.clear();
  try {
    applyScene(l.lesson->steps[static_cast<size_t>(l.step)].scene, false);
  } catch (const InputError& e) {
    state_.status = l.lesson->file + ": step " + std::to_string(l.step + 1) + ": " + e.what();
    state_.status_is_error = true;
    if (frames_mode()) std::fprintf(stderr, "attnlab: %s\n", state_.status.c_str());
  }
}

void GuiApp::openLesson(const std::string& name) {
  try {
    auto lesson = std::make_shared<const Lesson>(findLesson(name));  // a lesson that fails to open leaves the current one
    state_.lesson = LessonState{};
    state_.lesson.lesson = std::move(lesson);
    showLessonStep();
  } catch (const InputError& e) {
    qt_->showError("Cannot open lesson", e.what());
  }
}

std::vector<uint8_t> GuiApp::readPixels(int& w, int& h) {
  glfwGetFramebufferSize(window_, &w, &h);
  std::vector<uint8_t> px(static_cast<size_t>(w) * h * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  // GL's first row is the bottom one.
  const size_t row = static_cast<size_t>(w) * 4;
  for (int y = 0; y < h / 2; ++y)
    std::swap_ranges(px.begin() + y * row, px.begin() + (y + 1) * row, px.begin() + (h - 1 - y) * row);
  return px;
}

int GuiApp::run() {
  // Bad --variant / --set / --view / --model / --lesson are usage errors before any window opens.
  try {
    state_.show_panel = !options_.hide_panel;
    state_.present.on = options_.present;
    state_.describe = !options_.describe.empty();
    if (!scaleKindFromName(options_.scale, state_.scale.kind))
      throw InputError("--scale: unknown scale '" + options_.scale + "' (expected auto, linear, log, power or percentile)");
    for (const std::string& k : options_.keys) keyFromName(k);
    SceneOptions start = options_.scene;
    if (!options_.lesson.empty()) {
      auto lesson = std::make_shared<const Lesson>(findLesson(options_.lesson));
      const int n = static_cast<int>(lesson->steps.size());
      if (options_.step >= n)
        throw InputError("--step: lesson '" + lesson->name + "' has steps 0.." + std::to_string(n - 1) + ", got " +
                         std::to_string(options_.step));
      start = lesson->steps[static_cast<size_t>(options_.step)].scene;
      state_.lesson.lesson = std::move(lesson);
      state_.lesson.step = state_.lesson.shown = options_.step;
    }
    applyScene(start, true);
  } catch (const InputError& e) {
    std::fprintf(stderr, "attnlab: %s\n", e.what());
    return 2;
  }

  std::string warning;
  state_.settings = loadSettings(settingsPath(), warning);
  if (!warning.empty()) std::fprintf(stderr, "attnlab: %s\n", warning.c_str());
  saved_settings_ = state_.settings;
  fonts_.require("\xE2\x87\xA4\xE2\x87\xA5\xE2\x96\xB6\xE2\x80\x96\xE2\x86\x90\xE2\x86\x92\xC3\x97");  // ⇤⇥▶‖←→× of the timeline
  for (const VariantInfo& v : variants()) {
    fonts_.require(v.title + v.summary + v.citation + v.family);
    for (const ParamSpec& p : v.params) fonts_.require(p.symbol + p.help);
  }

  if (!initWindow()) return 1;
  runner_ = std::make_unique<JobRunner>();
  if (state_.workspace == Workspace::Model)
    submitModelIfChanged();
  else
    submitIfChanged();

  if (frames_mode()) {
    // [SECTION] Frames / screenshot mode: wait for the first result, then
    // time N frames and report median and worst.
    // Frames drawn while that first job computes are timed too: they show
    // whether the UI stays interactive during a long computation.
    const auto t0 = Clock::now();
    std::vector<double> busy_times;
    while (!first_job_done_) {
      const auto f0 = Clock::now();
      glfwPollEvents();
      frame();
      glfwSwapBuffers(window_);
      if (!first_job_done_) busy_times.push_back(msSince(f0));
      if (msSince(t0) > kFirstJobTimeout * 1e3) {
        std::fprintf(stderr, "attnlab: the first computation did not finish within %.0f s\n", kFirstJobTimeout);
        return 1;
      }
      if (!first_job_done_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (busy_times.size() >= 3) {
      std::sort(busy_times.begin(), busy_times.end());
      std::printf("frames while computing: %d median %.1f ms worst %.1f ms (job %.0f ms)\n",
                  static_cast<int>(busy_times.size()), busy_times[busy_times.size() / 2], busy_times.back(),
                  msSince(t0));
    }
    // --generate N [--generate-step S]: generated, then stepped, before the keys
    // (unless the model could not be opened: that error is the one to report).
    if (options_.generate > 0 && first_status_ == JobOutcome::Status::Done) {
      if (const std::string why = generateUnavailable(state_.model); !why.empty()) {
        std::fprintf(stderr, "attnlab: --generate: %s\n", why.c_str());
        return 2;
      }
      state_.model.gen.new_tokens = options_.generate;
      requestGeneration(state_.model);
      if (!frameThenSettle()) return 1;
      ModelScene& sc = state_.model.scene;
      if (!sc.generation) return 2;  // why is on stderr already (the job's error)
      if (options_.generate_step >= 0) {
        sc.generation_steps = std::min<int64_t>(options_.generate_step, static_cast<int64_t>(sc.generation->tokens.size()));
        if (!frameThenSettle()) return 1;
      }
    }
    // --keys: pressed one a frame, each followed by frames until what it asked for is computed.
    for (const std::string& k : options_.keys) {
      key_presses_.push_back({keyFromName(k), false, false});
      if (!frameThenSettle()) return 1;
    }
    const int n = std::max(1, options_.frames);
    std::vector<double> times;
    for (int i = 0; i < n && !glfwWindowShouldClose(window_); ++i) {
      const auto f0 = Clock::now();
      glfwPollEvents();
      frame();
      if (i == n - 1 && !options_.screenshot.empty()) {
        int w = 0, h = 0;
        const std::vector<uint8_t> px = readPixels(w, h);
        std::string error;
        if (!savePng(px, w, h, options_.screenshot, error)) {
          std::fprintf(stderr, "attnlab: %s\n", error.c_str());
          return 1;
        }
        if (!options_.describe.empty()) writeFileAtomic(options_.describe, state_.described.dump(2) + "\n");
      }
      glfwSwapBuffers(window_);
      afterSwap();
      times.push_back(msSince(f0));
      state_.frame_ms = times.back();
    }
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    std::printf("frames: %d median %.1f ms worst %.1f ms\n", static_cast<int>(sorted.size()),
                sorted[sorted.size() / 2], sorted.back());
    std::fflush(stdout);
    return first_status_ == JobOutcome::Status::InputError ? 2 : first_status_ == JobOutcome::Status::Done ? 0 : 1;
  }

  // Interactive: idle in glfwWaitEventsTimeout (Xvfb does not throttle swaps),
  // keep redrawing while a job runs.
  while (!glfwWindowShouldClose(window_)) {
    const bool typing = state_.workspace == Workspace::Model && state_.model.scene.text != model_submitted_.text;
    if (runner_->busy() || typing || state_.view.timeline.playing || state_.model.gen.timeline.playing)
      glfwWaitEventsTimeout(1.0 / 60.0);
    else
      glfwWaitEventsTimeout(0.5);
    const auto work0 = Clock::now();
    frame();
    glfwSwapBuffers(window_);
    state_.frame_ms = msSince(work0);
    afterSwap();
  }
  return 0;
}

}  // namespace

// [SECTION] runGui

int runGui(const GuiOptions& options) {
  try {
    GuiApp app(options);
    return app.run();
  } catch (const InputError& e) {
    std::fprintf(stderr, "attnlab: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab: internal error: %s\n", e.what());
    return 1;
  }
}

}  // namespace attn
