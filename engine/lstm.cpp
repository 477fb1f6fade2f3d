#include "engine/lstm.h"

#include "engine/trained.h"

namespace attn {

LstmCell LstmCell::load(const SafetensorsFile& f, const std::string& prefix, int64_t inputs, int64_t hidden) {
  LstmCell cell;
  cell.w_ih = trainedMatrix(f, prefix + "weight_ih", 4 * hidden, inputs);
  cell.w_hh = trainedMatrix(f, prefix + "weight_hh", 4 * hidden, hidden);
  cell.bias = trainedVector(f, prefix + "bias_ih", 4 * hidden) + trainedVector(f, prefix + "bias_hh", 4 * hidden);
  return cell;
}

void LstmCell::step(const Vec& x, Vec& h, Vec& c) const {
  const int64_t n = hidden();
  // The four gates' pre-activations, in torch's order i, f, g, o.   [4H]
  const Vec z = w_ih * x + w_hh * h + bias;
  const auto sigmoid = [](const auto& a) { return (1.0f + (-a.array()).exp()).inverse(); };
  const Vec i = sigmoid(z.segment(0, n)), f = sigmoid(z.segment(n, n)), o = sigmoid(z.segment(3 * n, n));
  c = f.cwiseProduct(c) + i.cwiseProduct(z.segment(2 * n, n).array().tanh().matrix());
  h = o.cwiseProduct(c.array().tanh().matrix());
}

}  // namespace attn
