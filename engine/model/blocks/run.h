// What a run of a model is: the options it takes and what it gives back
// (ModelRun; Seq2SeqRun and VisionRun for the other kinds), the types every
// part of the pass fills and the face hands out. The model itself is opaque
// here: modelInfo and modelTokenizer read it.
#pragma once

#include "engine/error.h"
#include "engine/model/checkpoint/checkpoint.h"
#include "engine/model/tokenizers/tokenizer.h"
#include "engine/tensor.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attn {

// Weights are views into the safetensors maps (F32) or converted copies
// (F16/BF16). Linear layers keep the stored layout: GPT-2's Conv1D is
// [in, out] (y = x W + b), BERT's nn.Linear is [out, in] (y = x Wᵀ + b).
class Model;
const ModelInfo& modelInfo(const Model& m);
const Tokenizer& modelTokenizer(const Model& m);

// Text with more tokens than the model has positions. The GUI offers to truncate.
struct TooLongError : InputError {
  TooLongError(const std::string& msg, int64_t tokens, int64_t limit) : InputError(msg), tokens(tokens), limit(limit) {}
  int64_t tokens, limit;
};

struct Prediction {
  int32_t id = 0;
  std::string token;
  float probability = 0;
};

// `--maps`: every map, the pooled maps only, none, or the maps of some heads.
// Auto: every map when they fit in memory, else pooled. The pooled maps and
// the head summaries are computed in every mode (engine/model/blocks/maps.h).
struct MapsChoice {
  enum class Mode { Auto, All, Pooled, None, Heads };
  Mode mode = Mode::Auto;
  std::vector<std::pair<int64_t, int64_t>> heads;  // Heads: (layer, head), as given
};

// Pooled maps: the L positions cut into n = ⌈L / s⌉ ≤ 256 blocks of
// s = ⌈L / min(L, 256)⌉ (the last one shorter). mean(i, j) is the mean of the
// weights from query block i to key block j, max(i, j) their maximum.
// None are made (mean and max empty) where they would be the maps a run
// handed on whole through ModelRunOptions::map_rows (blocks of 1: maps.h).
struct PooledMaps {
  int64_t block = 1, n = 0;
  std::vector<Mat> mean, max;  // [layer·heads + head]  [n, n]
};

struct HeadSummary {
  int64_t layer = 0, head = 0;
  double previous_token = 0;  // mean over queries i ≥ 1 of A[i, i−1]
  // First-token share (attention sink): mean over queries i ≥ 1 of A[i, 0].
  // Query 0 is left out: a causal model's first row is always [1, 0, …].
  // Above kSinkShare the model view marks the head as a sink.
  double sink = 0;
  double induction = 0;       // on a repeated random sequence t₁…t_T t₁…t_T: mean over the second copy of
                              // A[i, i−T+1] (the token after the previous occurrence of the current one)
  double mean_distance = 0;   // mean over queries of Σ_j A[i, j]·|i − j|
  double entropy = 0;         // mean over queries of −Σ_j A[i, j] ln A[i, j], in nats
  // Grouped-query attention: query head h reads key/value head
  // kv_head = h / (heads / kv_heads); group_size query heads share it.
  int64_t kv_head = 0, group_size = 1;
  // How alike the maps of the heads sharing this head's key/value head are:
  // the mean over pairs a < b of the group and over queries i (every k-th,
  // k = ⌈L / 64⌉, so a long text costs what 64 queries cost) of
  // JS(A_a[i, ·] ‖ A_b[i, ·]) in bits (log₂): 0 identical maps, 1 disjoint
  // ones. The same for every head of a group; 0 when group_size is 1.
  double group_divergence = 0;
};

using MapRowsFn = std::function<void(int64_t layer, int64_t head, int64_t row0, const Eigen::Ref<const Mat>& rows)>;

// Heads knocked out of a run (Michel et al. 2019; TransformerLens' ablation):
// each head's output, before the output projection, replaced by zeros or by
// its mean over the run's positions. Later layers see the change; the head's
// own map is the one it computed.
struct HeadAblation {
  enum class Mode { Zero, Mean } mode = Mode::Zero;
  std::vector<std::pair<int64_t, int64_t>> heads;  // (layer, head), from 0
};

// What a run changes in its own pass, or keeps of it, beyond the maps: the
// questions of which heads matter (engine/model/analysis/interventions.h).
// The residual stream entering layer l is resid_l ([L, d]; resid_0 the
// embeddings, resid_layers what the final norm reads). Only for a pass from
// position 0 without a KV cache.
struct Interventions {
  HeadAblation ablate;
  // Activation patching (Meng et al. 2022; Wang et al. 2023): a head's output
  // before the output projection, or the residual stream entering a layer at
  // one position, replaced by another run's value.
  struct HeadPatch {
    int64_t layer = 0, head = 0;
    Mat out;  // [L, d_head]
  };
  struct ResidualPatch {
    int64_t layer = 0, position = 0;
    RowVec value;  // [d]
  };
  std::vector<HeadPatch> patch_heads;
  std::vector<ResidualPatch> patch_residual;
  // Start at layer `resume_layer` from resid (`resume`, [L, d]) instead of the
  // embeddings, skipping the layers before it: what an edit of layer l
  // changes is computed from layer l on. resume_layer = layers runs the
  // final norm alone (the logit lens). −1: from the embeddings.
  int64_t resume_layer = -1;
  const Mat* resume = nullptr;
  bool keep_residual = false;  // ModelRun::residual
  bool keep_heads = false;     // ModelRun::head_out
  // ModelRun::head_writes at these positions (direct logit attribution).
  std::vector<int64_t> write_positions;
  bool value_norms = false;  // ModelRun::value_norms (the views' q, k, v must be kept)
  bool empty() const {
    return ablate.heads.empty() && patch_heads.empty() && patch_residual.empty() && resume_layer < 0 &&
           !keep_residual && !keep_heads && write_positions.empty() && !value_norms;
  }
};

// The final norm as the pass applied it, for a family whose layers add
// straight into one residual stream that it normalises once (pre-norm):
// hidden = γ ⊙ n(x) + β, n(x) = (x − mean x) / σ (LayerNorm, centred) or
// x / σ (RMSNorm), σ = √(var x + ε) or √(mean x² + ε); γ = offset + w.
struct FinalNorm {
  bool present = false;  // false: the family's pass is not such a sum (post-norm layers)
  bool centred = true;
  const float* w = nullptr;  // [d]
  const float* b = nullptr;  // [d], or null
  float offset = 0;
  double eps = 0;
};

struct ModelRunOptions {
  bool truncate = false;  // cut the tokens at the model's positions instead of throwing TooLongError
  int top_k = 5;          // predictions per position (models with an LM head)
  // The positions whose predictions are wanted: the LM head runs on these
  // rows only (for GPT-2 small it costs half as much as the 12 layers when run
  // on every row). Negative counts from the end (−1: the last token). Empty:
  // every position. Out of range: InputError.
  std::vector<int64_t> predict_at;
  MapsChoice maps;
  // The pooled maps and the head summaries (false: a pass read for its hidden
  // state alone, as the interventions' edited passes are).
  bool summarize = true;
  // Keep each layer's q, k, v (and q, k before the rotation or the norm) for
  // the views, or, when the maps are not all kept, the q and k any map can be
  // recomputed from (ModelRun::scores, headMap); a run that only writes maps
  // and summaries (the CLI) drops them.
  bool keep_projections = true;
  // Called with every block of rows of every map (layer, head, first row,
  // rows [n, L]) when the maps are All, instead of keeping them: the CLI
  // writes attention.npy this way. May be called from any thread.
  MapRowsFn map_rows;
  Interventions edit;  // what the pass changes or keeps beyond the maps
};

// The keys query i (position p0 + i) reads: one contiguous range, so a block
// of queries computes only the keys some row of it sees. Causal: j ≤ p0 + i;
// with a window W, p0 + i − j < W (transformers' rule), or |p0 + i − j| ≤ W/2
// when bidirectional (ModernBERT's local layers).
struct KeyRange {
  int64_t p0 = 0, keys = 0;  // keys: p0 + L, every position run so far
  bool causal = true;
  int64_t window = 0;  // 0: none
  int64_t first(int64_t i) const;
  int64_t end(int64_t i) const;  // one past the last
};

// What one layer's scores were made of: q (rotated, [L, heads·d_head]) and
// k (the cache's keys included, [p0 + L, kv_heads·d_head]), the keys each
// query reads, the scale and the soft-cap (ALiBi: ModelRun::alibi_slopes).
struct LayerScores {
  Mat q, k;
  KeyRange keys;
  float scale = 1;
  double softcap = 0;
};

class MapStream;    // engine/model/blocks/maps.h
class PassThreads;  // engine/parallel.h

struct ModelRun {
  std::vector<int32_t> ids;          // BERT: with [CLS] … [SEP]; LLaMA: with <s> when the tokenizer adds it
  std::vector<std::string> tokens;   // display strings
  // The maps' rows where they are not `tokens`: cross-attention read from a
  // file (app/model/attention_scene.h), target rows over source columns. Empty: `tokens`.
  std::vector<std::string> query_tokens;
  int64_t layers = 0, heads = 0, d_head = 0;
  int64_t kv_heads = 0;              // query heads h share key/value head h / (heads / kv_heads)
  int64_t sliding_window = 0;        // Mistral: keys further back than this are masked; 0: none
  std::vector<int64_t> layer_window; // the window of each layer (ModelConfig::layer_window); empty: none
  bool causal = true;                // GPT-2 and LLaMA causal, BERT bidirectional
  bool rope = false;                 // positions enter as rotations of q and k (the LLaMA family)
  std::vector<double> rope_theta;    // θ_i per rotated dimension pair (after rope_scaling), when rope
  // A run continuing a KV cache (generation) holds the rows of positions
  // first_position … first_position + L − 1; its maps have first_position + L columns.
  int64_t first_position = 0;
  // [layer][head] [L, first_position + L]: softmax weights; a map the run
  // does not keep (maps pooled, none, or other heads) is an empty matrix.
  std::vector<std::vector<Mat>> attention;
  MapsChoice::Mode maps = MapsChoice::Mode::All;  // what `attention` holds (never Auto)
  PooledMaps pooled;                       // every head's map pooled (runs from position 0)
  std::vector<HeadSummary> summaries;      // every head's summaries, induction left 0 (runs from position 0)
  std::string maps_note;                   // why Auto chose what it did ("" when chosen by the caller)
  bool keep_projections = true;            // q, k, v … below are kept (ModelRunOptions::keep_projections)
  bool keep_scores = false;                // `scores` is kept (a run whose maps are not all kept, for the views)
  std::vector<LayerScores> scores;         // [layer] when keep_scores: maps on demand (headMap)
  MapStream* stream = nullptr;             // while the pass runs: where attentionLayer sends the maps
  PassThreads* pass_threads = nullptr;     // while the pass runs: RunContext::pass_threads (enterLayer)
  const Interventions* edit = nullptr;     // while the pass runs: ModelRunOptions::edit
  // [layer] [L, heads·d_head], head h = columns [h·d_head, (h+1)·d_head): the
  // projected queries, keys and values (bias included) the attention used:
  // after the rotation for RoPE models, and with a GQA key/value head
  // repeated for each query head that reads it.
  std::vector<Mat> q, k, v;
  std::vector<Mat> q_unrotated, k_unrotated;  // RoPE models: q and k before the rotation (same layout)
  // What the newer families change, for the views (empty / 0 where a family has none):
  std::vector<std::vector<double>> layer_rope_theta;  // [layer] θ_i when layers differ (local RoPE base); else rope_theta
  int64_t rotary_dims = 0;           // partial rotary: the first rotary_dims of each head rotate (0: all, when rope)
  std::vector<Mat> q_prenorm, k_prenorm;  // QK-norm: q and k before the norm (same layout as q_unrotated)
  double score_scale = 0;            // the scores' factor (0: 1/√d_head)
  double softcap = 0;                // scores → c·tanh(s/c) before the mask (Gemma 2)
  std::vector<double> alibi_slopes;  // ALiBi: s_ij += slope_h · j (BLOOM), per head
  // What Interventions asked the pass to keep (empty otherwise):
  std::vector<Mat> residual;    // [layers + 1] [L, d]: resid_l, the stream entering layer l; the last before the final norm
  std::vector<Mat> head_out;    // [layer] [L, heads·d_head]: the heads' outputs before the output projection, as edited
  // [layer] [heads·P, d]: head h's output at write_positions[p] through its
  // rows of the output projection, row h·P + p; head_bias [layer] [d] the
  // projection's bias (zeros without one).
  std::vector<Mat> head_writes;
  std::vector<RowVec> head_bias;
  std::vector<Mat> attention_out;  // [layer] [P, d]: the attention's output at the write positions, as the pass added it
  // [layer] [L, heads]: ‖v_j^h W_O^h‖, key j's value through head h's rows of
  // the output projection (Kobayashi et al. 2020); bias left out.
  std::vector<Mat> value_norms;
  FinalNorm final_norm;         // set by a pass whose final norm is a pre-norm stack's
  Mat hidden;  // GPT-2: after ln_f; LLaMA: after the final RMSNorm; BERT: the last layer's output   [L, d_model]
  // [L][k]: empty without an LM head, and at positions not in predict_at.
  std::vector<std::vector<Prediction>> top_k;
  bool truncated = false;
  double flops = 0, compute_seconds = 0;
  double attention_flops = 0, attention_seconds = 0;  // of those, the attention's (QKᵀ, softmax, AV, maps streamed)
  // [layer] the OpenMP threads each layer ran on (engine/parallel.h
  // PassThreads: a long pass looks at the free cores again between layers; 0:
  // a layer a resumed pass skipped), and the most of them.
  std::vector<int> layer_threads;
  int threads = 1;
};

// The tokens of the maps' rows (query_tokens, or tokens).
inline const std::vector<std::string>& queryTokens(const ModelRun& r) { return r.query_tokens.empty() ? r.tokens : r.query_tokens; }

// An encoder–decoder's run (T5, BART): the three kinds of maps, every one kept.
struct Seq2SeqRun {
  std::vector<int32_t> source_ids, target_ids;  // target: decoder_start_token_id first
  std::vector<std::string> source_tokens, target_tokens;
  int64_t encoder_layers = 0, decoder_layers = 0, heads = 0, d_head = 0;
  std::vector<std::vector<Mat>> encoder_attention;  // [layer][head] [S, S]
  std::vector<std::vector<Mat>> decoder_attention;  // [layer][head] [T, T], causal
  std::vector<std::vector<Mat>> cross_attention;    // [layer][head] [T, S]: target rows over source columns
  Mat encoder_hidden;  // [S, d] the encoder's output (T5: after its final norm)
  Mat decoder_hidden;  // [T, d] the decoder's output (T5: after its final norm)
  // [T][k]: the next token after each target position; empty without an LM head.
  std::vector<std::vector<Prediction>> top_k;
  double flops = 0, compute_seconds = 0;
};

// A Vision Transformer's run on one picture: every map kept.
struct VisionRun {
  int64_t layers = 0, heads = 0, d_head = 0;
  int64_t grid_h = 0, grid_w = 0;  // patches down and across: P = grid_h · grid_w, in raster order after [CLS]
  std::vector<std::vector<Mat>> attention;  // [layer][head] [1 + P, 1 + P], token 0 the [CLS]
  Mat hidden;                               // [1 + P, d] after the final LayerNorm
  Array pixel_values;                       // [3, H, W] as the model read them
  std::vector<Prediction> top_k;            // the classifier's labels (id2label), best first; empty without one
  double flops = 0, compute_seconds = 0;
};

}  // namespace attn
