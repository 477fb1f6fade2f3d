// Reading GGUF files (ggml's format, version 3, as llama.cpp writes them)
// without trusting them.
//
// Layout, little-endian:
//   u32 magic "GGUF", u32 version, u64 tensor_count, u64 kv_count
//   kv_count ×     { string key, u32 value_type, value }
//   tensor_count × { string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset }
//   padding to general.alignment (default 32), then the data section: each
//   tensor's bytes at its offset from the section's start.
// A string is u64 length + bytes (no NUL); an array is u32 element type + u64
// count + its elements. ne[0] is the innermost dimension: a row's length.
//
// Everything is checked before it is used: the magic and version (1 and 2
// refused by name); every count and string length against the bytes left
// and against limits far above any model's; every value type; the
// alignment; each tensor's type (ggml's block types this engine reads, the
// others refused by name), dimensions (ne[0] a whole number of blocks),
// offset (aligned, inside the data section) and bytes (type × shape); no two
// tensors overlapping.
#pragma once

#include "engine/model/checkpoint/safetensors.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn {

// GGUF's metadata value types (gguf.h's gguf_type).
enum class GgufType : uint32_t {
  UInt8 = 0, Int8 = 1, UInt16 = 2, Int16 = 3, UInt32 = 4, Int32 = 5, Float32 = 6, Bool = 7, String = 8,
  Array = 9, UInt64 = 10, Int64 = 11, Float64 = 12,
};
std::string ggufTypeName(GgufType t);  // "uint32", "string", "array", …

// One metadata value. Integers and bools are in `integer` (a uint64 above
// INT64_MAX is refused), floats in `number`, strings in `text`; an array's
// elements by kind in `integers`, `numbers` or `texts` (an array of arrays
// is validated but its elements are not kept: no key this engine reads has one).
struct GgufValue {
  GgufType type = GgufType::UInt32;
  int64_t integer = 0;
  double number = 0;
  std::string text;
  GgufType element = GgufType::UInt32;  // an array's
  uint64_t count = 0;                   // an array's elements
  std::vector<int64_t> integers;
  std::vector<double> numbers;
  std::vector<std::string> texts;
  bool isInteger() const;  // the integer types and bool
  bool isFloat() const;    // float32, float64
};

struct GgufTensor {
  std::string name;
  std::vector<int64_t> dims;  // ggml's ne, innermost first: dims[0] is a row's length
  DType type = DType::F32;
  uint64_t offset = 0, bytes = 0;  // in the data section
  int64_t elements() const;
};

// Limits far above any released model (Llama 3 405B: 1,138 tensors; the
// largest vocabularies: 256k tokens), so that a corrupt count is refused
// before it is allocated.
inline constexpr uint64_t kMaxGgufTensors = 1 << 16, kMaxGgufKeys = 1 << 16;
inline constexpr uint64_t kMaxGgufString = 1 << 24, kMaxGgufArray = 1 << 24;

struct GgufHeader {
  uint32_t version = 3;
  std::map<std::string, GgufValue> metadata;
  std::vector<GgufTensor> tensors;  // in the file's order
  uint64_t alignment = 32;          // general.alignment
  uint64_t data_start = 0;          // the data section's offset in the file
  const GgufValue* find(const std::string& key) const;
};

// Parses and validates the header of a whole file held in [bytes, bytes+size).
// `what` names the file in errors. Throws InputError with one line naming the
// file and the field, e.g.
//   "model.gguf: tensor 'blk.0.attn_q.weight': offset 100 is not a multiple of general.alignment 32"
GgufHeader parseGgufHeader(const uint8_t* bytes, uint64_t size, const std::string& what);

// [SECTION] Writing (test fixtures, the benchmark's quantized checkpoint)
// Metadata values of each kind.
GgufValue ggufInt(GgufType type, int64_t v);  // any integer type, or bool
GgufValue ggufFloat(double v);                // float32
GgufValue ggufString(const std::string& v);
GgufValue ggufStrings(const std::vector<std::string>& v);
GgufValue ggufFloats(const std::vector<float>& v);                    // float32 array
GgufValue ggufInts(GgufType element, const std::vector<int64_t>& v);  // integer array
struct GgufKeyToWrite {
  std::string key;
  GgufValue value;  // an array's elements from integers, numbers or texts by its element type
};
// One tensor: its values in ggml's order (dims[0] fastest) produced by
// fill(first, count, out), stored as `type` (quantized a chunk of whole rows
// at a time: a 1B model's matrices are never whole in memory). Or, with
// `stored` set instead, the bytes as stored of the values [first, first + count)
// (whole blocks), written as given: a file of a large shape in seconds where
// quantizing it would take minutes (the memory tests).
struct GgufTensorToWrite {
  std::string name;
  std::vector<int64_t> dims;  // ggml's ne
  DType type = DType::F32;
  std::function<void(int64_t first, int64_t count, float* out)> fill;
  std::function<void(int64_t first, int64_t count, uint8_t* out)> stored;
};
// The type llama.cpp stores a tensor as (by its GGUF name, of `n_dims`
// dimensions) in a file of `type`: F32 for what neither its converter
// (convert_hf_to_gguf.py, ModelBase.prepare_tensors) nor llama-quantize
// (src/llama-quant.cpp, the checks before llama_tensor_get_type) ever
// quantizes: vectors (n_dims <= 1), anything not a ".weight" (biases), norms
// ("_norm.weight"), and the learned position and token-type tables
// (position_embd, token_types: GPT-2's and StarCoder's wpe, BERT's). Their
// other such tensors (MoE routers, SSM and RWKV weights) no family here has.
DType ggufStoredType(const std::string& name, size_t n_dims, DType type);
// The type llama-quantize's Q4_K_M gives a tensor of a model of `layers`
// blocks (llama_tensor_get_type, src/llama-quant.cpp, for one expert and no
// 70B): the output head (token_embd where there is no output.weight, the
// head tied) Q6_K, attn_v and ffn_down Q6_K in the layers use_more_bits
// picks (the first and last eighth, and every third between), the other
// matrices Q4_K, and F32 what ggufStoredType keeps so. The file most people run.
DType ggufQ4KMType(const std::string& name, size_t n_dims, int64_t layers, bool has_output);
// Writes a GGUF file through TempFile (no partial file on failure): the
// keys, the tensors in order, each aligned. `version` other than 3 only
// for the tests of the reader's refusals. Throws InputError naming `path`.
void writeGguf(const std::filesystem::path& path, const std::vector<GgufKeyToWrite>& keys,
               const std::vector<GgufTensorToWrite>& tensors, uint32_t version = 3, uint64_t alignment = 32);

}  // namespace attn
