#include "engine/model/checkpoint/quants.h"

#include "engine/tensor.h"  // Eigen::half

#include <cstring>
#include <stdexcept>

namespace attn {

bool isQuantized(DType t) { return blockLayout(t).values > 1; }

namespace {

float half(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

// Q8_0: {f16 d; int8 q[32]}: x = d · q
void q8_0(const uint8_t* b, float* out) {
  const float d = half(b);
  for (int i = 0; i < 32; ++i) out[i] = d * static_cast<float>(static_cast<int8_t>(b[2 + i]));
}

}  // namespace

void dequantize(DType t, const uint8_t* src, int64_t count, float* out) {
  const BlockLayout b = blockLayout(t);
  const int64_t blocks = count / b.values;
  switch (t) {
    case DType::Q8_0:
      for (int64_t i = 0; i < blocks; ++i) q8_0(src + i * b.bytes, out + i * b.values);
      return;
    default: break;
  }
  throw std::logic_error("dequantize: " + dtypeName(t) + " is not a block type this build reads");
}

}  // namespace attn
