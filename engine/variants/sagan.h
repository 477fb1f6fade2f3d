// SAGAN self-attention (engine/variants/sagan.cpp), exposed for the engine
// tests' plain-loop references and for the default scene.
#pragma once

#include "engine/tensor.h"

#include <cstdint>

namespace attn {

// One self-attention block over a feature map x [C, N] (N = height · width
// pixels in raster order), the paper's layout: a column per pixel.
struct SaganAttention {
  Mat scores;  // s [N, N_keys]: row j = query pixel, column i = key pixel (pooled cell)
  Mat beta;    // β [N, N_keys]: softmax over i of row j
  Mat o;       // o [C, N]
  Mat y;       // y = x + γ o   [C, N]
  int64_t key_width = 0;  // the key grid's width: width, or ⌈width/2⌉ pooled
};

// w_f, w_g [C̄, C], w_h [C, C]. `pool`: 2×2 max-pooling (stride 2, edge
// windows clipped) of f(x) and h(x) over the image, as in the authors' code.
SaganAttention saganAttention(const Mat& x, int64_t height, int64_t width, const Mat& w_f, const Mat& w_g,
                              const Mat& w_h, float gamma, bool pool);

// 2×2 max-pooling of a feature map [rows, height · width] in raster order,
// stride 2, windows at an odd edge clipped to the pixels there:
// [rows, ⌈height/2⌉ · ⌈width/2⌉].
Mat maxPool2x2(const Mat& m, int64_t height, int64_t width);

// The default picture: a 32 × 32 scene of coloured shapes (sky, ground, a
// red disc, a yellow square, a blue triangle), [32, 32, 3] RGB in [0, 1].
Array defaultSaganScene();

}  // namespace attn
