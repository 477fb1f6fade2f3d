#include "engine/files.h"

#include "engine/error.h"

#include <unistd.h>

#include <fstream>
#include <iterator>

namespace attn {

TempFile::TempFile(std::filesystem::path target) : target_(std::move(target)) {
  // ".name.tmp-PID.ext"; appended piecewise (GCC 12 misreports "." + string as -Wrestrict).
  std::string name = ".";
  name += target_.filename().string();
  name += ".tmp-" + std::to_string(::getpid());
  name += target_.extension().string();
  tmp_ = target_;
  tmp_.replace_filename(name);
}

TempFile::~TempFile() {
  if (committed_) return;
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

void TempFile::commit() {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(tmp_, ec))
    throw InputError(target_.string() + ": could not write the file (folder missing or not writable?)");
  std::filesystem::rename(tmp_, target_, ec);
  if (ec) throw InputError(target_.string() + ": could not move the file into place: " + ec.message());
  committed_ = true;
}

std::string readWholeFile(const std::filesystem::path& path, const std::string& what, uintmax_t limit) {
  const std::string where = path.string() + " (" + what + ")";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(where + ": no such file");
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > limit)
    throw InputError(where + ": " + std::to_string(size) + " bytes, more than the " + std::to_string(limit) +
                     " this reads");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(where + ": cannot open for reading");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace attn
