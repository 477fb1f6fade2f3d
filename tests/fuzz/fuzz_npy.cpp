// libFuzzer target: a whole .npy file (any version, dtype, order, shape).
// It must be refused with InputError or admitted; an admitted array has as
// many values as its shape says, all of them finite, and encodes back to a
// file that parses to the same array. Rank-2 arrays are also turned into
// the engine's matrix, as every input file is.
#include "engine/error.h"
#include "engine/inputs.h"
#include "engine/npy.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  attn::Array a;
  try {
    a = attn::parseNpy(bytes, "fuzz.npy");
  } catch (const attn::InputError&) {
    return 0;
  }
  uint64_t n = 1;
  for (const int64_t d : a.shape) {
    if (d < 0) std::abort();
    n *= static_cast<uint64_t>(d);
  }
  if (n != a.data.size()) std::abort();
  for (const float v : a.data)
    if (!std::isfinite(v)) std::abort();
  if (attn::parseNpy(attn::encodeNpy(a), "round trip").data != a.data) std::abort();
  try {
    attn::checkInputMagnitude(a.data, "fuzz.npy");
    const attn::Mat m = a.toMat("fuzz.npy");
    if (static_cast<uint64_t>(m.size()) != n) std::abort();
  } catch (const attn::InputError&) {
  }
  return 0;
}
