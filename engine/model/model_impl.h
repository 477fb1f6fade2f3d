// What the model's parts share: the loader (model.cpp), the forward passes
// (forward.cpp: GPT-2 and BERT; llama.cpp: the LLaMA family) and generation
// (generate.cpp). Not part of the engine's interface: include model.h.
#pragma once

#include "engine/model/model.h"

#include <deque>

namespace attn {

// A weight as a row-major matrix: a view into the mapped file (F32), a copy
// converted at load (F16/BF16 of GPT-2 and BERT), or, for the LLaMA family's
// 16-bit layers, the mapped tensor itself, converted only while its layer
// runs (a 2 GB BF16 checkpoint never has all its F32 copies alive at once).
struct Weight {
  const float* data = nullptr;
  const SafetensorsFile* file = nullptr;  // with `entry`: 16-bit, converted by floats()
  const TensorEntry* entry = nullptr;
  int64_t rows = 0, cols = 0;
  // The values: `data`, or `entry` converted into `scratch` (F32 returned as is).
  Weight floats(std::vector<float>& scratch) const;
  Eigen::Map<const Mat> mat() const { return {data, rows, cols}; }
  Eigen::Map<const RowVec> vec() const { return {data, rows * cols}; }
};

struct Gpt2Layer {
  Weight ln1_w, ln1_b, attn_w, attn_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, mproj_w, mproj_b;
};
struct BertLayer {
  Weight q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b, ln1_w, ln1_b, i_w, i_b, out_w, out_b, ln2_w, ln2_b;
};
// nn.Linear layouts [out, in]; the biases are Qwen2's (absent: empty Weight).
struct LlamaLayer {
  Weight in_norm, q_w, q_b, k_w, k_b, v_w, v_b, o_w, post_norm, gate_w, up_w, down_w;
};

class Model {
 public:
  ModelInfo info;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<std::shared_ptr<const SafetensorsFile>> files;  // keep the maps alive
  std::deque<std::vector<float>> converted;                    // F16/BF16 (or unaligned F32) copies
  int32_t cls = -1, sep = -1;                                  // BERT specials
  int32_t bos = -1, eos = -1;                                  // beginning and end of text (−1: none)
  bool add_bos = false;                                        // the tokenizer files ask for bos first

  // GPT-2
  Weight wte, wpe, ln_f_w, ln_f_b, lm_head;  // lm_head: also the LLaMA family's
  std::vector<Gpt2Layer> gpt2;
  // BERT
  Weight word, position, token_type, emb_ln_w, emb_ln_b;
  std::vector<BertLayer> bert;
  bool mlm = false;
  Weight mlm_dense_w, mlm_dense_b, mlm_ln_w, mlm_ln_b, mlm_bias, mlm_decoder;
  // LLaMA family: embed_tokens, the layers, the final norm, θ_i after rope_scaling
  Weight embed, final_norm;
  std::vector<LlamaLayer> llama;
  std::vector<double> rope_theta;
};

// The keys and values of the positions run so far, per layer, as the
// attention reads them (RoPE keys already rotated; GQA: kv_heads·d_head
// columns). A run given a cache appends its rows and attends over all.
struct KvCache {
  std::vector<Mat> k, v;  // [layer] [length, kv_heads·d_head]
  int64_t length = 0;
};

// Appends a run's keys and values (one layer's, [L, kv_heads·d_head]) to
// the cache and returns the cache's, or, without a cache, returns them as given.
std::pair<const Mat*, const Mat*> keysWithCache(KvCache* cache, int64_t layer, const Mat& k, const Mat& v);

// [SECTION] Forward passes. Each runs run.ids at positions first_position
// (the cache's length) onwards, fills run.attention/q/k/v/hidden and adds
// its FLOPs to run.flops; the cache, when given, is read and extended.
void gpt2Forward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx);
void bertForward(const Model& m, ModelRun& run, const RunContext& ctx);
void llamaForward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx);

// Runs `ids` at positions cache->length onwards (0 without a cache) through
// the architecture's pass, without the LM head; extends the cache.
ModelRun runForward(const Model& m, const std::vector<int32_t>& ids, KvCache* cache, const RunContext& ctx);
// Refuses ids outside the vocabulary, or past the positions counting from first_position.
void checkIds(const Model& m, const std::vector<int32_t>& ids, int64_t first_position);
// The threads a pass over `tokens` tokens runs on (one for tiny models).
int passThreads(const Model& m, int64_t tokens);
// The ids the model reads for `text`, special tokens included ([CLS]/[SEP],
// <s>), within max_tokens: longer text throws TooLongError, or is cut when
// `truncate` (setting *truncated).
std::vector<int32_t> promptIds(const Model& m, const std::string& text, int64_t max_tokens, bool truncate,
                               bool* truncated);

// RoPE's θ_i for the config: ropeFrequencies(head_dim, rope_theta), then
// rope_scaling "llama3" when the config has it.
std::vector<double> llamaRopeFrequencies(const ModelConfig& c);

// [SECTION] Pieces the forward passes share
// y = x W + b (Conv1D, W [in, out]) or y = x Wᵀ + b (nn.Linear, W [out, in])     [L, out]
void linear(const Mat& x, const Weight& w, const Weight* b, bool transposed, Mat& y);
double linearFlops(int64_t rows, const Weight& w);
// Every query head of one layer: A_h = softmax(Q_h K_gᵀ · scale + mask) with
// g = h / (heads / kv_heads), head_h = A_h V_g, into attention[h]
// [Lq, Lk]; `concat` [Lq, heads·d_head] = Concat(head_1 … head_H).
void attentionLayer(const Mat& q, const Mat& k, const Mat& v, const Mat& mask, int64_t heads, int64_t kv_heads,
                    float scale, const RunContext& ctx, std::vector<Mat>& attention, Mat& concat);
// The LM head's logits for the rows of `hidden` (GPT-2, LLaMA: hidden lm_headᵀ;
// BERT: the MLM head)     [rows, V]. Adds its FLOPs to *flops.
Mat lmLogits(const Model& m, const Mat& hidden, double* flops);
// A token as shown: the tokenizer's string, or "#id" past its vocabulary.
std::string tokenText(const Tokenizer& tok, int32_t id);

}  // namespace attn
