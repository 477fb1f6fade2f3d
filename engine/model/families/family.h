// The model families: what each architecture reads from config.json, the
// tensors it takes from the checkpoint with their shapes, its forward pass
// and its LM head. One file per family in
// engine/model/ defines `Family makeXxxFamily()`; one line of families.def
// lists it. The loader, `model info`, the error for an unknown architecture
// and docs/models.md's table all come from the list.
#pragma once

#include "engine/model/checkpoint/config.h"
#include "engine/model/blocks/model_impl.h"
#include "engine/model/families/families.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace attn {

// A tensor a family's `load` declared: the checkpoint is held to it.
struct Expected {
  std::string name;  // as in the checkpoint (its prefix included)
  std::vector<int64_t> shape;
  bool required = true;
};
// "layers.3.self_attn.q_proj.weight" = layerName("layers.", 3, "self_attn.q_proj.weight")
std::string layerName(const std::string& stem, int64_t layer, const std::string& rest);

// Whether a checkpoint must carry a tensor.
enum class Need { Required, Optional };

// The checkpoint's tensors while a model loads. A family's `load` declares
// each tensor in the call that takes it, with the shape its config implies
// (as llama.cpp's create_tensor): the loader then refuses a checkpoint with a
// declared tensor missing, of another shape or not finite, or with a tensor
// nothing declared, before any pass reads a weight. Until then a tensor
// taken may be absent (an empty Weight) or of another shape.
class WeightSource {
 public:
  using Shape = std::vector<int64_t>;
  struct Located {
    std::shared_ptr<const SafetensorsFile> file;
    const TensorEntry* entry = nullptr;
    std::string file_name;
  };
  WeightSource(const std::map<std::string, Located>& all, std::string prefix, std::string where, Model& model)
      : where(std::move(where)), all_(all), prefix_(std::move(prefix)), model_(model) {}
  const std::string where;  // the checkpoint's (first) file, for errors
  // A body tensor (the prefix added) as F32: a view into the map, or a
  // converted copy kept by the model. A transposed one (a GGUF file's,
  // TensorEntry::transposed) comes as stored, Weight::transposed set.
  Weight take(const std::string& name, Shape shape, Need need = Need::Required) {
    return get(prefix_ + name, std::move(shape), need, false);
  }
  // The same, but a 16-bit tensor stays in the map and is converted while
  // its layer runs (the big matrices of big checkpoints).
  Weight lazy(const std::string& name, Shape shape, Need need = Need::Required) {
    return get(prefix_ + name, std::move(shape), need, true);
  }
  // Tensors outside the body (heads saved without the prefix: "lm_head.weight").
  Weight takeFull(const std::string& full_name, Shape shape, Need need = Need::Required) {
    return get(full_name, std::move(shape), need, false);
  }
  Weight lazyFull(const std::string& full_name, Shape shape, Need need = Need::Required) {
    return get(full_name, std::move(shape), need, true);
  }
  // A tensor a checkpoint may carry that the pass does not read (a pooler,
  // a head tied to the embeddings): declared optional, not taken.
  void allow(const std::string& name, Shape shape) { allowFull(prefix_ + name, std::move(shape)); }
  void allowFull(const std::string& full_name, Shape shape) {
    declared_.push_back({full_name, std::move(shape), false});
  }
  // Every tensor declared, by its name in the checkpoint, in load's order.
  const std::vector<Expected>& declared() const { return declared_; }

 private:
  Weight get(const std::string& full_name, Shape shape, Need need, bool lazy);
  const std::map<std::string, Located>& all_;
  std::string prefix_;
  Model& model_;
  std::vector<Expected> declared_;
};

// Which tokenizer files a family's checkpoints carry.
enum class TokenizerFiles {
  Gpt2,       // vocab.json + merges.txt
  WordPiece,  // vocab.txt (BERT)
  Json,       // tokenizer.json (+ tokenizer_config.json)
  None,       // pictures, not text (ViT)
};

// [SECTION] GGUF: how llama.cpp's converter (convert_hf_to_gguf.py) writes a
// family's checkpoints, read back as the checkpoint they came from by
// engine/model/checkpoint/gguf_model.cpp, so a GGUF file runs the family's own pass.
class GgufKeys;
// What the converter changed in a tensor, undone as it is read.
enum class GgufUndo {
  None,
  RopeRowsQ,    // q's rows (and bias) interleaved per head for ggml's RoPE (LlamaModel.permute, n_head heads)
  RopeRowsK,    // k's the same over the key/value heads
  QkvPerHead,   // a fused query_key_value's rows (and bias) per head [q_h; k_h; v_h] saved as [Q; K; V] (GPT-NeoX, BLOOM)
  NormPlusOne,  // a norm saved as 1 + w (Gemma's RMSNorm weights)
  Transposed,   // a Conv1D weight [in, out] saved as nn.Linear's [out, in] (GPT-2's; TensorEntry::transposed)
};
struct GgufTensorName {
  std::string gguf;  // "blk.#.attn_q.weight": '#' stands for the layer
  std::string hf;    // "model.layers.#.self_attn.q_proj.weight"
  GgufUndo undo = GgufUndo::None;
};
struct GgufSpec {
  std::string arch;          // general.architecture: "llama"
  std::string architecture;  // the class config.json names for it: "LlamaForCausalLM"
  // Writes config.json's fields from the "{arch}.*" keys (each key read is
  // remembered; the file's other keys of the architecture are refused).
  std::function<void(GgufKeys&, nlohmann::json& config)> config;
  std::vector<GgufTensorName> tensors;
  // rope_freqs.weight (F32, one factor per rotated frequency) read as RopeSpec::freq_factors (LlamaModel's llama3 scaling).
  bool rope_freqs = false;
};

// GPT-2's layout as llama.cpp names it (GPT2Model, StarCoderModel): the
// tensors, `linear` what the converter did to the four matrices; the n_*
// keys as config.json's fields, returning attention.head_count_kv (default:
// the heads) for the family to hold to its c_attn.
std::vector<GgufTensorName> gpt2GgufTensors(GgufUndo linear);
int64_t gpt2GgufConfig(GgufKeys& k, nlohmann::json& c);

struct Family {
  std::string model_type;                  // config.json's model_type: "llama"
  std::string label;                       // "Llama"
  std::vector<std::string> architectures;  // the class names config.json may list: "LlamaForCausalLM", "LlamaModel"
  std::string paper;                       // "Touvron et al. 2023", for model info and docs/models.md
  std::string prefix;                      // what *ForCausalLM saves before the base model's names: "model."
  std::string probe;                       // a body tensor that tells whether the checkpoint has the prefix
  bool causal = true;                      // false: every token sees every other (BERT)
  TokenizerFiles tokenizer = TokenizerFiles::Json;
  // Reads the family's fields of config.json into c (sizes, norms, RoPE, …).
  // A field that changes the computation and is left unread is refused after.
  std::function<void(const ConfigReader&, ModelConfig&)> parse;
  // Buffers some checkpoints carry that are not weights (body names).
  std::function<bool(const std::string&)> buffer = [](const std::string&) { return false; };
  // Takes the weights into the family's own FamilyWeights, each tensor
  // declared with its shape as it is taken (WeightSource); sets m.lm_head
  // when the family predicts tokens. Calls progress(layer) per layer.
  std::function<std::unique_ptr<FamilyWeights>(WeightSource&, Model& m, const std::function<void(int64_t)>& progress)>
      load;
  // The pass: runs run.ids at positions run.first_position onwards, each
  // layer's attention through attend() (model_impl.h: the maps, q, k, v and
  // what the views read are recorded there), fills run.hidden and adds its
  // FLOPs to run.flops; the cache, when given, is read and extended.
  std::function<void(const Model&, ModelRun&, KvCache*, const RunContext&)> forward;
  // Encoder–decoder families (T5, BART) set this instead of `forward`: the
  // pass over run.source_ids and run.target_ids (empty: the encoder alone),
  // filling the three kinds of maps and both hidden states, adding its FLOPs.
  std::function<void(const Model&, Seq2SeqRun&, const RunContext&)> seq2seq;
  // Vision families (ViT) set this instead: the pass over run.pixel_values,
  // filling its maps and hidden states, adding its FLOPs.
  std::function<void(const Model&, VisionRun&, const RunContext&)> vision;
  // The LM head's logits for rows of the final hidden states   [rows, V].
  // Unset: hidden lm_headᵀ (lmHeadLogits).
  std::function<Mat(const Model&, const Mat& hidden, double* flops)> logits;
  // The GGUF architectures whose files hold this family's checkpoints.
  std::vector<GgufSpec> gguf;
};

// An nn.Linear saved as name + ".weight" [out, in], left in the map (lazy),
// and name + ".bias" [out] where `bias` (else an empty Weight).
std::pair<Weight, Weight> takeLinear(WeightSource& s, const std::string& name, int64_t out, int64_t in,
                                     bool bias = true);
// The attention projections saved as stem + "q_proj", "k_proj", "v_proj" and
// stem + o ("o_proj", "out_proj", "dense"), nn.Linear [out, in]: q [H·dh, d],
// k and v [Hkv·dh, d], o [d, H·dh], each weight left in the map (lazy); the
// biases of q, k, v where qkv_bias, of o where o_bias (absent: empty Weights).
AttentionWeights takeProjections(WeightSource& s, const std::string& stem, const std::string& o, const ModelConfig& c,
                                 bool qkv_bias, bool o_bias);
// The gated MLP saved as stem + "gate_proj", "up_proj", "down_proj" (nn.Linear
// [out, in], no biases): [d_ff, d] × 2 and [d, d_ff], left in the map.
struct GatedMlpWeights {
  Weight gate, up, down;
};
GatedMlpWeights takeGatedMlp(WeightSource& s, const std::string& stem, const ModelConfig& c);

// An encoder–decoder's token embeddings (T5, BART): one table, tied, that a
// checkpoint saves once under any of "shared.weight",
// "encoder.embed_tokens.weight" and "decoder.embed_tokens.weight" (the last
// where the model has a decoder), left in the map. Each stack reads its own
// where saved, else the shared one, else the other stack's; refused when
// none is saved.
struct EncoderDecoderTables {
  Weight encoder, decoder;
};
EncoderDecoderTables takeEncoderDecoderTables(WeightSource& s, const ModelConfig& c);

// A tensor of a head a checkpoint may leave out, saved without the prefix.
struct HeadTensor {
  std::string name;
  WeightSource::Shape shape;
  bool lazy = false;  // left in the map (WeightSource::lazyFull)
};
// Takes an optional head (BERT's and ModernBERT's masked-LM heads): its
// tensors in order, every one present, or none (empty Weights: no such
// head). A head in part is refused, naming the first tensor missing and
// `what` ("the masked-LM head cls.predictions.*").
std::vector<Weight> takeWholeHead(WeightSource& s, const std::vector<HeadTensor>& tensors, const std::string& what);

// What a tied checkpoint's own lm_head.weight is to a family: refused (it
// would go unused), or ignored where the family's checkpoints save the tied
// copy (transformers does not read it).
enum class TiedHead { Refused, Ignored };
// The LM head: "lm_head.weight" [V, width] (width 0: d_model), or the
// embeddings when tie_word_embeddings.
Weight lmHeadUnlessTied(WeightSource& s, const ModelConfig& c, const Weight& embeddings,
                        TiedHead tied = TiedHead::Refused, int64_t width = 0);

// Every family, in the order of families.def.
const std::vector<Family>& modelFamilies();
// The family config.json's architectures[0] (or model_type) names, or null.
const Family* findFamily(const std::string& arch_name);

// [SECTION] Runs through the family (family.cpp)
// Runs `ids` at positions cache->length onwards (0 without a cache) through
// the family's pass, without the LM head; extends the cache. The maps are
// kept as options.maps says (Auto: all), the projections as
// options.keep_projections.
ModelRun runForward(const Model& m, const std::vector<int32_t>& ids, KvCache* cache, const RunContext& ctx,
                    const ModelRunOptions& options = {});
// Refuses ids outside the vocabulary, or past the positions counting from first_position.
void checkIds(const Model& m, const std::vector<int32_t>& ids, int64_t first_position);
// The LM head's logits for rows of `hidden` (the family's head)     [rows, V]. Adds its FLOPs to *flops.
Mat lmLogits(const Model& m, const Mat& hidden, double* flops);
// The top k tokens of one row of logits, best first, with their softmax probabilities.   row [V]
std::vector<Prediction> topKOfLogits(const Model& m, const Eigen::Ref<const RowVec>& row, int k);

}  // namespace attn
