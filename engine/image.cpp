#include "engine/image.h"

#include "engine/error.h"

#include <stb/stb_image.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

namespace attn {

namespace {

// A PNG's chunks must lie inside the file: stb_image grows its buffer to a
// chunk's stated length before reading it, so a few bytes claiming a 1 GB
// IDAT would allocate that much before failing (found by fuzz_image).
// Throws InputError naming the chunk; other formats pass.
void checkPngChunks(FILE* f, const std::string& where) {
  unsigned char sig[8];
  if (std::fread(sig, 1, 8, f) != 8 || std::memcmp(sig, "\x89PNG\r\n\x1a\n", 8) != 0) {
    std::rewind(f);
    return;
  }
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  long at = 8;
  while (at + 8 <= size) {
    unsigned char head[8];
    std::fseek(f, at, SEEK_SET);
    if (std::fread(head, 1, 8, f) != 8) break;
    const uint64_t length = uint64_t{head[0]} << 24 | uint64_t{head[1]} << 16 | uint64_t{head[2]} << 8 | head[3];
    std::string type(reinterpret_cast<const char*>(head + 4), 4);
    for (char& ch : type)
      if (ch < 0x20 || ch > 0x7e) ch = '?';  // shown in the message as it reads
    if (static_cast<uint64_t>(at) + 12 + length > static_cast<uint64_t>(size))
      throw InputError(where + ": expected a PNG or JPEG image, got a corrupt PNG: chunk " + "'" + type + "'" + " at byte " + std::to_string(at) +
                       " claims " + std::to_string(length) + " bytes, but the file has " + std::to_string(size - at - 12) +
                       " left");
    if (type == "IEND") break;
    at += 12 + static_cast<long>(length);
  }
  std::rewind(f);
}

}  // namespace

Array readImageRgb(const std::string& path, const std::string& flag, int64_t max_pixels) {
  const std::string where = path + " (" + flag + ")";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(where + ": no such file");
  const std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw InputError(where + ": cannot open the file");
  checkPngChunks(f.get(), where);
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
