#include "engine/tensor.h"

#include "engine/error.h"

#include <numeric>

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
