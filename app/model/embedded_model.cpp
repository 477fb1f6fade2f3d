#include "app/model/embedded_model.h"

#include "engine/error.h"

#include <embedded_assets.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>

namespace {

// Laid out by cmake/embed_binary.cmake; the table ends with a null entry.
struct EmbeddedFile {
  const char* name;
  const uint8_t* begin;
  const uint8_t* end;
};

}  // namespace

extern "C" const EmbeddedFile attn_embedded_files[];
extern "C" const uint64_t attn_embedded_file_count;

namespace attn {

const char* const kEmbeddedModelLabel = "embedded default model";

namespace {

const EmbeddedFile* findEmbedded(const std::string& name) {
  for (uint64_t i = 0; i < attn_embedded_file_count; ++i)
    if (name == attn_embedded_files[i].name) return &attn_embedded_files[i];
  return nullptr;
}

}  // namespace

ModelFiles embeddedModelFiles() {
  if (!findEmbedded("config.json"))
    throw InputError(std::string(kEmbeddedModelLabel) + ": this build has no assets/model/config.json");
  ModelFiles files;
  files.label = kEmbeddedModelLabel;
  files.read_text = [](const std::string& name) -> std::optional<std::string> {
    const EmbeddedFile* f = findEmbedded(name);
    if (!f) return std::nullopt;
    return std::string(reinterpret_cast<const char*>(f->begin), static_cast<size_t>(f->end - f->begin));
  };
  files.open_safetensors = [](const std::string& name) -> std::shared_ptr<const SafetensorsFile> {
    const EmbeddedFile* f = findEmbedded(name);
    if (!f) return nullptr;
    return SafetensorsFile::fromMemory(f->begin, static_cast<uint64_t>(f->end - f->begin),
                                       std::string(kEmbeddedModelLabel) + "/" + name);
  };
  return files;
}

std::string defaultModelText() {
  return nlohmann::json::parse(kAsset_default_scene_json).at("model").at("text").get<std::string>();
}

}  // namespace attn
