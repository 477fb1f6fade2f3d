// The models compiled into the binary, byte for byte at build time
// (scripts/cmake/embed_binary.cmake): the default model, every file of
// assets/model/ (config.json, model.safetensors, vocab.json, merges.txt,
// head_scores.json), and the trained folders of assets/trained/NAME/ (a
// T5 that translates, a ViT that names shapes, with its example pictures),
// opened as `shipped:NAME` wherever a model path is read.
#pragma once

#include "engine/model/model.h"

#include <string>
#include <vector>

namespace attn {

// "embedded default model"
extern const char* const kEmbeddedModelLabel;
// "shipped:"
extern const char* const kShippedPrefix;

// The embedded files as a ModelFiles (weights through SafetensorsFile::fromMemory).
// Throws InputError when this build embeds no model.
ModelFiles embeddedModelFiles();

// The names of the shipped folders ("t5-toy", "vit-shapes"), sorted.
std::vector<std::string> shippedModels();
// The files of a model path: `shipped:NAME` is the embedded folder (an
// unknown NAME is an InputError listing the shipped ones), anything else a
// folder or .safetensors file on disk (filesOnDisk).
ModelFiles modelFiles(const std::string& path);
// A shipped model's example pictures ("examples/circle.png", …; the names
// its ModelFiles reads), sorted; none for a path on disk.
std::vector<std::string> modelExamplePictures(const std::string& path);

// The sentence of the default scene (assets/default_scene.json "model.text").
std::string defaultModelText();

}  // namespace attn
