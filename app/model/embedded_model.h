// The models compiled into the binary, byte for byte at build time
// (scripts/cmake/embed_binary.cmake): the default model, every file of
// assets/model/ (config.json, model.safetensors, vocab.json, merges.txt,
// head_scores.json), opened as `shipped:default`, and the trained folders of
// assets/trained/NAME/ (a T5 that translates, with the sentence it opens
// on; a ViT that names shapes, with its example pictures), opened as
// `shipped:NAME` wherever a model path is read.
#pragma once

#include "engine/model/model.h"

#include <string>
#include <vector>

namespace attn {

// "embedded default model"
extern const char* const kEmbeddedModelLabel;
// "shipped:"
extern const char* const kShippedPrefix;
// "shipped:default": the embedded default model as a model path.
extern const char* const kDefaultModelPath;

// The embedded files as a ModelFiles (weights through SafetensorsFile::fromMemory).
// Throws InputError when this build embeds no model.
ModelFiles embeddedModelFiles();

// The names of the shipped models ("default", "t5-toy", "vit-shapes"), sorted.
std::vector<std::string> shippedModels();
// The files of a model path: `shipped:default` is the embedded default
// model, `shipped:NAME` the embedded folder (an unknown NAME is an
// InputError listing the shipped ones), anything else a folder or
// .safetensors file on disk (filesOnDisk).
ModelFiles modelFiles(const std::string& path);
// A shipped model's example pictures ("examples/circle.png", …; the names
// its ModelFiles reads), sorted; none for a path on disk.
std::vector<std::string> modelExamplePictures(const std::string& path);

// The sentence of the default scene (assets/default_scene.json "model.text").
std::string defaultModelText();
// The text a model at `path` opens on where none is given: a shipped
// folder's examples/text.txt (the T5's: a sentence of its toy English), else
// the default scene's sentence (the default model's, and any model's on disk).
// "" is the default model, as in a scene with no model named.
std::string modelExampleText(const std::string& path);
// `text`, or the model's example where it is empty (no text given).
std::string textOrExample(const std::string& text, const std::string& path);
// True when `text` is the text some model opens on (no one's own words):
// a model opened over it starts on its own example instead.
bool isModelExampleText(const std::string& text);

}  // namespace attn
