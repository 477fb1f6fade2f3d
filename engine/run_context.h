// Progress and cancellation for one engine run. The GUI's job runner owns
// the flag; the CLI passes a context that never cancels.
#pragma once

#include "engine/error.h"

#include <atomic>
#include <functional>

namespace attn {

struct RunContext {
  const std::atomic<bool>* cancel = nullptr;        // set by a newer job or by the user
  std::function<void(float fraction)> on_progress;  // 0..1, called from the worker thread
  // Sparse variants also fill dense weights, scores and mask for the views
  // where those fit (engine/sparse.h denseViewsFit). Off for `compute
  // --no-weights` and the benchmarks, which only want the sparse compute.
  bool dense_views = true;

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
