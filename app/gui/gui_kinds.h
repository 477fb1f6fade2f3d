// The window's side of the model kinds (app/export/model_kinds.h): each
// kind's panel sections, its DISPLAY controls, the screens of its views and
// its own view state, in the kind's own file — gui_text.cpp (text), gui_seq2seq.cpp
// (encoder–decoder: source and target, the three kinds of attention),
// gui_vision.cpp (a picture, attention over it, rollout, attention
// distance) — and one line each in gui_model.cpp's table. The workspace
// (gui_model.cpp) draws the panel and the view bar from the registry and
// hands the rest to the model's kind; a view with no screen of its own is
// its figure's layout, replayed (ModelKindView::body).
#pragma once

#include "app/export/model_kinds.h"
#include "app/gui/gui_state.h"
#include "widgets/heatmap.h"

#include <functional>
#include <string>
#include <vector>

namespace attn {

// A view's screen, drawn from the output of its kind (the analysis the kind's run keeps).
struct ModelScreen {
  std::string view;  // the registry view's name
  void (*draw)(AppState& s, const ModelOutput& o, HeatmapRenderer& gl);
};

struct GuiModelKind {
  std::string kind;               // ModelKindInfo::name
  void (*sections)(AppState& s);  // the panel's sections above DISPLAY
  void (*controls)(AppState& s);  // DISPLAY's controls under the view bar
  void (*below)(AppState& s);     // the panel's sections under DISPLAY; may be null
  // Before any view of an output of the kind: clamps the selection to it and
  // draws what every view shares; false: nothing to draw (it said why).
  bool (*prepare)(AppState& s, const ModelOutput& o);
  std::vector<ModelScreen> screens;  // the views with a screen of their own; the others replay their body
  // The kind's part of what a figure of the window's view shows (modelSelection); may be null.
  void (*select)(const ModelViewState& v, ModelFigureSelection& f);
  // A scene was opened (flags, a lesson's step) with the shared state set:
  // the kind's own state from it (a ViT's token from --query); may be null.
  void (*open)(ModelViewState& v);
  // A key pressed over the model workspace (no text field, lesson or Ctrl):
  // the kind's views' own keys (F1 lists them); may be null.
  void (*key)(AppState& s, int key);
};
// The window's side of kind `k` (gui_model.cpp: one line per kind).
const GuiModelKind& guiModelKind(const ModelKindInfo& k);
// Every kind's window side, in the table's order.
const std::vector<const GuiModelKind*>& guiModelKinds();

// The kind's own view state T (a struct in the kind's file), made on first use.
template <class T>
T& kindView(ModelViewState& v) {
  std::any& a = v.kinds[typeid(T)];
  if (!a.has_value()) a = T{};
  return std::any_cast<T&>(a);
}
// Read-only: T as made when there is none yet.
template <class T>
T kindView(const ModelViewState& v) {
  const auto it = v.kinds.find(typeid(T));
  return it == v.kinds.end() ? T{} : std::any_cast<const T&>(it->second);
}
// What a figure of the window's view shows: its selection (Export, a body view).
ModelFigureSelection modelSelection(const ModelViewState& v, const ModelOutput& o);

// The model view's header line: the model's name, then `what` (wrapped when it does not fit).
void modelHeader(const AppState& s, const std::string& what);
// "83.9%  'And'" over a bar `share` (0..1) of `width`: a prediction, or a key a query attends to.
void shareRow(float share, const std::string& what, float width);
// The keys `query` attends to most in `map`, strongest first, under `title`,
// as many as fit in `height` (under a grid of heads); `name` names a key.
void strongestKeys(const std::string& title, const Mat& map, int64_t query, const std::function<std::string(int64_t)>& name,
                   float width, float height);
// The focused head's row of the head table, one number per line with its column's name
// (`shown`: indices into headTableColumns(); empty: all), in `width`.
void focusedHeadNumbers(const std::vector<HeadSummary>& summaries, int layer, int head, float width,
                        const std::vector<int>& shown);


}  // namespace attn
