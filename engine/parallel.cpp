#include "engine/parallel.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

namespace attn {

int threadsAvailable() {
  const int threads = omp_get_max_threads();
  // /proc/loadavg: "0.52 0.61 0.70 3/215 12345"; the fourth field is
  // runnable/total scheduling entities, the caller included.
  std::ifstream in("/proc/loadavg");
  std::string a, b, c, running;
  if (!(in >> a >> b >> c >> running)) return threads;
  const int runnable = std::atoi(running.c_str());
  const int busy_elsewhere = std::max(0, runnable - 1);
  return std::clamp(omp_get_num_procs() - busy_elsewhere, 1, threads);
}

}  // namespace attn
