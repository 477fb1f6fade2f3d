#include "engine/image.h"

#include "engine/error.h"
#include "engine/files.h"

#include <stb/stb_image.h>

#include <cstring>
#include <limits>
#include <memory>

namespace attn {

namespace {

// A PNG's chunks must lie inside the file: stb_image grows its buffer to a
// chunk's stated length before reading it, so a few bytes claiming a 1 GB
// IDAT would allocate that much before failing (found by fuzz_image).
// Throws InputError naming the chunk; other formats pass.
void checkPngChunks(const std::string& bytes, const std::string& where) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), "\x89PNG\r\n\x1a\n", 8) != 0) return;
  const uint64_t size = bytes.size();
  uint64_t at = 8;
  while (at + 8 <= size) {
    const auto* head = reinterpret_cast<const unsigned char*>(bytes.data() + at);
    const uint64_t length = uint64_t{head[0]} << 24 | uint64_t{head[1]} << 16 | uint64_t{head[2]} << 8 | head[3];
    std::string type(reinterpret_cast<const char*>(head + 4), 4);
    for (char& ch : type)
      if (ch < 0x20 || ch > 0x7e) ch = '?';  // shown in the message as it reads
    if (at + 12 + length > size)
      throw InputError(where + ": expected a PNG or JPEG image, got a corrupt PNG: chunk " + "'" + type + "'" + " at byte " + std::to_string(at) +
                       " claims " + std::to_string(length) + " bytes, but the file has " +
                       std::to_string(static_cast<int64_t>(size) - static_cast<int64_t>(at) - 12) + " left");
    if (type == "IEND") break;
    at += 12 + length;
  }
}

}  // namespace

Array decodeImageRgb(const std::string& bytes, const std::string& where, int64_t max_pixels) {
  checkPngChunks(bytes, where);
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw InputError(where + ": expected a PNG or JPEG image, got a file of " + std::to_string(bytes.size()) + " bytes");
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int n = static_cast<int>(bytes.size());
  // The header first: a corrupt or oversized file is refused before decoding allocates.
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_memory(data, n, &w, &h, &channels))
    throw InputError(where + ": expected a PNG or JPEG image, got a file stb_image cannot read (" +
                     std::string(stbi_failure_reason() ? stbi_failure_reason() : "unknown format") + ")");
  const int64_t pixels = int64_t{w} * h;
  if (w <= 0 || h <= 0 || pixels > max_pixels)
    throw InputError(where + ": the image is " + std::to_string(w) + " × " + std::to_string(h) + " = " +
                     std::to_string(pixels) + " pixels; expected at most " + std::to_string(max_pixels) +
                     " (every pixel attends to every other: scale the image down)");
  const std::unique_ptr<unsigned char, void (*)(void*)> pixels_rgb(stbi_load_from_memory(data, n, &w, &h, &channels, 3),
                                                                   &stbi_image_free);
  if (!pixels_rgb)
    throw InputError(where + ": expected a PNG or JPEG image, decoding failed (" +
                     std::string(stbi_failure_reason() ? stbi_failure_reason() : "corrupt data") + ")");
  Array a{{h, w, 3}, std::vector<float>(static_cast<size_t>(pixels) * 3)};
  for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = static_cast<float>(pixels_rgb.get()[i]) / 255.0f;
  return a;
}

Array readImageRgb(const std::string& path, const std::string& flag, int64_t max_pixels) {
  return decodeImageRgb(readWholeFile(path, flag), path + " (" + flag + ")", max_pixels);
}

}  // namespace attn
