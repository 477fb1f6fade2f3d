// .npy read/write (NumPy format 1.0-3.0): float32/float64, C order.
// Readers validate everything before trusting it and throw InputError
// naming the file and the field; writers go through a temp file + rename.
#pragma once

#include "engine/tensor.h"

#include <filesystem>
#include <string>

namespace attn {

// Reads a .npy file as float32. `field` is what the file is for ("--q",
// "mask"); it is named in errors next to the path.
Array readNpy(const std::filesystem::path& path, const std::string& field);

// Parses .npy bytes already in memory (used by readNpy and by tests).
Array parseNpy(const std::string& bytes, const std::string& where);

// Encodes a float32 array as .npy format 1.0.
std::string encodeNpy(const Array& a);

// Writes `bytes` to `path` atomically (temp file in the same folder, then rename).
void writeFileAtomic(const std::filesystem::path& path, const std::string& bytes);

inline void writeNpy(const std::filesystem::path& path, const Array& a) {
  writeFileAtomic(path, encodeNpy(a));
}

}  // namespace attn
