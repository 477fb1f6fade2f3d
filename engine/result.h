// What a variant returns: data, not pictures. Views are generic over it.
#pragma once

#include "engine/params.h"
#include "engine/sparse.h"
#include "engine/tensor.h"

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn {

// How a view should treat an extra array.
enum class ExtraKind {
  Matrix,         // a 2-D array with its own axes, drawn as a heatmap (e.g. PE [L, d])
  Weights,        // [H, Lq, Lk] attention-like weights to show next to the main ones
  QueryPosition,  // [Lq]: a fractional key position per query, drawn as a marker (p_t)
  QueryWindow,    // [Lq, 2]: first and last allowed key per query, drawn as an outline
  TokenValues,    // [L]: one value per token, drawn as a strip or bars
  Scalar,         // [1]: a single number shown in the summary
  HeadValues,     // [H]: one value per head, drawn as bars labelled h0, h1, ... (span per head)
  Curves,         // [S, n]: S series of y over x = 0 … n−1, drawn as line plots with `markers`
  QueryGroup,     // [Lq]: block id per query; views outline the clicked query's block
  // Categorical data (Extra::categories names the categories, colour headColor(k)):
  TokenCategories,  // [L]: category per token, drawn as the token strip coloured by category (LSH bucket)
  CategoryValues,   // [n]: one value per category, drawn as bars in the category colours (bucket sizes)
  Points,           // [n, 3]: 2-D points (x, y, category) around the origin; `markers` are rays from the
                    // origin at angle x radians (sector boundaries), `arrows` vectors from the origin
  Stacked,        // [T, n] ≥ 0: one bar per row t stacking its n values in headColor(k), captioned
                  // row_labels[t] (ACT halting weights p_t^n with N(t), R(t))
  Picture,        // [h, w, 3] RGB in [0, 1]: the image a raster-order sequence is (Result::image_width
                  // wide); the image view draws each query's weights over it (SAGAN)
  Data,           // any shape: numbers to take away (compute's extras/<name>.npy) that views show
                  // another way or not at all (ACT's N(t) is in the stacked bars' captions)
};

std::string extraKindName(ExtraKind k);

// Smallest and largest finite value of an array, computed once per result
// (runVariant) so views and figures never rescan [H, L, L] per frame.
struct ValueStats {
  float min = 0.0f, max = 0.0f;
  int64_t non_finite = 0;  // NaN and ±Inf entries, counted in the same pass
  static ValueStats of(const float* data, int64_t n);
};

// A labelled x position on a Curves plot (R and z on the span ramp).
struct Marker {
  double x = 0;
  std::string label;
  int series = -1;  // the series it belongs to (its colour); -1: all
};

// A vector from the origin in a Points picture (LSH: a direction ±r_i of the random rotation).
struct Arrow {
  float x = 0, y = 0;
  std::string label;
  int category = -1;  // its colour; -1: neutral
};

struct Extra {
  std::string name;   // file stem under extras/, paper symbol where there is one ("p_t", "pe")
  std::string label;  // caption in views and figures ("predicted position p_t")
  ExtraKind kind = ExtraKind::Matrix;
  Array value;
  std::string row_axis, col_axis;  // Matrix: axis captions ("position", "dimension");
                                   // Curves: row_axis names the series ("head"), col_axis the x axis;
                                   // TokenValues: row_axis says what a bar is ("memory slot i")
  bool signed_values = false;      // Matrix, Weights: draw with a diverging colormap centred on 0
  bool unit_range = false;         // Matrix, Weights, TokenValues: probabilities on a fixed [0, 1] scale, not
                                   // [0, max] (NTM's weightings: a flat one stays pale, not a white column)
  // Matrix: when not empty the values are category indices 0 … n−1 with
  // these names, drawn in distinct colours with a legend ("A¹", "A²", "A¹ ∪ A²").
  std::vector<std::string> categories;
  // TokenCategories, CategoryValues, Points: the names of the categories; Curves: of the series.
  std::vector<Marker> markers;     // Curves: labelled x positions; Points: sector rays (x = angle, series = category)
  std::vector<Marker> levels;      // Curves: labelled y positions (x holds the y: ACT's 1 − ε), dashed across
  bool stepwise = false;           // Curves: a process over x that the view's timeline plays step by step
  std::vector<Arrow> arrows;       // Points
  // Weights: what the first index counts. "head" follows the result's heads
  // (the view pairs it with the main weights of that head); anything else
  // ("step") is the extra's own axis with its own slider.
  std::string slice_axis = "head";
  std::vector<std::string> row_labels;  // Stacked: caption under each row's bar; Matrix: each row's label;
                                        // TokenValues: under each bar (else the query tokens where there is
                                        // one value per query)
  bool integer = false;            // whole numbers (steps, bucket ids): compute writes them as int32
  ValueStats stats;                // filled by runVariant
};

// A process the views can play step by step (the timeline control): the
// parameter that selects the step (Transformer-XL's segment τ, LSH's round,
// adaptive span's z), and how many steps there are, labelled.
struct Timeline {
  std::string param;  // empty: none
  int64_t count = 0;  // positions 0 … count − 1, the parameter's values
  std::vector<std::string> labels;  // one per position ("round 2 of 4"); empty: "param = position"
};

// A named range of key columns, drawn as a band with a divider in matrix
// views (Transformer-XL: "memory" | "segment τ").
struct KeyBand {
  int64_t begin = 0, end = 0;  // columns [begin, end)
  std::string label;
};

// One panel of a step-by-step walkthrough (the "walkthrough" view; the LSH
// figure's stages): a matrix in its own row and column order, with a
// category per row and per column drawn as coloured strips along the axes
// and divider lines (chunk boundaries). Sparse, so a panel of a long
// sequence is drawn at screen resolution through rasterize().
struct Stage {
  std::string title;    // "(c) shared-QK: equal buckets"
  std::string caption;  // one line under the title
  SparseRows matrix;    // values: what the panel shows (weights)
  std::vector<std::string> row_labels, col_labels;      // token of each row / column in this order
  std::vector<int32_t> row_categories, col_categories;  // category per row / column; empty: no strip
  std::string category_axis;                            // what a category is ("bucket")
  std::vector<int64_t> row_dividers, col_dividers;      // a line before each of these rows / columns
};

struct Result {
  std::string variant;
  Params params;
  std::vector<std::string> q_tokens, k_tokens;  // axis labels: rows are queries, columns keys

  // Per head h: weights[h] is [Lq, Lk] after mask and softmax; scores[h] is
  // the same shape before mask and softmax. For non-attention variants
  // (positional encodings) weights holds the matrix the main view shows.
  // Sparse variants set `sparse` (one per head, values = weights) and fill
  // weights/scores/mask as well only where denseFits(); views of a result
  // with empty `weights` draw `sparse` through rasterize().
  std::vector<Mat> weights;
  std::vector<Mat> scores;
  Mat mask;    // [Lq, Lk], 1 = key allowed, 0 = masked; empty means all allowed
  std::vector<SparseRows> sparse;
  std::vector<std::string> set_names;  // bit s of SparseRows::sets ("A¹ local", "A² strided")
  int64_t image_width = 0;  // > 0: the sequence is a raster-order image this many pixels wide
  // > 0: the keys are a coarser raster-order grid this many cells wide that
  // covers the same image (SAGAN's 2×2-pooled keys); 0: the keys are the pixels.
  int64_t key_image_width = 0;
  // Query pixels the image view shows at first, each with its own map (SAGAN: one per shape of its scene).
  std::vector<int64_t> image_queries;
  std::vector<KeyBand> key_bands;
  Timeline timeline;  // the process this result is one step of, where there is one
  Mat output;  // [Lq, d_out]; empty where the variant has no output
  bool weights_are_probabilities = true;  // false: signed values, diverging colormap
  bool weights_unit_range = false;        // drawn on a fixed [0, 1] scale, not [0, max] (as Extra::unit_range)
  std::string weights_label = "attention weight";
  std::string scores_label = "pre-softmax score";
  // The weights' axis titles where they are not a variant's (a model's grid of head summaries: "layer",
  // "head"); empty: weightAxes() has them from the registry.
  std::string weights_row_axis, weights_col_axis;

  ValueStats weights_stats;  // over all heads; filled by runVariant

  std::vector<Extra> extras;
  std::vector<Stage> stages;  // the walkthrough's panels, in order
  std::map<std::string, Mat> inputs;  // every tensor used, by paper symbol: q, k, v, x, w_q, ...
  std::vector<std::string> vector_inputs;  // names in `inputs` that are vectors [n, 1], written as 1-D [n]
  // Names in `inputs` written with another shape of the same C-order values (SAGAN's x [C, H, W] held as [C, H·W]).
  std::map<std::string, std::vector<int64_t>> input_shapes;

  double flops = 0;            // floating-point operations of the computation
  double compute_seconds = 0;  // engine time alone, set by runVariant
  int threads = 0;             // OpenMP threads the variant ran on, set by runVariant

  // [H, Lq, Lk] of weights computed but not kept (RunContext::keep_weights
  // off on a variant that streams them); zeros when weights or sparse hold them.
  std::array<int64_t, 3> streamed_shape{};

  int heads() const {
    return static_cast<int>(!weights.empty() ? weights.size() : !sparse.empty() ? sparse.size() : streamed_shape[0]);
  }
  int64_t queries() const {
    return !weights.empty() ? weights[0].rows() : !sparse.empty() ? sparse[0].rows : streamed_shape[1];
  }
  int64_t keys() const { return !weights.empty() ? weights[0].cols() : !sparse.empty() ? sparse[0].cols : streamed_shape[2]; }
  bool isSparse() const { return !sparse.empty(); }
  const Extra* findExtra(const std::string& name) const;
  const Extra* firstExtra(ExtraKind kind) const;  // e.g. the QueryPosition overlay
  // Whether a matrix extra's rows are labelled by the query tokens: one row
  // per query, unless its rows are positions (a PE table is read by index).
  bool rowsAreTokens(const Extra& e) const;
  // Fills weights_stats (from sparse values when weights is empty) and every extra's stats.
  void computeStats();
  // After computeStats: the first array with a NaN or an infinity, or ""
  // when there is none. By default the weights, the extras (from their
  // stats, no second pass) and the output; the scores, as large as the
  // weights, are left out, since a non-finite score shows in its weights.
  // `scan_all` also reads the scores, mask, walkthrough panels and inputs.
  std::string firstNonFinite(bool scan_all = false) const;
};

class MatPool;

// A result shared with the views whose weights and scores go back to `pool`
// (when not null) once the last user lets go of it.
std::shared_ptr<const Result> shareResult(Result r, const std::shared_ptr<MatPool>& pool);

}  // namespace attn
