// Vision Transformers (ViT, Dosovitskiy et al. 2021): a picture cut into
// patches, each patch a token, a [CLS] token in front, bidirectional
// self-attention over the 1 + P tokens. A run keeps every map (P = 196 for
// a 224-pixel picture in 16-pixel patches). The picture is prepared as the
// model's folder says (preprocessor_config.json: resize, rescale,
// normalise), or given as pixel values by the caller.
#pragma once

#include "engine/model/blocks/run.h"
#include "engine/run_context.h"
#include "engine/tensor.h"

#include <optional>
#include <string>
#include <vector>

namespace attn {

bool isVisionModel(const Model& m);

// preprocessor_config.json (ViTImageProcessor): what the picture goes through.
struct ImagePreprocessing {
  bool resize = true;
  int64_t height = 224, width = 224;
  bool rescale = true;
  double rescale_factor = 1.0 / 255.0;
  bool normalize = true;
  std::vector<double> mean = {0.5, 0.5, 0.5}, std = {0.5, 0.5, 0.5};
};
// Reads the file's text; a field that changes the pixels and is not
// implemented (a resampling other than bilinear, cropping) is refused naming it.
ImagePreprocessing parsePreprocessorConfig(const std::string& text, const std::string& where);
// The folder's preprocessor_config.json; missing, an InputError saying that
// `flag` (what asked for a picture) needs it, or pixel values instead.
ImagePreprocessing readPreprocessing(const ModelFiles& files, const std::string& flag);

// Resizes 8-bit RGB [h, w, 3] to [out_h, out_w, 3] as Pillow's
// Image.resize(…, BILINEAR) does: a separable triangle filter widened by
// the scale when shrinking (antialiasing), fixed-point coefficients
// (22 bits), horizontal then vertical, each pass rounded to 8 bits.
std::vector<uint8_t> resizeBilinearLikePillow(const std::vector<uint8_t>& rgb, int64_t h, int64_t w, int64_t out_h,
                                              int64_t out_w);

// The pixel values [3, H, W] of a picture (`rgb01` [h, w, 3] in [0, 1], as
// readImageRgb gives it): resized, rescaled and normalised as `p` says.
Array preprocessImage(const Array& rgb01, const ImagePreprocessing& p);

// Each head's mean attention distance in pixels (Dosovitskiy et al. 2021,
// Figure 7 and appendix D.7): the mean over the query patches i of
// Σ_j a_ij·‖c_i − c_j‖ over the key patches j, with c a patch's centre in
// pixels and a_ij = A[i, j] / Σ_j' A[i, j'] the patch-to-patch weights (the
// [CLS] token left out as query and key).                       [layers][heads]
std::vector<std::vector<double>> attentionDistance(const VisionRun& run, int64_t patch_size);

// The pass on pixel values [3, H, W] (H and W the model's image_size), the top-k labels where it has a classifier.
VisionRun runVision(const Model& m, const Array& pixel_values, int top_k, const RunContext& ctx = {});

}  // namespace attn
