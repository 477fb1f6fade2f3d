#include "engine/model/checkpoint/gguf.h"

#include "engine/error.h"
#include "engine/files.h"
#include "engine/model/checkpoint/quants.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <limits>

namespace attn {

static_assert(std::endian::native == std::endian::little, "GGUF data is little-endian; so must the host be");

std::string ggufTypeName(GgufType t) {
  switch (t) {
    case GgufType::UInt8: return "uint8";
    case GgufType::Int8: return "int8";
    case GgufType::UInt16: return "uint16";
    case GgufType::Int16: return "int16";
    case GgufType::UInt32: return "uint32";
    case GgufType::Int32: return "int32";
    case GgufType::Float32: return "float32";
    case GgufType::Bool: return "bool";
    case GgufType::String: return "string";
    case GgufType::Array: return "array";
    case GgufType::UInt64: return "uint64";
    case GgufType::Int64: return "int64";
    case GgufType::Float64: return "float64";
  }
  return "?";
}

bool GgufValue::isInteger() const {
  return type != GgufType::Float32 && type != GgufType::Float64 && type != GgufType::String && type != GgufType::Array;
}

bool GgufValue::isFloat() const { return type == GgufType::Float32 || type == GgufType::Float64; }

int64_t GgufTensor::elements() const {
  int64_t n = 1;
  for (const int64_t d : dims) n *= d;
  return n;
}

const GgufValue* GgufHeader::find(const std::string& key) const {
  const auto it = metadata.find(key);
  return it == metadata.end() ? nullptr : &it->second;
}

namespace {

// ggml's type ids (ggml.h's ggml_type) and names, the ones read and the ones refused.
struct GgmlType {
  uint32_t id;
  const char* name;
  bool read;
  DType dtype;
};
constexpr GgmlType kGgmlTypes[] = {
    {0, "F32", true, DType::F32},       {1, "F16", true, DType::F16},       {2, "Q4_0", true, DType::Q4_0},
    {3, "Q4_1", true, DType::Q4_1},     {6, "Q5_0", true, DType::Q5_0},     {7, "Q5_1", true, DType::Q5_1},
    {8, "Q8_0", true, DType::Q8_0},     {9, "Q8_1", false, DType::F32},     {10, "Q2_K", true, DType::Q2_K},
    {11, "Q3_K", true, DType::Q3_K},    {12, "Q4_K", true, DType::Q4_K},    {13, "Q5_K", true, DType::Q5_K},
    {14, "Q6_K", true, DType::Q6_K},    {15, "Q8_K", false, DType::F32},    {16, "IQ2_XXS", false, DType::F32},
    {17, "IQ2_XS", false, DType::F32},  {18, "IQ3_XXS", false, DType::F32}, {19, "IQ1_S", false, DType::F32},
    {20, "IQ4_NL", true, DType::IQ4_NL}, {21, "IQ3_S", false, DType::F32},  {22, "IQ2_S", false, DType::F32},
    {23, "IQ4_XS", true, DType::IQ4_XS}, {24, "I8", false, DType::F32},     {25, "I16", false, DType::F32},
    {26, "I32", false, DType::F32},     {27, "I64", false, DType::F32},     {28, "F64", false, DType::F32},
    {29, "IQ1_M", false, DType::F32},   {30, "BF16", true, DType::BF16},    {34, "TQ1_0", false, DType::F32},
    {35, "TQ2_0", false, DType::F32},   {39, "MXFP4", false, DType::F32},
};

std::string readTypesText() {
  std::string s;
  for (const GgmlType& t : kGgmlTypes)
    if (t.read) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

// A cursor over the header's bytes: every read checks what is left.
class Reader {
 public:
  Reader(const uint8_t* bytes, uint64_t size, const std::string& what) : b_(bytes), size_(size), what_(what) {}
  uint64_t at() const { return at_; }
  uint64_t left() const { return size_ - at_; }

  template <class T>
  T scalar(const std::string& field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, b_ + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string string(const std::string& field) {
    const uint64_t n = scalar<uint64_t>(field + "'s length");
    if (n > kMaxGgufString)
      fail(field + ": a string of " + std::to_string(n) + " bytes, over the limit of " + std::to_string(kMaxGgufString) +
           " (corrupt file?)");
    need(n, field);
    std::string s(reinterpret_cast<const char*>(b_ + at_), n);
    at_ += n;
    return s;
  }
  [[noreturn]] void fail(const std::string& message) const { throw InputError(what_ + ": " + message); }

 private:
  void need(uint64_t n, const std::string& field) const {
    if (n > left())
      fail(field + " runs past the end of the file (" + std::to_string(size_) + " bytes; truncated?)");
  }
  const uint8_t* b_;
  uint64_t size_, at_ = 0;
  const std::string& what_;
};

bool knownValueType(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::Float64); }

// One scalar of type t into v (integer, number or text).
void readScalar(Reader& r, GgufType t, const std::string& field, int64_t& integer, double& number, std::string& text) {
  switch (t) {
    case GgufType::UInt8: integer = r.scalar<uint8_t>(field); return;
    case GgufType::Int8: integer = r.scalar<int8_t>(field); return;
    case GgufType::UInt16: integer = r.scalar<uint16_t>(field); return;
    case GgufType::Int16: integer = r.scalar<int16_t>(field); return;
    case GgufType::UInt32: integer = r.scalar<uint32_t>(field); return;
    case GgufType::Int32: integer = r.scalar<int32_t>(field); return;
    case GgufType::Int64: integer = r.scalar<int64_t>(field); return;
    case GgufType::UInt64: {
      const uint64_t u = r.scalar<uint64_t>(field);
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        r.fail(field + ": uint64 " + std::to_string(u) + " is too large");
      integer = static_cast<int64_t>(u);
      return;
    }
    case GgufType::Bool: {
      const uint8_t b = r.scalar<uint8_t>(field);
      if (b > 1) r.fail(field + ": a bool must be 0 or 1, got " + std::to_string(b));
      integer = b;
      return;
    }
    case GgufType::Float32: number = r.scalar<float>(field); return;
    case GgufType::Float64: number = r.scalar<double>(field); return;
    case GgufType::String: text = r.string(field); return;
    case GgufType::Array: break;
  }
  r.fail(field + ": an array where a scalar was expected");
}

GgufType valueType(Reader& r, const std::string& field) {
  const uint32_t t = r.scalar<uint32_t>(field + "'s type");
  if (!knownValueType(t))
    r.fail(field + ": value type " + std::to_string(t) + " is not a GGUF type (expected 0 to 12)");
  return static_cast<GgufType>(t);
}

// An array's elements after its type: kept by kind, or (nested arrays) only
// walked. `depth` bounds the nesting.
void readArray(Reader& r, GgufValue& v, const std::string& field, int depth) {
  v.element = valueType(r, field + "'s elements");
  v.count = r.scalar<uint64_t>(field + "'s count");
  if (v.count > kMaxGgufArray)
    r.fail(field + ": an array of " + std::to_string(v.count) + " elements, over the limit of " +
           std::to_string(kMaxGgufArray) + " (corrupt file?)");
  // Every element takes at least one byte: a count past the bytes left is refused before anything is reserved.
  if (v.count > r.left()) r.fail(field + ": an array of " + std::to_string(v.count) + " elements runs past the end of the file (truncated?)");
  if (v.element == GgufType::Array) {
    if (depth >= 2) r.fail(field + ": arrays nested deeper than two levels");
    for (uint64_t i = 0; i < v.count; ++i) {
      GgufValue inner;
      readArray(r, inner, field + "[" + std::to_string(i) + "]", depth + 1);
    }
    return;
  }
  GgufValue one;
  one.type = v.element;
  const bool is_text = v.element == GgufType::String, is_float = one.isFloat();
  for (uint64_t i = 0; i < v.count; ++i) {
    readScalar(r, v.element, field, one.integer, one.number, one.text);
    if (is_text) v.texts.push_back(std::move(one.text));
    else if (is_float) v.numbers.push_back(one.number);
    else v.integers.push_back(one.integer);
  }
}

}  // namespace

GgufHeader parseGgufHeader(const uint8_t* bytes, uint64_t size, const std::string& what) {
  Reader r(bytes, size, what);
  if (size < 4 || std::memcmp(bytes, "GGUF", 4) != 0)
    r.fail("not a GGUF file (its first four bytes are not 'GGUF')");
  r.scalar<uint32_t>("magic");
  GgufHeader h;
  h.version = r.scalar<uint32_t>("version");
  if (h.version == 1 || h.version == 2)
    r.fail("GGUF version " + std::to_string(h.version) +
           " is not supported (expected version 3; convert it again with a current llama.cpp)");
  if (h.version != 3) r.fail("GGUF version " + std::to_string(h.version) + " is not supported (expected 3)");
  const uint64_t tensors = r.scalar<uint64_t>("tensor_count"), keys = r.scalar<uint64_t>("metadata_kv_count");
  if (tensors > kMaxGgufTensors)
    r.fail("tensor_count " + std::to_string(tensors) + " is over the limit of " + std::to_string(kMaxGgufTensors) +
           " (corrupt file?)");
  if (keys > kMaxGgufKeys)
    r.fail("metadata_kv_count " + std::to_string(keys) + " is over the limit of " + std::to_string(kMaxGgufKeys) +
           " (corrupt file?)");

  for (uint64_t i = 0; i < keys; ++i) {
    const std::string key = r.string("metadata key " + std::to_string(i));
    if (key.empty()) r.fail("metadata key " + std::to_string(i) + " is empty");
    if (h.metadata.count(key)) r.fail("metadata key '" + key + "' appears twice");
    const std::string field = "metadata '" + key + "'";
    GgufValue v;
    v.type = valueType(r, field);
    if (v.type == GgufType::Array) readArray(r, v, field, 0);
    else readScalar(r, v.type, field, v.integer, v.number, v.text);
    h.metadata.emplace(key, std::move(v));
  }
  if (const GgufValue* a = h.find("general.alignment")) {
    // ggml: a power of two (gguf.cpp checks it is one, and it must hold a float).
    if (a->type != GgufType::UInt32 || a->integer <= 0 || (a->integer & (a->integer - 1)) != 0 || a->integer % 4 != 0)
      r.fail("metadata 'general.alignment' must be a uint32 power of two, a multiple of 4, got " +
             (a->isInteger() ? std::to_string(a->integer) : ggufTypeName(a->type)));
    h.alignment = static_cast<uint64_t>(a->integer);
  }

  h.tensors.reserve(std::min<uint64_t>(tensors, r.left() / 24 + 1));
  for (uint64_t i = 0; i < tensors; ++i) {
    GgufTensor t;
    t.name = r.string("tensor " + std::to_string(i) + "'s name");
    if (t.name.empty()) r.fail("tensor " + std::to_string(i) + " has an empty name");
    const std::string field = "tensor '" + t.name + "'";
    const uint32_t n_dims = r.scalar<uint32_t>(field + "'s n_dims");
    if (n_dims < 1 || n_dims > 4) r.fail(field + ": n_dims " + std::to_string(n_dims) + " (expected 1 to 4)");
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t ne = r.scalar<uint64_t>(field + "'s ne");
      // Each dimension is bounded by the bytes that could hold it, so the product cannot overflow.
      if (ne > (uint64_t{1} << 40) || (ne != 0 && elements > (uint64_t{1} << 40) / ne))
        r.fail(field + ": dimensions too large (ne[" + std::to_string(d) + "] = " + std::to_string(ne) + ")");
      elements *= ne;
      t.dims.push_back(static_cast<int64_t>(ne));
    }
    const uint32_t type = r.scalar<uint32_t>(field + "'s type");
    const GgmlType* g = std::find_if(std::begin(kGgmlTypes), std::end(kGgmlTypes),
                                     [&](const GgmlType& k) { return k.id == type; });
    if (g == std::end(kGgmlTypes))
      r.fail(field + ": type " + std::to_string(type) + " is not a ggml type this reader knows (expected one of " +
             readTypesText() + ")");
    if (!g->read)
      r.fail(field + ": type " + std::string(g->name) + " is not supported (expected one of " + readTypesText() + ")");
    t.type = g->dtype;
    const BlockLayout block = blockLayout(t.type);
    if (t.dims[0] % block.values != 0)
      r.fail(field + ": ne[0] = " + std::to_string(t.dims[0]) + " is not a whole number of " + g->name +
             " blocks of " + std::to_string(block.values));
    t.bytes = storedBytes(t.type, elements);
    t.offset = r.scalar<uint64_t>(field + "'s offset");
    if (t.offset % h.alignment != 0)
      r.fail(field + ": offset " + std::to_string(t.offset) + " is not a multiple of general.alignment " +
             std::to_string(h.alignment));
    h.tensors.push_back(std::move(t));
  }
  // The data section starts at the next multiple of the alignment.
  const uint64_t end_of_header = r.at();
  h.data_start = (end_of_header + h.alignment - 1) / h.alignment * h.alignment;
  if (h.data_start > size && !h.tensors.empty())
    r.fail("the data section would start at byte " + std::to_string(h.data_start) + ", past the end of the file (" +
           std::to_string(size) + " bytes; truncated?)");
  const uint64_t data_size = size > h.data_start ? size - h.data_start : 0;
  std::vector<const GgufTensor*> by_offset;
  for (const GgufTensor& t : h.tensors) {
    if (t.offset > data_size || t.bytes > data_size - t.offset)
      r.fail("tensor '" + t.name + "': bytes [" + std::to_string(t.offset) + ", " + std::to_string(t.offset + t.bytes) +
             ") run past the end of the data section (" + std::to_string(data_size) + " bytes; truncated?)");
    by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(), [](const GgufTensor* a, const GgufTensor* b) {
    return a->offset != b->offset ? a->offset < b->offset : a->bytes < b->bytes;
  });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const GgufTensor &a = *by_offset[i - 1], &b = *by_offset[i];
    if (b.offset < a.offset + a.bytes && b.bytes > 0 && a.bytes > 0)
      r.fail("tensors '" + a.name + "' and '" + b.name + "' overlap (bytes from " + std::to_string(a.offset) + " and " +
             std::to_string(b.offset) + ")");
  }
  std::vector<std::string> names;
  for (const GgufTensor& t : h.tensors) names.push_back(t.name);
  std::sort(names.begin(), names.end());
  if (const auto dup = std::adjacent_find(names.begin(), names.end()); dup != names.end())
    r.fail("tensor '" + *dup + "' appears twice");
  return h;
}

// [SECTION] Writing
GgufValue ggufInt(GgufType type, int64_t v) {
  GgufValue g;
  g.type = type;
  g.integer = v;
  return g;
}

GgufValue ggufFloat(double v) {
  GgufValue g;
  g.type = GgufType::Float32;
  g.number = v;
  return g;
}

GgufValue ggufString(const std::string& v) {
  GgufValue g;
  g.type = GgufType::String;
  g.text = v;
  return g;
}

GgufValue ggufStrings(const std::vector<std::string>& v) {
  GgufValue g;
  g.type = GgufType::Array;
  g.element = GgufType::String;
  g.count = v.size();
  g.texts = v;
  return g;
}

GgufValue ggufFloats(const std::vector<float>& v) {
  GgufValue g;
  g.type = GgufType::Array;
  g.element = GgufType::Float32;
  g.count = v.size();
  g.numbers.assign(v.begin(), v.end());
  return g;
}

GgufValue ggufInts(GgufType element, const std::vector<int64_t>& v) {
  GgufValue g;
  g.type = GgufType::Array;
  g.element = element;
  g.count = v.size();
  g.integers = v;
  return g;
}

namespace {

template <class T>
void put(std::ostream& out, T v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof(T));
}

void putString(std::ostream& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}

void putScalar(std::ostream& out, GgufType type, int64_t integer, double number, const std::string& text) {
  switch (type) {
    case GgufType::UInt8: put<uint8_t>(out, static_cast<uint8_t>(integer)); return;
    case GgufType::Int8: put<int8_t>(out, static_cast<int8_t>(integer)); return;
    case GgufType::UInt16: put<uint16_t>(out, static_cast<uint16_t>(integer)); return;
    case GgufType::Int16: put<int16_t>(out, static_cast<int16_t>(integer)); return;
    case GgufType::UInt32: put<uint32_t>(out, static_cast<uint32_t>(integer)); return;
    case GgufType::Int32: put<int32_t>(out, static_cast<int32_t>(integer)); return;
    case GgufType::UInt64: put<uint64_t>(out, static_cast<uint64_t>(integer)); return;
    case GgufType::Int64: put<int64_t>(out, integer); return;
    case GgufType::Bool: put<uint8_t>(out, integer ? 1 : 0); return;
    case GgufType::Float32: put<float>(out, static_cast<float>(number)); return;
    case GgufType::Float64: put<double>(out, number); return;
    case GgufType::String: putString(out, text); return;
    case GgufType::Array: break;
  }
  throw std::logic_error("writeGguf: an array inside an array");
}

uint32_t ggmlId(DType t) {
  for (const GgmlType& g : kGgmlTypes)
    if (g.read && g.dtype == t) return g.id;
  throw std::logic_error("writeGguf: " + dtypeName(t) + " is not a GGUF type");
}

void pad(std::ostream& out, uint64_t at, uint64_t alignment) {
  for (uint64_t i = at % alignment ? alignment - at % alignment : 0; i > 0; --i) out.put('\0');
}

}  // namespace

DType ggufStoredType(const std::string& name, size_t n_dims, DType type) {
  const bool kept = n_dims <= 1 || !name.ends_with(".weight") || name.ends_with("_norm.weight") ||
                    name == "position_embd.weight" || name == "token_types.weight";
  return kept ? DType::F32 : type;
}

DType ggufQ4KMType(const std::string& name, size_t n_dims, int64_t layers, bool has_output) {
  const DType stored = ggufStoredType(name, n_dims, DType::Q4_K);
  if (stored != DType::Q4_K) return stored;
  if (name == (has_output ? "output.weight" : "token_embd.weight")) return DType::Q6_K;
  if (name.rfind("blk.", 0) != 0 || !(name.ends_with(".attn_v.weight") || name.ends_with(".ffn_down.weight")))
    return DType::Q4_K;
  const int64_t i = std::stoll(name.substr(4)), n = layers;
  const bool use_more_bits = i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
  return use_more_bits ? DType::Q6_K : DType::Q4_K;
}

void writeGguf(const std::filesystem::path& path, const std::vector<GgufKeyToWrite>& keys,
               const std::vector<GgufTensorToWrite>& tensors, uint32_t version, uint64_t alignment) {
  TempFile tmp(path);
  {
    std::ofstream out(tmp.path(), std::ios::binary);
    out.write("GGUF", 4);
    put<uint32_t>(out, version);
    put<uint64_t>(out, tensors.size());
    put<uint64_t>(out, keys.size());
    for (const GgufKeyToWrite& k : keys) {
      putString(out, k.key);
      const GgufValue& v = k.value;
      put<uint32_t>(out, static_cast<uint32_t>(v.type));
      if (v.type != GgufType::Array) {
        putScalar(out, v.type, v.integer, v.number, v.text);
        continue;
      }
      put<uint32_t>(out, static_cast<uint32_t>(v.element));
      put<uint64_t>(out, v.count);
      for (uint64_t i = 0; i < v.count; ++i)
        putScalar(out, v.element, i < v.integers.size() ? v.integers[i] : 0, i < v.numbers.size() ? v.numbers[i] : 0,
                  i < v.texts.size() ? v.texts[i] : std::string());
    }
    std::vector<int64_t> counts;
    uint64_t offset = 0;
    for (const GgufTensorToWrite& t : tensors) {
      int64_t n = 1;
      for (const int64_t d : t.dims) n *= d;
      counts.push_back(n);
      putString(out, t.name);
      put<uint32_t>(out, static_cast<uint32_t>(t.dims.size()));
      for (const int64_t d : t.dims) put<uint64_t>(out, static_cast<uint64_t>(d));
      put<uint32_t>(out, ggmlId(t.type));
      put<uint64_t>(out, offset);
      const uint64_t bytes = storedBytes(t.type, static_cast<uint64_t>(n));
      offset += (bytes + alignment - 1) / alignment * alignment;
    }
    pad(out, static_cast<uint64_t>(out.tellp()), alignment);
    std::vector<float> chunk;
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const GgufTensorToWrite& t = tensors[i];
      // Whole rows, about a million values at a time.
      const int64_t row = t.dims.empty() ? 1 : std::max<int64_t>(t.dims[0], 1);
      const int64_t step = std::max<int64_t>(1, (int64_t{1} << 20) / row) * row;
      for (int64_t first = 0; first < counts[i]; first += step) {
        const int64_t n = std::min(step, counts[i] - first);
        if (t.stored) {
          bytes.resize(storedBytes(t.type, static_cast<uint64_t>(n)));
          t.stored(first, n, bytes.data());
        } else {
          chunk.resize(static_cast<size_t>(n));
          t.fill(first, n, chunk.data());
          bytes = quantize(t.type, chunk.data(), n);
        }
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      }
      pad(out, storedBytes(t.type, static_cast<uint64_t>(counts[i])), alignment);
    }
    out.flush();
    if (!out) throw InputError(path.string() + ": could not write the file (disk full or folder not writable?)");
  }
  tmp.commit();
}

}  // namespace attn
