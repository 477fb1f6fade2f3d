#include "engine/model/checkpoint/quants.h"

#include "engine/tensor.h"  // Eigen::half

#include <cstring>
#include <stdexcept>

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace attn {

bool isQuantized(DType t) { return blockLayout(t).values > 1; }

namespace {

// Each block's decoder unpacks its quants into signed bytes (loops the
// compiler vectorises), then turns runs of them into floats with the run's
// scale and minimum. Every product before an addition is exact (an f16 scale
// times a small integer), so d·q + m rounds once however it is fused or
// vectorised; where ggml adds no minimum none is added here (a zero weight
// keeps the sign of d), and the floats equal dequantize_row_*'s bit for bit.

float half(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

#ifdef __AVX2__
// 8 floats d · q (+ m) from the low 8 signed bytes of b.
template <bool kMin>
void store8(__m128i b, __m256 d, __m256 m, float* y) {
  const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
  _mm256_storeu_ps(y, kMin ? _mm256_fmadd_ps(d, q, m) : _mm256_mul_ps(d, q));
}
#endif

// y[i] = d · q[i], or d · q[i] + m for a type with a minimum, i < n (a multiple of 8).
template <bool kMin>
void affine(const int8_t* q, int n, float d, float m, float* y) {
#ifdef __AVX2__
  const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
  for (int i = 0; i < n; i += 8) store8<kMin>(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + i)), vd, vm, y + i);
#else
  for (int i = 0; i < n; ++i) y[i] = kMin ? d * static_cast<float>(q[i]) + m : d * static_cast<float>(q[i]);
#endif
}

#ifndef __AVX2__
// 32 nibbles from 16 bytes, as ggml orders them: the low nibbles are values
// 0‥15, the high ones 16‥31.
void nibbles(const uint8_t* qs, uint8_t* q) {
  for (int j = 0; j < 16; ++j) q[j] = qs[j] & 0xF, q[j + 16] = qs[j] >> 4;
}
#endif

// A 32-value block's quants, less `offset`: its nibbles at qs, with (Q5) the
// fifth bit of value j from bit j of the u32 at qh; y = d · q (+ m). In
// registers where the build has AVX2: through a byte buffer, the bytes
// stored one at a time and read back 8 at a time stall the loads (4× slower).
template <bool kMin>
void block32(const uint8_t* qs, const uint8_t* qh, int8_t offset, float d, float m, float* y) {
#ifdef __AVX2__
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)), low4 = _mm_set1_epi8(0xF);
  __m256i q = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(bytes, 4), low4), _mm_and_si128(bytes, low4));
  if (qh) {
    uint32_t h;
    std::memcpy(&h, qh, 4);
    // byte j takes byte j/8 of h, then its bit j%8 becomes 0x10
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(h)),
                                               _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202,
                                                                  0x0303030303030303));
    const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
    q = _mm256_or_si256(q, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit),
                                            _mm256_set1_epi8(0x10)));
  }
  q = _mm256_sub_epi8(q, _mm256_set1_epi8(offset));
  const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
  const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
  store8<kMin>(lo, vd, vm, y), store8<kMin>(_mm_srli_si128(lo, 8), vd, vm, y + 8);
  store8<kMin>(hi, vd, vm, y + 16), store8<kMin>(_mm_srli_si128(hi, 8), vd, vm, y + 24);
#else
  uint8_t u[32];
  nibbles(qs, u);
  uint32_t h = 0;
  if (qh) std::memcpy(&h, qh, 4);
  int8_t q[32];
  for (int j = 0; j < 32; ++j) q[j] = static_cast<int8_t>((u[j] | (h >> j & 1) << 4) - offset);
  affine<kMin>(q, 32, d, m, y);
#endif
}

// IQ4: 32 values d · kIq4NlValues[nibble], nibbles ordered as above; a byte
// shuffle looks the 16 levels up where the build has AVX2.
void iq4Nibbles(const uint8_t* qs, float d, float* y) {
#ifdef __AVX2__
  const __m128i levels = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4NlValues));
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)), low4 = _mm_set1_epi8(0xF);
  int8_t v[32];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(v), _mm_shuffle_epi8(levels, _mm_and_si128(bytes, low4)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(v + 16),
                   _mm_shuffle_epi8(levels, _mm_and_si128(_mm_srli_epi16(bytes, 4), low4)));
#else
  uint8_t q[32];
  nibbles(qs, q);
  int8_t v[32];
  for (int j = 0; j < 32; ++j) v[j] = kIq4NlValues[q[j]];
#endif
  affine<false>(v, 32, d, 0.0f, y);
}

// [SECTION] 32-value blocks
// Q8_0 {f16 d; int8 q[32]}:                           x = d · q
void q8_0(const uint8_t* b, float* y) { affine<false>(reinterpret_cast<const int8_t*>(b + 2), 32, half(b), 0.0f, y); }

// Q4_0 {f16 d; u8 qs[16]}:                            x = d · (q − 8)
void q4_0(const uint8_t* b, float* y) {
  block32<false>(b + 2, nullptr, 8, half(b), 0.0f, y);
}

// Q4_1 {f16 d, m; u8 qs[16]}:                         x = d · q + m
void q4_1(const uint8_t* b, float* y) { block32<true>(b + 4, nullptr, 0, half(b), half(b + 2), y); }

// Q5_0 {f16 d; u32 qh; u8 qs[16]}:                    x = d · (q − 16)
void q5_0(const uint8_t* b, float* y) {
  block32<false>(b + 6, b + 2, 16, half(b), 0.0f, y);
}

// Q5_1 {f16 d, m; u32 qh; u8 qs[16]}:                 x = d · q + m
void q5_1(const uint8_t* b, float* y) { block32<true>(b + 8, b + 4, 0, half(b), half(b + 2), y); }

// IQ4_NL {f16 d; u8 qs[16]}:                          x = d · kvalues[q]
void iq4_nl(const uint8_t* b, float* y) { iq4Nibbles(b + 2, half(b), y); }

// [SECTION] 256-value super-blocks

// The 6-bit scale and minimum of Q4_K/Q5_K sub-block j (get_scale_min_k4):
// the first four sit in the low 6 bits of bytes 0‥3 and 4‥7, the last four
// in bytes 8‥11's nibbles with their top 2 bits in bytes 0‥7's top bits.
void scaleMinK4(int j, const uint8_t* s, int& sc, int& m) {
  if (j < 4) {
    sc = s[j] & 63, m = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 0xF) | (s[j - 4] >> 6) << 4;
    m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
  }
}

// Q2_K's and Q3_K's 2-bit fields: value 128·n + 32·k + l sits in byte
// 32·n + l at bits 2k.
void twoBits(const uint8_t* qs, int8_t* q) {
  for (int n = 0; n < 2; ++n)
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) q[128 * n + 32 * k + l] = static_cast<int8_t>(qs[32 * n + l] >> 2 * k & 3);
}

// Q2_K {u8 scales[16]; u8 qs[64]; f16 d, dmin}: sub-block i (16 values) has
// s = scales[i] & 0xF and m = scales[i] >> 4.         x = d·s · q − dmin·m
void q2_K(const uint8_t* b, float* y) {
  const uint8_t* sc = b;
  const float d = half(b + 80), dmin = half(b + 82);
  int8_t q[256];
  twoBits(b + 16, q);
  for (int i = 0; i < 16; ++i)
    affine<true>(q + 16 * i, 16, d * static_cast<float>(sc[i] & 0xF), -(dmin * static_cast<float>(sc[i] >> 4)),
           y + 16 * i);
}

// Q3_K {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}: the 2 low bits as
// Q2_K's; value v's high bit is bit v/32 of hmask[v%32], set meaning "no
// −4"; 16 signed 6-bit scales, the low nibbles in bytes 0‥7 (sub-block i in
// byte i%8, the high nibble for i ≥ 8) and the top 2 bits in bytes 8‥11
// (byte 8 + i%4, bits 2·(i/4)).                       x = d·(s − 32) · (q − 4·!h)
void q3_K(const uint8_t* b, float* y) {
  const uint8_t* hm = b;
  const uint8_t* s = b + 96;
  const float d = half(b + 108);
  int8_t q[256];
  twoBits(b + 32, q);
  for (int k = 0; k < 8; ++k)
    for (int l = 0; l < 32; ++l) q[32 * k + l] = static_cast<int8_t>(q[32 * k + l] - 4 + (hm[l] >> k & 1) * 4);
  for (int i = 0; i < 16; ++i) {
    const int lo = i < 8 ? s[i] & 0xF : s[i - 8] >> 4, hi = s[8 + i % 4] >> 2 * (i / 4) & 3;
    affine<false>(q + 16 * i, 16, d * static_cast<float>((lo | hi << 4) - 32), 0.0f, y + 16 * i);
  }
}

// Q4_K {f16 d, dmin; u8 scales[12]; u8 qs[128]}: 8 sub-blocks of 32, 64
// values per 32 bytes (the first 32 in the low nibbles). x = d·s · q − dmin·m
void q4_K(const uint8_t* b, float* y) {
  const float d = half(b), dmin = half(b + 2);
  const uint8_t* s = b + 4;
  const uint8_t* qs = b + 16;
  int8_t q[256];
  for (int g = 0; g < 4; ++g)
    for (int l = 0; l < 32; ++l)
      q[64 * g + l] = static_cast<int8_t>(qs[32 * g + l] & 0xF), q[64 * g + 32 + l] = static_cast<int8_t>(qs[32 * g + l] >> 4);
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    scaleMinK4(j, s, sc, m);
    affine<true>(q + 32 * j, 32, d * static_cast<float>(sc), -(dmin * static_cast<float>(m)), y + 32 * j);
  }
}

// Q5_K {f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: Q4_K plus a
// fifth bit, bit v/32 of qh[v%32].                     x = d·s · q − dmin·m
void q5_K(const uint8_t* b, float* y) {
  const float d = half(b), dmin = half(b + 2);
  const uint8_t* s = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* qs = b + 48;
  int8_t q[256];
  for (int g = 0; g < 4; ++g)
    for (int l = 0; l < 32; ++l) {
      q[64 * g + l] = static_cast<int8_t>((qs[32 * g + l] & 0xF) | (qh[l] >> 2 * g & 1) << 4);
      q[64 * g + 32 + l] = static_cast<int8_t>((qs[32 * g + l] >> 4) | (qh[l] >> (2 * g + 1) & 1) << 4);
    }
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    scaleMinK4(j, s, sc, m);
    affine<true>(q + 32 * j, 32, d * static_cast<float>(sc), -(dmin * static_cast<float>(m)), y + 32 * j);
  }
}

// Q6_K {u8 ql[128]; u8 qh[64]; int8 scales[16]; f16 d}: in each half n of
// 128 values, value 32·k + l takes its low 4 bits from ql[64n + l + 32·(k%2)]
// (the high nibble for k ≥ 2) and its top 2 bits from qh[32n + l] at bits
// 2k; sub-block i is 16 values.                       x = d·s · (q − 32)
void q6_K(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = half(b + 208);
  int8_t q[256];
  for (int n = 0; n < 2; ++n)
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) {
        const int low = ql[64 * n + 32 * (k % 2) + l] >> (k < 2 ? 0 : 4) & 0xF;
        q[128 * n + 32 * k + l] = static_cast<int8_t>((low | (qh[32 * n + l] >> 2 * k & 3) << 4) - 32);
      }
  for (int i = 0; i < 16; ++i) affine<false>(q + 16 * i, 16, d * static_cast<float>(sc[i]), 0.0f, y + 16 * i);
}

// IQ4_XS {f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]}: 8 sub-blocks of
// 32, each a 6-bit scale (the low nibble from scales_l, the top 2 bits from
// scales_h) and IQ4_NL's nibbles.                     x = d·(s − 32) · kvalues[q]
void iq4_xs(const uint8_t* b, float* y) {
  const float d = half(b);
  uint16_t sh;
  std::memcpy(&sh, b + 2, 2);
  const uint8_t* sl = b + 4;
  const uint8_t* qs = b + 8;
  for (int i = 0; i < 8; ++i) {
    const int s = (sl[i / 2] >> 4 * (i % 2) & 0xF) | (sh >> 2 * i & 3) << 4;
    iq4Nibbles(qs + 16 * i, d * static_cast<float>(s - 32), y + 32 * i);
  }
}

// The blocks of [src, src + count values), past a million values on the
// OpenMP threads as toFloats does for F16.
template <void (*Block)(const uint8_t*, float*)>
void blocks(const uint8_t* src, int64_t count, BlockLayout b, float* out) {
  const int64_t n = count / b.values;
#pragma omp parallel for schedule(static) if (count > (int64_t{1} << 20))
  for (int64_t i = 0; i < n; ++i) Block(src + i * b.bytes, out + i * b.values);
}

}  // namespace

const int8_t kIq4NlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

void dequantize(DType t, const uint8_t* src, int64_t count, float* out) {
  const BlockLayout b = blockLayout(t);
  switch (t) {
    case DType::Q8_0: return blocks<q8_0>(src, count, b, out);
    case DType::Q4_0: return blocks<q4_0>(src, count, b, out);
    case DType::Q4_1: return blocks<q4_1>(src, count, b, out);
    case DType::Q5_0: return blocks<q5_0>(src, count, b, out);
    case DType::Q5_1: return blocks<q5_1>(src, count, b, out);
    case DType::Q2_K: return blocks<q2_K>(src, count, b, out);
    case DType::Q3_K: return blocks<q3_K>(src, count, b, out);
    case DType::Q4_K: return blocks<q4_K>(src, count, b, out);
    case DType::Q5_K: return blocks<q5_K>(src, count, b, out);
    case DType::Q6_K: return blocks<q6_K>(src, count, b, out);
    case DType::IQ4_NL: return blocks<iq4_nl>(src, count, b, out);
    case DType::IQ4_XS: return blocks<iq4_xs>(src, count, b, out);
    default: break;
  }
  throw std::logic_error("dequantize: " + dtypeName(t) + " is not a block type");
}

}  // namespace attn
