// ggml's block-quantized weights, as GGUF files store them (ggml-common.h,
// ggml-quants.c): a row of a matrix is a run of blocks, each `values`
// weights in `bytes`, with its own scale (and minimum, or sub-block scales
// for the K types). dequantize() turns whole blocks into floats, a tile of
// rows at a time where a layer runs (linearTiled16), so a quantized model is
// never expanded whole; quantize() writes them (fixtures, the benchmark).
//
//   type    values bytes  a weight is
//   Q8_0      32    34    d · q,            q int8
//   Q4_0      32    18    d · (q − 8),      q 4 bits
//   Q4_1      32    20    d · q + m
//   Q5_0      32    22    d · (q − 16),     q 5 bits (4 + a high bit)
//   Q5_1      32    24    d · q + m
//   Q2_K     256    84    d·s · q − dmin·m, 16 sub-blocks of 16, 4-bit s and m, q 2 bits
//   Q3_K     256   110    d·(s − 32) · (q − 4 if the high bit is clear), 16 × 16, 6-bit s, q 3 bits
//   Q4_K     256   144    d·s · q − dmin·m, 8 sub-blocks of 32, 6-bit s and m, q 4 bits
//   Q5_K     256   176    as Q4_K, q 5 bits
//   Q6_K     256   210    d·s · (q − 32), 16 × 16, int8 s, q 6 bits
//   IQ4_NL    32    18    d · kvalues[q],   q 4 bits into a fixed non-uniform table
//   IQ4_XS   256   136    d·(s − 32) · kvalues[q], 8 × 32, 6-bit s
// d, m, dmin are float16.
#pragma once

#include "engine/model/checkpoint/safetensors.h"

#include <cstdint>
#include <vector>

namespace attn {

// The block types (every DType from Q8_0 on).
bool isQuantized(DType t);
// `count` weights of block type t (a whole number of blocks) from `src` into
// `out`, the floats ggml's dequantize_row_* gives; past a million weights on
// the OpenMP threads.
void dequantize(DType t, const uint8_t* src, int64_t count, float* out);

// y[o] = Σ_j W[o, j] · x[j] over the `rows` rows of a block-quantized matrix
// W of `cols` columns (whole blocks a row) at src: its weights as
// dequantize() gives them, multiplied as they are decoded, never stored
// (Q4_K, Q5_K, Q6_K and Q8_0: the quants times x, scaled once per sub-block,
// the same sum up to float rounding, ~2x as fast with AVX-512). For a decode
// step's one row: a tile dequantized and then multiplied is written and read
// back, 8 bytes a weight more, and took twice as long on one core. Past a
// million weights on the OpenMP threads.
void dotRows(DType t, const uint8_t* src, int64_t rows, int64_t cols, const float* x, float* y);

// IQ4_NL's and IQ4_XS's 16 levels (ggml's kvalues_iq4nl): denser near zero,
// where most weights are.
extern const int8_t kIq4NlValues[16];

// [SECTION] Writing (test fixtures, the benchmark's quantized checkpoint)
// `count` floats (a whole number of blocks of t) stored as type t as ggml's
// reference quantizers store them (quantize_row_*_ref; IQ4_NL as
// quantize_iq4_nl without an importance matrix, the search llama-quantize
// runs), byte for byte (quants_test checks it against ggml's own library);
// any type but I64: F32, F16, BF16 as plain little-endian values.
std::vector<uint8_t> quantize(DType t, const float* x, int64_t count);

}  // namespace attn
