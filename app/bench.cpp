// attnlab bench: engine speed against this machine's own Eigen GEMM rate and
// against PyTorch (OpenBLAS) figures measured on this machine kind, plus the
// sections of app/bench_*.cpp. `--only NAME` runs one section.
#include "app/bench.h"
#include "app/cli.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/variants/multi_head.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <omp.h>

namespace attn {

// [SECTION] Measuring tools
namespace {

double statusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1)) * 1024.0;  // "kB"
  return 0;
}

}  // namespace

void resetPeakMemory() {
  std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM to the current RSS
}
double peakMemoryBytes() { return statusBytes("VmHWM"); }
double currentMemoryBytes() { return statusBytes("VmRSS"); }

double fitExponent(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
  }
  const double den = static_cast<double>(n) * sxx - sx * sx;
  return den != 0 ? (static_cast<double>(n) * sxy - sx * sy) / den : 0.0;
}

// [SECTION] Multi-head against GEMM and PyTorch
namespace {

// Square float GEMM C = A B at n = 2048: the reference rate every figure is
// compared with (same build flags, same threads, same run).
double gemmGflops() {
  const int64_t n = 2048;
  const Mat a = randomNormal(n, n, 1, "bench.a"), b = randomNormal(n, n, 1, "bench.b");
  Mat c(n, n);
  c.noalias() = a * b;  // warm-up
  const double s = medianSeconds(5, [&] { c.noalias() = a * b; });
  return 2.0 * n * n * n / s / 1e9;
}

struct Row {
  int64_t length;
  double ms, gflops, fraction, torch_ms;
};

void benchMultiHead(nlohmann::json& out, bool print) {
  const int threads = omp_get_max_threads();
  const double gemm = gemmGflops();
  // PyTorch 2.x + OpenBLAS on this machine kind, median, projections included.
  const std::vector<std::pair<int64_t, double>> cases = {{256, 11.0}, {1024, 64.0}, {4096, 580.0}};
  const int64_t d = 512, heads = 8;
  std::vector<Row> rows;
  for (const auto& [len, torch_ms] : cases) {
    const Mat x = randomNormal(len, d, 7, "bench.x");
    const MultiHeadWeights w = makeMultiHeadWeights(d, heads, 7);
    Result r;
    multiHeadAttention(x, x, x, w, heads, false, true, {}, r);  // warm-up, and the FLOP count
    const int reps = len >= 4096 ? 5 : len >= 1024 ? 11 : 31;
    // The same Result is passed again, so its [h, L, L] buffers are reused
    // (as a caller computing repeatedly would); allocation is not measured.
    const double s = medianSeconds(reps, [&] { multiHeadAttention(x, x, x, w, heads, false, true, {}, r); });
    rows.push_back({len, s * 1e3, r.flops / s / 1e9, r.flops / s / 1e9 / gemm, torch_ms});
  }

  out["threads"] = threads;
  out["gemm_gflops"] = gemm;
  out["cases"] = nlohmann::json::array();
  for (const Row& r : rows)
    out["cases"].push_back({{"L", r.length}, {"d", d}, {"h", heads}, {"ms", r.ms}, {"gflops", r.gflops},
                            {"fraction_of_gemm", r.fraction}, {"pytorch_ms", r.torch_ms},
                            {"time_vs_pytorch", r.ms / r.torch_ms}});
  if (!print) return;
  std::printf("threads %d, Eigen GEMM (2048^3 float) %.1f GFLOP/s\n\n", threads, gemm);
  std::printf("multi-head self-attention, d=%lld h=%lld, projections included, median\n",
              static_cast<long long>(d), static_cast<long long>(heads));
  std::printf("%8s %10s %10s %10s %12s %10s\n", "L", "ms", "GFLOP/s", "of GEMM", "PyTorch ms", "vs PyTorch");
  for (const Row& r : rows)
    std::printf("%8lld %10.2f %10.1f %9.0f%% %12.0f %9.2fx\n", static_cast<long long>(r.length), r.ms, r.gflops,
                r.fraction * 100.0, r.torch_ms, r.ms / r.torch_ms);
  std::printf("\ntarget: at most 0.50x PyTorch's time at every L\n");
}

}  // namespace

// [SECTION] Sections and the command
void benchSparse(nlohmann::json& out, bool print);        // app/bench_sparse.cpp
void benchAdaptiveSpan(nlohmann::json& out, bool print);  // app/bench_span_xl.cpp
void benchXlReuse(nlohmann::json& out, bool print);       // app/bench_span_xl.cpp
void benchModel(nlohmann::json& out, bool print);         // app/bench_model.cpp
void benchLsh(nlohmann::json& out, bool print);           // app/bench_lsh.cpp

const std::vector<BenchSection>& benchSections() {
  static const std::vector<BenchSection> all = {
      {"multi_head", "multi-head self-attention against GEMM and PyTorch", benchMultiHead},
      {"sparse", "Sparse Transformer and Image Transformer local patterns against L, and dense causal", benchSparse},
      {"adaptive_span", "adaptive-span time and peak memory at L = 16,384", benchAdaptiveSpan},
      {"xl_reuse", "Transformer-XL evaluation with state reuse against recomputing each window", benchXlReuse},
      {"model", "GPT-2-small-shaped checkpoint: mmap load, forward over 128 tokens with every map, peak memory",
       benchModel},
      {"lsh", "Reformer LSH attention (1 and 4 rounds) against L up to 65,536, and dense causal", benchLsh},
  };
  return all;
}

int cmdBench(bool json, const std::string& only) {
  nlohmann::json j = nlohmann::json::object();
  bool found = false;
  for (const BenchSection& s : benchSections()) {
    if (!only.empty() && s.name != only) continue;
    found = true;
    if (!json) std::printf("== %s: %s\n", s.name.c_str(), s.what.c_str());
    s.run(j[s.name], !json);
    if (!json) std::printf("\n");
  }
  if (!found) {
    std::string names;
    for (const BenchSection& s : benchSections()) names += (names.empty() ? "" : ", ") + s.name;
    throw InputError("--only: unknown section '" + only + "' (expected one of: " + names + ")");
  }
  if (json) std::cout << j.dump(2) << "\n";
  return 0;
}

}  // namespace attn
