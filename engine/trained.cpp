#include "engine/trained.h"

#include "engine/embedded_files.h"
#include "engine/error.h"
#include "engine/inputs.h"

#include <charconv>

// Laid out by scripts/cmake/embed_binary.cmake from assets/trained/*.safetensors.
extern "C" const attn::EmbeddedFile attn_trained_files[];
extern "C" const uint64_t attn_trained_file_count;

namespace attn {

std::shared_ptr<const SafetensorsFile> openTrainedModel(const std::string& embedded_name, const std::string& path) {
  if (!path.empty()) return SafetensorsFile::open(path);
  const EmbeddedFile* f = findEmbeddedFile(attn_trained_files, attn_trained_file_count, embedded_name);
  if (!f) throw InputError("assets/trained/" + embedded_name + ": this build embeds no such model");
  return SafetensorsFile::fromMemory(f->begin, static_cast<uint64_t>(f->end - f->begin),
                                     "embedded assets/trained/" + embedded_name);
}

int64_t trainedConfigInt(const SafetensorsFile& f, const std::string& key, int64_t min, int64_t max) {
  const auto& meta = f.header().metadata;
  const auto it = meta.find(key);
  const std::string where = f.what() + ": __metadata__ '" + key + "'";
  if (it == meta.end())
    throw InputError(where + " is missing (expected a whole number in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "])");
  int64_t v = 0;
  const std::string& s = it->second;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max)
    throw InputError(where + ": expected a whole number in [" + std::to_string(min) + ", " + std::to_string(max) +
                     "], got '" + s + "'");
  return v;
}

namespace {

// The tensor's floats, checked to have exactly `shape` and finite values.
std::vector<float> tensorValues(const SafetensorsFile& f, const std::string& name, const std::vector<int64_t>& shape) {
  const TensorEntry* t = f.find(name);
  const std::string expected = Array{shape, {}}.shapeString();
  if (!t) throw InputError(f.what() + ": tensor '" + name + "' is missing (expected F32 " + expected + ")");
  if (t->shape != shape)
    throw InputError(f.what() + ": tensor '" + name + "': expected shape " + expected + ", got " +
                     Array{t->shape, {}}.shapeString());
  std::vector<float> storage;
  const float* p = f.floats(*t, storage);
  std::vector<float> v(p, p + t->elements());
  checkInputMagnitude(v, f.what() + " (tensor '" + name + "')");
  return v;
}

}  // namespace

Mat trainedMatrix(const SafetensorsFile& f, const std::string& name, int64_t rows, int64_t cols) {
  const std::vector<float> v = tensorValues(f, name, {rows, cols});
  return Eigen::Map<const Mat>(v.data(), rows, cols);
}

Vec trainedVector(const SafetensorsFile& f, const std::string& name, int64_t n) {
  const std::vector<float> v = tensorValues(f, name, {n});
  return Eigen::Map<const Vec>(v.data(), n);
}

}  // namespace attn
