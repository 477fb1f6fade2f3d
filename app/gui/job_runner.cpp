#include "app/gui/job_runner.h"

#include <algorithm>
#include <sys/resource.h>
#include <unistd.h>

#include "engine/attention_math.h"
#include "engine/error.h"

namespace attn {

// A quarter of the memory free at start, at most 2 GiB: enough for the
// weights and scores of one result at L = 4096 and 8 heads.
JobRunner::JobRunner()
    : pool_(std::make_shared<MatPool>(std::min<int64_t>(availableMemoryBytes() / 4, int64_t{2} << 30))),
      worker_([this] { loop(); }) {}

JobRunner::~JobRunner() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    pending_.reset();
    if (running_cancel_) running_cancel_->store(true);
  }
  wake_.notify_all();
  worker_.join();
}

uint64_t JobRunner::submit(Work work) {
  std::lock_guard lock(mutex_);
  const uint64_t id = next_id_++;
  pending_ = Pending{id, std::move(work)};
  if (running_cancel_) running_cancel_->store(true);
  busy_ = true;
  wake_.notify_all();
  return id;
}

void JobRunner::cancel() {
  std::lock_guard lock(mutex_);
  if (running_cancel_) {
    pending_.reset();
    running_cancel_->store(true);
    user_cancelled_ = true;
  } else if (pending_) {
    // The worker has not taken the job yet, so it will never report it: report
    // the cancel here, replacing any older outcome not yet polled.
    JobOutcome outcome;
    outcome.id = pending_->id;
    outcome.status = JobOutcome::Status::Cancelled;
    finished_ = std::move(outcome);
    pending_.reset();
    busy_ = false;
  }
}

std::optional<JobOutcome> JobRunner::poll() {
  std::lock_guard lock(mutex_);
  std::optional<JobOutcome> out;
  out.swap(finished_);
  return out;
}

double JobRunner::runningSeconds() const {
  std::lock_guard lock(mutex_);
  if (!busy_ || !running_cancel_) return 0.0;
  return secondsSince(started_);
}

void JobRunner::loop() {
  // Lower this thread's priority (Linux nice is per thread, and the OpenMP
  // team this thread starts inherits it): on a 2-core machine the UI thread
  // then wins the cores while a long job runs, and the job still gets every
  // cycle the UI does not use.
  setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 8);
  for (;;) {
    Pending job;
    std::shared_ptr<std::atomic<bool>> cancel;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || pending_.has_value(); });
      if (stop_) return;
      job = std::move(*pending_);
      pending_.reset();
      cancel = running_cancel_ = std::make_shared<std::atomic<bool>>(false);
      user_cancelled_ = false;
      started_ = std::chrono::steady_clock::now();
      progress_ = 0.0f;
    }
    RunContext ctx;
    ctx.pool = pool_;
    ctx.cancel = cancel.get();
    ctx.on_progress = [this](float f) { progress_.store(f); };
    JobOutcome outcome;
    outcome.id = job.id;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      outcome.output = std::make_shared<const SceneOutput>(job.work(ctx));
      if (cancel->load()) throw Cancelled();
    } catch (const Cancelled&) {
      outcome.status = JobOutcome::Status::Cancelled;
      outcome.output.reset();
    } catch (const InputError& e) {
      outcome.status = JobOutcome::Status::InputError;
      outcome.error = e.what();
    } catch (const std::exception& e) {
      outcome.status = JobOutcome::Status::InternalError;
      outcome.error = e.what();
    }
    outcome.seconds = secondsSince(t0);
    std::lock_guard lock(mutex_);
    running_cancel_.reset();
    // A superseded job's outcome is dropped; a user cancel is reported.
    const bool superseded = pending_.has_value() || (cancel->load() && !user_cancelled_);
    if (!superseded) finished_ = std::move(outcome);
    if (!pending_) busy_ = false;
  }
}

}  // namespace attn
