// attnlab bench sections for the long-range patterns: Sparse Transformer
// (strided, fixed) time and peak memory against L with the fitted exponent,
// next to dense causal single-head attention; Image Transformer local 1D/2D
// at L = 16,384.
#include "app/bench/bench.h"

#include "engine/attention_math.h"
#include "engine/parallel.h"
#include "engine/registry.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attn {

namespace {

constexpr int64_t kDHead = 64;  // one head of d_head = 64, as in the issue

struct Case {
  std::string what;  // "sparse-strided l=128"
  int64_t length = 0;
  double ms = 0, peak_mib = 0, connections = 0;
};

// Median time of a whole variant run (projections, pattern, attention) on
// Gaussian x [L, 64], one head, and the growth of peak RSS during one run.
Case timeVariant(const std::string& name, const std::string& what, int64_t len,
                 const std::map<std::string, std::string>& set) {
  const VariantInfo& info = variantOrThrow(name);
  Params p = Params::defaults(info.params);
  for (const auto& [k, v] : set) p.set(info.params, k, v);
  Inputs in;
  in.heads = 1;
  in.seed = 3;
  in.x = randomNormal(len, kDHead, 3, "bench.sparse.x");
  in.tokens = positionTokens(len, "t");
  const double before = currentMemoryBytes();
  resetPeakMemory();
  // Small-L runs would also fill dense copies of the weights for the views;
  // those are not the sparse compute and would hide its growth.
  RunContext ctx;
  ctx.keep_weights = false;
  Result r = runVariant(info, in, p, ctx);
  const double peak = peakMemoryBytes() - before;
  const Extra* extra = r.findExtra("connections");
  const double connections = extra ? extra->value.data[0] : 0.0;
  r = Result();
  const int reps = len >= 8192 ? 5 : 9;
  const double s = medianSeconds(reps, [&] { r = runVariant(info, in, p, ctx); });
  return {what, len, s * 1e3, peak / (1 << 20), connections};
}

// Dense causal single-head attention (attendHead with the causal mask):
// scores, weights and mask [L, L].
Case timeDenseCausal(int64_t len) {
  const Mat q = randomNormal(len, kDHead, 3, "bench.dense.q"), k = randomNormal(len, kDHead, 3, "bench.dense.k"),
            v = randomNormal(len, kDHead, 3, "bench.dense.v");
  Mat scores, weights, out(len, kDHead);
  const double before = currentMemoryBytes();
  resetPeakMemory();
  const float scale = 1.0f / std::sqrt(static_cast<float>(kDHead));
  {
    const Mat mask = causalMask(len, len);
    attendHead(q, k, v, scale, mask, scores, weights, out);
  }
  const double peak = peakMemoryBytes() - before;
  const double s = medianSeconds(len >= 4096 ? 3 : 5, [&] {
    const Mat mask = causalMask(len, len);
    attendHead(q, k, v, scale, mask, scores, weights, out);
  });
  return {"dense causal", len, s * 1e3, peak / (1 << 20), static_cast<double>(len) * static_cast<double>(len + 1) / 2};
}

void printCases(const std::vector<Case>& cases) {
  std::printf("%-28s %7s %10s %12s %14s\n", "variant", "L", "ms", "peak +MiB", "connections");
  for (const Case& c : cases)
    std::printf("%-28s %7lld %10.2f %12.1f %14.0f\n", c.what.c_str(), static_cast<long long>(c.length), c.ms,
                c.peak_mib, c.connections);
}

nlohmann::json casesJson(const std::vector<Case>& cases) {
  nlohmann::json a = nlohmann::json::array();
  for (const Case& c : cases)
    a.push_back({{"what", c.what}, {"L", c.length}, {"ms", c.ms}, {"peak_increase_mib", c.peak_mib},
                 {"connections", c.connections}});
  return a;
}

// Time against L for one configuration; returns the fitted exponent.
double scaling(const std::vector<int64_t>& lengths, const std::function<Case(int64_t)>& one, std::vector<Case>& all) {
  std::vector<double> x, y;
  for (const int64_t len : lengths) {
    all.push_back(one(len));
    x.push_back(static_cast<double>(len));
    y.push_back(all.back().ms);
  }
  return fitExponent(x, y);
}

}  // namespace

void benchSparse(nlohmann::json& out, const BenchOptions& options) {
  const bool print = options.print();
  // One thread: the growth with L is the question, and on a shared 2-core
  // machine every OpenMP barrier can wait a scheduler slice, which swamps the
  // small-L runs (measured: 280 ms for L = 1024 with 2 threads under load).
  const ThreadScope one_thread(1);
  const std::vector<int64_t> lengths = {1024, 2048, 4096, 8192, 16384};
  std::vector<Case> cases;
  std::vector<std::pair<std::string, double>> exponents;
  const auto fit = [&](const std::string& label, const std::vector<int64_t>& ls,
                       const std::function<Case(int64_t)>& one) { exponents.push_back({label, scaling(ls, one, cases)}); };
  fit("sparse-strided l=128", lengths, [](int64_t len) {
    return timeVariant("sparse-strided", "sparse-strided l=128", len, {{"stride", "128"}});
  });
  fit("sparse-fixed l=128 c=8", lengths, [](int64_t len) {
    return timeVariant("sparse-fixed", "sparse-fixed l=128 c=8", len, {{"block", "128"}, {"c", "8"}});
  });
  // The paper's setting ℓ = √L, where the connections grow as L·√L.
  fit("sparse-strided l=sqrt(L)", lengths, [](int64_t len) {
    const std::string l = std::to_string(static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(len)))));
    return timeVariant("sparse-strided", "sparse-strided l=sqrt(L)=" + l, len, {{"stride", l}});
  });
  cases.push_back(timeVariant("local-1d", "local-1d l_q=256 l_m=256", 16384, {{"l_q", "256"}, {"l_m", "256"}}));
  cases.push_back(timeVariant("local-2d", "local-2d 128x128 8x16 f=8,16", 16384,
                              {{"width", "128"}, {"b_h", "8"}, {"b_w", "16"}, {"f_h", "8"}, {"f_w", "16"}}));
  // Dense causal up to L = 4096 (at 8192 one run takes ~10 s here), where its
  // three [L, L] float32 arrays fit in a quarter of free memory.
  std::vector<int64_t> dense_lengths;
  for (const int64_t len : lengths)
    if (len <= 4096 &&
        3.0 * 4.0 * static_cast<double>(len) * static_cast<double>(len) < 0.25 * static_cast<double>(availableMemoryBytes()))
      dense_lengths.push_back(len);
  fit("dense causal", dense_lengths, timeDenseCausal);

  out["d_head"] = kDHead;
  out["heads"] = 1;
  out["threads"] = 1;
  out["cases"] = casesJson(cases);
  for (const auto& [label, k] : exponents) out["exponents"][label] = k;
  if (!print) return;
  std::printf("one head, d_head = %lld, one thread, whole variant run (projections, pattern, attention), median;\n"
              "peak +MiB = growth of peak RSS during one run\n",
              static_cast<long long>(kDHead));
  printCases(cases);
  std::printf("\nfitted exponent of time against L (time ∝ L^k):\n");
  for (const auto& [label, k] : exponents) std::printf("  %-28s k = %.2f\n", label.c_str(), k);
  std::printf("(ℓ fixed at 128: connections ≈ L·ℓ + L²/(2ℓ), between 1 and 2 over this range;\n"
              " ℓ = √L: L·√L, k → 1.5; dense causal: k → 2)\n");
}

}  // namespace attn
