#include "engine/model/blocks/head_metrics.h"

#include "engine/error.h"
#include "engine/model/blocks/maps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

namespace attn {

double jensenShannonBits(const float* p, const float* q, int64_t n) {
  // JS(p ‖ q) = ½ KL(p ‖ m) + ½ KL(q ‖ m) = ½ Σ p ln p + ½ Σ q ln q − Σ m ln m,  m = ½(p + q)   (÷ ln 2: bits)
  // Over the span where either is non-zero, copied to aligned buffers: the
  // float sum (vectorised: a group of 8 heads has 28 pairs per row) then does
  // not depend on the zeros around the rows nor on where they lay in memory.
  int64_t lo = 0, hi = n;
  while (lo < hi && p[lo] == 0.0f && q[lo] == 0.0f) ++lo;
  while (hi > lo && p[hi - 1] == 0.0f && q[hi - 1] == 0.0f) --hi;
  if (hi == lo) return 0.0;
  thread_local Eigen::ArrayXf a, b, m;
  auto xLogX = [](const Eigen::ArrayXf& x) {  // x ln x, 0 ln 0 = 0 (no denormal reaches the log)
    return x * x.max(std::numeric_limits<float>::min()).log();
  };
  a = Eigen::Map<const Eigen::ArrayXf>(p + lo, hi - lo);
  b = Eigen::Map<const Eigen::ArrayXf>(q + lo, hi - lo);
  m = 0.5f * (a + b);
  const float js = (0.5f * (xLogX(a) + xLogX(b)) - xLogX(m)).sum();  // ≥ 0 but for rounding
  return std::max(0.0, static_cast<double>(js) / std::numbers::ln2);
}

const std::vector<std::string>& headTableColumns() {
  static const std::vector<std::string> names = {"layer",         "head",    "previous-token", "sink",    "induction",
                                                 "mean distance", "entropy", "kv head",        "group JS"};
  return names;
}

std::vector<HeadSummary> summarizeHeads(const ModelRun& run, const ModelRun& repeated) {
  if (run.summaries.empty())
    throw InputError("head summaries: the run streamed none (only a run from the first position does)");
  std::vector<HeadSummary> out = run.summaries;
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

std::vector<HeadSummary> summarizeMaps(const std::vector<std::vector<Mat>>& maps) {
  std::vector<HeadSummary> out;
  for (size_t l = 0; l < maps.size(); ++l)
    for (size_t h = 0; h < maps[l].size(); ++h) {
      const Mat& A = maps[l][h];  // [rows, keys]
      HeadSummary x;
      x.layer = static_cast<int64_t>(l);
      x.head = x.kv_head = static_cast<int64_t>(h);
      const int64_t rows = A.rows(), keys = A.cols();
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < keys; ++j) {
          const double a = A(i, j);
          x.mean_distance += a * static_cast<double>(std::abs(i - j));
          if (a > 0) x.entropy -= a * std::log(a);
        }
        if (i >= 1 && keys > 0) x.sink += A(i, 0);
        if (i >= 1 && i - 1 < keys) x.previous_token += A(i, i - 1);
      }
      if (rows > 1) x.previous_token /= static_cast<double>(rows - 1), x.sink /= static_cast<double>(rows - 1);
      if (rows > 0) x.mean_distance /= static_cast<double>(rows), x.entropy /= static_cast<double>(rows);
      out.push_back(x);
    }
  return out;
}

std::vector<Mat> attentionRollout(const std::vector<std::vector<Mat>>& attention) {
  std::vector<Mat> out;
  Mat R;
  for (size_t l = 0; l < attention.size(); ++l) {
    const std::vector<Mat>& heads = attention[l];
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
