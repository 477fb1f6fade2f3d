// PLACEHOLDER until the quantizers land: the plain float types only.
#include "engine/model/checkpoint/quants.h"

#include "engine/tensor.h"

#include <cstring>
#include <stdexcept>

namespace attn {

std::vector<uint8_t> quantize(DType t, const float* x, int64_t count) {
  std::vector<uint8_t> out(storedBytes(t, static_cast<uint64_t>(count)));
  for (int64_t i = 0; i < count; ++i) {
    if (t == DType::F32) {
      std::memcpy(out.data() + 4 * i, x + i, 4);
    } else if (t == DType::F16 || t == DType::BF16) {
      const uint16_t b = t == DType::F16 ? Eigen::numext::bit_cast<uint16_t>(Eigen::half(x[i]))
                                         : Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(x[i]));
      std::memcpy(out.data() + 2 * i, &b, 2);
    } else {
      throw std::logic_error("quantize: " + dtypeName(t) + " not yet");
    }
  }
  return out;
}

}  // namespace attn
