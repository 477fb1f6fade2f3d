// The default scene (assets/default_scene.json, embedded) and the input a
// scene computes on: shared by the window and the lesson handouts.
#include "app/shared/scene_options.h"

#include <embedded_assets.h>
#include <nlohmann/json.hpp>

namespace attn {

// A malformed asset is our bug, caught by the GUI tests.
const DefaultScene& defaultScene() {
  static const DefaultScene scene = [] {
    const nlohmann::json j = nlohmann::json::parse(kAsset_default_scene_json);
    const nlohmann::json& m = j.at("model");
    return DefaultScene{j.at("variant").get<std::string>(), j.at("text").get<std::string>(),
                        j.at("source_text").get<std::string>(), j.at("dim").get<int64_t>(),
                        j.at("heads").get<int64_t>(),       j.at("seed").get<uint64_t>(),
                        m.at("text").get<std::string>(),    m.at("view").get<std::string>(),
                        m.at("pattern").get<std::string>(), m.at("layer").get<int>(),
                        m.at("head").get<int>()};
  }();
  return scene;
}

InputOptions sceneInput(const SceneOptions& o) {
  const DefaultScene& d = defaultScene();
  InputOptions in = o.input;
  if (!o.input_given) {
    in = InputOptions{};
    in.text = d.text;
    in.dim = d.dim;
    in.heads = d.heads;
    in.seed = d.seed;
  }
  if (in.source_text.empty()) in.source_text = d.source_text;
  return in;
}

}  // namespace attn
