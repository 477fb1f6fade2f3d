#include "engine/model/checkpoint/safetensors.h"

#include "engine/error.h"
#include "engine/files.h"
#include "engine/model/checkpoint/quants.h"

#include <nlohmann/json.hpp>

#include "engine/tensor.h"  // Eigen::half / bfloat16 conversions

#include <algorithm>
#include <bit>
#include <cstring>

#ifdef __F16C__
#include <immintrin.h>
#endif
#include <fstream>
#include <limits>

namespace attn {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; so must the host be");

std::string dtypeName(DType t) {
  switch (t) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::I64: return "I64";
    case DType::Q8_0: return "Q8_0";
    case DType::Q4_0: return "Q4_0";
    case DType::Q4_1: return "Q4_1";
    case DType::Q5_0: return "Q5_0";
    case DType::Q5_1: return "Q5_1";
    case DType::Q2_K: return "Q2_K";
    case DType::Q3_K: return "Q3_K";
    case DType::Q4_K: return "Q4_K";
    case DType::Q5_K: return "Q5_K";
    case DType::Q6_K: return "Q6_K";
    case DType::IQ4_NL: return "IQ4_NL";
    case DType::IQ4_XS: return "IQ4_XS";
  }
  return "?";
}

BlockLayout blockLayout(DType t) {
  switch (t) {
    case DType::F32: return {1, 4};
    case DType::F16: return {1, 2};
    case DType::BF16: return {1, 2};
    case DType::I64: return {1, 8};
    case DType::Q8_0: return {32, 34};
    case DType::Q4_0: return {32, 18};
    case DType::Q4_1: return {32, 20};
    case DType::Q5_0: return {32, 22};
    case DType::Q5_1: return {32, 24};
    case DType::Q2_K: return {256, 84};
    case DType::Q3_K: return {256, 110};
    case DType::Q4_K: return {256, 144};
    case DType::Q5_K: return {256, 176};
    case DType::Q6_K: return {256, 210};
    case DType::IQ4_NL: return {32, 18};
    case DType::IQ4_XS: return {256, 136};
  }
  return {};
}

uint64_t storedBytes(DType t, uint64_t count) {
  const BlockLayout b = blockLayout(t);
  return count / static_cast<uint64_t>(b.values) * static_cast<uint64_t>(b.bytes);
}

int64_t TensorEntry::elements() const {
  int64_t n = 1;
  for (const int64_t s : shape) n *= s;
  return n;
}

// [SECTION] Header
std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

std::string offsetsText(uint64_t b, uint64_t e) { return "[" + std::to_string(b) + ", " + std::to_string(e) + "]"; }

TensorEntry parseEntry(const std::string& name, const nlohmann::json& j, const std::string& what) {
  const std::string where = what + ": tensor '" + name + "'";
  if (!j.is_object()) throw InputError(where + ": expected an object with dtype, shape and data_offsets");
  TensorEntry t;
  t.name = name;
  const auto dt = j.find("dtype");
  if (dt == j.end() || !dt->is_string()) throw InputError(where + ": field 'dtype' missing or not a string");
  const std::string dname = dt->get<std::string>();
  if (dname == "F32") t.dtype = DType::F32;
  else if (dname == "F16") t.dtype = DType::F16;
  else if (dname == "BF16") t.dtype = DType::BF16;
  else if (dname == "I64") t.dtype = DType::I64;
  else throw InputError(where + ": dtype '" + dname + "' is not supported (expected F32, F16, BF16 or I64)");

  const auto sh = j.find("shape");
  if (sh == j.end() || !sh->is_array()) throw InputError(where + ": field 'shape' missing or not an array");
  // product(shape) · sizeof(dtype) must not overflow: every dimension is
  // bounded by the bytes that could hold it.
  uint64_t elements = 1;
  for (const nlohmann::json& d : *sh) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      throw InputError(where + ": field 'shape' must hold non-negative integers, got " + sh->dump());
    const uint64_t dim = d.get<uint64_t>();
    if (dim != 0 && elements > (std::numeric_limits<uint64_t>::max() / 8) / dim)
      throw InputError(where + ": shape " + sh->dump() + " is too large");
    elements *= dim;
    t.shape.push_back(static_cast<int64_t>(dim));
  }
  const auto off = j.find("data_offsets");
  if (off == j.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
      !(*off)[1].is_number_unsigned())
    throw InputError(where + ": field 'data_offsets' must be [begin, end] with non-negative integers");
  t.begin = (*off)[0].get<uint64_t>();
  t.end = (*off)[1].get<uint64_t>();
  if (t.end < t.begin)
    throw InputError(where + ": data_offsets " + offsetsText(t.begin, t.end) + " end before they begin");
  const uint64_t need = storedBytes(t.dtype, elements);
  if (t.end - t.begin != need)
    throw InputError(where + ": data_offsets " + offsetsText(t.begin, t.end) + " hold " +
                     std::to_string(t.end - t.begin) + " bytes, but " + dname + " " + shapeText(t.shape) +
                     " needs " + std::to_string(need));
  return t;
}

}  // namespace

SafetensorsHeader parseSafetensorsHeader(const uint8_t* bytes, uint64_t size, const std::string& what) {
  if (size < 8)
    throw InputError(what + ": file is " + std::to_string(size) +
                     " bytes, shorter than the 8-byte header length (truncated or not a safetensors file)");
  uint64_t n = 0;
  std::memcpy(&n, bytes, 8);  // little-endian u64
  if (n > kMaxSafetensorsHeader)
    throw InputError(what + ": header length " + std::to_string(n) + " bytes is over the limit of " +
                     std::to_string(kMaxSafetensorsHeader) + " (corrupt or not a safetensors file)");
  if (n > size - 8)
    throw InputError(what + ": header of " + std::to_string(n) + " bytes runs past the end of the file (" +
                     std::to_string(size) + " bytes; truncated?)");
  SafetensorsHeader h;
  h.data_start = 8 + n;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(bytes + 8, bytes + 8 + n);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(what + ": header is not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw InputError(what + ": header must be a JSON object of tensors");
  const uint64_t data_size = size - h.data_start;
  for (const auto& [name, entry] : j.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw InputError(what + ": __metadata__ must be an object of strings");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw InputError(what + ": __metadata__ '" + k + "' must be a string");
        h.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    TensorEntry t = parseEntry(name, entry, what);
    if (t.end > data_size)
      throw InputError(what + ": tensor '" + name + "': data_offsets " + offsetsText(t.begin, t.end) +
                       " run past the end of the data section (" + std::to_string(data_size) +
                       " bytes; truncated?)");
    h.tensors.push_back(std::move(t));
  }
  std::sort(h.tensors.begin(), h.tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (size_t i = 1; i < h.tensors.size(); ++i) {
    const TensorEntry &a = h.tensors[i - 1], &b = h.tensors[i];
    if (b.begin < a.end)
      throw InputError(what + ": tensors '" + a.name + "' " + offsetsText(a.begin, a.end) + " and '" + b.name + "' " +
                       offsetsText(b.begin, b.end) + " overlap");
  }
  return h;
}

// [SECTION] Reading
std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  std::shared_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->map_ = MappedFile::open(path, path);
  f->what_ = path;
  f->bytes_ = f->map_->data();
  f->size_ = f->map_->size();
  static const uint8_t kEmpty[1] = {0};
  f->header_ = parseSafetensorsHeader(f->bytes_ ? f->bytes_ : kEmpty, f->size_, path);
  return f;
}

std::shared_ptr<const SafetensorsFile> SafetensorsFile::fromMemory(const uint8_t* bytes, uint64_t size,
                                                                   const std::string& what) {
  std::shared_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->what_ = what;
  f->bytes_ = bytes;
  f->size_ = size;
  f->header_ = parseSafetensorsHeader(bytes, size, what);
  return f;
}

std::shared_ptr<const SafetensorsFile> SafetensorsFile::fromHeader(const uint8_t* bytes, uint64_t size,
                                                                   std::shared_ptr<const MappedFile> map,
                                                                   const std::string& what, SafetensorsHeader header) {
  std::shared_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->what_ = what;
  f->bytes_ = bytes;
  f->size_ = size;
  f->map_ = std::move(map);
  f->header_ = std::move(header);
  return f;
}

const TensorEntry* SafetensorsFile::find(const std::string& name) const {
  for (const TensorEntry& t : header_.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {

float halfToFloat(uint16_t bits) { return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits)); }
float bfloat16ToFloat(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }  // the top half of a float

// 16-bit values (unaligned, little-endian) to floats; past a million values
// on the OpenMP threads (a layer of a 1B model is 44M). Each kind is its own
// loop the compiler vectorises (through a function pointer, one call per
// value, a decode step spent 80 % of its time here); F16 eight at a time
// with F16C where the build has it.
void bf16ToFloats(const uint8_t* src, int64_t n, float* out) {
#pragma omp parallel for schedule(static) if (n > (int64_t{1} << 20))
  for (int64_t i = 0; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, src + 2 * i, 2);
    out[i] = bfloat16ToFloat(bits);
  }
}

void f16ToFloats(const uint8_t* src, int64_t n, float* out) {
  const int64_t blocks = n / 8;
#pragma omp parallel for schedule(static) if (n > (int64_t{1} << 20))
  for (int64_t b = 0; b < blocks; ++b) {
#ifdef __F16C__
    _mm256_storeu_ps(out + 8 * b, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * b))));
#else
    for (int64_t i = 8 * b; i < 8 * b + 8; ++i) {
      uint16_t bits;
      std::memcpy(&bits, src + 2 * i, 2);
      out[i] = halfToFloat(bits);
    }
#endif
  }
  for (int64_t i = 8 * blocks; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, src + 2 * i, 2);
    out[i] = halfToFloat(bits);
  }
}

}  // namespace

void toFloats(DType t, const uint8_t* src, int64_t count, float* out) {
  switch (t) {
    case DType::F32:
      if (count > 0) std::memcpy(out, src, static_cast<size_t>(count) * 4);
      return;
    case DType::F16: f16ToFloats(src, count, out); return;
    case DType::BF16: bf16ToFloats(src, count, out); return;
    case DType::I64: break;
    default: dequantize(t, src, count, out); return;
  }
  throw std::logic_error("toFloats: " + dtypeName(t) + " is not a float type");
}

void SafetensorsFile::floatsAt(const TensorEntry& t, int64_t first, int64_t count, float* out) const {
  if (t.dtype == DType::I64)
    throw InputError(what_ + ": tensor '" + t.name + "' is " + dtypeName(t.dtype) + ", not a float tensor");
  if (t.stored_rows.empty()) {
    toFloats(t.dtype, data(t) + storedBytes(t.dtype, static_cast<uint64_t>(first)), count, out);
  } else {
    // Row by row from where each is stored (a row is whole blocks).
    const int64_t cols = t.shape.size() > 1 ? t.shape.back() : 1;
    for (int64_t at = first; at < first + count;) {
      const int64_t r = at / cols, c = at % cols, n = std::min(cols - c, first + count - at);
      const int64_t stored = t.stored_rows[static_cast<size_t>(r)] * cols + c;
      toFloats(t.dtype, data(t) + storedBytes(t.dtype, static_cast<uint64_t>(stored)), n, out + (at - first));
      at += n;
    }
  }
  if (t.add != 0)
    for (int64_t i = 0; i < count; ++i) out[i] += t.add;
}

const float* SafetensorsFile::floats(const TensorEntry& t, std::vector<float>& storage) const {
  const uint8_t* src = data(t);
  if (t.dtype == DType::F32 && t.asStored() && reinterpret_cast<uintptr_t>(src) % alignof(float) == 0)
    return reinterpret_cast<const float*>(src);
  if (t.dtype == DType::I64)
    throw InputError(what_ + ": tensor '" + t.name + "' is " + dtypeName(t.dtype) + ", not a float tensor");
  storage.resize(static_cast<size_t>(t.elements()));
  floatsAt(t, 0, t.elements(), storage.data());
  return storage.data();
}

// [SECTION] Writing
TensorToWrite tensorFromValues(const std::string& name, DType dtype, std::vector<int64_t> shape,
                               std::vector<float> values) {
  auto held = std::make_shared<const std::vector<float>>(std::move(values));
  return {name, dtype, std::move(shape), [held](int64_t first, int64_t count, float* out) {
            std::copy_n(held->begin() + first, count, out);
          }};
}

void writeSafetensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  std::vector<int64_t> counts;
  for (const TensorToWrite& t : tensors) {
    if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16)
      throw InputError(path.string() + ": tensor '" + t.name + "': " + dtypeName(t.dtype) +
                       " is read, not written to safetensors");
    int64_t n = 1;
    for (const int64_t s : t.shape) n *= s;
    counts.push_back(n);
    const uint64_t bytes = storedBytes(t.dtype, static_cast<uint64_t>(n));
    header[t.name] = {{"dtype", dtypeName(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');  // data section 8-byte aligned
  TempFile tmp(path);
  {
    std::ofstream out(tmp.path(), std::ios::binary);
    const uint64_t n = text.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    constexpr int64_t kChunk = 1 << 20;  // floats per fill() call
    std::vector<float> chunk;
    std::vector<uint16_t> half;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const TensorToWrite& t = tensors[i];
      for (int64_t first = 0; first < counts[i]; first += kChunk) {
        const int64_t count = std::min(kChunk, counts[i] - first);
        chunk.resize(static_cast<size_t>(count));
        t.fill(first, count, chunk.data());
        if (t.dtype == DType::F32) {
          out.write(reinterpret_cast<const char*>(chunk.data()), count * 4);
          continue;
        }
        half.resize(static_cast<size_t>(count));
        for (int64_t e = 0; e < count; ++e)
          half[static_cast<size_t>(e)] =
              t.dtype == DType::F16 ? Eigen::numext::bit_cast<uint16_t>(Eigen::half(chunk[static_cast<size_t>(e)]))
                                    : Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(chunk[static_cast<size_t>(e)]));
        out.write(reinterpret_cast<const char*>(half.data()), count * 2);
      }
    }
    out.flush();
    if (!out) throw InputError(path.string() + ": could not write the file (disk full or folder not writable?)");
  }
  tmp.commit();
}

}  // namespace attn
