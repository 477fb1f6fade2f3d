// LOCAL STUB (not committed): the helper's real file replaces it.
#include "tests/ggml_quantize.h"
#include "engine/tensor.h"
#include <cstring>
#include <stdexcept>
namespace attn::test {
std::vector<uint8_t> quantizeBlocks(DType t, const float* x, int64_t count) {
  std::vector<uint8_t> out(storedBytes(t, static_cast<uint64_t>(count)));
  if (t == DType::F32) { std::memcpy(out.data(), x, out.size()); return out; }
  if (t == DType::F16) { for (int64_t i = 0; i < count; ++i) { uint16_t b = Eigen::numext::bit_cast<uint16_t>(Eigen::half(x[i])); std::memcpy(out.data() + 2 * i, &b, 2);} return out; }
  if (t == DType::BF16) { for (int64_t i = 0; i < count; ++i) { uint16_t b = Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(x[i])); std::memcpy(out.data() + 2 * i, &b, 2);} return out; }
  throw std::logic_error("stub");
}
}
