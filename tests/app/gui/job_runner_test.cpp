// JobRunner: the GUI's compute thread. A newer job supersedes an older one,
// Cancel is reported, errors come back as outcomes, and busy() settles.
#include "app/gui/job_runner.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/mat_pool.h"
#include "engine/multi_head.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
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

// Large buffers go back to the runner's pool when the UI lets go of a
// result, and the next job at the same size writes into the same memory.
namespace attn {
namespace {

JobRunner::Work multiHead(int64_t length) {
  return [length](const RunContext& ctx) {
    const Mat x = randomNormal(length, 32, 3, "x");
    Result r;
    multiHeadAttention(x, x, x, makeMultiHeadWeights(32, 2, 3), 2, false, true, ctx, r);
    SceneOutput out;
    out.result = shareResult(std::move(r), ctx.pool);
    return out;
  };
}

TEST(JobRunner, NextJobReusesTheBuffersOfAReleasedResult) {
  JobRunner runner;
  runner.submit(multiHead(600));  // 2 heads × [600, 600] floats: 1.4 MiB each, worth keeping
  auto first = waitOutcome(runner);
  ASSERT_TRUE(first && first->output && first->output->result);
  std::set<const float*> old_buffers;
  for (const Mat& m : first->output->result->weights) old_buffers.insert(m.data());
  for (const Mat& m : first->output->result->scores) old_buffers.insert(m.data());
  const Mat old_weights = first->output->result->weights[0];
  first.reset();  // the UI swaps in a newer output: the last user lets go
  runner.submit(multiHead(600));
  const auto second = waitOutcome(runner);
  ASSERT_TRUE(second && second->output && second->output->result);
  const Result& r = *second->output->result;
  for (const Mat& m : r.weights) EXPECT_TRUE(old_buffers.count(m.data())) << "weights in fresh memory";
  for (const Mat& m : r.scores) EXPECT_TRUE(old_buffers.count(m.data())) << "scores in fresh memory";
  EXPECT_EQ(r.weights[0], old_weights);  // same inputs: reused memory holds the recomputed values
  // A different size takes fresh memory, and the kept ones stay for later.
  runner.submit(multiHead(300));
  const auto third = waitOutcome(runner);
  ASSERT_TRUE(third && third->output && third->output->result);
  EXPECT_FALSE(old_buffers.count(third->output->result->weights[0].data()));
}

}  // namespace
}  // namespace attn
