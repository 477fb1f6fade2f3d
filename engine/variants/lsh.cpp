// LSH attention (Kitaev et al. 2020, "Reformer: The Efficient Transformer",
// §2): shared-QK attention restricted to hash buckets, sorted and chunked;
// the compute lives in engine/lsh.h. Besides the weights this result carries
// the paper's Figure 2 as walkthrough stages for one round (head 0), the
// angular-LSH picture for b = 2 … 8, bucket sizes, the tokens' buckets, and
// how much of each query's true top-k attention LSH finds as b and the
// number of rounds vary.
//
// Heads: Q = X W^q, V = X W^v (d_head = d/H); no W^k: k_j = q_j/‖q_j‖.
// One R [d_head, rounds·b/2] serves every head (inputs/R.npy; --set R=FILE
// loads one). Only the walkthrough's "normal attention" panels (a), (b)
// use separate keys K = X W^k, as the figure does before shared-QK.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/lsh.h"
#include "engine/multi_head.h"
#include "engine/npy.h"
#include "engine/parallel.h"
#include "engine/registry.h"
#include "engine/sparse_attention.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace attn {

namespace {

// Panels (a)–(c) are quadratic in L: drawn while one head's L² fits the dense-view limit (L ≤ 4,096)
// and panel (a)'s L²/2 entries (index, weight, set bit, gathered twice: ~14 bytes) a quarter of free memory.
bool quadraticPanelsFit(int64_t L) {
  return denseFits(1, L, L) && 7.0 * static_cast<double>(L) * static_cast<double>(L) < 0.25 * static_cast<double>(availableMemoryBytes());
}

// k_j = q_j / ‖q_j‖ per row.
Mat normalizedRows(const Mat& q) {
  Mat k = q;
  for (int64_t j = 0; j < k.rows(); ++j)
    if (const float n = k.row(j).norm(); n > 0) k.row(j) /= n;
  return k;
}

std::vector<std::string> bucketNames(int64_t b) {
  std::vector<std::string> out;
  for (int64_t c = 0; c < b; ++c) out.push_back("bucket " + std::to_string(c));
  return out;
}

// [SECTION] Walkthrough stages (Figure 2)

// Softmax of q_i·k_j/√d over the keys `rule` gives each row, in original order.
SparseRows attendPattern(const Mat& q, const Mat& k, const PatternRule& rule, const RunContext& ctx) {
  SparseRows s = buildPattern("lsh", q.rows(), k.rows(), rule, ctx);
  s.values.resize(s.indices.size());
  s.sets.clear();
  Mat out(q.rows(), k.cols());
  constexpr int64_t kRows = 128;
  parallelFor((q.rows() + kRows - 1) / kRows, ctx, [&](int64_t b) {
    attendSparseRows(q, k, k, 1.0f / std::sqrt(static_cast<float>(q.cols())), s, out, b * kRows, std::min(q.rows(), (b + 1) * kRows));
  });
  return s;
}

// `s` with row t = old row row_order[t] and column c → col_rank[c] (re-sorted).
SparseRows permuted(const SparseRows& s, const std::vector<int32_t>& row_order, const std::vector<int32_t>& col_rank) {
  SparseRows out;
  out.rows = s.rows;
  out.cols = s.cols;
  out.indptr.assign(static_cast<size_t>(s.rows) + 1, 0);
  out.indices.reserve(s.indices.size());
  out.values.reserve(s.values.size());
  std::vector<std::pair<int32_t, float>> row;
  for (int64_t t = 0; t < s.rows; ++t) {
    const int64_t i = row_order[static_cast<size_t>(t)];
    row.clear();
    for (int64_t e = s.rowBegin(i); e < s.rowEnd(i); ++e)
      row.emplace_back(col_rank[static_cast<size_t>(s.indices[static_cast<size_t>(e)])], s.values[static_cast<size_t>(e)]);
    std::sort(row.begin(), row.end());
    for (const auto& [c, w] : row) {
      out.indices.push_back(c);
      out.values.push_back(w);
    }
    out.indptr[static_cast<size_t>(t) + 1] = static_cast<int64_t>(out.indices.size());
  }
  return out;
}

std::vector<int32_t> rankOf(const std::vector<int32_t>& order) {
  std::vector<int32_t> rank(order.size());
  for (size_t s = 0; s < order.size(); ++s) rank[static_cast<size_t>(order[s])] = static_cast<int32_t>(s);
  return rank;
}

// Positions of each bucket, ascending: groups[b] = {j : h[j] = b}.
std::vector<std::vector<int32_t>> positionsByBucket(const std::vector<int32_t>& h, int64_t n_buckets) {
  std::vector<std::vector<int32_t>> groups(static_cast<size_t>(n_buckets));
  for (size_t j = 0; j < h.size(); ++j) groups[static_cast<size_t>(h[j])].push_back(static_cast<int32_t>(j));
  return groups;
}

template <class T>
std::vector<T> permutedList(const std::vector<T>& v, const std::vector<int32_t>& order) {
  std::vector<T> out;
  for (const int32_t i : order) out.push_back(v[static_cast<size_t>(i)]);
  return out;
}

// Figure 2 for round r of head 0: q, k = separate keys (panels a, b), kn = shared-QK keys;
// chunked = round r's own softmax in the run (LshHead::round_weights).
std::vector<Stage> walkthrough(const Mat& q, const Mat& k, const SparseRows& chunked, const MatRef& r_round,
                               const LshOptions& o, const std::vector<std::string>& tokens, int64_t round,
                               const RunContext& ctx) {
  const int64_t L = q.rows();
  const Mat kn = normalizedRows(q);
  const std::vector<int32_t> hq = lshHash(q, r_round), hk = lshHash(k, r_round);
  const std::vector<int32_t> sq = sortByBucket(hq, o.n_buckets), sk = sortByBucket(hk, o.n_buckets);
  const std::string rr = "round " + std::to_string(round);
  std::vector<Stage> out;
  auto keysUpTo = [&o](int64_t i, int64_t L_) { return o.causal ? i : L_ - 1; };
  if (quadraticPanelsFit(L)) {
    // (a) normal attention: every key j ≤ i, separate K.
    Stage a;
    a.title = "(a) normal attention";
    a.caption = "softmax(q_i·k_j/√d) over all keys j ≤ i, original order";
    a.matrix = attendPattern(q, k, [&](int64_t i, std::vector<int32_t>& keys, std::vector<uint8_t>& sets) {
      for (int64_t j = 0; j <= keysUpTo(i, L); ++j) {
        keys.push_back(static_cast<int32_t>(j));
        sets.push_back(1);
      }
    }, ctx);
    a.row_labels = a.col_labels = tokens;
    a.row_categories = hq;
    a.col_categories = hk;
    a.category_axis = "bucket";
    out.push_back(std::move(a));

    // (b) queries and keys sorted by their own buckets: rectangles of uneven size.
    const std::vector<std::vector<int32_t>> keys_of = positionsByBucket(hk, o.n_buckets);
    Stage b;
    b.title = "(b) Q and K sorted by bucket";
    b.caption = "h(q) and h(k) with separate K, " + rr + ": attention only inside a bucket, buckets of uneven size";
    b.matrix = permuted(attendPattern(q, k, [&](int64_t i, std::vector<int32_t>& keys, std::vector<uint8_t>& sets) {
      for (const int32_t j : keys_of[static_cast<size_t>(hq[static_cast<size_t>(i)])]) {
        if (j > keysUpTo(i, L)) break;
        keys.push_back(j);
        sets.push_back(1);
      }
    }, ctx), sq, rankOf(sk));
    b.row_labels = permutedList(tokens, sq);
    b.col_labels = permutedList(tokens, sk);
    b.row_categories = permutedList(hq, sq);
    b.col_categories = permutedList(hk, sk);
    b.category_axis = "bucket";
    out.push_back(std::move(b));

    // (c) shared-QK: k_j = q_j/‖q_j‖ has q_j's bucket, so the blocks are square.
    const std::vector<std::vector<int32_t>> same = positionsByBucket(hq, o.n_buckets);
    Stage c;
    c.title = "(c) shared-QK: equal buckets";
    c.caption = "k_j = q_j/‖q_j‖, sorted by (bucket, position), " + rr + "; self only without another key";
    c.matrix = permuted(attendPattern(q, kn, [&](int64_t i, std::vector<int32_t>& keys, std::vector<uint8_t>& sets) {
      for (const int32_t j : same[static_cast<size_t>(hq[static_cast<size_t>(i)])]) {
        if (j > keysUpTo(i, L)) break;
        if (j != i) keys.push_back(j);
      }
      if (keys.empty()) keys.push_back(static_cast<int32_t>(i));
      sets.assign(keys.size(), 1);
    }, ctx), sq, rankOf(sq));
    c.row_labels = c.col_labels = permutedList(tokens, sq);
    c.row_categories = c.col_categories = permutedList(hq, sq);
    c.category_axis = "bucket";
    out.push_back(std::move(c));
  }

  // (d) chunked: this round's softmax over its windows in the run (before the rounds are combined), in sorted order.
  Stage d;
  d.title = "(d) chunked";
  d.caption = o.wrap && o.rounds > 1
                  ? "all rounds in one sorted sequence, chunks of m = " + std::to_string(std::min(o.chunk, o.rounds * L)) +
                        " attend to themselves and the chunk before (" + rr + "'s first to round " +
                        std::to_string((round + o.rounds - 1) % o.rounds) + "'s last slots), " + rr + "'s softmax"
                  : "chunks of m = " + std::to_string(std::min(o.chunk, L)) + " attend to themselves and the previous chunk" +
                        (o.wrap ? " (the first to the last)" : "") + ", " + rr + "'s softmax";
  d.matrix = permuted(chunked, sq, rankOf(sq));
  d.row_labels = d.col_labels = permutedList(tokens, sq);
  d.row_categories = d.col_categories = permutedList(hq, sq);
  d.category_axis = "bucket";
  d.row_dividers = d.col_dividers = lshChunkStarts(o, L, round);
  out.push_back(std::move(d));
  return out;
}

// [SECTION] Angular LSH picture

// q [L, d] on its two leading principal axes (uncentred: the hash is angular,
// so the plane goes through the origin), coloured by bucket under R [d, b/2];
// the plane's bucket sectors and R's directions ±r_c projected on it.
Extra angularPicture(const Mat& q, const MatRef& r, int64_t b) {
  const int64_t L = q.rows(), d = q.cols(), half = b / 2;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXf> eig(Eigen::MatrixXf(q.transpose() * q));  // QᵀQ  [d, d]
  const Eigen::VectorXf p1 = eig.eigenvectors().col(d - 1), p2 = d > 1 ? Eigen::VectorXf(eig.eigenvectors().col(d - 2)) : Eigen::VectorXf::Zero(d);
  const std::vector<int32_t> buckets = lshHash(q, r);
  constexpr int64_t kMaxPoints = 1024;
  const int64_t step = (L + kMaxPoints - 1) / kMaxPoints;
  Mat pts((L + step - 1) / step, 3);  // x, y, bucket
  float radius = 0;
  for (int64_t i = 0, n = 0; i < L; i += step, ++n) {
    pts(n, 0) = q.row(i).dot(p1);
    pts(n, 1) = q.row(i).dot(p2);
    pts(n, 2) = static_cast<float>(buckets[static_cast<size_t>(i)]);
    radius = std::max(radius, std::hypot(pts(n, 0), pts(n, 1)));
  }
  Extra e;
  e.name = "angular_b" + std::to_string(b);
  e.label = "angular LSH, b = " + std::to_string(b) + ": q (head 0) on its top-2 principal axes";
  e.kind = ExtraKind::Points;
  e.value = Array::fromMat(pts);
  e.row_axis = "principal axis 2";
  e.col_axis = "principal axis 1";
  e.categories = bucketNames(b);
  // Sectors: the bucket of direction u(θ) = cos θ p₁ + sin θ p₂, sampled every 0.1°.
  constexpr int kSteps = 3600;
  Mat dirs(kSteps, d);
  for (int t = 0; t < kSteps; ++t) {
    const double th = 2 * std::numbers::pi * t / kSteps;
    dirs.row(t) = (static_cast<float>(std::cos(th)) * p1 + static_cast<float>(std::sin(th)) * p2).transpose();
  }
  const std::vector<int32_t> sector = lshHash(dirs, r);
  for (int t = 0; t < kSteps; ++t)
    if (sector[static_cast<size_t>(t)] != sector[static_cast<size_t>((t + kSteps - 1) % kSteps)])
      e.markers.push_back({.x = 2 * std::numbers::pi * (t - 0.5) / kSteps, .label = "", .series = sector[static_cast<size_t>(t)]});
  if (e.markers.empty()) e.markers.push_back({.x = 0, .label = "", .series = sector[0]});
  // ±r_c projected, the longest at 0.9 of the farthest point.
  Mat arrows(half, 2);
  for (int64_t c = 0; c < half; ++c) arrows.row(c) << r.col(c).dot(p1), r.col(c).dot(p2);
  const float longest = std::max(1e-12f, arrows.rowwise().norm().maxCoeff());
  const float s = (radius > 0 ? radius : 1.0f) * 0.9f / longest;
  for (int64_t c = 0; c < half; ++c) {
    e.arrows.push_back({arrows(c, 0) * s, arrows(c, 1) * s, "+r" + std::to_string(c), static_cast<int>(c)});
    e.arrows.push_back({-arrows(c, 0) * s, -arrows(c, 1) * s, "−r" + std::to_string(c), static_cast<int>(c + half)});
  }
  return e;
}

// [SECTION] Quality: true top-k keys that share the query's bucket

// Share of each query's top-k keys of full attention (shared-QK, j < i) that
// share its bucket in at least one of n rounds, for b = 1, 2, 4 … 64 and
// n = 1, 2, 4, 8: [4, 7], x = log₂ b. Up to 256 queries, evenly spaced.
Extra topKShare(const Mat& q, int64_t top_k, int64_t b_run, uint64_t seed, const RunContext& ctx) {
  const int64_t L = q.rows(), d = q.cols();
  const Mat kn = normalizedRows(q);
  std::vector<int64_t> queries;
  const int64_t first = std::min(top_k, L - 1), n_q = std::min<int64_t>(256, L - first);
  for (int64_t t = 0; t < n_q; ++t) queries.push_back(first + t * (L - first) / std::max<int64_t>(n_q, 1));
  // top[t]: the top-k keys j < i of query queries[t] by q_i·k_j.
  std::vector<std::vector<int32_t>> top(queries.size());
  for (size_t t = 0; t < queries.size(); ++t) {
    const int64_t i = queries[t];
    if (i == 0) continue;
    const Eigen::VectorXf s = kn.topRows(i) * q.row(i).transpose();  // [i]
    std::vector<int32_t> idx(static_cast<size_t>(i));
    for (int64_t j = 0; j < i; ++j) idx[static_cast<size_t>(j)] = static_cast<int32_t>(j);
    const auto kk = static_cast<size_t>(std::min(top_k, i));
    std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(kk), idx.end(),
                      [&s](int32_t a, int32_t b) { return s(a) > s(b); });
    top[t].assign(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(kk));
  }
  const int rounds_log[] = {0, 1, 2, 3};
  constexpr int kBuckets = 7;  // b = 2^x, x = 0 … 6
  Mat share(4, kBuckets);
  for (int x = 0; x < kBuckets; ++x) {
    const int64_t b = int64_t{1} << x;
    std::vector<std::vector<int32_t>> hashes;
    for (int r = 0; r < 8; ++r)
      hashes.push_back(b == 1 ? std::vector<int32_t>(static_cast<size_t>(L), 0)
                              : lshHash(q, randomNormal(d, b / 2, seed, "lsh.quality.b" + std::to_string(b) + ".r" + std::to_string(r))));
    for (const int rl : rounds_log) {
      const int n = 1 << rl;
      double found = 0, total = 0;
      for (size_t t = 0; t < queries.size(); ++t)
        for (const int32_t j : top[t]) {
          bool hit = false;
          for (int r = 0; r < n && !hit; ++r) hit = hashes[static_cast<size_t>(r)][static_cast<size_t>(j)] == hashes[static_cast<size_t>(r)][static_cast<size_t>(queries[t])];
          found += hit;
          total += 1;
        }
      share(rl, x) = total > 0 ? static_cast<float>(found / total) : 1.0f;
    }
    ctx.check();
  }
  Extra e;
  e.name = "topk_share";
  e.label = "share of each query's true top-" + std::to_string(top_k) + " keys in its bucket (any round)";
  e.kind = ExtraKind::Curves;
  e.value = Array::fromMat(share);
  e.row_axis = "rounds";
  e.categories = {"1 round", "2 rounds", "4 rounds", "8 rounds"};
  e.col_axis = "log₂ n_buckets (b = 1, 2, 4 … 64)";
  e.markers.push_back({.x = std::log2(static_cast<double>(b_run)), .label = "b of this run", .series = -1});
  return e;
}

// [SECTION] The variant

Result lsh(const Inputs& in, const Params& p, const RunContext& ctx) {
  const LshOptions o = lshOptionsOf(p);
  const Mat& x = in.query();  // [L, d]
  const int64_t L = x.rows(), d = x.cols(), H = in.heads;
  const int64_t dh = headDim(d, H), half = o.n_buckets / 2;
  const int64_t round = std::min(p.getInt("round"), o.rounds - 1);

  // Q = X W^q, V = X W^v (and K = X W^k for the walkthrough's panels a, b)     [L, d]
  // (given projections: Q, V and the panels' K as they are)
  Result r;
  Mat q, v, k_sep;
  if (in.projected) {
    q = in.query();
    v = in.value();
    k_sep = in.key();
    r.inputs["k_separate"] = k_sep;  // hashing and attention use k = q/‖q‖ (shared-QK): the given k only in panels a, b
  } else {
    const MultiHeadWeights w = makeMultiHeadWeights(d, H, in.seed);
    q = x * w.w_q;
    v = x * w.w_v;
    k_sep = x * w.w_k;
    r.inputs["x"] = x;
    r.inputs["w_q"] = w.w_q;
    r.inputs["w_v"] = w.w_v;
    r.inputs["w_k"] = w.w_k;
  }
  // R [d_head, rounds·b/2]: seeded, or the given file.
  Mat rot;
  if (const std::string& path = p.getString("R"); !path.empty()) {
    const Array a = readNpy(path, "R");
    if (a.rank() != 2 || a.shape[0] != dh || a.shape[1] != o.rounds * half)
      throw InputError(path + " (R): expected shape [d_head, rounds·b/2] = [" + std::to_string(dh) + ", " +
                       std::to_string(o.rounds * half) + "], got " + a.shapeString());
    checkInputMagnitude(a.data, path + " (R)");
    rot = a.toMat(path + " (R)");
  } else {
    rot = lshRotations(dh, o, in.seed);
  }
  ctx.progress(0.02f);

  // Per head: LSH attention over the head's columns.
  r.q_tokens = r.k_tokens = in.tokens;
  Mat out(L, v.cols() / H * H), k_norm(L, dh * H);
  const int64_t dv = v.cols() / H;
  std::vector<std::vector<int32_t>> buckets0;  // head 0's bucket of each position, per round
  SparseRows chunked0;                         // head 0's round `round` alone (walkthrough panel d)
  double nnz = 0;
  for (int64_t h = 0; h < H; ++h) {
    RunContext part;
    part.cancel = ctx.cancel;
    LshHead head = lshAttentionHead(q.middleCols(h * dh, dh), v.middleCols(h * dv, dv), rot, o, part, h == 0 ? round : -1);
    out.middleCols(h * dv, dv) = head.output;
    k_norm.middleCols(h * dh, dh) = normalizedRows(q.middleCols(h * dh, dh));
    if (h == 0) {
      buckets0 = head.buckets;
      chunked0 = std::move(head.round_weights);
    }
    r.flops += head.flops;
    nnz += static_cast<double>(head.weights.nnz());
    r.sparse.push_back(std::move(head.weights));
    ctx.progress(0.05f + 0.6f * static_cast<float>(h + 1) / static_cast<float>(H));
  }
  r.output = std::move(out);
  if (!in.projected) r.flops += 2.0 * 2.0 * static_cast<double>(L) * d * d;  // Q and V projections
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  if (denseViewsFit(ctx, H, L, L)) {
    for (int64_t h = 0; h < H; ++h) {
      r.weights.push_back(toDenseValues(r.sparse[static_cast<size_t>(h)]));
      r.scores.emplace_back(L, L);
      r.scores.back().noalias() = (q.middleCols(h * dh, dh) * scale) * k_norm.middleCols(h * dh, dh).transpose();
    }
  }
  r.weights_label = "LSH attention weight";
  r.scores_label = "q_i·k_j/√d_head (k = q/‖q‖)";

  // Head 0, the chosen round: walkthrough, buckets, pictures, quality.
  const Mat q0 = q.leftCols(dh), k0 = k_sep.leftCols(dh);
  const auto r_round = rot.middleCols(round * half, half);
  r.stages = walkthrough(q0, k0, chunked0, r_round, o, in.tokens, round, ctx);
  ctx.progress(0.8f);
  const std::vector<int32_t>& shown = buckets0[static_cast<size_t>(round)];
  std::vector<float> bucket_of(shown.begin(), shown.end()), sizes(static_cast<size_t>(o.n_buckets), 0.0f);
  for (const int32_t b : shown) sizes[static_cast<size_t>(b)] += 1;
  r.extras.push_back({.name = "round_buckets", .label = "bucket of each token (head 0, round " + std::to_string(round) + ")",
                      .kind = ExtraKind::TokenCategories, .value = Array::fromVector(bucket_of),
                      .categories = bucketNames(o.n_buckets)});
  // Every round's buckets [rounds, L] to take away; the views play them one round at a time.
  Array all_rounds{{o.rounds, L}, {}};
  for (const std::vector<int32_t>& b : buckets0) all_rounds.data.insert(all_rounds.data.end(), b.begin(), b.end());
  r.extras.push_back({.name = "buckets", .label = "bucket of each position in every round (head 0)",
                      .kind = ExtraKind::Data, .value = std::move(all_rounds), .row_axis = "round",
                      .col_axis = "position", .categories = bucketNames(o.n_buckets), .integer = true});
  r.extras.push_back({.name = "bucket_sizes", .label = "bucket sizes (head 0, round " + std::to_string(round) + ")",
                      .kind = ExtraKind::CategoryValues, .value = Array::fromVector(sizes),
                      .row_axis = "bucket", .col_axis = "tokens", .categories = bucketNames(o.n_buckets)});
  for (int64_t b = 2; b <= 8; b += 2)
    r.extras.push_back(angularPicture(q0, b == o.n_buckets ? Mat(r_round) : randomNormal(dh, b / 2, in.seed, "lsh.R.picture.b" + std::to_string(b)), b));
  r.extras.push_back(topKShare(q0, p.getInt("top_k"), o.n_buckets, in.seed, ctx));
  r.extras.push_back({.name = "keys_per_query", .label = "keys per query (mean over heads)", .kind = ExtraKind::Scalar,
                      .value = Array::fromVector({static_cast<float>(nnz / std::max<double>(1.0, static_cast<double>(H * L)))})});

  r.inputs["q"] = q;
  r.inputs["k"] = k_norm;
  r.inputs["v"] = v;
  r.inputs["R"] = rot;
  r.timeline.param = "round";  // the hash rounds, one after the other
  r.timeline.count = o.rounds;
  for (int64_t t = 0; t < o.rounds; ++t) r.timeline.labels.push_back("round " + std::to_string(t + 1) + " of " + std::to_string(o.rounds));
  return r;
}

}  // namespace

VariantInfo makeLshVariant() {
  VariantInfo v;
  v.name = "lsh";
  v.family = "reformer";
  v.title = "LSH attention (Reformer)";
  v.summary = "h(x) = argmax([xR; −xR]); k_j = q_j/‖q_j‖; sort by (bucket, position); chunks of m attend to "
              "themselves and the previous chunk within the bucket; rounds combined by log-sum-exp";
  v.citation = "Kitaev et al. 2020";
  v.input = InputKind::SelfAttention;
  v.given_qkv = GivenQkv::Heads;
  v.params = lshParamSpecs();
  v.params.insert(v.params.end(), {
      {.key = "round", .symbol = "r", .type = ParamType::Int,
       .help = "The round the walkthrough, bucket strip and histogram show (clamped to rounds − 1)", .min = 0,
       .max = 15, .def = int64_t{0}},
      {.key = "top_k", .symbol = "k", .type = ParamType::Int,
       .help = "k of the quality curve: share of each query's true top-k keys that share its bucket", .min = 1,
       .max = 256, .def = int64_t{4}},
      {.key = "R", .symbol = "R", .type = ParamType::File,
       .help = "Random rotations as .npy [d_head, rounds·b/2] (round r in columns r·b/2 …); empty: drawn from the seed",
       .def = std::string(), .file_shape = "[d_head, rounds·b/2]"},
  });
  v.views = {"walkthrough", "heatmap", "heads", "extras", "compare"};
  v.run = lsh;
  return v;
}

}  // namespace attn
