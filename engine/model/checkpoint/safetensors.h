// Reading Hugging Face safetensors files without trusting them.
//
// Layout: 8 bytes little-endian N, then N bytes of JSON header
//   {"name": {"dtype": "F32"|"F16"|"BF16", "shape": [..], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"k": "v"}}
// then the data section; offsets are relative to its start. The header is
// validated before anything in it is used: N within limits and inside the
// file, JSON well formed, every entry's dtype known, shape non-negative,
// end − begin = product(shape) · sizeof(dtype), offsets inside the data
// section and no two tensors overlapping.
#pragma once

#include "engine/tensor.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn {

class MappedFile;

// I64 is read (and validated) only so that checkpoints holding integer
// buffers (BERT's embeddings.position_ids) open; floats() refuses it. The
// block types after it are ggml's (GGUF files): runs of `values` weights
// stored in `bytes` together (engine/model/checkpoint/quants.h).
enum class DType {
  F32, F16, BF16, I64,
  Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS,
};
std::string dtypeName(DType t);  // "F32", "F16", "BF16", "I64", "Q4_K", …
std::string shapeText(const std::vector<int64_t>& shape);  // "[3, 4]"
// How a type stores its values: blocks of `values` in `bytes` (1 and 4 for F32).
struct BlockLayout {
  int64_t values = 1, bytes = 4;
};
BlockLayout blockLayout(DType t);
// The bytes of `count` values (a whole number of blocks).
uint64_t storedBytes(DType t, uint64_t count);

// `count` little-endian values of a float type (any but I64) at `src`, any
// alignment, as floats into `out`; past a million values on the OpenMP
// threads. For a block type, count is a whole number of blocks from a block's start.
void toFloats(DType t, const uint8_t* src, int64_t count, float* out);

struct TensorEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets relative to the data section
  // A GGUF tensor whose converter changed it (gguf_model.cpp), undone as it
  // is read: row r (of shape.back() values; of one value for a vector) is
  // stored as row stored_rows[r] (empty: in order), and `add` is added to
  // every value.
  std::vector<int64_t> stored_rows;
  float add = 0;
  // A GGUF matrix the converter transposed (GPT-2's Conv1D [in, out] saved
  // [out, in]): `shape` is the checkpoint's, the values are stored as its transpose.
  bool transposed = false;
  int64_t elements() const;
  bool asStored() const { return stored_rows.empty() && add == 0; }
};

// Largest header accepted (the format's own reference limit is 100 MB).
constexpr uint64_t kMaxSafetensorsHeader = 100ull << 20;

// Parses and validates the header of a whole file held in [bytes, bytes+size).
// `what` names the file in errors. Throws InputError, e.g.
//   "model.safetensors: tensor 'h.0.attn.c_attn.weight': data_offsets [0, 100] hold 100 bytes, but F32 [3, 4] needs 48"
// Exposed for the fuzz target and the tests.
struct SafetensorsHeader {
  std::vector<TensorEntry> tensors;  // in file order of their data
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // 8 + N
};
SafetensorsHeader parseSafetensorsHeader(const uint8_t* bytes, uint64_t size, const std::string& what);

// One safetensors file, memory-mapped (or held in memory for the embedded
// default model). Tensors are converted to float32 on request.
class SafetensorsFile {
 public:
  static std::shared_ptr<const SafetensorsFile> open(const std::string& path);  // mmap; InputError naming path
  // Bytes owned elsewhere that outlive the object (embedded assets).
  static std::shared_ptr<const SafetensorsFile> fromMemory(const uint8_t* bytes, uint64_t size, const std::string& what);
  // The tensors of another format's file (a GGUF file, under their names in
  // transformers), its header already validated against [bytes, bytes+size):
  // a mapped file's (kept alive by `map`) or bytes owned elsewhere (map null).
  static std::shared_ptr<const SafetensorsFile> fromHeader(const uint8_t* bytes, uint64_t size,
                                                           std::shared_ptr<const MappedFile> map, const std::string& what,
                                                           SafetensorsHeader header);
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& what() const { return what_; }
  uint64_t sizeBytes() const { return size_; }
  const SafetensorsHeader& header() const { return header_; }
  const TensorEntry* find(const std::string& name) const;
  const uint8_t* data(const TensorEntry& t) const { return bytes_ + header_.data_start + t.begin; }
  // F32 entries are returned without a copy when aligned and as stored
  // (pointer into the map); the others are converted into `storage`. Returns the float pointer.
  // Throws InputError naming the file and tensor for I64.
  const float* floats(const TensorEntry& t, std::vector<float>& storage) const;
  // Elements [first, first + count) of a float tensor (any type but I64) as
  // floats into `out` (rows of a 16-bit or quantized matrix without
  // converting it all); large ranges convert on the OpenMP threads. The range
  // must be inside the tensor and, for a block type, start and end on a block's edge.
  void floatsAt(const TensorEntry& t, int64_t first, int64_t count, float* out) const;

 private:
  SafetensorsFile() = default;
  std::string what_;
  const uint8_t* bytes_ = nullptr;
  uint64_t size_ = 0;
  std::shared_ptr<const MappedFile> map_;  // null for bytes held elsewhere
  SafetensorsHeader header_;
};

// [SECTION] Writing (test fixtures, the benchmark's checkpoint, training tools)
// One tensor to write: its values are produced in C order by fill(first,
// count, out), `count` floats starting at element `first`, and stored as
// `dtype` (F16/BF16 rounded to nearest even). Chunks keep a GPT-2-sized
// checkpoint from ever being whole in memory.
struct TensorToWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::function<void(int64_t first, int64_t count, float* out)> fill;
};
// A tensor whose values are already in memory (copied into the closure).
TensorToWrite tensorFromValues(const std::string& name, DType dtype, std::vector<int64_t> shape,
                               std::vector<float> values);

// Writes a safetensors file through TempFile (no partial file on failure):
// tensors in the given order, contiguous, the header padded with spaces so
// the data section starts 8-byte aligned. Throws InputError naming `path`.
void writeSafetensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace attn
