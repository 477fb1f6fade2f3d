// libFuzzer target: a whole .safetensors file. The header must be rejected
// with InputError or admitted, and every admitted tensor must be readable
// (converted to float32) without touching bytes outside the input.
#include "engine/error.h"
#include "engine/model/checkpoint/safetensors.h"

#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto file = attn::SafetensorsFile::fromMemory(data, size, "fuzz.safetensors");
    std::vector<float> storage;
    volatile float sink = 0;
    for (const attn::TensorEntry& t : file->header().tensors) {
      const float* values = file->floats(t, storage);
      for (int64_t i = 0; i < t.elements(); ++i) sink = sink + values[i];
    }
  } catch (const attn::InputError&) {
  }
  return 0;
}
