#include "engine/lsh.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

// [SECTION] LSH attention

void validateLshOptions(const LshOptions& o) {
  if (o.n_buckets < 2 || o.n_buckets % 2 != 0)
    throw InputError("parameter 'n_buckets': expected an even number ≥ 2 (h(x) = argmax([xR; −xR]) has 2·(b/2) "
                     "buckets), got " + std::to_string(o.n_buckets));
  if (o.chunk <= 0) throw InputError("parameter 'chunk': expected a chunk length m ≥ 1, got " + std::to_string(o.chunk));
  if (o.rounds < 1) throw InputError("parameter 'rounds': expected at least 1 hash round, got " + std::to_string(o.rounds));
}

std::vector<ParamSpec> lshParamSpecs() {
  return {
      {.key = "n_buckets", .symbol = "b", .type = ParamType::Int,
       .help = "Number of hash buckets b (even): R is [d_head, b/2]", .min = 2, .max = 4096, .log_scale = true,
       .def = int64_t{4}},
      {.key = "chunk", .symbol = "m", .type = ParamType::Int,
       .help = "Chunk length m of the sorted sequence; each chunk attends to itself and the previous chunk", .min = 1,
       .max = 65536, .log_scale = true, .def = int64_t{4}},
      {.key = "rounds", .symbol = "n_rounds", .type = ParamType::Int,
       .help = "Hash rounds, each with its own R; combined with their log-sum-exp weights", .min = 1, .max = 16,
       .def = int64_t{2}},
      {.key = "causal", .symbol = "causal", .type = ParamType::Bool,
       .help = "Decoder mask by original position: query i sees keys j ≤ i only", .def = true},
      {.key = "across_buckets", .symbol = "across", .type = ParamType::Bool,
       .help = "trax reference: attend to every key of the chunk window, not only the query's bucket", .def = false},
      {.key = "duplicate_correction", .symbol = "−ln N_ij", .type = ParamType::Bool,
       .help = "Divide a key found in N rounds by N (the paper); off: trax without the correction, counted N times",
       .def = true},
      {.key = "wrap", .symbol = "wrap", .type = ParamType::Bool,
       .help = "trax reference: the first chunk looks back at the last chunk (look-one-back with wrap-around)",
       .def = false},
  };
}

LshOptions lshOptionsOf(const Params& p) {
  LshOptions o;
  o.n_buckets = p.getInt("n_buckets");
  o.chunk = p.getInt("chunk");
  o.rounds = p.getInt("rounds");
  o.causal = p.getBool("causal");
  o.across_buckets = p.getBool("across_buckets");
  o.duplicate_correction = p.getBool("duplicate_correction");
  o.wrap = p.getBool("wrap");
  validateLshOptions(o);
  return o;
}

Mat lshRotations(int64_t d_head, const LshOptions& o, uint64_t seed) {
  return randomNormal(d_head, o.rounds * (o.n_buckets / 2), seed, "lsh.R");
}

std::vector<int32_t> lshHash(const MatRef& x, const MatRef& r) {
  const int64_t half = r.cols();
  const Mat xr = x * r;  // x R   [L, b/2]
  std::vector<int32_t> out(static_cast<size_t>(x.rows()));
  for (int64_t i = 0; i < x.rows(); ++i) {
    // argmax over [xR; −xR]: bucket c < b/2 is +xR_c, bucket b/2 + c is −xR_c.
    int32_t best = 0;
    float best_v = -std::numeric_limits<float>::infinity();
    for (int64_t c = 0; c < 2 * half; ++c) {
      const float val = c < half ? xr(i, c) : -xr(i, c - half);
      if (val > best_v) {
        best_v = val;
        best = static_cast<int32_t>(c);
      }
    }
    out[static_cast<size_t>(i)] = best;
  }
  return out;
}

std::vector<int32_t> sortByBucket(const std::vector<int32_t>& buckets, int64_t n_buckets) {
  // Counting sort: stable, so equal buckets keep position order.
  std::vector<int64_t> start(static_cast<size_t>(n_buckets) + 1, 0);
  for (const int32_t b : buckets) ++start[static_cast<size_t>(b) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<int32_t> order(buckets.size());
  for (size_t i = 0; i < buckets.size(); ++i) order[static_cast<size_t>(start[static_cast<size_t>(buckets[i])]++)] = static_cast<int32_t>(i);
  return order;
}

namespace {

// A logit that becomes a CSR entry: masked ones are −∞; anything else not
// finite (which finite inputs within kMaxInputMagnitude never give) is left out too.
bool keptLogit(float l) { return std::isfinite(l); }


// The chunk structure of one head: who may attend to whom in each round.
struct LshLayout {
  const LshOptions& o;
  int64_t length, chunk, chunks;
  const std::vector<std::vector<int32_t>>& buckets;
  const std::vector<std::vector<int32_t>>& order;
  std::vector<std::vector<int32_t>> where;  // [rounds][L]: sorted index of each position (σ_r⁻¹)
  std::vector<uint8_t> self_only;           // [L]: query i has no key but itself in any round

  // The chunk a chunk looks back at; −1: none.
  int64_t previous(int64_t c) const {
    if (chunks == 1) return -1;
    if (c > 0) return c - 1;
    return o.wrap ? chunks - 1 : -1;
  }
  // Sorted indices of chunk c: [first, last).
  int64_t first(int64_t c) const { return c * chunk; }
  int64_t last(int64_t c) const { return std::min(length, (c + 1) * chunk); }
  // j ∈ P_i^r before the self rule: in i's chunk or the previous one, same bucket, causal.
  bool admits(size_t r, int64_t i, int64_t j) const {
    if (o.causal && j > i) return false;
    if (!o.across_buckets && buckets[r][static_cast<size_t>(i)] != buckets[r][static_cast<size_t>(j)]) return false;
    const int64_t ci = where[r][static_cast<size_t>(i)] / chunk, cj = where[r][static_cast<size_t>(j)] / chunk;
    return cj == ci || cj == previous(ci);
  }
  // j ∈ P_i^r: a query attends to itself only when it has no other key.
  bool member(size_t r, int64_t i, int64_t j) const {
    return (j != i || self_only[static_cast<size_t>(i)]) && admits(r, i, j);
  }
  int count(int64_t i, int64_t j) const {  // N_ij
    int n = 0;
    for (size_t r = 0; r < order.size(); ++r) n += member(r, i, j);
    return n;
  }
  bool firstIn(size_t r, int64_t i, int64_t j) const {  // round r is the first with j ∈ P_i^r
    for (size_t e = 0; e < r; ++e)
      if (member(e, i, j)) return false;
    return true;
  }
  // Positions of chunk c's queries and of its keys (the previous chunk, then its own).
  void gather(size_t r, int64_t c, std::vector<int32_t>& queries, std::vector<int32_t>& keys) const {
    const std::vector<int32_t>& s = order[r];
    queries.assign(s.begin() + first(c), s.begin() + last(c));
    keys.clear();
    if (const int64_t p = previous(c); p >= 0) keys.assign(s.begin() + first(p), s.begin() + last(p));
    keys.insert(keys.end(), queries.begin(), queries.end());
  }
};

Mat gatherRows(const MatRef& m, const std::vector<int32_t>& rows) {
  Mat out(static_cast<int64_t>(rows.size()), m.cols());
  for (size_t a = 0; a < rows.size(); ++a) out.row(static_cast<int64_t>(a)) = m.row(rows[a]);
  return out;
}

}  // namespace

LshHead lshAttentionHead(const MatRef& q, const MatRef& v, const MatRef& rotations, const LshOptions& o,
                         const RunContext& ctx) {
  validateLshOptions(o);
  const int64_t L = q.rows(), dh = q.cols(), dv = v.cols(), half = o.n_buckets / 2;
  const auto rounds = static_cast<size_t>(o.rounds);
  if (rotations.rows() != dh || rotations.cols() != o.rounds * half)
    throw InputError("R: expected shape [d_head, rounds·b/2] = [" + std::to_string(dh) + ", " +
                     std::to_string(o.rounds * half) + "], got [" + std::to_string(rotations.rows()) + ", " +
                     std::to_string(rotations.cols()) + "]");
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  LshHead h;
  h.output = Mat::Zero(L, dv);
  h.weights.rows = h.weights.cols = L;
  h.weights.indptr.assign(static_cast<size_t>(L) + 1, 0);
  if (L == 0) return h;

  // k_j = q_j / ‖q_j‖                                             [L, d_head]
  Mat k = q;
  for (int64_t j = 0; j < L; ++j)
    if (const float n = k.row(j).norm(); n > 0) k.row(j) /= n;

  // h_r(q_i) and σ_r: k_j is a positive multiple of q_j, so it has q_j's bucket.
  for (size_t r = 0; r < rounds; ++r) {
    h.buckets.push_back(lshHash(q, rotations.middleCols(static_cast<int64_t>(r) * half, half)));
    h.order.push_back(sortByBucket(h.buckets.back(), o.n_buckets));
  }
  const int64_t m = std::min(o.chunk, L);
  LshLayout lay{o, L, m, (L + m - 1) / m, h.buckets, h.order, {}, {}};
  for (size_t r = 0; r < rounds; ++r) {
    lay.where.emplace_back(static_cast<size_t>(L));
    for (int64_t s = 0; s < L; ++s) lay.where[r][static_cast<size_t>(h.order[r][static_cast<size_t>(s)])] = static_cast<int32_t>(s);
  }
  ctx.progress(0.1f);

  // Self rule: does query i have a key other than itself in any round?
  lay.self_only.assign(static_cast<size_t>(L), 1);
  for (size_t r = 0; r < rounds; ++r) {
    parallelFor(lay.chunks, ctx, [&](int64_t c) {
      std::vector<int32_t> queries, keys;
      lay.gather(r, c, queries, keys);
      for (const int32_t i : queries)
        for (const int32_t j : keys)
          if (j != i && lay.admits(r, i, j)) {
            lay.self_only[static_cast<size_t>(i)] = 0;
            break;
          }
    });
  }

  // Pass 1, per round and chunk:
  //   S = Q_c K_cᵀ / √d_head                       [m, 2m]   (keys: previous chunk, own chunk)
  //   logit_ij = S_ij − ln N_ij where j ∈ P_i^r, −∞ elsewhere
  //   z_r(i) = logsumexp_j logit_ij,   o_r(i) = Σ_j exp(logit_ij − z_r(i)) v_j
  Mat z(o.rounds, L);                                         // [rounds, L]
  std::vector<Mat> o_r(rounds, Mat::Zero(L, dv));             // [rounds][L, d_v]
  std::vector<int64_t> distinct(static_cast<size_t>(L), 0);   // |∪_r P_i^r|
  const float neg_inf = -std::numeric_limits<float>::infinity();
  // Scores and logits of chunk c in round r, with the chunk's positions.
  auto chunkLogits = [&](size_t r, int64_t c, std::vector<int32_t>& queries, std::vector<int32_t>& keys, Mat& logits,
                         Mat* n_ij) {
    lay.gather(r, c, queries, keys);
    logits.noalias() = (gatherRows(q, queries) * scale) * gatherRows(k, keys).transpose();
    if (n_ij) n_ij->resize(logits.rows(), logits.cols());
    for (size_t a = 0; a < queries.size(); ++a)
      for (size_t b = 0; b < keys.size(); ++b) {
        const auto ia = static_cast<int64_t>(a), ib = static_cast<int64_t>(b);
        if (!lay.member(r, queries[a], keys[b])) {
          logits(ia, ib) = neg_inf;
          continue;
        }
        const int n = lay.count(queries[a], keys[b]);
        if (o.duplicate_correction) logits(ia, ib) -= std::log(static_cast<float>(n));
        if (n_ij) (*n_ij)(ia, ib) = static_cast<float>(n);
      }
  };
  for (size_t r = 0; r < rounds; ++r) {
    parallelFor(lay.chunks, ctx, [&](int64_t c) {
      std::vector<int32_t> queries, keys;
      Mat logits;
      chunkLogits(r, c, queries, keys, logits, nullptr);
      Mat p = Mat::Zero(logits.rows(), logits.cols());
      for (int64_t a = 0; a < logits.rows(); ++a) {
        const int32_t i = queries[static_cast<size_t>(a)];
        // The entries pass 2 writes, counted by the same test, so the CSR
        // rows it fills are exactly as long as counted here, whatever the
        // logits hold (a NaN that maxCoeff passed over once overran a row).
        for (size_t b = 0; b < keys.size(); ++b)
          if (keptLogit(logits(a, static_cast<int64_t>(b))) && lay.firstIn(r, i, keys[b])) ++distinct[static_cast<size_t>(i)];
        const float mx = logits.row(a).maxCoeff();
        if (mx == neg_inf) {  // no key in this round: its weight exp(z_r − z) is 0
          z(static_cast<int64_t>(r), i) = neg_inf;
          continue;
        }
        float sum = 0;
        for (int64_t b = 0; b < logits.cols(); ++b) sum += p(a, b) = logits(a, b) == neg_inf ? 0.0f : std::exp(logits(a, b) - mx);
        p.row(a) /= sum;
        z(static_cast<int64_t>(r), i) = mx + std::log(sum);
      }
      const Mat o_c = p * gatherRows(v, keys);  // [m, d_v]
      for (size_t a = 0; a < queries.size(); ++a) o_r[r].row(queries[a]) = o_c.row(static_cast<int64_t>(a));
    });
    ctx.progress(0.1f + 0.4f * static_cast<float>(r + 1) / static_cast<float>(rounds));
  }

  // z(i) = logsumexp_r z_r(i);  o_i = Σ_r exp(z_r(i) − z(i)) o_r(i)
  std::vector<float> z_all(static_cast<size_t>(L));
  for (int64_t i = 0; i < L; ++i) {
    const float mx = z.col(i).maxCoeff();
    float sum = 0;
    for (size_t r = 0; r < rounds; ++r) sum += std::exp(z(static_cast<int64_t>(r), i) - mx);
    z_all[static_cast<size_t>(i)] = mx + std::log(sum);
    for (size_t r = 0; r < rounds; ++r)
      if (const float zr = z(static_cast<int64_t>(r), i); zr != neg_inf)
        h.output.row(i) += std::exp(zr - z_all[static_cast<size_t>(i)]) * o_r[r].row(i);
  }
  o_r.clear();

  // Pass 2: the weights as CSR, each key once (written by the first round that has it):
  //   w_ij = Σ_{r: j∈P_i^r} exp(logit_ij − z(i)) = N_ij exp(s_ij − ln N_ij − z(i))
  SparseRows& w = h.weights;
  for (int64_t i = 0; i < L; ++i) w.indptr[static_cast<size_t>(i) + 1] = w.indptr[static_cast<size_t>(i)] + distinct[static_cast<size_t>(i)];
  w.indices.resize(static_cast<size_t>(w.indptr.back()));
  w.values.resize(w.indices.size());
  std::vector<int64_t> fill(w.indptr.begin(), w.indptr.end() - 1);
  for (size_t r = 0; r < rounds; ++r) {
    parallelFor(lay.chunks, ctx, [&](int64_t c) {
      std::vector<int32_t> queries, keys;
      Mat logits, n_ij;
      chunkLogits(r, c, queries, keys, logits, &n_ij);
      for (size_t a = 0; a < queries.size(); ++a) {
        const int32_t i = queries[a];
        for (size_t b = 0; b < keys.size(); ++b) {
          const float l = logits(static_cast<int64_t>(a), static_cast<int64_t>(b));
          if (!keptLogit(l) || !lay.firstIn(r, i, keys[b])) continue;
          const auto e = static_cast<size_t>(fill[static_cast<size_t>(i)]++);
          w.indices[e] = keys[b];
          w.values[e] = n_ij(static_cast<int64_t>(a), static_cast<int64_t>(b)) * std::exp(l - z_all[static_cast<size_t>(i)]);
        }
      }
    });
  }
  // Keys ascending within each row (CSR contract).
  constexpr int64_t kRowsPerTask = 256;
  parallelFor((L + kRowsPerTask - 1) / kRowsPerTask, ctx, [&](int64_t t) {
    std::vector<std::pair<int32_t, float>> row;
    for (int64_t i = t * kRowsPerTask; i < std::min(L, (t + 1) * kRowsPerTask); ++i) {
      const auto b = static_cast<size_t>(w.rowBegin(i)), e = static_cast<size_t>(w.rowEnd(i));
      row.clear();
      for (size_t x = b; x < e; ++x) row.emplace_back(w.indices[x], w.values[x]);
      std::sort(row.begin(), row.end());
      for (size_t x = b; x < e; ++x) std::tie(w.indices[x], w.values[x]) = row[x - b];
    }
  });

  // Hashing, then per round and chunk the scores (twice) and the weighted sum.
  double chunk_pairs = 0;
  for (int64_t c = 0; c < lay.chunks; ++c)
    chunk_pairs += static_cast<double>(lay.last(c) - lay.first(c)) *
                   static_cast<double>(lay.last(c) - lay.first(c) + (lay.previous(c) >= 0 ? lay.last(lay.previous(c)) - lay.first(lay.previous(c)) : 0));
  h.flops = static_cast<double>(o.rounds) * (2.0 * L * dh * half + chunk_pairs * (4.0 * dh + 2.0 * dv));
  return h;
}

// [SECTION] Reversible residual layers

void reversibleForward(const ReversibleBlock& b, const Mat& x1, const Mat& x2, Mat& y1, Mat& y2) {
  y1 = x1 + b.f(x2);  // Y₁ = X₁ + F(X₂)
  y2 = x2 + b.g(y1);  // Y₂ = X₂ + G(Y₁)
}

void reversibleInverse(const ReversibleBlock& b, const Mat& y1, const Mat& y2, Mat& x1, Mat& x2) {
  x2 = y2 - b.g(y1);  // X₂ = Y₂ − G(Y₁)
  x1 = y1 - b.f(x2);  // X₁ = Y₁ − F(X₂)
}

Mat FeedForward::operator()(const Mat& y, int64_t chunks) const {
  const int64_t L = y.rows(), rows = (L + std::max<int64_t>(chunks, 1) - 1) / std::max<int64_t>(chunks, 1);
  Mat out(L, w2.cols());
  for (int64_t r0 = 0; r0 < L; r0 += rows) {
    const int64_t n = std::min(rows, L - r0);
    // hidden = max(0, y W₁ + b₁)                 [n, d_ff]: the only hidden block alive
    Mat hidden = y.middleRows(r0, n) * w1;
    hidden = (hidden.rowwise() + b1).cwiseMax(0.0f);
    // FF(y) = hidden W₂ + b₂                     [n, d]
    out.middleRows(r0, n).noalias() = hidden * w2;
    out.middleRows(r0, n).rowwise() += b2;
  }
  return out;
}

int64_t FeedForward::hiddenPeakFloats(int64_t length, int64_t chunks) const {
  const int64_t c = std::max<int64_t>(chunks, 1);
  return (length + c - 1) / c * w1.cols();
}

FeedForward makeFeedForward(int64_t d, int64_t d_ff, uint64_t seed, const std::string& stream) {
  FeedForward ff;
  ff.w1 = randomNormal(d, d_ff, seed, stream + ".w1", 1.0f / std::sqrt(static_cast<float>(d)));
  ff.w2 = randomNormal(d_ff, d, seed, stream + ".w2", 1.0f / std::sqrt(static_cast<float>(d_ff)));
  ff.b1 = randomNormal(1, d_ff, seed, stream + ".b1", 0.1f);
  ff.b2 = randomNormal(1, d, seed, stream + ".b2", 0.1f);
  return ff;
}

}  // namespace attn
