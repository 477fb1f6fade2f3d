// The "score functions" family: six ways to score a decoder state s_t
// against encoder states h_i, each then used for the same soft attention
// (so the Family view compares them on the same s_t and h_i):
//   a_t = softmax_i score(s_t, h_i),   c_t = Σ_i a_ti h_i.
// Decoder states are in.query() [Lq, d], encoder states in.key() [Lk, d],
// the context averages in.value() [Lk, d_v].
#include "engine/variants/score_functions.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/registry.h"

#include <cmath>

namespace attn {

// [SECTION] Names and parameters
const std::vector<std::string>& scoreNames() {
  static const std::vector<std::string> names = {"additive", "general", "dot", "scaled-dot", "cosine", "location"};
  return names;
}

ScoreKind scoreFromName(const std::string& name) {
  const auto& n = scoreNames();
  for (size_t i = 0; i < n.size(); ++i)
    if (n[i] == name) return static_cast<ScoreKind>(i);
  throw InputError("parameter 'score': unknown score '" + name +
                   "' (expected additive, general, dot, scaled-dot, cosine or location)");
}

namespace {

ParamSpec hiddenSizeParam() {
  return {.key = "d_a", .symbol = "d_a", .type = ParamType::Int,
          .help = "Hidden size of the additive score's W_a (rows of W_a and v_a)", .min = 1, .max = 1024,
          .def = int64_t{32}};
}

ParamSpec betaParam() {
  return {.key = "beta", .symbol = "β", .type = ParamType::Float,
          .help = "Key strength β sharpening the cosine score (0 gives uniform weights)", .min = 0, .max = 100,
          .def = 5.0};
}

ScoreOptions optionsFor(ScoreKind kind, const Params& p) {
  ScoreOptions o;
  o.kind = kind;
  if (p.has("d_a")) o.d_a = p.getInt("d_a");
  if (p.has("beta")) o.beta = p.getFloat("beta");
  return o;
}

}  // namespace

std::vector<ParamSpec> scoreParams(const std::string& def) {
  return {
      {.key = "score", .symbol = "score", .type = ParamType::Choice,
       .help = "Alignment score function score(h_t, h̄_s) (Luong et al. 2015, eq. 8-9)", .def = def,
       .choices = scoreNames()},
      hiddenSizeParam(),
      betaParam(),
  };
}

ScoreOptions scoreOptions(const Params& p) { return optionsFor(scoreFromName(p.getString("score")), p); }

// [SECTION] Scores
Mat tanhScores(const Mat& a, const Mat& b, const Vec& v) {
  Mat scores(a.rows(), b.rows());
  // One thread for little work (pointer-sort asks one row per decoder step).
#pragma omp parallel for schedule(static) if (a.rows() * b.rows() * v.size() >= 65536)
  for (int64_t t = 0; t < a.rows(); ++t)
    for (int64_t i = 0; i < b.rows(); ++i)
      scores(t, i) = (a.row(t).array() + b.row(i).array()).tanh().matrix().dot(v.transpose());
  return scores;
}

namespace {

// score(s_t, h_i) = v_aᵀ tanh(W_a [s_t; h_i]) = v_aᵀ tanh(W_s s_t + W_h h_i)
// with W_a = [W_s W_h]: project each side once, O((Lq + Lk)·d·d_a), then
// O(Lq·Lk·d_a) for the tanh sums.
Mat additiveScores(const Mat& s, const Mat& h, int64_t d_a, uint64_t seed, Result& r) {
  const int64_t lq = s.rows(), lk = h.rows(), d = s.cols();
  // W_a ~ N(0, 1/(2d)) so W_a [s_t; h_i] has unit variance for unit-variance
  // states; v_a ~ N(0, 9/d_a) spreads scores over a few units.
  const Mat w_a = randomNormal(d_a, 2 * d, seed, "w_a", 1.0f / std::sqrt(2.0f * static_cast<float>(d)));
  const Mat v_a = randomNormal(d_a, 1, seed, "v_a", 3.0f / std::sqrt(static_cast<float>(d_a)));
  const Mat ws = s * w_a.leftCols(d).transpose();   // W_s s_t   [Lq, d_a]
  const Mat wh = h * w_a.rightCols(d).transpose();  // W_h h_i   [Lk, d_a]
  Mat scores = tanhScores(ws, wh, v_a.col(0));
  r.inputs["w_a"] = w_a;
  r.inputs["v_a"] = v_a;
  r.flops += 2.0 * (lq + lk) * d * d_a  // W_s s_t, W_h h_i
             + 4.0 * lq * lk * d_a;     // add, tanh, multiply-add with v_a (tanh counted as one op)
  return scores;
}

// cos(s_t, h_i) = s_tᵀ h_i / (‖s_t‖ ‖h_i‖); a zero state has cosine 0 with everything.
Mat cosineScores(const Mat& s, const Mat& h, double beta, Result& r) {
  auto inverseNorms = [](const Mat& m) -> Vec {
    const Vec n = m.rowwise().norm();
    return (n.array() > 0.0f).select(n.array().inverse(), 0.0f);
  };
  const Vec is = inverseNorms(s), ih = inverseNorms(h);
  // score(s_t, h_i) = β · cos(s_t, h_i)      [Lq, Lk]
  Mat scores = s * h.transpose();
  scores = (is.asDiagonal() * scores * ih.asDiagonal()) * static_cast<float>(beta);
  r.flops += 2.0 * (s.rows() + h.rows()) * s.cols() + 2.0 * s.rows() * h.rows() * s.cols() + 2.0 * s.rows() * h.rows();
  return scores;
}

}  // namespace

Mat alignmentScores(const Mat& s, const Mat& h, const ScoreOptions& o, uint64_t seed, Result& r) {
  const int64_t lq = s.rows(), lk = h.rows(), d = s.cols();
  if (h.cols() != d)
    throw InputError("k: encoder states have d=" + std::to_string(h.cols()) + " but decoder states have d=" +
                     std::to_string(d) + " (expected equal)");
  Mat scores(lq, lk);  // filled by the bilinear cases below
  switch (o.kind) {
    case ScoreKind::Additive:
      return additiveScores(s, h, o.d_a, seed, r);
    case ScoreKind::General: {
      // W_a = I + N(0, 1/(4d)): an untrained bilinear form near the identity,
      // so `general` is comparable with `dot` in the Family view.
      Mat w_a = randomNormal(d, d, seed, "w_a", 0.5f / std::sqrt(static_cast<float>(d)));
      w_a.diagonal().array() += 1.0f;
      // score(s_t, h_i) = s_tᵀ W_a h_i       [Lq, Lk]
      const Mat sw = s * w_a;
      scores.noalias() = sw * h.transpose();
      r.inputs["w_a"] = w_a;
      r.flops += 2.0 * lq * d * d + 2.0 * lq * lk * d;
      return scores;
    }
    case ScoreKind::Dot:
    case ScoreKind::ScaledDot: {
      // score(s_t, h_i) = s_tᵀ h_i  (· 1/√d for scaled-dot)   [Lq, Lk]
      const float scale = o.kind == ScoreKind::ScaledDot ? 1.0f / std::sqrt(static_cast<float>(d)) : 1.0f;
      scores.noalias() = (s * scale) * h.transpose();
      r.flops += 2.0 * lq * lk * d;
      return scores;
    }
    case ScoreKind::Cosine:
      return cosineScores(s, h, o.beta, r);
    case ScoreKind::Location: {
      // a_t = softmax(W_a s_t): W_a is [Lk, d], one row per source position,
      // so the score ignores the encoder states and needs a fixed source
      // length. Row i of W_a depends only on (seed, i), so runs with
      // different Lk share their first rows.
      const Mat w_a = randomNormal(lk, d, seed, "w_a", 2.0f / std::sqrt(static_cast<float>(d)));
      // score(s_t, h_i) = (W_a s_t)_i          [Lq, Lk]
      scores.noalias() = s * w_a.transpose();
      r.inputs["w_a"] = w_a;
      r.flops += 2.0 * lq * lk * d;
      return scores;
    }
  }
  throw std::logic_error("alignmentScores: unknown ScoreKind");
}

// [SECTION] Soft attention over every encoder state
void recordCrossInputs(const Inputs& in, Result& r) {
  const char* source = in.x_kv.size() ? "x_kv" : "x";
  r.inputs[in.q ? "q" : "x"] = in.query();
  r.inputs[in.k ? "k" : source] = in.key();
  r.inputs[in.v ? "v" : source] = in.value();
  r.q_tokens = in.tokens;
  const bool labelled = static_cast<int64_t>(in.source_tokens.size()) == in.key().rows();
  r.k_tokens = labelled ? in.source_tokens : positionTokens(in.key().rows(), "s");
}

Result softAlignment(const Inputs& in, const ScoreOptions& o, const std::string& what, const RunContext& ctx) {
  const Mat& s = in.query();
  const Mat& h = in.key();
  const Mat& v = in.value();
  const int64_t lq = s.rows(), lk = h.rows();
  checkDenseBudget(1, lq, lk, 2, what);
  Result r;
  recordCrossInputs(in, r);
  r.scores.assign(1, alignmentScores(s, h, o, in.seed, r));
  ctx.check();
  // a_t = softmax_i score(s_t, h_i)           [Lq, Lk]
  r.weights.resize(1);
  maskedSoftmaxRows(r.scores[0], Mat(), r.weights[0]);
  // c_t = Σ_i a_ti v_i                        [Lq, d_v]
  r.output.noalias() = r.weights[0] * v;
  r.flops += 3.0 * lq * lk                 // softmax: subtract max, exp, divide
             + 2.0 * lq * lk * v.cols();  // a_t V
  return r;
}

// [SECTION] Variant descriptions
namespace {

VariantInfo crossVariant(std::string name, std::string family, std::string title, std::string summary,
                         std::string citation, std::vector<ParamSpec> params, std::vector<std::string> views,
                         decltype(VariantInfo::run) run) {
  return {.name = std::move(name), .family = std::move(family), .title = std::move(title),
          .summary = std::move(summary), .citation = std::move(citation), .input = InputKind::CrossAttention,
          .given_qkv = GivenQkv::OneHead, .params = std::move(params), .views = std::move(views), .run = std::move(run)};
}

// One of the six: soft attention with a fixed score.
VariantInfo scoreVariant(ScoreKind kind, std::string title, std::string summary, std::string citation,
                         std::vector<ParamSpec> params) {
  const std::string& name = scoreNames()[static_cast<size_t>(kind)];
  return crossVariant(name, "score functions", std::move(title), std::move(summary), std::move(citation),
                      std::move(params), {"heatmap", "lines", "family"},
                      [kind, name](const Inputs& in, const Params& p, const RunContext& ctx) {
                        return softAlignment(in, optionsFor(kind, p), name, ctx);
                      });
}

}  // namespace

VariantInfo alignmentVariant(std::string name, std::string title, std::string summary, std::string citation,
                             std::vector<ParamSpec> own, bool has_extras, decltype(VariantInfo::run) run) {
  for (ParamSpec& p : scoreParams("general")) own.push_back(std::move(p));
  std::vector<std::string> views = {"heatmap", "lines", "family"};
  if (has_extras) views.insert(views.begin() + 1, "extras");
  return crossVariant(std::move(name), "alignment", std::move(title), std::move(summary), std::move(citation),
                      std::move(own), std::move(views), std::move(run));
}

// [SECTION] The six score functions
VariantInfo makeAdditiveVariant() {
  return scoreVariant(ScoreKind::Additive, "Additive (concat) score",
                      "score(s_t, h_i) = v_aᵀ tanh(W_a [s_t; h_i]),  a_t = softmax(score),  c_t = Σ a_ti h_i",
                      "Bahdanau et al. 2015, eq. 6", {hiddenSizeParam()});
}

VariantInfo makeGeneralVariant() {
  return scoreVariant(ScoreKind::General, "General (bilinear) score", "score(s_t, h_i) = s_tᵀ W_a h_i",
                      "Luong et al. 2015, eq. 8", {});
}

VariantInfo makeDotVariant() {
  return scoreVariant(ScoreKind::Dot, "Dot score", "score(s_t, h_i) = s_tᵀ h_i", "Luong et al. 2015, eq. 8", {});
}

VariantInfo makeScaledDotVariant() {
  return scoreVariant(ScoreKind::ScaledDot, "Scaled dot score", "score(s_t, h_i) = s_tᵀ h_i / √d",
                      "Vaswani et al. 2017, eq. 1", {});
}

VariantInfo makeCosineVariant() {
  return scoreVariant(ScoreKind::Cosine, "Content-based cosine score with sharpening",
                      "score(s_t, h_i) = β · s_tᵀ h_i / (‖s_t‖ ‖h_i‖)  (NTM content addressing)",
                      "Graves et al. 2014, eqs. 5-6", {betaParam()});
}

VariantInfo makeLocationVariant() {
  return scoreVariant(ScoreKind::Location, "Location-based score",
                      "a_t = softmax(W_a s_t), W_a [Lk, d]: depends on s_t only; needs a fixed source length",
                      "Luong et al. 2015, eq. 9", {});
}

}  // namespace attn
