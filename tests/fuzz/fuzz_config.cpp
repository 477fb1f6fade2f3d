// libFuzzer target: a model's config.json. It must be refused with
// InputError or give a configuration whose sizes are all in range and
// consistent (the heads divide the width, the key/value heads divide the
// heads), since the loader multiplies them
// into tensor shapes.
#include "engine/error.h"
#include "engine/model/model.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const attn::ModelConfig c = attn::parseConfig(text, "config.json");
    for (const int64_t v : {c.layers, c.heads, c.d_model, c.d_ff, c.positions, c.vocab})
      if (v <= 0 || v > (int64_t{1} << 24)) std::abort();
    if (c.head_dim <= 0 || c.head_dim > (int64_t{1} << 20) || c.kv_heads <= 0 || c.heads % c.kv_heads != 0)
      std::abort();
    if (!(c.ln_eps > 0 && c.ln_eps < 1) || !(c.rms_eps > 0 && c.rms_eps < 1)) std::abort();
    for (const attn::RopeSpec* r : {&c.rope, &c.rope_local})
      if (!(r->theta >= 1) || !(r->factor >= 1) || !(r->partial > 0 && r->partial <= 1)) std::abort();
    if (c.sliding_window < 0 || (!c.layer_window.empty() && static_cast<int64_t>(c.layer_window.size()) != c.layers))
      std::abort();
    // Encoder–decoders: a decoder of 0 (an encoder alone) to 1,024 layers starting at a token of the vocabulary;
    // T5's buckets leave room for the exact ones and the log-spaced ones.
    if (c.decoder_layers < 0 || c.decoder_layers > 1024 || (c.encoderDecoder() && (c.decoder_start < 0 || c.decoder_start >= c.vocab)))
      std::abort();
    if (c.relative_buckets != 0 && (c.relative_buckets < 4 || c.relative_max_distance <= c.relative_buckets / 2)) std::abort();
  } catch (const attn::InputError&) {
  }
  return 0;
}
