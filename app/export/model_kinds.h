// Model kinds as registry entries, as the variant views are
// (widgets/views/view.h) and Polyscope's structures: a kind is the models
// one workspace shape reads (decoder or encoder-only text, encoder–decoder,
// vision) and owns its views. A view is a name (the window's view bar and
// `render --view` say the same), a help line (the view bar's tooltip, F1,
// `render --help`, `attnlab list --kinds`) and its figure, which the GUI's
// Export and `render` write alike.
//
// A kind is one file (app/export/figure_<kind>.cpp: `extern const
// ModelKindInfo kNameKind`) and one line of ATTN_MODEL_KINDS
// (model_kinds.cpp); a view is one function in its kind's file and one line
// of the kind's `views`. A view whose screen is its figure's layout (no
// interaction of its own) gives `body`: the window replays that layout
// (app/gui/gui_kinds.h) and the figure is it under the title.
#pragma once

#include "app/export/figure.h"
#include "app/export/html_page.h"
#include "app/model/model_scene.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn {

// What a figure of a model view shows: the window's selection, or render's flags.
struct ModelFigureSelection {
  int layer = 0, head = 0;       // focused head (rollout: up to this layer)
  int64_t query = -1, key = -1;  // Q/K pair; -1: last token, its strongest key (a ViT's picture: the token, −1 [CLS])
  Seq2SeqMaps kind = Seq2SeqMaps::Cross;  // an encoder–decoder's grid: which attention
  HeadMeasure measure = HeadMeasure::Sink;  // the model view where thumbnails would be unreadable: a cell per head
  TextShade shade = TextShade::Head;  // the text view: the attention that shades the tokens
};

// What the command line asks of a kind's run (`render --model`): the
// model's files and the flags; a kind refuses the inputs it does not read.
struct ModelRunRequest {
  std::string path;  // as given: a folder, a .safetensors file, shipped:NAME
  std::shared_ptr<const ModelFiles> files;
  std::string text;                   // empty: the model's example
  std::optional<std::string> target;  // an encoder–decoder's target; none: its own translation
  std::string image;                  // a ViT's picture; empty: a shipped model's first example
  std::string corrupted;              // the patching view's corrupted prompt
  bool value_weighted = false;        // a text model's maps value-weighted (ModelScene::value_weighted)
  bool truncate = false;
  bool attention_of = false;  // --attention-of given: only an encoder–decoder has more than one attention
  std::string view;  // the view to draw (the text kind computes the pattern for its pattern view, run B for compare)
  std::string text_b, model_b;  // the compare view's run B: its text and model (empty: A's)
  std::string tokens, q, k;  // attention from a file: --tokens, --q and --k (empty: the folder's, if any)
  const VariantInfo* pattern = nullptr;  // the pattern view's variant and parameters
  Params pattern_params;
  int layer = 0, head = 0;
  int64_t query = -1;  // the query whose next token the views of which heads matter explain (-1: the last)
};

// A view drawn from one layout on screen and on the page.
struct ModelViewBody {
  std::string title;  // the figure's title
  std::string hint;   // the screen's header: what the view shows
  FigureLayout layout;
  FigureBodyHeight height;
};

struct ModelKindView {
  std::string name;  // the window's view bar and `render --view`; unique within its kind
  std::string help;  // one line: the tooltip, F1 and --help
  // The page `render` and Export write. Throws InputError (a selection out
  // of range, a run that kept too little for this view).
  PreparedFigure (*figure)(const ModelOutput& out, const ModelFigureSelection& sel, const FigureOptions& options) = nullptr;
  // Or, for a view with no screen code of its own: its layout (the figure is
  // it under the title), drawn with `p`'s colours (the screen's, the figure's).
  ModelViewBody (*body)(const ModelOutput& out, const ModelFigureSelection& sel, const ViewParams& p) = nullptr;
};

struct ModelKindInfo {
  std::string name;     // "text", "encoder-decoder", "vision"
  std::string noun;     // errors say "… is not a view of <noun>": "a text model"
  std::string summary;  // the models of the kind
  // Whether a checkpoint is of this kind; null: every model no other kind takes.
  bool (*fits)(const ModelConfig& c) = nullptr;
  // The command line's run: loads the model and computes what its views draw.
  ModelOutput (*run)(const ModelRunRequest& r) = nullptr;
  // What the model is and what it read, as plain text: a figure's subtitle
  // (literalSubtitle of it; a body's figure takes it) and the page's.
  std::string (*subtitle)(const ModelOutput& out) = nullptr;
  std::vector<ModelKindView> views;  // in key order (1, 2, …); a model of the kind opens on the first
  // What the interactive page (`render --format html`) holds of the output: its
  // kinds of attention with their maps, rollout and head table. Throws InputError
  // (a run with nothing to show, --heads outside the model).
  PageContent (*page)(const ModelOutput& out, const PageRequest& r) = nullptr;
};

// Every kind, in registry order (model_kinds.cpp: one line each).
const std::vector<const ModelKindInfo*>& modelKindRegistry();
// The kind of a checkpoint, of a loaded model (null: the text kind, the embedded default's).
const ModelKindInfo& modelKindOf(const ModelConfig& c);
const ModelKindInfo& modelKindOf(const Model* m);
// The kind of attention from a file (`--attention PATH`).
const ModelKindInfo& attentionFileKind();
// The kind of what a scene or an output shows: attention from a file, else its model's.
const ModelKindInfo& modelKindOf(const ModelScene& s);
const ModelKindInfo& modelKindOf(const ModelOutput& o);
// The text kind's views (figure_model.cpp), which attention from a file shares but for the pattern.
const std::vector<ModelKindView>& textKindViews();
// The text kind's page, which attention from a file shares: one self-attention
// (or a file's cross-attention), every head whole up to r.whole_limit tokens,
// else every head pooled plus r.heads whole.
PageContent textKindPage(const ModelOutput& out, const PageRequest& r);
// The digit key of a kind's view i (from 0): 1 … 9, then 0 for the tenth; −1
// past it (those views are reached from the window's view bar).
int modelViewDigit(size_t i);
// The kind's view called `name`, or null.
const ModelKindView* findModelView(const ModelKindInfo& k, const std::string& name);
// The kind's view called `name`; else an InputError naming the flag, the kind and its views.
const ModelKindView& modelViewOrThrow(const ModelKindInfo& k, const std::string& name, const std::string& flag = "--view");
// Whether any kind has a view called `name` (a window's --view before its model is loaded); else an InputError.
void checkModelViewName(const std::string& name, const std::string& flag = "--view");
// "model, heads, qk, …": the kind's views as --help and errors list them.
std::string modelViewNames(const ModelKindInfo& k);
// Every kind's views for a --view help: "text models: model, heads, …; encoder–decoder models: maps, …".
std::string modelViewsHelp();

// A figure's subtitle is laid out as a formula (widgets/formula.h): a
// folder name and a user's text are escaped to stay literal, and a long text
// is quoted by its beginning (160 bytes, then …), so the subtitle stays a
// line or two.
std::string literalSubtitle(const std::string& plain);
std::string quotedStart(const std::string& text);
// Throws InputError naming `flag` unless 0 ≤ v < n.
void checkSelection(const char* flag, int64_t v, int64_t n);

// The figure of `view` of the output's kind (its figure, or its body under
// the title). Throws InputError for a view the kind lacks or a selection
// out of range.
PreparedFigure prepareModelFigure(const ModelOutput& out, const std::string& view, const ModelFigureSelection& sel,
                                  const FigureOptions& options);
// prepareModelFigure and writeFigure; throws InputError (a bad file name
// too) and writes nothing then.
int exportModelFigure(const ModelOutput& out, const std::string& view, const ModelFigureSelection& sel,
                      const FigureOptions& options, const std::string& path);

}  // namespace attn
