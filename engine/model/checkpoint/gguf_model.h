// GGUF files read as the Hugging Face checkpoints llama.cpp's converter
// (convert_hf_to_gguf.py) made them from, so a GGUF model runs its family's
// own pass: general.architecture names the family (Family::gguf), its
// "{arch}.*" keys become config.json's fields, its tensors take their names
// in transformers with what the converter changed undone as they are read
// (Llama's q/k row order, Gemma's norms), and the tokenizer comes from the
// "tokenizer.ggml.*" keys. The weights stay in the file as stored, quantized
// or not: a layer dequantizes a tile at a time while it runs.
#pragma once

#include "engine/model/checkpoint/checkpoint.h"
#include "engine/model/checkpoint/gguf.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>
#include <string>

namespace attn {

class MappedFile;

// The "{arch}.*" metadata keys of one file, as a family's GgufSpec::config
// reads them (keys named without the "{arch}." prefix). Each key read is
// remembered; the file's others of the architecture are refused after, in
// one line naming the key, unless they hold nothing this engine would compute otherwise.
class GgufKeys {
 public:
  GgufKeys(const GgufHeader& h, const std::string& arch, const std::string& what) : h_(h), arch_(arch), what_(what) {}
  bool has(const std::string& key) const { return h_.find(arch_ + "." + key) != nullptr; }
  // An integer in [1, max]; `def` when absent (none: required).
  int64_t count(const std::string& key, int64_t max, std::optional<int64_t> def = std::nullopt);
  // An integer in [0, max] (a window, where 0 says none); `def` when absent.
  int64_t whole(const std::string& key, int64_t max, int64_t def) { return integer(key, 0, max, def); }
  // A number (a float or an integer); `def` when absent.
  double number(const std::string& key, std::optional<double> def = std::nullopt);
  bool flag(const std::string& key, bool def);
  std::string text(const std::string& key, const std::string& def);
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  // The file's tensor (GGUF name), or null: a bias, a norm some checkpoints have, a table's rows.
  const GgufTensor* tensor(const std::string& name) const;
  const std::set<std::string>& read() const { return read_; }
  const std::string& arch() const { return arch_; }

 private:
  const GgufValue* get(const std::string& key);
  int64_t integer(const std::string& key, int64_t min, int64_t max, std::optional<int64_t> def);
  const GgufHeader& h_;
  std::string arch_, what_;
  std::set<std::string> read_;
};

// The sizes of a decoder in GGUF as config.json's fields of transformers'
// decoders: block_count, embedding_length, feed_forward_length,
// attention.head_count(_kv) and context_length.
void ggufDecoderSizes(GgufKeys& k, nlohmann::json& c);
// What the decoders of the LLaMA shape have alike in GGUF: ggufDecoderSizes',
// attention.layer_norm_rms_epsilon, attention.key_length / value_length
// (head_dim) and ggufRope's keys, written into config.json's fields.
void ggufDecoderConfig(GgufKeys& k, nlohmann::json& c, bool partial_rotary = false);
// RoPE's keys as config.json's rope_theta, partial_rotary_factor and
// rope_scaling: rope.freq_base (llama.cpp's default 10,000),
// rope.dimension_count (all of a head's dims; with `partial_rotary` any even
// number of them) and rope.scaling (none or linear).
void ggufRope(GgufKeys& k, nlohmann::json& c, int64_t head_dim, bool partial_rotary);
// attention.head_count, for a family whose keys and values have every head:
// a head_count_kv other than it is refused, naming `label` ("GPT-2").
int64_t ggufHeadsAllKv(GgufKeys& k, const std::string& label);

// The other way (the benchmark writes its checkpoint as GGUF): the GGUF
// name of a checkpoint's tensor ("model.layers.3.self_attn.q_proj.weight" →
// "blk.3.attn_q.weight") and what the converter does to it; InputError when
// the spec has no such tensor.
struct GgufTensorName;
std::pair<std::string, const GgufTensorName*> ggufNameOf(const std::vector<GgufTensorName>& names, const std::string& hf);
// Where llama.cpp's converter stores row r of q or k (transformers' order:
// each head's first half, then its second) of `heads` heads: ggml's
// interleaved RoPE order (LlamaModel.permute).
std::vector<int64_t> ropeStoredRows(int64_t rows, int64_t heads, const std::string& what, const std::string& name);

// Whether `path` names a GGUF file (by its extension).
bool isGgufPath(const std::string& path);
// A .gguf file as the folder it was converted from (ModelFiles::gguf set).
// InputError naming the file and the key or tensor for a file this engine
// cannot run as it was meant: an unknown architecture, a key of it that
// changes the computation and is not implemented, a tensor its family has not.
ModelFiles ggufModelFiles(const std::string& path);
// The same over a whole file's bytes held in memory, kept alive by `map` when
// mapped, else by the caller while the model lives (the fuzz target).
ModelFiles ggufModelFiles(const uint8_t* bytes, uint64_t size, std::shared_ptr<const MappedFile> map,
                          const std::string& what);

// [SECTION] Writing (the benchmark's file and the memory test's)
// The keys llama.cpp's converter writes for a Llama of these sizes (RoPE base
// 10000 over whole heads, RMSNorm ε 1e-5) with a byte-level vocabulary of
// `pieces`, the first three <unk>, <s> and </s> (control tokens; <s> added), no merges.
struct GgufLlamaSizes {
  int64_t layers = 0, d = 0, heads = 0, kv_heads = 0, ff = 0, positions = 0;
};
std::vector<GgufKeyToWrite> ggufLlamaKeys(const GgufLlamaSizes& s, const std::vector<std::string>& pieces);

}  // namespace attn
