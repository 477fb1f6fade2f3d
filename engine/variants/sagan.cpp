// SAGAN self-attention (Zhang et al. 2019, "Self-Attention Generative
// Adversarial Networks", §3, eq. 1–3) over an image. x ∈ R^{C×N} is a
// feature map, a column per pixel (N = H·W in raster order):
//   f(x) = W_f x,  g(x) = W_g x        W_f, W_g ∈ R^{C̄×C}     (1×1 convolutions)
//   h(x) = W_h x                       W_h ∈ R^{C×C}
//   s_ij = f(x_i)ᵀ g(x_j)              i: key pixel, j: query pixel
//   β_{j,i} = exp(s_ij) / Σ_i exp(s_ij)                                (1)
//   o_j = Σ_i β_{j,i} h(x_i)                                           (2)
//   y_j = x_j + γ o_j                                                  (3)
// W_h maps back to C channels as in the paper. The authors' code factors it
// as h to C/2 channels and a W_v 1×1 convolution back to C; that is a
// low-rank W_h = W_v W_h' and changes o, never β, so the paper's form is
// kept (one matrix less to write and replay).
// `pool` follows the authors' code: 2×2 max-pooling (stride 2) of f(x) and
// h(x), so the keys are N/4 cells; windows at an odd edge are clipped to the
// pixels there (⌈H/2⌉·⌈W/2⌉ keys) so every pixel is in some key.
//
// x is, in this order of preference:
//   --set x=FILE.npy   [C, H, W] as given (the picture shown under the maps:
//                      channels 0–2, each scaled to [0, 1] over its range;
//                      grey from channel 0 when C < 3)
//   --set image=FILE   a PNG or JPEG (stb_image), at most kMaxImagePixels
//   neither            defaultSaganScene(), 32 × 32 coloured shapes
// A picture becomes kImageChannels = 32 channels:
//   0–2   r, g, b, each standardised over the image (zero mean, unit
//         variance; a flat channel is 0)
//   3–4   the pixel's row and column, −1 … 1
//   5–31  tanh(a_kᵀ z + b_k) of those five, z; a_k ~ N(0, 1), b_k ~ N(0, ¼)
//         fixed (seed 0): features of the picture alone, not of --seed
// W_f, W_g, W_h ~ N(0, 1/C) from --seed. With tie_fg, W_g = W_f, so s_ij is
// a dot product of the pixels' reduced features: an untrained stand-in for
// the maps a trained SAGAN shows (pixels attend to pixels like them).
#include "engine/variants/sagan.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/gemm.h"
#include "engine/image.h"
#include "engine/npy.h"
#include "engine/registry.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

constexpr int64_t kImageChannels = 32;
// Dense β is [N, N]: 128² pixels make it 1 GiB. Larger pictures are refused
// before they are decoded; scale them down.
constexpr int64_t kMaxImagePixels = 128 * 128;

// x [C, N] from a picture [H, W, 3] (the header comment's channels).
Mat pictureFeatures(const Array& picture) {
  const int64_t h = picture.shape[0], w = picture.shape[1], n = h * w;
  Mat z(5, n);  // standardised r, g, b; row; column
  for (int64_t c = 0; c < 3; ++c) {
    for (int64_t p = 0; p < n; ++p) z(c, p) = picture.data[static_cast<size_t>(p * 3 + c)];
    const float mean = z.row(c).mean();
    z.row(c).array() -= mean;
    const float sd = std::sqrt(z.row(c).squaredNorm() / static_cast<float>(n));
    if (sd > 1e-6f) z.row(c) /= sd;
    else z.row(c).setZero();
  }
  auto coord = [](int64_t k, int64_t size) {
    return size > 1 ? 2.0f * static_cast<float>(k) / static_cast<float>(size - 1) - 1.0f : 0.0f;
  };
  for (int64_t p = 0; p < n; ++p) {
    z(3, p) = coord(p / w, h);
    z(4, p) = coord(p % w, w);
  }
  const Mat a = randomNormal(kImageChannels - 5, 5, 0, "sagan_features");
  const Mat b = randomNormal(kImageChannels - 5, 1, 0, "sagan_features_bias", 0.5f);
  Mat x(kImageChannels, n);
  x.topRows(5) = z;
  x.bottomRows(kImageChannels - 5) = ((a * z).colwise() + b.col(0)).array().tanh().matrix();
  return x;
}

// The picture shown under the maps for a given x [C, H, W]: channels 0–2 each scaled to [0, 1].
Array pictureOf(const Array& x) {
  const int64_t c = x.shape[0], n = x.shape[1] * x.shape[2];
  Array pic{{x.shape[1], x.shape[2], 3}, std::vector<float>(static_cast<size_t>(n * 3))};
  for (int64_t k = 0; k < 3; ++k) {
    const float* ch = x.data.data() + std::min(k, c - 1) * n;
    const auto [lo, hi] = std::minmax_element(ch, ch + n);
    const float span = *hi - *lo;
    for (int64_t p = 0; p < n; ++p)
      pic.data[static_cast<size_t>(p * 3 + k)] = span > 0 ? (ch[p] - *lo) / span : 0.5f;
  }
  return pic;
}

// An Array [C, H, W] in C order is a row-major [C, H·W] matrix.
Mat channelsByPixels(const Array& a) {
  return Eigen::Map<const Mat>(a.data.data(), a.shape[0], a.shape[1] * a.shape[2]);
}

Array asChannelsHw(const Mat& m, int64_t h, int64_t w) {
  return Array{{m.rows(), h, w}, std::vector<float>(m.data(), m.data() + m.size())};
}

Result sagan(const Inputs& in, const Params& p, const RunContext& ctx) {
  const std::string& x_path = p.getString("x");
  const std::string& image_path = p.getString("image");
  if (!x_path.empty() && !image_path.empty())
    throw InputError("sagan: give either x (a .npy [C, H, W]) or image (a PNG or JPEG), not both");

  // x [C, N] and the picture [H, W, 3] under the maps.
  Array picture;
  Mat x;
  int64_t h = 0, w = 0;
  std::vector<int64_t> queries;
  if (!x_path.empty()) {
    const Array a = readNpy(x_path, "x");
    if (a.rank() != 3 || a.size() == 0)
      throw InputError(x_path + " (x): expected a non-empty [C, H, W] array, got " + a.shapeString());
    if (a.shape[1] * a.shape[2] > kMaxImagePixels)
      throw InputError(x_path + " (x): " + std::to_string(a.shape[1]) + " × " + std::to_string(a.shape[2]) +
                       " pixels; expected at most " + std::to_string(kMaxImagePixels));
    checkInputMagnitude(a.data, x_path + " (x)");
    h = a.shape[1];
    w = a.shape[2];
    x = channelsByPixels(a);
    picture = pictureOf(a);
  } else {
    picture = image_path.empty() ? defaultSaganScene() : readImageRgb(image_path, "image", kMaxImagePixels);
    h = picture.shape[0];
    w = picture.shape[1];
    x = pictureFeatures(picture);
    // The default scene's shapes: the disc, the square, the triangle, the ground.
    if (image_path.empty()) queries = {11 * w + 9, 7 * w + 22, 24 * w + 24, 29 * w + 6};
  }
  if (queries.empty())  // the picture's quarter points
    for (const int64_t row : {h / 4, (3 * h) / 4})
      for (const int64_t col : {w / 4, (3 * w) / 4}) queries.push_back(row * w + col);
  const int64_t c = x.rows(), n = x.cols();
  const int64_t c_bar = p.getInt("c_bar") > 0 ? p.getInt("c_bar") : std::max<int64_t>(1, c / 8);
  const bool pool = p.getBool("pool");
  const int64_t n_keys = pool ? (h + 1) / 2 * ((w + 1) / 2) : n;
  checkDenseBudget(1, n, n_keys, 2, "sagan");  // scores, β
  // With the weights and features: W_h [C, C], W_f and W_g [C̄, C], f, g, gᵀ
  // [C̄, N], and x, h, o, y with their extras and output copies [C, N].
  const double cd = static_cast<double>(c), cbd = static_cast<double>(c_bar), nd = static_cast<double>(n);
  checkMemoryBudget(4.0 * (2.0 * nd * static_cast<double>(n_keys) + cd * cd + 2.0 * cbd * cd + 3.0 * cbd * nd + 8.0 * cd * nd),
                    "sagan: C = " + std::to_string(c) + " channels over N = " + std::to_string(n) + " pixels (C̄ = " +
                        std::to_string(c_bar) + ") would");

  const float scale = 1.0f / std::sqrt(static_cast<float>(c));
  const Mat w_f = randomNormal(c_bar, c, in.seed, "w_f", scale);
  const Mat w_g = p.getBool("tie_fg") ? w_f : randomNormal(c_bar, c, in.seed, "w_g", scale);
  const Mat w_h = randomNormal(c, c, in.seed, "w_h", scale);
  const float gamma = static_cast<float>(p.getFloat("gamma"));
  ctx.check();
  SaganAttention a = saganAttention(x, h, w, w_f, w_g, w_h, gamma, pool);

  Result r;
  r.q_tokens = positionTokens(n, "");
  r.k_tokens = positionTokens(n_keys, "");
  r.weights_label = "attention β_{j,i}";
  r.scores_label = "score s_ij = f(x_i)ᵀ g(x_j)";
  r.image_width = w;
  r.key_image_width = a.key_width;
  r.image_queries = queries;
  r.scores.push_back(std::move(a.scores));
  r.weights.push_back(std::move(a.beta));
  r.output = a.y.transpose();  // [N, C]: a row per pixel, like every variant's output
  r.extras.push_back({.name = "picture", .label = "the image", .kind = ExtraKind::Picture, .value = std::move(picture)});
  r.extras.push_back({.name = "o", .label = "attention output o [C, H, W]", .kind = ExtraKind::Data,
                      .value = asChannelsHw(a.o, h, w)});
  r.extras.push_back({.name = "y", .label = "y = x + γ o [C, H, W]", .kind = ExtraKind::Data,
                      .value = asChannelsHw(a.y, h, w)});
  r.inputs["x"] = x;
  r.input_shapes["x"] = {c, h, w};
  r.inputs["w_f"] = w_f;
  r.inputs["w_g"] = w_g;
  r.inputs["w_h"] = w_h;
  r.flops = 2.0 * static_cast<double>(n) * c * (2 * c_bar + c)           // f, g, h
            + 2.0 * static_cast<double>(n) * n_keys * c_bar               // s
            + 3.0 * static_cast<double>(n) * n_keys                       // softmax
            + 2.0 * static_cast<double>(n) * n_keys * c + 2.0 * static_cast<double>(n) * c;  // o, y
  return r;
}

}  // namespace

Mat maxPool2x2(const Mat& m, int64_t height, int64_t width) {
  const int64_t ph = (height + 1) / 2, pw = (width + 1) / 2;
  Mat out(m.rows(), ph * pw);
  for (int64_t a = 0; a < ph; ++a)
    for (int64_t b = 0; b < pw; ++b) {
      auto cell = out.col(a * pw + b);
      cell = m.col(2 * a * width + 2 * b);
      for (int64_t y = 2 * a; y < std::min(height, 2 * a + 2); ++y)
        for (int64_t x = 2 * b; x < std::min(width, 2 * b + 2); ++x) cell = cell.cwiseMax(m.col(y * width + x));
    }
  return out;
}

SaganAttention saganAttention(const Mat& x, int64_t height, int64_t width, const Mat& w_f, const Mat& w_g,
                              const Mat& w_h, float gamma, bool pool) {
  SaganAttention a;
  // f(x) = W_f x [C̄, N], g(x) = W_g x [C̄, N], h(x) = W_h x [C, N]
  Mat f = product(w_f, x), h = product(w_h, x);
  const Mat g = product(w_g, x);
  a.key_width = width;
  if (pool) {  // keys and values over 2×2 cells               [C̄, N/4], [C, N/4]
    f = maxPool2x2(f, height, width);
    h = maxPool2x2(h, height, width);
    a.key_width = (width + 1) / 2;
  }
  // s_ij = f(x_i)ᵀ g(x_j), row j: sᵀ = g(x)ᵀ f(x)                [N, N_keys]
  a.scores = product(Mat(g.transpose()), f);
  // β_{j,i} = softmax_i(s_ij)                                      [N, N_keys]
  maskedSoftmaxRows(a.scores, Mat(), a.beta);
  // o_j = Σ_i β_{j,i} h(x_i): o = h(x) βᵀ                          [C, N]
  a.o = Mat(x.rows(), x.cols());
  gemm(h, a.beta, true, 1.0f, 0.0f, a.o);
  // y = x + γ o                                                    [C, N]
  a.y = x + gamma * a.o;
  return a;
}

Array defaultSaganScene() {
  constexpr int64_t kSize = 32;
  Array a{{kSize, kSize, 3}, std::vector<float>(kSize * kSize * 3)};
  auto put = [&](int64_t row, int64_t col, float r, float g, float b) {
    float* px = a.data.data() + (row * kSize + col) * 3;
    px[0] = r, px[1] = g, px[2] = b;
  };
  for (int64_t y = 0; y < kSize; ++y)
    for (int64_t x = 0; x < kSize; ++x) {
      const float t = static_cast<float>(y) / kSize;
      if (y < 22) put(y, x, 0.45f + 0.4f * t, 0.65f + 0.25f * t, 0.95f);  // sky, lighter at the horizon
      else put(y, x, 0.2f, 0.55f - 0.2f * t, 0.15f);                     // ground
      const float dy = static_cast<float>(y - 11), dx = static_cast<float>(x - 9);
      if (dy * dy + dx * dx <= 36.5f) put(y, x, 0.9f, 0.15f, 0.12f);      // red disc, r = 6, centre (11, 9)
      if (y >= 4 && y < 12 && x >= 19 && x < 27) put(y, x, 0.98f, 0.85f, 0.1f);  // yellow square
      // blue triangle: apex (16, 24), base on row 28 from column 18 to 30
      if (y >= 16 && y <= 28 && std::abs(static_cast<float>(x - 24)) <= 0.5f * static_cast<float>(y - 16))
        put(y, x, 0.15f, 0.25f, 0.85f);
    }
  return a;
}

VariantInfo makeSaganVariant() {
  VariantInfo v;
  v.name = "sagan";
  v.family = "memory and pointers";
  v.title = "SAGAN self-attention on an image";
  v.summary = "s_ij = f(x_i)ᵀ g(x_j);  β_{j,i} = softmax_i(s_ij);  o_j = Σ_i β_{j,i} h(x_i);  y = x + γ o";
  v.citation = "Zhang et al. 2019";
  v.input = InputKind::Image;
  v.params = {
      {.key = "gamma", .symbol = "γ", .type = ParamType::Float,
       .help = "Scale γ of the attention output in y = x + γ o (learned from 0 in the paper)", .min = -10,
       .max = 10, .def = 1.0},
      {.key = "c_bar", .symbol = "c_bar", .type = ParamType::Int,
       .help = "Channels C̄ of f(x) and g(x) (0 = C/8, at least 1, as in the paper)", .min = 0, .max = 4096,
       .def = int64_t{0}},
      {.key = "pool", .symbol = "pool", .type = ParamType::Bool,
       .help = "2×2 max-pool the keys and values f(x), h(x) as the authors' code does (N/4 keys)",
       .def = false},
      {.key = "tie_fg", .symbol = "W_g = W_f", .type = ParamType::Bool,
       .help = "W_g = W_f: s_ij compares pixels' reduced features, so pixels attend to pixels like them (what a "
               "trained SAGAN's maps look like); off: W_g seeded on its own",
       .def = true},
      {.key = "image", .symbol = "image", .type = ParamType::File,
       .help = "A PNG or JPEG (at most 128 × 128 pixels), made into 32 channels: standardised RGB, the "
               "coordinates and 27 fixed random features of those; empty: a 32 × 32 scene of coloured shapes",
       .def = std::string(), .file_shape = "image"},  // "image": the GUI's file dialog offers pictures
      {.key = "x", .symbol = "x", .type = ParamType::File,
       .help = "The feature map x as a .npy [C, H, W] (instead of an image)", .def = std::string(),
       .file_shape = "[C, H, W]"},
  };
  v.views = {"image", "heatmap", "family"};
  v.row_axis = "query pixel j";
  v.col_axis = "key pixel i";
  v.run = sagan;
  return v;
}

}  // namespace attn
