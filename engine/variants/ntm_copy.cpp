// The copy-task NTM's forward pass (scripts/train_ntm_copy.py), at each step t:
//   h_t = LSTM([x_t; r_{t−1}], h_{t−1})                                  controller
//   write head: w^w_t = address(M_{t−1}, params(h_t), w^w_{t−1})
//               M_t = M_{t−1} ∘ (1 − w^w_t e_tᵀ) + w^w_t a_tᵀ           (3), (4)
//   read head:  w^r_t = address(M_t, params(h_t), w^r_{t−1});  r_t = M_tᵀ w^r_t   (2)
//   y_t = σ(W_y [h_t; r_t] + b_y)
// with address() the four stages of ntm.cpp.
//
// The variant runs it on a bit sequence, the user's file or seeded coin flips:
// its write and read weightings over time (the paper's Figure 6), and at one
// time step, the timeline's, the memory, both heads' four addressing stages
// with β, g, s, γ, and the write head's erase and add vectors.
#include "engine/variants/ntm_copy.h"

#include "engine/activations.h"
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/params.h"
#include "engine/registry.h"
#include "engine/trained.h"

#include <cmath>
#include <cstdio>
#include <iterator>

namespace attn {

namespace {

constexpr int64_t kShifts = 3;  // s(−1), s(0), s(+1)

// torch's softplus (β = 1, threshold 20): log(1 + eˣ), or x itself above 20.
double softplus(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }

NtmHeadLayer loadHead(const SafetensorsFile& f, const std::string& prefix, int64_t outputs, int64_t hidden) {
  return {.weight = trainedMatrix(f, prefix + "weight", outputs, hidden),
          .bias = trainedVector(f, prefix + "bias", outputs)};
}

// The head layer's raw output [W + 6 (+ 2W)] split as the script's head_params():
// k, β̂, ĝ, ŝ(−1), ŝ(0), ŝ(+1), γ̂ (then ê, a for the write head).
NtmHeadStep headParams(const NtmHeadLayer& layer, const Vec& h, int64_t width, bool write) {
  const Vec raw = layer.weight * h + layer.bias;
  NtmHeadStep p;
  p.k = raw.head(width);
  p.beta = softplus(raw(width));
  p.g = sigmoid(raw(width + 1));
  // s = softmax(ŝ)                                                          [3]
  const Eigen::VectorXd s_hat = raw.segment(width + 2, kShifts).cast<double>();
  const Eigen::VectorXd s = (s_hat.array() - s_hat.maxCoeff()).exp();
  p.s.assign(s.data(), s.data() + kShifts);
  for (double& v : p.s) v /= s.sum();
  p.gamma = 1.0 + softplus(raw(width + 5));
  if (write) {
    p.e = raw.segment(width + 6, width).unaryExpr([](float v) { return static_cast<float>(sigmoid(v)); });
    p.a = raw.segment(2 * width + 6, width);
  }
  return p;
}

Vec checkedWeighting(const SafetensorsFile& f, const std::string& name, int64_t n) {
  const Vec w = trainedVector(f, name, n);
  checkDistribution(std::vector<double>(w.data(), w.data() + n), f.what() + " (tensor '" + name + "')");
  return w;
}

}  // namespace

NtmCopyModel NtmCopyModel::load(const SafetensorsFile& f) {
  NtmCopyModel m;
  m.bits_ = trainedConfigInt(f, "bits", 1, 64);
  m.max_length_ = trainedConfigInt(f, "max_length", 1, 256);
  m.rows_ = trainedConfigInt(f, "memory_rows", 2, 1024);
  m.width_ = trainedConfigInt(f, "memory_width", 1, 256);
  const int64_t hidden = trainedConfigInt(f, "controller", 1, 1024);
  const int64_t w = m.width_;
  m.controller_ = LstmCell::load(f, "controller.", m.bits_ + 1 + w, hidden);
  m.write_head_ = loadHead(f, "write_head.", 3 * w + 6, hidden);
  m.read_head_ = loadHead(f, "read_head.", w + 6, hidden);
  m.output_weight_ = trainedMatrix(f, "output.weight", m.bits_, hidden + w);
  m.output_bias_ = trainedVector(f, "output.bias", m.bits_);
  m.memory0_ = trainedMatrix(f, "memory0", m.rows_, w);
  m.read0_ = trainedVector(f, "read0", w);
  m.write_w0_ = checkedWeighting(f, "write_w0", m.rows_);
  m.read_w0_ = checkedWeighting(f, "read_w0", m.rows_);
  return m;
}

Mat NtmCopyModel::copyInput(const Mat& sequence) const {
  const int64_t L = sequence.rows();
  Mat x = Mat::Zero(2 * L + 1, bits_ + 1);
  x.topLeftCorner(L, bits_) = sequence;
  x(L, bits_) = 1.0f;  // the delimiter
  return x;
}

std::vector<NtmCopyStep> NtmCopyModel::run(const Mat& x) const {
  const int64_t hidden = controller_.hidden();
  Vec h = Vec::Zero(hidden), c = Vec::Zero(hidden);
  Mat memory = memory0_;
  Vec r = read0_, w_write = write_w0_, w_read = read_w0_;
  std::vector<NtmCopyStep> steps;
  steps.reserve(static_cast<size_t>(x.rows()));
  for (int64_t t = 0; t < x.rows(); ++t) {
    // h_t = LSTM([x_t; r_{t−1}], h_{t−1})                                 [H]
    Vec in(bits_ + 1 + width_);
    in << x.row(t).transpose(), r;
    controller_.step(in, h, c);

    NtmCopyStep step;
    step.write = headParams(write_head_, h, width_, true);
    NtmHeadStep& wh = step.write;
    wh.w = ntmAddress(memory, wh.k, w_write, wh.beta, wh.g, wh.s, wh.gamma);
    w_write = wh.w.w;
    // M_t = M_{t−1} ∘ (1 − w eᵀ) + w aᵀ                                    [N, W]
    memory = memory.cwiseProduct(Mat::Ones(rows_, width_) - w_write * wh.e.transpose()) + w_write * wh.a.transpose();

    step.read = headParams(read_head_, h, width_, false);
    NtmHeadStep& rh = step.read;
    rh.w = ntmAddress(memory, rh.k, w_read, rh.beta, rh.g, rh.s, rh.gamma);
    w_read = rh.w.w;
    // r_t = M_tᵀ w^r_t                                                      [W]
    r = memory.transpose() * w_read;

    // y_t = σ(W_y [h_t; r_t] + b_y)                                         [bits]
    Vec hr(hidden + width_);
    hr << h, r;
    const Vec z = output_weight_ * hr + output_bias_;
    step.y = (1.0f + (-z.array()).exp()).inverse().matrix();
    step.memory = memory;
    step.r = r;
    steps.push_back(std::move(step));
  }
  return steps;
}

namespace {

// A head's β, g and γ at one step as scalars "<head>_beta", … (the values
// panel, captioned "<head> β", …), and its shift weighting s as the array
// "<head>_s" [3] (the head's panel title shows it).
void pushHeadValues(std::vector<Extra>& extras, const std::string& head, const NtmHeadStep& p) {
  const std::pair<const char*, double> values[] = {{"beta", p.beta}, {"g", p.g}, {"gamma", p.gamma}};
  const char* symbols[] = {"β", "g", "γ"};
  for (size_t i = 0; i < std::size(values); ++i)
    extras.push_back({.name = head + "_" + values[i].first, .label = head + " " + symbols[i], .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({static_cast<float>(values[i].second)})});
  extras.push_back({.name = head + "_s", .label = head + " s = [s(−1), s(0), s(+1)]", .kind = ExtraKind::Data,
                    .value = Array::fromVector(std::vector<float>(p.s.begin(), p.s.end()))});
}

// "write head: s = (0.02, 0.13, 0.85)"
std::string shiftCaption(const std::string& head, const NtmHeadStep& p) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s head: s = (%.2f, %.2f, %.2f)", head.c_str(), p.s[0], p.s[1], p.s[2]);
  return buf;
}

// The four stages [4, N] of one head at one step, rows w_c, w_g, w̃, w.
Mat stageRows(const NtmAddressing& a) {
  Mat m(4, a.w.size());
  m.row(0) = a.w_c.transpose();
  m.row(1) = a.w_g.transpose();
  m.row(2) = a.w_tilde.transpose();
  m.row(3) = a.w.transpose();
  return m;
}

// The user's bit sequence [L, bits]: 0s and 1s only, as many columns as the model has bits.
Mat readSequence(const std::string& path, int64_t bits) {
  const std::string shape = "[L, " + std::to_string(bits) + "]";
  const Mat s = readInputMatrix(path, "sequence", shape);
  if (s.cols() != bits)
    throw InputError(path + " (sequence): expected " + shape + " (the model's " + std::to_string(bits) +
                     " bits), got [" + std::to_string(s.rows()) + ", " + std::to_string(s.cols()) + "]");
  if ((s.array() != 0.0f && s.array() != 1.0f).any())
    throw InputError(path + " (sequence): expected bits, 0 or 1 only");
  return s;
}

Result ntmCopy(const Inputs& in, const Params& p, const RunContext& ctx) {
  const std::string& path = p.getString("weights");
  const NtmCopyModel model = NtmCopyModel::load(*openTrainedModel("ntm-copy.safetensors", path));
  const int64_t bits = model.bits(), n = model.rows();
  // The sequence [L, bits]: the file (it decides L), else L = --length seeded fair coin flips.
  const std::string& sequence_path = p.getString("sequence");
  const Mat given = sequence_path.empty() ? Mat() : readSequence(sequence_path, bits);
  const int64_t L = sequence_path.empty() ? in.x.rows() : given.rows();
  if (L > model.maxLength())
    throw InputError("ntm-copy: " +
                     (sequence_path.empty() ? "--length " + std::to_string(L) + " is"
                                            : sequence_path + " (sequence) has " + std::to_string(L) + " rows,") +
                     " longer than the sequences the model was trained on (max_length " +
                     std::to_string(model.maxLength()) + ")");
  const int64_t T = 2 * L + 1, t = p.getInt("step");
  if (t >= T)
    throw InputError("ntm-copy: step " + std::to_string(t) + " is past the end: a sequence of length " +
                     std::to_string(L) + " has steps 0 … " + std::to_string(T - 1));
  const Mat sequence = sequence_path.empty()
                           ? Mat((randomNormal(L, bits, in.seed, "ntm-copy bits").array() > 0.0f).cast<float>())
                           : given;
  const Mat x = model.copyInput(sequence);  // [T, bits + 1]
  ctx.check();
  const std::vector<NtmCopyStep> steps = model.run(x);

  Mat y(T, bits), w_write(T, n), w_read(T, n);
  for (int64_t i = 0; i < T; ++i) {
    const NtmCopyStep& s = steps[static_cast<size_t>(i)];
    y.row(i) = s.y.transpose();
    w_write.row(i) = s.write.w.w.transpose();
    w_read.row(i) = s.read.w.w.transpose();
  }
  // Bits of the copy on the wrong side of 0.5.
  const Mat copy = y.bottomRows(L);
  const auto wrong = ((copy.array() > 0.5f).cast<float>() - sequence.array()).abs().sum();

  Result r;
  // Rows are time steps: the sequence, the delimiter, the copy.
  for (int64_t i = 0; i < L; ++i) r.q_tokens.push_back("in" + std::to_string(i + 1));
  r.q_tokens.push_back("delim");
  for (int64_t i = 0; i < L; ++i) r.q_tokens.push_back("out" + std::to_string(i + 1));
  r.k_tokens = positionTokens(n, "");
  r.weights = {w_write, w_read};
  r.weights_unit_range = true;
  r.weights_label = "weighting w_t (head 0 writes, head 1 reads)";
  r.output = y;
  r.timeline.param = "step";
  r.timeline.count = T;
  for (int64_t i = 0; i < T; ++i)
    r.timeline.labels.push_back("step " + std::to_string(i) + ": " +
                                (i < L    ? "input " + std::to_string(i + 1) + " of " + std::to_string(L)
                                 : i == L ? std::string("delimiter")
                                          : "output " + std::to_string(i - L) + " of " + std::to_string(L)));

  const NtmCopyStep& now = steps[static_cast<size_t>(t)];
  const std::string at = " at step " + std::to_string(t) + " (" + r.q_tokens[static_cast<size_t>(t)] + ")";
  auto matrix = [](std::string name, std::string label, const Mat& m, std::string rows, std::string cols) {
    return Extra{.name = std::move(name), .label = std::move(label), .kind = ExtraKind::Matrix,
                 .value = Array::fromMat(m), .row_axis = std::move(rows), .col_axis = std::move(cols),
                 .unit_range = true};
  };
  const std::vector<std::string> stage_names = {"w_c", "w_g", "w̃", "w"};
  // In a 3 × 3 grid: the input, the write weighting and the write head's
  // stages; the output, the read weighting and the read head's; the memory
  // with the erase and add vectors that changed it.
  r.extras.push_back(matrix("input", "input x_t (last channel: delimiter)", x, "time step", "channel"));
  r.extras.push_back(matrix("w_write", "write weighting w_t", w_write, "time step", "memory row"));
  Extra write_stages = matrix("write_stages", shiftCaption("write", now.write), stageRows(now.write.w),
                              "stage", "memory row");
  write_stages.row_labels = stage_names;
  r.extras.push_back(std::move(write_stages));
  r.extras.push_back(matrix("output", "output y_t", y, "time step", "bit"));
  r.extras.push_back(matrix("w_read", "read weighting w_t", w_read, "time step", "memory row"));
  Extra read_stages = matrix("read_stages", shiftCaption("read", now.read), stageRows(now.read.w), "stage",
                             "memory row");
  read_stages.row_labels = stage_names;
  r.extras.push_back(std::move(read_stages));
  r.extras.push_back({.name = "memory", .label = "memory M_t" + at, .kind = ExtraKind::Matrix,
                      .value = Array::fromMat(now.memory), .row_axis = "memory row", .col_axis = "slot",
                      .signed_values = true});
  r.extras.push_back({.name = "erase", .label = "erase e_t = σ(·)" + at, .kind = ExtraKind::TokenValues,
                      .value = Array::fromVec(now.write.e), .unit_range = true});
  r.extras.push_back({.name = "add", .label = "add a_t" + at, .kind = ExtraKind::TokenValues,
                      .value = Array::fromVec(now.write.a), .signed_values = true});
  r.extras.push_back({.name = "bits_wrong", .label = "bits wrong",
                      .kind = ExtraKind::Scalar, .value = Array::fromVector({static_cast<float>(wrong)})});
  pushHeadValues(r.extras, "write", now.write);
  pushHeadValues(r.extras, "read", now.read);
  r.inputs["sequence"] = sequence;
  r.inputs["x"] = x;
  // Per step: the controller 8H(I + H), the head layers 2H(4W + 12), each head's
  // addressing ~3NW + 16N, the erase and add 4NW, the read 2NW, the output 2B(H + W).
  const double H = static_cast<double>(model.controllerSize()), W = static_cast<double>(model.width()),
               N = static_cast<double>(n), B = static_cast<double>(bits);
  r.flops = static_cast<double>(T) * (8.0 * H * (B + 1 + W + H) + 2.0 * H * (4 * W + 12) + 2 * (3 * N * W + 16 * N) +
                                      6 * N * W + 2 * B * (H + W));
  return r;
}

}  // namespace

VariantInfo makeNtmCopyVariant() {
  VariantInfo v;
  v.name = "ntm-copy";
  v.family = "memory and pointers";
  v.title = "Neural Turing Machine trained on the copy task";
  v.summary = "h_t = LSTM([x_t; r_{t−1}]);  M_t = M_{t−1} ∘ (1 − w^w eᵀ) + w^w aᵀ;  r_t = M_tᵀ w^r;  y_t = σ(W [h_t; r_t])";
  v.citation = "Graves et al. 2014, §4.1, Figure 6";
  v.input = InputKind::OwnSequence;
  v.params = {
      {.key = "step", .symbol = "t", .type = ParamType::Int,
       .help = "The time step whose memory, addressing stages and erase and add vectors are shown: 0 … L − 1 read "
               "the sequence, L is the delimiter, L + 1 … 2L write the copy",
       .min = 0, .max = 1024, .def = int64_t{5}},
      {.key = "weights", .symbol = "weights", .type = ParamType::File,
       .help = "A model from scripts/train_ntm_copy.py (.safetensors); empty: the one shipped in "
               "assets/trained/ntm-copy.safetensors",
       .def = std::string(), .file_shape = "safetensors"},
      {.key = "sequence", .symbol = "sequence", .type = ParamType::File,
       .help = "The sequence to copy as a .npy [L, B] of 0s and 1s, B the model's bits (8 for the shipped one); it "
               "decides L, and a run's inputs/sequence.npy replays it; empty: L = --length rows of bits from --seed",
       .def = std::string(), .file_shape = "[L, B]"},
  };
  v.views = {"extras", "heatmap", "heads"};
  v.row_axis = "time step";
  v.col_axis = "memory row";
  v.run = ntmCopy;
  return v;
}

}  // namespace attn
