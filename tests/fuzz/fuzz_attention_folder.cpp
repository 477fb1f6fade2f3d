// libFuzzer target: a folder of attention maps as `--attention` reads it,
// its meta.json, heads.json and tokens.json from the input (split at the
// first two NUL bytes; a part left out is a file left out) beside a fixed
// attention.npy [1, 2, 4, 4]. It must be refused with InputError or give an
// analysis with a summary per head, finite, and a token per position.
#include "app/model/attention_scene.h"
#include "app/model/model_scene.h"
#include "engine/error.h"
#include "engine/npy.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("fuzz_attention_folder_" + std::to_string(getpid()));
    fs::create_directories(d);
    std::vector<float> maps;  // two causal heads: uniform, and the previous token
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) maps.push_back(j > i ? 0.0f : h == 0 ? 1.0f / static_cast<float>(i + 1) : j == (i > 0 ? i - 1 : 0) ? 1.0f : 0.0f);
    attn::writeNpy(d / "attention.npy", attn::Array{{1, 2, 4, 4}, maps});
    return d;
  }();
  const std::string input(reinterpret_cast<const char*>(data), size);
  size_t from = 0;
  for (const char* name : {"meta.json", "heads.json", "tokens.json"}) {
    fs::remove(dir / name);
    if (from > input.size()) continue;
    const size_t end = std::min(input.find('\0', from), input.size());
    std::ofstream(dir / name, std::ios::binary) << input.substr(from, end - from);
    from = end + 1;
  }
  try {
    const std::shared_ptr<const attn::AttentionSource> s = attn::readAttention({dir.string(), "", "", ""});
    const attn::ModelRun& r = s->analysis->run;
    if (s->analysis->summaries.size() != static_cast<size_t>(r.layers * r.heads) || r.tokens.size() != 4) std::abort();
    for (const attn::HeadSummary& h : s->analysis->summaries)
      if (!std::isfinite(h.previous_token) || !std::isfinite(h.sink) || !std::isfinite(h.entropy) || !std::isfinite(h.induction) ||
          !std::isfinite(h.mean_distance))
        std::abort();
  } catch (const attn::InputError&) {
  }
  return 0;
}
