// libFuzzer target: a whole picture file as `--set image=` and `model run
// --image` read it (readImageRgb, stb_image). It must be refused with
// InputError or admitted; an admitted picture is [H, W, 3] with at most the
// limit's pixels, every value finite and in [0, 1]. It is then prepared as
// a ViT's image processor would (Pillow's bilinear resize to a size taken
// from the input's first bytes, rescale, normalise with mean and std 0.5):
// [3, h, w], every value in [−1, 1].
#include "engine/error.h"
#include "engine/image.h"
#include "engine/model/kinds/vision.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr int64_t kMaxPixels = 128 * 128;  // sagan's limit
  static const std::string path = "/tmp/attnlab_fuzz_image_" + std::to_string(getpid());
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  attn::Array a;
  try {
    a = attn::readImageRgb(path, "image", kMaxPixels);
  } catch (const attn::InputError&) {
    return 0;
  }
  if (a.rank() != 3 || a.shape[2] != 3 || a.shape[0] < 1 || a.shape[1] < 1) std::abort();
  if (a.shape[0] * a.shape[1] > kMaxPixels) std::abort();
  if (static_cast<int64_t>(a.data.size()) != a.shape[0] * a.shape[1] * 3) std::abort();
  for (const float v : a.data)
    if (!std::isfinite(v) || v < 0.0f || v > 1.0f) std::abort();
  attn::ImagePreprocessing p;
  p.height = 1 + (size > 0 ? data[0] % 48 : 0);
  p.width = 1 + (size > 1 ? data[1] % 48 : 0);
  const attn::Array px = attn::preprocessImage(a, p);
  if (px.shape != std::vector<int64_t>{3, p.height, p.width} || static_cast<int64_t>(px.data.size()) != 3 * p.height * p.width)
    std::abort();
  for (const float v : px.data)
    if (!std::isfinite(v) || v < -1.0f || v > 1.0f) std::abort();
  return 0;
}
