// libFuzzer target: a whole .gguf file. The header must be refused with
// InputError or admitted, every admitted tensor readable (dequantized to
// float32), and an admitted file read as its model (architecture, keys →
// config.json, tensor names, the tokenizer from its metadata, every weight's
// values checked by the loader) or refused with InputError, without touching
// bytes outside the input.
#include "engine/error.h"
#include "engine/model/checkpoint/gguf.h"
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/model.h"

#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const attn::GgufHeader h = attn::parseGgufHeader(data, size, "fuzz.gguf");
    std::vector<float> values;
    volatile float sink = 0;
    for (const attn::GgufTensor& t : h.tensors) {
      values.resize(static_cast<size_t>(t.elements()));
      attn::toFloats(t.type, data + h.data_start + t.offset, t.elements(), values.data());
      for (const float v : values) sink = sink + v;
    }
    const std::shared_ptr<const attn::Model> m = attn::loadModel(attn::ggufModelFiles(data, size, nullptr, "fuzz.gguf"));
    attn::modelTokenizer(*m).encode("Hello, world! 12 héllo");
  } catch (const attn::InputError&) {
  }
  return 0;
}
