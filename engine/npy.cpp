#include "engine/npy.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/files.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace attn {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// Finds `'key':` in the header dict and returns the text after the colon.
std::string afterKey(const std::string& header, const std::string& key, const std::string& where) {
  for (const char q : {'\'', '"'}) {
    const std::string needle = std::string(1, q) + key + std::string(1, q);
    const size_t at = header.find(needle);
    if (at == std::string::npos) continue;
    const size_t colon = header.find(':', at + needle.size());
    if (colon == std::string::npos) break;
    size_t p = colon + 1;
    while (p < header.size() && header[p] == ' ') ++p;
    return header.substr(p);
  }
  throw InputError(where + ": corrupt .npy header: no '" + key + "' field");
}

std::vector<int64_t> parseShape(const std::string& rest, const std::string& where) {
  if (rest.empty() || rest[0] != '(')
    throw InputError(where + ": corrupt .npy header: 'shape' is not a tuple");
  const size_t close = rest.find(')');
  if (close == std::string::npos)
    throw InputError(where + ": corrupt .npy header: 'shape' tuple is not closed");
  std::vector<int64_t> shape;
  std::stringstream ss(rest.substr(1, close - 1));
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t b = item.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    const std::string t = item.substr(b, item.find_last_not_of(' ') - b + 1);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (errno || end == t.c_str() || *end != '\0' || v < 0)
      throw InputError(where + ": corrupt .npy header: shape entry '" + t + "' is not a non-negative integer");
    shape.push_back(v);
  }
  return shape;
}

}  // namespace

NpyHeader parseNpyHeader(std::string_view bytes, const std::string& where) {
  if (bytes.size() < kMagicLen + 4 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    throw InputError(where + ": not a .npy file (missing the \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw InputError(where + ": truncated .npy header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    throw InputError(where + ": unsupported .npy format version " + std::to_string(major) + " (expected 1, 2 or 3)");
  }
  if (header_start + header_len > bytes.size())
    throw InputError(where + ": truncated .npy header (says " + std::to_string(header_len) +
                     " bytes, file has " + std::to_string(bytes.size() - header_start) + ")");
  const std::string header(bytes.substr(header_start, header_len));

  NpyHeader h;
  std::string descr = afterKey(header, "descr", where);
  if (descr.size() < 5 || (descr[0] != '\'' && descr[0] != '"'))
    throw InputError(where + ": corrupt .npy header: 'descr' is not a string");
  h.descr = descr.substr(1, descr.find(descr[0], 1) - 1);

  const std::string fortran = afterKey(header, "fortran_order", where);
  if (fortran.rfind("True", 0) == 0)
    throw InputError(where + ": Fortran-order array (expected C order; save with np.ascontiguousarray)");
  if (fortran.rfind("False", 0) != 0)
    throw InputError(where + ": corrupt .npy header: 'fortran_order' is neither True nor False");

  h.shape = parseShape(afterKey(header, "shape", where), where);
  // Count elements with overflow checks before trusting the product.
  for (const int64_t d : h.shape) {
    if (d != 0 && h.elements > std::numeric_limits<uint64_t>::max() / 8 / static_cast<uint64_t>(d))
      throw InputError(where + ": shape " + Array{h.shape, {}}.shapeString() + " is too large");
    h.elements *= static_cast<uint64_t>(d);
  }
  h.data_start = header_start + header_len;
  return h;
}

Array parseNpy(const std::string& bytes, const std::string& where) {
  const NpyHeader h = parseNpyHeader(bytes, where);
  // 'descr': '<f4' | '<f8' (a '|' or '=' byte-order mark is accepted for
  // little-endian hosts; big-endian data is refused rather than misread).
  size_t item = 0;
  if (h.descr == "<f4" || h.descr == "=f4" || h.descr == "|f4") item = 4;
  else if (h.descr == "<f8" || h.descr == "=f8" || h.descr == "|f8") item = 8;
  else
    throw InputError(where + ": unsupported dtype '" + h.descr + "' (expected float32 '<f4' or float64 '<f8')");

  Array a;
  a.shape = h.shape;
  const uint64_t n = h.elements;
  const size_t data_start = h.data_start;
  const uint64_t need = n * item, have = bytes.size() - data_start;
  if (need != have)
    throw InputError(where + ": data size mismatch: shape " + a.shapeString() + " of " +
                     (item == 4 ? "float32" : "float64") + " needs " + std::to_string(need) +
                     " bytes, file has " + std::to_string(have) + (have < need ? " (truncated)" : ""));
  a.data.resize(n);
  const char* src = bytes.data() + data_start;
  if (n == 0) {
    // Zero elements: nothing to copy (and an empty vector's data() may be null,
    // which memcpy must not be given even for 0 bytes).
  } else if (item == 4) {
    std::memcpy(a.data.data(), src, n * 4);
  } else {
    for (uint64_t i = 0; i < n; ++i) {
      double d;
      std::memcpy(&d, src + i * 8, 8);
      // A finite double beyond float's range has no float value (converting it is undefined behaviour).
      if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
        char value[32];
        std::snprintf(value, sizeof value, "%.3g", d);
        throw InputError(where + ": value " + value + " is beyond float32's range (±3.4e38)");
      }
      a.data[i] = static_cast<float>(d);
    }
  }
  for (const float v : a.data)
    if (!std::isfinite(v)) throw InputError(where + ": contains NaN or infinite values");
  return a;
}

Array readNpy(const std::filesystem::path& path, const std::string& field) {
  return parseNpy(readWholeFile(path, field, std::numeric_limits<uintmax_t>::max()), path.string() + " (" + field + ")");
}

namespace {

// The magic, version 1.0, header length and header, padded with spaces so
// the data starts on a 64-byte boundary. `count` values of the `shape`.
std::string npyHeader(const std::vector<int64_t>& shape, const char* descr, size_t count) {
  uint64_t n = 1;
  for (const int64_t d : shape) n *= static_cast<uint64_t>(d);
  if (n != count) throw std::logic_error("encodeNpy: shape does not match the number of values");
  std::string dims = "(";
  for (size_t i = 0; i < shape.size(); ++i) dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "") + (i + 1 < shape.size() ? " " : "");
  dims += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + dims + ", }";
  const size_t total = kMagicLen + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicLen);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  return out;
}

std::string encodeRaw(const std::vector<int64_t>& shape, const char* descr, const void* data, size_t count,
                      size_t item) {
  std::string out = npyHeader(shape, descr, count);
  if (count > 0) out.append(static_cast<const char*>(data), count * item);
  return out;
}

template <class T>
void writeParts(const std::filesystem::path& path, const std::vector<int64_t>& shape, const char* descr,
                const std::vector<std::span<const T>>& parts) {
  size_t count = 0;
  for (const std::span<const T>& p : parts) count += p.size();
  const std::string header = npyHeader(shape, descr, count);
  std::vector<std::string_view> pieces = {header};
  for (const std::span<const T>& p : parts)
    if (!p.empty()) pieces.emplace_back(reinterpret_cast<const char*>(p.data()), p.size_bytes());
  writeFileAtomic(path, pieces);
}

}  // namespace

std::string encodeNpy(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  return encodeRaw(shape, "<f4", values.data(), values.size(), sizeof(float));
}
std::string encodeNpy(const std::vector<int64_t>& shape, const std::vector<int64_t>& values) {
  return encodeRaw(shape, "<i8", values.data(), values.size(), sizeof(int64_t));
}
std::string encodeNpy(const std::vector<int64_t>& shape, const std::vector<int32_t>& values) {
  return encodeRaw(shape, "<i4", values.data(), values.size(), sizeof(int32_t));
}

std::string encodeNpy(const Array& a) { return encodeNpy(a.shape, a.data); }

void writeNpyParts(const std::filesystem::path& path, const std::vector<int64_t>& shape,
                   const std::vector<std::span<const float>>& parts) {
  writeParts(path, shape, "<f4", parts);
}
void writeNpyParts(const std::filesystem::path& path, const std::vector<int64_t>& shape,
                   const std::vector<std::span<const int64_t>>& parts) {
  writeParts(path, shape, "<i8", parts);
}
void writeNpyParts(const std::filesystem::path& path, const std::vector<int64_t>& shape,
                   const std::vector<std::span<const int32_t>>& parts) {
  writeParts(path, shape, "<i4", parts);
}

void writeFileAtomic(const std::filesystem::path& path, const std::vector<std::string_view>& pieces) {
  TempFile tmp(path);
  {
    std::ofstream out(tmp.path(), std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path.string() + ": cannot open for writing (folder missing or not writable?)");
    for (const std::string_view piece : pieces) out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    out.flush();
    if (!out) throw InputError(path.string() + ": write failed (disk full?)");
  }
  tmp.commit();
}

NpyStreamWriter::NpyStreamWriter(const std::filesystem::path& path, const std::vector<int64_t>& shape) : path_(path) {
  count_ = 1;
  for (const int64_t d : shape) count_ *= d;
  const std::string header = npyHeader(shape, "<f4", static_cast<size_t>(count_));
  data_start_ = static_cast<int64_t>(header.size());
  const double bytes = static_cast<double>(data_start_) + 4.0 * static_cast<double>(count_);
  struct statvfs fs {};
  if (statvfs(path.parent_path().c_str(), &fs) == 0) {
    const double room = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
    if (bytes > room)
      throw InputError(path.filename().string() + ": needs " + formatBytes(bytes) + " on disk, and " +
                       path.parent_path().string() + " has " + formatBytes(room) + " free");
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(path.string() + ": cannot open for writing (folder missing or not writable?)");
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw InputError(path.string() + ": cannot make room for " + formatBytes(bytes) + " (disk full?)");
  }
  if (::pwrite(fd_, header.data(), header.size(), 0) != static_cast<ssize_t>(header.size()))
    throw InputError(path.string() + ": write failed (disk full?)");
}

NpyStreamWriter::~NpyStreamWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void NpyStreamWriter::write(int64_t offset, const float* values, int64_t count) const {
  const char* p = reinterpret_cast<const char*>(values);
  int64_t left = count * 4, at = data_start_ + offset * 4;
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, p, static_cast<size_t>(left), static_cast<off_t>(at));
    if (n <= 0) throw InputError(path_.string() + ": write failed (disk full?)");
    p += n, at += n, left -= n;
  }
}

void NpyStreamWriter::close() {
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw InputError(path_.string() + ": write failed (disk full?)");
}

}  // namespace attn
