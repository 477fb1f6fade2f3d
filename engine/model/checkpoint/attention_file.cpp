#include "engine/model/checkpoint/attention_file.h"

#include "engine/attention_math.h"  // formatBytes, formatNumber
#include "engine/error.h"
#include "engine/files.h"
#include "engine/model/blocks/maps.h"  // memoryForARun
#include "engine/model/tokenizers/tokenizer_text.h"  // UTF-8
#include "engine/npy.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace attn {
namespace {

// [SECTION] ZIP (.npz)
// The central directory is read first and nothing in it is trusted: every
// offset and size is checked against the file, and each member's local
// header against its directory entry.

constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50, kEndRecord = 0x06054b50,
                   kEnd64Record = 0x06064b50, kEnd64Locator = 0x07064b50;
constexpr uint32_t kMasked32 = 0xFFFFFFFF;  // "see the zip64 field"

uint64_t le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

std::string hex32(uint64_t v) {
  char s[16];
  std::snprintf(s, sizeof s, "0x%08llx", static_cast<unsigned long long>(v));
  return s;
}

struct ZipMember {
  std::string name;  // as stored: "attention.npy"
  uint64_t flags = 0, method = 0, crc = 0;
  uint64_t compressed = 0, size = 0, local = 0;
};

struct ZipDirectory {
  std::vector<ZipMember> members;
  uint64_t start = 0;  // the central directory's offset: members' data lies before it
};

// Sizes and offset a directory entry masks as 0xFFFFFFFF, in the order its
// zip64 extra field (id 1) holds them.
void readZip64Extra(const uint8_t* extra, uint64_t len, ZipMember& m, const std::string& where) {
  for (uint64_t p = 0; p + 4 <= len;) {
    const uint64_t id = le(extra + p, 2), n = le(extra + p + 2, 2);
    if (n > len - p - 4) break;
    if (id == 1) {
      const uint8_t* f = extra + p + 4;
      uint64_t used = 0;
      for (uint64_t* v : {&m.size, &m.compressed, &m.local}) {
        if (*v != kMasked32) continue;
        if (used + 8 > n) throw InputError(where + ": member '" + m.name + "': zip64 field too short");
        *v = le(f + used, 8);
        used += 8;
      }
      return;
    }
    p += 4 + n;
  }
}

ZipDirectory zipDirectory(const uint8_t* b, uint64_t n, const std::string& where) {
  // The end record: 22 bytes, then a comment of at most 65,535.
  uint64_t end = 0;
  bool found = false;
  for (uint64_t back = 0; n >= 22 && back <= std::min<uint64_t>(n - 22, 0xFFFF); ++back) {
    end = n - 22 - back;
    if (le(b + end, 4) == kEndRecord && le(b + end + 20, 2) <= back) {
      found = true;
      break;
    }
  }
  if (!found) throw InputError(where + ": not a .npz: no ZIP end record (truncated?)");
  uint64_t count = le(b + end + 10, 2), size = le(b + end + 12, 4), start = le(b + end + 16, 4);
  if (count == 0xFFFF || size == kMasked32 || start == kMasked32) {
    // zip64: a locator just before the end record gives the zip64 end record's offset.
    if (end < 20 || le(b + end - 20, 4) != kEnd64Locator)
      throw InputError(where + ": .npz: zip64 end record's locator missing (corrupt)");
    const uint64_t at = le(b + end - 20 + 8, 8);
    if (at > end - 20 || end - 20 - at < 56 || le(b + at, 4) != kEnd64Record)
      throw InputError(where + ": .npz: zip64 end record at " + std::to_string(at) + " is not inside the file (corrupt)");
    count = le(b + at + 32, 8), size = le(b + at + 40, 8), start = le(b + at + 48, 8);
  }
  if (start > n || size > n - start)
    throw InputError(where + ": .npz: central directory at " + std::to_string(start) + " (" + std::to_string(size) +
                     " bytes) lies outside the file's " + std::to_string(n) + " bytes (truncated or corrupt)");
  if (count > size / 46)  // each entry takes at least 46 bytes
    throw InputError(where + ": .npz: central directory of " + std::to_string(size) + " bytes cannot hold " +
                     std::to_string(count) + " entries (corrupt)");
  ZipDirectory dir;
  dir.start = start;
  const uint8_t* p = b + start;
  const uint8_t* const stop = b + start + size;
  for (uint64_t i = 0; i < count; ++i) {
    if (stop - p < 46 || le(p, 4) != kCentralHeader)
      throw InputError(where + ": .npz: central directory entry " + std::to_string(i) + " is corrupt");
    const uint64_t name_len = le(p + 28, 2), extra_len = le(p + 30, 2), comment_len = le(p + 32, 2);
    if (static_cast<uint64_t>(stop - p) < 46 + name_len + extra_len + comment_len)
      throw InputError(where + ": .npz: central directory entry " + std::to_string(i) + " runs past its end");
    ZipMember m;
    m.name.assign(reinterpret_cast<const char*>(p + 46), name_len);
    m.flags = le(p + 8, 2), m.method = le(p + 10, 2), m.crc = le(p + 16, 4);
    m.compressed = le(p + 20, 4), m.size = le(p + 24, 4), m.local = le(p + 42, 4);
    readZip64Extra(p + 46 + name_len, extra_len, m, where);
    dir.members.push_back(std::move(m));
    p += 46 + name_len + extra_len + comment_len;
  }
  return dir;
}

// Where member `m`'s data starts, its local header checked against the
// directory and its data inside the archive, before the directory.
uint64_t memberData(const uint8_t* b, const ZipDirectory& dir, const ZipMember& m, const std::string& where) {
  const std::string member = where + ": member '" + m.name + "'";
  if (m.flags & 1) throw InputError(member + " is encrypted");
  if (m.method != 0 && m.method != 8)
    throw InputError(member + " is compressed with ZIP method " + std::to_string(m.method) +
                     " (expected stored or deflated, as np.savez and np.savez_compressed write)");
  if (m.method == 0 && m.compressed != m.size)
    throw InputError(member + " is stored, yet its sizes differ (" + std::to_string(m.compressed) + " and " +
                     std::to_string(m.size) + " bytes; corrupt)");
  if (m.local > dir.start || dir.start - m.local < 30 || le(b + m.local, 4) != kLocalHeader)
    throw InputError(member + ": no local header at " + std::to_string(m.local) + " (corrupt)");
  const uint8_t* h = b + m.local;
  const uint64_t name_len = le(h + 26, 2), extra_len = le(h + 28, 2);
  const bool descriptor = le(h + 6, 2) & 8;  // sizes and CRC follow the data
  const uint64_t local_compressed = le(h + 18, 4), local_size = le(h + 22, 4);
  if (le(h + 8, 2) != m.method || name_len != m.name.size() || dir.start - m.local - 30 < name_len ||
      std::memcmp(h + 30, m.name.data(), name_len) != 0 || (!descriptor && le(h + 14, 4) != m.crc) ||
      (!descriptor && local_compressed != kMasked32 && local_compressed != m.compressed) ||
      (!descriptor && local_size != kMasked32 && local_size != m.size))
    throw InputError(member + ": its local header disagrees with the central directory (corrupt)");
  const uint64_t data = m.local + 30 + name_len + extra_len;
  if (data > dir.start || m.compressed > dir.start - data)
    throw InputError(member + ": its " + std::to_string(m.compressed) + " bytes at " + std::to_string(data) +
                     " run past the archive's data (truncated or corrupt)");
  return data;
}

// A deflated member inflated whole, once, after its declared size is
// checked against deflate's largest ratio and the memory available, and its
// CRC-32 after.
std::shared_ptr<const uint8_t[]> inflateMember(const uint8_t* src, const ZipMember& m, const std::string& where) {
  const std::string member = where + ": member '" + m.name + "'";
  constexpr uint64_t kMaxRatio = 1032;  // deflate's best: 258 bytes from about two bits
  if (m.size / kMaxRatio > m.compressed)
    throw InputError(member + " says it inflates to " + std::to_string(m.size) + " bytes from " +
                     std::to_string(m.compressed) + ", more than deflate can give (corrupt)");
  const double available = memoryForARun();
  if (static_cast<double>(m.size) > available)
    throw InputError(member + " inflates to " + formatBytes(static_cast<double>(m.size)) + ", more than the " +
                     formatBytes(available) +
                     " of memory available (save it with np.savez, uncompressed, to have it read from the disk)");
  std::shared_ptr<uint8_t[]> out(new uint8_t[std::max<uint64_t>(m.size, 1)]);
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw std::bad_alloc();  // raw deflate, as ZIP holds it
  z.next_in = const_cast<Bytef*>(src);
  z.next_out = out.get();
  // zlib counts in 32 bits: both sides are handed over a gigabyte at a time.
  constexpr uint64_t kStep = uint64_t{1} << 30;
  uint64_t in_left = m.compressed, out_left = m.size;
  int r = Z_OK;
  for (;;) {
    const bool more_in = z.avail_in == 0 && in_left > 0, more_out = z.avail_out == 0 && out_left > 0;
    if (more_in) {
      z.avail_in = static_cast<uInt>(std::min(in_left, kStep));
      in_left -= z.avail_in;
    }
    if (more_out) {
      z.avail_out = static_cast<uInt>(std::min(out_left, kStep));
      out_left -= z.avail_out;
    }
    r = inflate(&z, Z_NO_FLUSH);
    if (r == Z_OK || (r == Z_BUF_ERROR && (more_in || more_out))) continue;
    break;
  }
  const std::string message = z.msg ? z.msg : "";
  const uint64_t produced = z.total_out;
  inflateEnd(&z);
  if (r == Z_MEM_ERROR) throw std::bad_alloc();
  if (r == Z_DATA_ERROR) throw InputError(member + ": deflate data corrupt (" + message + ")");
  if (r != Z_STREAM_END)
    throw InputError(member + (produced == m.size ? ": inflates to more than the " + std::to_string(m.size) +
                                                        " bytes it declares (corrupt)"
                                                  : ": deflate data ends early (truncated)"));
  if (produced != m.size)
    throw InputError(member + ": inflates to " + std::to_string(produced) + " bytes, not the " +
                     std::to_string(m.size) + " it declares (corrupt)");
  const uint64_t crc = crc32_z(0, out.get(), m.size);
  if (crc != m.crc)
    throw InputError(member + ": CRC-32 " + hex32(crc) + " of its data is not the " + hex32(m.crc) +
                     " the archive records (corrupt)");
  return out;
}

// [SECTION] Choosing an array

std::string quotedList(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return s;
}

// `name`, else "attention" or "attentions", else the only array.
std::string chooseArray(const std::vector<std::string>& names, const std::string& name, const std::string& where) {
  const auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  if (names.empty()) throw InputError(where + ": holds no arrays");
  if (!name.empty()) {
    if (has(name)) return name;
    throw InputError(where + ": holds no array '" + name + "' (it holds " + quotedList(names) + ")");
  }
  for (const char* n : {"attention", "attentions"})
    if (has(n)) return n;
  if (names.size() == 1) return names[0];
  throw InputError(where + ": holds " + quotedList(names) + "; name one of them");
}

}  // namespace

// [SECTION] FloatTensor

FloatTensor FloatTensor::fromNpy(std::string_view bytes, std::shared_ptr<const void> keep, std::string what,
                                 const std::string& where) {
  const NpyHeader h = parseNpyHeader(bytes, where);
  FloatTensor t;
  const std::string& d = h.descr;
  if (d == "<f4" || d == "=f4" || d == "|f4") t.dtype_ = DType::F32;
  else if (d == "<f2" || d == "=f2" || d == "|f2") t.dtype_ = DType::F16;
  else if (!d.empty() && d[0] == '>')
    throw InputError(where + ": dtype '" + d +
                     "' is big-endian (expected little-endian float32 '<f4' or float16 '<f2'; save with .astype('<f4'))");
  else
    throw InputError(where + ": dtype '" + d +
                     "' is not accepted (expected float32 '<f4' or float16 '<f2', or bfloat16 in a .safetensors file; "
                     "save with .astype(np.float32))");
  const uint64_t need = storedBytes(t.dtype_, h.elements), have = bytes.size() - h.data_start;
  if (need != have)
    throw InputError(where + ": shape " + shapeText(h.shape) + " of " + (t.dtype_ == DType::F32 ? "float32" : "float16") +
                     " needs " + std::to_string(need) + " bytes of data, the file has " + std::to_string(have) +
                     (have < need ? " (truncated)" : ""));
  t.what_ = std::move(what);
  t.shape_ = h.shape;
  t.keep_ = std::move(keep);
  t.data_ = reinterpret_cast<const uint8_t*>(bytes.data()) + h.data_start;
  return t;
}

FloatTensor FloatTensor::open(const std::filesystem::path& path, const std::string& field, const std::string& name) {
  const std::string file = path.string(), where = file + ": " + field;
  std::shared_ptr<const MappedFile> map = MappedFile::open(path, where);
  const uint8_t* b = map->data();
  const uint64_t n = map->size();
  const auto bytes = [&](uint64_t at, uint64_t size) {
    return std::string_view(reinterpret_cast<const char*>(b) + at, size);
  };

  if (n >= 6 && bytes(0, 6) == "\x93NUMPY") return fromNpy(bytes(0, n), map, file, where);

  if (n >= 4 && (le(b, 4) == kLocalHeader || le(b, 4) == kEndRecord)) {
    const ZipDirectory dir = zipDirectory(b, n, where);
    std::vector<std::string> names;  // numpy's arrays: "name.npy" members
    for (const ZipMember& m : dir.members)
      if (m.name.size() > 4 && m.name.ends_with(".npy")) names.push_back(m.name.substr(0, m.name.size() - 4));
    const std::string chosen = chooseArray(names, name, where);
    const ZipMember& m =
        *std::find_if(dir.members.begin(), dir.members.end(), [&](const ZipMember& z) { return z.name == chosen + ".npy"; });
    const uint64_t data = memberData(b, dir, m, where);
    const std::string member = where + ": member '" + m.name + "'", what = file + " '" + chosen + "'";
    if (m.method == 0) return fromNpy(bytes(data, m.size), map, what, member);
    std::shared_ptr<const uint8_t[]> inflated = inflateMember(b + data, m, where);
    const std::string_view held(reinterpret_cast<const char*>(inflated.get()), m.size);
    return fromNpy(held, std::move(inflated), what, member);
  }

  if (n >= 9 && b[8] == '{') {
    // Errors name the field too; the mapping outlives the view into it.
    struct Held {
      std::shared_ptr<const MappedFile> map;
      std::shared_ptr<const SafetensorsFile> file;
    };
    auto held = std::make_shared<Held>(Held{map, SafetensorsFile::fromMemory(b, n, where)});
    std::vector<std::string> names;
    for (const TensorEntry& e : held->file->header().tensors) names.push_back(e.name);
    const TensorEntry& e = *held->file->find(chooseArray(names, name, where));
    if (e.dtype == DType::I64)
      throw InputError(where + ": tensor '" + e.name + "' is I64 (expected F32, F16 or BF16)");
    FloatTensor t;
    t.what_ = file + " '" + e.name + "'";
    t.dtype_ = e.dtype;
    t.shape_ = e.shape;
    t.data_ = held->file->data(e);
    t.keep_ = std::move(held);
    return t;
  }
  throw InputError(where + ": not a .npy, .npz or .safetensors file (its first bytes are none of theirs)");
}

int64_t FloatTensor::elements() const {
  int64_t n = 1;
  for (const int64_t d : shape_) n *= d;
  return n;
}

void FloatTensor::read(int64_t first, int64_t count, float* out) const {
  toFloats(dtype_, data_ + storedBytes(dtype_, static_cast<uint64_t>(first)), count, out);
}

// [SECTION] Attention maps

AttentionMaps attentionMaps(FloatTensor t, const std::string& field) {
  const std::vector<int64_t>& s = t.shape();
  const size_t rank = s.size();
  const bool fits = rank >= 2 && rank <= 4 && std::find(s.begin(), s.end(), 0) == s.end() &&
                    (rank == 4 || s[rank - 1] == s[rank - 2]);  // cross-attention only as [layers, heads, Lq, Lk]
  if (!fits)
    throw InputError(t.what() + ": " + field + ": shape " + shapeText(s) +
                     " fits no layout; expected [L, L], [heads, L, L], [layers, heads, L, L] or [layers, heads, Lq, Lk]");
  AttentionMaps a;
  a.layers = rank == 4 ? s[0] : 1;
  a.heads = rank >= 3 ? s[rank - 3] : 1;
  a.rows = s[rank - 2];
  a.cols = s[rank - 1];
  a.tensor = std::move(t);
  return a;
}

Mat AttentionMaps::map(int64_t layer, int64_t head) const {
  assert(layer >= 0 && layer < layers && head >= 0 && head < heads);
  Mat m(rows, cols);
  tensor.read((layer * heads + head) * rows * cols, rows * cols, m.data());
  return m;
}

void checkAttentionMap(Mat& map, bool scores, const std::string& what, int64_t layer, int64_t head) {
  const std::string at = what + ": layer " + std::to_string(layer) + ", head " + std::to_string(head) + ", row ";
  const auto cell = [&](int64_t r, int64_t c) { return at + std::to_string(r) + ", column " + std::to_string(c); };
  for (int64_t r = 0; r < map.rows(); ++r) {
    float* row = map.row(r).data();
    if (scores) {
      // Softmax of the row: −inf is a masked key (weight 0); NaN and +inf have no weight.
      float top = -std::numeric_limits<float>::infinity();
      for (int64_t c = 0; c < map.cols(); ++c) {
        if (std::isnan(row[c]) || row[c] == std::numeric_limits<float>::infinity())
          throw InputError(cell(r, c) + " is " + formatNumber(row[c]) +
                           " (scores may hold -inf for a masked key, not NaN or +inf)");
        top = std::max(top, row[c]);
      }
      if (top == -std::numeric_limits<float>::infinity())
        throw InputError(at + std::to_string(r) + " is -inf everywhere (every key masked: no softmax)");
      double z = 0;
      for (int64_t c = 0; c < map.cols(); ++c) z += row[c] = std::exp(row[c] - top);
      const float inv = static_cast<float>(1.0 / z);
      for (int64_t c = 0; c < map.cols(); ++c) row[c] *= inv;
      continue;
    }
    double sum = 0;
    for (int64_t c = 0; c < map.cols(); ++c) {
      if (!std::isfinite(row[c]) || row[c] < 0)
        throw InputError(cell(r, c) + " is " + formatNumber(row[c]) +
                         ", not a weight (weights are finite and >= 0; scores: say \"scores\": true in meta.json)");
      sum += row[c];
    }
    if (std::fabs(sum - 1) > kRowSumTolerance)
      throw InputError(at + std::to_string(r) + " sums to " + formatNumber(sum) +
                       ", not 1 (weights: softmax rows; scores: say \"scores\": true in meta.json)");
  }
}

// [SECTION] Tokens

std::vector<std::string> readTokenList(const std::filesystem::path& path, const std::string& field) {
  const std::string text = readWholeFile(path, field);
  const std::string where = path.string() + ": " + field;
  const std::string expected = " (expected a JSON list of strings, an object with a \"tokens\" list, or one token a line)";
  std::vector<std::string> tokens;
  // JSON by its name, or by its first character when it parses ("[CLS]" may start a text file).
  const size_t first = text.find_first_not_of(" \t\r\n");
  const bool json_name = path.extension() == ".json";
  nlohmann::json j;
  bool json = false;
  if (json_name || (first != std::string::npos && (text[first] == '[' || text[first] == '{'))) {
    try {
      j = nlohmann::json::parse(text);
      json = true;
    } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number out of range (1e400)
      if (json_name) throw InputError(where + ": not valid JSON (" + e.what() + ")" + expected);
    }
  }
  if (json) {
    const nlohmann::json* list = &j;
    if (j.is_object()) {
      const auto it = j.find("tokens");
      if (it == j.end()) throw InputError(where + ": a JSON object without a \"tokens\" list" + expected);
      list = &*it;
    }
    if (!list->is_array()) throw InputError(where + ": holds a JSON " + std::string(list->type_name()) + expected);
    for (size_t i = 0; i < list->size(); ++i) {
      const nlohmann::json& v = (*list)[i];
      if (!v.is_string())
        throw InputError(where + ": token " + std::to_string(i) + " is not a string (a JSON " + v.type_name() + ")" +
                         expected);
      tokens.push_back(v.get<std::string>());
    }
  } else {
    const size_t start = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;  // a byte-order mark is no token
    for (size_t i = start; i < text.size();) {
      const size_t at = i;
      if (tok::nextCodePoint(text, i) == tok::kInvalid)
        throw InputError(where + ": line " + std::to_string(1 + std::count(text.begin(), text.begin() + at, '\n')) +
                         " is not UTF-8 (byte " + tok::hexByte(static_cast<unsigned char>(text[at])) + ")" + expected);
    }
    for (size_t i = start; i < text.size();) {
      size_t end = text.find('\n', i);
      if (end == std::string::npos) end = text.size();
      tokens.push_back(text.substr(i, end - i));
      if (tokens.back().ends_with('\r')) tokens.back().pop_back();
      i = end + 1;
    }
  }
  if (tokens.empty()) throw InputError(where + ": holds no tokens" + expected);
  return tokens;
}

}  // namespace attn
