// The writer's side of engine/model/checkpoint/quants.h, for test fixtures
// only: floats quantized into ggml's block types as ggml's reference
// quantizers (quantize_row_*_ref in ggml-quants.c; IQ4_NL as quantize_iq4_nl
// without an importance matrix, the scale search llama-quantize runs) do,
// byte for byte (quants_test checks it against ggml's own library), so that
// a GGUF file the tests write holds what llama.cpp's converter would.
#pragma once

#include "engine/model/checkpoint/safetensors.h"

#include <cstdint>
#include <ostream>
#include <vector>

namespace attn {
// A DType as GoogleTest prints a test parameter ("Q4_K"; found by argument-dependent lookup).
void PrintTo(DType t, std::ostream* os);
}  // namespace attn

namespace attn::test {

// `count` floats (a whole number of blocks of t) stored as type t (any float
// type but I64: F32, F16 and BF16 as plain little-endian values).
std::vector<uint8_t> quantizeBlocks(DType t, const float* x, int64_t count);

}  // namespace attn::test
