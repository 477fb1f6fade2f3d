// attnlab bench --only lsh: Reformer LSH attention (one head, d = 64,
// 8 buckets, chunks of 64, 1 and 4 rounds) at L = 1,024 … 65,536 against
// dense causal attention where that fits: median time, peak memory growth,
// the fitted exponents and the length at which LSH overtakes dense.
#include "app/bench/bench.h"

#include "engine/attention_math.h"
#include "engine/lsh.h"
#include "engine/parallel.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace attn {

namespace {

constexpr int64_t kDim = 64;

struct Point {
  int64_t length = 0;
  double ms = 0, peak_mib = 0, keys_per_query = 0;
};

Point timeLsh(int64_t len, int64_t rounds) {
  const Mat q = randomNormal(len, kDim, 5, "bench.lsh.q"), v = randomNormal(len, kDim, 5, "bench.lsh.v");
  LshOptions o;
  o.n_buckets = 8;
  o.chunk = 64;
  o.rounds = rounds;
  const Mat rot = lshRotations(kDim, o, 5);
  const double before = currentMemoryBytes();
  resetPeakMemory();
  double nnz = 0;
  {
    const LshHead h = lshAttentionHead(q, v, rot, o, {});
    nnz = static_cast<double>(h.weights.nnz());
  }
  const double peak = peakMemoryBytes() - before;
  const double s = medianSeconds(len >= 16384 ? 3 : 5, [&] { lshAttentionHead(q, v, rot, o, {}); });
  return {len, s * 1e3, peak / (1 << 20), nnz / static_cast<double>(len)};
}

// Dense causal single-head attention (scores, weights, mask [L, L]).
Point timeDense(int64_t len) {
  const Mat q = randomNormal(len, kDim, 5, "bench.lsh.q"), k = randomNormal(len, kDim, 5, "bench.lsh.k"),
            v = randomNormal(len, kDim, 5, "bench.lsh.v");
  Mat scores, weights, out(len, kDim);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kDim));
  auto run = [&] {
    const Mat mask = causalMask(len, len);
    attendHead(q, k, v, scale, mask, scores, weights, out);
  };
  const double before = currentMemoryBytes();
  resetPeakMemory();
  run();
  const double peak = peakMemoryBytes() - before;
  const double s = medianSeconds(len >= 4096 ? 3 : 5, run);
  return {len, s * 1e3, peak / (1 << 20), static_cast<double>(len + 1) / 2};
}

double exponentOf(const std::vector<Point>& pts) {
  std::vector<double> x, y;
  for (const Point& p : pts) {
    x.push_back(static_cast<double>(p.length));
    y.push_back(p.ms);
  }
  return fitExponent(x, y);
}

// time ≈ a·L^k through the points' least-squares fit (log space).
double fittedMs(const std::vector<Point>& pts, double k, double len) {
  double log_a = 0;
  for (const Point& p : pts) log_a += std::log(p.ms) - k * std::log(static_cast<double>(p.length));
  return std::exp(log_a / static_cast<double>(pts.size()) + k * std::log(len));
}

// The first measured L where LSH is faster; otherwise where the two fits cross (−1: they do not).
std::pair<double, bool> crossover(const std::vector<Point>& lsh, const std::vector<Point>& dense, double k_lsh, double k_dense) {
  for (const Point& d : dense)
    for (const Point& l : lsh)
      if (l.length == d.length && l.ms < d.ms) return {static_cast<double>(l.length), true};
  if (k_dense <= k_lsh) return {-1, false};
  // a_d L^k_d = a_l L^k_l  ⇒  L = (a_l / a_d)^(1/(k_d − k_l)), via the fits at L = 1.
  const double a_l = fittedMs(lsh, k_lsh, 1.0), a_d = fittedMs(dense, k_dense, 1.0);
  return {std::pow(a_l / a_d, 1.0 / (k_dense - k_lsh)), false};
}

nlohmann::json pointsJson(const std::vector<Point>& pts) {
  nlohmann::json a = nlohmann::json::array();
  for (const Point& p : pts)
    a.push_back({{"L", p.length}, {"ms", p.ms}, {"peak_increase_mib", p.peak_mib}, {"keys_per_query", p.keys_per_query}});
  return a;
}

}  // namespace

void benchLsh(nlohmann::json& out, const BenchOptions& options) {
  const bool print = options.print();
  // One thread, as the sparse section: the growth with L is the question.
  const ThreadScope one_thread(1);
  const std::vector<int64_t> lengths = {1024, 2048, 4096, 8192, 16384, 32768, 65536};
  std::vector<Point> one, four, dense;
  for (const int64_t len : lengths) {
    one.push_back(timeLsh(len, 1));
    four.push_back(timeLsh(len, 4));
    // Dense while its three [L, L] float32 arrays fit in a quarter of free memory (and L ≤ 8,192: ~10 s a run beyond).
    if (len <= 8192 && 12.0 * static_cast<double>(len) * static_cast<double>(len) < 0.25 * static_cast<double>(availableMemoryBytes()))
      dense.push_back(timeDense(len));
  }
  const double k1 = exponentOf(one), k4 = exponentOf(four), kd = exponentOf(dense);
  const auto [x1, measured1] = crossover(one, dense, k1, kd);
  const auto [x4, measured4] = crossover(four, dense, k4, kd);
  out["d"] = kDim;
  out["n_buckets"] = 8;
  out["chunk"] = 64;
  out["threads"] = 1;
  out["lsh_1_round"] = pointsJson(one);
  out["lsh_4_rounds"] = pointsJson(four);
  out["dense_causal"] = pointsJson(dense);
  out["exponents"] = {{"lsh_1_round", k1}, {"lsh_4_rounds", k4}, {"dense_causal", kd}};
  out["crossover_L"] = {{"lsh_1_round", x1}, {"lsh_1_round_measured", measured1}, {"lsh_4_rounds", x4}, {"lsh_4_rounds_measured", measured4}};
  if (!print) return;
  std::printf("one head, d = %lld, b = 8, chunk m = 64, one thread, median; peak +MiB = growth of peak RSS during one run\n",
              static_cast<long long>(kDim));
  std::printf("%8s | %10s %10s %8s | %10s %10s %8s | %10s %10s\n", "L", "1 round ms", "peak MiB", "keys/q", "4 rounds ms",
              "peak MiB", "keys/q", "dense ms", "peak MiB");
  for (size_t i = 0; i < lengths.size(); ++i) {
    std::printf("%8lld | %10.2f %10.1f %8.1f | %10.2f %10.1f %8.1f |", static_cast<long long>(lengths[i]), one[i].ms,
                one[i].peak_mib, one[i].keys_per_query, four[i].ms, four[i].peak_mib, four[i].keys_per_query);
    if (i < dense.size()) std::printf(" %10.2f %10.1f\n", dense[i].ms, dense[i].peak_mib);
    else std::printf(" %10s %10s\n", "-", "-");
  }
  std::printf("\nfitted exponent of time against L (time ∝ L^k):\n");
  std::printf("  lsh 1 round     k = %.2f\n  lsh 4 rounds    k = %.2f\n  dense causal    k = %.2f (L ≤ %lld)\n", k1, k4, kd,
              static_cast<long long>(dense.empty() ? 0 : dense.back().length));
  auto say = [](const char* what, double x, bool measured) {
    if (x < 0) std::printf("  %s: does not overtake dense (dense grows no faster)\n", what);
    else if (measured) std::printf("  %s overtakes dense at L = %.0f (measured)\n", what, x);
    else std::printf("  %s overtakes dense at L ≈ %.0f (where the two fits cross; not measured)\n", what, x);
  };
  say("lsh 1 round", x1, measured1);
  say("lsh 4 rounds", x4, measured4);
}

}  // namespace attn
