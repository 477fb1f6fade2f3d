// Writing files so that a failure leaves nothing behind: write a temporary
// file beside the target, then rename it over the target (atomic on one
// filesystem). Every writer in the tree goes through TempFile.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace attn {

class TempFile {
 public:
  // The temp name keeps the target's extension (.png, .svg …) so writers
  // that pick a format from the name still do.
  explicit TempFile(std::filesystem::path target);
  ~TempFile();  // removes the temp file unless commit() succeeded
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::filesystem::path& path() const { return tmp_; }
  // Renames the temp file over the target; throws InputError naming the
  // target when the temp file is missing or the rename fails.
  void commit();

 private:
  std::filesystem::path target_, tmp_;
  bool committed_ = false;
};

// A file mapped read-only, kept while a reader holds it (safetensors
// checkpoints, attention files larger than memory). InputError starting
// with `what` (the path, and the field it is for) when it cannot be opened or mapped.
class MappedFile {
 public:
  static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path, const std::string& what);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return bytes_; }  // null for an empty file
  uint64_t size() const { return size_; }

 private:
  MappedFile() = default;
  const uint8_t* bytes_ = nullptr;
  uint64_t size_ = 0;
};

// The whole of a file the user named (`what` names it in errors: "--text-file"):
// InputError when it is missing, unreadable, or larger than `limit` bytes.
std::string readWholeFile(const std::filesystem::path& path, const std::string& what,
                          uintmax_t limit = uintmax_t{1} << 30);

}  // namespace attn
