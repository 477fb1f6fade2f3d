// ggml's reference quantizers (quantize_row_*_ref and, for IQ4, the search
// llama-quantize runs without an importance matrix), step for step, so the
// blocks equal what ggml writes. Their float arithmetic is kept as ggml
// writes it (CMakeLists.txt compiles this file without FMA contraction): a
// search that compares errors can flip on a last bit.
#include "engine/model/checkpoint/quants.h"

#include "engine/tensor.h"  // Eigen::half, Eigen::bfloat16

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace attn {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS: a group below it is all zero

// [SECTION] Rounding as ggml does it
// nearest_int: round half to even by adding 1.5·2²³ (|x| < 2²²).
int nearestInt(float x) {
  const float v = x + 12582912.f;
  int32_t i;
  std::memcpy(&i, &v, 4);
  return (i & 0x007fffff) - 0x00400000;
}

// GGML_FP32_TO_FP16 (nearest even), stored little-endian at p; returns the
// value the file now holds, which the requantizing passes divide by.
float putHalf(uint8_t* p, float x) {
  const Eigen::half h(x);
  const uint16_t bits = Eigen::numext::bit_cast<uint16_t>(h);
  std::memcpy(p, &bits, 2);
  return static_cast<float>(h);
}

// [SECTION] ggml's scale searches (ggml-quants.c)

// The value of largest magnitude, with its sign (the first one on a tie).
float signedMax(const float* x, int n) {
  float amax = 0, max = 0;
  for (int j = 0; j < n; ++j)
    if (amax < std::fabs(x[j])) amax = std::fabs(x[j]), max = x[j];
  return max;
}

// Σ w·x·l and Σ w·l² (w = x²) for l = nearest(iscale·x) ∈ [−nmax, nmax), the
// l kept in L where given.
void fitSymmetric(int n, int nmax, const float* x, float iscale, int8_t* L, float& sumlx, float& suml2) {
  sumlx = suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(nearestInt(iscale * x[i]), -nmax, nmax - 1);
    if (L) L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i], fl = static_cast<float>(l);
    sumlx += w * x[i] * fl;
    suml2 += w * fl * fl;
  }
}

// Where both symmetric searches start: l = nearest(−nmax·x/max), max the
// largest magnitude with its sign; false (L all 0) for a group of zeros.
bool firstGuess(int n, int nmax, const float* x, int8_t* L, float& max, float& sumlx, float& suml2) {
  max = signedMax(x, n);
  if (std::fabs(max) < kGroupMaxEps) {
    std::fill_n(L, n, int8_t{0});
    return false;
  }
  fitSymmetric(n, nmax, x, static_cast<float>(-nmax) / max, L, sumlx, suml2);
  return true;
}

// make_qx_quants, rmse_type 1 (weights x², no importance matrix): the
// symmetric scale for L ∈ [−nmax, nmax), first max ↦ −nmax, then 18 nearby
// scales tried for the least weighted squared error; L returned + nmax.
float makeQxQuants(int n, int nmax, const float* x, int8_t* L) {
  float max, sumlx, suml2;
  if (!firstGuess(n, nmax, x, L, max, sumlx, suml2)) return 0.f;
  float scale = suml2 ? sumlx / suml2 : 0.0f, best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    const float iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
    fitSymmetric(n, nmax, x, iscale, nullptr, sumlx, suml2);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      fitSymmetric(n, nmax, x, iscale, L, sumlx, suml2);  // the same sums, its L kept
      scale = sumlx / suml2, best = scale * sumlx;
    }
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return scale;
}

// make_q3_quants with do_rmse: the symmetric first guess, then up to five
// sweeps moving one L at a time while Σ(w·x·l)²/Σ(w·l²) grows (w = x²).
float makeQ3Quants(int n, int nmax, const float* x, int8_t* L) {
  float max, sumlx, suml2;
  if (!firstGuess(n, nmax, x, L, max, sumlx, suml2)) return 0.f;
  for (int sweep = 0; sweep < 5; ++sweep) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i], old = static_cast<float>(L[i]);
      float slx = sumlx - w * x[i] * old;
      if (slx <= 0) continue;
      float sl2 = suml2 - w * old * old;
      const int l = std::clamp(nearestInt(x[i] * sl2 / slx), -nmax, nmax - 1);
      if (l == L[i]) continue;
      const float fl = static_cast<float>(l);
      slx += w * x[i] * fl;
      sl2 += w * fl * fl;
      if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = static_cast<int8_t>(l), sumlx = slx, suml2 = sl2;
        ++changed;
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// make_qkx2_quants: x ≈ scale · L − min with L ∈ [0, nmax], min ≥ 0; from
// the range's own fit, nstep + 1 scales (rmin + rdelta·is + nmax)/(max − min)
// tried, each refitted by weighted least squares, the least weighted error
// (absolute with use_mad, else squared) kept.
float makeQkx2Quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                     float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0], sum_w = weights[0], sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]), max = std::max(max, x[i]);
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill_n(L, n, uint8_t{0});
    *the_min = -min;
    return 0.f;
  }
  const auto error = [&](float scale, float mn, const uint8_t* q) {
    float e = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = scale * static_cast<float>(q[i]) + mn - x[i];
      e += weights[i] * (use_mad ? std::fabs(diff) : diff * diff);
    }
    return e;
  };
  float iscale = static_cast<float>(nmax) / (max - min), scale = 1 / iscale;
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(std::clamp(nearestInt(iscale * (x[i] - min)), 0, nmax));
  float best_error = error(scale, min, L);
  uint8_t aux[32];
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearestInt(iscale * (x[i] - min)), 0, nmax);
      aux[i] = static_cast<uint8_t>(l);
      const float w = weights[i], fl = static_cast<float>(l);
      sum_l += w * fl;
      sum_l2 += w * fl * fl;
      sum_xl += w * fl * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D <= 0) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D, this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
    if (this_min > 0) this_min = 0, this_scale = sum_xl / sum_l2;
    const float e = error(this_scale, this_min, aux);
    if (e < best_error) {
      std::copy_n(aux, n, L);
      best_error = e, scale = this_scale, min = this_min;
    }
  }
  *the_min = -min;
  return scale;
}

// best_index_int8: the level nearest x of a sorted table of 16, a tie going up.
int bestIndex(const int8_t* values, float x) {
  const float x2 = x + x;
  int idx = 0;
  for (int step = 8; step > 0; step >>= 1) {
    const int j = idx + step;
    if (x2 >= static_cast<float>(values[j - 1] + values[j])) idx = j;
  }
  return idx;
}

// [SECTION] 32-value blocks (the layouts in engine/model/checkpoint/quants.h)

// Q8_0: d = max|x|/127, q = round(x/d) (half away from zero).
void q8_0(const float* x, uint8_t* b) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127, id = d ? 1.0f / d : 0.0f;
  putHalf(b, d);
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::round(x[j] * id)));
}

// Q4_0: d = max/−8 (the largest magnitude lands on level 0), q = ⌊x/d + 8.5⌋ ≤ 15.
void q4_0(const float* x, uint8_t* b) {
  const float d = signedMax(x, 32) / -8, id = d ? 1.0f / d : 0.0f;
  putHalf(b, d);
  for (int j = 0; j < 16; ++j) {
    const int q0 = std::min(15, static_cast<int>(x[j] * id + 8.5f));
    const int q1 = std::min(15, static_cast<int>(x[j + 16] * id + 8.5f));
    b[2 + j] = static_cast<uint8_t>(q0 | q1 << 4);
  }
}

// Q4_1: m = min, d = (max − min)/15, q = ⌊(x − m)/d + ½⌋ ≤ 15.
void q4_1(const float* x, uint8_t* b) {
  const float min = *std::min_element(x, x + 32), max = *std::max_element(x, x + 32);
  const float d = (max - min) / 15, id = d ? 1.0f / d : 0.0f;
  putHalf(b, d);
  putHalf(b + 2, min);
  for (int j = 0; j < 16; ++j) {
    const int q0 = std::min(15, static_cast<int>((x[j] - min) * id + 0.5f));
    const int q1 = std::min(15, static_cast<int>((x[j + 16] - min) * id + 0.5f));
    b[4 + j] = static_cast<uint8_t>(q0 | q1 << 4);
  }
}

// The fifth bits of 32 five-bit values into qh (value j at bit j), the low
// four as nibbles.
void putFiveBits(const int* q, uint8_t* b) {
  uint32_t qh = 0;
  for (int j = 0; j < 32; ++j) qh |= static_cast<uint32_t>(q[j] >> 4 & 1) << j;
  std::memcpy(b, &qh, 4);
  for (int j = 0; j < 16; ++j) b[4 + j] = static_cast<uint8_t>((q[j] & 0xF) | (q[j + 16] & 0xF) << 4);
}

// Q5_0: d = max/−16, q = ⌊x/d + 16.5⌋ ≤ 31.
void q5_0(const float* x, uint8_t* b) {
  const float d = signedMax(x, 32) / -16, id = d ? 1.0f / d : 0.0f;
  putHalf(b, d);
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = std::min(31, static_cast<int>(x[j] * id + 16.5f));
  putFiveBits(q, b + 2);
}

// Q5_1: m = min, d = (max − min)/31, q = ⌊(x − m)/d + ½⌋.
void q5_1(const float* x, uint8_t* b) {
  const float min = *std::min_element(x, x + 32), max = *std::max_element(x, x + 32);
  const float d = (max - min) / 31, id = d ? 1.0f / d : 0.0f;
  putHalf(b, d);
  putHalf(b + 2, min);
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = static_cast<uint8_t>((x[j] - min) * id + 0.5f);
  putFiveBits(q, b + 4);
}

// Nibbles of 32·k values as 16·k bytes: per 32, values 0‥15 low, 16‥31 high.
void putNibbles(const uint8_t* L, int n, uint8_t* qs) {
  for (int i = 0; i < n / 32; ++i)
    for (int j = 0; j < 16; ++j) qs[16 * i + j] = static_cast<uint8_t>(L[32 * i + j] | L[32 * i + 16 + j] << 4);
}

// quantize_row_iq4_nl_impl with ntry 7 and weights x² (what quantize_iq4_nl
// and quantize_iq4_xs run without an importance matrix): per 32 values, the
// scale mapping the largest magnitude to ±127 and 15 more mapping it near
// −127, each refitted (d = Σw·q·x / Σw·q²), the best kept; IQ4_XS then
// quantizes the 8 scales to 6 bits of d = −max scale/32 and picks the
// levels again for each rounded scale. Writes d at dh, the nibbles at qs and
// (IQ4_XS) the scales at scales_h/scales_l.
void iq4(const float* x, int n, uint8_t* dh, uint8_t* qs, uint8_t* scales_h, uint8_t* scales_l) {
  constexpr int kTries = 7;
  const int8_t* values = kIq4NlValues;
  uint8_t L[256] = {};
  float scales[8] = {}, weight[32];
  for (int ib = 0; ib < n / 32; ++ib) {
    const float* xb = x + 32 * ib;
    uint8_t* Lb = L + 32 * ib;
    for (int j = 0; j < 32; ++j) weight[j] = xb[j] * xb[j];
    const float max = signedMax(xb, 32);
    if (std::fabs(max) < kGroupMaxEps) continue;
    const auto fit = [&](float id, float& sumqx, float& sumq2, bool keep) {
      sumqx = sumq2 = 0;
      for (int j = 0; j < 32; ++j) {
        const int l = bestIndex(values, id * xb[j]);
        if (keep) Lb[j] = static_cast<uint8_t>(l);
        const float q = values[l], w = weight[j];
        sumqx += w * q * xb[j];
        sumq2 += w * q * q;
      }
    };
    float sumqx, sumq2;
    fit(1 / (-max / values[0]), sumqx, sumq2, true);
    float d = sumq2 > 0 ? sumqx / sumq2 : 0.f, best = d * sumqx;
    for (int t = -kTries; t <= kTries; ++t) {
      fit((static_cast<float>(t) + values[0]) / max, sumqx, sumq2, false);
      if (sumq2 > 0 && sumqx * sumqx > best * sumq2) d = sumqx / sumq2, best = d * sumqx;
    }
    scales[ib] = d;
  }
  if (n > 32) {
    const float d = -signedMax(scales, 8) / 32, id = d ? 1 / d : 0.f;
    putHalf(dh, d);
    uint16_t sh = 0;
    for (int ib = 0; ib < n / 32; ++ib) {
      int l = std::clamp(nearestInt(id * scales[ib]), -32, 31);
      const float dl = d * static_cast<float>(l), idl = dl ? 1 / dl : 0.f;
      for (int j = 0; j < 32; ++j) L[32 * ib + j] = static_cast<uint8_t>(bestIndex(values, idl * x[32 * ib + j]));
      l += 32;
      if (ib % 2 == 0) scales_l[ib / 2] = static_cast<uint8_t>(l & 0xF);
      else scales_l[ib / 2] |= static_cast<uint8_t>((l & 0xF) << 4);
      sh |= static_cast<uint16_t>((l >> 4) << 2 * ib);
    }
    std::memcpy(scales_h, &sh, 2);
  } else {
    putHalf(dh, scales[0]);
    const float id = scales[0] ? 1 / scales[0] : 0;
    for (int j = 0; j < n; ++j) L[j] = static_cast<uint8_t>(bestIndex(values, id * x[j]));
  }
  putNibbles(L, n, qs);
}

void iq4_nl(const float* x, uint8_t* b) { iq4(x, 32, b, b + 2, nullptr, nullptr); }

// [SECTION] 256-value super-blocks

// The 2-bit (Q2_K) or low-2-bit (Q3_K) fields of 256 values into 64 bytes:
// value 128·n + 32·k + l at byte 32·n + l, bits 2k.
void putTwoBits(const uint8_t* L, uint8_t* qs) {
  for (int n = 0; n < 2; ++n)
    for (int l = 0; l < 32; ++l) {
      const uint8_t* v = L + 128 * n + l;
      qs[32 * n + l] = static_cast<uint8_t>(v[0] | v[32] << 2 | v[64] << 4 | v[96] << 6);
    }
}

// Q2_K: per 16 values a scale and minimum (make_qkx2_quants, weights |x|,
// absolute error), both quantized to 4 bits of max/15; the values then
// requantized to the stored scale and minimum.
void q2_K(const float* x, uint8_t* b) {
  uint8_t L[256], *sc = b, *qs = b + 16;
  float mins[16], scales[16], weights[16], max_scale = 0, max_min = 0;
  for (int j = 0; j < 16; ++j) {
    for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
    scales[j] = makeQkx2Quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], -0.5f, 0.1f, 15, true);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  std::fill_n(sc, 16, uint8_t{0});
  float d = 0, dmin = 0;
  if (max_scale > 0) {
    const float iscale = 15.f / max_scale;
    for (int j = 0; j < 16; ++j) sc[j] = static_cast<uint8_t>(nearestInt(iscale * scales[j]));
    d = putHalf(b + 80, max_scale / 15.f);
  } else {
    putHalf(b + 80, 0.f);
  }
  if (max_min > 0) {
    const float iscale = 15.f / max_min;
    for (int j = 0; j < 16; ++j) sc[j] |= static_cast<uint8_t>(nearestInt(iscale * mins[j]) << 4);
    dmin = putHalf(b + 82, max_min / 15.f);
  } else {
    putHalf(b + 82, 0.f);
  }
  for (int j = 0; j < 16; ++j) {
    const float dl = d * static_cast<float>(sc[j] & 0xF);
    if (!dl) continue;
    const float ml = dmin * static_cast<float>(sc[j] >> 4);
    for (int i = 0; i < 16; ++i)
      L[16 * j + i] = static_cast<uint8_t>(std::clamp(nearestInt((x[16 * j + i] + ml) / dl), 0, 3));
  }
  putTwoBits(L, qs);
}

// Q3_K: per 16 values a symmetric scale (make_q3_quants), the 16 scales
// quantized to signed 6 bits of d = max/−32, the values requantized to
// L ∈ [−4, 3] of the stored scales; L + 4's high bit goes to hmask.
void q3_K(const float* x, uint8_t* b) {
  uint8_t *hmask = b, *qs = b + 32, *s = b + 96;
  int8_t L[256];
  float scales[16];
  for (int j = 0; j < 16; ++j) scales[j] = makeQ3Quants(16, 4, x + 16 * j, L + 16 * j);
  const float max_scale = signedMax(scales, 16);
  std::fill_n(s, 12, uint8_t{0});
  int stored[16] = {};  // the 6-bit fields, s + 32
  float d = 0;
  if (max_scale) {
    const float iscale = -32.f / max_scale;
    for (int j = 0; j < 16; ++j) {
      const int l = std::clamp(static_cast<int>(static_cast<int8_t>(nearestInt(iscale * scales[j]))), -32, 31) + 32;
      stored[j] = l;
      if (j < 8) s[j] = static_cast<uint8_t>(l & 0xF);
      else s[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
      s[j % 4 + 8] |= static_cast<uint8_t>((l >> 4) << 2 * (j / 4));
    }
    d = putHalf(b + 108, 1 / iscale);
  } else {
    putHalf(b + 108, 0.f);
  }
  for (int j = 0; j < 16; ++j) {
    const float dl = d * static_cast<float>(stored[j] - 32);
    if (!dl) continue;
    for (int i = 0; i < 16; ++i)
      L[16 * j + i] = static_cast<int8_t>(std::clamp(nearestInt(x[16 * j + i] / dl), -4, 3) + 4);
  }
  std::fill_n(hmask, 32, uint8_t{0});
  uint8_t low[256];
  for (int j = 0; j < 256; ++j) {
    const bool high = L[j] > 3;
    if (high) hmask[j % 32] |= static_cast<uint8_t>(1 << j / 32);
    low[j] = static_cast<uint8_t>(L[j] - (high ? 4 : 0));
  }
  putTwoBits(low, qs);
}

// Q4_K and Q5_K: per 32 values a scale and minimum (make_qkx2_quants,
// weights rms + |x|), both quantized to 6 bits of max/63 and packed as
// get_scale_min_k4 reads them; the values then requantized to L ∈ [0, nmax]
// of the stored pair. Writes d, dmin and the 12 scale bytes at b.
void kScalesMins(const float* x, int nmax, float rmin, int nstep, uint8_t* b, uint8_t* L) {
  float mins[8], scales[8], weights[32], max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = makeQkx2Quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], rmin, 0.1f, nstep, false);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f, inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  uint8_t ls[8], lm[8], *s = b + 4;
  for (int j = 0; j < 8; ++j) {
    ls[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearestInt(inv_scale * scales[j])));
    lm[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearestInt(inv_min * mins[j])));
    if (j < 4) {
      s[j] = ls[j], s[j + 4] = lm[j];
    } else {
      s[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | (lm[j] & 0xF) << 4);
      s[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
      s[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
    }
  }
  const float d = putHalf(b, max_scale / 63.f), dmin = putHalf(b + 2, max_min / 63.f);
  for (int j = 0; j < 8; ++j) {
    const float dl = d * static_cast<float>(ls[j]);
    if (!dl) continue;
    const float ml = dmin * static_cast<float>(lm[j]);
    for (int i = 0; i < 32; ++i)
      L[32 * j + i] = static_cast<uint8_t>(std::clamp(nearestInt((x[32 * j + i] + ml) / dl), 0, nmax));
  }
}

// Q4_K: 64 values per 32 bytes, the first 32 in the low nibbles.
void q4_K(const float* x, uint8_t* b) {
  uint8_t L[256];
  kScalesMins(x, 15, -1.f, 20, b, L);
  uint8_t* q = b + 16;
  for (int g = 0; g < 4; ++g)
    for (int l = 0; l < 32; ++l) q[32 * g + l] = static_cast<uint8_t>(L[64 * g + l] | L[64 * g + 32 + l] << 4);
}

// Q5_K: as Q4_K, and the fifth bit of value 64·g + 32·h + l at bit 2g + h of qh[l].
void q5_K(const float* x, uint8_t* b) {
  uint8_t L[256];
  kScalesMins(x, 31, -0.5f, 15, b, L);
  uint8_t *qh = b + 16, *q = b + 48;
  std::fill_n(qh, 32, uint8_t{0});
  for (int g = 0; g < 4; ++g)
    for (int l = 0; l < 32; ++l) {
      const int l1 = L[64 * g + l], l2 = L[64 * g + 32 + l];
      qh[l] |= static_cast<uint8_t>((l1 >> 4) << 2 * g | (l2 >> 4) << (2 * g + 1));
      q[32 * g + l] = static_cast<uint8_t>((l1 & 0xF) | (l2 & 0xF) << 4);
    }
}

// Q6_K: per 16 values a symmetric scale (make_qx_quants, L ∈ [−32, 32)),
// the 16 scales quantized to int8 of d = max/−128, the values requantized to
// the stored scales.
void q6_K(const float* x, uint8_t* b) {
  uint8_t *ql = b, *qh = b + 128;
  int8_t* sc = reinterpret_cast<int8_t*>(b + 192);
  int8_t L[256];
  float scales[16];
  for (int ib = 0; ib < 16; ++ib) scales[ib] = makeQxQuants(16, 32, x + 16 * ib, L + 16 * ib);
  const float max_scale = signedMax(scales, 16);
  if (std::fabs(max_scale) < kGroupMaxEps) {
    std::fill_n(b, 210, uint8_t{0});
    return;
  }
  const float iscale = -128.f / max_scale;
  const float d = putHalf(b + 208, 1 / iscale);
  for (int ib = 0; ib < 16; ++ib) sc[ib] = static_cast<int8_t>(std::min(127, nearestInt(iscale * scales[ib])));
  for (int j = 0; j < 16; ++j) {
    const float dl = d * static_cast<float>(sc[j]);
    if (!dl) continue;
    for (int i = 0; i < 16; ++i)
      L[16 * j + i] = static_cast<int8_t>(std::clamp(nearestInt(x[16 * j + i] / dl), -32, 31) + 32);
  }
  for (int n = 0; n < 2; ++n)
    for (int l = 0; l < 32; ++l) {
      const int8_t* v = L + 128 * n + l;
      ql[64 * n + l] = static_cast<uint8_t>((v[0] & 0xF) | (v[64] & 0xF) << 4);
      ql[64 * n + l + 32] = static_cast<uint8_t>((v[32] & 0xF) | (v[96] & 0xF) << 4);
      qh[32 * n + l] = static_cast<uint8_t>(v[0] >> 4 | (v[32] >> 4) << 2 | (v[64] >> 4) << 4 | (v[96] >> 4) << 6);
    }
}

void iq4_xs(const float* x, uint8_t* b) { iq4(x, 256, b, b + 8, b + 2, b + 4); }

}  // namespace

std::vector<uint8_t> quantize(DType t, const float* x, int64_t count) {
  const BlockLayout layout = blockLayout(t);
  if (t == DType::I64 || count % layout.values)
    throw std::logic_error("quantize: " + std::to_string(count) + " values are not whole blocks of " +
                           dtypeName(t));
  std::vector<uint8_t> out(storedBytes(t, static_cast<uint64_t>(count)));
  uint8_t* o = out.data();
  switch (t) {
    case DType::F32:
      if (count) std::memcpy(o, x, static_cast<size_t>(count) * 4);
      return out;
    case DType::F16:
    case DType::BF16:
      for (int64_t i = 0; i < count; ++i) {
        const uint16_t bits = t == DType::F16 ? Eigen::numext::bit_cast<uint16_t>(Eigen::half(x[i]))
                                              : Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(x[i]));
        std::memcpy(o + 2 * i, &bits, 2);
      }
      return out;
    default: break;
  }
  void (*block)(const float*, uint8_t*) = nullptr;
  switch (t) {
    case DType::Q8_0: block = q8_0; break;
    case DType::Q4_0: block = q4_0; break;
    case DType::Q4_1: block = q4_1; break;
    case DType::Q5_0: block = q5_0; break;
    case DType::Q5_1: block = q5_1; break;
    case DType::Q2_K: block = q2_K; break;
    case DType::Q3_K: block = q3_K; break;
    case DType::Q4_K: block = q4_K; break;
    case DType::Q5_K: block = q5_K; break;
    case DType::Q6_K: block = q6_K; break;
    case DType::IQ4_NL: block = iq4_nl; break;
    case DType::IQ4_XS: block = iq4_xs; break;
    default: break;
  }
  // The K and IQ searches take 0.1‥0.4 µs a value on one core (a TinyLlama
  // of Q4_K, ~2 minutes): past a million values, blocks on the OpenMP threads.
#pragma omp parallel for schedule(static) if (count > (int64_t{1} << 20))
  for (int64_t i = 0; i < count / layout.values; ++i) block(x + i * layout.values, o + i * layout.bytes);
  return out;
}

}  // namespace attn
