// The writer's side of engine/model/checkpoint/quants.h, for test fixtures
// only: floats quantized into ggml's block types as ggml's reference
// quantizers (quantize_row_*_ref in ggml-quants.c) do, so that a GGUF file
// the tests write holds what llama.cpp's converter would.
#pragma once

#include "engine/model/checkpoint/safetensors.h"

#include <cstdint>
#include <vector>

namespace attn::test {

// `count` floats (a whole number of blocks of t) stored as type t (any float
// type but I64: F32, F16 and BF16 as plain little-endian values).
std::vector<uint8_t> quantizeBlocks(DType t, const float* x, int64_t count);

}  // namespace attn::test
