// Reformer: LSH attention and reversible layers against plain-loop
// references written here from the paper's definitions (Kitaev et al. 2020,
// §2–3), plus the invariants the issue names.
#include "engine/attention_math.h"
#include "engine/compare.h"
#include "engine/error.h"
#include "engine/lsh.h"
#include "engine/npy.h"
#include "engine/parallel.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>

namespace attn {
namespace {

using ref::expectInputError;

// h(x) = argmax([xR; −xR]) with plain loops in double.
std::vector<int32_t> loopHash(const Mat& x, const Mat& r) {
  const int64_t half = r.cols();
  std::vector<int32_t> out;
  for (int64_t i = 0; i < x.rows(); ++i) {
    std::vector<double> v(static_cast<size_t>(2 * half));
    for (int64_t c = 0; c < half; ++c) {
      double s = 0;
      for (int64_t t = 0; t < x.cols(); ++t) s += static_cast<double>(x(i, t)) * r(t, c);
      v[static_cast<size_t>(c)] = s;
      v[static_cast<size_t>(half + c)] = -s;
    }
    out.push_back(static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin()));
  }
  return out;
}

// The paper's LSH attention with loops: P_i^r from the stably sorted order,
// chunks of m looking one back (no wrap), same bucket, j < i; self only when
// the union over rounds is empty. With the duplicate correction the weights
// are the softmax over ∪_r P_i^r. Returns dense [L, L] weights.
// k_j = q_j / ‖q_j‖ (shared-QK) in double.
ref::DMat loopUnitRows(const Mat& q) {
  ref::DMat k(q.rows(), q.cols());
  for (int64_t j = 0; j < q.rows(); ++j) {
    double n = 0;
    for (int64_t t = 0; t < q.cols(); ++t) n += static_cast<double>(q(j, t)) * q(j, t);
    for (int64_t t = 0; t < q.cols(); ++t) k(j, t) = q(j, t) / std::sqrt(n);
  }
  return k;
}

ref::DMat loopLsh(const Mat& q, const Mat& rot, int64_t b, int64_t m, int64_t rounds) {
  const int64_t L = q.rows(), d = q.cols(), half = b / 2;
  const ref::DMat k = loopUnitRows(q);
  std::vector<std::set<int64_t>> keys(static_cast<size_t>(L));
  for (int64_t r = 0; r < rounds; ++r) {
    const std::vector<int32_t> h = loopHash(q, rot.middleCols(r * half, half));
    std::vector<int64_t> order(static_cast<size_t>(L));
    for (int64_t i = 0; i < L; ++i) order[static_cast<size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t c) { return h[static_cast<size_t>(a)] < h[static_cast<size_t>(c)]; });
    std::vector<int64_t> chunk(static_cast<size_t>(L));
    for (int64_t s = 0; s < L; ++s) chunk[static_cast<size_t>(order[static_cast<size_t>(s)])] = s / m;
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < i; ++j) {
        const int64_t ci = chunk[static_cast<size_t>(i)], cj = chunk[static_cast<size_t>(j)];
        if (h[static_cast<size_t>(i)] == h[static_cast<size_t>(j)] && (cj == ci || cj == ci - 1)) keys[static_cast<size_t>(i)].insert(j);
      }
  }
  ref::DMat w(L, L);
  for (int64_t i = 0; i < L; ++i) {
    if (keys[static_cast<size_t>(i)].empty()) keys[static_cast<size_t>(i)].insert(i);
    double z = 0;
    std::vector<double> e;
    for (const int64_t j : keys[static_cast<size_t>(i)]) {
      double s = 0;
      for (int64_t t = 0; t < d; ++t) s += static_cast<double>(q(i, t)) * k(j, t);
      e.push_back(std::exp(s / std::sqrt(static_cast<double>(d))));
      z += e.back();
    }
    size_t n = 0;
    for (const int64_t j : keys[static_cast<size_t>(i)]) w(i, j) = e[n++] / z;
  }
  return w;
}

// trax's LSH attention (trax/layers/research/efficient_attention.py; the
// bucket mask and duplicate counts of its v1 class) with loops, step by step
// as trax takes them. Round r's bucket ids are r·b + h_r; all rounds' slots
// are sorted by (bucket id, position) into ONE sequence of rounds·L slots,
// cut into chunks of m, and each chunk's window is itself and the chunk
// before it, cyclically over the whole sequence (look_adjacent, so with one
// chunk the window is that chunk twice). In query slot t's window
//   dots_tu = q_i·k_j/√d − 10⁹[causal, j > i] − 10⁵[j = i] − 10⁷[!across, id_u ≠ id_t] − ln(N_ij + 10⁻⁹)
// (the last with the correction), N_ij the occurrences of j in all of query
// i's windows whose bucket id matches its own there (every one: across). A
// softmax per slot, the slots of query i (one per round) combined by their
// log-sum-exp. Returns the dense weights [L, L]: Σ over occurrences.
ref::DMat traxLoopLsh(const Mat& q, const Mat& rot, int64_t b, int64_t m, int64_t rounds, bool causal, bool across,
                      bool correction) {
  const int64_t L = q.rows(), d = q.cols(), half = b / 2, S = rounds * L, G = (S + m - 1) / m;
  const ref::DMat k = loopUnitRows(q);
  std::vector<int64_t> pos, id;  // [S]: position and bucket id of each slot
  for (int64_t r = 0; r < rounds; ++r) {
    const std::vector<int32_t> h = loopHash(q, rot.middleCols(r * half, half));
    for (int64_t c = 0; c < b; ++c)
      for (int64_t i = 0; i < L; ++i)
        if (h[static_cast<size_t>(i)] == c) {
          pos.push_back(i);
          id.push_back(r * b + c);
        }
  }
  auto window = [&](int64_t t) {
    std::vector<int64_t> w;
    for (const int64_t c : {(t / m + G - 1) % G, t / m})
      for (int64_t u = c * m; u < std::min(S, (c + 1) * m); ++u) w.push_back(u);
    return w;
  };
  ref::DMat w(L, L);
  for (int64_t i = 0; i < L; ++i) {
    std::vector<int64_t> mine;  // query i's slots, one per round
    for (int64_t t = 0; t < S; ++t)
      if (pos[static_cast<size_t>(t)] == i) mine.push_back(t);
    std::vector<double> n(static_cast<size_t>(L), 0.0);
    for (const int64_t t : mine)
      for (const int64_t u : window(t))
        if (across || id[static_cast<size_t>(u)] == id[static_cast<size_t>(t)]) n[static_cast<size_t>(pos[static_cast<size_t>(u)])] += 1;
    std::vector<std::vector<std::pair<int64_t, double>>> dots;  // per slot: (key, dots)
    std::vector<double> z_slot;
    for (const int64_t t : mine) {
      dots.emplace_back();
      double mx = -std::numeric_limits<double>::infinity();
      for (const int64_t u : window(t)) {
        const int64_t j = pos[static_cast<size_t>(u)];
        double s = 0;
        for (int64_t c = 0; c < d; ++c) s += static_cast<double>(q(i, c)) * k(j, c);
        s /= std::sqrt(static_cast<double>(d));
        if (causal && j > i) s -= 1e9;
        if (j == i) s -= 1e5;
        if (!across && id[static_cast<size_t>(u)] != id[static_cast<size_t>(t)]) s -= 1e7;
        if (correction) s -= std::log(n[static_cast<size_t>(j)] + 1e-9);
        dots.back().emplace_back(j, s);
        mx = std::max(mx, s);
      }
      double sum = 0;
      for (const auto& [j, s] : dots.back()) sum += std::exp(s - mx);
      z_slot.push_back(mx + std::log(sum));
    }
    const double mz = *std::max_element(z_slot.begin(), z_slot.end());
    double sum = 0;
    for (const double zt : z_slot) sum += std::exp(zt - mz);
    const double z = mz + std::log(sum);
    for (const auto& slot : dots)
      for (const auto& [j, s] : slot) w(i, j) += std::exp(s - z);
  }
  return w;
}

Mat dense(const SparseRows& s) { return toDenseValues(s); }

// [SECTION] Hashing

TEST(Lsh, BucketsMatchALoopHashForAGivenR) {
  const Mat x = randomNormal(64, 8, 1, "t.x"), r = randomNormal(8, 4, 1, "t.r");
  EXPECT_EQ(lshHash(x, r), loopHash(x, r));
  // Sorted stably by (bucket, position).
  const std::vector<int32_t> h = lshHash(x, r), order = sortByBucket(h, 8);
  for (size_t s = 1; s < order.size(); ++s) {
    const auto a = static_cast<size_t>(order[s - 1]), b = static_cast<size_t>(order[s]);
    EXPECT_TRUE(h[a] < h[b] || (h[a] == h[b] && a < b));
  }
}

TEST(Lsh, VariantRecordsRAndAGivenRReproducesTheBuckets) {
  const Inputs in = ref::gaussianInputs(5, 40, 40, 16, 2);
  const Result a = ref::run("lsh", in, {{"n_buckets", "8"}, {"chunk", "8"}, {"rounds", "2"}, {"round", "1"}});
  const Mat& rot = ref::recorded(a, "R");
  ASSERT_EQ(rot.rows(), 8);  // d_head
  ASSERT_EQ(rot.cols(), 8);  // rounds · b/2
  // The strip's buckets are round 1's hash of head 0's q; `buckets` [rounds, L] holds every round's.
  const Mat q0 = ref::recorded(a, "q").leftCols(8);
  const std::vector<int32_t> want = loopHash(q0, rot.middleCols(4, 4));
  const Extra* strip = a.findExtra("round_buckets");
  ASSERT_NE(strip, nullptr);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(strip->value.data[i], static_cast<float>(want[i]));
  const Extra* all = a.findExtra("buckets");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->kind, ExtraKind::Data);
  EXPECT_TRUE(all->integer);
  ASSERT_EQ(all->value.shape, (std::vector<int64_t>{2, 40}));
  for (int64_t round = 0; round < 2; ++round) {
    const std::vector<int32_t> hashed = loopHash(q0, rot.middleCols(round * 4, 4));
    for (size_t i = 0; i < hashed.size(); ++i)
      EXPECT_EQ(all->value.data[static_cast<size_t>(round) * 40 + i], static_cast<float>(hashed[i])) << round << " " << i;
  }
  // Loading R from a file gives the same run; another R other buckets.
  ref::TempPath file("lsh_R.npy");
  writeNpy(file.path, Array::fromMat(rot));
  const Result b = ref::run("lsh", in, {{"n_buckets", "8"}, {"chunk", "8"}, {"rounds", "2"}, {"round", "1"}, {"R", file.path.string()}});
  EXPECT_EQ(b.findExtra("buckets")->value.data, all->value.data);
  EXPECT_EQ(dense(b.sparse[1]), dense(a.sparse[1]));
  writeNpy(file.path, Array::fromMat(Mat(-rot)));
  const Result c = ref::run("lsh", in, {{"n_buckets", "8"}, {"chunk", "8"}, {"rounds", "2"}, {"round", "1"}, {"R", file.path.string()}});
  EXPECT_NE(c.findExtra("buckets")->value.data, all->value.data);
}

// [SECTION] Attention against references

TEST(Lsh, OneBucketAndOneChunkIsFullCausalAttentionWithTheSelfRule) {
  const int64_t L = 37, d = 8;
  const Mat q = randomNormal(L, d, 2, "t.q"), v = randomNormal(L, 5, 2, "t.v");
  for (const int64_t rounds : {1, 3}) {
    LshOptions o;
    o.n_buckets = 4;
    o.chunk = 64;
    o.rounds = rounds;
    // R = 0: every xR is 0, the argmax ties to bucket 0: one bucket.
    const LshHead h = lshAttentionHead(q, v, Mat::Zero(d, rounds * 2), o, {});
    // Reference: softmax over j < i of q_i·k_j/√d (query 0: itself only).
    const ref::DMat w = loopLsh(q, Mat::Zero(d, rounds * 2), 4, 64, rounds);
    ref::expectClose(dense(h.weights), w, 1e-5, "weights, rounds " + std::to_string(rounds));
    ref::DMat out(L, 5);
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < L; ++j)
        for (int64_t t = 0; t < 5; ++t) out(i, t) += w(i, j) * v(j, t);
    ref::expectClose(h.output, out, 1e-5, "output");
    // Across buckets with random R and chunk ≥ L is the same attention.
    o.across_buckets = true;
    const LshHead a = lshAttentionHead(q, v, randomNormal(d, rounds * 2, 3, "t.r"), o, {});
    ref::expectClose(dense(a.weights), w, 1e-5, "across buckets");
  }
}

TEST(Lsh, MatchesTheLoopReferenceWithChunksAndRounds) {
  const int64_t L = 48, d = 8, b = 4, m = 5, rounds = 3;
  const Mat q = randomNormal(L, d, 4, "t.q"), v = randomNormal(L, d, 4, "t.v");
  const Mat rot = randomNormal(d, rounds * b / 2, 4, "t.r");
  LshOptions o;
  o.n_buckets = b;
  o.chunk = m;
  o.rounds = rounds;
  const LshHead h = lshAttentionHead(q, v, rot, o, {});
  ref::expectClose(dense(h.weights), loopLsh(q, rot, b, m, rounds), 1e-5, "weights");
  // The log-sum-exp combination of the rounds' outputs is Σ_j w_ij v_j.
  ref::expectClose(h.output, ref::matmul(ref::fromMat(dense(h.weights)), ref::fromMat(v)), 1e-5, "output");
}

// wrap: trax's look-back over the rounds sorted into one sequence, so chunk
// 0 of round r sees the last chunk of round r − 1 and a key twice in a
// window counts twice. The smallest case where it differs from wrapping
// inside each round: query 2 sees key 0 in both rounds' windows and key 1 in
// one (across buckets, no correction): 0.6697 / 0.3303, where a wrap inside
// each round gave 0.5034 / 0.4966.
TEST(Lsh, WrapIsTraxLookBackOverAllRoundsInOneSequence) {
  Mat q(4, 2);
  q << 1, .2f, .9f, -.3f, -1, .1f, .8f, .5f;
  const Mat rot = Mat::Identity(2, 2);  // R_0 = [1; 0], R_1 = [0; 1]
  LshOptions o;
  o.n_buckets = 2;
  o.chunk = 2;
  o.rounds = 2;
  o.wrap = true;
  o.across_buckets = true;
  o.duplicate_correction = false;
  const ref::DMat want = traxLoopLsh(q, rot, 2, 2, 2, true, true, false);
  EXPECT_NEAR(want(2, 0), 0.6697, 5e-5);
  EXPECT_NEAR(want(2, 1), 0.3303, 5e-5);
  const LshHead h = lshAttentionHead(q, Mat::Identity(4, 4), rot, o, {});
  const Mat w = dense(h.weights);
  EXPECT_NEAR(w(2, 0), 0.6697, 5e-5);
  EXPECT_NEAR(w(2, 1), 0.3303, 5e-5);
  ref::expectClose(w, want, 1e-6, "smallest case");

  // 1, 2 and 4 rounds, every option, chunks that cut rounds (L = 21) and one chunk for all slots.
  const int64_t L = 21, d = 6;
  const Mat qr = randomNormal(L, d, 12, "t.wrap.q"), v = randomNormal(L, 3, 12, "t.wrap.v");
  for (const int64_t rounds : {1, 2, 4})
    for (const int64_t b : {2, 4})
      for (const int64_t m : {1, 4, 5, 200}) {
        const Mat r = randomNormal(d, rounds * b / 2, 13, "t.wrap.r" + std::to_string(b));
        for (const int flags : {0, 1, 2, 3, 4, 5, 6, 7}) {
          LshOptions p;
          p.n_buckets = b;
          p.chunk = m;
          p.rounds = rounds;
          p.wrap = true;
          p.causal = flags & 1;
          p.across_buckets = flags & 2;
          p.duplicate_correction = flags & 4;
          const std::string what = "rounds " + std::to_string(rounds) + " b " + std::to_string(b) + " m " +
                                   std::to_string(m) + " flags " + std::to_string(flags);
          const ref::DMat ref_w = traxLoopLsh(qr, r, b, std::min(m, rounds * L), rounds, p.causal, p.across_buckets,
                                              p.duplicate_correction);
          const LshHead got = lshAttentionHead(qr, v, r, p, {});
          ref::expectClose(dense(got.weights), ref_w, 1e-5, "weights, " + what);
          ref::expectClose(got.output, ref::matmul(ref_w, ref::fromMat(v)), 1e-5, "output, " + what);
        }
      }
}

// Given q, k, v (--q/--k/--v) are hashed and attended as they are, per head: head h's
// weights are the loop reference on columns [h·d_head, (h+1)·d_head) of the given q.
TEST(Lsh, GivenQkvAreHashedAndAttendedAsTheyAre) {
  const int64_t L = 32, H = 2, dh = 8;
  const Mat q = randomNormal(L, H * dh, 7, "given.q"), k = randomNormal(L, H * dh, 7, "given.k"),
            v = randomNormal(L, H * dh, 7, "given.v");
  const Inputs in = makeFromMatrices(Mat(), q, k, v, H, 3);
  const Result r = ref::run("lsh", in, {{"n_buckets", "4"}, {"chunk", "4"}, {"rounds", "2"}});
  const Mat& rot = ref::recorded(r, "R");
  ASSERT_EQ(r.sparse.size(), static_cast<size_t>(H));
  for (int64_t h = 0; h < H; ++h) {
    const Mat qh = q.middleCols(h * dh, dh), vh = v.middleCols(h * dh, dh);
    const ref::DMat w = loopLsh(qh, rot, 4, 4, 2);
    ref::expectClose(dense(r.sparse[static_cast<size_t>(h)]), w, 1e-5, "head " + std::to_string(h));
    ref::expectClose(Mat(r.output.middleCols(h * dh, dh)), ref::matmul(w, ref::fromMat(vh)), 1e-5,
                     "output, head " + std::to_string(h));
  }
  EXPECT_EQ(ref::recorded(r, "q"), q);
  EXPECT_EQ(ref::recorded(r, "v"), v);
  EXPECT_EQ(ref::recorded(r, "k_separate"), k);  // the walkthrough's panels (a), (b)
  for (const char* seeded : {"x", "w_q", "w_k", "w_v"}) EXPECT_EQ(r.inputs.count(seeded), 0u) << seeded;
}

TEST(Lsh, MultiRoundWeightsSumToOnePerQuery) {
  const Mat q = randomNormal(300, 16, 6, "t.q"), v = randomNormal(300, 16, 6, "t.v");
  for (const bool correction : {true, false})
    for (const bool wrap : {false, true})
      for (const bool across : {false, true}) {
        LshOptions o;
        o.n_buckets = 8;
        o.chunk = 16;
        o.rounds = 4;
        o.duplicate_correction = correction;
        o.wrap = wrap;
        o.across_buckets = across;
        const LshHead h = lshAttentionHead(q, v, lshRotations(16, o, 7), o, {});
        for (int64_t i = 0; i < 300; ++i) {
          double sum = 0;
          for (int64_t e = h.weights.rowBegin(i); e < h.weights.rowEnd(i); ++e) {
            sum += h.weights.values[static_cast<size_t>(e)];
            EXPECT_LE(h.weights.indices[static_cast<size_t>(e)], i);  // causal
            if (e > h.weights.rowBegin(i)) {
              EXPECT_LT(h.weights.indices[static_cast<size_t>(e) - 1], h.weights.indices[static_cast<size_t>(e)]);
            }
          }
          ASSERT_NEAR(sum, 1.0, 1e-5) << "query " << i << " correction " << correction << " wrap " << wrap;
        }
        ref::expectClose(h.output, ref::matmul(ref::fromMat(dense(h.weights)), ref::fromMat(v)), 1e-4, "output");
      }
}

TEST(Lsh, DuplicateCorrectionChangesWeightsOnlyForRepeatedKeys) {
  const Mat q = randomNormal(64, 8, 8, "t.q"), v = randomNormal(64, 8, 8, "t.v");
  LshOptions o;
  o.n_buckets = 2;
  o.chunk = 8;
  o.rounds = 4;
  const Mat rot = lshRotations(8, o, 9);
  const LshHead a = lshAttentionHead(q, v, rot, o, {});
  o.duplicate_correction = false;
  const LshHead b = lshAttentionHead(q, v, rot, o, {});
  EXPECT_EQ(a.weights.indices, b.weights.indices);  // same keys
  EXPECT_GT(ref::maxAbsDiff(dense(a.weights), dense(b.weights)), 1e-3f);  // weighted differently
}

TEST(Lsh, ThreadCountDoesNotChangeTheResult) {
  const Inputs in = ref::gaussianInputs(10, 200, 200, 32, 2);
  auto runOn = [&](int threads) {
    const ThreadScope scope(threads);
    RunContext ctx;
    ctx.adapt_threads = false;  // exactly `threads`, however busy the machine is
    return ref::run("lsh", in, {{"n_buckets", "8"}, {"chunk", "16"}, {"rounds", "3"}}, ctx);
  };
  const Result a = runOn(2), b = runOn(1);
  ASSERT_EQ(a.threads, 2);
  ASSERT_EQ(b.threads, 1);
  for (size_t h = 0; h < a.sparse.size(); ++h) EXPECT_EQ(a.sparse[h].values, b.sparse[h].values);
  EXPECT_EQ(a.output, b.output);
}

TEST(Lsh, CompareContractAndWalkthroughStages) {
  const Inputs in = ref::gaussianInputs(11, 64, 64, 16, 2);
  const Result r = ref::run("lsh", in, {{"n_buckets", "4"}, {"chunk", "8"}, {"rounds", "2"}});
  EXPECT_TRUE(canCompare(r));
  const Comparison c = compareWithFull(r);
  EXPECT_GT(c.mass_kept_mean, 0.0);
  EXPECT_LT(c.mass_kept_mean, 1.0);
  ASSERT_EQ(r.stages.size(), 4u);
  for (const Stage& s : r.stages) {
    EXPECT_EQ(s.matrix.rows, 64);
    EXPECT_EQ(s.row_categories.size(), 64u);
    EXPECT_EQ(s.row_labels.size(), 64u);
  }
  // (c) and (d) rows are sorted by bucket; (d) has a divider every chunk.
  EXPECT_TRUE(std::is_sorted(r.stages[2].row_categories.begin(), r.stages[2].row_categories.end()));
  EXPECT_EQ(r.stages[3].row_dividers, (std::vector<int64_t>{8, 16, 24, 32, 40, 48, 56}));
  // (d) is block-banded in sorted order: row t sees only columns of its chunk and the one before.
  const SparseRows& d = r.stages[3].matrix;
  for (int64_t t = 0; t < 64; ++t)
    for (int64_t e = d.rowBegin(t); e < d.rowEnd(t); ++e) EXPECT_GE(d.indices[static_cast<size_t>(e)] / 8, t / 8 - 1);
  // Points: [n, 3] with sector rays for b = 2 … 8; the top-k share is 1 with one bucket.
  for (const char* name : {"angular_b2", "angular_b4", "angular_b6", "angular_b8"}) {
    const Extra* e = r.findExtra(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->value.shape, (std::vector<int64_t>{64, 3}));
    EXPECT_FALSE(e->markers.empty());
  }
  // With wrap, (d) is the round's own softmax in the run, cut where the one sequence of
  // rounds·L slots is: chunks of 24 over 128 slots begin at round 1's sorted 72 − 64, 96 − 64, 120 − 64.
  const Result wr = ref::run("lsh", in, {{"n_buckets", "4"}, {"chunk", "24"}, {"rounds", "2"}, {"round", "1"}, {"wrap", "true"}});
  const Stage& wd = wr.stages[3];
  EXPECT_EQ(wd.row_dividers, (std::vector<int64_t>{8, 32, 56}));
  for (int64_t t = 0; t < 64; ++t) {
    double sum = 0;
    for (int64_t e = wd.matrix.rowBegin(t); e < wd.matrix.rowEnd(t); ++e) sum += wd.matrix.values[static_cast<size_t>(e)];
    if (wd.matrix.rowEnd(t) > wd.matrix.rowBegin(t)) {
      EXPECT_NEAR(sum, 1.0, 1e-5) << "sorted row " << t;
    }
  }
  const Extra* share = r.findExtra("topk_share");
  ASSERT_NE(share, nullptr);
  EXPECT_EQ(share->value.data[0], 1.0f);
  float total = 0;
  for (const float s : r.findExtra("bucket_sizes")->value.data) total += s;
  EXPECT_EQ(total, 64.0f);
}

// [SECTION] Parameters

TEST(Lsh, BadParametersGetClearErrors) {
  const Inputs in = ref::gaussianInputs(1, 16, 16, 16, 2);
  expectInputError([&] { ref::run("lsh", in, {{"n_buckets", "3"}}); }, {"n_buckets", "even"});
  expectInputError([&] { ref::run("lsh", in, {{"n_buckets", "1"}}); }, {"n_buckets"});
  expectInputError([&] { ref::run("lsh", in, {{"chunk", "0"}}); }, {"chunk"});
  expectInputError([&] { ref::run("lsh", in, {{"rounds", "0"}}); }, {"rounds"});
  LshOptions o;
  o.chunk = -1;
  expectInputError([&] { validateLshOptions(o); }, {"chunk", "≥ 1", "-1"});
  o.chunk = 4;
  o.rounds = 0;
  expectInputError([&] { validateLshOptions(o); }, {"rounds", "at least 1"});
  ref::TempPath file("lsh_bad_R.npy");
  writeNpy(file.path, Array::fromMat(Mat::Zero(3, 3)));
  expectInputError([&] { ref::run("lsh", in, {{"R", file.path.string()}}); }, {"(R)", "[8, 4]", "[3, 3]"});
}

// [SECTION] Reversible layers

TEST(Reversible, InversionErrorStaysWithinFloat32RoundingOver12Layers) {
  const Inputs in = ref::gaussianInputs(12, 64, 64, 32, 4);
  const Result r = ref::run("reversible", in, {{"layers", "12"}, {"n_buckets", "4"}, {"chunk", "8"}});
  const Extra* err = r.findExtra("reconstruction_error");
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->value.shape, (std::vector<int64_t>{2, 13}));
  for (const float e : err->value.data) EXPECT_LT(e, 1e-5f);
  EXPECT_GT(*std::max_element(err->value.data.begin(), err->value.data.end()), 0.0f);  // real float32 rounding
  // A normal stack keeps N layers of activations; the reversible one a constant.
  const Extra* mem = r.findExtra("activation_memory");
  ASSERT_NE(mem, nullptr);
  EXPECT_NEAR(mem->value.data[12], 12 * mem->value.data[1], 1e-3 * mem->value.data[12]);
  EXPECT_EQ(mem->value.data[13 + 12], mem->value.data[13 + 1]);
  EXPECT_LT(mem->value.data[13 + 12], mem->value.data[12]);
}

TEST(Reversible, InverseUndoesForwardWithPlainFunctions) {
  const Mat x1 = randomNormal(20, 6, 1, "t.x1"), x2 = randomNormal(20, 6, 1, "t.x2");
  const FeedForward f = makeFeedForward(6, 24, 1, "t.f"), g = makeFeedForward(6, 24, 1, "t.g");
  const ReversibleBlock b{[&f](const Mat& m) { return f(m); }, [&g](const Mat& m) { return g(m, 3); }};
  Mat y1, y2, a1, a2;
  reversibleForward(b, x1, x2, y1, y2);
  reversibleInverse(b, y1, y2, a1, a2);
  EXPECT_LT(ref::maxAbsDiff(a1, x1), 1e-5f);
  EXPECT_LT(ref::maxAbsDiff(a2, x2), 1e-5f);
}

TEST(Reversible, ChunkedFeedForwardIsIdenticalWithASmallerPeak) {
  const FeedForward ff = makeFeedForward(16, 64, 3, "t.ff");
  const Mat y = randomNormal(100, 16, 3, "t.y");
  const Mat one = ff(y, 1);
  // Plain-loop reference of max(0, y W₁ + b₁) W₂ + b₂.
  ref::DMat want(100, 16);
  for (int64_t i = 0; i < 100; ++i)
    for (int64_t o = 0; o < 16; ++o) {
      double s = ff.b2(o);
      for (int64_t h = 0; h < 64; ++h) {
        double a = ff.b1(h);
        for (int64_t t = 0; t < 16; ++t) a += static_cast<double>(y(i, t)) * ff.w1(t, h);
        s += std::max(0.0, a) * ff.w2(h, o);
      }
      want(i, o) = s;
    }
  ref::expectClose(one, want, 1e-4, "feed-forward");
  for (const int64_t c : {2, 4, 7, 100}) {
    EXPECT_LE(ref::maxAbsDiff(ff(y, c), one), 1e-6f) << c << " chunks";
    EXPECT_EQ(ff.hiddenPeakFloats(100, c), (100 + c - 1) / c * 64);
  }
  const Result r = ref::run("reversible", ref::gaussianInputs(2, 32, 32, 16, 2), {{"layers", "2"}, {"ff_chunks", "4"}});
  EXPECT_LE(r.findExtra("ff_chunked_difference")->value.data[0], 1e-6f);
  EXPECT_EQ(r.findExtra("ff_peak_bytes_1")->value.data[0], 4 * r.findExtra("ff_peak_bytes_c")->value.data[0]);
}

}  // namespace
}  // namespace attn
