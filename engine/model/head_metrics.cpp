#include "engine/model/head_metrics.h"

#include "engine/error.h"

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

// kv_head, group_size and group_divergence of every summary (layer-major,
// run.heads per layer).
void groupDivergences(const ModelRun& run, std::vector<HeadSummary>& out) {
  const int64_t kv = run.kv_heads > 0 ? run.kv_heads : run.heads;  // 0: a run without GQA
  const int64_t group = run.heads / kv;                           // query heads per key/value head
  for (int64_t l = 0; l < run.layers; ++l) {
    const std::vector<Mat>& maps = run.attention[static_cast<size_t>(l)];
    for (int64_t g = 0; g < kv; ++g) {
      // mean over pairs a < b in the group and queries i of JS(A_a[i, ·] ‖ A_b[i, ·])
      double sum = 0;
      int64_t terms = 0;
      for (int64_t a = g * group; a < (g + 1) * group; ++a) {
        for (int64_t b = a + 1; b < (g + 1) * group; ++b) {
          const Mat& A = maps[static_cast<size_t>(a)];  // [L, L] row-major: row i is contiguous
          const Mat& B = maps[static_cast<size_t>(b)];
          for (int64_t i = 0; i < A.rows(); ++i) {
            sum += jensenShannonBits(A.row(i).data(), B.row(i).data(), A.cols());
            ++terms;
          }
        }
      }
      for (int64_t h = g * group; h < (g + 1) * group; ++h) {
        HeadSummary& s = out[static_cast<size_t>(l * run.heads + h)];
        s.kv_head = g;
        s.group_size = group;
        s.group_divergence = terms > 0 ? sum / static_cast<double>(terms) : 0.0;
      }
    }
  }
}

}  // namespace

std::vector<HeadSummary> summarizeHeads(const ModelRun& run, const ModelRun& repeated) {
  // The repeated run is t₁…t_T t₁…t_T, after [CLS] for BERT (bidirectional).
  const int64_t offset = repeated.causal ? 0 : 1;
  const int64_t T = (static_cast<int64_t>(repeated.ids.size()) - 2 * offset) / 2;
  std::vector<HeadSummary> out;
  for (int64_t l = 0; l < run.layers; ++l) {
    for (int64_t h = 0; h < run.heads; ++h) {
      const Mat& A = run.attention[static_cast<size_t>(l)][static_cast<size_t>(h)];  // [L, L]
      const int64_t L = A.rows();
      HeadSummary s;
      s.layer = l;
      s.head = h;
      for (int64_t i = 0; i < L; ++i) {
        if (i >= 1) s.previous_token += A(i, i - 1);
        if (i >= 1) s.sink += A(i, 0);
        for (int64_t j = 0; j < L; ++j) {
          const double a = A(i, j);
          s.mean_distance += a * static_cast<double>(std::abs(i - j));
          if (a > 0) s.entropy -= a * std::log(a);  // 0 · ln 0 = 0
        }
      }
      if (L > 1) s.previous_token /= static_cast<double>(L - 1);
      if (L > 1) s.sink /= static_cast<double>(L - 1);
      s.mean_distance /= static_cast<double>(L);
      s.entropy /= static_cast<double>(L);
      // induction: mean over the second copy i of A[i, i − T + 1]
      if (T >= 1 && l < repeated.layers && h < repeated.heads) {
        const Mat& R = repeated.attention[static_cast<size_t>(l)][static_cast<size_t>(h)];
        for (int64_t i = offset + T; i < offset + 2 * T; ++i) s.induction += R(i, i - T + 1);
        s.induction /= static_cast<double>(T);
      }
      out.push_back(s);
    }
  }
  groupDivergences(run, out);
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
