#include "engine/model/head_metrics.h"

#include "engine/error.h"
#include "engine/model/maps.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace attn {

double jensenShannonBits(const float* p, const float* q, int64_t n) {
  // JS(p ‖ q) = ½ KL(p ‖ m) + ½ KL(q ‖ m),  m = ½(p + q)
  double js = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double a = p[j], b = q[j], m = 0.5 * (a + b);
    if (a > 0) js += 0.5 * a * std::log2(a / m);
    if (b > 0) js += 0.5 * b * std::log2(b / m);
  }
  return js;
}

namespace {

// Every head's summaries from whole maps, through the same stream of blocks
// as a run that pools its maps: the two give the same numbers, bit for bit.
std::vector<HeadSummary> summariesFromMaps(const ModelRun& run) {
  const int64_t L = run.attention[0][0].rows();
  const int64_t kv = run.kv_heads > 0 ? run.kv_heads : run.heads, group = run.heads / kv;
  MapStream stream(run, L, MapsChoice::Mode::None, {}, {});
  const int64_t B = stream.blockRows();
  Mat stacked;  // the group's rows, as the pass stacks them      [group·n, L]
  for (int64_t l = 0; l < run.layers; ++l)
    for (int64_t g = 0; g < kv; ++g)
      for (int64_t r0 = 0; r0 < L; r0 += B) {
        const int64_t n = std::min(B, L - r0);
        stacked.resize(group * n, run.attention[static_cast<size_t>(l)][0].cols());
        for (int64_t a = 0; a < group; ++a) {
          stacked.middleRows(a * n, n) = run.attention[static_cast<size_t>(l)][static_cast<size_t>(g * group + a)].middleRows(r0, n);
          stream.add(l, g * group + a, r0, 0, stacked.middleRows(a * n, n), Mat());
        }
        stream.addGroup(l, g, group, r0, stacked);
      }
  ModelRun out = run;
  stream.finish(out);
  return out.summaries;
}

}  // namespace

std::vector<HeadSummary> summarizeHeads(const ModelRun& run, const ModelRun& repeated) {
  bool whole = run.layers > 0 && run.first_position == 0;
  for (const std::vector<Mat>& layer : run.attention)
    for (const Mat& a : layer) whole = whole && a.size() > 0;
  if (!whole && run.summaries.empty())
    throw InputError("head summaries: the run kept neither its maps nor their summaries");
  std::vector<HeadSummary> out = whole ? summariesFromMaps(run) : run.summaries;
  // The repeated run is t₁…t_T t₁…t_T, after [CLS] for BERT (bidirectional).
  const int64_t offset = repeated.causal ? 0 : 1;
  const int64_t T = (static_cast<int64_t>(repeated.ids.size()) - 2 * offset) / 2;
  for (HeadSummary& s : out) {
    // induction: mean over the second copy i of A[i, i − T + 1]
    if (T < 1 || s.layer >= repeated.layers || s.head >= repeated.heads) continue;
    const Mat& R = repeated.attention[static_cast<size_t>(s.layer)][static_cast<size_t>(s.head)];
    if (R.size() == 0) throw InputError("head summaries: the repeated run kept no maps");
    for (int64_t i = offset + T; i < offset + 2 * T; ++i) s.induction += R(i, i - T + 1);
    s.induction /= static_cast<double>(T);
  }
  return out;
}

std::vector<int32_t> repeatedRandomIds(const Model& m, int64_t T, uint64_t seed) {
  const Tokenizer& tok = modelTokenizer(m);
  const int32_t n = tok.vocabSize();
  std::vector<int32_t> specials;
  for (const char* s : {"[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]", "<|endoftext|>"})
    if (tok.specialId(s) >= 0) specials.push_back(tok.specialId(s));
  if (T < 1 || n <= static_cast<int32_t>(specials.size()))
    throw InputError("induction sequence: needs T ≥ 1 and a vocabulary with ordinary tokens");
  std::mt19937_64 rng(seed);  // the standard fixes mt19937_64's output: same ids everywhere
  std::vector<int32_t> half;
  while (static_cast<int64_t>(half.size()) < T) {
    const int32_t id = static_cast<int32_t>(rng() % static_cast<uint64_t>(n));
    if (std::find(specials.begin(), specials.end(), id) == specials.end()) half.push_back(id);
  }
  std::vector<int32_t> ids;
  const bool bert = !modelInfo(m).config.causal;  // [CLS] … [SEP] around the text
  if (bert) ids.push_back(tok.specialId("[CLS]"));
  ids.insert(ids.end(), half.begin(), half.end());
  ids.insert(ids.end(), half.begin(), half.end());
  if (bert) ids.push_back(tok.specialId("[SEP]"));
  return ids;
}

ModelRun inductionRun(const Model& m, const RunContext& ctx) {
  // Two copies of t tokens, and room for [CLS] and [SEP] around them (bidirectional models).
  const int64_t t = std::max<int64_t>(2, std::min(kInductionTokens, (modelInfo(m).config.positions - 2) / 2));
  ModelRunOptions maps_only;  // the induction score reads the maps alone
  maps_only.top_k = 0;
  maps_only.maps.mode = MapsChoice::Mode::All;
  maps_only.keep_projections = false;
  return runModelIds(m, repeatedRandomIds(m, t, kInductionSeed), maps_only, ctx);
}

std::vector<Mat> attentionRollout(const ModelRun& run) {
  std::vector<Mat> out;
  Mat R;
  for (int64_t l = 0; l < run.layers; ++l) {
    const std::vector<Mat>& heads = run.attention[static_cast<size_t>(l)];
    const int64_t L = heads[0].rows();
    // Â_l = ½·mean_h A_l,h + ½·I, rows renormalised               [L, L]
    Mat a = Mat::Zero(L, L);
    for (const Mat& A : heads) a += A;
    a *= 0.5f / static_cast<float>(heads.size());
    a.diagonal().array() += 0.5f;
    for (int64_t i = 0; i < L; ++i) a.row(i) /= a.row(i).sum();
    // R_0 = Â_0, R_l = Â_l · R_{l−1}
    if (l == 0) {
      R = std::move(a);
    } else {
      Mat next(L, L);
      next.noalias() = a * R;
      R = std::move(next);
    }
    out.push_back(R);
  }
  return out;
}

}  // namespace attn
