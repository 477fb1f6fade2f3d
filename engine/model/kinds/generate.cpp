#include "engine/model/kinds/generate.h"

#include "engine/model/families/family.h"
#include "engine/parallel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

namespace attn {

namespace {

// The next token from one row of logits [V]: the arg-max (ties: the smaller
// id), or a draw from softmax(logits / τ) over the K largest.
std::pair<int32_t, float> chooseToken(const Eigen::Ref<const RowVec>& logits, const GenerateOptions& o,
                                      std::mt19937_64& rng) {
  const int64_t V = logits.size();
  if (o.top_k == 0) {
    Eigen::Index best = 0;
    const float mx = logits.maxCoeff(&best);
    const double z = (logits.array() - mx).exp().cast<double>().sum();
    return {static_cast<int32_t>(best), static_cast<float>(1.0 / z)};
  }
  const int64_t k = std::min<int64_t>(o.top_k, V);
  std::vector<int32_t> ids(static_cast<size_t>(V));
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                    [&](int32_t a, int32_t b) { return logits(a) > logits(b) || (logits(a) == logits(b) && a < b); });
  std::vector<double> p(static_cast<size_t>(k));
  const double top = logits(ids[0]) / o.temperature;
  for (int64_t i = 0; i < k; ++i) p[static_cast<size_t>(i)] = std::exp(logits(ids[static_cast<size_t>(i)]) / o.temperature - top);
  const double z = std::accumulate(p.begin(), p.end(), 0.0);
  double u = std::uniform_real_distribution<double>(0.0, z)(rng);
  for (int64_t i = 0; i < k; ++i) {
    u -= p[static_cast<size_t>(i)];
    if (u < 0 || i == k - 1) return {ids[static_cast<size_t>(i)], static_cast<float>(p[static_cast<size_t>(i)] / z)};
  }
  return {ids[0], static_cast<float>(p[0] / z)};  // not reached: the loop returns at i = k − 1
}

// Stacks b's rows under a's (both with the same columns).
Mat stackRows(const Mat& a, const Mat& b) {
  if (a.size() == 0) return b;
  Mat out(a.rows() + b.rows(), a.cols());
  out.topRows(a.rows()) = a;
  out.bottomRows(b.rows()) = b;
  return out;
}

}  // namespace

Generation generate(const Model& m, const std::string& text, const GenerateOptions& o, const RunContext& ctx,
                    const std::function<void(const Generation&)>& on_token) {
  const ModelConfig& c = m.info.config;
  if (!c.causal || !m.predicts)
    throw InputError(m.info.label + ": generation needs a causal language model with an LM head; " + c.arch_name +
                     (c.causal ? " has no LM head" : " reads the text in both directions"));
  if (o.max_new < 1 || o.max_new >= c.positions)
    throw InputError("--max-new: expected 1 to " + std::to_string(c.positions - 1) + " new tokens (the model has " +
                     std::to_string(c.positions) + " positions), got " + std::to_string(o.max_new));
  if (o.top_k < 0 || o.top_k > c.vocab)
    throw InputError("--top-k: expected 0 (greedy) to the vocabulary's " + std::to_string(c.vocab) + ", got " +
                     std::to_string(o.top_k));
  if (!(o.temperature > 0.0f && o.temperature <= 100.0f))
    throw InputError("--temperature: expected a number in (0, 100], got " + std::to_string(o.temperature));
  Generation g;
  const std::vector<int32_t> ids = promptIds(m, text, c.positions - o.max_new, o.truncate, &g.truncated);
  checkIds(m, ids, 0);
  PassThreads threads = passThreads(m, static_cast<int64_t>(ids.size()), ctx);
  const auto t0 = std::chrono::steady_clock::now();
  RunContext step_ctx = ctx;  // cancellable; progress counts steps, not layers
  step_ctx.on_progress = nullptr;
  step_ctx.pass_threads = &threads;  // one look at the cores per interval, across the steps
  KvCache cache;
  g.prompt = runForward(m, ids, &cache, step_ctx);
  g.prompt.truncated = g.truncated;
  g.prompt.top_k = predictTokens(m, g.prompt.hidden, {static_cast<int64_t>(ids.size()) - 1}, 5, step_ctx,
                                 &g.prompt.flops);
  Mat logits = lmLogits(m, g.prompt.hidden.bottomRows(1), &g.prompt.flops);
  std::mt19937_64 rng(o.seed);
  std::vector<int32_t> new_ids;
  for (int64_t s = 0; s < o.max_new; ++s) {
    ctx.progress(static_cast<float>(s) / static_cast<float>(o.max_new));
    GeneratedToken t;
    std::tie(t.id, t.probability) = chooseToken(logits.row(0), o, rng);
    t.token = tokenText(*m.tokenizer, t.id);
    // The decode step: one query at position cache.length over every cached key.
    t.step = runForward(m, {t.id}, &cache, step_ctx);
    logits = lmLogits(m, t.step.hidden, &t.step.flops);
    new_ids.push_back(t.id);
    g.tokens.push_back(std::move(t));
    g.text = m.tokenizer->decode(new_ids);
    g.stopped_at_eos = m.eos >= 0 && new_ids.back() == m.eos;
    g.seconds = secondsSince(t0);
    if (on_token) on_token(g);
    if (g.stopped_at_eos) break;
  }
  ctx.progress(1.0f);
  return g;
}

ModelRun generationRun(const Generation& g, size_t steps) {
  ModelRun run = g.prompt;
  steps = std::min(steps, g.tokens.size());
  const int64_t L = static_cast<int64_t>(g.prompt.ids.size() + steps);
  for (size_t s = 0; s < steps; ++s) {
    const ModelRun& st = g.tokens[s].step;
    run.ids.push_back(st.ids[0]);
    run.tokens.push_back(st.tokens[0]);
    run.hidden = stackRows(run.hidden, st.hidden);
    run.flops += st.flops;
    for (size_t l = 0; l < run.attention.size(); ++l) {
      run.q[l] = stackRows(run.q[l], st.q[l]);
      run.k[l] = stackRows(run.k[l], st.k[l]);
      run.v[l] = stackRows(run.v[l], st.v[l]);
      if (!st.q_unrotated.empty()) {
        run.q_unrotated[l] = stackRows(run.q_unrotated[l], st.q_unrotated[l]);
        run.k_unrotated[l] = stackRows(run.k_unrotated[l], st.k_unrotated[l]);
      }
    }
  }
  // Each map grows to [L, L]: the prompt's square, then each step's row.
  for (size_t l = 0; l < run.attention.size(); ++l)
    for (size_t h = 0; h < run.attention[l].size(); ++h) {
      Mat a = Mat::Zero(L, L);
      const Mat& p = g.prompt.attention[l][h];
      a.topLeftCorner(p.rows(), p.cols()) = p;
      for (size_t s = 0; s < steps; ++s) {
        const Mat& row = g.tokens[s].step.attention[l][h];
        a.block(p.rows() + static_cast<int64_t>(s), 0, 1, row.cols()) = row;
      }
      run.attention[l][h] = std::move(a);
    }
  run.top_k.assign(static_cast<size_t>(L), {});
  if (!g.prompt.top_k.empty()) run.top_k[g.prompt.ids.size() - 1] = g.prompt.top_k.back();
  return run;
}

}  // namespace attn
