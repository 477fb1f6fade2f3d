#include "engine/parallel.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>

#include <unistd.h>

namespace attn {

namespace {

// Threads of this process that are runnable now: the caller, and OpenMP or
// OpenBLAS workers still spinning after the last parallel region.
int runnableHere() {
  int n = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) {
    // /proc/self/task/TID/stat: "TID (comm) S …"; comm may hold spaces and ')'.
    std::ifstream in(it->path() / "stat");
    std::string line;
    std::getline(in, line);
    const size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'R') ++n;
  }
  return std::max(n, 1);
}

}  // namespace

std::optional<int> busyCoresNow() {
  if (omp_get_num_procs() < sysconf(_SC_NPROCESSORS_ONLN)) return std::nullopt;
  // /proc/loadavg: "0.52 0.61 0.70 3/215 12345"; the fourth field is
  // runnable/total scheduling entities of the whole machine.
  std::ifstream in("/proc/loadavg");
  std::string a, b, c, running;
  if (!(in >> a >> b >> c >> running)) return std::nullopt;
  return std::max(0, std::atoi(running.c_str()) - runnableHere());
}

int threadsFree(int ceiling, const BusyCores& busy) {
  const int cores = omp_get_num_procs();
  int busy_elsewhere = cores;
  for (int look = 0; look < 5 && busy_elsewhere > 0; ++look) {
    if (look > 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    const std::optional<int> now = busy();
    if (!now) return ceiling;
    busy_elsewhere = std::min(busy_elsewhere, *now);
  }
  return std::clamp(cores - busy_elsewhere, 1, ceiling);
}

int threadsAvailable() { return threadsFree(omp_get_max_threads()); }

PassThreads::PassThreads(int threads, bool adapt, BusyCores busy, std::chrono::milliseconds interval)
    : ceiling_(omp_get_max_threads()),
      scope_(threads),
      adapt_(adapt),
      busy_(std::move(busy)),
      interval_(interval),
      last_look_(std::chrono::steady_clock::now()),
      threads_(threads) {}

int PassThreads::between() {
  const auto now = std::chrono::steady_clock::now();
  if (!adapt_ || now - last_look_ < interval_) return threads_;
  const int free_now = threadsFree(ceiling_, busy_);
  last_look_ = std::chrono::steady_clock::now();  // after the look: its own milliseconds are not work
  if (free_now != threads_) omp_set_num_threads(threads_ = free_now);
  return threads_;
}

}  // namespace attn
