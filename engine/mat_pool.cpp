#include "engine/mat_pool.h"

#include "engine/result.h"

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

void MatPool::reclaim(Result& r) {
  for (std::vector<Mat>* list : {&r.weights, &r.scores})
    for (Mat& m : *list) give(std::move(m));
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

std::shared_ptr<const Result> shareResult(Result r, const std::shared_ptr<MatPool>& pool) {
  if (!pool) return std::make_shared<const Result>(std::move(r));
  // The deleter holds the pool, so it outlives every result that returns to it.
  return std::shared_ptr<const Result>(new Result(std::move(r)), [pool](Result* p) {
    pool->reclaim(*p);
    delete p;
  });
}

}  // namespace attn
