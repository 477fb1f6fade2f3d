// .npy read/write (NumPy format 1.0-3.0), C order. Inputs are read as
// float32 or float64 only; float32, int64 and int32 are written (the int
// types for CSR index arrays). Readers validate everything before trusting it and throw InputError
// naming the file and the field; writers go through a temp file + rename.
#pragma once

#include "engine/tensor.h"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

// Reads a .npy file as float32. `field` is what the file is for ("--q",
// "mask"); it is named in errors next to the path.
Array readNpy(const std::filesystem::path& path, const std::string& field);

// The header of .npy bytes (the magic, version, descr, C order, shape),
// validated; the dtype is the caller's to check: readNpy takes float32 and
// float64, an attention file float32 and float16 (engine/model/checkpoint/attention_file.h).
struct NpyHeader {
  std::string descr;  // as written: "<f4", "|f2", ">f8"
  std::vector<int64_t> shape;
  uint64_t elements = 1;    // the shape's product, at most 2^64 / 8
  uint64_t data_start = 0;  // where the data begins
};
NpyHeader parseNpyHeader(std::string_view bytes, const std::string& where);

// Parses .npy bytes already in memory (used by readNpy and by tests).
Array parseNpy(const std::string& bytes, const std::string& where);

// Encodes a float32 array as .npy format 1.0.
std::string encodeNpy(const Array& a);

// Encodes a 1-D or N-d array of `shape` (product = values.size()) as .npy
// format 1.0: float32 '<f4', int64 '<i8', int32 '<i4' (little-endian host).
std::string encodeNpy(const std::vector<int64_t>& shape, const std::vector<float>& values);
std::string encodeNpy(const std::vector<int64_t>& shape, const std::vector<int64_t>& values);
std::string encodeNpy(const std::vector<int64_t>& shape, const std::vector<int32_t>& values);

// Writes the pieces one after the other to `path` atomically (temp file in
// the same folder, then rename), straight from the caller's memory.
void writeFileAtomic(const std::filesystem::path& path, const std::vector<std::string_view>& pieces);
inline void writeFileAtomic(const std::filesystem::path& path, const std::string& bytes) {
  writeFileAtomic(path, std::vector<std::string_view>{bytes});
}

// A .npy whose data is `parts` in order (C order overall: the heads of
// [H, L, L] one after the other), written without copying the data: at
// L = 4096 an extra copy of 8 heads is 512 MiB to fault in and fill.
// The parts' sizes must add up to the product of `shape`.
void writeNpyParts(const std::filesystem::path& path, const std::vector<int64_t>& shape,
                   const std::vector<std::span<const float>>& parts);
void writeNpyParts(const std::filesystem::path& path, const std::vector<int64_t>& shape,
                   const std::vector<std::span<const int64_t>>& parts);
void writeNpyParts(const std::filesystem::path& path, const std::vector<int64_t>& shape,
                   const std::vector<std::span<const int32_t>>& parts);

// A float32 .npy of `shape` written piece by piece, at any offset and from
// any thread (pwrite), so a file larger than memory is never assembled:
// the header is written and the file sized at once; close() checks every
// write landed. Refuses, naming the file, when the disk has no room for it.
class NpyStreamWriter {
 public:
  NpyStreamWriter(const std::filesystem::path& path, const std::vector<int64_t>& shape);
  ~NpyStreamWriter();
  NpyStreamWriter(const NpyStreamWriter&) = delete;
  NpyStreamWriter& operator=(const NpyStreamWriter&) = delete;
  // `count` values at element `offset` (C order over the shape).
  void write(int64_t offset, const float* values, int64_t count) const;
  void close();

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  int64_t data_start_ = 0, count_ = 0;
};

inline void writeNpy(const std::filesystem::path& path, const Array& a) {
  writeFileAtomic(path, encodeNpy(a));
}

}  // namespace attn
