// The threads a run starts and re-decides, from a fake look at the machine
// (busy cores elsewhere) in place of /proc/loadavg.
#include "engine/parallel.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace attn {
namespace {

// Looks that answer from a script, one entry per look, the last repeated; counts them.
struct ScriptedLooks {
  std::vector<std::optional<int>> busy;
  int looks = 0;
  BusyCores source() {
    return [this] { return busy[static_cast<size_t>(std::min<int>(looks++, static_cast<int>(busy.size()) - 1))]; };
  }
};

TEST(ThreadsFree, TheCoresLessTheFewestBusyOfItsLooks) {
  const int cores = omp_get_num_procs();
  ScriptedLooks all_busy{{cores}};
  EXPECT_EQ(threadsFree(cores, all_busy.source()), 1);  // never below 1
  EXPECT_EQ(all_busy.looks, 5);
  // Load that comes and goes (a short-lived command) counts at its least.
  ScriptedLooks blip{{cores, cores - 1, cores}};
  EXPECT_EQ(threadsFree(cores, blip.source()), 1);
  ScriptedLooks one_busy{{1, 1, 1, 1, 1}};
  EXPECT_EQ(threadsFree(cores, one_busy.source()), std::max(1, cores - 1));
  // Every core free: one look, and no more threads than the ceiling.
  ScriptedLooks idle{{0}};
  EXPECT_EQ(threadsFree(cores, idle.source()), cores);
  EXPECT_EQ(idle.looks, 1);
  EXPECT_EQ(threadsFree(1, idle.source()), 1);
  // Nothing known about our cores (a cpuset): the ceiling.
  ScriptedLooks unknown{{std::nullopt}};
  EXPECT_EQ(threadsFree(cores, unknown.source()), cores);
}

// Between layers a pass gives up the cores another process takes and takes
// back those that free up, never above OpenMP's count when it started; the
// count before is restored at the end.
TEST(PassThreads, RedecidesFromEachLookAndRestoresTheCount) {
  const int cores = omp_get_num_procs();
  if (cores < 2) GTEST_SKIP() << "one core: nothing to re-decide";
  const ThreadScope outer(2);
  // Looks 1-5 (one decision): every other core busy; then every core free.
  ScriptedLooks script{{cores - 1, cores - 1, cores - 1, cores - 1, cores - 1, 0}};
  {
    PassThreads threads(2, true, script.source(), std::chrono::milliseconds(0));
    EXPECT_EQ(omp_get_max_threads(), 2);
    EXPECT_EQ(threads.between(), 1);
    EXPECT_EQ(omp_get_max_threads(), 1);
    EXPECT_EQ(threads.between(), 2);  // freed up: back to the ceiling, not all `cores`
    EXPECT_EQ(omp_get_max_threads(), 2);
    EXPECT_EQ(script.looks, 6);
  }
  EXPECT_EQ(omp_get_max_threads(), 2);
}

// A look costs up to ~1 ms: within the interval between() keeps the count
// without looking; without `adapt` it never looks.
TEST(PassThreads, LooksOncePerIntervalAndNeverWithoutAdapt) {
  ScriptedLooks script{{0}};
  {
    PassThreads threads(1, true, script.source(), std::chrono::hours(1));
    for (int layer = 0; layer < 10; ++layer) EXPECT_EQ(threads.between(), 1);
  }
  {
    PassThreads fixed(1, false, script.source(), std::chrono::milliseconds(0));
    for (int layer = 0; layer < 10; ++layer) EXPECT_EQ(fixed.between(), 1);
  }
  EXPECT_EQ(script.looks, 0);
}

}  // namespace
}  // namespace attn
