// libFuzzer target: a whole attention file (.npy, .npz stored or deflated,
// .safetensors), written to a temporary file and opened as `--attention`
// is. It must be refused with InputError or admitted; every map of an
// admitted file is read (converted to float32) without touching bytes
// outside the file or the inflated member, and each map's check runs.
#include "engine/error.h"
#include "engine/model/checkpoint/attention_file.h"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

struct Scratch {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("fuzz_attention_file." + std::to_string(::getpid()));
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Scratch scratch;
  std::ofstream(scratch.path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), size);
  try {
    const attn::AttentionMaps maps = attn::attentionMaps(attn::FloatTensor::open(scratch.path, "--attention"), "--attention");
    if (maps.layers * maps.heads * maps.rows * maps.cols != maps.tensor.elements()) std::abort();
    for (int64_t l = 0; l < maps.layers; ++l)
      for (int64_t h = 0; h < maps.heads; ++h) {
        attn::Mat m = maps.map(l, h);
        try {
          attn::checkAttentionMap(m, (l + h) % 2 == 1, "fuzz", l, h);
        } catch (const attn::InputError&) {
        }
      }
  } catch (const attn::InputError&) {
  }
  return 0;
}
