// What the model's parts share beside the pass pieces (model_impl.h): the
// opaque model's accessors, the threads a pass runs on, and the ids a text
// is read as.
#include "engine/model/blocks/model_impl.h"

#include "engine/parallel.h"

#include <algorithm>

namespace attn {

const ModelInfo& modelInfo(const Model& m) { return m.info; }
const Tokenizer& modelTokenizer(const Model& m) { return *m.tokenizer; }

PassThreads passThreads(const Model& m, int64_t tokens, const RunContext& ctx) {
  if (!ctx.adapt_threads) return PassThreads(omp_get_max_threads(), false);
  // About 2 FLOP per parameter per token: below half a GFLOP (~10 ms on one
  // core, the default model's whole range) the pass runs on one thread, as
  // waking a second costs more than it saves; above, on the cores free now
  // and as they change.
  constexpr double kSerialFlops = 5e8;
  const bool small = 2.0 * static_cast<double>(tokens) * static_cast<double>(m.info.parameters) < kSerialFlops;
  return small ? PassThreads(1, false) : PassThreads(threadsAvailable(), true);
}

int32_t leadingSpecial(const Model& m) { return m.cls >= 0 ? m.cls : m.add_bos && m.bos >= 0 ? m.bos : -1; }

std::vector<int32_t> promptIds(const Model& m, const std::string& text, int64_t max_tokens, bool truncate,
                               bool* truncated) {
  const ModelConfig& c = m.info.config;
  if (!m.tokenizer)
    throw InputError(c.label + " reads pictures, not text (attnlab model run PATH --image FILE.png, or --pixels FILE.npy)");
  if (text.empty()) throw InputError("text: empty (type some text for the model to read)");
  std::vector<int32_t> ids = m.tokenizer->encode(text);
  // What the post-processor puts around the text: [CLS] … [SEP] (BERT,
  // BART's <s> … </s>), <s> … (the LLaMA family), … </s> (T5), or nothing.
  // Text that gives no tokens of its own (T5's "   ") still runs on those, as `tokenizers` encodes it.
  const int32_t before = leadingSpecial(m), after = m.sep;
  if (ids.empty() && before < 0 && after < 0)
    throw InputError("text: no tokens after tokenizing (type some words for the model to read)");
  const int64_t added = (before >= 0 ? 1 : 0) + (after >= 0 ? 1 : 0);
  const int64_t limit = max_tokens - added;
  const int64_t n = static_cast<int64_t>(ids.size());
  if (n > limit) {
    std::string specials;
    for (const int32_t id : {before, after})
      if (id >= 0) specials += (specials.empty() ? " (plus " : " and ") + tokenText(*m.tokenizer, id);
    if (!specials.empty()) specials += ")";
    if (!truncate)
      throw TooLongError("text: " + std::to_string(n) + " tokens" + specials + ", but " + c.label +
                             " has only " + std::to_string(max_tokens) + " positions" +
                             (max_tokens < c.positions ? " left" : "") + "; shorten the text, or truncate it to the first " +
                             std::to_string(std::max<int64_t>(limit, 0)) + " tokens (--truncate on the command line)",
                         n, limit);
    if (limit <= 0) throw InputError("text: no positions are left for the text");
    ids.resize(static_cast<size_t>(limit));
    *truncated = true;
  }
  if (before >= 0) ids.insert(ids.begin(), before);
  if (after >= 0) ids.push_back(after);
  return ids;
}

}  // namespace attn
