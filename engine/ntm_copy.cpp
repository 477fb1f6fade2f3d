// The copy-task NTM's forward pass (scripts/train_ntm_copy.py), at each step t:
//   h_t = LSTM([x_t; r_{t−1}], h_{t−1})                                  controller
//   write head: w^w_t = address(M_{t−1}, params(h_t), w^w_{t−1})
//               M_t = M_{t−1} ∘ (1 − w^w_t e_tᵀ) + w^w_t a_tᵀ           (3), (4)
//   read head:  w^r_t = address(M_t, params(h_t), w^r_{t−1});  r_t = M_tᵀ w^r_t   (2)
//   y_t = σ(W_y [h_t; r_t] + b_y)
// with address() the four stages of engine/variants/ntm.cpp.
#include "engine/ntm_copy.h"

#include "engine/activations.h"
#include "engine/params.h"
#include "engine/trained.h"

#include <cmath>

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

}  // namespace attn
