// One OpenMP loop for the engine's parallel work: cancellable, and safe for
// exceptions (one must never leave an OpenMP region: it would terminate).
#pragma once

#include "engine/run_context.h"

#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>

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

// Cores other processes keep busy now, from one look at the kernel's counts:
// the machine's runnable threads (/proc/loadavg's fourth field) less this
// process's own (the caller, and OpenMP or OpenBLAS workers still spinning
// after the last parallel region). Nullopt where that says nothing about our
// cores (taskset, a cpuset: /proc/loadavg counts the whole machine).
std::optional<int> busyCoresNow();
// Where threadsFree looks (busyCoresNow; the tests give a fake one).
using BusyCores = std::function<std::optional<int>()>;

// The threads worth starting now, at most `ceiling`: the cores less those
// other processes keep busy, and at least 1. A process that holds a core is
// runnable in every look; kernel threads and short-lived commands come and
// go, so the fewest of up to 5 looks ~200 µs apart counts (one look when it
// finds every core free; five, 1.3-2.6 ms in all, on a 2-core machine busy
// with builds). Threads that wait for each other
// (OpenMP barriers, OpenBLAS's GEMM) on cores another process holds spend
// their time waiting: on a busy 2-core machine a pass on 2 threads took
// 3-13x as long as on 1.
int threadsFree(int ceiling, const BusyCores& busy = busyCoresNow);
// threadsFree(OpenMP's count).
int threadsAvailable();

// The threads of a model's pass, re-decided between its layers. It starts on
// `threads`; with `adapt`, between() looks again (threadsFree, up to
// OpenMP's count when it was made) once `interval` has passed since the last
// look, and sets OpenMP's count for what follows: the cores another process
// takes are given up, those that free up are used. The interval keeps the
// looks' cost (up to 2.6 ms each) near 1 % of the work between them, where a
// small model's layer takes microseconds. OpenMP's count before is
// restored at the end. Without `adapt`, `threads` throughout.
class PassThreads {
 public:
  static constexpr std::chrono::milliseconds kInterval{250};
  PassThreads(int threads, bool adapt, BusyCores busy = busyCoresNow, std::chrono::milliseconds interval = kInterval);
  PassThreads(const PassThreads&) = delete;
  PassThreads& operator=(const PassThreads&) = delete;
  // Between two layers (or before the LM head): the threads the next one runs on.
  int between();

 private:
  int ceiling_;  // OpenMP's count when the pass started
  ThreadScope scope_;
  bool adapt_;
  BusyCores busy_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_look_;
  int threads_;
};

}  // namespace attn
