// attnlab bench: shared measuring tools and one function per section.
// A section adds its figures to the JSON object and, unless --json, prints
// a table. Sections live in app/bench/bench*.cpp; cmdBench() lists them.
#pragma once

#include "engine/model/checkpoint/safetensors.h"
#include "engine/run_context.h"

#include <nlohmann/json_fwd.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
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
    t.push_back(secondsSince(t0));
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

// Square float GEMM C = A B at n = 2048 through engine/gemm.h, the product
// every figure's matrix work runs on: the reference rate they are compared
// with (same build, same threads, same run), GFLOP/s.
double gemmGflops();

// Least-squares slope of log(y) against log(x): the exponent k of y ∝ x^k.
double fitExponent(const std::vector<double>& x, const std::vector<double>& y);

// [SECTION] Random checkpoints (the model sections write their own)
// A folder in the temp directory, removed however the section ends.
struct BenchFolder {
  explicit BenchFolder(const std::string& what);  // attnlab-bench-<what>-<pid>
  ~BenchFolder();
  BenchFolder(const BenchFolder&) = delete;
  BenchFolder& operator=(const BenchFolder&) = delete;
  std::filesystem::path path;
};
// Random N(offset, scale²) values, produced chunk by chunk as the writer asks
// (a checkpoint's weights are never all in memory), stored as `dtype`.
TensorToWrite randomTensor(const std::string& name, std::vector<int64_t> shape, float scale, float offset = 0.0f,
                           DType dtype = DType::F32);

// [SECTION] The command
// `attnlab bench` as main.cpp parses it.
struct BenchOptions {
  bool json = false;
  std::string only;  // one section's name, or all
  // llama section: run on this folder (written by --write-llama-checkpoint)
  // instead of writing a temporary one.
  std::string llama_checkpoint;
  std::string write_llama_checkpoint;  // write the checkpoint into this folder and exit
  std::string llama_fresh;             // one load and forward on this folder, as JSON: the cold figure
  int64_t llama_tokens = 128;          // with llama_fresh: the forward's tokens (past 128: maps pooled)
  bool print() const { return !json; }
};

struct BenchSection {
  std::string name;  // --only NAME, and the key in --json output
  std::string what;  // one line for --help and the printed header
  void (*run)(nlohmann::json& out, const BenchOptions& options);
};
const std::vector<BenchSection>& benchSections();
int cmdBench(const BenchOptions& o);

}  // namespace attn
