// Encoder–decoder runs (seq2seq.h): the ids of source and target, the
// checks before a pass, the pass through the family, the LM head's top-k,
// and greedy generation.
#include "engine/model/kinds/seq2seq.h"

#include "engine/attention_math.h"
#include "engine/model/families/family.h"
#include "engine/model/blocks/model_impl.h"
#include "engine/parallel.h"

#include <chrono>

namespace attn {

bool isEncoderDecoder(const Model& m) { return m.family && static_cast<bool>(m.family->seq2seq); }
bool hasDecoder(const Model& m) { return isEncoderDecoder(m) && m.info.config.decoder_layers > 0; }

std::vector<int32_t> sourceIds(const Model& m, const std::string& text) {
  bool truncated = false;
  return promptIds(m, text, m.info.config.positions, false, &truncated);
}

std::vector<int32_t> targetIds(const Model& m, const std::string& text) {
  const ModelConfig& c = m.info.config;
  std::vector<int32_t> ids = {static_cast<int32_t>(c.decoder_start)};
  // the labels' leading special (BART's <s>), then the text; the end token is left out
  if (const int32_t before = leadingSpecial(m); before >= 0) ids.push_back(before);
  const std::vector<int32_t> text_ids = m.tokenizer->encode(text);
  ids.insert(ids.end(), text_ids.begin(), text_ids.end());
  return ids;
}

namespace {

// The pass without the LM head, after the checks.
Seq2SeqRun pass(const Model& m, const std::vector<int32_t>& source, const std::vector<int32_t>& target,
                const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  if (!isEncoderDecoder(m)) throw InputError(c.label + " is not an encoder–decoder model (--target needs T5 or BART)");
  auto check = [&](const std::vector<int32_t>& ids, const std::string& what) {
    if (static_cast<int64_t>(ids.size()) > c.positions)
      throw TooLongError(what + ": " + std::to_string(ids.size()) + " tokens, but " + c.label + " has only " +
                             std::to_string(c.positions) + " positions",
                         static_cast<int64_t>(ids.size()), c.positions);
    for (const int32_t id : ids)
      if (id < 0 || id >= c.vocab)
        throw InputError(what + ": token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                         std::to_string(c.vocab) + ")");
  };
  if (source.empty()) throw InputError("text: no tokens to run the encoder on");
  check(source, "text");
  if (!target.empty() && c.decoder_layers == 0)
    throw InputError("--target: " + c.arch_name + " is an encoder alone (no decoder reads a target)");
  if (target.empty() && c.decoder_layers > 0) throw InputError("--target: no tokens for the decoder to read");
  check(target, "--target");
  // Every map is kept: [layers, heads, S, S] + [decoder layers, heads, T, T + S], and one head's scores and weights.
  const double S = static_cast<double>(source.size()), T = static_cast<double>(target.size());
  const double maps = 4.0 * static_cast<double>(c.heads) *
                      (static_cast<double>(c.layers) * S * S + static_cast<double>(c.decoder_layers) * T * (T + S));
  checkMemoryBudget(maps + 8.0 * std::max(S, T) * std::max(S, T), "the attention maps of " + std::to_string(source.size()) +
                                                                      " source and " + std::to_string(target.size()) +
                                                                      " target tokens");
  Seq2SeqRun run;
  run.source_ids = source;
  run.target_ids = target;
  for (const int32_t id : source) run.source_tokens.push_back(tokenText(*m.tokenizer, id));
  for (const int32_t id : target) run.target_tokens.push_back(tokenText(*m.tokenizer, id));
  run.encoder_layers = c.layers;
  run.decoder_layers = target.empty() ? 0 : c.decoder_layers;
  run.heads = c.heads;
  run.d_head = c.head_dim;
  const PassThreads threads = passThreads(m, static_cast<int64_t>(source.size() + target.size()), ctx);
  m.family->seq2seq(m, run, ctx);
  return run;
}

}  // namespace

void encoderDecoderPass(Seq2SeqRun& run, const RunContext& ctx, const StackPass& stack) {
  const double all = static_cast<double>(run.encoder_layers + run.decoder_layers + 1);
  auto done_after = [&](int64_t before) {
    return [&ctx, before, all](int64_t l) { ctx.check(), ctx.progress(static_cast<float>((before + l + 1) / all)); };
  };
  run.encoder_hidden = stack(false, run.source_ids, nullptr, run.encoder_attention, nullptr, done_after(0));
  if (run.target_ids.empty()) return;
  run.decoder_hidden = stack(true, run.target_ids, &run.encoder_hidden, run.decoder_attention, &run.cross_attention,
                             done_after(run.encoder_layers));
}

Seq2SeqRun runSeq2SeqIds(const Model& m, const std::vector<int32_t>& source, const std::vector<int32_t>& target,
                         int top_k, const RunContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  Seq2SeqRun run = pass(m, source, target, ctx);
  if (m.predicts && top_k > 0 && run.decoder_layers > 0) {
    std::vector<int64_t> rows(target.size());
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>(i);
    run.top_k = predictTokens(m, run.decoder_hidden, rows, top_k, ctx, &run.flops);
  }
  run.compute_seconds = secondsSince(t0);
  ctx.progress(1.0f);
  return run;
}

Seq2SeqRun runSeq2Seq(const Model& m, const std::string& source, const std::string& target, int top_k,
                      const RunContext& ctx) {
  if (source.empty()) throw InputError("text: empty (type a source text for the encoder to read)");
  if (!hasDecoder(m) && !target.empty())
    throw InputError("--target: " + m.info.config.arch_name + " is an encoder alone (no decoder reads a target)");
  return runSeq2SeqIds(m, sourceIds(m, source), hasDecoder(m) ? targetIds(m, target) : std::vector<int32_t>{}, top_k,
                       ctx);
}

Seq2SeqGeneration generateSeq2Seq(const Model& m, const std::string& source, int64_t max_new, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  if (!hasDecoder(m) || !m.predicts)
    throw InputError(c.arch_name + " has no decoder with an LM head to generate with (expected *ForConditionalGeneration)");
  if (max_new < 1 || max_new > c.positions - 1)
    throw InputError("--max-new: expected 1 … " + std::to_string(std::min<int64_t>(c.positions - 1, kMaxCount)) +
                     ", got " + std::to_string(max_new));
  if (source.empty()) throw InputError("text: empty (type a source text for the encoder to read)");
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<int32_t> src = sourceIds(m, source);
  std::vector<int32_t> target = {static_cast<int32_t>(c.decoder_start)}, new_ids;
  Seq2SeqGeneration g;
  for (int64_t step = 0; step < max_new; ++step) {
    ctx.check();
    g.run = pass(m, src, target, ctx);
    const int64_t last = static_cast<int64_t>(target.size()) - 1;
    const Prediction next = predictTokens(m, g.run.decoder_hidden, {last}, 1, ctx, &g.run.flops)[static_cast<size_t>(last)][0];
    g.tokens.push_back(next);
    new_ids.push_back(next.id);
    g.stopped_at_eos = m.eos >= 0 && next.id == m.eos;
    if (g.stopped_at_eos) break;
    target.push_back(next.id);
  }
  // g.run is the last step's pass: its row s is step s's, one row per new token.
  std::vector<int32_t> text_ids;  // the new tokens without the specials around a text (BART writes <s> first)
  for (const int32_t id : new_ids)
    if (id != m.eos && id != c.decoder_start && id != m.bos && id != m.cls && id != m.sep) text_ids.push_back(id);
  g.text = m.tokenizer->decode(text_ids);
  g.seconds = secondsSince(t0);
  g.run.compute_seconds = g.seconds;
  ctx.progress(1.0f);
  return g;
}

}  // namespace attn
