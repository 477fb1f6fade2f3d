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
// which follows omp_get_max_threads) use `threads` threads; the count before
// is restored at the end.
class ThreadScope {
 public:
  explicit ThreadScope(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ThreadScope() { omp_set_num_threads(saved_); }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_;
};

// The threads worth starting now: OpenMP's count, less the cores other
// processes keep busy (the kernel's count of runnable threads in
// /proc/loadavg, less this process's own, the fewest of a few samples over
// ~1 ms), and at least 1. Threads that wait for each other (OpenMP barriers,
// OpenBLAS's GEMM) on cores another process holds spend their time waiting:
// on a busy 2-core machine a pass on 2 threads took 3-13x as long as on 1.
int threadsAvailable();

}  // namespace attn
