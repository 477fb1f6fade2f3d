// An output folder that appears whole or not at all: every file is written
// into a staging folder beside `out`, then the whole folder is swapped in.
#pragma once

#include <filesystem>
#include <string>

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
  void commit();

 private:
  std::filesystem::path out_, stage_, old_;
};

}  // namespace attn
