#include "engine/model/analysis/interventions.h"

#include "engine/error.h"
#include "engine/model/families/family.h"
#include "engine/model/model.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

// One pass of the text with `edit`, nothing kept for the views, no LM head
// (the analyses read run.hidden), progress left to the caller.
ModelRun editedRun(const Model& m, const std::vector<int32_t>& ids, const Interventions& edit, const RunContext& ctx) {
  ModelRunOptions o;
  o.top_k = 0;
  o.maps.mode = MapsChoice::Mode::None;
  o.keep_projections = false;
  o.summarize = false;
  o.edit = edit;
  RunContext quiet = ctx;
  quiet.on_progress = nullptr;
  return runModelIds(m, ids, o, quiet);
}

// log Σ_v exp(logit_v) of one row of logits, in double               [V]
double logSumExp(const Eigen::Ref<const RowVec>& logits) {
  const double mx = logits.maxCoeff();
  double z = 0;
  for (int64_t v = 0; v < logits.size(); ++v) z += std::exp(static_cast<double>(logits(v)) - mx);
  return mx + std::log(z);
}

// The LM head's logits for rows of hidden states                     [rows, V]
Mat logitsOf(const Model& m, const Mat& hidden) {
  double flops = 0;
  return lmLogits(m, hidden, &flops);
}

// The target's logit and log-probability from the run's hidden state at its position.
TokenScore scoreOf(const Model& m, const ModelRun& run, const Target& t) {
  const Mat logits = logitsOf(m, run.hidden.row(t.position));  // [1, V]
  const double logit = logits(0, t.id);
  return {logit, logit - logSumExp(logits.row(0))};
}

std::vector<Prediction> topAt(const Model& m, const ModelRun& run, int64_t position, int k) {
  return predictTokens(m, run.hidden, {position}, k)[static_cast<size_t>(position)];
}

}  // namespace

std::vector<int32_t> textIds(const Model& m, const std::string& text, bool truncate) {
  bool truncated = false;
  return promptIds(m, text, m.info.config.positions, truncate, &truncated);
}

void needsPrediction(const Model& m) {
  if (!m.predicts)
    throw InputError(m.info.config.label + " has no LM head: there is no prediction whose heads could matter");
}

double TokenScore::probability() const { return std::exp(log_prob); }

Target chooseTarget(const Model& m, const std::vector<int32_t>& ids, int64_t position, int32_t token_id,
                    const RunContext& ctx) {
  needsPrediction(m);
  Target t;
  t.position = checkPosition("--position", position, static_cast<int64_t>(ids.size()));
  const int32_t V = static_cast<int32_t>(m.info.config.vocab);
  if (token_id >= V || token_id < -1)  // −1: the model's own
    throw InputError("--token-id: " + std::to_string(token_id) + " is outside the vocabulary [0, " + std::to_string(V) +
                     ")");
  if (token_id >= 0) {
    t.id = token_id;
  } else {
    ModelRunOptions o;
    o.top_k = 1;
    o.predict_at = {t.position};
    o.maps.mode = MapsChoice::Mode::None;
    o.keep_projections = false;
    t.id = runModelIds(m, ids, o, ctx).top_k[static_cast<size_t>(t.position)].at(0).id;
  }
  t.token = tokenText(*m.tokenizer, t.id);
  return t;
}

int32_t tokenIdOf(const Model& m, const std::string& text) {
  const std::vector<int32_t> ids = m.tokenizer->encode(text);
  if (ids.size() == 1) return ids[0];
  std::string parts;
  for (const int32_t id : ids) {
    parts += parts.empty() ? "‹" : ", ‹";
    parts += tokenText(*m.tokenizer, id);
    parts += "›";
  }
  throw InputError("--token: ‹" + text + "› is " + std::to_string(ids.size()) + " tokens of " + m.info.config.label +
                   "'s vocabulary" + (ids.empty() ? "" : " (" + parts + ")") +
                   ", not one: give a single token, or its id with --token-id");
}

AblationEffect ablationEffect(const Model& m, const std::vector<int32_t>& ids, const HeadAblation& ablate,
                              const Target& target, int top_k, const RunContext& ctx) {
  needsPrediction(m);
  AblationEffect out{.target = target, .ablated = ablate};
  const ModelRun before = editedRun(m, ids, {}, ctx);
  ctx.progress(0.5f);
  Interventions e;
  e.ablate = ablate;
  const ModelRun after = editedRun(m, ids, e, ctx);
  out.before = scoreOf(m, before, target);
  out.after = scoreOf(m, after, target);
  out.top_before = topAt(m, before, target.position, top_k);
  out.top_after = topAt(m, after, target.position, top_k);
  ctx.progress(1.0f);
  return out;
}

std::vector<std::pair<int64_t, int64_t>> headsByValue(const Mat& grid) {
  std::vector<std::pair<int64_t, int64_t>> heads;
  for (int64_t l = 0; l < grid.rows(); ++l)
    for (int64_t h = 0; h < grid.cols(); ++h) heads.push_back({l, h});
  std::stable_sort(heads.begin(), heads.end(), [&](const auto& a, const auto& b) {
    return grid(a.first, a.second) < grid(b.first, b.second);
  });
  return heads;
}

ImportanceGrid importanceGrid(const Model& m, const std::vector<int32_t>& ids, HeadAblation::Mode mode,
                              const Target& target, const RunContext& ctx, bool resume) {
  needsPrediction(m);
  const int64_t layers = m.info.config.layers, heads = m.info.config.heads;
  ImportanceGrid g{.target = target, .mode = mode};
  Interventions keep;
  keep.keep_residual = true;
  const ModelRun base = editedRun(m, ids, keep, ctx);
  g.base = scoreOf(m, base, target);
  g.delta.resize(layers, heads);
  g.layer_passes = layers;
  // Ablating head (l, h) leaves every layer before l as it was: each pass
  // starts at l from the stream the base run kept there.
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t h = 0; h < heads; ++h) {
      Interventions e;
      e.ablate = {mode, {{l, h}}};
      if (resume) {
        e.resume_layer = l;
        e.resume = &base.residual[static_cast<size_t>(l)];
      }
      g.delta(l, h) = static_cast<float>(scoreOf(m, editedRun(m, ids, e, ctx), target).log_prob - g.base.log_prob);
      g.layer_passes += resume ? layers - l : layers;
      ctx.progress(static_cast<float>(l * heads + h + 1) / static_cast<float>(layers * heads));
    }
  }
  return g;
}

bool PatchingResult::restorable() const { return std::abs(clean.log_prob - corrupted.log_prob) >= kPatchingSpan; }

namespace {

Mat restoredShare(const PatchingResult& r, const Mat& patched) {
  if (!r.restorable()) return Mat::Zero(patched.rows(), patched.cols());
  const double span = r.clean.log_prob - r.corrupted.log_prob;
  return ((patched.array() - static_cast<float>(r.corrupted.log_prob)) / static_cast<float>(span)).matrix();
}

}  // namespace

Mat PatchingResult::restoredHeads() const { return restoredShare(*this, heads); }
Mat PatchingResult::restoredResidual() const { return restoredShare(*this, residual); }

PatchingResult activationPatching(const Model& m, const std::vector<int32_t>& clean,
                                  const std::vector<int32_t>& corrupted, const Target& target, PatchingChoice what,
                                  const RunContext& ctx) {
  needsPrediction(m);
  if (clean.size() != corrupted.size())
    throw InputError("--corrupted: " + std::to_string(corrupted.size()) + " tokens, but the clean text has " +
                     std::to_string(clean.size()) + ": patching replaces values position by position, so the two "
                     "texts must have the same number of tokens");
  const ModelConfig& c = m.info.config;
  const int64_t layers = c.layers, heads = c.heads, L = static_cast<int64_t>(clean.size()), dh = c.head_dim;
  PatchingResult r{.target = target};
  Interventions keep;
  keep.keep_residual = true;
  keep.keep_heads = true;
  const ModelRun cl = editedRun(m, clean, keep, ctx);
  const ModelRun co = editedRun(m, corrupted, keep, ctx);
  r.clean = scoreOf(m, cl, target);
  r.corrupted = scoreOf(m, co, target);
  // A causal model's prediction at the target reads no position after it.
  const int64_t last = c.causal ? target.position : L - 1;
  const int64_t total = (what.heads ? layers * heads : 0) + (what.residual ? layers * (last + 1) : 0);
  int64_t done = 0;
  auto step = [&] { ctx.progress(static_cast<float>(++done) / static_cast<float>(std::max<int64_t>(total, 1))); };
  if (what.heads) {
    r.heads.resize(layers, heads);
    for (int64_t l = 0; l < layers; ++l)
      for (int64_t h = 0; h < heads; ++h) {
        Interventions e;
        e.patch_heads.push_back({l, h, cl.head_out[static_cast<size_t>(l)].middleCols(h * dh, dh)});
        e.resume_layer = l;
        e.resume = &co.residual[static_cast<size_t>(l)];
        r.heads(l, h) = static_cast<float>(scoreOf(m, editedRun(m, corrupted, e, ctx), target).log_prob);
        step();
      }
  }
  if (what.residual) {
    r.residual = Mat::Constant(layers, L, static_cast<float>(r.corrupted.log_prob));
    for (int64_t l = 0; l < layers; ++l)
      for (int64_t p = 0; p <= last; ++p) {
        Interventions e;
        e.patch_residual.push_back({l, p, cl.residual[static_cast<size_t>(l)].row(p)});
        e.resume_layer = l;
        e.resume = &co.residual[static_cast<size_t>(l)];
        r.residual(l, p) = static_cast<float>(scoreOf(m, editedRun(m, corrupted, e, ctx), target).log_prob);
        step();
      }
  }
  return r;
}

LogitLens logitLens(const Model& m, const std::vector<int32_t>& ids, int top_k, const RunContext& ctx,
                    std::vector<int64_t> positions) {
  needsPrediction(m);
  const int64_t layers = m.info.config.layers, L = static_cast<int64_t>(ids.size());
  if (positions.empty())
    for (int64_t i = 0; i < L; ++i) positions.push_back(i);
  for (const int64_t p : positions)
    if (checkPosition("--position", p, L) != p) throw InputError("logit lens: positions are counted from 0");
  const int64_t P = static_cast<int64_t>(positions.size());
  Interventions keep;
  keep.keep_residual = true;
  const ModelRun base = editedRun(m, ids, keep, ctx);
  LogitLens lens;
  lens.positions = positions;
  lens.final_token.resize(layers + 1, P);
  lens.top.resize(static_cast<size_t>(layers + 1));
  // Each stream's logits at the positions, once, for its top-k and the share it gives the model's own
  // top token: the last stream's, so that one goes first (one stream's [P, V] held at a time).
  std::vector<Eigen::Index> own(static_cast<size_t>(P));
  for (int64_t step = 0; step <= layers; ++step) {
    const int64_t l = step == 0 ? layers : step - 1;
    // resid_l through the final norm alone: a pass resumed after the last layer
    Interventions e;
    e.resume_layer = layers;
    e.resume = &base.residual[static_cast<size_t>(l)];
    const ModelRun run = editedRun(m, ids, e, ctx);
    Mat rows(P, run.hidden.cols());  // the hidden states at the positions   [P, d]
    for (int64_t i = 0; i < P; ++i) rows.row(i) = run.hidden.row(positions[static_cast<size_t>(i)]);
    const Mat logits = logitsOf(m, rows);  // [P, V]
    auto& cells = lens.top[static_cast<size_t>(l)];
    for (int64_t i = 0; i < P; ++i) {
      const auto row = logits.row(i);
      if (step == 0) row.maxCoeff(&own[static_cast<size_t>(i)]);
      cells.push_back(topKOfLogits(m, row, top_k));
      lens.final_token(l, i) =
          static_cast<float>(std::exp(static_cast<double>(row(own[static_cast<size_t>(i)])) - logSumExp(row)));
    }
    ctx.progress(static_cast<float>(step + 1) / static_cast<float>(layers + 1));
  }
  return lens;
}

double LogitAttribution::sum() const {
  double s = 0;
  for (const Part& p : parts) s += p.value;
  return s;
}

LogitAttribution directLogitAttribution(const Model& m, const std::vector<int32_t>& ids, const Target& target,
                                        const RunContext& ctx) {
  needsPrediction(m);
  const ModelConfig& c = m.info.config;
  if (m.family->logits)
    throw InputError("direct logit attribution: " + c.label +
                     "'s LM head is more than one matrix after the final norm (a bias, a projection or a soft-cap), "
                     "which this attribution does not split");
  const int64_t layers = c.layers, heads = c.heads, d = c.d_model;
  Interventions keep;
  keep.keep_residual = true;
  keep.write_positions = {target.position};
  const ModelRun run = editedRun(m, ids, keep, ctx);
  if (!run.final_norm.present)
    throw InputError("direct logit attribution: " + c.label +
                     " normalises inside its layers (post-norm), so its logit is not a sum over the stream's parts");
  const FinalNorm& fn = run.final_norm;
  // u = the unembedding row of the target                          [d]
  RowVec u(d);
  if (m.lm_head.data)
    u = m.lm_head.mat().row(target.id);
  else
    m.lm_head.file->floatsAt(*m.lm_head.entry, int64_t{target.id} * d, d, u.data());
  // The final norm at the target: hidden = γ ⊙ (x − [μ]) / σ + β with σ as
  // the run had it, so a part c of x adds γ ⊙ (c − [mean c]) / σ · u.
  const RowVec x = run.residual[static_cast<size_t>(layers)].row(target.position);
  const double mean = fn.centred ? static_cast<double>(x.mean()) : 0.0;
  double var = 0;
  for (int64_t e = 0; e < d; ++e) var += (x(e) - mean) * (x(e) - mean);
  const double sigma = std::sqrt(var / static_cast<double>(d) + fn.eps);
  std::vector<double> gu(static_cast<size_t>(d));  // γ ⊙ u / σ
  for (int64_t e = 0; e < d; ++e)
    gu[static_cast<size_t>(e)] = (static_cast<double>(fn.offset) + fn.w[e]) * u(e) / sigma;
  auto part = [&](const RowVec& v) {
    const double mu = fn.centred ? static_cast<double>(v.mean()) : 0.0;
    double s = 0;
    for (int64_t e = 0; e < d; ++e) s += (v(e) - mu) * gu[static_cast<size_t>(e)];
    return s;
  };
  LogitAttribution a{.target = target};
  a.logit = scoreOf(m, run, target).logit;
  a.heads.resize(layers, heads);
  a.parts.push_back({"embeddings", -1, -1, part(run.residual[0].row(target.position))});
  for (int64_t l = 0; l < layers; ++l) {
    const size_t li = static_cast<size_t>(l);
    std::string L = "L";  // appended piecewise (GCC 12 misreports "L" + string as -Wrestrict)
    L += std::to_string(l);
    // the layer's whole change to the stream, less its heads and bias: its MLP
    RowVec mlp = run.residual[li + 1].row(target.position) - run.residual[li].row(target.position) - run.head_bias[li];
    for (int64_t h = 0; h < heads; ++h) {
      const RowVec w = run.head_writes[li].row(h);  // one write position: row h
      mlp -= w;
      a.heads(l, h) = static_cast<float>(part(w));
      std::string name = L;
      name += "H";
      name += std::to_string(h);
      a.parts.push_back({name, l, h, a.heads(l, h)});
    }
    if (run.head_bias[li].cwiseAbs().maxCoeff() > 0) a.parts.push_back({L + " attention bias", l, -1, part(run.head_bias[li])});
    a.parts.push_back({L + " MLP", l, -1, part(mlp)});
  }
  if (fn.b) {
    double s = 0;
    for (int64_t e = 0; e < d; ++e) s += static_cast<double>(fn.b[e]) * u(e);
    a.parts.push_back({"final norm bias", -1, -1, s});
  }
  return a;
}

Mat valueWeightedMap(const ModelRun& run, int64_t layer, int64_t head) {
  const size_t l = static_cast<size_t>(layer);
  if (run.value_norms.empty() || run.value_norms[l].size() == 0)
    throw InputError("value-weighted attention: the run did not keep its values' norms");
  const Mat& A = run.attention[l][static_cast<size_t>(head)];  // [L, keys]
  if (A.size() == 0) throw InputError("value-weighted attention: the run did not keep this head's map");
  // ‖α_ij v_j W_O^h‖ = α_ij ‖v_j^h W_O^h‖                            [L, keys]
  return (A.array().rowwise() * run.value_norms[l].col(head).transpose().array()).matrix();
}

}  // namespace attn
