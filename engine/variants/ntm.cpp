// Neural Turing Machine addressing (Graves et al. 2014, §3.3): one step of a
// head's weighting over the N rows of the memory M [N, W]:
//   w_c(i) = softmax_i(β · K(k, M_i)),  K(u, v) = u·v / (‖u‖ ‖v‖)     (5), (6)
//   w_g    = g · w_c + (1 − g) · w_prev                                 (7)
//   w̃(i)   = Σ_j w_g(j) s(i − j)   (indices mod N)                      (8)
//   w(i)   = w̃(i)^γ / Σ_j w̃(j)^γ                                       (9)
// s is given as [s(−K), …, s(0), …, s(K)]: s(+1) = 1 moves the focus from row j
// to row j + 1 (and from N − 1 to 0).
#include "engine/variants/ntm.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/npy.h"
#include "engine/registry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {

namespace {

// v / max|v|: the same direction with a norm in [1, √W], so the cosine of rows
// of 1e15 or of denormals is that of unit rows, and ε matters only for a zero vector.
Eigen::VectorXd unitScaled(const Eigen::VectorXd& v) {
  const double top = v.cwiseAbs().maxCoeff();
  return top > 0 ? Eigen::VectorXd(v / top) : v;
}

// softmax of a double vector, max subtracted.                       [n]
Eigen::VectorXd softmax(const Eigen::VectorXd& a) {
  const Eigen::VectorXd e = (a.array() - a.maxCoeff()).exp();
  return e / e.sum();
}

}  // namespace

NtmAddressing ntmAddress(const Mat& memory, const Vec& key, const Vec& w_prev, double beta, double g,
                         const std::vector<double>& shift, double gamma) {
  const int64_t n = memory.rows();
  const int64_t half = static_cast<int64_t>(shift.size()) / 2;  // K
  constexpr double kEps = 1e-8;
  // K(k, M_i) = k·M_i / (‖k‖ ‖M_i‖ + ε), each vector scaled to max |·| = 1 first   [N]
  const Eigen::VectorXd k = unitScaled(key.cast<double>());
  Eigen::VectorXd beta_k(n);
  for (int64_t i = 0; i < n; ++i) {
    const Eigen::VectorXd m = unitScaled(memory.row(i).transpose().cast<double>());
    beta_k(i) = beta * k.dot(m) / (k.norm() * m.norm() + kEps);
  }
  // w_c = softmax(β K)                                                   [N]
  const Eigen::VectorXd w_c = softmax(beta_k);
  // w_g = g w_c + (1 − g) w_prev                                         [N]
  const Eigen::VectorXd w_g = g * w_c + (1.0 - g) * w_prev.cast<double>();
  // w̃(i) = Σ_j w_g(j) s(i − j): row j's weight goes to row j + o with s(o)   [N]
  Eigen::VectorXd w_tilde = Eigen::VectorXd::Zero(n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t o = -half; o <= half; ++o)
      w_tilde(((j + o) % n + n) % n) += w_g(j) * shift[static_cast<size_t>(o + half)];
  // w = w̃^γ / Σ w̃^γ = softmax(γ log w̃): no power of a tiny w̃ underflows to 0/0,
  // and log 0 = −∞ gives exactly 0.                                       [N]
  const Eigen::VectorXd w = softmax(gamma * w_tilde.array().log().matrix());
  return {.w_c = w_c.cast<float>(), .w_g = w_g.cast<float>(), .w_tilde = w_tilde.cast<float>(), .w = w.cast<float>()};
}

namespace {

// A parameter's .npy file, checked for rank and shape; `shape` names the expected one ("[N, W]").
Array readParamFile(const std::string& path, const std::string& key, const std::vector<int64_t>& expected,
                    const std::string& shape) {
  const Array a = readNpy(path, key);
  if (a.shape != expected)
    throw InputError(path + " (" + key + "): expected shape " + shape + " = " + Array{expected, {}}.shapeString() +
                     ", got " + a.shapeString());
  checkInputMagnitude(a.data, path + " (" + key + ")");
  return a;
}

Result ntm(const Inputs& in, const Params& p, const RunContext& ctx) {
  const std::vector<double>& shift = p.getFloatList("shift");  // odd length, summing to 1: checked by Params
  const auto half_shift = static_cast<int64_t>(shift.size()) / 2;  // K

  // M [N, W]: the file, or the input x (N = L tokens, W = d).
  const std::string& memory_path = p.getString("memory");
  const Mat memory = memory_path.empty() ? in.query() : readInputMatrix(memory_path, "memory", "[N, W]");
  const int64_t n = memory.rows(), width = memory.cols();

  // k [W]: the file, or a seeded row of M plus noise at half M's RMS, so
  // content addressing has a row to find.
  const std::string& key_path = p.getString("key");
  Vec key;
  if (key_path.empty()) {
    const float rms = memory.norm() / std::sqrt(static_cast<float>(memory.size()));
    const Mat noise = randomNormal(1, width, in.seed, "key", 0.5f * rms);
    const auto target = static_cast<int64_t>(hashString("key row " + std::to_string(in.seed)) % static_cast<uint64_t>(n));
    key = (memory.row(target) + noise).transpose();
  } else {
    const Array a = readParamFile(key_path, "key", {width}, "[W]");
    key = Eigen::Map<const Vec>(a.data.data(), width);
  }

  // w_prev [N]: the file (≥ 0, summing to 1), or a seeded softmax.
  const std::string& prev_path = p.getString("w_prev");
  Vec w_prev;
  if (prev_path.empty()) {
    Mat prev;
    maskedSoftmaxRows(randomNormal(1, n, in.seed, "w_prev", 2.0f), Mat(), prev);
    w_prev = prev.row(0).transpose();
  } else {
    const Array a = readParamFile(prev_path, "w_prev", {n}, "[N]");
    checkDistribution(std::vector<double>(a.data.begin(), a.data.end()), prev_path + " (w_prev)");
    w_prev = Eigen::Map<const Vec>(a.data.data(), n);
  }
  ctx.check();

  const NtmAddressing a = ntmAddress(memory, key, w_prev, p.getFloat("beta"), p.getFloat("g"), shift,
                                     p.getFloat("gamma"));
  Result r;
  r.q_tokens = {"w"};
  // Bars and columns are labelled by row index: M is read by address, not by token.
  r.k_tokens = positionTokens(n, "");
  r.weights.assign(1, a.w.transpose());  // [1, 1, N]
  r.weights_label = "head weighting w";
  // Every weighting is over the N memory slots (M's rows).
  auto bars = [](std::string name, std::string label, const Vec& v) {
    return Extra{.name = std::move(name), .label = std::move(label), .kind = ExtraKind::TokenValues,
                 .value = Array::fromVec(v), .row_axis = "memory slot i"};
  };
  r.extras.push_back(bars("w_prev", "previous weighting w_prev", w_prev));
  r.extras.push_back(bars("w_c", "content w_c = softmax(β K(k, M_i))", a.w_c));
  r.extras.push_back(bars("w_g", "interpolated w_g = g w_c + (1 − g) w_prev", a.w_g));
  r.extras.push_back(bars("w_tilde", "shifted w̃(i) = Σ_j w_g(j) s(i − j)", a.w_tilde));
  r.extras.push_back(bars("w", "sharpened w ∝ w̃^γ", a.w));
  // s(o) for the offsets o = −K … K, by offset.
  Extra s{.name = "shift", .label = "shift weighting s(o)", .kind = ExtraKind::TokenValues,
          .value = Array::fromVec(Eigen::Map<const Eigen::VectorXd>(shift.data(), static_cast<Eigen::Index>(shift.size())).cast<float>()),
          .row_axis = "shift offset o"};
  for (int64_t o = -half_shift; o <= half_shift; ++o) {
    char label[24];
    std::snprintf(label, sizeof label, "%+lld", static_cast<long long>(o));
    s.row_labels.emplace_back(o == 0 ? "0" : label);
  }
  r.extras.push_back(std::move(s));
  r.extras.push_back({.name = "memory", .label = "memory M [slot, feature]", .kind = ExtraKind::Matrix,
                      .value = Array::fromMat(memory), .row_axis = "memory slot i", .col_axis = "feature (of W)",
                      .signed_values = true});
  r.inputs["memory"] = memory;
  r.inputs["key"] = key;
  r.inputs["w_prev"] = w_prev;
  r.vector_inputs = {"key", "w_prev"};
  r.flops = 3.0 * static_cast<double>(n) * width          // cosines
            + 10.0 * n                                    // softmax, interpolation, sharpening
            + 2.0 * static_cast<double>(n) * static_cast<double>(shift.size());  // circular convolution
  return r;
}

}  // namespace

VariantInfo makeNtmVariant() {
  VariantInfo v;
  v.name = "ntm";
  v.family = "memory and pointers";
  v.title = "Neural Turing Machine addressing";
  v.summary = "w_c ∝ exp(β K(k, M_i));  w_g = g w_c + (1 − g) w_prev;  w̃(i) = Σ_j w_g(j) s(i − j);  w ∝ w̃^γ";
  v.citation = "Graves et al. 2014, §3.3";
  v.input = InputKind::Memory;
  v.params = {
      {.key = "beta", .symbol = "β", .type = ParamType::Float,
       .help = "Key strength β ≥ 0: 0 spreads w_c evenly, large β focuses it on the rows most like the key",
       .min = 0, .max = 1000, .log_scale = true, .def = 5.0},
      {.key = "g", .symbol = "g", .type = ParamType::Float,
       .help = "Interpolation gate g: 1 takes the content weighting w_c, 0 keeps the previous weighting w_prev",
       .min = 0, .max = 1, .def = 0.9},
      {.key = "shift", .symbol = "s", .type = ParamType::FloatList,
       .help = "Shift weighting [s(−K), …, s(0), …, s(K)]: an odd number of entries ≥ 0 summing to 1; the middle "
               "one is no shift, the next one moves the focus one row down",
       .min = 0, .max = 1, .def = std::vector<double>{0.1, 0.2, 0.7}, .per_head = false, .sums_to_one = true,
       .centred = true},
      {.key = "gamma", .symbol = "γ", .type = ParamType::Float,
       .help = "Sharpening γ ≥ 1: w ∝ w̃^γ undoes the blur of the shift", .min = 1, .max = 100, .log_scale = true,
       .def = 2.0},
      {.key = "memory", .symbol = "M", .type = ParamType::File,
       .help = "The memory M as a .npy [N, W] (it decides N and W); empty: the input x (N = --length, W = --dim)",
       .def = std::string(), .file_shape = "[N, W]"},
      {.key = "key", .symbol = "k", .type = ParamType::File,
       .help = "The key k as a .npy [W]; empty: a seeded row of M plus noise", .def = std::string(),
       .file_shape = "[W]"},
      {.key = "w_prev", .symbol = "w_prev", .type = ParamType::File,
       .help = "The previous weighting as a .npy [N], entries ≥ 0 summing to 1; empty: seeded",
       .def = std::string(), .file_shape = "[N]"},
  };
  v.views = {"extras", "heatmap", "family"};
  v.row_axis = "head";
  v.col_axis = "memory row";
  v.run = ntm;
  return v;
}

}  // namespace attn
