// attnlab bench sections for adaptive attention span (time and peak memory
// at L = 16,384) and Transformer-XL state reuse (speedup over recomputing
// every sliding window from scratch, Dai et al. 2019, Table 9).
#include "app/bench/bench.h"

#include "engine/attention_math.h"
#include "engine/registry.h"
#include "engine/variants/transformer_xl.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace attn {

// [SECTION] Adaptive span at L = 16,384

void benchAdaptiveSpan(nlohmann::json& out, const BenchOptions& options) {
  const bool print = options.print();
  const int64_t L = 16384, d = 64;  // one head, d_head = 64
  const double R = 32;              // the paper's ramp
  const std::vector<std::pair<int64_t, double>> cases = {{1024, 64},  {1024, 256},  {1024, 1024},
                                                         {8192, 512}, {8192, 2048}, {8192, 8192}};
  Inputs in;
  in.x = randomNormal(L, d, 5, "bench.span.x");
  in.tokens = positionTokens(L, "t");
  in.heads = 1;
  const VariantInfo& info = variantOrThrow("adaptive-span");
  out["L"] = L;
  out["d_head"] = d;
  out["R"] = R;
  out["cases"] = nlohmann::json::array();
  if (print) {
    std::printf("adaptive-span, L=%lld, one head, d_head=%lld, R=%g, median of 3 (projections included)\n",
                static_cast<long long>(L), static_cast<long long>(d), R);
    std::printf("%6s %6s %10s %12s %12s %12s\n", "S", "z", "ms", "entries", "FLOPs saved", "peak RSS");
  }
  for (const auto& [S, z] : cases) {
    Params p = Params::defaults(info.params);
    p.setValue(info.params, "max_span", S);
    p.setValue(info.params, "ramp", R);
    p.setValue(info.params, "z", std::vector<double>{z});
    const double s = medianSeconds(3, [&] { runVariant(info, in, p); });
    resetPeakMemory();
    const Result r = runVariant(info, in, p);
    const double peak = peakMemoryBytes();
    const double saved = r.findExtra("flops_saved")->value.data[0];
    const int64_t nnz = r.sparse[0].nnz();
    out["cases"].push_back({{"S", S}, {"z", z}, {"ms", s * 1e3}, {"entries", nnz}, {"flops_saved", saved},
                            {"peak_rss_bytes", peak}, {"sparse_bytes", r.sparse[0].bytes()}});
    if (print)
      std::printf("%6lld %6g %10.1f %12lld %11.1f%% %12s\n", static_cast<long long>(S), z, s * 1e3,
                  static_cast<long long>(nnz), saved * 100.0, formatBytes(peak).c_str());
  }
  if (print) std::printf("(dense [L, L] float32 would be %s per head)\n", formatBytes(4.0 * L * L).c_str());
}

// [SECTION] Transformer-XL: state reuse against recomputation

void benchXlReuse(nlohmann::json& out, const BenchOptions& options) {
  const bool print = options.print();
  const int64_t layers = 4, d = 256, heads = 4, n = 4096;
  const int windows = 24;  // recomputed windows measured; the total is extrapolated to all N positions
  const Mat x = randomNormal(n, d, 6, "bench.xl.x");
  out["layers"] = layers;
  out["d"] = d;
  out["heads"] = heads;
  out["N"] = n;
  out["cases"] = nlohmann::json::array();
  if (print) {
    std::printf("Transformer-XL stack: %lld layers, d=%lld, %lld heads, N=%lld tokens; a prediction at every position\n",
                static_cast<long long>(layers), static_cast<long long>(d), static_cast<long long>(heads),
                static_cast<long long>(n));
    std::printf("reuse: segments of L with each layer's memory of M carried over; recompute: the stack from scratch\n"
                "on the window of C = M + L tokens ending at each position (timed on %d windows, scaled to N)\n",
                windows);
    std::printf("%6s %6s %12s %16s %16s %10s\n", "L", "M", "reuse s", "recompute ms/pos", "recompute s (N)",
                "speedup");
  }
  for (const int64_t len : {128, 256}) {
    const XlStack stack = makeXlStack(layers, d, heads, len, len, 6);
    xlEvaluateWithReuse(stack, x.topRows(2 * len));  // warm-up
    const double reuse = medianSeconds(3, [&] { xlEvaluateWithReuse(stack, x); });
    std::vector<int64_t> positions;
    for (int w = 0; w < windows; ++w) positions.push_back(n - 1 - w * (n / 2) / windows);  // full windows
    const double window = medianSeconds(1, [&] { xlEvaluateRecompute(stack, x, positions); }) / windows;
    const double recompute = window * static_cast<double>(n);
    out["cases"].push_back({{"L", len}, {"M", len}, {"reuse_seconds", reuse}, {"recompute_ms_per_position", window * 1e3},
                            {"recompute_seconds", recompute}, {"speedup", recompute / reuse}});
    if (print)
      std::printf("%6lld %6lld %12.3f %16.2f %16.1f %9.0fx\n", static_cast<long long>(len),
                  static_cast<long long>(len), reuse, window * 1e3, recompute, recompute / reuse);
  }
}

}  // namespace attn
