// The vision kind: a Vision Transformer over a picture
// (app/model/vision_scene.h). Its views' figures; the window draws them in
// app/gui/gui_vision.cpp.
#include "app/export/model_kinds.h"

#include "app/model/embedded_model.h"
#include "app/model/vision_scene.h"
#include "engine/error.h"

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

std::string visionSubtitle(const ModelOutput& out) {
  const VisionAnalysis& a = *out.vision;
  std::string top;
  if (!a.run.top_k.empty()) {
    char p[32];
    std::snprintf(p, sizeof p, "%.1f%%", 100.0 * a.run.top_k[0].probability);
    top = ", predicted '" + a.run.top_k[0].token + "' " + p;
  }
  return modelShortName(*out.model) + " (" + modelInfo(*out.model).config.arch_name + "), " +
                         std::filesystem::path(a.picture).filename().string() + " as " + std::to_string(a.run.grid_h) +
                         " \xC3\x97 " + std::to_string(a.run.grid_w) + " patches of " + std::to_string(a.patch_size) +
                         " pixels" + top;
}

// What every view's page starts from: the analysis, the model's name and the options with the subtitle.
struct VisionPage {
  const VisionAnalysis& a;
  std::string name;
  FigureOptions fo;
  void titled(const std::string& t) {
    if (!fo.title) fo.title = t;
  }
};
VisionPage visionPage(const ModelOutput& out, const FigureOptions& options) {
  if (!out.vision) throw InputError(!out.error.empty() ? out.error : "model: nothing to draw");
  VisionPage p{*out.vision, modelShortName(*out.model), options};
  p.fo.params.head = 0;
  p.fo.subtitle = literalSubtitle(visionSubtitle(out));
  return p;
}

// Patch maps under the title; the analysis outlives the figure (the caller's), and the maps point into it.
PreparedFigure patchMapsFigure(const VisionPage& p, PatchMaps m) {
  auto maps = std::make_shared<PatchMaps>(std::move(m));
  return prepareLayoutFigure([maps](Primitives& out, const Canvas& c, const Box& body) { patchMapsPrimitives(out, c, body, *maps); },
                             [maps](const Canvas& c, float width) { return patchMapsHeight(c, width, *maps); }, p.fo);
}

// The picture: --image, or a shipped model's first example.
ModelOutput visionRun(const ModelRunRequest& r) {
  if (r.target || !r.text.empty())
    throw InputError(std::string(r.target ? "--target" : "--text") + ": a vision model reads a picture (--image FILE), not text");
  if (r.truncate) throw InputError("--truncate: not available for vision models (they read a picture)");
  if (r.attention_of) throw InputError("--attention-of: only encoder\xE2\x80\x93" "decoder models (T5, BART) have more than one attention");
  ModelOutput out;
  out.model = loadModel(*r.files);
  const std::vector<std::string> examples = modelExamplePictures(r.path);
  const bool example = r.image.empty() && !examples.empty();
  out.vision = std::make_shared<const VisionAnalysis>(
      analyseVision(*out.model, *r.files, example ? examples.front() : r.image, example, "--image"));
  out.inputs.vision.picture = out.vision->picture;
  return out;
}

// [SECTION] Views

// One token's attention over the picture (--query: 0 [CLS], 1 + p a patch)
// in layer --layer, the mean of the heads and each head.
PreparedFigure visionPictureFigure(const ModelOutput& out, const ModelFigureSelection& sel, const FigureOptions& options) {
  VisionPage p = visionPage(out, options);
  const int64_t query = std::max<int64_t>(sel.query, 0);
  PatchMaps maps = headsOverPicture(p.a, sel.layer, query);
  p.titled(p.name + " \xE2\x80\x94 layer " + std::to_string(sel.layer) + ": attention of " + patchTokenName(p.a, query) +
           " over the picture");
  return patchMapsFigure(p, std::move(maps));
}

// Every layer's heads as maps over the 1 + P tokens.
PreparedFigure visionGridFigure(const ModelOutput& out, const ModelFigureSelection&, const FigureOptions& options) {
  VisionPage p = visionPage(out, options);
  p.titled(p.name + " \xE2\x80\x94 " + layersByHeads(p.a.run.layers, p.a.run.heads) + " over [CLS] and the patches");
  p.fo.view = "heads";
  for (int64_t l = 0; l < p.a.run.layers; ++l)
    for (int64_t h = 0; h < p.a.run.heads; ++h) p.fo.params.panel_titles.push_back(headLabel(l, h));
  p.fo.params.scale = visionGridScale(p.fo.params.scale);
  return prepareFigure(std::make_shared<const std::vector<Result>>(1, allHeadsOfVision(p.a, p.name)), p.fo);
}

// [CLS]'s row of each layer's mean of heads, and of the rollout after each layer.
PreparedFigure visionRolloutFigure(const ModelOutput& out, const ModelFigureSelection&, const FigureOptions& options) {
  VisionPage p = visionPage(out, options);
  PatchMaps maps = rolloutOverPicture(p.a);
  p.titled(p.name + " \xE2\x80\x94 attention rollout from [CLS] over the picture, layer by layer");
  return patchMapsFigure(p, std::move(maps));
}

// Each head's mean attention distance against layer (Figure 7 of the ViT paper).
PreparedFigure visionDistanceFigure(const ModelOutput& out, const ModelFigureSelection&, const FigureOptions& options) {
  VisionPage p = visionPage(out, options);
  p.titled(p.name + " \xE2\x80\x94 mean attention distance of each head (the dashed line: uniform attention)");
  const Scatter s = distanceScatter(p.a);
  return prepareLayoutFigure([s](Primitives& prims, const Canvas& c, const Box& body) { scatterPrimitives(prims, c, body, s); },
                             [](const Canvas& c, float width) { return c.unit * 4 + width * 0.55f; }, p.fo);
}

// The page: the self-attention over [CLS] and the patches, every head whole on
// a log scale (as the grid's), the rollout after each layer, each head's mean
// distance, and the picture the page lays a token's row over.
PageContent visionKindPage(const ModelOutput& out, const PageRequest& req) {
  const VisionPage p = visionPage(out, {});
  if (!req.heads.empty())
    throw InputError("--heads: names the heads a long text's page keeps whole; a ViT's page holds every head");
  const VisionRun& run = p.a.run;
  PageContent c;
  c.title = p.name + " \xE2\x80\x94 " + layersByHeads(run.layers, run.heads);
  c.subtitle = visionSubtitle(out);
  c.picture = &p.a.shown;
  c.grid_h = run.grid_h;
  c.grid_w = run.grid_w;
  PageMaps s;
  s.name = "self";
  s.label = "self-attention over [CLS] and the patches";
  for (int64_t t = 0; t < 1 + run.grid_h * run.grid_w; ++t) s.rows.push_back(patchTokenName(p.a, t));
  s.cols = s.rows;
  s.layers = run.layers;
  s.heads = run.heads;
  s.log_scale = true;
  for (const std::vector<Mat>& layer : run.attention)
    for (const Mat& m : layer) s.maps.push_back(&m);
  for (const Mat& r : p.a.rollout) s.rollout.push_back(&r);
  s.table_columns = {"layer", "head", "mean distance (pixels)"};
  for (int64_t l = 0; l < run.layers; ++l)
    for (int64_t h = 0; h < run.heads; ++h) {
      char d[32];
      std::snprintf(d, sizeof d, "%.1f", p.a.distance[static_cast<size_t>(l)][static_cast<size_t>(h)]);
      s.table_rows.push_back({std::to_string(l), std::to_string(h), d});
    }
  c.sets.push_back(std::move(s));
  return c;
}

}  // namespace

extern const ModelKindInfo kVisionKind = {
    "vision",
    "a vision model",
    "Vision Transformers (ViT): a picture as patches and [CLS], every layer's self-attention over it",
    [](const ModelConfig& c) { return c.vision(); },
    visionRun,
    visionSubtitle,
    {
        {"picture", "one token's attention over the picture, per head and averaged; click a patch or [CLS]", visionPictureFigure},
        {"model", "every layer \xC3\x97 head over [CLS] and the patches as thumbnails; click one to focus it", visionGridFigure},
        {"rollout", "attention rollout from [CLS] over the picture, after each layer", visionRolloutFigure},
        {"distance", "each head's mean attention distance in pixels against its layer (ViT paper, Figure 7)", visionDistanceFigure},
    },
    visionKindPage,
};

}  // namespace attn
