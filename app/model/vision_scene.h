// A Vision Transformer in the model workspace, GUI-free: the run on a
// picture (a shipped model's example or a file), the rollout and the heads'
// attention distances, and the data of its views — one token's attention
// over the picture per head and averaged, the rollout from [CLS] after each
// layer (widgets/patch_layouts.h), and the distance plot (the ViT paper's
// Figure 7) — for the window and `attnlab render --model … --image …`.
#pragma once

#include "engine/model/model.h"
#include "engine/model/kinds/vision.h"
#include "widgets/patch_layouts.h"
#include "widgets/plot_layouts.h"

#include <memory>
#include <string>
#include <vector>

namespace attn {

// What a ViT reads (ModelScene::inputs): the picture, one of the model's
// shipped examples (`example`, read through the scene's files) or a path on disk.
struct VisionInputs {
  std::string picture;
  bool example = false;
  bool operator==(const VisionInputs&) const = default;
};

struct VisionAnalysis {
  VisionRun run;
  std::string picture;  // as named: a shipped example ("examples/circle.png") or a path
  Array shown;          // [H, W, 3] in [0, 1]: the pixel values un-normalised, the picture as the model read it
  std::vector<Mat> rollout;                   // R_l per layer [1 + P, 1 + P]
  std::vector<std::vector<double>> distance;  // [layer][head] mean attention distance in pixels
  double uniform_distance = 0;                // what a head attending to every patch alike would score
  int64_t patch_size = 0;
  float max_weight = 0;  // the largest weight of any head: the top of the grid's one colour scale
};

// The largest picture read (pixels): every larger one is refused before decoding.
constexpr int64_t kMaxPicturePixels = int64_t{64} << 20;

// The pixel values [3, H, W] of `picture`, read from the model's files
// (`example`: a shipped model's "examples/…") or from disk and prepared as
// the folder's preprocessor_config.json says; InputError names the picture
// or the file that is missing, and `flag` (what gave the picture).
Array preparedPicture(const ModelFiles& files, const std::string& picture, bool example, const std::string& flag);
// Reads `picture` from the model's files (`example`: a shipped model's
// "examples/…") or from disk, prepares it as the folder's
// preprocessor_config.json says and runs the model; InputError names the
// picture or the file that is missing, and `flag` (what gave the picture).
VisionAnalysis analyseVision(const Model& m, const ModelFiles& files, const std::string& picture, bool example,
                             const std::string& flag, const RunContext& ctx = {});
// A ViT's part of a scene's job (computeModelScene): `previous` (the last
// output's, of the same model; may be null) while it read the same picture,
// else a new analysis; an InputError without the model's files.
std::shared_ptr<const VisionAnalysis> visionSceneAnalysis(const Model& m, const ModelFiles* files, const VisionInputs& in,
                                                          const std::shared_ptr<const VisionAnalysis>& previous,
                                                          const RunContext& ctx);
// The analysis of pixel values given as they are ([3, H, W], `--pixels`).
VisionAnalysis analyseVisionPixels(const Model& m, const Array& pixel_values, const std::string& name,
                                   const RunContext& ctx = {});

// "[CLS]" or "patch 12 (row 1, column 4)".
std::string patchTokenName(const VisionAnalysis& a, int64_t token);
// Token `query`'s row in layer `layer`: the mean of the heads first, then each head.
PatchMaps headsOverPicture(const VisionAnalysis& a, int64_t layer, int64_t query);
// [CLS]'s row of each layer's mean of heads, then of the rollout after each layer.
PatchMaps rolloutOverPicture(const VisionAnalysis& a);
// The colour scale of a ViT's grid of maps, on screen and in figures: the
// user's, where it is not Auto; else Log. Its heads spread their weight over
// 1 + P tokens (1/65 ≈ 0.015) with a few large ones, which a linear scale
// draws flat; text models take Log from kLogScaleKeys keys for that reason.
ColorScale visionGridScale(const ColorScale& chosen);
// Each head's mean attention distance against its layer, a colour per head,
// with uniform attention's distance as a dashed level; on screen and in
// figures the layers 1 … L inside [0, L + 1], the distances from 15 % of
// their span under the least (the level included; 0 at the least) to 15 %
// over the largest.
Scatter distanceScatter(const VisionAnalysis& a);

}  // namespace attn
