// Real checkpoints in the Hugging Face layout: config.json, model.safetensors
// (or shards with model.safetensors.index.json) and the tokenizer files.
// Each architecture is a family of engine/model/families/family.h (modelFamilies():
// GPT-2, BERT, the LLaMA family, …), run in Eigen with every attention map
// captured, or, for a long text, pooled and summarised as it is made
// (engine/model/blocks/maps.h).
#pragma once

#include "engine/error.h"
#include "engine/model/checkpoint/safetensors.h"
#include "engine/model/tokenizers/tokenizer.h"
#include "engine/run_context.h"
#include "engine/tensor.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attn {

// Rotary position embedding of one attention kind (Su et al. 2021), with
// transformers' rope_type rules: θ_i = theta^(−2i/rotary_dims) for the
// rotary_dims/2 pairs, then
//   "linear": θ_i / factor;
//   "llama3": wavelengths 2π/θ_i above original/low_freq divided by factor,
//             below original/high_freq kept, between blended;
// each computed in float32 as transformers computes inv_freq (the angle
// m·θ_i too: rotateHalfHeads' RopeAngle::Float32).
// Every other rope_type (yarn, dynamic, longrope, …) is refused where read.
struct RopeSpec {
  double theta = 10000;
  std::string type = "default";  // "default", "linear" or "llama3"
  double factor = 1, low_freq = 1, high_freq = 4;
  int64_t original_positions = 8192;
  double partial = 1.0;  // partial_rotary_factor: the fraction of each head's dimensions that rotate

  int64_t rotaryDims(int64_t head_dim) const;               // even, ≤ head_dim
  std::vector<double> frequencies(int64_t head_dim) const;  // θ_i (float32 values), rotaryDims/2 of them
  nlohmann::json toJson() const;
  bool operator==(const RopeSpec&) const = default;
};

// What config.json says, as the model's family (engine/model/families/family.h) read
// it. Fields a family does not use keep their defaults.
struct ModelConfig {
  std::string arch_name;    // as config.json names it ("GPT2LMHeadModel")
  std::string family;       // the family's model_type: "gpt2", "bert", "llama", "gemma2", …
  std::string label;        // the family as people say it: "GPT-2", "Gemma 2"
  bool causal = true;       // false: bidirectional (BERT, ModernBERT)
  std::string dtype;        // config's dtype (transformers 5) or torch_dtype: what it was saved as
  int64_t layers = 0;       // n_layer / num_hidden_layers
  int64_t heads = 0;        // n_head / num_attention_heads
  int64_t kv_heads = 0;     // num_key_value_heads (GQA: query heads h share key/value head h / (heads / kv_heads))
  int64_t head_dim = 0;     // head_dim (default d_model / heads)
  int64_t d_model = 0;      // n_embd / hidden_size
  int64_t d_ff = 0;         // n_inner (default 4·d) / intermediate_size
  int64_t positions = 0;    // n_positions / max_position_embeddings
  int64_t vocab = 0;        // vocab_size
  int64_t type_vocab = 0;   // BERT type_vocab_size
  double ln_eps = 1e-5;     // layer_norm_epsilon / layer_norm_eps
  bool lower_case = true;   // BERT tokenizer (tokenizer_config.json do_lower_case)
  double rms_eps = 1e-6;    // rms_norm_eps
  std::string activation;   // the MLP's activation as config.json names it ("silu", "gelu_pytorch_tanh")
  std::string blocks;       // the blocks in words, for model info: "RMSNorm (ε 1e-05) / SwiGLU, q/k/v biases"
  // Positions as rotations of q and k (RoPE): `rope` for full-attention
  // layers, `rope_local` for sliding-window layers where a family gives them
  // their own base (Gemma 3, ModernBERT).
  bool uses_rope = false;
  RopeSpec rope, rope_local;
  bool local_rope = false;  // rope_local is used (set by the family); else every layer uses rope
  bool qkv_bias = false;    // Qwen2; Llama's attention_bias
  bool tie_embeddings = false;
  // Keys a query sees (itself included) per layer; 0: all. Empty: no layer
  // has a window. sliding_window is the window of the windowed layers.
  std::vector<int64_t> layer_window;
  int64_t sliding_window = 0;
  double score_scale = 0;     // the score's factor; 0: 1/√head_dim
  double attn_softcap = 0;    // scores → c·tanh(s/c) before the mask (Gemma 2); 0: none
  double final_softcap = 0;   // logits → c·tanh(z/c) (Gemma 2); 0: none
  bool qk_norm = false;       // q and k normalised per head (Qwen3, Gemma 3) or whole (OLMo 2)
  bool alibi = false;         // linear biases instead of positions (BLOOM)
  bool parallel_residual = false;  // x + attn(LN x) + mlp(LN' x) (GPT-NeoX, Phi-2)
  int64_t embed_dim = 0;      // token embeddings' width when projected in and out (OPT's word_embed_proj_dim); 0: d_model
  bool post_ln = false;       // each block's norms after its residual adds (OPT-350m: do_layer_norm_before false)
  bool final_norm = true;     // a norm after the last block (OPT: absent when post-LN or _remove_final_layer_norm)
  bool linear_bias = true;    // biases on every linear layer (OPT's enable_bias)
  // Encoder–decoder models (T5, BART; engine/model/kinds/seq2seq.h, encoderDecoder()):
  // `layers` are the encoder's, decoder_layers the decoder's (0: an encoder alone, T5EncoderModel).
  int64_t decoder_layers = 0;
  int64_t decoder_start = -1;        // decoder_start_token_id: the decoder's first token
  double embed_scale = 1;            // token embeddings × this (BART's scale_embedding: √d_model)
  int64_t relative_buckets = 0;      // T5's relative_attention_num_buckets (0: no relative bias)
  int64_t relative_max_distance = 0; // T5's relative_attention_max_distance
  // Vision Transformers (engine/model/kinds/vision.h, vision()): pictures of image_size² pixels in patch_size² patches.
  int64_t image_size = 0, patch_size = 0, channels = 0;
  std::vector<std::string> labels;  // the classifier's id2label, by id (empty without a classifier)

  // The model's kind, from its family (engine/model/families/family.h: a family with
  // `seq2seq` is an encoder–decoder, one with `vision` reads pictures), the
  // one place it is kept: false for a config no family read.
  bool encoderDecoder() const;
  bool vision() const;
  // The window of layer l (0: none), and its RoPE.
  int64_t windowOf(int64_t l) const { return layer_window.empty() ? 0 : layer_window[static_cast<size_t>(l)]; }
  const RopeSpec& ropeOf(int64_t l) const { return local_rope && windowOf(l) > 0 ? rope_local : rope; }
};

// Reads config.json's text (`where` names the file in errors): the
// architecture and its sizes, each checked for type and range; a field that
// changes the computation and is not implemented is refused. Throws InputError.
ModelConfig parseConfig(const std::string& text, const std::string& where);

// The families a checkpoint can be, in registry order (model info, the
// error for an unknown architecture, `attnlab model families`, docs/models.md).
struct FamilySummary {
  std::string model_type, label, paper;
  std::vector<std::string> architectures;
  bool causal = true;
  std::string attention;  // attentionKind
};
std::vector<FamilySummary> modelFamilySummaries();
// "causal", "bidirectional", or "encoder–decoder" (a bidirectional encoder,
// a causal decoder and the decoder's cross-attention to the encoder).
std::string attentionKind(bool causal, bool encoder_decoder);

// Where the files come from: a folder on disk, or the embedded default.
struct ModelFiles {
  std::string label;  // folder path or "embedded default model"
  // The file's bytes, or nullopt when it does not exist. Called for
  // "config.json", "model.safetensors", "model.safetensors.index.json",
  // shard names, "vocab.json", "merges.txt", "vocab.txt", "tokenizer.json",
  // "tokenizer_config.json".
  std::function<std::optional<std::string>(const std::string& name)> read_text;
  std::function<std::shared_ptr<const SafetensorsFile>(const std::string& name)> open_safetensors;  // null: missing
};
// PATH is a model folder, or a .safetensors file whose folder holds the rest.
ModelFiles filesOnDisk(const std::string& path);

struct TensorSummary {
  std::string name, dtype, file;
  std::vector<int64_t> shape;
};

struct ModelInfo {
  std::string label;
  ModelConfig config;
  int64_t parameters = 0;
  std::string dtype;         // "F32", "F16", "BF16" or "mixed"
  uint64_t bytes_on_disk = 0;
  std::vector<TensorSummary> tensors;  // by name
};
nlohmann::json modelInfoToJson(const ModelInfo& info);

// Weights are views into the safetensors maps (F32) or converted copies
// (F16/BF16). Linear layers keep the stored layout: GPT-2's Conv1D is
// [in, out] (y = x W + b), BERT's nn.Linear is [out, in] (y = x Wᵀ + b).
class Model;

// Reads config, tokenizer and weights; checks every tensor the architecture
// needs is present with the shape the config implies, and that no tensor is
// left unused (extra tensors are an error naming them). Calls
// ctx.progress() per layer; cancellable. Throws InputError naming the file.
std::shared_ptr<const Model> loadModel(const ModelFiles& files, const RunContext& ctx = {});
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

struct ModelRunOptions {
  bool truncate = false;  // cut the tokens at the model's positions instead of throwing TooLongError
  int top_k = 5;          // predictions per position (models with an LM head)
  // The positions whose predictions are wanted: the LM head runs on these
  // rows only (for GPT-2 small it costs half as much as the 12 layers when run
  // on every row). Negative counts from the end (−1: the last token). Empty:
  // every position. Out of range: InputError.
  std::vector<int64_t> predict_at;
  MapsChoice maps;
  // Keep each layer's q, k, v (and q, k before the rotation or the norm) for
  // the views, or, when the maps are not all kept, the q and k any map can be
  // recomputed from (ModelRun::scores, headMap); a run that only writes maps
  // and summaries (the CLI) drops them.
  bool keep_projections = true;
  // Called with every block of rows of every map (layer, head, first row,
  // rows [n, L]) when the maps are All, instead of keeping them: the CLI
  // writes attention.npy this way. May be called from any thread.
  MapRowsFn map_rows;
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

class MapStream;  // engine/model/blocks/maps.h

struct ModelRun {
  std::vector<int32_t> ids;          // BERT: with [CLS] … [SEP]; LLaMA: with <s> when the tokenizer adds it
  std::vector<std::string> tokens;   // display strings
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
  Mat hidden;  // GPT-2: after ln_f; LLaMA: after the final RMSNorm; BERT: the last layer's output   [L, d_model]
  // [L][k]: empty without an LM head, and at positions not in predict_at.
  std::vector<std::vector<Prediction>> top_k;
  bool truncated = false;
  double flops = 0, compute_seconds = 0;
  double attention_flops = 0, attention_seconds = 0;  // of those, the attention's (QKᵀ, softmax, AV, maps streamed)
  int threads = 1;  // OpenMP threads the pass ran on (engine/parallel.h threadsAvailable)
};

// Tokenizes `text` and runs the forward pass. Empty text and text longer
// than the positions (without truncate) throw InputError / TooLongError.
ModelRun runModel(const Model& m, const std::string& text, const ModelRunOptions& options = {},
                  const RunContext& ctx = {});
// The forward pass on given ids (BERT: the caller adds [CLS]/[SEP]).
ModelRun runModelIds(const Model& m, const std::vector<int32_t>& ids, const ModelRunOptions& options = {},
                     const RunContext& ctx = {});

// The LM head (GPT-2's tied head, BERT's MLM head) on rows `positions` of a
// run's hidden states, and the top-k tokens of each: [L] rows, filled at
// `positions` only. Models without an LM head give empty rows. Adds the
// head's FLOPs to *flops when given.
std::vector<std::vector<Prediction>> predictTokens(const Model& m, const Mat& hidden,
                                                   const std::vector<int64_t>& positions, int k,
                                                   const RunContext& ctx = {}, double* flops = nullptr);

}  // namespace attn
