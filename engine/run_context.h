// Progress and cancellation for one engine run. The GUI's job runner owns
// the flag; the CLI passes a context that never cancels.
#pragma once

#include "engine/error.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace attn {

class MatPool;      // engine/mat_pool.h
class PassThreads;  // engine/parallel.h

// Wall seconds since t0.
inline double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct RunContext {
  const std::atomic<bool>* cancel = nullptr;        // set by a newer job or by the user
  std::function<void(float fraction)> on_progress;  // 0..1, called from the worker thread
  // Whether the caller wants the [H, Lq, Lk] weights, scores and mask, or
  // only the output. Off for `compute --no-weights` and the benchmarks: dense
  // variants that can then run streaming (multi-head, cross-attention,
  // scaled-dot-product without a mask file) never form an L×L matrix, and
  // sparse variants skip their dense copies for the views (engine/sparse.h
  // denseViewsFit).
  bool keep_weights = true;
  // Where large buffers (the [Lq, Lk] weights and scores) come from and,
  // through shareResult, go back to: the GUI keeps one across its jobs. Null: fresh memory.
  std::shared_ptr<MatPool> pool;
  // runVariant runs on the cores free now (threadsAvailable: a variant's
  // small OpenMP loops on a core another process holds wait for it, and on a
  // busy 2-core machine snail took 375 ms on 2 threads against 14 ms on 1).
  // A model's pass likewise (passThreads: one thread for a tiny model, else the
  // cores free, looked at again between layers). Off: on exactly OpenMP's
  // count (the tests that vary it).
  bool adapt_threads = true;
  // Set by the engine while a model's passes run (runModelIds, generate): it
  // re-decides their threads between layers (enterLayer). Null: as set.
  PassThreads* pass_threads = nullptr;
  // The most work a run may ask for, for the variants that count theirs
  // before starting (reversible: hash entries of LSH work per pass); above
  // it they refuse with InputError naming the product. The default keeps a
  // Release run under ~10 s; the engine fuzz target, ~25x slower under the
  // sanitizers, sets 2^23.
  double work_limit = double(int64_t{1} << 31);

  // Call between units of work (a head, a block of rows).
  void check() const {
    if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled();
  }
  void progress(float fraction) const {
    check();
    if (on_progress) on_progress(fraction);
  }
};

}  // namespace attn
