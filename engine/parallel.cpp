#include "engine/parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

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

int threadsAvailable() {
  const int threads = omp_get_max_threads();
  // /proc/loadavg counts the whole machine: with only some of its CPUs ours
  // (taskset, a cpuset) it says nothing about them.
  if (omp_get_num_procs() < sysconf(_SC_NPROCESSORS_ONLN)) return threads;
  // /proc/loadavg: "0.52 0.61 0.70 3/215 12345"; the fourth field is
  // runnable/total scheduling entities of the whole machine. A process that
  // holds a core is runnable in every sample; kernel threads and short-lived
  // commands come and go, so the fewest over a few samples is what counts.
  int busy_elsewhere = omp_get_num_procs();
  for (int sample = 0; sample < 5 && busy_elsewhere > 0; ++sample) {
    if (sample > 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    std::ifstream in("/proc/loadavg");
    std::string a, b, c, running;
    if (!(in >> a >> b >> c >> running)) break;
    busy_elsewhere = std::min(busy_elsewhere, std::max(0, std::atoi(running.c_str()) - runnableHere()));
  }
  return std::clamp(omp_get_num_procs() - busy_elsewhere, 1, threads);
}

}  // namespace attn
