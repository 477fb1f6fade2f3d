#include "engine/model/analysis/run_compare.h"

#include "engine/error.h"
#include "engine/model/blocks/head_metrics.h"
#include "engine/model/blocks/maps.h"
#include "engine/parallel.h"

#include <algorithm>
#include <numeric>

namespace attn {

std::string TokenAlignment::describe() const {
  if (positional()) return "position by position (" + std::to_string(a_tokens) + " tokens)";
  return "aligned by token: " + std::to_string(pairs.size()) + " of " + std::to_string(a_tokens) + " / " +
         std::to_string(b_tokens) + " matched";
}

TokenAlignment alignTokens(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  TokenAlignment t;
  t.a_tokens = static_cast<int64_t>(a.size());
  t.b_tokens = static_cast<int64_t>(b.size());
  if (a == b) {
    for (int64_t i = 0; i < t.a_tokens; ++i) t.pairs.emplace_back(i, i);
    return t;
  }
  // s(i, j) = length of the longest common subsequence of a[i:] and b[j:]:
  // s(i, j) = s(i+1, j+1) + 1 where a_i = b_j, else max(s(i+1, j), s(i, j+1)).
  const size_t n = a.size(), m = b.size(), w = m + 1;
  std::vector<int32_t> s((n + 1) * w, 0);
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      s[i * w + j] = a[i] == b[j] ? s[(i + 1) * w + j + 1] + 1 : std::max(s[(i + 1) * w + j], s[i * w + j + 1]);
  // Walked from the start, a match is taken as soon as it keeps the length: the earliest pairs.
  for (size_t i = 0, j = 0; i < n && j < m;) {
    if (a[i] == b[j] && s[i * w + j] == s[(i + 1) * w + j + 1] + 1) {
      t.pairs.emplace_back(static_cast<int64_t>(i++), static_cast<int64_t>(j++));
    } else if (s[(i + 1) * w + j] >= s[i * w + j + 1]) {
      ++i;
    } else {
      ++j;
    }
  }
  return t;
}

Mat alignedMap(const ModelRun& run, const TokenAlignment& t, int side, int64_t layer, int64_t head) {
  const Mat& full = run.attention[static_cast<size_t>(layer)][static_cast<size_t>(head)];
  const int64_t n = static_cast<int64_t>(t.pairs.size());
  auto at = [&](int64_t k) { return side == 0 ? t.pairs[static_cast<size_t>(k)].first : t.pairs[static_cast<size_t>(k)].second; };
  Mat m(n, n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) m(i, j) = full(at(i), at(j));
    // Renormalised over the matched keys (kAlignedRows); a row with no weight on them stays 0.
    const float sum = m.row(i).sum();
    if (sum > 0) m.row(i) /= sum;
  }
  return m;
}

namespace {

// "12 layers × 12 heads"
std::string shapeText(int64_t layers, int64_t heads) {
  return std::to_string(layers) + " layers \xC3\x97 " + std::to_string(heads) + " heads";
}

}  // namespace

RunComparison compareRuns(const ModelRun& a, const ModelRun& b, const RunContext& ctx) {
  if (a.layers != b.layers || a.heads != b.heads)
    throw InputError("compare: the runs differ in shape (A: " + shapeText(a.layers, a.heads) + ", B: " +
                     shapeText(b.layers, b.heads) + "); compare needs one architecture");
  for (const ModelRun* r : {&a, &b})
    if (r->maps != MapsChoice::Mode::All || r->first_position != 0)
      throw InputError(std::string("compare: run ") + (r == &a ? "A" : "B") + " kept " + mapsModeName(r->maps) +
                       " maps of " + std::to_string(r->ids.size()) + " tokens; compare reads every map (a shorter text)");
  RunComparison c;
  c.layers = a.layers;
  c.heads = a.heads;
  c.alignment = alignTokens(a.ids, b.ids);
  if (c.alignment.pairs.empty()) throw InputError("compare: the two texts share no token, so no position can be aligned");
  for (const auto& [i, j] : c.alignment.pairs) c.tokens.push_back(a.tokens[static_cast<size_t>(i)]);
  const int64_t n = static_cast<int64_t>(c.alignment.pairs.size()), H = c.heads;
  c.difference.assign(static_cast<size_t>(c.layers), std::vector<Mat>(static_cast<size_t>(H)));
  c.js.assign(static_cast<size_t>(c.layers * H), 0.0);
  parallelFor(c.layers * H, ctx, [&](int64_t lh) {
    const int64_t l = lh / H, h = lh % H;
    const Mat pa = alignedMap(a, c.alignment, 0, l, h), pb = alignedMap(b, c.alignment, 1, l, h);
    double sum = 0;  // mean over the aligned rows of JS(A_i ‖ B_i)
    for (int64_t i = 0; i < n; ++i) sum += jensenShannonBits(pa.row(i).data(), pb.row(i).data(), n);
    c.js[static_cast<size_t>(lh)] = sum / static_cast<double>(n);
    c.difference[static_cast<size_t>(l)][static_cast<size_t>(h)] = pa - pb;
  });
  c.ranking.resize(c.js.size());
  std::iota(c.ranking.begin(), c.ranking.end(), 0);
  std::stable_sort(c.ranking.begin(), c.ranking.end(), [&](int64_t x, int64_t y) { return c.js[static_cast<size_t>(x)] > c.js[static_cast<size_t>(y)]; });
  return c;
}

void checkComparable(const ModelInfo& a, int32_t a_vocab, const ModelInfo& b, int32_t b_vocab) {
  const ModelConfig &ca = a.config, &cb = b.config;
  if (ca.layers == cb.layers && ca.heads == cb.heads && a_vocab == b_vocab) return;
  auto shape = [](const ModelInfo& m, int32_t vocab) {
    return m.label + " (" + m.config.arch_name + ", " + shapeText(m.config.layers, m.config.heads) + ", vocabulary " +
           std::to_string(vocab) + ")";
  };
  throw InputError("compare: the checkpoints differ in shape: A " + shape(a, a_vocab) + ", B " + shape(b, b_vocab) +
                   "; compare needs one architecture and tokenizer");
}

}  // namespace attn
