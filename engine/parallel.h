// One OpenMP loop for the engine's parallel work: cancellable, and safe for
// exceptions (one must never leave an OpenMP region: it would terminate).
#pragma once

#include "engine/run_context.h"

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

}  // namespace attn
