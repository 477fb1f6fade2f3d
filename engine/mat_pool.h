// Large matrices kept between runs, so a run at the same size as the last
// one writes into memory already faulted in instead of fresh pages: the
// GUI recomputes on every parameter change, and at L = 4096 the weights and
// scores of 8 heads are 1 GiB, ~260,000 page faults when fresh.
#pragma once

#include "engine/tensor.h"

#include <cstdint>
#include <deque>
#include <mutex>

namespace attn {

class MatPool {
 public:
  explicit MatPool(int64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // A [rows, cols] matrix: a kept one of that shape when there is one (its
  // old values remain: callers overwrite every entry), else a fresh one
  // advised for huge pages.
  Mat take(int64_t rows, int64_t cols);
  // Keeps `m` for a later take(); matrices under 1 MiB are freed (not worth
  // keeping), and the oldest kept go once the capacity is exceeded.
  void give(Mat m);
  int64_t keptBytes() const;

 private:
  mutable std::mutex mutex_;  // take() runs on the GUI's worker, give() where the last user lets go
  std::deque<Mat> kept_;      // oldest first
  int64_t capacity_, bytes_ = 0;
};

// Makes `m` [rows, cols]: unchanged when it already is (a reused buffer),
// else from `pool` when given, else freshly allocated with preferHugePages.
void ensureShape(Mat& m, int64_t rows, int64_t cols, MatPool* pool = nullptr);

}  // namespace attn
