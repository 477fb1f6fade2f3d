// The model families: what each architecture reads from config.json, the
// tensors it needs with their shapes, how its weights are taken from the
// checkpoint, its forward pass and its LM head. One file per family in
// engine/model/ defines `Family makeXxxFamily()`; one line of families.def
// lists it. The loader, `model info`, the error for an unknown architecture
// and docs/models.md's table all come from the list.
#pragma once

#include "engine/model/checkpoint/config.h"
#include "engine/model/blocks/model_impl.h"
#include "engine/model/kinds/seq2seq.h"
#include "engine/model/kinds/vision.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn {

struct Expected {
  std::string name;  // as saved by the base model (without the *ForCausalLM prefix)
  std::vector<int64_t> shape;
  bool required = true;
};
// "layers.3.self_attn.q_proj.weight" = layerName("layers.", 3, "self_attn.q_proj.weight")
std::string layerName(const std::string& stem, int64_t layer, const std::string& rest);

// The checkpoint's tensors while a model loads, by the name the family uses
// (the prefix the checkpoint may carry is added here).
class WeightSource {
 public:
  struct Located {
    std::shared_ptr<const SafetensorsFile> file;
    const TensorEntry* entry = nullptr;
    std::string file_name;
  };
  WeightSource(const std::map<std::string, Located>& all, std::string prefix, std::string where, Model& model)
      : where(std::move(where)), all_(all), prefix_(std::move(prefix)), model_(model) {}
  const std::string where;  // the checkpoint's (first) file, for errors
  // A body tensor (prefix added) as F32: a view into the map, or a converted
  // copy kept by the model. Absent: an empty Weight.
  Weight take(const std::string& name) const { return takeFull(prefix_ + name); }
  // The same, but a 16-bit tensor stays in the map and is converted while
  // its layer runs (the big matrices of big checkpoints).
  Weight lazy(const std::string& name) const { return lazyFull(prefix_ + name); }
  bool has(const std::string& name) const { return all_.count(prefix_ + name) > 0; }
  // Tensors outside the body (heads saved without the prefix: "lm_head.weight").
  Weight takeFull(const std::string& full_name) const;
  Weight lazyFull(const std::string& full_name) const;
  bool hasFull(const std::string& full_name) const { return all_.count(full_name) > 0; }

 private:
  const std::map<std::string, Located>& all_;
  std::string prefix_;
  Model& model_;
};

// Which tokenizer files a family's checkpoints carry.
enum class TokenizerFiles {
  Gpt2,       // vocab.json + merges.txt
  WordPiece,  // vocab.txt (BERT)
  Json,       // tokenizer.json (+ tokenizer_config.json)
  None,       // pictures, not text (ViT)
};

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
  // The body's tensors (without the prefix) and the heads' (full names).
  std::function<std::vector<Expected>(const ModelConfig&)> body, heads;
  // Buffers some checkpoints carry that are not weights (body names).
  std::function<bool(const std::string&)> buffer = [](const std::string&) { return false; };
  // Takes the weights into the family's own FamilyWeights; sets m.lm_head
  // when the family predicts tokens. Calls progress(layer) per layer.
  std::function<std::unique_ptr<FamilyWeights>(const WeightSource&, Model& m,
                                               const std::function<void(int64_t)>& progress)>
      load;
  // The pass: runs run.ids at positions run.first_position onwards, fills
  // run.attention/q/k/v/hidden (and the family's extras) and adds its FLOPs
  // to run.flops; the cache, when given, is read and extended.
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
};

// The untied LM head "lm_head.weight" [V, d], or nothing when tie_word_embeddings
// (the head is then the embeddings, and a saved lm_head would go unused).
std::vector<Expected> lmHeadUnlessTied(const ModelConfig& c);

// Every family, in the order of families.def.
const std::vector<Family>& modelFamilies();
// The family config.json's architectures[0] (or model_type) names, or null.
const Family* findFamily(const std::string& arch_name);

}  // namespace attn
