// Maps on demand (engine/model/blocks/maps.h): a run that pools its maps gives the
// same head summaries as a run keeping them whole, bit for bit, each within
// float rounding of its definition over the whole maps, and pooled blocks
// that are the whole maps' block means and maxima; the keys each query reads are
// the mask's; a run that will not fit is refused before it allocates.
#include "engine/model/blocks/head_metrics.h"
#include "engine/model/blocks/maps.h"
#include "engine/model/model.h"

#include "tests/engine_reference.h"
#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attn {
namespace {

// A LLaMA-layout checkpoint (4 query heads over 2 key/value heads) given
// `positions` positions, and `L` seeded ids within its vocabulary.
struct LongRun {
  test::TempDir dir;
  std::shared_ptr<const Model> model;
  std::vector<int32_t> ids;
  LongRun(int64_t L, const std::string& family, int64_t window) {
    const test::TinyModel tm = test::writeTinyModel(
        dir.path, {.arch = test::Fixture::Llama, .seed = 3, .family = family, .kv_heads = 2, .sliding_window = window});
    test::setConfigField(tm, "max_position_embeddings", std::to_string(L));
    model = loadModel(filesOnDisk(dir.path.string()));
    for (int64_t i = 0; i < L; ++i) ids.push_back(static_cast<int32_t>((i * 37 + 11) % 259));
  }
  ModelRun run(MapsChoice::Mode mode) const {
    ModelRunOptions o;
    o.top_k = 0;
    o.maps.mode = mode;
    return runModelIds(*model, ids, o);
  }
};

void expectSameSummaries(const std::vector<HeadSummary>& a, const std::vector<HeadSummary>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("layer " + std::to_string(a[i].layer) + " head " + std::to_string(a[i].head));
    EXPECT_EQ(a[i].previous_token, b[i].previous_token);
    EXPECT_EQ(a[i].sink, b[i].sink);
    EXPECT_EQ(a[i].mean_distance, b[i].mean_distance);
    EXPECT_EQ(a[i].entropy, b[i].entropy);
    EXPECT_EQ(a[i].group_divergence, b[i].group_divergence);
    EXPECT_EQ(a[i].kv_head, b[i].kv_head);
    EXPECT_EQ(a[i].group_size, b[i].group_size);
  }
}

// L = 300: pooled blocks of s = 2 (150 of them, the maps' 300 × 300 cut
// 2 × 2), six blocks of query rows, every 5th query in the group divergence.
class StreamedMaps : public ::testing::TestWithParam<int64_t> {};

TEST_P(StreamedMaps, SummariesExactAndPooledBlocksAgainstTheWholeMaps) {
  constexpr int64_t L = 300;
  const int64_t window = GetParam();
  const LongRun r(L, window > 0 ? "mistral" : "llama", window);
  const ModelRun whole = r.run(MapsChoice::Mode::All);
  const ModelRun pooled = r.run(MapsChoice::Mode::Pooled);
  ASSERT_EQ(pooled.maps, MapsChoice::Mode::Pooled);
  for (const std::vector<Mat>& layer : pooled.attention)
    for (const Mat& a : layer) EXPECT_EQ(a.size(), 0) << "a pooled run keeps no whole map";

  // The streamed summaries are those of the run keeping every map, exactly.
  expectSameSummaries(pooled.summaries, whole.summaries);
  expectSameSummaries(summarizeHeads(pooled, whole), summarizeHeads(whole, whole));

  // …and the summaries' definitions, as plain double loops over the whole maps.
  const int64_t stride = divergenceStride(L);
  EXPECT_EQ(stride, 5);
  for (const HeadSummary& s : pooled.summaries) {
    const Mat& A = whole.attention[static_cast<size_t>(s.layer)][static_cast<size_t>(s.head)];
    double prev = 0, sink = 0, dist = 0, ent = 0;
    for (int64_t i = 0; i < L; ++i) {
      if (i >= 1) prev += A(i, i - 1), sink += A(i, 0);
      for (int64_t j = 0; j < L; ++j) {
        dist += A(i, j) * std::abs(static_cast<double>(i - j));
        if (A(i, j) > 0) ent -= A(i, j) * std::log(static_cast<double>(A(i, j)));
      }
    }
    EXPECT_NEAR(s.previous_token, prev / (L - 1), 1e-9);
    EXPECT_NEAR(s.sink, sink / (L - 1), 1e-9);
    EXPECT_NEAR(s.mean_distance, dist / L, 1e-4 * (1 + dist / L));
    EXPECT_NEAR(s.entropy, ent / L, 1e-5 * (1 + ent / L));
    // Heads 2g and 2g + 1 share key/value head g: one pair, every 5th query.
    const Mat& P = whole.attention[static_cast<size_t>(s.layer)][static_cast<size_t>(s.kv_head * 2)];
    const Mat& Q = whole.attention[static_cast<size_t>(s.layer)][static_cast<size_t>(s.kv_head * 2 + 1)];
    double js = 0;
    int64_t rows = 0;
    for (int64_t i = 0; i < L; i += stride, ++rows)
      for (int64_t j = 0; j < L; ++j) {
        const double p = P(i, j), q = Q(i, j), m = 0.5 * (p + q);
        if (p > 0) js += 0.5 * p * std::log2(p / m);
        if (q > 0) js += 0.5 * q * std::log2(q / m);
      }
    EXPECT_NEAR(s.group_divergence, js / static_cast<double>(rows), 1e-6);  // float sums
  }

  // Pooled: s = ⌈300 / 256⌉ = 2, n = 150; block means and maxima of the whole maps.
  ASSERT_EQ(pooled.pooled.block, 2);
  ASSERT_EQ(pooled.pooled.n, 150);
  ASSERT_EQ(pooled.pooled.mean.size(), static_cast<size_t>(pooled.layers * pooled.heads));
  for (size_t m = 0; m < pooled.pooled.mean.size(); ++m) {
    const Mat& A = whole.attention[m / static_cast<size_t>(pooled.heads)][m % static_cast<size_t>(pooled.heads)];
    for (int64_t bi = 0; bi < 150; ++bi)
      for (int64_t bj = 0; bj < 150; ++bj) {
        double sum = 0, mx = 0;
        for (int64_t i = 2 * bi; i < 2 * bi + 2; ++i)
          for (int64_t j = 2 * bj; j < 2 * bj + 2; ++j) sum += A(i, j), mx = std::max(mx, static_cast<double>(A(i, j)));
        EXPECT_NEAR(pooled.pooled.mean[m](bi, bj), sum / 4, 1e-6);
        EXPECT_EQ(pooled.pooled.max[m](bi, bj), static_cast<float>(mx));
      }
  }
  // Any head's whole map on demand, from the q and k the pooled run kept: the pass's bits.
  ASSERT_TRUE(pooled.keep_scores);
  EXPECT_FALSE(whole.keep_scores);
  for (const auto& [l, h] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 3}, {1, 2}})
    EXPECT_EQ(headMap(pooled, l, h), whole.attention[static_cast<size_t>(l)][static_cast<size_t>(h)]) << l << ":" << h;
  EXPECT_THROW(headMap(whole, 0, 0), InputError);
  // The whole run pools too, to the same numbers.
  for (size_t m = 0; m < pooled.pooled.mean.size(); ++m) {
    EXPECT_TRUE(whole.pooled.mean[m].isApprox(pooled.pooled.mean[m], 1e-6f));
    EXPECT_EQ(whole.pooled.max[m], pooled.pooled.max[m]);
  }
}

INSTANTIATE_TEST_SUITE_P(Window, StreamedMaps, ::testing::Values(0, 37));

// A length that does not divide: L = 515 → s = 3, n = 172, the last block
// positions 513 and 514 only.
TEST(StreamedMaps, TheLastPooledBlockIsShorter) {
  constexpr int64_t L = 515;
  const LongRun r(L, "llama", 0);
  const ModelRun whole = r.run(MapsChoice::Mode::All);
  const ModelRun none = r.run(MapsChoice::Mode::None);
  ASSERT_EQ(none.pooled.block, 3);
  ASSERT_EQ(none.pooled.n, 172);
  const Mat& A = whole.attention[1][3];
  const Mat& mean = none.pooled.mean[static_cast<size_t>(1 * none.heads + 3)];
  const double corner = A(513, 513) + A(513, 514) + A(514, 513) + A(514, 514);  // 2 × 2 (A(513, 514) = 0)
  EXPECT_NEAR(mean(171, 171), corner / 4, 1e-6);
  double edge = 0;  // query block 171 to key block 0: 2 × 3
  for (int64_t i = 513; i < L; ++i)
    for (int64_t j = 0; j < 3; ++j) edge += A(i, j);
  EXPECT_NEAR(mean(171, 0), edge / 6, 1e-6);
  expectSameSummaries(none.summaries, whole.summaries);
}

// Heads mode keeps only the heads asked for, equal to the whole run's.
TEST(StreamedMaps, ChosenHeadsAreKeptWholeAndNoOthers) {
  const LongRun r(80, "llama", 0);
  const ModelRun whole = r.run(MapsChoice::Mode::All);
  ModelRunOptions o;
  o.top_k = 0;
  o.maps = parseMapsChoice("1:2,0:0");
  const ModelRun some = runModelIds(*r.model, r.ids, o);
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t h = 0; h < 4; ++h) {
      const Mat& a = some.attention[static_cast<size_t>(l)][static_cast<size_t>(h)];
      if ((l == 1 && h == 2) || (l == 0 && h == 0))
        EXPECT_EQ(a, whole.attention[static_cast<size_t>(l)][static_cast<size_t>(h)]);
      else
        EXPECT_EQ(a.size(), 0);
    }
  o.maps = parseMapsChoice("2:0");
  const std::string e = test::errorOf([&] { runModelIds(*r.model, r.ids, o); });
  EXPECT_NE(e.find("--maps: layer 2 head 0 is outside the model's 2 layers of 4 heads"), std::string::npos) << e;
}

// Past 2,048 rows the gated MLP runs a chunk of rows at a time: a causal
// model's first 2,048 positions come out as in a run of those alone.
TEST(StreamedMaps, ChunkedMlpRowsMatchAnUnchunkedRun) {
  const LongRun r(2100, "llama", 0);
  ModelRunOptions o;
  o.top_k = 0;
  o.maps.mode = MapsChoice::Mode::None;
  const ModelRun chunked = runModelIds(*r.model, r.ids, o);
  const ModelRun first = runModelIds(*r.model, std::vector<int32_t>(r.ids.begin(), r.ids.begin() + 2048), o);
  ASSERT_EQ(chunked.hidden.rows(), 2100);
  EXPECT_LT(ref::maxAbsDiff(chunked.hidden.topRows(2048), first.hidden), 1e-5f);
}

TEST(MapsChoice, ParsesEveryFormAndRefusesOthers) {
  EXPECT_EQ(parseMapsChoice("auto").mode, MapsChoice::Mode::Auto);
  EXPECT_EQ(parseMapsChoice("all").mode, MapsChoice::Mode::All);
  EXPECT_EQ(parseMapsChoice("pooled").mode, MapsChoice::Mode::Pooled);
  EXPECT_EQ(parseMapsChoice("none").mode, MapsChoice::Mode::None);
  const MapsChoice c = parseMapsChoice("3:1,0:12");
  EXPECT_EQ(c.mode, MapsChoice::Mode::Heads);
  EXPECT_EQ(c.heads, (std::vector<std::pair<int64_t, int64_t>>{{3, 1}, {0, 12}}));
  for (const char* bad : {"", "some", "3", "3:", ":1", "3:1,", "-1:2", "1:2x", "1:2:3"})
    EXPECT_THROW(parseMapsChoice(bad), InputError) << bad;
}

// The keys each query reads are exactly the mask's (transformers' rules).
TEST(KeyRanges, AreTheMasksRows) {
  for (const bool causal : {true, false})
    for (const int64_t window : {0, 1, 4, 7})
      for (const int64_t p0 : {0, 5}) {
        if (!causal && p0 > 0) continue;  // bidirectional runs have no cache
        const int64_t L = 12, T = p0 + L;
        const KeyRange keys{p0, T, causal, window};
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < T; ++j) {
            const int64_t back = p0 + i - j;
            bool allowed = !causal || j <= p0 + i;
            if (window > 0) allowed = allowed && (causal ? back < window : std::abs(back) <= window / 2);
            EXPECT_EQ(j >= keys.first(i) && j < keys.end(i), allowed)
                << "causal " << causal << " window " << window << " p0 " << p0 << " i " << i << " j " << j;
          }
      }
}

// A run that will not fit is refused before the pass, naming the length,
// the estimate and the memory available; Auto falls back to pooled maps.
TEST(RunMemory, TooLargeIsRefusedAndAutoPools) {
  const LongRun r(512, "llama", 0);
  // 2 layers × 4 heads × 512² floats = 8 MiB of maps; the pass without them
  // about 5.5 MiB (most of it the pooled maps). A limit of 12 MiB leaves 9 MiB
  // (three quarters): the maps do not fit, the rest does.
  const ref::ScopedEnv limit("ATTNLAB_MEMORY_LIMIT_MB", "12");
  const RunMemory all = estimateRunMemory(*r.model, 512, 8, true, 0);
  EXPECT_DOUBLE_EQ(all.maps, 8.0 * 512 * 512 * 4);
  ASSERT_GT(all.total(), 9.0 * (1 << 20));
  ASSERT_LT(estimateRunMemory(*r.model, 512, 0, true, 0).total(), 9.0 * (1 << 20));
  const std::string e = test::errorOf([&] { r.run(MapsChoice::Mode::All); });
  for (const char* s : {"text: 512 tokens would need about", "maps 8.0 MiB", "more than the 9.0 MiB of memory available",
                        "--maps pooled"})
    EXPECT_NE(e.find(s), std::string::npos) << s << " not in: " << e;
  const ModelRun run = r.run(MapsChoice::Mode::Auto);
  EXPECT_EQ(run.maps, MapsChoice::Mode::Pooled);
  EXPECT_NE(run.maps_note.find("the maps are pooled"), std::string::npos) << run.maps_note;
  EXPECT_EQ(run.summaries.size(), 8u);
  // A head's whole map on demand (1 MiB and the blocks) fits in 9 MiB; in
  // 0.75 MiB it is refused before it is allocated.
  EXPECT_EQ(headMap(run, 1, 3).rows(), 512);
  const ref::ScopedEnv tight("ATTNLAB_MEMORY_LIMIT_MB", "1");
  const std::string m = test::errorOf([&] { headMap(run, 1, 3); });
  for (const char* s : {"head map: layer 1 head 3 over 512 tokens needs", "more than the 768.0 KiB of memory available"})
    EXPECT_NE(m.find(s), std::string::npos) << s << " not in: " << m;
}

}  // namespace
}  // namespace attn
