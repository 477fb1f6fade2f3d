#include "engine/image.h"

#include "engine/error.h"

#include <stb/stb_image.h>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace attn {

Array readImageRgb(const std::string& path, const std::string& flag, int64_t max_pixels) {
  const std::string where = path + " (" + flag + ")";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(where + ": no such file");
  const std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw InputError(where + ": cannot open the file");
  // The header first: a corrupt or oversized file is refused before decoding allocates.
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_file(f.get(), &w, &h, &channels))
    throw InputError(where + ": expected a PNG or JPEG image, got a file stb_image cannot read (" +
                     std::string(stbi_failure_reason() ? stbi_failure_reason() : "unknown format") + ")");
  const int64_t pixels = int64_t{w} * h;
  if (w <= 0 || h <= 0 || pixels > max_pixels)
    throw InputError(where + ": the image is " + std::to_string(w) + " × " + std::to_string(h) + " = " +
                     std::to_string(pixels) + " pixels; expected at most " + std::to_string(max_pixels) +
                     " (every pixel attends to every other: scale the image down)");
  const std::unique_ptr<unsigned char, void (*)(void*)> data(stbi_load_from_file(f.get(), &w, &h, &channels, 3),
                                                             &stbi_image_free);
  if (!data)
    throw InputError(where + ": expected a PNG or JPEG image, decoding failed (" +
                     std::string(stbi_failure_reason() ? stbi_failure_reason() : "corrupt data") + ")");
  Array a{{h, w, 3}, std::vector<float>(static_cast<size_t>(pixels) * 3)};
  for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = static_cast<float>(data.get()[i]) / 255.0f;
  return a;
}

}  // namespace attn
