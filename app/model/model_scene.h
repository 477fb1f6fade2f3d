// The model workspace's computation, GUI-free: shared by the window (run in
// the job runner) and `attnlab render --model`. A scene is a loaded model,
// a text and, for the pattern view, a registry pattern applied to one head;
// its output is the model run with every attention map, the head summaries
// (with the repeated-sequence run for induction), the rollout per layer and
// the pattern. The views' data are packaged as Results so the generic
// widgets and figures draw them.
#pragma once

#include "app/model/attention_scene.h"
#include "app/model/compare_scene.h"
#include "app/model/seq2seq_scene.h"
#include "app/model/vision_scene.h"
#include "engine/model/blocks/head_metrics.h"
#include "engine/model/kinds/generate.h"
#include "engine/model/analysis/head_patterns.h"
#include "engine/model/analysis/interventions.h"
#include "engine/model/model.h"
#include "engine/model/analysis/qk_terms.h"
#include "engine/registry.h"
#include "engine/result.h"
#include "widgets/plot_layouts.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attn {

// [SECTION] Scene and output

// What each kind reads besides the text, in a struct of the kind's own
// (its scene file); an encoder–decoder's `text` is its source.
struct ModelInputs {
  Seq2SeqInputs seq2seq;
  VisionInputs vision;
  AttentionInputs attention;  // attention from a file (its `source` is what was read)
  CompareInputs compare;      // the compare view's run B
  bool operator==(const ModelInputs&) const = default;
};

struct ModelScene {
  std::shared_ptr<const Model> model;
  // Attention from a file instead of a model (the attention kind): read once,
  // when it is opened; `model` is then null.
  std::shared_ptr<const AttentionSource> source;
  std::string text;
  bool truncate = false;  // cut the text at the model's positions
  bool pattern = false;   // compute the pattern (the pattern view is shown)
  std::string pattern_variant;
  Params pattern_params;
  // A view of which heads matter that is shown ("importance", "lens",
  // "attribution"; empty: none): its analysis of the prediction at predict_at.
  std::string probe;
  std::string corrupted;  // the patching view's corrupted prompt, of as many tokens as the text
  // The maps value-weighted (Kobayashi et al. 2020, "Attention is not only a
  // weight"): α_ij ‖v_j^h W_O^h‖, each row scaled to sum 1, in the head views
  // and rollout; the head summaries stay the weights'.
  bool value_weighted = false;
  bool compare = false;   // run B and the comparison (the compare view is shown; inputs.compare)
  int64_t layer = 0, head = 0;  // the focused head: the pattern's, the one a pooled run recomputes whole, the one ablated
  bool focus_whole = false;     // the run pools its maps: a new focused head is a new scene
  int64_t predict_at = -1;      // the query whose next tokens are listed; -1: the last token
  // A generation of `text` (Generate in the window): the run is then the
  // prompt and its first `generation_steps` new tokens (generationRun), not
  // the text's own forward.
  std::shared_ptr<const Generation> generation;
  int64_t generation_steps = 0;
  MapsChoice::Mode maps = MapsChoice::Mode::Auto;  // every map when it fits (Auto), or pooled
  ModelInputs inputs;
  // The model's files: a ViT's example pictures and preprocessor_config.json. Set when the model is loaded.
  std::shared_ptr<const ModelFiles> files;
};
bool sameModelScene(const ModelScene& a, const ModelScene& b);
// ModelScene::probe for the view `view`: its name for the views of which heads matter, else "".
std::string probeOfView(const std::string& view);

struct ModelAnalysis {
  ModelRun run;
  std::vector<HeadSummary> summaries;  // one per (layer, head), layer-major
  // A long text whose every map would not fit (run.maps pooled): the grid's
  // thumbnails are the pooled maps [layer][head] [n, n] (blocks of
  // run.pooled.block positions), a head's whole map is recomputed on demand
  // (headMap), and the views that read every map say the length they allow.
  bool pooled = false;
  std::vector<std::vector<Mat>> thumbnails;
  std::vector<std::string> block_labels;  // the pooled blocks' positions ("0–31")
  int64_t every_map_limit = 0;            // the longest text whose every map fits
  std::vector<Mat> rollout;            // per layer [L, L] (empty when pooled)
  // Colour range of each rollout: over queries i ≥ 1 of a causal model,
  // whose row 0 is always [1, 0, …] and would leave the rest dark; that row
  // is greyed out (rollout_mask [L, L]: 0 on row 0; empty where every row
  // counts), on screen and in figures.
  std::vector<ValueStats> rollout_stats;
  Mat rollout_mask;
};

struct ModelOutput {
  std::shared_ptr<const Model> model;
  std::shared_ptr<const AttentionSource> source;  // attention from a file: the scene's (then `model` is null)
  std::string text;
  bool truncate = false;
  bool value_weighted = false;  // the analysis' maps are value-weighted (ModelScene::value_weighted)
  MapsChoice::Mode maps = MapsChoice::Mode::Auto;
  std::shared_ptr<const ModelAnalysis> analysis;  // null when the text is too long
  std::shared_ptr<const ModelRun> repeated;       // the induction run (depends on the model only)
  int64_t too_long_tokens = 0, too_long_limit = 0;  // > 0: the text has more tokens than positions
  std::string too_long_message;
  bool has_pattern = false;  // asked for: `pattern` or `pattern_error` is set
  std::shared_ptr<const HeadPattern> pattern;
  std::string pattern_error;
  // The compare view's run B and comparison where the scene asked for them, or why there are none.
  std::shared_ptr<const CompareAnalysis> compare;
  std::string compare_error;
  // The top tokens at `predicted_at` (the LM head runs on that row only);
  // empty without an LM head.
  std::vector<Prediction> predictions;
  int64_t predicted_at = -1;
  // The view of which heads matter the scene shows, for the model's own top
  // token after `predicted_at` (engine/model/analysis/interventions.h); only
  // the shown view's is computed. `probe_error`: why it could not be.
  std::shared_ptr<const ImportanceGrid> importance;
  std::shared_ptr<const AblationEffect> ablation;  // with the importance grid: the focused head ablated alone
  std::shared_ptr<const LogitLens> lens;           // the positions up to predicted_at, at most kLensPositions
  std::shared_ptr<const LogitAttribution> attribution;
  std::shared_ptr<const PatchingResult> patching;  // from `corrupted` into the text
  std::string corrupted;                           // the corrupted prompt patching ran on
  std::string probe_error;
  std::shared_ptr<const Generation> generation;  // the scene's; its first generation_steps new tokens are in the run
  int64_t generation_steps = 0;
  // A pooled run: the focused head's whole map, recomputed from the run's q
  // and k (headMap), or why it could not be (it would not fit in memory).
  std::shared_ptr<const Mat> focus_map;
  int64_t focus_layer = -1, focus_head = -1;
  std::string focus_error;
  // An encoder–decoder's or a vision model's run (then `analysis` is null);
  // `error`: why there is none (no picture yet, a picture that cannot be read).
  std::shared_ptr<const Seq2SeqAnalysis> seq2seq;
  std::shared_ptr<const VisionAnalysis> vision;
  std::string error;
  // The scene's inputs and files, as computed (a load chooses them: startOnModel).
  ModelInputs inputs;
  std::shared_ptr<const ModelFiles> files;
};

constexpr int kPredictions = 5;  // tokens listed after the selected query
constexpr int64_t kLensPositions = 24;  // the logit lens' view: the positions up to the selected query

// Whether `o` holds its kind's run to draw (not an error, nor a text too long for the model).
bool hasModelRun(const ModelOutput& o);

// The inputs of an encoder–decoder or a ViT as a scene names them (gui
// --target/--image, a lesson's "target"/"image"): no target is the model's
// own translation; no picture is the first example a shipped model carries;
// a picture "examples/…" of a shipped model is that example, anything else a file.
void setModelInputs(ModelScene& s, const std::string& model_path, const std::string& target, const std::string& image);

// Where a model just loaded starts (from `path`):
// a ViT without a picture on its first shipped example; an encoder–decoder
// without a target on its own translation; and, while the text is a
// model's example (no one's own words), on the text the new model opens on
// (modelExampleText: the shipped T5 on a sentence it translates).
void startOnModel(ModelScene& s, const std::string& path);

// What a ModelAnalysis derives from its run: a pooled run's thumbnails and
// block labels, or every map's rollout and its colour ranges (self-attention's only).
void finishAnalysis(ModelAnalysis& a);
// The pooled blocks' positions, "0–31", "32–63", … (run.pooled).
std::vector<std::string> pooledBlockLabels(const ModelRun& run);
// Head (layer, head) of a run that pooled its maps, whole: recomputed from the
// run's q and k (headMap), or read from the file (attentionHeadMap). InputError
// when it would not fit in memory.
Mat wholeHeadMap(const ModelOutput& out, int64_t layer, int64_t head, const RunContext& ctx = {});

// Runs what `s` needs. From `previous` (may be null) it reuses the model run
// when model, text and truncation are the same (then a new predict_at costs
// one row of the LM head, and a pooled run's new focused head its map), and
// the induction run when the model is. Text longer than the positions (without truncate) is not an
// error here: the output says so (too_long_*), so the GUI can offer to truncate.
ModelOutput computeModelScene(const ModelScene& s, const ModelOutput* previous, const RunContext& ctx);

// Generates from `s` (its text, model, truncation) and computes the scene
// after each new token, handing every partial output to `publish` (worker
// thread) as the tokens arrive. Returns the output of the whole generation.
ModelOutput generateModelScene(const ModelScene& s, const GenerateOptions& o, const RunContext& ctx,
                               const std::function<void(std::shared_ptr<const ModelOutput>)>& publish);

// The first pattern variant (registry order) and its defaults.
const VariantInfo* defaultPatternVariant();

// [SECTION] Data of the views as Results (generic widgets and figures)

// Layer l's heads: weights [H, L, L] with the tokens on both axes.
Result layerResult(const ModelRun& run, int64_t layer, const std::string& title);
// Every (layer, head) as one "head" of a Result, layer-major ("L0 H0", …).
Result allHeadsResult(const ModelRun& run, const std::string& title);
// A pooled run's grid: every head's pooled map, the blocks as tokens.
Result pooledHeadsResult(const ModelAnalysis& a, const std::string& title);
// The line a view that reads every map shows for a pooled run.
std::string everyMapRefusal(const ModelAnalysis& a, const std::string& view);
// A model too large for a thumbnail per head (a head's map under
// kReadableThumbnail pixels or layout units): the grid shows one summary per
// head instead, a layers × heads matrix (headMeasureResult).
constexpr float kReadableThumbnail = 28.0f;
// Whether layers × heads thumbnails in w × h (h ≤ 0: as tall as they need) keep kReadableThumbnail each.
bool thumbnailsReadable(float w, float h, int64_t layers, int64_t heads);
// The summaries such a grid can show, in the order of headMeasureNames().
enum class HeadMeasure { Sink, PreviousToken, Induction, Entropy, Distance };
const std::vector<std::string>& headMeasureNames();  // "sink", "previous-token", "induction", "entropy", "distance"
// Parses one of headMeasureNames(); throws InputError naming `flag` and the names.
HeadMeasure headMeasureFromName(const std::string& name, const std::string& flag);
// What the measure is, as a map's title: "first-token share", "mean distance (tokens)", …
std::string headMeasureLabel(HeadMeasure m);
// The measure of every head as one [layers, heads] map, rows "L0" …, columns
// "H0" …; `heads_down`: [heads, layers] (a narrow page with more heads than layers).
Result headMeasureResult(const ModelAnalysis& a, HeadMeasure m, const std::string& title, bool heads_down = false);
// Their names; with grouped-query attention the key/value head too ("L0 H5 kv 1").
std::vector<std::string> layerHeadNames(const ModelRun& run);
// The key `query` attends to most in head (layer, head) of a run that kept
// its maps: the Q/K view's default pair, on screen and in figures.
int64_t strongestKey(const ModelRun& run, int64_t layer, int64_t head, int64_t query);
// "L1 H2"
std::string headLabel(int64_t layer, int64_t head);
// "12 layers × 12 heads", "1 layer × 1 head"
std::string layersByHeads(int64_t layers, int64_t heads);
// Rollout R_l as a one-head Result.
Result rolloutResult(const ModelAnalysis& a, int64_t layer, const std::string& title);
// The head's attention with the pair's terms as extras: q, k, q∘k bars and
// the dot product, score and weight as scalars; RoPE runs add the frequency
// bands' bars (by θ_i) and the rotation angles m·θ_i mod 2π [L, d/2].
Result qkResult(const ModelRun& run, const QkTerms& t, const std::string& title);
// θ_i of a RoPE run as labels of its dimension pairs: "1", "0.42", "1e-04".
std::vector<std::string> thetaLabels(const ModelRun& run, int64_t layer);
// The pattern's weights, with the real head (Weights extra), the mass kept
// per query (TokenValues) and overall (Scalar).
Result patternResult(const HeadPattern& p, const ModelRun& run, const std::string& title);

// The head-summary table as text rows (figure export, one row per head).
// `columns`: indices into headTableColumns() (empty: all nine), as the screen's table shows them.
std::vector<std::vector<std::string>> headTableRows(const std::vector<HeadSummary>& summaries,
                                                   const std::vector<int>& columns = {});
std::vector<std::string> headTableColumnNames(const std::vector<int>& columns);
// The table's plot (the screen's under a short table, and the figure's):
// induction against previous-token score, a dot per head in its layer's
// colour, a legend of the layers (up to 12).
Scatter headScatter(const std::vector<HeadSummary>& summaries);

// [SECTION] Text coloured by attention

// What shades each token of the text view: the attention the selected query
// gives it from one head, the mean of the layer's heads, or rollout through
// the layer (the rollout view's R_l).
enum class TextShade { Head, LayerMean, Rollout };
const std::vector<std::string>& textShadeNames();  // "head", "layer", "rollout"
// Parses one of textShadeNames(); throws InputError naming `flag` and the names.
TextShade textShadeFromName(const std::string& name, const std::string& flag);
// Query `query`'s row of that attention over the run's tokens: weights[j]
// is what it gives key j, −1 where a causal query cannot see j (after it).
// A pooled run's head is the focused map it recomputed (ModelOutput::focus_map),
// else recomputed here; the layer's mean and rollout read every map of the
// layer, which a pooled run refuses (everyMapRefusal). `what` names it:
// "L1 H2", "layer 1, mean over 4 heads", "rollout through layer 1".
struct ReceivedAttention {
  std::vector<float> weights;
  std::string what;
};
ReceivedAttention receivedAttention(const ModelOutput& out, TextShade shade, int64_t layer, int64_t head, int64_t query);
// The colour range of those weights under the heatmaps' colour scale: [0, the row's largest].
ValueRange receivedRange(const ReceivedAttention& r, const ColorScale& scale);

// A short name for the model: its folder name, or the embedded label.
std::string modelShortName(const Model& m);
// The short name of what an output shows: its model, or its file of attention.
std::string outputName(const ModelOutput& o);

}  // namespace attn
