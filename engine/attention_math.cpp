#include "engine/attention_math.h"

#include "engine/error.h"
#include "engine/gemm.h"
#include "engine/mat_pool.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>

namespace attn {

uint64_t hashString(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double uniform01(uint64_t key) {  // (0, 1], never 0 so log() is finite
  return (static_cast<double>(splitmix64(key) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

}  // namespace

Mat randomNormal(int64_t rows, int64_t cols, uint64_t seed, const std::string& stream, float scale) {
  Mat m(rows, cols);
  const uint64_t base = splitmix64(seed ^ hashString(stream));
  const int64_t n = rows * cols, pairs = (n + 1) / 2;
  float* out = m.data();
  // Box-Muller: the uniforms u1, u2 of counters 2p, 2p+1 give both values of
  // pair p, r·cos θ and r·sin θ (r = √(−2 ln u1), θ = 2π u2). Each pair
  // depends on its counter alone, so threads give the same numbers. The
  // seeded W^q, W^k, W^v, W^o were a third of a cold `compute multi-head`
  // at L = 1024 when drawn one value per pair on one thread.
#pragma omp parallel for schedule(static) if (n >= 65536)
  for (int64_t p = 0; p < pairs; ++p) {
    const double u1 = uniform01(base + 2 * static_cast<uint64_t>(p));
    const double u2 = uniform01(base + 2 * static_cast<uint64_t>(p) + 1);
    const double r = std::sqrt(-2.0 * std::log(u1)), theta = 2.0 * M_PI * u2;
    out[2 * p] = static_cast<float>(r * std::cos(theta)) * scale;
    if (2 * p + 1 < n) out[2 * p + 1] = static_cast<float>(r * std::sin(theta)) * scale;
  }
  return m;
}

Mat sinusoidalEncoding(int64_t length, int64_t dim, double base) {
  Mat pe(length, dim);
  for (int64_t pos = 0; pos < length; ++pos)
    for (int64_t k = 0; k < dim; ++k) {
      // column k = 2i or 2i + 1 shares the frequency 1 / base^(2i/d)
      const double angle = static_cast<double>(pos) / std::pow(base, static_cast<double>(k - k % 2) / dim);
      pe(pos, k) = static_cast<float>(k % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  return pe;
}

Mat layerNormRows(const Mat& x, float eps) {
  Mat out(x.rows(), x.cols());
  for (int64_t i = 0; i < x.rows(); ++i) {
    const float mean = x.row(i).mean();
    const float var = (x.row(i).array() - mean).square().mean();
    out.row(i) = (x.row(i).array() - mean) / std::sqrt(var + eps);
  }
  return out;
}

namespace {

// softmax(s)_j = exp(s_j − max s) / Σ_k exp(s_k − max s), over mask == 1 only.
void softmaxRow(const Mat& scores, const Mat& mask, Mat& weights, int64_t i) {
  // Rows of row-major matrices are contiguous: map them as plain arrays.
  const int64_t n = scores.cols();
  if (n == 0) return;  // no keys at all: nothing to weight
  Eigen::Map<const Eigen::ArrayXf> s(scores.data() + i * n, n);
  Eigen::Map<Eigen::ArrayXf> w(weights.data() + i * n, n);
  if (mask.size() == 0) {
    const float mx = s.maxCoeff();
    w = (s - mx).exp();
    w *= 1.0f / w.sum();
    return;
  }
  Eigen::Map<const Eigen::ArrayXf> m(mask.data() + i * n, n);
  const float mx = (m != 0.0f).select(s, -std::numeric_limits<float>::infinity()).maxCoeff();
  if (mx == -std::numeric_limits<float>::infinity()) {
    w.setZero();  // no allowed key: the row attends to nothing
    return;
  }
  w = (m != 0.0f).select((s - mx).exp(), 0.0f);
  w *= 1.0f / w.sum();
}

}  // namespace

void maskedSoftmaxRows(const Mat& scores, const Mat& mask, Mat& weights) {
  weights.resize(scores.rows(), scores.cols());
  // Small matrices stay on one thread: a pointer network's one row per decoder
  // step spent 50 times longer starting threads than computing (a loaded machine).
#pragma omp parallel for schedule(static) if (scores.size() >= 4096)
  for (int64_t i = 0; i < scores.rows(); ++i) softmaxRow(scores, mask, weights, i);
}

int64_t attendBlockRows(int64_t lk) { return std::max<int64_t>(8, (int64_t{512} << 10) / (4 * std::max<int64_t>(lk, 1))); }

void attendRows(const MatRef& q, const MatRef& k, const MatRef& v, float scale, const Mat& mask, Mat& scores,
                Mat& weights, Eigen::Ref<Mat> out, int64_t row0, int64_t n) {
  // scores[rows] = q[rows] kᵀ · scale                 [n, Lk]
  gemm(q.middleRows(row0, n), k, true, scale, 0.0f, scores.middleRows(row0, n));
  // weights[rows] = softmax(scores[rows] where mask)  [n, Lk]
  for (int64_t i = row0; i < row0 + n; ++i) softmaxRow(scores, mask, weights, i);
  // out[rows] = weights[rows] v                        [n, d_v]
  gemm(weights.middleRows(row0, n), v, false, 1.0f, 0.0f, out.middleRows(row0, n));
}

void attendRowsStreaming(const MatRef& q, const MatRef& k, const MatRef& v, float scale, bool causal,
                         Eigen::Ref<Mat> out, int64_t row0, int64_t n) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int64_t lk = k.rows(), offset = k.rows() - q.rows();  // causal: j ≤ i + offset
  Mat s(n, std::min(kAttendKeyTile, std::max<int64_t>(lk, 1)));  // S, then P, for one tile   [n, tile]
  Eigen::ArrayXf m = Eigen::ArrayXf::Constant(n, kNegInf);       // running row maxima m_i
  Eigen::ArrayXf l = Eigen::ArrayXf::Zero(n);                    // running denominators l_i
  auto o = out.middleRows(row0, n);                              // O, unnormalised             [n, d_v]
  o.setZero();
  // The last key any row of this block may see.
  const int64_t key_end = causal ? std::clamp<int64_t>(row0 + n + offset, 0, lk) : lk;
  for (int64_t j0 = 0; j0 < key_end; j0 += kAttendKeyTile) {
    const int64_t t = std::min(kAttendKeyTile, key_end - j0);
    auto st = s.leftCols(t);
    // S = q[rows] k[tile]ᵀ · scale                       [n, t]
    gemm(q.middleRows(row0, n), k.middleRows(j0, t), true, scale, 0.0f, st);
    for (int64_t r = 0; r < n; ++r) {
      auto row = st.row(r).array();
      // Causal: keys j > i + offset of this tile are masked.
      const int64_t allowed = causal ? std::clamp<int64_t>(row0 + r + offset + 1 - j0, 0, t) : t;
      if (allowed < t) row.tail(t - allowed) = kNegInf;
      const float m_new = allowed > 0 ? std::max(m(r), row.head(allowed).maxCoeff()) : m(r);
      if (m_new == kNegInf) {  // nothing allowed yet: P = 0, O and l stay 0
        row.setZero();
        continue;
      }
      row = (row - m_new).exp();  // P_ij = exp(S_ij − m'_i); masked entries give exp(−∞) = 0
      const float alpha = std::exp(m(r) - m_new);  // exp(m_i − m'_i); 0 on the first allowed tile
      l(r) = l(r) * alpha + row.sum();
      o.row(r) *= alpha;
      m(r) = m_new;
    }
    // O += P v[tile]                                    [n, d_v]
    gemm(st, v.middleRows(j0, t), false, 1.0f, 1.0f, o);
  }
  for (int64_t r = 0; r < n; ++r) {
    if (l(r) > 0)
      o.row(r) /= l(r);
    else
      o.row(r).setZero();
  }
}

void attendHead(const MatRef& q, const MatRef& k, const MatRef& v, float scale, const Mat& mask, Mat& scores,
                Mat& weights, Eigen::Ref<Mat> out) {
  ensureShape(scores, q.rows(), k.rows());
  ensureShape(weights, q.rows(), k.rows());
  const int64_t block = attendBlockRows(k.rows());
  for (int64_t r0 = 0; r0 < q.rows(); r0 += block)
    attendRows(q, k, v, scale, mask, scores, weights, out, r0, std::min(block, q.rows() - r0));
}

Mat causalMask(int64_t lq, int64_t lk) {
  Mat m(lq, lk);
  const int64_t offset = lk - lq;
  for (int64_t i = 0; i < lq; ++i)
    for (int64_t j = 0; j < lk; ++j) m(i, j) = j <= i + offset ? 1.0f : 0.0f;
  return m;
}

int64_t availableMemoryBytes() {
  if (const char* lim = std::getenv("ATTNLAB_MEMORY_LIMIT_MB")) return std::atoll(lim) * (int64_t{1} << 20);
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return int64_t{8} << 30;
}

std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string formatBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 5) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

void checkMemoryBudget(double bytes, const std::string& what) {
  const double have = static_cast<double>(availableMemoryBytes());
  // Leave a quarter of what is free for everything else the run allocates.
  if (bytes > 0.75 * have)
    throw InputError(what + " need " + formatBytes(bytes) + ", more than the " + formatBytes(have) + " of memory available");
}

void checkDenseBudget(int64_t heads, int64_t lq, int64_t lk, int copies, const std::string& what) {
  const double need = static_cast<double>(heads) * static_cast<double>(lq) * static_cast<double>(lk) * 4.0 * copies;
  checkMemoryBudget(need, what + ": dense attention [" + std::to_string(heads) + ", " + std::to_string(lq) + ", " +
                              std::to_string(lk) + "] (" + std::to_string(copies) + " float32 copies) would");
}

// [SECTION] RoPE
std::vector<double> ropeFrequencies(int64_t d_head, double base) {
  std::vector<double> theta(static_cast<size_t>(d_head / 2));
  for (size_t i = 0; i < theta.size(); ++i)
    theta[i] = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d_head));
  return theta;
}

void rotateHalf(Eigen::Ref<Mat> x, const std::vector<double>& theta, int64_t first_position) {
  rotateHalfHeads(x, 1, theta, first_position);
}

double ropeAngle(int64_t m, double theta, RopeAngle how) {
  if (how == RopeAngle::Double) return static_cast<double>(m) * theta;
  // float32(m) · float32(θ) rounded once: the exact double product of two floats, rounded to float
  return static_cast<float>(static_cast<double>(static_cast<float>(m)) * static_cast<float>(theta));
}

void rotateHalfHeads(Eigen::Ref<Mat> x, int64_t heads, const std::vector<double>& theta, int64_t first_position,
                     RopeAngle how) {
  const int64_t half = static_cast<int64_t>(theta.size()), dh = 2 * half;
  for (int64_t r = 0; r < x.rows(); ++r) {
    for (int64_t i = 0; i < half; ++i) {
      // cos and sin in double of the angle `how` forms
      const double a = ropeAngle(first_position + r, theta[static_cast<size_t>(i)], how), c = std::cos(a), s = std::sin(a);
      for (int64_t h = 0; h < heads; ++h) {
        const double lo = x(r, h * dh + i), hi = x(r, h * dh + i + half);
        x(r, h * dh + i) = static_cast<float>(lo * c - hi * s);
        x(r, h * dh + i + half) = static_cast<float>(hi * c + lo * s);
      }
    }
  }
}

}  // namespace attn
