#include "engine/mat_pool.h"

namespace attn {

namespace {
constexpr int64_t kMinKeptBytes = int64_t{1} << 20;
int64_t bytesOf(const Mat& m) { return static_cast<int64_t>(m.size()) * static_cast<int64_t>(sizeof(float)); }
}  // namespace

Mat MatPool::take(int64_t rows, int64_t cols) {
  {
    const std::lock_guard lock(mutex_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->rows() != rows || it->cols() != cols) continue;
      Mat m = std::move(*it);
      kept_.erase(it);
      bytes_ -= bytesOf(m);
      return m;
    }
  }
  Mat m(rows, cols);
  preferHugePages(m);
  return m;
}

void MatPool::give(Mat m) {
  if (bytesOf(m) < kMinKeptBytes || bytesOf(m) > capacity_) return;
  const std::lock_guard lock(mutex_);
  bytes_ += bytesOf(m);
  kept_.push_back(std::move(m));
  while (bytes_ > capacity_) {
    bytes_ -= bytesOf(kept_.front());
    kept_.pop_front();
  }
}

int64_t MatPool::keptBytes() const {
  const std::lock_guard lock(mutex_);
  return bytes_;
}

void ensureShape(Mat& m, int64_t rows, int64_t cols, MatPool* pool) {
  if (m.rows() == rows && m.cols() == cols) return;
  if (pool) {
    m = pool->take(rows, cols);
    return;
  }
  m.resize(rows, cols);
  preferHugePages(m);
}

}  // namespace attn
