// JobRunner: the GUI's compute thread. A newer job supersedes an older one,
// Cancel is reported, errors come back as outcomes, and busy() settles.
#include "app/job_runner.h"

#include "engine/error.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace attn {
namespace {

using namespace std::chrono_literals;

// Polls until an outcome arrives (the UI does this at frame start).
std::optional<JobOutcome> waitOutcome(JobRunner& runner, std::chrono::milliseconds limit = 10s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (auto o = runner.poll()) return o;
    std::this_thread::sleep_for(1ms);
  }
  return std::nullopt;
}

void waitFor(const std::atomic<bool>& flag) {
  const auto end = std::chrono::steady_clock::now() + 10s;
  while (!flag.load() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(flag.load());
}

// A job that runs until its cancel flag is set (or 10 s pass).
JobRunner::Work untilCancelled(std::atomic<bool>& started) {
  return [&started](const RunContext& ctx) {
    started = true;
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < end) {
      ctx.check();  // throws Cancelled once superseded
      std::this_thread::sleep_for(1ms);
    }
    return SceneOutput{};
  };
}

JobRunner::Work quick(const std::string& variant) {
  return [variant](const RunContext&) {
    SceneOutput out;
    auto r = std::make_shared<Result>();
    r->variant = variant;
    out.result = r;
    return out;
  };
}

TEST(JobRunner, NewerJobSupersedesRunningOne) {
  JobRunner runner;
  std::atomic<bool> started{false};
  const uint64_t old_id = runner.submit(untilCancelled(started));
  waitFor(started);
  EXPECT_TRUE(runner.busy());
  const uint64_t new_id = runner.submit(quick("newer"));
  const auto o = waitOutcome(runner);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->id, new_id) << "the superseded job " << old_id << " must not be reported";
  EXPECT_EQ(o->status, JobOutcome::Status::Done);
  ASSERT_TRUE(o->output && o->output->result);
  EXPECT_EQ(o->output->result->variant, "newer");
  EXPECT_FALSE(runner.poll()) << "exactly one outcome";
  EXPECT_FALSE(runner.busy());
}

TEST(JobRunner, UserCancelIsReportedAndClearsBusy) {
  JobRunner runner;
  std::atomic<bool> started{false};
  const uint64_t id = runner.submit(untilCancelled(started));
  waitFor(started);
  runner.cancel();
  const auto o = waitOutcome(runner);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->id, id);
  EXPECT_EQ(o->status, JobOutcome::Status::Cancelled);
  EXPECT_FALSE(runner.busy());
}

TEST(JobRunner, CancelWithAJobWaitingLeavesNothingBusy) {
  JobRunner runner;
  std::atomic<bool> started{false}, release{false};
  // The running job ignores its cancel flag until released, so the second
  // job is still waiting when Cancel comes.
  runner.submit([&](const RunContext&) {
    started = true;
    while (!release.load()) std::this_thread::sleep_for(1ms);
    return SceneOutput{};
  });
  waitFor(started);
  runner.submit(quick("waiting"));
  runner.cancel();
  release = true;
  const auto o = waitOutcome(runner);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->status, JobOutcome::Status::Cancelled);
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (runner.busy() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(1ms);
  EXPECT_FALSE(runner.busy());
  EXPECT_FALSE(runner.poll()) << "the waiting job never ran";
}

TEST(JobRunner, InputErrorsComeBackAsOutcomes) {
  JobRunner runner;
  runner.submit([](const RunContext&) -> SceneOutput { throw InputError("--heads: h=3 does not divide d=64"); });
  const auto o = waitOutcome(runner);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->status, JobOutcome::Status::InputError);
  EXPECT_EQ(o->error, "--heads: h=3 does not divide d=64");
  EXPECT_FALSE(o->output);
}

}  // namespace
}  // namespace attn
