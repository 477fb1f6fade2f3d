// One OpenMP loop for the engine's parallel work: cancellable, and safe for
// exceptions (one must never leave an OpenMP region: it would terminate).
#pragma once

#include "engine/run_context.h"

#include <omp.h>

#include <atomic>
#include <cstdint>
#include <exception>

namespace attn {

// Runs body(t) for t in [0, n) on the OpenMP threads, dynamically scheduled
// (tasks may differ in cost: causal rows, heads). Stops starting tasks once
// the run is cancelled or a task throws; the first exception is rethrown
// here, and ctx.check() throws Cancelled after a cancel.
template <class F>
void parallelFor(int64_t n, const RunContext& ctx, F&& body) {
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t t = 0; t < n; ++t) {
    if (stop.load(std::memory_order_relaxed) || (ctx.cancel && ctx.cancel->load(std::memory_order_relaxed))) {
      stop = true;
      continue;
    }
    try {
      body(t);
    } catch (...) {
#pragma omp critical(attn_parallel_failure)
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  }
  if (failure) std::rethrow_exception(failure);
  ctx.check();
}

// While alive, the calling thread's OpenMP regions (parallelFor, and OpenBLAS,
// which follows omp_get_max_threads) run on that thread alone; `active` false
// changes nothing. For work of a few milliseconds: waking a second thread
// costs more than it saves, and on a busy machine the wait for it to be
// scheduled turned a 3 ms forward pass into 100-230 ms.
class SerialScope {
 public:
  explicit SerialScope(bool active) : saved_(active ? omp_get_max_threads() : 0) {
    if (active) omp_set_num_threads(1);
  }
  ~SerialScope() {
    if (saved_ > 0) omp_set_num_threads(saved_);
  }
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int saved_;
};

}  // namespace attn
