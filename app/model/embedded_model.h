// The default model compiled into the binary: every file of assets/model/
// (config.json, model.safetensors, vocab.json, merges.txt, head_scores.json),
// embedded byte for byte at build time (cmake/embed_binary.cmake).
#pragma once

#include "engine/model/model.h"

namespace attn {

// "embedded default model"
extern const char* const kEmbeddedModelLabel;

// The embedded files as a ModelFiles (weights through SafetensorsFile::fromMemory).
// Throws InputError when this build embeds no model.
ModelFiles embeddedModelFiles();

// The sentence of the default scene (assets/default_scene.json "model.text").
std::string defaultModelText();

}  // namespace attn
