// ggml's block types (engine/model/checkpoint/quants.h), read and written:
// blocks built field by field from ggml's layouts (ggml-common.h) decode bit
// for bit as a double-precision reading of those fields; quantize → dequantize round trips stay within
// each type's known error; rows read in ranges, as linearTiled16 reads a
// tile, equal the whole tensor's; rows times a vector without dequantizing
// them equal the dequantized weights' products; no blocks at all; and both
// sides equal ggml itself (libggml-base.so from npm's @node-llama-cpp/linux-x64).
#include "engine/model/checkpoint/quants.h"
#include "engine/tensor.h"  // Eigen::half

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <random>

namespace attn {

// GoogleTest names a type parameter by this (ctest lists "… # GetParam() = Q4_K").
static void PrintTo(DType t, std::ostream* os) { *os << dtypeName(t); }

namespace quants_test {
namespace {

const DType kBlockTypes[] = {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0,   DType::Q5_1,  DType::Q2_K,
                             DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_NL, DType::IQ4_XS};

std::string typeName(const ::testing::TestParamInfo<DType>& info) { return dtypeName(info.param); }

// Floats compared as bits: a zero's sign and a NaN's payload count.
int64_t bitsDiffering(const float* a, const float* b, int64_t n) {
  int64_t d = 0;
  for (int64_t i = 0; i < n; ++i) d += std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i]);
  return d;
}

// [SECTION] (a) ggml's layouts, one value at a time
// ggml-common.h's kvalues_iq4nl, as the format defines them.
constexpr int kIq4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// One block's fields drawn and written bit by bit at the offsets ggml's
// block structs give them. Block 0 takes every field at its largest, block
// 1 every field 0 (a zero weight keeps the sign of its scale), the rest at
// random; the f16 scales are random normal halves of either sign,
// 2⁻¹⁰‥2², so every product and sum below is exact in double and the
// expected float is rounded once, as ggml's float arithmetic rounds it.
class Fields {
 public:
  Fields(uint8_t* block, int which, std::mt19937& rng) : b_(block), which_(which), rng_(rng) {}
  // `width` bits of a drawn value from bit `bit` of byte `byte` on (a field may cross bytes).
  int field(int64_t byte, int bit, int width) {
    const int v = which_ == 0 ? (1 << width) - 1 : which_ == 1 ? 0 : static_cast<int>(rng_() & ((1u << width) - 1));
    put(byte, bit, width, v);
    return v;
  }
  void put(int64_t byte, int bit, int width, int v) {
    for (int i = 0; i < width; ++i)
      if (v >> i & 1) b_[byte + (bit + i) / 8] |= static_cast<uint8_t>(1 << (bit + i) % 8);
  }
  double scale(int64_t byte) {
    const int sign = rng_() & 1 ? -1 : 1, mantissa = static_cast<int>(rng_() % 1024), exponent = static_cast<int>(rng_() % 13) - 10;
    const float v = static_cast<float>(sign * std::ldexp(1.0 + mantissa / 1024.0, exponent));
    const uint16_t bits = Eigen::numext::bit_cast<uint16_t>(Eigen::half(v));
    put(byte, 0, 16, bits);
    return static_cast<double>(static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits)));
  }

 private:
  uint8_t* b_;
  int which_;
  std::mt19937& rng_;
};

// The block's expected floats, value v of 32 or 256, from ggml's formulas.
void expectBlock(DType t, Fields& f, float* x) {
  const auto out = [&](int v, double value) { x[v] = static_cast<float>(value); };
  switch (t) {
    case DType::Q8_0: {  // {f16 d; int8 q[32]}: d·q
      const double d = f.scale(0);
      for (int v = 0; v < 32; ++v) out(v, d * static_cast<int8_t>(f.field(2 + v, 0, 8)));
      return;
    }
    case DType::Q4_0: {  // {f16 d; u8 qs[16]}: d·(q − 8), value v in byte v%16, the high nibble from 16 on
      const double d = f.scale(0);
      for (int v = 0; v < 32; ++v) out(v, (f.field(2 + v % 16, v / 16 * 4, 4) - 8) * d);
      return;
    }
    case DType::Q4_1: {  // {f16 d, m; u8 qs[16]}: d·q + m
      const double d = f.scale(0), m = f.scale(2);
      for (int v = 0; v < 32; ++v) out(v, f.field(4 + v % 16, v / 16 * 4, 4) * d + m);
      return;
    }
    case DType::Q5_0:    // {f16 d; u32 qh; u8 qs[16]}: d·(q − 16), the fifth bit of value v at bit v of qh
    case DType::Q5_1: {  // {f16 d, m; u32 qh; u8 qs[16]}: d·q + m
      const bool min = t == DType::Q5_1;
      const double d = f.scale(0), m = min ? f.scale(2) : 0;
      const int qh = min ? 4 : 2, qs = qh + 4;
      for (int v = 0; v < 32; ++v) {
        const int q = f.field(qs + v % 16, v / 16 * 4, 4) | f.field(qh + v / 8, v % 8, 1) << 4;
        out(v, min ? q * d + m : (q - 16) * d);
      }
      return;
    }
    case DType::Q2_K: {  // {u8 scales[16]; u8 qs[64]; f16 d, dmin}: d·s·q − dmin·m per 16 values
      int s[16], m[16];
      for (int i = 0; i < 16; ++i) s[i] = f.field(i, 0, 4), m[i] = f.field(i, 4, 4);
      const double d = f.scale(80), dmin = f.scale(82);
      for (int v = 0; v < 256; ++v) {
        const int q = f.field(16 + 32 * (v / 128) + v % 32, 2 * (v % 128 / 32), 2);
        out(v, d * s[v / 16] * q - dmin * m[v / 16]);
      }
      return;
    }
    case DType::Q3_K: {  // {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}: d·(s − 32)·(q − 4·!h)
      int s[16];
      for (int i = 0; i < 16; ++i) s[i] = f.field(96 + i % 8, i / 8 * 4, 4) | f.field(104 + i % 4, 2 * (i / 4), 2) << 4;
      const double d = f.scale(108);
      for (int v = 0; v < 256; ++v) {
        const int low = f.field(32 + 32 * (v / 128) + v % 32, 2 * (v % 128 / 32), 2), h = f.field(v % 32, v / 32, 1);
        out(v, d * (s[v / 16] - 32) * (low - (h ? 0 : 4)));
      }
      return;
    }
    case DType::Q4_K:    // {f16 d, dmin; u8 scales[12]; u8 qs[128]}: d·s·q − dmin·m per 32 values
    case DType::Q5_K: {  // {f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: the fifth bit of v at bit v/32 of qh[v%32]
      const double d = f.scale(0), dmin = f.scale(2);
      int s[8], m[8];
      for (int j = 0; j < 8; ++j)
        if (j < 4) {
          s[j] = f.field(4 + j, 0, 6), m[j] = f.field(8 + j, 0, 6);
        } else {  // low 4 bits in byte 8 + j's nibbles, the top 2 in bits 6‥7 of bytes j − 4 and j
          s[j] = f.field(8 + j, 0, 4) | f.field(j, 6, 2) << 4;
          m[j] = f.field(8 + j, 4, 4) | f.field(4 + j, 6, 2) << 4;
        }
      const bool five = t == DType::Q5_K;
      const int qs = five ? 48 : 16;
      for (int v = 0; v < 256; ++v) {
        int q = f.field(qs + 32 * (v / 64) + v % 32, v % 64 / 32 * 4, 4);
        if (five) q |= f.field(16 + v % 32, v / 32, 1) << 4;
        out(v, d * s[v / 32] * q - dmin * m[v / 32]);
      }
      return;
    }
    case DType::Q6_K: {  // {u8 ql[128]; u8 qh[64]; int8 scales[16]; f16 d}: d·s·(q − 32) per 16 values
      int s[16];
      for (int i = 0; i < 16; ++i) s[i] = static_cast<int8_t>(f.field(192 + i, 0, 8));
      const double d = f.scale(208);
      for (int v = 0; v < 256; ++v) {
        const int k = v % 128 / 32;  // which quarter of its half: low 4 bits from ql at +32·(k%2), the high nibble for k ≥ 2
        const int q = f.field(64 * (v / 128) + v % 32 + 32 * (k % 2), k / 2 * 4, 4) |
                      f.field(128 + 32 * (v / 128) + v % 32, 2 * k, 2) << 4;
        out(v, d * s[v / 16] * (q - 32));
      }
      return;
    }
    case DType::IQ4_NL: {  // {f16 d; u8 qs[16]}: d·kvalues[q]
      const double d = f.scale(0);
      for (int v = 0; v < 32; ++v) out(v, d * kIq4Levels[f.field(2 + v % 16, v / 16 * 4, 4)]);
      return;
    }
    case DType::IQ4_XS: {  // {f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]}: d·(s − 32)·kvalues[q] per 32 values
      const double d = f.scale(0);
      int s[8];
      for (int i = 0; i < 8; ++i) s[i] = f.field(4 + i / 2, i % 2 * 4, 4) | f.field(2, 2 * i, 2) << 4;
      for (int v = 0; v < 256; ++v)
        out(v, d * (s[v / 32] - 32) * kIq4Levels[f.field(8 + 16 * (v / 32) + v % 16, v % 32 / 16 * 4, 4)]);
      return;
    }
    default: FAIL() << dtypeName(t) << " is not a block type";
  }
}

class QuantsLayout : public ::testing::TestWithParam<DType> {};

TEST_P(QuantsLayout, EveryFieldDecodedBitForBit) {
  const DType t = GetParam();
  const BlockLayout b = blockLayout(t);
  constexpr int kBlocks = 40;
  std::vector<uint8_t> bytes(static_cast<size_t>(kBlocks * b.bytes), 0);
  std::vector<float> expected(static_cast<size_t>(kBlocks * b.values));
  std::mt19937 rng(7);
  for (int i = 0; i < kBlocks; ++i) {
    Fields f(bytes.data() + i * b.bytes, i, rng);
    expectBlock(t, f, expected.data() + i * b.values);
  }
  std::vector<float> got(expected.size());
  dequantize(t, bytes.data(), kBlocks * b.values, got.data());
  EXPECT_EQ(bitsDiffering(got.data(), expected.data(), kBlocks * b.values), 0);
  for (int64_t v = 0; v < kBlocks * b.values; ++v)
    if (std::bit_cast<uint32_t>(got[v]) != std::bit_cast<uint32_t>(expected[v])) {
      ADD_FAILURE() << "block " << v / b.values << " value " << v % b.values << ": " << got[v] << ", expected " << expected[v];
      break;
    }
}

INSTANTIATE_TEST_SUITE_P(Types, QuantsLayout, ::testing::ValuesIn(kBlockTypes), typeName);

// [SECTION] (b) Round trips within each type's known error

// Seeded weights: normal (σ 0.02, a layer's scale) and the same with 1 % outliers at 30σ.
std::vector<float> weights(int64_t n, bool outliers, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::normal_distribution<float> normal(0, 0.02f);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = normal(rng) * (outliers && u(rng) < 0.01f ? 30.0f : 1.0f);
  return x;
}

std::vector<float> roundTrip(DType t, const std::vector<float>& x) {
  const std::vector<uint8_t> q = quantize(t, x.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(q.size(), storedBytes(t, x.size()));
  std::vector<float> y(x.size());
  toFloats(t, q.data(), static_cast<int64_t>(x.size()), y.data());
  return y;
}

// The 32-value types, value by value: round to nearest is within half a
// step, d/2, plus the f16 rounding of the stored scale (2⁻¹¹ relative,
// times |q| ≤ the largest level) and of the stored minimum. Q4_0 and Q5_0
// put the largest magnitude on level 0, so a value of the other sign past
// 15/16 of it clamps to the top level: within a whole step there.
double bound32(DType t, const float* x, int j) {
  const float* end = x + 32;
  double amax = 0, max = 0;
  for (const float* p = x; p != end; ++p)
    if (std::fabs(*p) > amax) amax = std::fabs(*p), max = *p;
  const double lo = *std::min_element(x, end), range = *std::max_element(x, end) - lo;
  const double f16 = std::ldexp(1.0, -11), slack = amax * 1e-6;  // the quantizer's float arithmetic
  switch (t) {
    case DType::Q8_0: return amax / 254 + 127 * (amax / 127) * f16 + slack;  // d = amax/127
    case DType::Q4_0:
    case DType::Q5_0: {
      const double levels = t == DType::Q4_0 ? 8 : 16, d = amax / levels;  // d = max/−levels
      const bool clamped = x[j] * (-levels / max) > levels - 0.5;
      return (clamped ? d : d / 2) + levels * d * f16 + slack;
    }
    case DType::Q4_1:
    case DType::Q5_1: {
      const double top = t == DType::Q4_1 ? 15 : 31, d = range / top;  // m = min, d = range/top
      return d / 2 + top * d * f16 + std::fabs(lo) * f16 + slack;
    }
    default: return 0;
  }
}

// The K and IQ types keep their scales in a search: bounded by the error
// ggml's own quantizers reach on these weights (the same bytes: see
// QuantsAgainstGgml), measured and given 10 % room. rel_rms: RMS error over
// RMS weight, normal weights; block_rms: a 256-value run's RMS error over
// its largest magnitude, with outliers too.
struct SearchBound {
  DType type;
  double rel_rms, block_rms;
};
const SearchBound kSearchBounds[] = {
    {DType::Q2_K, 0.33, 0.135},    {DType::Q3_K, 0.166, 0.066},    {DType::Q4_K, 0.079, 0.032},
    {DType::Q5_K, 0.040, 0.0165},  {DType::Q6_K, 0.0196, 0.008},   {DType::IQ4_NL, 0.084, 0.034},
    {DType::IQ4_XS, 0.085, 0.034},
};

class QuantsRoundTrip : public ::testing::TestWithParam<DType> {};

TEST_P(QuantsRoundTrip, WithinTheTypesError) {
  const DType t = GetParam();
  const int64_t n = 64 * 1024;  // 64 rows of 1024
  for (const bool outliers : {false, true}) {
    SCOPED_TRACE(outliers ? "with outliers" : "normal");
    const std::vector<float> x = weights(n, outliers, 3), y = roundTrip(t, x);
    int64_t over = 0, first = -1;
    double worst = 0;
    const auto check = [&](int64_t i, double bound) {
      const double err = std::fabs(static_cast<double>(x[i]) - y[i]);
      if (err > bound && over++ == 0) first = i;
      worst = std::max(worst, bound > 0 ? err / bound : 0.0);
    };
    const SearchBound* search = nullptr;
    for (const SearchBound& s : kSearchBounds)
      if (s.type == t) search = &s;
    if (t == DType::F32) {
      EXPECT_EQ(bitsDiffering(x.data(), y.data(), n), 0);
    } else if (t == DType::F16) {  // nearest even: half an ulp, 2⁻¹¹ relative, 2⁻²⁵ among subnormals
      for (int64_t i = 0; i < n; ++i) check(i, std::max(std::fabs(x[i]) * std::ldexp(1.0, -11), std::ldexp(1.0, -25)));
    } else if (t == DType::BF16) {  // float's exponents, 8 bits of mantissa
      for (int64_t i = 0; i < n; ++i) check(i, std::fabs(x[i]) * std::ldexp(1.0, -8));
    } else if (!search) {
      for (int64_t i = 0; i < n; ++i) check(i, bound32(t, x.data() + i / 32 * 32, static_cast<int>(i % 32)));
    } else {
      double se = 0, sx = 0;
      for (int64_t i = 0; i < n; ++i) se += (x[i] - y[i]) * (x[i] - y[i]), sx += x[i] * x[i];
      if (!outliers) {
        EXPECT_LE(std::sqrt(se / sx), search->rel_rms);
      }
      for (int64_t b = 0; b < n; b += 256) {
        double e = 0, amax = 0;
        for (int64_t i = b; i < b + 256; ++i) e += (x[i] - y[i]) * (x[i] - y[i]), amax = std::max(amax, std::fabs(static_cast<double>(x[i])));
        EXPECT_LE(std::sqrt(e / 256) / amax, search->block_rms) << "values " << b << "‥" << b + 255;
      }
    }
    EXPECT_EQ(over, 0) << "first at " << first << ": " << x[std::max<int64_t>(first, 0)] << " came back as "
                       << y[std::max<int64_t>(first, 0)] << " (worst " << worst << " of the bound)";
  }
}

INSTANTIATE_TEST_SUITE_P(Types, QuantsRoundTrip,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,
                                           DType::Q5_0, DType::Q5_1, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K,
                                           DType::Q6_K, DType::IQ4_NL, DType::IQ4_XS),
                         typeName);

// ggml's own check (tests/test-quantize-fns.cpp): 4096 values 0.1 + 2·cos(i),
// √Σ(x − y)² / n within 0.0075 for 2 bits, 0.004 for 3, 0.002 for the rest.
TEST(QuantsRoundTripGgml, TestQuantizeFnsData) {
  const int64_t n = 32 * 128;
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(0.1 + 2 * std::cos(static_cast<float>(i)));
  for (const DType t : kBlockTypes) {
    const std::vector<float> y = roundTrip(t, x);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += (static_cast<double>(x[i]) - y[i]) * (x[i] - y[i]);
    const double limit = t == DType::Q2_K ? 0.0075 : t == DType::Q3_K ? 0.004 : 0.002;
    EXPECT_LT(std::sqrt(sum) / static_cast<double>(n), limit) << dtypeName(t);
  }
}

// [SECTION] (c) Row ranges, as linearTiled16 reads a tile
class QuantsRange : public ::testing::TestWithParam<DType> {};

TEST_P(QuantsRange, RowRangesEqualTheWholeTensor) {
  const DType t = GetParam();
  // Past a million values, so the whole tensor is read on the OpenMP threads
  // and each range below on one.
  const int64_t rows = 520, cols = 2048, n = rows * cols;
  ASSERT_GT(n, int64_t{1} << 20);
  const std::vector<float> x = weights(n, false, 11);
  const std::vector<uint8_t> q = quantize(t, x.data(), n);
  std::vector<float> whole(static_cast<size_t>(n));
  toFloats(t, q.data(), n, whole.data());
  for (const int64_t tile : {int64_t{64}, int64_t{256}, int64_t{1}})
    for (int64_t r0 = tile == 1 ? 517 : 0; r0 < rows; r0 += tile) {
      const int64_t count = std::min(tile, rows - r0) * cols;
      std::vector<float> part(static_cast<size_t>(count));
      toFloats(t, q.data() + storedBytes(t, static_cast<uint64_t>(r0 * cols)), count, part.data());
      EXPECT_EQ(bitsDiffering(part.data(), whole.data() + r0 * cols, count), 0) << "rows from " << r0 << ", tile " << tile;
    }
}

INSTANTIATE_TEST_SUITE_P(Types, QuantsRange, ::testing::ValuesIn(kBlockTypes), typeName);

// [SECTION] Products without dequantizing
// dotRows against the dequantized weights times x in double: within the
// float sum's own error, each of the 32 lanes adding cols/32 products. Q4_K
// and Q5_K add d·s·q·x and dmin·m·x apart (Σ w·x = Σ d·s·Σq·x − dmin·m·Σx
// over the sub-blocks), each at most (|w| + dmin·m)·|x| as d·s·q = w + dmin·m:
// their rounding is that of a sum of (|w| + 2·dmin·m)·|x|, dmin·m being what
// a block gives with every quant 0 (Q6_K likewise with 32·d·s). x centred on 0, and on 1, where the
// minimums' Σx is largest against Σ w·x.
class QuantsDot : public ::testing::TestWithParam<DType> {};

TEST_P(QuantsDot, RowsTimesXAsTheDequantizedWeights) {
  const DType t = GetParam();
  for (const int64_t rows : {int64_t{7}, int64_t{520}})  // the second past a million weights: on the OpenMP threads
    for (const float centre : {0.0f, 1.0f}) {
      const int64_t cols = 2048, n = rows * cols;
      std::vector<float> w = weights(n, true, 13), x = weights(cols, false, 17);
      for (float& v : x) v += centre;
      const std::vector<uint8_t> q = quantize(t, w.data(), n);
      std::vector<float> deq(static_cast<size_t>(n)), y(static_cast<size_t>(rows)), minimums(static_cast<size_t>(n));
      dequantize(t, q.data(), n, deq.data());
      // The weights with every quant 0: Q4_K's and Q5_K's (qh, qs after d,
      // dmin and 12 bytes of scales) −dmin·m, Q6_K's (ql, qh before the
      // scales) −32·d·s, the offset its factored sum takes off.
      if (t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K) {
        std::vector<uint8_t> zero = q;
        const BlockLayout b = blockLayout(t);
        const int64_t from = t == DType::Q6_K ? 0 : 16, to = t == DType::Q6_K ? 192 : b.bytes;
        for (int64_t at = 0; at < static_cast<int64_t>(zero.size()); at += b.bytes)
          std::fill(zero.begin() + at + from, zero.begin() + at + to, uint8_t{0});
        dequantize(t, zero.data(), n, minimums.data());
      }
      dotRows(t, q.data(), rows, cols, x.data(), y.data());
      for (int64_t o = 0; o < rows; ++o) {
        double ref = 0, mag = 0;
        for (int64_t j = 0; j < cols; ++j) {
          const double wj = deq[o * cols + j], mj = minimums[o * cols + j];
          ref += wj * x[j], mag += (std::fabs(wj) + 2 * std::fabs(mj)) * std::fabs(x[j]);
        }
        ASSERT_LE(std::fabs(y[o] - ref), static_cast<double>(cols / 32 + 8) * std::ldexp(mag, -24))
            << "row " << o << " of " << rows << ", x around " << centre;
      }
    }
  dotRows(t, nullptr, 0, 2048, nullptr, nullptr);  // no rows
}

INSTANTIATE_TEST_SUITE_P(Types, QuantsDot, ::testing::ValuesIn(kBlockTypes), typeName);

// [SECTION] (d) No blocks
TEST(QuantsEdge, NoBlocksTouchNothing) {
  for (const DType t : kBlockTypes) {
    EXPECT_TRUE(isQuantized(t)) << dtypeName(t);
    EXPECT_NO_THROW(dequantize(t, nullptr, 0, nullptr)) << dtypeName(t);
    EXPECT_NO_THROW(toFloats(t, nullptr, 0, nullptr)) << dtypeName(t);
    EXPECT_TRUE(quantize(t, nullptr, 0).empty()) << dtypeName(t);
  }
  for (const DType t : {DType::F32, DType::F16, DType::BF16}) {
    EXPECT_FALSE(isQuantized(t));
    EXPECT_THROW(dequantize(t, nullptr, 0, nullptr), std::logic_error) << dtypeName(t);
    EXPECT_THROW(dotRows(t, nullptr, 0, 0, nullptr, nullptr), std::logic_error) << dtypeName(t);
  }
  const float x[16] = {};
  EXPECT_THROW(quantize(DType::Q8_0, x, 16), std::logic_error);  // half a block
}

// [SECTION] ggml itself
// libggml-base.so from @node-llama-cpp/linux-x64 (scripts/test.sh installs
// it): its quantize_<type> without an importance matrix (what llama-quantize
// writes) and dequantize_row_<type>, against the test quantizers' bytes and
// dequantize()'s floats, on normal weights, outliers, ggml's cosine and
// blocks with zeros; and dequantize_row on random bytes (any f16 scale,
// infinities and NaNs too).
class QuantsAgainstGgml : public ::testing::TestWithParam<DType> {};

TEST_P(QuantsAgainstGgml, SameBytesSameFloats) {
  const std::filesystem::path lib =
      std::filesystem::path(ATTNLAB_NPM_DIR) / "node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so";
  void* ggml = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(ggml) << lib.string() << " did not load (" << dlerror()
                    << "); install it with: npm install --prefix " << ATTNLAB_NPM_DIR << " @node-llama-cpp/linux-x64@3.22.1";
  std::string name = dtypeName(GetParam());
  std::transform(name.begin(), name.end(), name.begin(), [](char c) { return c == 'K' ? c : static_cast<char>(std::tolower(c)); });
  using Quantize = size_t (*)(const float*, void*, int64_t rows, int64_t cols, const float* imatrix);
  using Dequantize = void (*)(const void*, float*, int64_t);
  const auto ggmlQuantize = reinterpret_cast<Quantize>(dlsym(ggml, ("quantize_" + name).c_str()));
  const auto dequantizeRow = reinterpret_cast<Dequantize>(dlsym(ggml, ("dequantize_row_" + name).c_str()));
  ASSERT_TRUE(ggmlQuantize && dequantizeRow) << name;

  const DType t = GetParam();
  const int64_t rows = 16, cols = 1024, n = rows * cols;
  std::vector<float> cosine(static_cast<size_t>(n)), sparse = weights(n, false, 5);
  for (int64_t i = 0; i < n; ++i) cosine[i] = static_cast<float>(0.1 + 2 * std::cos(static_cast<float>(i)));
  std::fill_n(sparse.begin(), 512, 0.0f);  // whole blocks of zeros
  for (int64_t i = 0; i < n; i += 3) sparse[i] = 0;
  const std::vector<float> datasets[] = {weights(n, false, 1), weights(n, true, 2), cosine, sparse};
  for (const std::vector<float>& x : datasets) {
    std::vector<uint8_t> theirs(storedBytes(t, n));
    ASSERT_EQ(ggmlQuantize(x.data(), theirs.data(), rows, cols, nullptr), theirs.size());
    EXPECT_EQ(quantize(t, x.data(), n), theirs) << "bytes differ";
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    dequantizeRow(theirs.data(), a.data(), n);
    dequantize(t, theirs.data(), n, b.data());
    EXPECT_EQ(bitsDiffering(a.data(), b.data(), n), 0);
  }
  std::mt19937 rng(9);
  std::vector<uint8_t> noise(storedBytes(t, n));
  for (uint8_t& c : noise) c = static_cast<uint8_t>(rng());
  std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  dequantizeRow(noise.data(), a.data(), n);
  dequantize(t, noise.data(), n, b.data());
  int64_t differ = 0;
  for (int64_t i = 0; i < n; ++i)
    differ += std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i]) && !(std::isnan(a[i]) && std::isnan(b[i]));
  EXPECT_EQ(differ, 0) << "random bytes";
  dlclose(ggml);
}

INSTANTIATE_TEST_SUITE_P(Types, QuantsAgainstGgml, ::testing::ValuesIn(kBlockTypes), typeName);

}  // namespace
}  // namespace quants_test
}  // namespace attn
