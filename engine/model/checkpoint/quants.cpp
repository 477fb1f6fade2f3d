#include "engine/model/checkpoint/quants.h"

#include "engine/tensor.h"  // Eigen::half

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__AVX2__) || defined(__F16C__)
#include <immintrin.h>
#endif

namespace attn {

bool isQuantized(DType t) { return blockLayout(t).values > 1; }

namespace {

// Each decoder takes its quants 32 at a time into 32 signed bytes (one
// AVX2 register where the build has AVX2, a plain array otherwise: the same
// code either way), then turns them into floats with their run's scale and
// minimum. Every product before an addition is exact (an f16 scale times a
// small integer), so d·q + m rounds once however it is fused or vectorised;
// where ggml adds no minimum none is added here (a zero weight keeps the
// sign of d), and the floats equal dequantize_row_*'s bit for bit.

float half(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
#ifdef __F16C__
  return _cvtsh_ss(bits);  // one instruction; exact either way
#else
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
#endif
}

uint32_t u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// [SECTION] 32 quants at a time
#ifdef __AVX2__
using Bytes32 = __m256i;

Bytes32 load32(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// Each byte's bits shift‥shift + width − 1, moved to bit `to` (a 16-bit
// shift, then the mask drops what crossed from the neighbouring byte).
Bytes32 field(Bytes32 v, int shift, int width, int to) {
  const __m256i moved = shift >= to ? _mm256_srli_epi16(v, shift - to) : _mm256_slli_epi16(v, to - shift);
  return _mm256_and_si256(moved, _mm256_set1_epi8(static_cast<char>(((1 << width) - 1) << to)));
}

Bytes32 minus(Bytes32 v, int8_t c) { return _mm256_sub_epi8(v, _mm256_set1_epi8(c)); }

// 16 bytes of nibbles as ggml orders a 32-value block's: the low nibbles are
// values 0‥15, the high ones 16‥31.
Bytes32 nibbles16(const uint8_t* p) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), low4 = _mm_set1_epi8(0xF);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), low4), _mm_and_si128(b, low4));
}

// Byte j: bit j of h, at bit `to`.
Bytes32 bitsOf(uint32_t h, int to) {
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(h)),  // byte j takes byte j/8 of h
                                             _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202,
                                                                0x0303030303030303));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));  // then its bit j%8
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(static_cast<char>(1 << to)));
}

// table[v] for each byte v < 16 (a byte shuffle in each 128-bit lane).
Bytes32 lookup16(Bytes32 v, const int8_t* table) {
  return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table))), v);
}

// 8 weights in a register.
using Floats8 = __m256;

// The weights d · q (+ m) of q: values 0‥15 with d0, m0, values 16‥31 with
// d1, m1; all 32 to out(w, at), w[k] being values 8k‥8k + 7.
template <bool kMin, class Out>
void floats32(Bytes32 q, float d0, float m0, float d1, float m1, Out& out, int at) {
  const auto eight = [](__m128i b, float d, float m) {  // the low 8 bytes of b
    const __m256 f = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)), vd = _mm256_set1_ps(d);
    return kMin ? _mm256_fmadd_ps(vd, f, _mm256_set1_ps(m)) : _mm256_mul_ps(vd, f);
  };
  const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
  const Floats8 w[4] = {eight(lo, d0, m0), eight(_mm_srli_si128(lo, 8), d0, m0), eight(hi, d1, m1),
                        eight(_mm_srli_si128(hi, 8), d1, m1)};
  out(w, at);
}

// dequantize(): the weights stored.
struct Store {
  float* y;
  void operator()(const Floats8 (&w)[4], int at) {
    for (int k = 0; k < 4; ++k) _mm256_storeu_ps(y + at + 8 * k, w[k]);
  }
};

// dotRows(): the weights times x, summed in 4 × 8 lanes (4 chains of FMAs,
// not one, which would wait on each other); never stored.
struct Dot {
  const float* x;
  Floats8 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  void operator()(const Floats8 (&w)[4], int at) {
    for (int k = 0; k < 4; ++k) acc[k] = _mm256_fmadd_ps(w[k], _mm256_loadu_ps(x + at + 8 * k), acc[k]);
  }
  float sum() const {  // always in this order
    const __m256 a = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
    float lanes[8];
    _mm256_storeu_ps(lanes, a);
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  }
};
#else
struct Bytes32 {
  uint8_t v[32];
  Bytes32 operator|(const Bytes32& o) const {
    Bytes32 r;
    for (int j = 0; j < 32; ++j) r.v[j] = v[j] | o.v[j];
    return r;
  }
};

Bytes32 load32(const uint8_t* p) {
  Bytes32 r;
  std::memcpy(r.v, p, 32);
  return r;
}

Bytes32 field(Bytes32 a, int shift, int width, int to) {
  Bytes32 r;
  for (int j = 0; j < 32; ++j) r.v[j] = static_cast<uint8_t>((a.v[j] >> shift & ((1 << width) - 1)) << to);
  return r;
}

Bytes32 minus(Bytes32 a, int8_t c) {
  Bytes32 r;
  for (int j = 0; j < 32; ++j) r.v[j] = static_cast<uint8_t>(a.v[j] - c);
  return r;
}

Bytes32 nibbles16(const uint8_t* p) {
  Bytes32 r;
  for (int j = 0; j < 16; ++j) r.v[j] = p[j] & 0xF, r.v[j + 16] = p[j] >> 4;
  return r;
}

Bytes32 bitsOf(uint32_t h, int to) {
  Bytes32 r;
  for (int j = 0; j < 32; ++j) r.v[j] = static_cast<uint8_t>((h >> j & 1) << to);
  return r;
}

Bytes32 lookup16(Bytes32 a, const int8_t* table) {
  Bytes32 r;
  for (int j = 0; j < 32; ++j) r.v[j] = static_cast<uint8_t>(table[a.v[j]]);
  return r;
}

struct Floats8 {
  float v[8];
};

template <bool kMin, class Out>
void floats32(Bytes32 q, float d0, float m0, float d1, float m1, Out& out, int at) {
  Floats8 w[4];
  for (int i = 0; i < 32; ++i) {
    const float d = i < 16 ? d0 : d1, f = static_cast<float>(static_cast<int8_t>(q.v[i]));
    w[i / 8].v[i % 8] = kMin ? d * f + (i < 16 ? m0 : m1) : d * f;
  }
  out(w, at);
}

struct Store {
  float* y;
  void operator()(const Floats8 (&w)[4], int at) { std::memcpy(y + at, w, sizeof w); }
};

struct Dot {
  const float* x;
  Floats8 acc[4] = {};
  void operator()(const Floats8 (&w)[4], int at) {
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 8; ++j) acc[k].v[j] += w[k].v[j] * x[at + 8 * k + j];
  }
  float sum() const {  // as the AVX2 lanes add
    float lanes[8];
    for (int j = 0; j < 8; ++j) lanes[j] = (acc[0].v[j] + acc[1].v[j]) + (acc[2].v[j] + acc[3].v[j]);
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  }
};
#endif

// One scale for all 32.
template <class Out>
void scaled32(Bytes32 q, float d, Out& out, int at) { floats32<false>(q, d, 0.0f, d, 0.0f, out, at); }

// [SECTION] 32-value blocks
// Q8_0 {f16 d; int8 q[32]}:                           x = d · q
template <class Out>
void q8_0(const uint8_t* b, Out& y) { scaled32(load32(b + 2), half(b), y, 0); }

// Q4_0 {f16 d; u8 qs[16]}:                            x = d · (q − 8)
template <class Out>
void q4_0(const uint8_t* b, Out& y) { scaled32(minus(nibbles16(b + 2), 8), half(b), y, 0); }

// Q4_1 {f16 d, m; u8 qs[16]}:                         x = d · q + m
template <class Out>
void q4_1(const uint8_t* b, Out& y) {
  const float d = half(b), m = half(b + 2);
  floats32<true>(nibbles16(b + 4), d, m, d, m, y, 0);
}

// Q5_0 {f16 d; u32 qh; u8 qs[16]}: value j's fifth bit is bit j of qh.
//                                                     x = d · (q − 16)
template <class Out>
void q5_0(const uint8_t* b, Out& y) { scaled32(minus(nibbles16(b + 6) | bitsOf(u32(b + 2), 4), 16), half(b), y, 0); }

// Q5_1 {f16 d, m; u32 qh; u8 qs[16]}:                 x = d · q + m
template <class Out>
void q5_1(const uint8_t* b, Out& y) {
  const float d = half(b), m = half(b + 2);
  floats32<true>(nibbles16(b + 8) | bitsOf(u32(b + 4), 4), d, m, d, m, y, 0);
}

// IQ4_NL {f16 d; u8 qs[16]}:                          x = d · kvalues[q]
template <class Out>
void iq4_nl(const uint8_t* b, Out& y) { scaled32(lookup16(nibbles16(b + 2), kIq4NlValues), half(b), y, 0); }

// [SECTION] 256-value super-blocks

// The 6-bit scales and minimums of Q4_K/Q5_K's 8 sub-blocks
// (get_scale_min_k4), sub-block j's in byte j of `sc` and of `m`: the first
// four sit in the low 6 bits of bytes 0‥3 and 4‥7, the last four in bytes
// 8‥11's nibbles with their top 2 bits in bytes 0‥7's top bits (4 bytes at
// a time, in 32-bit words).
void scalesMinsK4(const uint8_t* s, uint64_t& sc, uint64_t& m) {
  uint32_t u[3];
  std::memcpy(u, s, 12);
  const uint32_t six = 0x3F3F3F3F, four = 0x0F0F0F0F, two = 0x03030303;
  sc = (u[0] & six) | uint64_t{(u[2] & four) | (u[0] >> 6 & two) << 4} << 32;
  m = (u[1] & six) | uint64_t{(u[2] >> 4 & four) | (u[1] >> 6 & two) << 4} << 32;
}
float byteOf(uint64_t v, int j) { return static_cast<float>(v >> 8 * j & 0xFF); }

// Q2_K {u8 scales[16]; u8 qs[64]; f16 d, dmin}: value 128·n + 32·k + l has
// its 2 bits in byte 32·n + l at bit 2k; sub-block i (16 values) has
// s = scales[i] & 0xF and m = scales[i] >> 4.         x = d·s · q − dmin·m
template <class Out>
void q2_K(const uint8_t* b, Out& y) {
  const uint8_t* sc = b;
  const float d = half(b + 80), dmin = half(b + 82);
  const auto dl = [&](int i) { return d * static_cast<float>(sc[i] & 0xF); };
  const auto ml = [&](int i) { return -(dmin * static_cast<float>(sc[i] >> 4)); };
  for (int n = 0; n < 2; ++n) {
    const Bytes32 qs = load32(b + 16 + 32 * n);
    for (int k = 0; k < 4; ++k) {
      const int i = 8 * n + 2 * k;
      floats32<true>(field(qs, 2 * k, 2, 0), dl(i), ml(i), dl(i + 1), ml(i + 1), y, 128 * n + 32 * k);
    }
  }
}

// Q3_K {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}: the 2 low bits as
// Q2_K's; value v's high bit is bit v/32 of hmask[v%32], set meaning "no
// −4"; 16 signed 6-bit scales, the low nibbles in bytes 0‥7 (sub-block i in
// byte i%8, the high nibble for i ≥ 8) and the top 2 bits in bytes 8‥11
// (byte 8 + i%4, bits 2·(i/4)).                       x = d·(s − 32) · (q − 4·!h)
template <class Out>
void q3_K(const uint8_t* b, Out& y) {
  const uint8_t* s = b + 96;
  const float d = half(b + 108);
  const auto dl = [&](int i) {
    const int lo = i < 8 ? s[i] & 0xF : s[i - 8] >> 4, hi = s[8 + i % 4] >> 2 * (i / 4) & 3;
    return d * static_cast<float>((lo | hi << 4) - 32);
  };
  const Bytes32 hm = load32(b);
  for (int n = 0; n < 2; ++n) {
    const Bytes32 qs = load32(b + 32 + 32 * n);
    for (int k = 0; k < 4; ++k) {
      const int i = 8 * n + 2 * k;
      const Bytes32 q = minus(field(qs, 2 * k, 2, 0) | field(hm, 4 * n + k, 1, 2), 4);
      floats32<false>(q, dl(i), 0.0f, dl(i + 1), 0.0f, y, 128 * n + 32 * k);
    }
  }
}

// Q4_K {f16 d, dmin; u8 scales[12]; u8 qs[128]}: 8 sub-blocks of 32, 64
// values per 32 bytes (the first 32 in the low nibbles); Q5_K {f16 d, dmin;
// u8 scales[12]; u8 qh[32]; u8 qs[128]} adds a fifth bit, bit v/32 of
// qh[v%32].                                           x = d·s · q − dmin·m
template <bool kFifthBit, class Out>
void qK(const uint8_t* b, Out& y) {
  const float d = half(b), dmin = half(b + 2);
  uint64_t sc, m;
  scalesMinsK4(b + 4, sc, m);
  const Bytes32 qh = load32(b + 16);
  const uint8_t* qs = b + (kFifthBit ? 48 : 16);
  for (int g = 0; g < 4; ++g) {
    const Bytes32 v = load32(qs + 32 * g);
    for (int h = 0; h < 2; ++h) {
      const int j = 2 * g + h;
      Bytes32 q = field(v, 4 * h, 4, 0);
      if (kFifthBit) q = q | field(qh, j, 1, 4);
      const float dl = d * byteOf(sc, j), ml = -(dmin * byteOf(m, j));
      floats32<true>(q, dl, ml, dl, ml, y, 32 * j);
    }
  }
}
template <class Out>
void q4_K(const uint8_t* b, Out& y) { qK<false>(b, y); }
template <class Out>
void q5_K(const uint8_t* b, Out& y) { qK<true>(b, y); }

// Q6_K {u8 ql[128]; u8 qh[64]; int8 scales[16]; f16 d}: in each half n of
// 128 values, value 32·k + l takes its low 4 bits from ql[64n + l + 32·(k%2)]
// (the high nibble for k ≥ 2) and its top 2 bits from qh[32n + l] at bits
// 2k; sub-block i is 16 values.                       x = d·s · (q − 32)
template <class Out>
void q6_K(const uint8_t* b, Out& y) {
  const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = half(b + 208);
  for (int n = 0; n < 2; ++n) {
    const Bytes32 ql[2] = {load32(b + 64 * n), load32(b + 64 * n + 32)}, qh = load32(b + 128 + 32 * n);
    for (int k = 0; k < 4; ++k) {
      const int i = 8 * n + 2 * k;
      const Bytes32 q = minus(field(ql[k % 2], 4 * (k / 2), 4, 0) | field(qh, 2 * k, 2, 4), 32);
      floats32<false>(q, d * static_cast<float>(sc[i]), 0.0f, d * static_cast<float>(sc[i + 1]), 0.0f,
                      y, 128 * n + 32 * k);
    }
  }
}

// IQ4_XS {f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]}: 8 sub-blocks of
// 32, each a 6-bit scale (the low nibble from scales_l, the top 2 bits from
// scales_h) and IQ4_NL's nibbles.                     x = d·(s − 32) · kvalues[q]
template <class Out>
void iq4_xs(const uint8_t* b, Out& y) {
  const float d = half(b);
  uint16_t sh;
  std::memcpy(&sh, b + 2, 2);
  const uint8_t* sl = b + 4;
  for (int i = 0; i < 8; ++i) {
    const int s = (sl[i / 2] >> 4 * (i % 2) & 0xF) | (sh >> 2 * i & 3) << 4;
    scaled32(lookup16(nibbles16(b + 8 + 16 * i), kIq4NlValues), d * static_cast<float>(s - 32), y, 32 * i);
  }
}

// [SECTION] Rows times x, factored
// A sub-block's weights share their scale (and minimum or offset), so its
// share of a row's product is the quants times x as they are, scaled once:
//   Q4_K, Q5_K   d·s · Σ q·x − dmin·m · Σx    sub-blocks of 32
//   Q6_K         d·s · (Σ q·x − 32 · Σx)      sub-blocks of 16
// with Σx summed once for every row (`xsum`), instead of a float decoded
// per weight. The same sum as the decoded weights times x up to float
// rounding.
#ifdef __AVX2__
// Lanes of the quants' products: 16 where the build has AVX-512 (half the
// instructions a weight), else 8.
#ifdef __AVX512F__
constexpr int kLanes = 16;
using Ints = __m512i;
using Floats = __m512;
Ints bytesAsInts(const uint8_t* p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
Ints signedBytesAsInts(const uint8_t* p) { return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
Ints either(Ints a, Ints b) { return _mm512_or_si512(a, b); }
Ints shifted(Ints a, int by) {
  return by > 0 ? _mm512_slli_epi32(a, static_cast<unsigned>(by)) : by < 0 ? _mm512_srli_epi32(a, static_cast<unsigned>(-by)) : a;
}
Ints masked(Ints a, int mask) { return _mm512_and_si512(a, _mm512_set1_epi32(mask)); }
Floats floatsOf(float v) { return _mm512_set1_ps(v); }
Floats toFloats(Ints a) { return _mm512_cvtepi32_ps(a); }
Floats loadFloats(const float* p) { return _mm512_loadu_ps(p); }
void storeFloats(float* p, Floats a) { _mm512_storeu_ps(p, a); }
Floats fma(Floats a, Floats b, Floats c) { return _mm512_fmadd_ps(a, b, c); }
Floats mul(Floats a, Floats b) { return _mm512_mul_ps(a, b); }
Floats add(Floats a, Floats b) { return _mm512_add_ps(a, b); }
// The two halves' sum.
__m256 eight(Floats a) {
  return _mm256_add_ps(_mm512_castps512_ps256(a), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
}
#else
constexpr int kLanes = 8;
using Ints = __m256i;
using Floats = __m256;
Ints bytesAsInts(const uint8_t* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
Ints signedBytesAsInts(const uint8_t* p) { return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
Ints either(Ints a, Ints b) { return _mm256_or_si256(a, b); }
Ints shifted(Ints a, int by) { return by > 0 ? _mm256_slli_epi32(a, by) : by < 0 ? _mm256_srli_epi32(a, -by) : a; }
Ints masked(Ints a, int mask) { return _mm256_and_si256(a, _mm256_set1_epi32(mask)); }
Floats floatsOf(float v) { return _mm256_set1_ps(v); }
Floats toFloats(Ints a) { return _mm256_cvtepi32_ps(a); }
Floats loadFloats(const float* p) { return _mm256_loadu_ps(p); }
void storeFloats(float* p, Floats a) { _mm256_storeu_ps(p, a); }
Floats fma(Floats a, Floats b, Floats c) { return _mm256_fmadd_ps(a, b, c); }
Floats mul(Floats a, Floats b) { return _mm256_mul_ps(a, b); }
Floats add(Floats a, Floats b) { return _mm256_add_ps(a, b); }
__m256 eight(Floats a) { return a; }
#endif
// Each int's bits shift‥shift + width − 1 (of the byte it was), moved to
// bit `to`: one shift at most (none where they are in place) and a mask,
// which a field ending at the byte's top needs none of where no bit below
// it is left (an instruction less for every kLanes weights).
Ints bitsAt(Ints a, int shift, int width, int to) {
  a = shifted(a, to - shift);
  return shift + width < 8 || (shift > 0 && to > 0) ? masked(a, ((1 << width) - 1) << to) : a;
}
// The 8 lanes' sum, as a tree.
float sum8(__m256 a) {
  const __m128 four = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
  return _mm_cvtss_f32(_mm_add_ss(two, _mm_movehdup_ps(two)));
}
#endif

template <bool kFifthBit>
float dotRowK(const uint8_t* b, int64_t blocks, const float* x, const float* xsum) {
  constexpr int64_t kBytes = kFifthBit ? 176 : 144;
#ifdef __AVX2__
  Floats acc[2] = {floatsOf(0.0f), floatsOf(0.0f)};
  __m256 mins = _mm256_setzero_ps();
  for (int64_t i = 0; i < blocks; ++i, b += kBytes, x += 256, xsum += 8) {
    uint64_t s, m;  // the 8 scales' and minimums' bytes
    scalesMinsK4(b + 4, s, m);
    const auto floats8 = [](uint64_t v, float scale) {
      return _mm256_mul_ps(_mm256_set1_ps(scale),
                           _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(v)))));
    };
    float ds[8];
    _mm256_storeu_ps(ds, floats8(s, half(b)));
    mins = _mm256_fmadd_ps(floats8(m, half(b + 2)), _mm256_loadu_ps(xsum), mins);
    const uint8_t *qh = b + 16, *qs = b + (kFifthBit ? 48 : 16);
    for (int g = 0; g < 4; ++g) {  // sub-blocks 2g (the low nibbles of 32 bytes) and 2g + 1 (the high ones)
      Floats p[2] = {floatsOf(0.0f), floatsOf(0.0f)};
      for (int k = 0; k < 32; k += kLanes) {
        const Ints v = bytesAsInts(qs + 32 * g + k);
        Ints q[2] = {bitsAt(v, 0, 4, 0), bitsAt(v, 4, 4, 0)};
        if (kFifthBit) {
          const Ints h = bytesAsInts(qh + k);
          for (int j = 0; j < 2; ++j) q[j] = either(q[j], bitsAt(h, 2 * g + j, 1, 4));
        }
        for (int j = 0; j < 2; ++j) p[j] = fma(toFloats(q[j]), loadFloats(x + 64 * g + 32 * j + k), p[j]);
      }
      for (int j = 0; j < 2; ++j) acc[j] = fma(floatsOf(ds[2 * g + j]), p[j], acc[j]);
    }
  }
  return sum8(_mm256_sub_ps(eight(add(acc[0], acc[1])), mins));
#else
  float acc = 0.0f, mins = 0.0f;
  for (int64_t i = 0; i < blocks; ++i, b += kBytes, x += 256, xsum += 8) {
    const float d = half(b), dmin = half(b + 2);
    uint64_t sc, m;
    scalesMinsK4(b + 4, sc, m);
    const uint8_t *qh = b + 16, *qs = b + (kFifthBit ? 48 : 16);
    for (int j = 0; j < 8; ++j) {
      float p = 0.0f;
      for (int l = 0; l < 32; ++l) {
        int q = qs[32 * (j / 2) + l] >> 4 * (j % 2) & 0xF;
        if (kFifthBit) q |= (qh[l] >> j & 1) << 4;
        p += static_cast<float>(q) * x[32 * j + l];
      }
      acc += d * byteOf(sc, j) * p, mins += dmin * byteOf(m, j) * xsum[j];
    }
  }
  return acc - mins;
#endif
}

// Q6_K (the layout at q6_K above): the 16 sub-blocks' d·s, then each 16
// values' quants, the low 4 bits and the top 2 put together, times x.
float dotRowQ6K(const uint8_t* b, int64_t blocks, const float* x, const float* xsum) {
#ifdef __AVX2__
  Floats acc[2] = {floatsOf(0.0f), floatsOf(0.0f)}, offsets = floatsOf(0.0f);  // offsets: Σ d·s · Σx
  for (int64_t i = 0; i < blocks; ++i, b += 210, x += 256, xsum += 16) {
    float ds[16];
    for (int j = 0; j < 16; j += kLanes) {
      const Floats v = mul(floatsOf(half(b + 208)), toFloats(signedBytesAsInts(b + 192 + j)));
      storeFloats(ds + j, v);
      offsets = fma(v, loadFloats(xsum + j), offsets);
    }
    for (int n = 0; n < 2; ++n)
      for (int l = 0; l < 32; l += kLanes) {  // values 128·n + 32·k + l‥, of sub-block 8·n + 2·k + l/16
        const Ints top = bytesAsInts(b + 128 + 32 * n + l),
                   low[2] = {bytesAsInts(b + 64 * n + l), bytesAsInts(b + 64 * n + 32 + l)};
        for (int k = 0; k < 4; ++k) {
          const Floats q = toFloats(either(bitsAt(low[k % 2], 4 * (k / 2), 4, 0), bitsAt(top, 2 * k, 2, 4)));
          acc[k % 2] = fma(mul(floatsOf(ds[8 * n + 2 * k + l / 16]), q), loadFloats(x + 128 * n + 32 * k + l), acc[k % 2]);
        }
      }
  }
  return sum8(eight(add(acc[0], acc[1]))) - 32.0f * sum8(eight(offsets));
#else
  float acc = 0.0f, offsets = 0.0f;
  for (int64_t i = 0; i < blocks; ++i, b += 210, x += 256, xsum += 16) {
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
    const float d = half(b + 208);
    for (int j = 0; j < 16; ++j) offsets += d * static_cast<float>(sc[j]) * xsum[j];
    for (int v = 0; v < 256; ++v) {
      const int n = v / 128, k = v % 128 / 32, l = v % 32;
      const int q = (b[64 * n + 32 * (k % 2) + l] >> 4 * (k / 2) & 0xF) | (b[128 + 32 * n + l] >> 2 * k & 3) << 4;
      acc += d * static_cast<float>(sc[v / 16]) * static_cast<float>(q) * x[v];
    }
  }
  return acc - 32.0f * offsets;
#endif
}

// f(decode), decode(block, out) being type t's decoder; `what` names the
// caller when t is not a block type.
template <class F>
void withDecoder(DType t, const char* what, F&& f) {
  switch (t) {
    case DType::Q8_0: return f([](const uint8_t* b, auto& out) { q8_0(b, out); });
    case DType::Q4_0: return f([](const uint8_t* b, auto& out) { q4_0(b, out); });
    case DType::Q4_1: return f([](const uint8_t* b, auto& out) { q4_1(b, out); });
    case DType::Q5_0: return f([](const uint8_t* b, auto& out) { q5_0(b, out); });
    case DType::Q5_1: return f([](const uint8_t* b, auto& out) { q5_1(b, out); });
    case DType::Q2_K: return f([](const uint8_t* b, auto& out) { q2_K(b, out); });
    case DType::Q3_K: return f([](const uint8_t* b, auto& out) { q3_K(b, out); });
    case DType::Q4_K: return f([](const uint8_t* b, auto& out) { q4_K(b, out); });
    case DType::Q5_K: return f([](const uint8_t* b, auto& out) { q5_K(b, out); });
    case DType::Q6_K: return f([](const uint8_t* b, auto& out) { q6_K(b, out); });
    case DType::IQ4_NL: return f([](const uint8_t* b, auto& out) { iq4_nl(b, out); });
    case DType::IQ4_XS: return f([](const uint8_t* b, auto& out) { iq4_xs(b, out); });
    default: break;
  }
  throw std::logic_error(std::string(what) + ": " + dtypeName(t) + " is not a block type");
}

}  // namespace

const int8_t kIq4NlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

void dequantize(DType t, const uint8_t* src, int64_t count, float* out) {
  const BlockLayout b = blockLayout(t);
  withDecoder(t, "dequantize", [&](auto decode) {
    const int64_t n = count / b.values;
#pragma omp parallel for schedule(static) if (count > (int64_t{1} << 20))
    for (int64_t i = 0; i < n; ++i) {
      Store store{out + i * b.values};
      decode(src + i * b.bytes, store);
    }
  });
}

void dotRows(DType t, const uint8_t* src, int64_t rows, int64_t cols, const float* x, float* y) {
  const BlockLayout b = blockLayout(t);
  if ((t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K) && rows > 0) {
    // Σx of each sub-block, once for every row.
    const int sub = t == DType::Q6_K ? 16 : 32;
    std::vector<float> xsum(static_cast<size_t>(cols / sub));
    for (size_t j = 0; j < xsum.size(); ++j) {
      float s = 0.0f;
      for (int l = 0; l < sub; ++l) s += x[static_cast<size_t>(sub) * j + static_cast<size_t>(l)];
      xsum[j] = s;
    }
    const int64_t per_row = cols / b.values;
#pragma omp parallel for schedule(static) if (rows * cols > (int64_t{1} << 20))
    for (int64_t o = 0; o < rows; ++o) {
      const uint8_t* row = src + o * per_row * b.bytes;
      switch (t) {
        case DType::Q4_K: y[o] = dotRowK<false>(row, per_row, x, xsum.data()); break;
        case DType::Q5_K: y[o] = dotRowK<true>(row, per_row, x, xsum.data()); break;
        default: y[o] = dotRowQ6K(row, per_row, x, xsum.data()); break;
      }
    }
    return;
  }
  withDecoder(t, "dotRows", [&](auto decode) {
    const int64_t per_row = cols / b.values;
#pragma omp parallel for schedule(static) if (rows * cols > (int64_t{1} << 20))
    for (int64_t o = 0; o < rows; ++o) {
      const uint8_t* row = src + o * per_row * b.bytes;
      Dot dot{x};
      for (int64_t i = 0; i < per_row; ++i) {
        dot.x = x + i * b.values;
        decode(row + i * b.bytes, dot);
      }
      y[o] = dot.sum();
    }
  });
}

}  // namespace attn
