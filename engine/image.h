// Pictures read with stb_image (PNG, JPEG and the other formats it decodes),
// as float RGB in [0, 1]. Sizes are read from the header and refused before
// any pixel is decoded.
#pragma once

#include "engine/tensor.h"

#include <cstdint>
#include <string>

namespace attn {

// Reads `path` as [height, width, 3] RGB in [0, 1], rows top to bottom
// (grey and alpha are dropped to RGB by stb_image). Throws InputError naming
// the file and `flag` when it is missing, not an image stb_image can decode,
// or has more than `max_pixels` pixels (checked from the header alone).
Array readImageRgb(const std::string& path, const std::string& flag, int64_t max_pixels);
// The same from a file's bytes (an embedded picture); `where` names it in errors.
Array decodeImageRgb(const std::string& bytes, const std::string& where, int64_t max_pixels);

}  // namespace attn
