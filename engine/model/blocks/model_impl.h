// What the model's parts share: the model as the loader fills it, and the
// helpers and pass pieces (forward.cpp) the families and the kinds are built
// of. Not part of the engine's interface, whose face is engine/model.
#pragma once

#include "engine/model/blocks/maps.h"
#include "engine/model/blocks/run.h"
#include "engine/run_context.h"

#include <deque>
#include <functional>

namespace attn {

// A weight as a row-major matrix: a view into the mapped file (F32), a copy
// converted at load (F16/BF16 of small tensors), or, for the big matrices,
// the mapped tensor itself, converted only while its layer runs (a 2 GB BF16
// checkpoint never has all its F32 copies alive at once).
struct Weight {
  const float* data = nullptr;
  const SafetensorsFile* file = nullptr;  // with `entry`: 16-bit, converted by floats()
  const TensorEntry* entry = nullptr;
  int64_t rows = 0, cols = 0;
  // Stored as the transpose of the shape the family declared (TensorEntry::transposed): rows, cols as stored.
  bool transposed = false;
  // The values: `data`, or `entry` converted into `scratch` (F32 returned as is).
  Weight floats(std::vector<float>& scratch) const;
  bool present() const { return data || entry; }
  Eigen::Map<const Mat> mat() const { return {data, rows, cols}; }
  Eigen::Map<const RowVec> vec() const { return {data, rows * cols}; }
};

// A family's own weights (GPT-2's Gpt2Weights, …), held by the model.
struct FamilyWeights {
  virtual ~FamilyWeights() = default;
};

struct Family;
struct ConfigReader;
struct Seq2SeqRun;

class Model {
 public:
  ModelInfo info;
  const Family* family = nullptr;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<std::shared_ptr<const SafetensorsFile>> files;  // keep the maps alive
  std::deque<std::vector<float>> converted;                    // F16/BF16 (or unaligned F32) copies
  int32_t cls = -1, sep = -1;                                  // BERT specials, around the text when set
  int32_t bos = -1, eos = -1;                                  // beginning and end of text (−1: none)
  bool add_bos = false;                                        // the tokenizer files ask for bos first
  bool predicts = false;   // has an LM head (set by the family's load)
  Weight lm_head;          // [V, d] for families whose logits are hidden lm_headᵀ
  std::unique_ptr<FamilyWeights> weights;
  template <class W>
  const W& as() const {
    return static_cast<const W&>(*weights);
  }
};

// The keys and values of the positions run so far, per layer, as the
// attention reads them (RoPE keys already rotated; GQA: kv_heads·d_head
// columns). A run given a cache appends its rows and attends over all.
struct KvCache {
  std::vector<Mat> k, v;  // [layer] [length, kv_heads·d_head]
  int64_t length = 0;
};

// The threads of a pass over `tokens` tokens, for its length: one for tiny
// models; else the cores free now, looked at again between layers
// (PassThreads::between, through RunContext::pass_threads); with
// ctx.adapt_threads off, OpenMP's count as the caller set it (the tests that vary it).
PassThreads passThreads(const Model& m, int64_t tokens, const RunContext& ctx);
// The ids the model reads for `text`, special tokens included ([CLS]/[SEP],
// <s>), within max_tokens: longer text throws TooLongError, or is cut when
// `truncate` (setting *truncated).
std::vector<int32_t> promptIds(const Model& m, const std::string& text, int64_t max_tokens, bool truncate,
                               bool* truncated);
// The special token the tokenizer puts before a text: [CLS] (BERT, BART's
// <s>), the bos the LLaMA family adds, or −1 (T5, GPT-2).
int32_t leadingSpecial(const Model& m);
// A token as shown: the tokenizer's string, or "#id" past its vocabulary.
std::string tokenText(const Tokenizer& tok, int32_t id);

// [SECTION] Pieces the forward passes share (forward.cpp)
// y = x W + b (Conv1D, W [in, out]) or y = x Wᵀ + b (nn.Linear, W [out, in])     [L, out]
// A 16-bit lazy W is converted into `scratch` for the product.
void linear(const Mat& x, const Weight& w, const Weight* b, bool transposed, Mat& y);
double linearFlops(int64_t rows, const Weight& w);
// Up to kTiledRows rows (a decode step, a prompt) times a 16-bit nn.Linear
// weight [out, in]: each tile of output rows is converted into a per-thread
// buffer as it is multiplied, so the weights are read once as stored and
// never written out as floats (a decode step of a 1B model reads its 2.2 GB
// of BF16 instead of writing and re-reading 4.4 GB of floats). Longer inputs
// convert the whole matrix once: each tile would repack all their rows. One
// row times a block-quantized weight (a GGUF model's decode step) decodes it
// in registers instead (quants.h's dotRows).
//                                                             [R, in] → [R, out]
constexpr int64_t kTiledRows = 512;
void linearTiled16(const Mat& x, const Weight& w, Mat& y);
// A family's linear layers: nn.Linear [out, in] (lazy weights converted
// into `scratch`, or tile by tile for kTiledRows rows or fewer), an absent
// bias skipped, the FLOPs added to *flops.
void linearT(const Mat& x, const Weight& w, const Weight& b, std::vector<float>& scratch, double* flops, Mat& y);

// y = (x − mean) / √(var + ε) · γ (+ β), per row; β may be absent      [L, d]
void layerNorm(Mat& x, const Weight& gamma, const Weight& beta, double eps);
// y = x / √(mean(x²) + ε) · (offset + w), per row (Zhang & Sennrich 2019;
// Gemma stores w − 1 and uses offset 1)                              [L, d]
void rmsNorm(const Mat& x, const Weight& w, double eps, Mat& y, float offset = 0.0f);
// The same on each head's columns [h·dh, (h+1)·dh) with one w [dh] (QK-norm).
void rmsNormHeads(Mat& x, int64_t heads, const Weight& w, double eps, float offset = 0.0f);

// The MLP activations config.json names (hidden_act / activation_function).
enum class Activation { Silu, GeluTanh, GeluErf, Relu };
// "silu", "gelu_new" / "gelu_pytorch_tanh" / "gelu_fast", "gelu", "relu"; any other is refused naming the field.
Activation readActivation(const ConfigReader& r, const std::string& key, const std::string& def);
// The activation a name that readActivation admitted stands for (a family
// keeps the name in ModelConfig::activation and takes this when it loads).
Activation activationNamed(const std::string& name);
void activate(Mat& x, Activation a);

// The gated MLP: out = (act(a W_gateᵀ) ⊙ a W_upᵀ) W_downᵀ (SwiGLU with SiLU,
// GeGLU with GELU); `gate` and `up` are scratch, past 2,048 rows a chunk of
// rows at a time                                            [L, d] → [L, d_ff] → [L, d]
void gatedMlp(const Mat& a, const Weight& gate_w, const Weight& up_w, const Weight& down_w, Activation act,
              std::vector<float>& scratch, double* flops, Mat& gate, Mat& up, Mat& out);

// x = embed[ids]: only the rows read are converted (lazy 16-bit tables).     [L, d]
Mat embedRows(const Weight& embed, const std::vector<int32_t>& ids);
// Row `stacked` of groupWeights' S, unnormalised: e [count] = exp(s − max)
// on keys first … first + count − 1 (the row's others are 0), inv_z = 1 / Σe
// (A = e · inv_z), entropy = −Σ A ln A; count 0 when the row reads no key.
using WeightRowFn = std::function<void(int64_t stacked, int64_t first, const float* e, int64_t count, float inv_z,
                                       float entropy)>;
// How a family changes the scores s = q kᵀ · scale before the mask.
struct ScoreMods {
  double softcap = 0;                 // s → c·tanh(s/c) (Gemma 2)
  const std::vector<double>* alibi = nullptr;  // s_hj += slope_h · j (BLOOM's ALiBi)
};
// The weights of key/value group g's `group` heads for query rows r0 … r0 +
// n − 1 over keys k0 … k0 + K.rows() − 1 (K = K_g's rows), the heads' rows
// stacked: S [group·n, K.rows()], head g·group + a in rows [a·n, (a+1)·n),
// softmax(mods(Q_h Kᵀ · scale)) on the keys each row reads, 0 elsewhere.
// With `rows`, S is left unnormalised, e = exp(s − max) (A = e / Σe), and
// each row is handed on as soon as it is made, while still in cache.
void groupWeights(const Mat& q, const MatRef& K, int64_t r0, int64_t n, int64_t k0, const KeyRange& keys, int64_t g,
                  int64_t group, float scale, const ScoreMods& mods, Mat& S, const WeightRowFn* rows = nullptr);
// Every query head of one layer: A_h = softmax(mods(Q_h K_gᵀ · scale) over
// the keys `keys` lets each query read) with g = h / (heads / kv_heads),
// head_h = A_h V_g; `concat` [Lq, heads·d_head] = Concat(head_1 … head_H).
// Computed by blocks of query rows over the keys the block reads (a causal
// block skips the keys after its last row); each block of each map goes to
// run.stream (kept in run.attention[layer] where the run keeps it, pooled,
// summarised). Adds the FLOPs done to run.flops.
void attentionLayer(const Mat& q, const Mat& k, const Mat& v, const KeyRange& keys, int64_t heads, int64_t kv_heads,
                    float scale, const RunContext& ctx, ModelRun& run, int64_t layer, Mat& concat,
                    const ScoreMods& mods = {});

// [SECTION] One attention step: what a decoder family's layer calls between
// its projections and its output projection (forward.cpp).
// How a layer attends: its heads, the keys each query reads, the scores'
// scale and changes, and RoPE where the family turns q and k.
struct AttentionSpec {
  int64_t heads = 0, kv_heads = 0;  // query head h reads key/value head h / (heads / kv_heads)
  KeyRange keys;                    // query i is position keys.p0 + i
  float scale = 1;                  // s = q kᵀ · scale
  ScoreMods mods;
  // RoPE's θ_i (rotate_half layout) on the first 2·size() dims of each head,
  // the rest unrotated (partial rotary); null: no RoPE.
  const std::vector<double>* rope = nullptr;
};
// Where a layer's q and k are when `record` keeps them.
enum class QkStage {
  Projected,  // before QK-norm: ModelRun::q_prenorm, k_prenorm
  Unrotated,  // before RoPE: q_unrotated, k_unrotated
  Attended,   // as the scores read them: q, k, v, the scores' inputs, the ALiBi slopes
};
// The one place a pass's q, k and v become ModelRun fields for the views: a
// new field is one edit here (the maps themselves stream from attentionLayer,
// block by block). Kept where the run keeps projections, k and v
// [L, kv_heads·d_head] with each key/value head repeated for the query heads
// that read it; a stage's fields are sized for every layer when a pass first
// records it (a family without the stage leaves them empty). At Attended, K
// holds every key the scores read, the cache's first.
void record(ModelRun& run, int64_t layer, QkStage stage, const AttentionSpec& a, const Mat& q, const Mat& k,
            const Mat& v = Mat(), const Mat* K = nullptr);
// One layer's attention over a family's projections q [L, H·dh], k, v [L, Hkv·dh]:
//   q, k turned by RoPE at positions keys.p0, keys.p0 + 1, … (a.rope)   recorded before and after
//   K, V = the cache's keys and values, k and v appended (without a cache: k, v)
//   head_h = softmax(mods(q_h K_gᵀ · scale) on the keys q_i reads) V_g,  g = h / (H / Hkv)
//   concat = Concat(head_1 … head_H)                                   [L, H·dh]
//   then the heads run.edit ablates or patches in this layer replaced, and concat kept (keep_heads)
void attend(ModelRun& run, int64_t layer, const AttentionSpec& a, Mat& q, Mat& k, const Mat& v, KvCache* cache,
            const RunContext& ctx, Mat& concat);

// [SECTION] Interventions (run.h): the calls a family's pass makes so a run
// can be edited and read beyond its maps. Each does nothing for a run without
// them.
// At the top of layer l's iteration, and once more with l = layers after the
// last: keeps resid_l = x (keep_residual) and writes the residual patches of
// layer l into it. False for a layer before resume_layer, which the pass
// skips; at resume_layer x becomes the resume stream.
bool enterLayer(ModelRun& run, int64_t layer, Mat& x);
// The family's output projection with its bias, [R, heads·d_head] → [R, d].
using Projection = std::function<void(const Mat& in, Mat& out)>;
// After a layer's output projection `out` = project(concat): what each head
// writes into the residual stream, through `project` on rows holding one
// head's output each, for the write positions (ModelRun::head_writes, with
// out's rows there in attention_out) and the values' norms (value_norms).
void headWrites(ModelRun& run, int64_t layer, const Mat& concat, const Mat& out, const Projection& project);
// The final norm of a pre-norm stack, applied as layerNorm / rmsNorm do and
// recorded in run.final_norm (direct logit attribution reads it).
void finalLayerNorm(ModelRun& run, Mat& x, const Weight& gamma, const Weight& beta, double eps);
void finalRmsNorm(ModelRun& run, const Mat& x, const Weight& w, double eps, Mat& y, float offset = 0.0f);

// The weights of one attention block of an encoder–decoder, nn.Linear
// [out, in]; the biases absent in T5.
struct AttentionWeights {
  Weight q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b;
};
// Every head of one attention block, dense, its maps kept (encoder–decoder
// models: sentences, every map wanted; the memory is checked by the caller):
//   q = xq W_qᵀ + b_q, k = xkv W_kᵀ + b_k, v = xkv W_vᵀ + b_v    [Lq, H·dh], [Lk, H·dh] × 2
//   A_h = softmax(q_h k_hᵀ · scale + bias_h, causal: keys j ≤ i)  [Lq, Lk]   → maps[h]
//   out = Concat(A_1 v_1 … A_H v_H) W_oᵀ + b_o                    [Lq, d]
// bias: [heads] [Lq, Lk] (T5's relative position bias), or empty.
void denseAttentionBlock(const Mat& xq, const Mat& xkv, const AttentionWeights& w, int64_t heads, float scale,
                         const std::vector<Mat>& bias, bool causal, std::vector<Mat>& maps, Mat& out,
                         std::vector<float>& scratch, double* flops);
// An encoder–decoder's pass, as its family's stacks compute it: the encoder
// over run.source_ids (memory null), then, with a target, the decoder over
// run.target_ids attending to the encoder's output; each stack fills its
// maps ([layer][head]) and calls layer_done(l) after each layer (progress,
// cancel). stack(decoder, ids, memory, self_maps, cross_maps, layer_done) → its output.
using MapsByLayer = std::vector<std::vector<Mat>>;
using StackPass = std::function<Mat(bool decoder, const std::vector<int32_t>& ids, const Mat* memory,
                                    MapsByLayer& self_maps, MapsByLayer* cross_maps,
                                    const std::function<void(int64_t)>& layer_done)>;
void encoderDecoderPass(Seq2SeqRun& run, const RunContext& ctx, const StackPass& stack);
// hidden headᵀ, a 16-bit head converted a block of rows at a time       [rows, V]
Mat lmHeadLogits(const Weight& head, const Mat& hidden, double* flops);

}  // namespace attn
