#include "app/model/embedded_model.h"

#include "engine/embedded_files.h"
#include "engine/error.h"

#include <embedded_assets.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>

extern "C" const attn::EmbeddedFile attn_embedded_files[];
extern "C" const uint64_t attn_embedded_file_count;

namespace attn {

const char* const kEmbeddedModelLabel = "embedded default model";

namespace {

const EmbeddedFile* findEmbedded(const std::string& name) {
  return findEmbeddedFile(attn_embedded_files, attn_embedded_file_count, name);
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
