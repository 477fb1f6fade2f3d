#include "app/model/embedded_model.h"

#include "engine/embedded_files.h"
#include "engine/error.h"

#include <embedded_assets.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>

extern "C" const attn::EmbeddedFile attn_embedded_files[];
extern "C" const uint64_t attn_embedded_file_count;
extern "C" const attn::EmbeddedFile attn_shipped_files[];
extern "C" const uint64_t attn_shipped_file_count;

namespace attn {

const char* const kEmbeddedModelLabel = "embedded default model";
const char* const kShippedPrefix = "shipped:";
const char* const kDefaultModelPath = "shipped:default";

namespace {

// A table's files under `folder` ("" or "t5-toy/") as a ModelFiles labelled `label`.
ModelFiles embeddedFiles(const EmbeddedFile* table, uint64_t count, const std::string& folder, const std::string& label) {
  ModelFiles files;
  files.label = label;
  files.read_text = [=](const std::string& name) -> std::optional<std::string> {
    const EmbeddedFile* f = findEmbeddedFile(table, count, folder + name);
    if (!f) return std::nullopt;
    return std::string(reinterpret_cast<const char*>(f->begin), static_cast<size_t>(f->end - f->begin));
  };
  files.open_safetensors = [=](const std::string& name) -> std::shared_ptr<const SafetensorsFile> {
    const EmbeddedFile* f = findEmbeddedFile(table, count, folder + name);
    if (!f) return nullptr;
    return SafetensorsFile::fromMemory(f->begin, static_cast<uint64_t>(f->end - f->begin), label + "/" + name);
  };
  return files;
}

}  // namespace

ModelFiles embeddedModelFiles() {
  if (!findEmbeddedFile(attn_embedded_files, attn_embedded_file_count, "config.json"))
    throw InputError(std::string(kEmbeddedModelLabel) + ": this build has no assets/model/config.json");
  return embeddedFiles(attn_embedded_files, attn_embedded_file_count, "", kEmbeddedModelLabel);
}

std::vector<std::string> shippedModels() {
  std::set<std::string> names;
  if (findEmbeddedFile(attn_embedded_files, attn_embedded_file_count, "config.json")) names.insert("default");
  for (uint64_t i = 0; i < attn_shipped_file_count; ++i) {
    const std::string name = attn_shipped_files[i].name;
    if (const size_t slash = name.find('/'); slash != std::string::npos) names.insert(name.substr(0, slash));
  }
  return {names.begin(), names.end()};
}

ModelFiles modelFiles(const std::string& path) {
  if (path.rfind(kShippedPrefix, 0) != 0) return filesOnDisk(path);
  if (path == kDefaultModelPath) return embeddedModelFiles();
  const std::string name = path.substr(std::string(kShippedPrefix).size());
  const std::vector<std::string> all = shippedModels();
  if (std::find(all.begin(), all.end(), name) == all.end()) {
    std::string list;
    for (const std::string& n : all) list += (list.empty() ? "" : ", ") + std::string(kShippedPrefix) + n;
    throw InputError(path + ": no such shipped model (this build ships " + (list.empty() ? "none" : list) + ")");
  }
  return embeddedFiles(attn_shipped_files, attn_shipped_file_count, name + "/", path);
}

std::vector<std::string> modelExamplePictures(const std::string& path) {
  std::vector<std::string> out;
  if (path.rfind(kShippedPrefix, 0) != 0) return out;
  const std::string prefix = path.substr(std::string(kShippedPrefix).size()) + "/examples/";
  for (uint64_t i = 0; i < attn_shipped_file_count; ++i) {
    const std::string name = attn_shipped_files[i].name;
    const std::string ext = std::filesystem::path(name).extension().string();
    if (name.rfind(prefix, 0) == 0 && (ext == ".png" || ext == ".jpg" || ext == ".jpeg"))
      out.push_back(name.substr(prefix.size() - std::string("examples/").size()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string defaultModelText() {
  return nlohmann::json::parse(kAsset_default_scene_json).at("model").at("text").get<std::string>();
}

namespace {

// A shipped folder's examples/text.txt, its trailing white space left out.
std::optional<std::string> shippedExampleText(const std::string& name) {
  const EmbeddedFile* f = findEmbeddedFile(attn_shipped_files, attn_shipped_file_count, name + "/examples/text.txt");
  if (!f) return std::nullopt;
  std::string text(reinterpret_cast<const char*>(f->begin), static_cast<size_t>(f->end - f->begin));
  return text.erase(text.find_last_not_of(" \n\r\t") + 1);
}

}  // namespace

std::string modelExampleText(const std::string& path) {
  if (path.rfind(kShippedPrefix, 0) == 0)
    if (const std::optional<std::string> text = shippedExampleText(path.substr(std::string(kShippedPrefix).size()))) return *text;
  return defaultModelText();
}

std::string textOrExample(const std::string& text, const std::string& path) { return text.empty() ? modelExampleText(path) : text; }

bool isModelExampleText(const std::string& text) {
  if (text == defaultModelText()) return true;
  for (const std::string& name : shippedModels())
    if (shippedExampleText(name) == text) return true;
  return false;
}

}  // namespace attn
