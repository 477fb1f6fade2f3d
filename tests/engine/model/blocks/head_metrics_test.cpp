// The head summaries and rollout (engine/model/blocks/head_metrics.h) on
// constructed heads worked out by hand, and on a real run against a loop.
#include "engine/model/blocks/head_metrics.h"
#include "engine/model/blocks/maps.h"
#include "engine/model/blocks/model_impl.h"
#include "engine/model/model.h"

#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attn::head_metrics_test {
namespace {

using test::TinyModel;
using namespace mref;

// One causal layer of constructed q [L, heads·dh] and k = v [L, kv·dh]
// through the attention kernel and its stream of summaries.
ModelRun streamedRun(const Mat& q, const Mat& k, int64_t heads, int64_t kv_heads) {
  const int64_t L = q.rows();
  ModelRun r;
  r.layers = 1, r.heads = heads, r.kv_heads = kv_heads, r.d_head = q.cols() / heads;
  for (int64_t i = 0; i < L; ++i) r.ids.push_back(static_cast<int32_t>(i + 1)), r.tokens.push_back("t");
  r.attention.resize(1);
  MapStream stream(r, L, MapsChoice::Mode::All, {}, {});
  r.stream = &stream;
  Mat concat;
  attentionLayer(q, k, k, KeyRange{0, L, true, 0}, heads, kv_heads, 1.0f, RunContext{}, r, 0, concat);
  r.stream = nullptr;
  stream.finish(r);
  return r;
}

// 2 heads over L = 4. Head 0's scores are 100 on key i − 1 (key 0 for query
// 0) and 0 elsewhere: a previous-token head to within e⁻¹⁰⁰; head 1's query
// is 0: uniform over keys 0 … i.
ModelRun constructedRun() {
  constexpr int64_t L = 4, dh = 4;
  Mat q = Mat::Zero(L, 2 * dh), k = Mat::Zero(L, 2 * dh);
  for (int64_t i = 0; i < L; ++i) {
    q(i, std::max<int64_t>(i - 1, 0)) = 10;  // head 0: q_i = 10 e_{i−1}, k_j = 10 e_j
    k(i, i) = 10;
  }
  return streamedRun(q, k, 2, 2);
}

TEST(HeadMetrics, HandComputedSummaries) {
  const ModelRun run = constructedRun();
  // The repeated run: T = 2, ids t1 t2 t1 t2; head 0 looks at i − T + 1 on the second copy.
  ModelRun rep;
  rep.layers = 1, rep.heads = 2, rep.ids = run.ids;
  Mat ind = Mat::Zero(4, 4);
  ind(0, 0) = 1, ind(1, 0) = 1;
  ind(2, 1) = 1;                     // i = 2: i − T + 1 = 1
  ind(3, 2) = 0.5f, ind(3, 0) = 0.5f;  // i = 3: half on 2
  rep.attention = {{ind, run.attention[0][1]}};
  const std::vector<HeadSummary> s = summarizeHeads(run, rep);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NEAR(s[0].previous_token, 1.0, 1e-9);
  EXPECT_NEAR(s[0].sink, 1.0 / 3.0, 1e-9);                       // of queries 1..3, query 1 puts 1 on token 0
  EXPECT_NEAR(s[0].mean_distance, (0 + 1 + 1 + 1) / 4.0, 1e-9);
  EXPECT_NEAR(s[0].entropy, 0.0, 1e-9);
  EXPECT_EQ(s[0].group_size, 1);
  EXPECT_EQ(s[0].group_divergence, 0.0);  // no key/value head shared
  EXPECT_NEAR(s[0].induction, (1.0 + 0.5) / 2.0, 1e-9);
  // Uniform causal head: A[i, i−1] = 1/(i+1) for i = 1..3
  EXPECT_NEAR(s[1].previous_token, (1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 3.0, 1e-6);
  EXPECT_NEAR(s[1].sink, (1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 3.0, 1e-6);
  EXPECT_NEAR(s[1].mean_distance, (0.0 + 0.5 + 1.0 + 1.5) / 4.0, 1e-6);  // mean of 0..i
  EXPECT_NEAR(s[1].entropy, (0 + std::log(2.0) + std::log(3.0) + std::log(4.0)) / 4.0, 1e-6);
  EXPECT_NEAR(s[1].induction, (1.0 / 3 + 1.0 / 4) / 2.0, 1e-6);  // A[2,1] = 1/3, A[3,2] = 1/4
}

TEST(HeadMetrics, GroupDivergenceOfIdenticalAndSingleHeads) {
  // 4 query heads over 2 key/value heads: heads 0 and 1 have the same
  // queries (the same maps), heads 2 and 3 different ones.
  constexpr int64_t L = 6, dh = 3;
  Mat q(L, 4 * dh), k(L, 2 * dh);
  for (int64_t i = 0; i < q.size(); ++i) q.data()[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)));
  for (int64_t i = 0; i < k.size(); ++i) k.data()[i] = static_cast<float>(std::cos(1.3 * static_cast<double>(i)));
  q.middleCols(dh, dh) = q.middleCols(0, dh);
  std::vector<HeadSummary> s = streamedRun(q, k, 4, 2).summaries;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].group_divergence, 0.0);
  EXPECT_EQ(s[1].group_divergence, 0.0);
  EXPECT_GT(s[2].group_divergence, 0.0);
  EXPECT_EQ(s[2].group_divergence, s[3].group_divergence);
  // Without GQA every group is one head.
  Mat k4(L, 4 * dh);
  k4 << k, k;
  s = streamedRun(q, k4, 4, 4).summaries;
  for (const HeadSummary& x : s) {
    EXPECT_EQ(x.group_size, 1);
    EXPECT_EQ(x.kv_head, x.head);
    EXPECT_EQ(x.group_divergence, 0.0);
  }
}

TEST(HeadMetrics, RolloutAgainstLoopAndRowsSumToOne) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModelIds(*m, {3, 1, 4, 1, 5, 9, 2, 6});
  const std::vector<Mat> R = attentionRollout(run.attention);
  ASSERT_EQ(R.size(), 2u);
  const int64_t L = 8;
  std::vector<Rows> hat;
  for (int l = 0; l < 2; ++l) {
    Rows a = zeros(L, L);
    for (int64_t i = 0; i < L; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < L; ++j) {
        a[i][j] = 0.5 * (run.attention[l][0](i, j) + run.attention[l][1](i, j)) / 2.0 + (i == j ? 0.5 : 0.0);
        sum += a[i][j];
      }
      for (int64_t j = 0; j < L; ++j) a[i][j] /= sum;
    }
    hat.push_back(a);
  }
  for (int64_t i = 0; i < L; ++i) {
    EXPECT_NEAR(R[0].row(i).sum(), 1.0f, 1e-5f);
    EXPECT_NEAR(R[1].row(i).sum(), 1.0f, 1e-5f);
    for (int64_t j = 0; j < L; ++j) {
      EXPECT_NEAR(R[0](i, j), hat[0][i][j], 1e-5);
      double r1 = 0;
      for (int64_t t = 0; t < L; ++t) r1 += hat[1][i][t] * hat[0][t][j];
      EXPECT_NEAR(R[1](i, j), r1, 1e-5);
      if (j > i) {
        EXPECT_EQ(R[1](i, j), 0.0f);  // causal stays causal
      }
    }
  }
}

TEST(HeadMetrics, RepeatedIdsAvoidSpecials) {
  test::TempDir dir;
  test::writeTinyModel(dir.path, {.arch = test::Fixture::Bert});
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  const std::vector<int32_t> ids = repeatedRandomIds(*m, 5, 42);
  ASSERT_EQ(ids.size(), 12u);
  EXPECT_EQ(ids.front(), 2);  // [CLS]
  EXPECT_EQ(ids.back(), 3);   // [SEP]
  for (int i = 1; i <= 5; ++i) {
    EXPECT_EQ(ids[i], ids[i + 5]);
    EXPECT_GE(ids[i], 5);  // not [PAD] [UNK] [CLS] [SEP] [MASK]
  }
  EXPECT_EQ(ids, repeatedRandomIds(*m, 5, 42));
  const ModelRun rep = runModelIds(*m, ids);
  for (const HeadSummary& s : summarizeHeads(rep, rep)) {
    EXPECT_GE(s.induction, 0.0);
    EXPECT_LE(s.induction, 1.0);
  }
}

}  // namespace
}  // namespace attn::head_metrics_test
