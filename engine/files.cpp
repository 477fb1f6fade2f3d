#include "engine/files.h"

#include "engine/error.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(what + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(what + ": not a regular file");
  }
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->size_ = static_cast<uint64_t>(st.st_size);
  if (f->size_ > 0) {
    void* p = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw InputError(what + ": cannot map the file (" + std::strerror(errno) + ")");
    }
    f->bytes_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file
  return f;
}

MappedFile::~MappedFile() {
  if (bytes_) ::munmap(const_cast<uint8_t*>(bytes_), size_);
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
