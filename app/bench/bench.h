// attnlab bench: shared measuring tools and one function per section.
// A section adds its figures to the JSON object and, unless quiet, prints
// a table. Sections live in app/bench*.cpp; cmdBench() lists them.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// Median wall time of `reps` calls of f(), in seconds.
template <class F>
double medianSeconds(int reps, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Peak resident memory of this process since the last resetPeakMemory()
// (Linux: VmHWM, reset through /proc/self/clear_refs). 0 when unknown.
void resetPeakMemory();
double peakMemoryBytes();
double currentMemoryBytes();  // VmRSS
// Page faults of this process so far, minor and major (getrusage): the cost
// of touching fresh memory, which dominates a cold first call.
int64_t pageFaults();

// Least-squares slope of log(y) against log(x): the exponent k of y ∝ x^k.
double fitExponent(const std::vector<double>& x, const std::vector<double>& y);

struct BenchSection {
  std::string name;  // --only NAME, and the key in --json output
  std::string what;  // one line for --help and the printed header
  void (*run)(nlohmann::json& out, bool print);
};
const std::vector<BenchSection>& benchSections();

}  // namespace attn
