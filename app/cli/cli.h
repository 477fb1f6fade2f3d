// Headless commands of the command-line contract: everything the GUI shows
// can be produced without a window.
#pragma once

#include "app/export/figure.h"
#include "app/export/html_page.h"
#include "app/model/embedded_model.h"
#include "app/shared/input_options.h"

#include <QGuiApplication>
#include <nlohmann/json_fwd.hpp>

#include <clocale>
#include <optional>
#include <string>
#include <vector>

namespace attn {

struct ComputeOptions {
  std::string variant;
  std::vector<std::string> sets;
  InputOptions input;
  std::string out_dir;
  bool no_weights = false;
  bool compare = false;  // also write compare.json and compare/*.npy (engine/compare.h)
};

struct RenderOptions {
  std::string variant;
  std::vector<std::string> sets;
  InputOptions input;
  std::string view;  // empty: heatmap (variant) or model (model)
  std::string out;
  std::string size = "1200x900";  // or column, two-column, slide (applyFigureSize)
  int head = 0;
  int64_t query = -1;  // image view: the query pixel; -1: defaultImageQuery()
  std::string colormap = "viridis";
  std::optional<std::string> title;  // "" draws no title
  double font_size = 0;              // 0: from the figure's size
  std::string scale = "auto";        // colour scale: auto, linear, log, power, percentile
  double gamma = 0.5, percentile = 99;
  bool dark = false;
  std::string describe;  // --describe FILE: what the view's layout holds, as JSON (describeLayout)
  // A model's view instead of a variant's (app/export/model_kinds.h).
  std::string model;           // folder, .safetensors or shipped:NAME
  bool default_model = false;  // the embedded default model (shipped:default)
  bool truncate = false;       // cut a text longer than the model's positions
  int layer = 0;
  int64_t key = -1;
  std::string pattern;         // pattern view: the variant (default: the first that fits a head)
  std::string summary = "sink";  // model view of a model too large for thumbnails: the measure per head (headMeasureNames)
  std::string shade_by = "head";  // text view: the attention that shades the tokens (textShadeNames)
  std::optional<std::string> target;  // an encoder–decoder's target text
  std::string attention_of;  // an encoder–decoder's model view: which attention (seq2seqMapsNames); empty: cross
  std::string text_b, model_b;  // the compare view's run B: a second prompt, a second checkpoint (empty: A's)
  std::string image;                  // a ViT's picture
  std::string corrupted;              // the patching view's corrupted prompt
  bool value_weighted = false;        // a text model's maps value-weighted
  std::string attention;  // attention from a file (a folder or an array) instead of a model
  std::string tokens;     // its tokens (a JSON list or one per line)
  std::string format;     // png, svg, pdf or html; empty: --out's extension
  std::string heads;      // a variant's number of heads; a page's heads kept whole ("0:3,5:1")
  int64_t max_bytes = PageOptions{}.max_bytes;  // html: the largest page written
};

// attnlab model info PATH / model run PATH --text TEXT --out DIR (app/cli/cli_model.cpp)
struct ModelRunCliOptions {
  std::string path = kDefaultModelPath;
  std::string text, out_dir;  // no text: the model's example (modelExampleText)
  bool truncate = false;
  int top_k = 5;
  std::string predict_at = "all";  // "all", "last" or positions "0,5,9": where the LM head runs
  std::string text_file;           // the text from a file instead of --text
  std::string maps = "auto";       // "auto", "all", "pooled", "none" or "L:H,…" (engine/model/blocks/maps.h)
  std::optional<std::string> target;  // encoder–decoder models: the decoder's text (teacher forcing); none: its own translation
  std::string image, pixels;          // vision models: a picture, or pixel values float32 [3, H, W]
};

// attnlab model generate PATH --text T --max-new N [--greedy | --top-k K --temperature τ --seed S] --out DIR
struct ModelGenerateCliOptions {
  std::string path = kDefaultModelPath;
  std::string text, out_dir;  // no text: the model's example (modelExampleText)
  int64_t max_new = 20;
  bool greedy = false;  // the default when --top-k is not given
  int top_k = 0;
  float temperature = 1.0f;
  uint64_t seed = 0;
  bool truncate = false;
};

// attnlab model compare PATH [--text T] (--text-b T2 | --model-b PATH_B) --out DIR: run A against run B
struct ModelCompareCliOptions {
  std::string path = kDefaultModelPath;
  std::string text, out_dir;  // no text: the model's example (modelExampleText)
  std::string text_b;         // run B's text; empty: A's (then --model-b is needed)
  std::string model_b;        // run B's checkpoint, of A's shape; empty: A's
  bool truncate = false;
};

// attnlab lesson export NAME --out FILE.pdf [--size WxH] (app/cli/cli_lesson.cpp)
struct LessonExportOptions {
  std::string name, out;
  std::string size = "842x595";  // A4 landscape, points
};

// attnlab model ablate | importance | patch | lens | attribute PATH (app/cli/cli_interventions.cpp)
struct InterventionCliOptions {
  std::string what;  // the subcommand's name
  std::string path = kDefaultModelPath;
  std::string text, text_file, out_dir;   // no text: the model's example
  std::string corrupted, corrupted_file;  // patch: the corrupted text, of as many tokens
  bool truncate = false;
  int64_t position = -1;      // where the target is predicted (negative: from the end)
  std::string token;          // the target token; empty: token_id, else the model's own top prediction
  int64_t token_id = -1;
  std::string heads;          // ablate: layer:head pairs
  std::string mode = "zero";  // ablate, importance: zero or mean
  int top_k = 5;
};
int cmdModelIntervention(const InterventionCliOptions& o);
// The model commands' JSON: text whose token strings may end inside a UTF-8
// sequence (written as U+FFFD), and a position's top tokens.
std::string jsonText(const nlohmann::json& j);
nlohmann::json predictionsJson(const std::vector<Prediction>& top);

int cmdList(bool json);
// The model kinds and their views (app/export/model_kinds.h): the window's and render's names, keys, help.
int cmdListKinds(bool json);
int cmdLessonList(bool json);
int cmdLessonExport(int argc, char** argv, const LessonExportOptions& o);
int cmdModelInfo(const std::string& path, bool json);
// The model families (engine/model/families/family.h): text, --json, or docs/models.md's markdown table.
int cmdModelFamilies(bool json, bool markdown);
int cmdModelRun(const ModelRunCliOptions& o);
int cmdModelGenerate(const ModelGenerateCliOptions& o);
int cmdModelCompare(const ModelCompareCliOptions& o);
int cmdCompute(const ComputeOptions& o);
int cmdRender(int argc, char** argv, const RenderOptions& o);

// The results a figure of `view` draws: the variant's, and for the family
// view its family's after it (the subject first). Shared by render and lesson export.
std::vector<Result> figureResults(const VariantInfo& info, const Inputs& inputs, const Params& params, const ViewInfo& view);

// Headless: QPainter needs a QGuiApplication but no display (the offscreen
// platform); Qt's chatter is silenced and numbers are read in the C locale.
int& offscreenPlatform(int& argc);
struct HeadlessQt {
  HeadlessQt(int& argc, char** argv) : app(offscreenPlatform(argc), argv) { setlocale(LC_NUMERIC, "C"); }
  QGuiApplication app;
};

// "1200x900" → (1200, 900); throws InputError naming `flag`.
std::pair<int, int> parseSize(const std::string& s, const std::string& flag);

}  // namespace attn
