// Building blocks shared by the variants: seeded random tensors, masked
// softmax, masks and the dense-memory guard. One copy of each, here.
#pragma once

#include "engine/tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// FNV-1a 64-bit; stable across platforms (token embeddings, weight streams).
uint64_t hashString(const std::string& s);

// Standard-normal matrix times `scale`, from a counter-based generator
// (splitmix64 + Box-Muller) keyed by (seed, stream). Same numbers on every
// platform and thread count. `stream` is the tensor's symbol ("w_q").
Mat randomNormal(int64_t rows, int64_t cols, uint64_t seed, const std::string& stream, float scale = 1.0f);

// Sinusoidal positional encoding (Vaswani et al. 2017, §3.5), positions from 0:
//   PE(pos, 2i) = sin(pos / base^(2i/d)),  PE(pos, 2i+1) = cos(pos / base^(2i/d))   [length, dim]
Mat sinusoidalEncoding(int64_t length, int64_t dim, double base = 10000.0);

// RoPE's frequencies θ_i = base^(−2i/d_head), i = 0 … d_head/2 − 1 (Su et al. 2021).
std::vector<double> ropeFrequencies(int64_t d_head, double base);
// How RoPE's angle m·θ_i is formed: in double (the equation), or as
// transformers' rotary embeddings form it (float32 inv_freq times the
// float32 position, rounded to float32, autocast off), then cos and sin of
// that float32 angle. At m ≈ 4,096 the two differ by up to ~3·10⁻⁴ rad.
enum class RopeAngle { Double, Float32 };
double ropeAngle(int64_t m, double theta, RopeAngle how);
// Rotates each row r of x [n, d_head] (position first_position + r = m) in the
// `rotate_half` layout of LLaMA and Hugging Face: dimension i pairs with
// i + d_head/2, turned by the angle m·θ_i (in double).
void rotateHalf(Eigen::Ref<Mat> x, const std::vector<double>& theta, int64_t first_position);
// The same for x [n, heads·d_head], every head turned alike, the angle
// formed as `how` says; each angle's sine and cosine are computed once for all the heads.
void rotateHalfHeads(Eigen::Ref<Mat> x, int64_t heads, const std::vector<double>& theta, int64_t first_position,
                     RopeAngle how = RopeAngle::Double);

// LayerNorm over each row without gain and bias (Ba et al. 2016):
//   LN(x)_i = (x_i − mean(x_i)) / √(var(x_i) + eps)                [rows, d]
Mat layerNormRows(const Mat& x, float eps = 1e-5f);

// Row-wise softmax of `scores` restricted to mask == 1 (mask may be empty).
// Masked entries are exactly 0; a row with no allowed key is all 0.
// Rows are processed in parallel (OpenMP); each row's arithmetic is fixed,
// so results do not depend on the thread count.
void maskedSoftmaxRows(const Mat& scores, const Mat& mask, Mat& weights);

// mask(i, j) = 1 where j <= i + offset (offset = Lk - Lq aligns the ends,
// as in decoding with a prefix).
Mat causalMask(int64_t lq, int64_t lk);

// Throws InputError when `copies` dense [heads, lq, lk] float32 arrays would
// not fit in available memory, naming the size they would need.
void checkDenseBudget(int64_t heads, int64_t lq, int64_t lk, int copies, const std::string& what);

// Throws InputError "<what> need N, more than the M of memory available"
// when `bytes` would take more than three quarters of what is free.
void checkMemoryBudget(double bytes, const std::string& what);

// Bytes of memory available to this process (MemAvailable, or the
// ATTNLAB_MEMORY_LIMIT_MB override used by tests).
int64_t availableMemoryBytes();

std::string formatBytes(double bytes);  // "1.5 GiB"
std::string formatNumber(double v);    // as printf's %g, six significant digits: "1e-05", "0.62", "1.01953"

}  // namespace attn

namespace attn {

// One head of scaled dot-product attention, the form every dense variant
// reduces to. With q [Lq, d_k], k [Lk, d_k], v [Lk, d_v]:
//   scores  = q kᵀ · scale                     [Lq, Lk]   (before mask)
//   weights = softmax(scores where mask == 1)  [Lq, Lk]
//   out     = weights v                        [Lq, d_v]
// Single-threaded on purpose: callers parallelise over heads and row blocks.
void attendHead(const MatRef& q, const MatRef& k, const MatRef& v, float scale, const Mat& mask, Mat& scores,
                Mat& weights, Eigen::Ref<Mat> out);

// The same for query rows [row0, row0 + n) only; `scores` and `weights`
// must already be [Lq, Lk]. A block's scores are still in cache when its
// softmax and its weights · v run, which is why work is cut this way.
void attendRows(const MatRef& q, const MatRef& k, const MatRef& v, float scale, const Mat& mask, Mat& scores,
                Mat& weights, Eigen::Ref<Mat> out, int64_t row0, int64_t n);

// The same output for query rows [row0, row0 + n) without forming scores or
// weights: keys in tiles, with an online softmax (Milakov & Gimelshein 2018;
// the FlashAttention loop, Dao et al. 2022). Per query row i, a running
// maximum m_i and denominator l_i over the tiles seen so far:
//   S = q[rows] k[tile]ᵀ · scale,  m'_i = max(m_i, max_j S_ij),  P_ij = exp(S_ij − m'_i)
//   l_i ← l_i · exp(m_i − m'_i) + Σ_j P_ij,   O_i ← O_i · exp(m_i − m'_i) + P_i v[tile]
// and out_i = O_i / l_i at the end. At most [n, kAttendKeyTile] scores exist
// at once. `causal`: key j is allowed where j ≤ i + (Lk − Lq) (causalMask);
// whole tiles past the diagonal are skipped. A row with no allowed key is 0.
// Single-threaded, like attendRows; the result does not depend on how the
// caller splits rows among threads.
void attendRowsStreaming(const MatRef& q, const MatRef& k, const MatRef& v, float scale, bool causal,
                         Eigen::Ref<Mat> out, int64_t row0, int64_t n);
inline constexpr int64_t kAttendKeyTile = 512;

// Rows per block so one block of scores is about 512 KiB (measured best on
// this machine kind: ~25% faster than whole-matrix passes at L = 4096).
int64_t attendBlockRows(int64_t lk);

}  // namespace attn
