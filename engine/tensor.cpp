#include "engine/tensor.h"

#include "engine/error.h"

#include <numeric>

#include <sys/mman.h>

namespace attn {

int64_t Array::size() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

std::string Array::shapeString() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Array Array::fromMat(const Mat& m) {
  Array a;
  a.shape = {m.rows(), m.cols()};
  a.data.assign(m.data(), m.data() + m.size());
  return a;
}

Array Array::fromMats(const std::vector<Mat>& ms) {
  Array a;
  const int64_t r = ms.empty() ? 0 : ms[0].rows(), c = ms.empty() ? 0 : ms[0].cols();
  a.shape = {static_cast<int64_t>(ms.size()), r, c};
  a.data.reserve(static_cast<size_t>(a.size()));
  for (const Mat& m : ms) {
    if (m.rows() != r || m.cols() != c) throw std::logic_error("Array::fromMats: ragged stack");
    a.data.insert(a.data.end(), m.data(), m.data() + m.size());
  }
  return a;
}

void preferHugePages(Mat& m) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t first = reinterpret_cast<uintptr_t>(m.data());
  const uintptr_t last = first + static_cast<uintptr_t>(m.size()) * sizeof(float);
  if (last - first < 4 * kHuge) return;
  // Only whole huge pages inside the buffer: the advice must not reach a neighbour's memory.
  const uintptr_t begin = (first + kHuge - 1) & ~(kHuge - 1), end = last & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice: failure is harmless
}

std::vector<std::span<const float>> values(const std::vector<Mat>& ms) {
  std::vector<std::span<const float>> parts;
  for (const Mat& m : ms) {
    if (m.rows() != ms[0].rows() || m.cols() != ms[0].cols()) throw std::logic_error("values: ragged stack");
    parts.push_back(values(m));
  }
  return parts;
}

Array Array::fromVector(const std::vector<float>& v) {
  Array a;
  a.shape = {static_cast<int64_t>(v.size())};
  a.data = v;
  return a;
}

Array Array::fromVec(const Vec& v) {
  return fromVector(std::vector<float>(v.data(), v.data() + v.size()));
}

Mat Array::toMat(const std::string& what) const {
  if (rank() != 2)
    throw InputError(what + ": expected a 2-D array, got shape " + shapeString());
  return Eigen::Map<const Mat>(data.data(), shape[0], shape[1]);
}

}  // namespace attn
