// A trained pointer network that sorts numbers (Vinyals et al. 2015, §4.4),
// trained by scripts/train_pointer_sort.py and shipped in
// assets/trained/pointer-sort.safetensors. For n numbers x_j in [0, 1]:
//   a_j        = W_x x_j + b_x                                  embedding       [E]
//   e_j        = LSTM_enc(a_j, e_{j−1}), from zeros              encoder         [H]
//   d_i        = LSTM_dec(g_i, d_{i−1}), from (e_n, c_n);  g_1 = the learned start, g_{i+1} = a_{C_i}
//   u_j^i      = vᵀ tanh(W₁ e_j + W₂ d_i)                        (eq. 3)
//   p(C_i = j) = softmax_j(u^i) over the j not chosen before step i
//   C_i        = argmax_j p(C_i = j)                             greedy decoding
// The mask is the script's choice, not the paper's (whose p puts mass on every
// input): it makes the output a permutation. The weights are p as [1, n, n]
// (output step i, input j), the scores u before the mask.
#include "engine/variants/pointer_sort.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/registry.h"
#include "engine/trained.h"
#include "engine/variants/score_functions.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace attn {

PointerSortModel PointerSortModel::load(const SafetensorsFile& f) {
  PointerSortModel m;
  constexpr int64_t kMaxLength = 1000, kMaxWidth = 4096;
  m.min_length = trainedConfigInt(f, "min_length", 1, kMaxLength);
  m.max_length = trainedConfigInt(f, "max_length", m.min_length, kMaxLength);
  const int64_t e = trainedConfigInt(f, "embedding", 1, kMaxWidth);
  const int64_t h = trainedConfigInt(f, "hidden", 1, kMaxWidth);
  const int64_t a = trainedConfigInt(f, "attention", 1, kMaxWidth);
  m.embed_w = trainedMatrix(f, "embed.weight", e, 1).col(0);
  m.embed_b = trainedVector(f, "embed.bias", e);
  m.encoder = LstmCell::load(f, "encoder.", e, h);
  m.decoder = LstmCell::load(f, "decoder.", e, h);
  m.start = trainedVector(f, "start", e);
  m.w_1 = trainedMatrix(f, "pointer.w_1.weight", a, h);
  m.w_2 = trainedMatrix(f, "pointer.w_2.weight", a, h);
  m.v = trainedVector(f, "pointer.v", a);
  return m;
}

PointerSortRun pointerSort(const PointerSortModel& m, const std::vector<float>& x) {
  const auto n = static_cast<int64_t>(x.size());
  const int64_t hidden = m.encoder.hidden();
  PointerSortRun r;
  // a_j = W_x x_j + b_x                                              [n, E]
  Mat a(n, m.embed_w.size());
  for (int64_t j = 0; j < n; ++j) a.row(j) = (m.embed_w * x[static_cast<size_t>(j)] + m.embed_b).transpose();
  // e_j = LSTM_enc(a_j, e_{j−1})                                     [n, H]
  Vec h = Vec::Zero(hidden), c = Vec::Zero(hidden);
  r.enc.resize(n, hidden);
  for (int64_t j = 0; j < n; ++j) {
    m.encoder.step(a.row(j).transpose(), h, c);
    r.enc.row(j) = h.transpose();
  }
  const Mat w1e = r.enc * m.w_1.transpose();  // W₁ e_j               [n, A]
  r.dec.resize(n, hidden);
  r.u.resize(n, n);
  r.p.resize(n, n);
  r.mask = Mat::Ones(n, n);
  Vec g = m.start;
  for (int64_t i = 0; i < n; ++i) {
    // d_i = LSTM_dec(g_i, d_{i−1}), the decoder carrying on from e_n
    m.decoder.step(g, h, c);
    r.dec.row(i) = h.transpose();
    // u_j^i = vᵀ tanh(W₁ e_j + W₂ d_i)                               [1, n]
    const Mat w2d = (m.w_2 * h).transpose();
    r.u.row(i) = tanhScores(w2d, w1e, m.v);
    // p(C_i = j) = softmax_j(u^i) where mask(i, j) = 1               [1, n]
    Mat p_i;
    maskedSoftmaxRows(r.u.row(i), r.mask.row(i), p_i);
    r.p.row(i) = p_i;
    Eigen::Index pick = 0;
    r.p.row(i).maxCoeff(&pick);
    r.chosen.push_back(pick);
    if (i + 1 < n) {
      r.mask.row(i + 1) = r.mask.row(i);
      r.mask(i + 1, pick) = 0;
    }
    g = a.row(pick).transpose();  // g_{i+1} = a_{C_i}
  }
  return r;
}

namespace {

// "0.42", "0.20": two decimals where they say it all (the drawn numbers), else the
// number as the user typed it ("0.125"; six significant digits at most).
std::string numberLabel(double x) {
  std::ostringstream os;
  if (std::round(x * 100.0) / 100.0 == x) os << std::fixed << std::setprecision(2);
  os << x;
  return os.str();
}

Result pointerSortVariant(const Inputs& in, const Params& p, const RunContext& ctx) {
  const std::string& weights_path = p.getString("weights");
  const PointerSortModel model = PointerSortModel::load(*openTrainedModel("pointer-sort.safetensors", weights_path));
  const std::string model_name = weights_path.empty() ? "the embedded model" : weights_path;

  // x_j: the user's numbers, else n = L drawn uniformly from [0, 1) as Φ(z) of
  // seeded standard normals z, rounded to two decimals (0.00 … 1.00) so the
  // labels show exactly the numbers sorted.
  std::vector<double> numbers = p.getFloatList("numbers");
  const bool given = !numbers.empty();
  if (!given) {
    const Mat z = randomNormal(in.query().rows(), 1, in.seed, "numbers");
    for (int64_t j = 0; j < z.rows(); ++j)
      numbers.push_back(std::round(50.0 * std::erfc(-z(j, 0) / std::sqrt(2.0))) / 100.0);
  }
  const auto n = static_cast<int64_t>(numbers.size());
  if (n < model.min_length || n > model.max_length)
    throw InputError("pointer-sort: " + model_name + " sorts " + std::to_string(model.min_length) + " to " +
                     std::to_string(model.max_length) + " numbers, got " + std::to_string(n) +
                     (given ? " (parameter 'numbers')" : " (--length)"));
  std::vector<float> x(numbers.begin(), numbers.end());
  ctx.check();
  const PointerSortRun run = pointerSort(model, x);

  Result r;
  r.scores.assign(1, run.u);
  r.weights.assign(1, run.p);
  r.mask = run.mask;
  r.weights_label = "pointer p(C_i = j)";
  r.scores_label = "score u_j^i";
  // The sorted input, then the output numbers x_{C_i} (drawn over it: where the
  // output is right the two lines are one). A step is right where they agree,
  // by value, so equal numbers may come in either order.                   [2, n]
  std::vector<double> sorted = numbers;
  std::sort(sorted.begin(), sorted.end());
  Mat versus(2, n);
  Vec pointed(n);
  int64_t right = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = run.chosen[static_cast<size_t>(i)];
    const double chosen = numbers[static_cast<size_t>(j)];
    versus(0, i) = static_cast<float>(sorted[static_cast<size_t>(i)]);
    versus(1, i) = static_cast<float>(chosen);
    pointed(i) = static_cast<float>(j);
    right += chosen == sorted[static_cast<size_t>(i)];
    // Steps and positions count from 0, as the x axis of the output plot.
    r.q_tokens.push_back(std::to_string(i) + ": " + numberLabel(chosen));
    r.k_tokens.push_back(numberLabel(numbers[static_cast<size_t>(i)]));
  }
  r.extras.push_back({.name = "numbers", .label = "input numbers x_j", .kind = ExtraKind::TokenValues,
                      .value = Array::fromVector(x), .row_labels = r.k_tokens});
  r.extras.push_back({.name = "pointed", .label = "chosen pointer C_i = argmax_j p(C_i = j)",
                      .kind = ExtraKind::QueryPosition, .value = Array::fromVec(pointed)});
  r.extras.push_back({.name = "output", .label = "output x_{C_i} over the numbers sorted", .kind = ExtraKind::Curves,
                      .value = Array::fromMat(versus), .row_axis = "series", .col_axis = "output step i",
                      .categories = {"the numbers sorted", "output: the number pointed to"}});
  r.extras.push_back({.name = "correct", .label = "output sorted (1 yes, 0 no)", .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({right == n ? 1.0f : 0.0f}), .integer = true});
  r.extras.push_back({.name = "steps_correct", .label = "output steps that are right", .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({static_cast<float>(right)}), .integer = true});
  r.inputs["numbers"] = Eigen::Map<const Vec>(x.data(), n);
  r.inputs["enc"] = run.enc;
  r.inputs["dec"] = run.dec;
  r.inputs["w_1"] = model.w_1;
  r.inputs["w_2"] = model.w_2;
  r.inputs["v"] = model.v;
  r.vector_inputs = {"numbers", "v"};
  const auto e = static_cast<double>(model.embed_w.size()), h = static_cast<double>(model.encoder.hidden()),
             a = static_cast<double>(model.v.size()), nd = static_cast<double>(n);
  r.flops = 2.0 * nd * (2.0 * 4.0 * h * (e + h) + 10.0 * h)  // n encoder and n decoder LSTM steps
            + 2.0 * nd * a * h * 2.0                         // W₁ e_j, W₂ d_i
            + 4.0 * nd * nd * a + 3.0 * nd * nd;             // u, softmax
  return r;
}

}  // namespace

VariantInfo makePointerSortVariant() {
  VariantInfo v;
  v.name = "pointer-sort";
  v.family = "memory and pointers";
  v.title = "Pointer network trained to sort";
  v.summary = "u_j^i = vᵀ tanh(W₁ e_j + W₂ d_i);  p(C_i = j) = softmax_j(u^i) over the j not yet chosen";
  v.citation = "Vinyals et al. 2015, §4.4";
  v.input = InputKind::OwnSequence;
  v.params = {
      {.key = "numbers", .symbol = "x", .type = ParamType::FloatList,
       .help = "The numbers to sort, each in [0, 1] (as many as the model was trained on: 5 to 12 for the "
               "embedded one); empty: --length numbers drawn from --seed",
       .min = 0, .max = 1, .def = std::vector<double>{}, .per_head = false},
      {.key = "weights", .symbol = "weights", .type = ParamType::File,
       .help = "A model from scripts/train_pointer_sort.py (.safetensors); empty: the embedded "
               "assets/trained/pointer-sort.safetensors",
       .def = std::string(), .file_shape = "safetensors"},
  };
  v.views = {"heatmap", "extras", "family"};
  v.row_axis = "output step: number chosen";
  v.col_axis = "input number";
  v.run = pointerSortVariant;
  return v;
}

}  // namespace attn
