// An output folder that appears whole or not at all: every file is written
// into a staging folder beside `out`, then the whole folder is swapped in.
#pragma once

#include "engine/npy.h"
#include "engine/tensor.h"

#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace attn {

// A failure at any point leaves `out` as it was, and an earlier run's files
// in `out` never mix with this run's.
class StagedDir {
 public:
  // Validates --out (parent exists, `out` is a folder or absent) before any work.
  explicit StagedDir(std::filesystem::path out);
  ~StagedDir();
  StagedDir(const StagedDir&) = delete;
  StagedDir& operator=(const StagedDir&) = delete;

  // `rel` may name a subfolder ("inputs/x.npy"); it is created on first use.
  void write(const std::string& rel, const std::string& bytes);
  // A .npy written straight from the caller's memory (engine/npy.h writeNpyParts).
  template <class T>
  void writeNpy(const std::string& rel, const std::vector<int64_t>& shape, const std::vector<std::span<const T>>& parts) {
    writeNpyParts(prepare(rel), shape, parts);
  }
  void writeNpy(const std::string& rel, const Mat& m) { writeNpy(rel, {m.rows(), m.cols()}, std::vector{values(m)}); }
  void writeNpy(const std::string& rel, const Array& a) {
    writeNpy(rel, a.shape, std::vector{std::span<const float>(a.data)});
  }
  // The staged path of `rel`, its folder created: for a file written by
  // other means (NpyStreamWriter).
  std::filesystem::path prepare(const std::string& rel);
  void commit();

 private:
  std::filesystem::path out_, stage_, old_;
};

}  // namespace attn
