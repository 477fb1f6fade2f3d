// attnlab bench: engine speed against this machine's own Eigen GEMM rate,
// cold (the first call in a fresh process) and warm (the median of repeated
// calls), with page faults, plus the sections of app/bench/bench_*.cpp. `--only
// NAME` runs one section. Peers (PyTorch) are measured live on the same
// shapes by scripts/peer_bench.sh, never quoted from elsewhere.
#include "app/bench/bench.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/gemm.h"
#include "engine/multi_head.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

namespace fs = std::filesystem;

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
int64_t pageFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_minflt) + static_cast<int64_t>(u.ru_majflt);
}

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

// [SECTION] Multi-head, cold and warm, against the GEMM rate
double gemmGflops() {
  const int64_t n = 2048;
  const Mat a = randomNormal(n, n, 1, "bench.a"), b = randomNormal(n, n, 1, "bench.b");
  Mat c(n, n);
  gemm(a, b, false, 1.0f, 0.0f, c);  // warm-up
  const double s = medianSeconds(5, [&] { gemm(a, b, false, 1.0f, 0.0f, c); });
  return 2.0 * n * n * n / s / 1e9;
}

namespace {

// A cold run: `attnlab compute multi-head … --no-weights` in a fresh process
// (this binary), as a user would start it; its meta.json says how long the
// engine took, how many pages it faulted in and its peak memory.
struct Cold {
  double ms = 0, peak_bytes = 0;
  int64_t page_faults = 0;
};
Cold coldMultiHead(int64_t len, int64_t d, int64_t heads) {
  const fs::path dir = fs::temp_directory_path() / ("attnlab-bench-cold-" + std::to_string(::getpid()));
  const std::string cmd = fs::read_symlink("/proc/self/exe").string() + " compute multi-head --seed 7 --length " +
                          std::to_string(len) + " --dim " + std::to_string(d) + " --heads " + std::to_string(heads) +
                          " --no-weights --out " + dir.string() + " >/dev/null";
  Cold c;
  if (std::system(cmd.c_str()) == 0) {
    std::ifstream in(dir / "meta.json");
    const nlohmann::json meta = nlohmann::json::parse(in, nullptr, false);
    if (meta.is_object()) {
      c.ms = meta.value("compute_seconds", 0.0) * 1e3;
      c.page_faults = meta.value("page_faults", int64_t{0});
      c.peak_bytes = meta.value("peak_rss_bytes", 0.0);
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return c;
}

// Median wall time of repeated calls and the page faults of one of them.
struct Warm {
  double ms = 0;
  int64_t page_faults = 0;
};
template <class F>
Warm warm(int reps, F&& f) {
  f();  // warm-up: buffers and caches
  const int64_t f0 = pageFaults();
  Warm w;
  w.ms = medianSeconds(reps, f) * 1e3;
  w.page_faults = (pageFaults() - f0) / reps;
  return w;
}

struct Row {
  int64_t length;
  double flops;
  Cold cold;
  Warm kept, streamed;
};

void benchMultiHead(nlohmann::json& out, const BenchOptions& options) {
  const bool print = options.print();
  const int threads = omp_get_max_threads();
  const double gemm_rate = gemmGflops();
  const int64_t d = 512, heads = 8;
  std::vector<Row> rows;
  for (const int64_t len : {int64_t{256}, int64_t{1024}, int64_t{4096}}) {
    Row row{len, 0, coldMultiHead(len, d, heads), {}, {}};
    const Mat x = randomNormal(len, d, 7, "bench.x");
    const MultiHeadWeights w = makeMultiHeadWeights(d, heads, 7);
    const int reps = len >= 4096 ? 5 : len >= 1024 ? 11 : 31;
    // Kept weights: the same Result is passed again, so its [h, L, L]
    // buffers are reused (as the GUI's jobs reuse theirs).
    Result r;
    row.kept = warm(reps, [&] { multiHeadAttention(x, x, x, w, heads, false, true, {}, r); });
    row.flops = r.flops;
    RunContext output_only;
    output_only.keep_weights = false;
    Result s;
    row.streamed = warm(reps, [&] { multiHeadAttention(x, x, x, w, heads, false, true, output_only, s); });
    rows.push_back(row);
  }
  // The long case streams only: dense scores at L = 16,384 would need 8 GiB.
  const int64_t long_len = 16384;
  const Cold long_cold = coldMultiHead(long_len, d, heads);

  out["threads"] = threads;
  out["gemm_gflops"] = gemm_rate;
  out["cases"] = nlohmann::json::array();
  for (const Row& r : rows)
    out["cases"].push_back({{"L", r.length}, {"d", d}, {"h", heads}, {"flops", r.flops},
                            {"cold_ms", r.cold.ms}, {"cold_page_faults", r.cold.page_faults},
                            {"cold_peak_rss_bytes", r.cold.peak_bytes},
                            {"warm_ms", r.kept.ms}, {"warm_page_faults", r.kept.page_faults},
                            {"warm_gflops", r.flops / r.kept.ms / 1e6},
                            {"fraction_of_gemm", r.flops / r.kept.ms / 1e6 / gemm_rate},
                            {"warm_output_only_ms", r.streamed.ms}, {"warm_output_only_page_faults", r.streamed.page_faults}});
  out["long"] = {{"L", long_len}, {"cold_ms", long_cold.ms}, {"cold_page_faults", long_cold.page_faults},
                 {"cold_peak_rss_bytes", long_cold.peak_bytes}, {"peak_under_512_mib", long_cold.peak_bytes > 0 && long_cold.peak_bytes < 512.0 * (1 << 20)}};
  if (!print) return;
  std::printf("threads %d, GEMM (OpenBLAS sgemm, 2048^3 float) %.1f GFLOP/s\n\n", threads, gemm_rate);
  std::printf("multi-head self-attention, d=%lld h=%lld, projections included\n", static_cast<long long>(d),
              static_cast<long long>(heads));
  std::printf("  cold: `compute --no-weights` in a fresh process (engine time); warm: median of repeated calls\n");
  std::printf("%8s | %10s %9s | %10s %9s %8s %8s | %12s %9s\n", "L", "cold ms", "faults", "warm ms", "faults", "GFLOP/s",
              "of GEMM", "output-only", "faults");
  for (const Row& r : rows)
    std::printf("%8lld | %10.1f %9lld | %10.2f %9lld %8.1f %7.0f%% | %9.2f ms %9lld\n", static_cast<long long>(r.length),
                r.cold.ms, static_cast<long long>(r.cold.page_faults), r.kept.ms,
                static_cast<long long>(r.kept.page_faults), r.flops / r.kept.ms / 1e6,
                100.0 * r.flops / r.kept.ms / 1e6 / gemm_rate, r.streamed.ms, static_cast<long long>(r.streamed.page_faults));
  std::printf("%8lld | %10.1f %9lld | output only, peak RSS %s (target < 512 MiB: %s)\n", static_cast<long long>(long_len),
              long_cold.ms, static_cast<long long>(long_cold.page_faults), formatBytes(long_cold.peak_bytes).c_str(),
              out["long"]["peak_under_512_mib"].get<bool>() ? "met" : "MISSED");
  std::printf("\nwarm keeps the [h, L, L] weights (buffers reused); output-only streams the keys (no L×L matrix).\n");
  std::printf("PyTorch on the same shapes, threads and machine, cold and warm: scripts/peer_bench.sh\n");
}

}  // namespace

// [SECTION] Sections and the command
void benchSparse(nlohmann::json& out, const BenchOptions& options);        // app/bench/bench_sparse.cpp
void benchAdaptiveSpan(nlohmann::json& out, const BenchOptions& options);  // app/bench/bench_span_xl.cpp
void benchXlReuse(nlohmann::json& out, const BenchOptions& options);       // app/bench/bench_span_xl.cpp
void benchModel(nlohmann::json& out, const BenchOptions& options);         // app/bench/bench_model.cpp
void benchImportance(nlohmann::json& out, const BenchOptions& options);    // app/bench/bench_model.cpp
void benchLsh(nlohmann::json& out, const BenchOptions& options);           // app/bench/bench_lsh.cpp
void benchLlama(nlohmann::json& out, const BenchOptions& options);         // app/bench/bench_llama.cpp
void benchLlamaThreads(nlohmann::json& out, const BenchOptions& options);  // app/bench/bench_llama.cpp
void writeLlamaCheckpoint(const std::string& dir);                         // app/bench/bench_llama.cpp
int benchLlamaFreshProcess(const std::string& dir, int64_t tokens);                        // app/bench/bench_llama.cpp
void benchLlamaGguf(nlohmann::json& out, const BenchOptions& options);     // app/bench/bench_llama.cpp

const std::vector<BenchSection>& benchSections() {
  static const std::vector<BenchSection> all = {
      {"multi_head", "multi-head self-attention, cold and warm, against this machine's GEMM rate", benchMultiHead},
      {"sparse", "Sparse Transformer and Image Transformer local patterns against L, and dense causal", benchSparse},
      {"adaptive_span", "adaptive-span time and peak memory at L = 16,384", benchAdaptiveSpan},
      {"xl_reuse", "Transformer-XL evaluation with state reuse against recomputing each window", benchXlReuse},
      {"model", "GPT-2-small-shaped checkpoint: mmap load, forward over 128 tokens with every map, peak memory",
       benchModel},
      {"importance", "GPT-2-small shape, 128 tokens: the 144-head importance grid against 144 whole ablated passes",
       benchImportance},
      {"lsh", "Reformer LSH attention (1 and 4 rounds) against L up to 65,536, and dense causal", benchLsh},
      {"llama", "TinyLlama-1.1B-shaped BF16 checkpoint (2.2 GB): load, peak memory, forward over 128 tokens, cold and warm",
       benchLlama},
      {"gguf", "the same weights as a Q4_K GGUF file: peak memory, prefill against BF16, decode against reading the file",
       benchLlamaGguf},
      {"llama_threads", "TinyLlama shape, 1,024 tokens beside a process busy for 2 s: the threads each layer ran on",
       benchLlamaThreads},
  };
  return all;
}

int cmdBench(const BenchOptions& o) {
  if (!o.write_llama_checkpoint.empty()) {
    writeLlamaCheckpoint(o.write_llama_checkpoint);
    std::printf("wrote %s: TinyLlama-1.1B-shaped checkpoint, random BF16 weights\n", o.write_llama_checkpoint.c_str());
    return 0;
  }
  if (!o.llama_fresh.empty()) return benchLlamaFreshProcess(o.llama_fresh, o.llama_tokens);
  nlohmann::json j = nlohmann::json::object();
  bool found = false;
  for (const BenchSection& s : benchSections()) {
    if (!o.only.empty() && s.name != o.only) continue;
    found = true;
    if (o.print()) std::printf("== %s: %s\n", s.name.c_str(), s.what.c_str());
    s.run(j[s.name], o);
    if (o.print()) std::printf("\n");
  }
  if (!found) {
    std::string names;
    for (const BenchSection& s : benchSections()) names += (names.empty() ? "" : ", ") + s.name;
    throw InputError("--only: unknown section '" + o.only + "' (expected one of: " + names + ")");
  }
  if (o.json) std::cout << j.dump(2) << "\n";
  return 0;
}

}  // namespace attn
