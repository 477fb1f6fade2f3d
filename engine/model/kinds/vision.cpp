// Vision runs (vision.h): the image processor's steps, the checks before a
// pass, the pass through the family, the classifier's top labels.
#include "engine/model/kinds/vision.h"

#include "engine/attention_math.h"
#include "engine/model/checkpoint/config.h"
#include "engine/model/families/family.h"
#include "engine/parallel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

namespace attn {

bool isVisionModel(const Model& m) { return m.family && static_cast<bool>(m.family->vision); }

ImagePreprocessing readPreprocessing(const ModelFiles& files, const std::string& flag) {
  const std::optional<std::string> text = files.read_text("preprocessor_config.json");
  const std::string where = (std::filesystem::path(files.label) / "preprocessor_config.json").string();
  if (!text)
    throw InputError(where + ": missing (" + flag + " needs the folder's image preprocessing; or give --pixels FILE.npy)");
  return parsePreprocessorConfig(*text, where);
}

ImagePreprocessing parsePreprocessorConfig(const std::string& text, const std::string& where) {
  const nlohmann::json j = parseJsonObject(text, where);
  const ConfigReader r{j, where};
  ImagePreprocessing p;
  p.resize = r.flag("do_resize", true);
  if (const nlohmann::json* size = r.find("size")) {
    if (size->is_number_integer()) {  // older files: one side for both
      p.height = p.width = r.positive("size", 16384);
    } else if (size->is_object() && size->contains("height") && size->contains("width")) {
      const ConfigReader s{*size, where + " size"};
      p.height = s.positive("height", 16384);
      p.width = s.positive("width", 16384);
    } else {
      r.fail("size", "expected {\"height\": H, \"width\": W}, got " + size->dump().substr(0, 60));
    }
  }
  // PILImageResampling: 2 is BILINEAR, what ViTImageProcessor uses.
  if (p.resize && r.number("resample", 2, 0, 5) != 2)
    r.fail("resample", "is " + r.find("resample")->dump() + ", but only 2 (bilinear) is implemented");
  p.rescale = r.flag("do_rescale", true);
  p.rescale_factor = r.number("rescale_factor", 1.0 / 255.0, 1e-12, 1e6);
  p.normalize = r.flag("do_normalize", true);
  for (const char* key : {"image_mean", "image_std"}) {
    std::vector<double>& v = std::string(key) == "image_mean" ? p.mean : p.std;
    const nlohmann::json* a = r.find(key);
    if (!a) continue;
    if (a->is_number()) {
      v.assign(3, a->get<double>());
    } else if (a->is_array() && a->size() == 3 && std::all_of(a->begin(), a->end(), [](const nlohmann::json& x) { return x.is_number(); })) {
      v = a->get<std::vector<double>>();
    } else {
      r.fail(key, "expected three numbers (one per channel), got " + a->dump().substr(0, 60));
    }
  }
  for (const double s : p.std)
    if (!(s > 0) || !std::isfinite(s)) r.fail("image_std", "must be positive, got " + nlohmann::json(p.std).dump());
  for (const double m : p.mean)
    if (!std::isfinite(m)) r.fail("image_mean", "must be finite, got " + nlohmann::json(p.mean).dump());
  // Steps that change the pixels and are not implemented here.
  if (r.flag("do_center_crop", false)) r.fail("do_center_crop", "is true, which is not implemented (expected false)");
  if (r.flag("do_convert_rgb", true) == false) r.fail("do_convert_rgb", "is false, which is not implemented (expected true)");
  return p;
}

namespace {

// Pillow's Resample.c: BILINEAR's triangle, coefficients per output pixel,
// then in 8-bit fixed point.
constexpr int kPrecisionBits = 32 - 8 - 2;

struct Coefficients {
  int64_t ksize = 0;
  std::vector<int64_t> first, count;  // per output pixel: the first input pixel and how many
  std::vector<int32_t> k;             // [out][ksize]
};

Coefficients coefficients(int64_t in, int64_t out) {
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  const double filterscale = std::max(scale, 1.0);
  const double support = 1.0 * filterscale;
  Coefficients c;
  c.ksize = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  c.first.resize(static_cast<size_t>(out));
  c.count.resize(static_cast<size_t>(out));
  c.k.assign(static_cast<size_t>(out * c.ksize), 0);
  std::vector<double> w(static_cast<size_t>(c.ksize));
  for (int64_t x = 0; x < out; ++x) {
    const double center = (static_cast<double>(x) + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    const int64_t xmin = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t xmax = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in) - xmin;
    double sum = 0;
    for (int64_t i = 0; i < xmax; ++i) {
      const double t = std::abs((static_cast<double>(i + xmin) - center + 0.5) * ss);
      w[static_cast<size_t>(i)] = t < 1.0 ? 1.0 - t : 0.0;
      sum += w[static_cast<size_t>(i)];
    }
    for (int64_t i = 0; i < xmax; ++i) {
      const double v = sum != 0.0 ? w[static_cast<size_t>(i)] / sum : w[static_cast<size_t>(i)];
      c.k[static_cast<size_t>(x * c.ksize + i)] =
          static_cast<int32_t>(v < 0 ? -0.5 + v * (1 << kPrecisionBits) : 0.5 + v * (1 << kPrecisionBits));
    }
    c.first[static_cast<size_t>(x)] = xmin;
    c.count[static_cast<size_t>(x)] = xmax;
  }
  return c;
}

uint8_t clip8(int64_t v) {
  if (v >= (int64_t{1} << kPrecisionBits) << 8) return 255;
  if (v <= 0) return 0;
  return static_cast<uint8_t>(v >> kPrecisionBits);
}

}  // namespace

std::vector<uint8_t> resizeBilinearLikePillow(const std::vector<uint8_t>& rgb, int64_t h, int64_t w, int64_t out_h,
                                              int64_t out_w) {
  std::vector<uint8_t> img = rgb;
  int64_t cur_w = w;
  const Coefficients horiz = coefficients(w, out_w), vert = coefficients(h, out_h);
  int64_t row0 = 0;  // the first input row the vertical pass reads, when the horizontal pass ran on fewer rows
  if (out_w != w) {
    // Only the rows the vertical pass will read (Pillow's ybox_first … ybox_last).
    const int64_t first = vert.first.front(), last = vert.first.back() + vert.count.back();
    std::vector<uint8_t> tmp(static_cast<size_t>((last - first) * out_w * 3));
    for (int64_t y = first; y < last; ++y)
      for (int64_t x = 0; x < out_w; ++x)
        for (int64_t ch = 0; ch < 3; ++ch) {
          int64_t ss = int64_t{1} << (kPrecisionBits - 1);
          for (int64_t i = 0; i < horiz.count[static_cast<size_t>(x)]; ++i)
            ss += int64_t{img[static_cast<size_t>((y * cur_w + horiz.first[static_cast<size_t>(x)] + i) * 3 + ch)]} *
                  horiz.k[static_cast<size_t>(x * horiz.ksize + i)];
          tmp[static_cast<size_t>(((y - first) * out_w + x) * 3 + ch)] = clip8(ss);
        }
    img = std::move(tmp);
    cur_w = out_w;
    row0 = first;
  }
  if (out_h != h) {
    std::vector<uint8_t> tmp(static_cast<size_t>(out_h * cur_w * 3));
    for (int64_t y = 0; y < out_h; ++y)
      for (int64_t x = 0; x < cur_w; ++x)
        for (int64_t ch = 0; ch < 3; ++ch) {
          int64_t ss = int64_t{1} << (kPrecisionBits - 1);
          const int64_t y0 = vert.first[static_cast<size_t>(y)] - row0;
          for (int64_t i = 0; i < vert.count[static_cast<size_t>(y)]; ++i)
            ss += int64_t{img[static_cast<size_t>(((y0 + i) * cur_w + x) * 3 + ch)]} * vert.k[static_cast<size_t>(y * vert.ksize + i)];
          tmp[static_cast<size_t>((y * cur_w + x) * 3 + ch)] = clip8(ss);
        }
    img = std::move(tmp);
  }
  return img;
}

Array preprocessImage(const Array& rgb01, const ImagePreprocessing& p) {
  const int64_t h = rgb01.shape.at(0), w = rgb01.shape.at(1);
  std::vector<uint8_t> u8(rgb01.data.size());
  for (size_t i = 0; i < u8.size(); ++i)
    u8[i] = static_cast<uint8_t>(std::clamp(std::lround(rgb01.data[i] * 255.0f), 0L, 255L));
  int64_t H = h, W = w;
  if (p.resize && (p.height != h || p.width != w)) {
    u8 = resizeBilinearLikePillow(u8, h, w, p.height, p.width);
    H = p.height, W = p.width;
  }
  // rescale in double then float32 (transformers' rescale), normalise in float32: channels first.
  Array out{{3, H, W}, std::vector<float>(static_cast<size_t>(3 * H * W))};
  for (int64_t ch = 0; ch < 3; ++ch) {
    const float mean = static_cast<float>(p.mean[static_cast<size_t>(ch)]), sd = static_cast<float>(p.std[static_cast<size_t>(ch)]);
    for (int64_t i = 0; i < H * W; ++i) {
      float v = static_cast<float>(u8[static_cast<size_t>(i * 3 + ch)]);
      if (p.rescale) v = static_cast<float>(static_cast<double>(u8[static_cast<size_t>(i * 3 + ch)]) * p.rescale_factor);
      if (p.normalize) v = (v - mean) / sd;
      out.data[static_cast<size_t>(ch * H * W + i)] = v;
    }
  }
  return out;
}

std::vector<std::vector<double>> attentionDistance(const VisionRun& run, int64_t patch_size) {
  const int64_t P = run.grid_h * run.grid_w;
  // ‖c_i − c_j‖ in pixels between patch centres                        [P, P]
  Eigen::MatrixXd dist(P, P);
  for (int64_t i = 0; i < P; ++i)
    for (int64_t j = 0; j < P; ++j)
      dist(i, j) = static_cast<double>(patch_size) * std::hypot(static_cast<double>(i / run.grid_w - j / run.grid_w),
                                                                static_cast<double>(i % run.grid_w - j % run.grid_w));
  std::vector<std::vector<double>> out(run.attention.size());
  for (size_t l = 0; l < run.attention.size(); ++l)
    for (const Mat& A : run.attention[l]) {
      const Eigen::MatrixXd patches = A.bottomRightCorner(P, P).cast<double>();
      double sum = 0;
      for (int64_t i = 0; i < P; ++i) {
        const double z = patches.row(i).sum();
        if (z > 0) sum += patches.row(i).dot(dist.row(i)) / z;
      }
      out[l].push_back(sum / static_cast<double>(P));
    }
  return out;
}

VisionRun runVision(const Model& m, const Array& pixels, int top_k, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  if (!isVisionModel(m))
    throw InputError("--image: " + c.arch_name + " reads text, not pictures (--image and --pixels need a ViT)");
  if (pixels.shape.size() != 3 || pixels.shape[0] != c.channels || pixels.shape[1] != c.image_size ||
      pixels.shape[2] != c.image_size)
    throw InputError("--pixels: expected float32 [" + std::to_string(c.channels) + ", " + std::to_string(c.image_size) +
                     ", " + std::to_string(c.image_size) + "] (channels, height, width: the model's image_size), got " +
                     Array{pixels.shape, {}}.shapeString());
  for (size_t i = 0; i < pixels.data.size(); ++i)
    if (!std::isfinite(pixels.data[i]) || std::abs(pixels.data[i]) > 1e6f)
      throw InputError("--pixels: value " + std::to_string(i) + " is " + std::to_string(pixels.data[i]) +
                       " (expected finite values of magnitude at most 1e6)");
  const int64_t grid = c.image_size / c.patch_size, n = 1 + grid * grid;
  checkMemoryBudget(4.0 * static_cast<double>(c.layers * c.heads) * static_cast<double>(n * n) +
                        8.0 * static_cast<double>(n * n),
                    "the attention maps of " + std::to_string(n) + " tokens (1 + " + std::to_string(grid * grid) + " patches)");
  const auto t0 = std::chrono::steady_clock::now();
  VisionRun run;
  run.layers = c.layers;
  run.heads = c.heads;
  run.d_head = c.head_dim;
  run.grid_h = run.grid_w = grid;
  run.pixel_values = pixels;
  const PassThreads threads = passThreads(m, n, ctx);
  m.family->vision(m, run, ctx);
  if (m.predicts && top_k > 0) {
    const Mat logits = lmLogits(m, run.hidden.topRows(1), &run.flops);  // the classifier on [CLS]
    const int64_t k = std::min<int64_t>(top_k, logits.cols());
    const float mx = logits.maxCoeff();
    const double z = (logits.array() - mx).exp().cast<double>().sum();
    std::vector<int64_t> order(static_cast<size_t>(logits.cols()));
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return logits(0, a) > logits(0, b); });
    for (int64_t i = 0; i < k; ++i) {
      const int64_t id = order[static_cast<size_t>(i)];
      run.top_k.push_back({static_cast<int32_t>(id), c.labels.at(static_cast<size_t>(id)),
                           static_cast<float>(std::exp(static_cast<double>(logits(0, id) - mx)) / z)});
    }
  }
  run.compute_seconds = secondsSince(t0);
  ctx.progress(1.0f);
  return run;
}

}  // namespace attn
