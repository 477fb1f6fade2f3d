// One worker thread for the GUI's compute jobs. A newer job supersedes an
// older one (its RunContext cancel flag is set, its result is dropped); the
// UI thread polls at frame start and swaps in the finished immutable output.
// Jobs get a MatPool in their RunContext: results made with shareResult give
// their large buffers back when the UI drops them, for the next job to reuse.
#pragma once

#include "engine/compare.h"
#include "engine/mat_pool.h"
#include "engine/registry.h"
#include "engine/result.h"
#include "engine/run_context.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace attn {

struct ModelOutput;  // app/model/model_scene.h

// What one GUI job produces: in the model workspace `model` (a loaded model's
// run, summaries, rollout and pattern); in the variant workspace the selected variant's result and, for the
// family view, every variant of its family on the same inputs; for the
// compare view, the result against full attention (engine/compare.h).
struct SceneOutput {
  std::shared_ptr<const Result> result;
  std::vector<FamilyMember> family;
  bool has_family = false;
  bool has_comparison = false;                  // asked for: `comparison` or `comparison_error` is set
  std::shared_ptr<const Comparison> comparison;
  std::string comparison_error;                 // why the result cannot be compared
  ValueStats full_stats, difference_stats;      // over the comparison's dense matrices, all heads
  std::shared_ptr<const ModelOutput> model;
};

struct JobOutcome {
  uint64_t id = 0;
  std::shared_ptr<const SceneOutput> output;  // null on error or cancel
  enum class Status { Done, InputError, InternalError, Cancelled } status = Status::Done;
  std::string error;
  double seconds = 0;  // wall time of the job
};

class JobRunner {
 public:
  using Work = std::function<SceneOutput(const RunContext&)>;

  JobRunner();
  ~JobRunner();  // cancels the running job and joins the worker
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // Queues `work`, superseding any queued or running job. Returns its id.
  uint64_t submit(Work work);
  // The user pressed Cancel: the running job ends with Status::Cancelled.
  void cancel();
  // The latest finished job not yet taken, if any (UI thread, frame start).
  std::optional<JobOutcome> poll();

  bool busy() const { return busy_.load(); }
  float progress() const { return progress_.load(); }
  double runningSeconds() const;  // of the current job; 0 when idle

 private:
  void loop();

  struct Pending {
    uint64_t id;
    Work work;
  };
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<Pending> pending_;
  std::optional<JobOutcome> finished_;
  std::shared_ptr<std::atomic<bool>> running_cancel_;
  bool user_cancelled_ = false;
  bool stop_ = false;
  uint64_t next_id_ = 1;
  std::atomic<bool> busy_{false};
  std::atomic<float> progress_{0.0f};
  std::chrono::steady_clock::time_point started_;
  // Buffers of results the UI has let go of, for the next job (engine/mat_pool.h).
  std::shared_ptr<MatPool> pool_;
  std::thread worker_;
};

}  // namespace attn
