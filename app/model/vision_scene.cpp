#include "app/model/vision_scene.h"

#include "engine/error.h"
#include "engine/image.h"
#include "engine/model/blocks/head_metrics.h"
#include "widgets/colormap.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// The pixel values back in [0, 1]: x·std + mean, undoing the rescale.
Array unNormalised(const Array& pixels, const ImagePreprocessing& p) {
  const int64_t H = pixels.shape[1], W = pixels.shape[2];
  Array out{{H, W, 3}, std::vector<float>(static_cast<size_t>(H * W * 3))};
  for (int64_t ch = 0; ch < 3; ++ch)
    for (int64_t i = 0; i < H * W; ++i) {
      double v = pixels.data[static_cast<size_t>(ch * H * W + i)];
      if (p.normalize) v = v * p.std[static_cast<size_t>(ch)] + p.mean[static_cast<size_t>(ch)];
      v = p.rescale ? v / (p.rescale_factor * 255.0) : v / 255.0;  // the 8-bit value, then in [0, 1]
      out.data[static_cast<size_t>(i * 3 + ch)] = static_cast<float>(std::clamp(v, 0.0, 1.0));
    }
  return out;
}

// Pixel values given as they are: shown stretched to [0, 1] over all channels.
Array stretched(const Array& pixels) {
  const int64_t H = pixels.shape[1], W = pixels.shape[2];
  const auto [lo, hi] = std::minmax_element(pixels.data.begin(), pixels.data.end());
  const float span = *hi > *lo ? *hi - *lo : 1.0f;
  Array out{{H, W, 3}, std::vector<float>(static_cast<size_t>(H * W * 3))};
  for (int64_t ch = 0; ch < 3; ++ch)
    for (int64_t i = 0; i < H * W; ++i) out.data[static_cast<size_t>(i * 3 + ch)] = (pixels.data[static_cast<size_t>(ch * H * W + i)] - *lo) / span;
  return out;
}

VisionAnalysis analysed(const Model& m, const Array& pixels, const std::string& name, const RunContext& ctx) {
  VisionAnalysis a;
  a.run = runVision(m, pixels, 5, ctx);
  a.picture = name;
  a.rollout = attentionRollout(a.run.attention);
  a.patch_size = modelInfo(m).config.patch_size;
  a.distance = attentionDistance(a.run, a.patch_size);
  // The mean over patch pairs of the distance between their centres (the same for every query layout).
  const int64_t gw = a.run.grid_w, P = a.run.grid_h * gw;
  double sum = 0;
  for (int64_t i = 0; i < P; ++i)
    for (int64_t j = 0; j < P; ++j)
      sum += std::hypot(static_cast<double>(i / gw - j / gw), static_cast<double>(i % gw - j % gw)) * static_cast<double>(a.patch_size);
  a.uniform_distance = P > 0 ? sum / static_cast<double>(P * P) : 0.0;
  for (const std::vector<Mat>& layer : a.run.attention)
    for (const Mat& m : layer) a.max_weight = std::max(a.max_weight, m.maxCoeff());
  return a;
}

std::string layerName(int64_t l) { return "layer " + std::to_string(l); }

std::string weightText(float w) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", static_cast<double>(w));
  return buf;
}

// The picture's own panel (its size and patches are in the view's header and the figure's subtitle).
std::string pictureTitle() { return "the input"; }

// What the classifier says of it, beside the input: "97.8%  star", best first.
std::vector<std::string> labelNotes(const VisionAnalysis& a) {
  std::vector<std::string> notes;
  for (const Prediction& p : a.run.top_k) {
    char line[96];
    std::snprintf(line, sizeof line, "%.1f%%  %s", 100.0 * p.probability, p.token.c_str());
    notes.push_back(line);
  }
  return notes;
}

}  // namespace

Array preparedPicture(const ModelFiles& files, const std::string& picture, bool example, const std::string& flag) {
  if (picture.empty()) throw InputError(flag + ": no picture chosen (Open Picture\xE2\x80\xA6, or --image FILE)");
  const ImagePreprocessing p = readPreprocessing(files, flag);
  Array rgb;
  if (example) {
    const std::optional<std::string> bytes = files.read_text(picture);
    if (!bytes) throw InputError(files.label + "/" + picture + " (" + flag + "): no such example picture");
    rgb = decodeImageRgb(*bytes, files.label + "/" + picture + " (" + flag + ")", kMaxPicturePixels);
  } else {
    rgb = readImageRgb(picture, flag, kMaxPicturePixels);
  }
  return preprocessImage(rgb, p);
}

VisionAnalysis analyseVision(const Model& m, const ModelFiles& files, const std::string& picture, bool example,
                             const std::string& flag, const RunContext& ctx) {
  VisionAnalysis a = analysed(m, preparedPicture(files, picture, example, flag), picture, ctx);
  a.shown = unNormalised(a.run.pixel_values, readPreprocessing(files, flag));
  return a;
}

std::shared_ptr<const VisionAnalysis> visionSceneAnalysis(const Model& m, const ModelFiles* files, const VisionInputs& in,
                                                          const std::shared_ptr<const VisionAnalysis>& previous,
                                                          const RunContext& ctx) {
  if (previous && previous->picture == in.picture) return previous;
  if (!files) throw InputError("picture: the model's files are not at hand");
  return std::make_shared<const VisionAnalysis>(analyseVision(m, *files, in.picture, in.example, "picture", ctx));
}

VisionAnalysis analyseVisionPixels(const Model& m, const Array& pixel_values, const std::string& name, const RunContext& ctx) {
  VisionAnalysis a = analysed(m, pixel_values, name, ctx);
  a.shown = stretched(a.run.pixel_values);
  return a;
}

std::string patchTokenName(const VisionAnalysis& a, int64_t token) {
  if (token <= 0) return "[CLS]";
  const int64_t p = token - 1;
  return "patch " + std::to_string(p) + " (row " + std::to_string(p / a.run.grid_w) + ", column " +
         std::to_string(p % a.run.grid_w) + ")";
}

PatchMaps headsOverPicture(const VisionAnalysis& a, int64_t layer, int64_t query) {
  const VisionRun& r = a.run;
  const int64_t n = 1 + r.grid_h * r.grid_w;
  if (layer < 0 || layer >= r.layers)
    throw InputError("--layer: expected 0.." + std::to_string(r.layers - 1) + ", got " + std::to_string(layer));
  if (query < 0 || query >= n)
    throw InputError("--query: expected 0 ([CLS]) .. " + std::to_string(n - 1) + " (the patches), got " + std::to_string(query));
  PatchMaps m;
  m.picture = &a.shown;
  m.grid_h = r.grid_h;
  m.grid_w = r.grid_w;
  m.query = query;
  m.picture_title = pictureTitle();
  m.picture_notes = labelNotes(a);
  m.own_scale = true;  // each map to its largest patch weight (in its title): a diffuse head still shows its shape
  m.scale_caption = "weight \xC3\xB7 the map's largest patch weight";
  m.key = "vision/heads";
  m.version = std::to_string(reinterpret_cast<uintptr_t>(&a)) + ":" + std::to_string(layer) + ":" + std::to_string(query);
  const std::vector<Mat>& maps = r.attention[static_cast<size_t>(layer)];
  PatchMap mean{"mean of heads", std::vector<float>(static_cast<size_t>(n), 0.0f)};
  for (const Mat& A : maps)
    for (int64_t j = 0; j < n; ++j) mean.weights[static_cast<size_t>(j)] += A(query, j) / static_cast<float>(r.heads);
  m.maps.push_back(std::move(mean));
  for (int64_t h = 0; h < r.heads; ++h) {
    const Mat& A = maps[static_cast<size_t>(h)];
    m.maps.push_back({"head " + std::to_string(h), std::vector<float>(A.row(query).data(), A.row(query).data() + n)});
  }
  for (PatchMap& p : m.maps) p.title += " \xC2\xB7 max " + weightText(*std::max_element(p.weights.begin() + 1, p.weights.end()));
  return m;
}

PatchMaps rolloutOverPicture(const VisionAnalysis& a) {
  PatchMaps m;
  m.picture = &a.shown;
  m.grid_h = a.run.grid_h;
  m.grid_w = a.run.grid_w;
  m.query = 0;
  m.picture_title = pictureTitle();
  m.picture_notes = labelNotes(a);
  m.own_scale = true;
  m.scale_caption = "weight \xC3\xB7 the map's largest patch weight";
  m.key = "vision/rollout";
  m.version = std::to_string(reinterpret_cast<uintptr_t>(&a));
  // What each layer's heads give [CLS] on their own (their mean), then what the rollout carries through them.
  const int64_t n = 1 + a.run.grid_h * a.run.grid_w;
  for (size_t l = 0; l < a.rollout.size(); ++l) {
    PatchMap mean{layerName(static_cast<int64_t>(l)) + ", mean", std::vector<float>(static_cast<size_t>(n), 0.0f)};
    for (const Mat& A : a.run.attention[l])
      for (int64_t j = 0; j < n; ++j) mean.weights[static_cast<size_t>(j)] += A(0, j) / static_cast<float>(a.run.heads);
    m.maps.push_back(std::move(mean));
  }
  for (size_t l = 0; l < a.rollout.size(); ++l) {
    const Mat& R = a.rollout[l];
    m.maps.push_back({"rollout, " + layerName(static_cast<int64_t>(l)), std::vector<float>(R.row(0).data(), R.row(0).data() + R.cols())});
  }
  return m;
}

ColorScale visionGridScale(const ColorScale& chosen) {
  ColorScale s = chosen;
  if (s.kind == ScaleKind::Auto) s.kind = ScaleKind::Log;
  return s;
}

Scatter distanceScatter(const VisionAnalysis& a) {
  Scatter s;
  s.x_axis = "network depth (layer, from 1)";
  s.y_axis = "mean attention distance (pixels)";
  const int64_t heads = a.run.heads;
  for (size_t l = 0; l < a.distance.size(); ++l)
    for (int64_t h = 0; h < heads; ++h) {
      // Heads of a layer side by side around its depth, so equal distances stay apart.
      const float x = static_cast<float>(l + 1) + (static_cast<float>(h) - 0.5f * static_cast<float>(heads - 1)) * 0.08f;
      s.points.push_back({x, static_cast<float>(a.distance[l][static_cast<size_t>(h)]), headColor(static_cast<int>(h)), ""});
    }
  for (int64_t h = 0; h < heads && h < 16; ++h) s.legend.push_back({headColor(static_cast<int>(h)), "head " + std::to_string(h)});
  char uniform[64];
  std::snprintf(uniform, sizeof uniform, "uniform attention: %.1f px", a.uniform_distance);
  s.levels.push_back({a.uniform_distance, uniform});
  float lo = static_cast<float>(a.uniform_distance), hi = lo;
  for (const ScatterPoint& p : s.points) lo = std::min(lo, p.y), hi = std::max(hi, p.y);
  const float margin = std::max(0.15f * (hi - lo), 0.5f);
  s.x_hi = static_cast<float>(a.run.layers) + 1.0f;
  s.y_lo = std::max(0.0f, lo - margin);
  s.y_hi = hi + margin;
  return s;
}

}  // namespace attn
