#include "app/export/figure_vision.h"

#include "app/export/figure_model.h"
#include "app/model/model_scene.h"
#include "engine/error.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

namespace attn {

namespace {

// Every layer's heads, layer-major, over the tokens "[CLS]", "0", "1", … (the patches).
Result allHeadsOfVision(const VisionAnalysis& a, const std::string& title) {
  Result r;
  r.variant = title;
  const int64_t P = a.run.grid_h * a.run.grid_w;
  r.q_tokens.push_back("[CLS]");
  for (int64_t p = 0; p < P; ++p) r.q_tokens.push_back(std::to_string(p));
  r.k_tokens = r.q_tokens;
  for (const std::vector<Mat>& layer : a.run.attention) r.weights.insert(r.weights.end(), layer.begin(), layer.end());
  r.computeStats();
  return r;
}

}  // namespace

const std::vector<std::string>& visionViewNames() {
  static const std::vector<std::string> names = {"picture", "rollout", "distance", "model"};
  return names;
}

PreparedFigure prepareVisionFigure(const Model& m, const VisionAnalysis& a, const std::string& view, int64_t layer,
                                   int64_t query, const FigureOptions& options) {
  const std::vector<std::string>& names = visionViewNames();
  if (std::find(names.begin(), names.end(), view) == names.end()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    throw InputError("--view: '" + view + "' is not a view of a vision model (expected one of " + list + ")");
  }
  const std::string name = modelShortName(m);
  FigureOptions fo = options;
  fo.params.head = 0;
  std::string top;
  if (!a.run.top_k.empty()) {
    char p[32];
    std::snprintf(p, sizeof p, "%.1f%%", 100.0 * a.run.top_k[0].probability);
    top = ", predicted '" + a.run.top_k[0].token + "' " + p;
  }
  fo.subtitle = literalSubtitle(name + " (" + modelInfo(m).config.arch_name + "), " +
                                std::filesystem::path(a.picture).filename().string() + " as " +
                                std::to_string(a.run.grid_h) + " \xC3\x97 " + std::to_string(a.run.grid_w) + " patches of " +
                                std::to_string(a.patch_size) + " pixels" + top);
  const auto titled = [&](const std::string& t) {
    if (!fo.title) fo.title = t;
  };
  if (view == "model") {
    titled(name + " \xE2\x80\x94 " + std::to_string(a.run.layers) + " layers \xC3\x97 " + std::to_string(a.run.heads) +
           " heads over [CLS] and the patches");
    fo.view = "heads";
    for (int64_t l = 0; l < a.run.layers; ++l)
      for (int64_t h = 0; h < a.run.heads; ++h) fo.params.panel_titles.push_back(headLabel(l, h));
    fo.params.scale = visionGridScale(fo.params.scale);
    return prepareFigure(std::make_shared<const std::vector<Result>>(1, allHeadsOfVision(a, name)), fo);
  }
  if (view == "distance") {
    titled(name + " \xE2\x80\x94 mean attention distance of each head (the dashed line: uniform attention)");
    const Scatter s = distanceScatter(a);
    return prepareLayoutFigure([s](Primitives& out, const Canvas& c, const Box& body) { scatterPrimitives(out, c, body, s); },
        [](const Canvas& c, float width) { return c.unit * 4 + width * 0.55f; }, fo);
  }
  auto maps = std::make_shared<PatchMaps>(view == "rollout" ? rolloutOverPicture(a) : headsOverPicture(a, layer, query));
  titled(view == "rollout" ? name + " \xE2\x80\x94 attention rollout from [CLS] over the picture, layer by layer"
                           : name + " \xE2\x80\x94 layer " + std::to_string(layer) + ": attention of " +
                                 patchTokenName(a, query) + " over the picture");
  // The analysis outlives the figure (the caller's), and the maps point into it.
  return prepareLayoutFigure([maps](Primitives& out, const Canvas& c, const Box& body) { patchMapsPrimitives(out, c, body, *maps); },
                             [maps](const Canvas& c, float width) { return patchMapsHeight(c, width, *maps); }, fo);
}

}  // namespace attn
