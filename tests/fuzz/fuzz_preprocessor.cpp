// libFuzzer target: a ViT folder's preprocessor_config.json
// (parsePreprocessorConfig). It must be refused with InputError or give a
// preprocessing whose size is positive and bounded, whose rescale factor is
// positive and finite, and whose three means are finite and three stds positive.
#include "engine/error.h"
#include "engine/model/kinds/vision.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const attn::ImagePreprocessing p = attn::parsePreprocessorConfig(text, "preprocessor_config.json");
    if (p.height < 1 || p.width < 1 || p.height > 16384 || p.width > 16384) std::abort();
    if (!(p.rescale_factor > 0) || !std::isfinite(p.rescale_factor)) std::abort();
    if (p.mean.size() != 3 || p.std.size() != 3) std::abort();
    for (int c = 0; c < 3; ++c)
      if (!std::isfinite(p.mean[c]) || !(p.std[c] > 0) || !std::isfinite(p.std[c])) std::abort();
  } catch (const attn::InputError&) {
  }
  return 0;
}
