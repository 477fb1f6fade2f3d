// Hard (stochastic) attention (Xu et al. 2015, §4.1): the soft weights
// α_t = softmax_i score(s_t, h_i) become a distribution over locations and
// one location is attended per query:
//   α_t    = softmax_i score(s_t, h_i)             [Lq, Lk]
//   ĩ_t    ~ Multinoulli(α_t)   (mode sample)   or   argmax_i α_ti  (mode argmax)
//   w_t    = one-hot(ĩ_t)                          [Lq, Lk]
//   c_t    = Σ_i w_ti h_i = h_{ĩ_t}                [Lq, d_v]
// Sampling is deterministic in the run seed: u_t = Φ(z_t) with z_t from
// randomNormal(seed, "u") is uniform on (0, 1), and ĩ_t is the first i whose
// cumulative weight exceeds u_t.
#include "engine/attention_math.h"
#include "engine/variants/score_functions.h"

#include <cmath>

namespace attn {

namespace {

int64_t sampleRow(const Mat& soft, int64_t t, double u) {
  double total = 0;
  for (int64_t j = 0; j < soft.cols(); ++j) total += soft(t, j);
  double cum = 0;
  int64_t last = 0;
  for (int64_t j = 0; j < soft.cols(); ++j) {
    if (soft(t, j) <= 0.0f) continue;
    cum += soft(t, j);
    last = j;
    if (cum > u * total) return j;
  }
  return last;  // rounding left u·total at or past the final sum
}

Result hard(const Inputs& in, const Params& p, const RunContext& ctx) {
  const Mat& s = in.query();
  const Mat& h = in.key();
  const Mat& val = in.value();
  const int64_t lq = s.rows(), lk = h.rows();
  checkDenseBudget(1, lq, lk, 3, "hard");  // scores, soft, one-hot
  Result r;
  recordCrossInputs(in, r);
  r.scores.assign(1, alignmentScores(s, h, scoreOptions(p), in.seed, r));
  ctx.check();
  // α_t = softmax_i score(s_t, h_i)                         [Lq, Lk]
  Mat soft;
  maskedSoftmaxRows(r.scores[0], Mat(), soft);

  const bool sample = p.getString("mode") == "sample";
  Mat u;
  if (sample) {
    // u_t = Φ(z_t), z_t ~ N(0, 1)                             [Lq, 1]
    u = randomNormal(lq, 1, in.seed, "u");
    for (int64_t t = 0; t < lq; ++t) u(t, 0) = static_cast<float>(0.5 * std::erfc(-u(t, 0) / std::sqrt(2.0)));
    r.inputs["u"] = u;
  }
  Vec position(lq);
  Mat one_hot = Mat::Zero(lq, lk);
  r.output = Mat::Zero(lq, val.cols());
  for (int64_t t = 0; t < lq; ++t) {
    int64_t i = 0;
    if (sample) {
      i = sampleRow(soft, t, u(t, 0));
    } else {
      for (int64_t j = 1; j < lk; ++j)  // argmax_i α_ti, the first on ties
        if (soft(t, j) > soft(t, i)) i = j;
    }
    position(t) = static_cast<float>(i);
    one_hot(t, i) = 1.0f;
    r.output.row(t) = val.row(i);  // c_t = h_{ĩ_t}
  }
  r.weights.assign(1, std::move(one_hot));
  r.weights_label = sample ? "sampled location (one-hot)" : "argmax location (one-hot)";
  r.extras.push_back({.name = "soft", .label = "soft weights α_t", .kind = ExtraKind::Weights,
                      .value = Array::fromMats({soft})});
  r.extras.push_back({.name = "position", .label = sample ? "sampled location ĩ_t" : "argmax location ĩ_t",
                      .kind = ExtraKind::QueryPosition, .value = Array::fromVec(position)});
  r.flops += 3.0 * lq * lk   // softmax
             + 2.0 * lq * lk;  // cumulative sum / max scan
  return r;
}

}  // namespace

VariantInfo makeHardVariant() {
  return alignmentVariant(
      "hard", "Hard (stochastic) attention",
      "α_t = softmax score(s_t, h_i);  ĩ_t ~ Multinoulli(α_t) or argmax;  c_t = h_{ĩ_t}", "Xu et al. 2015, §4.1",
      {{.key = "mode", .symbol = "ĩ_t", .type = ParamType::Choice,
        .help = "Pick the attended location by sampling α_t (seeded by --seed) or by its argmax",
        .def = std::string("sample"), .choices = {"argmax", "sample"}}},
      true, hard);
}

}  // namespace attn
