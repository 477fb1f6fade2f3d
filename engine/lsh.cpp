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
       .help = "trax reference: the rounds' sorted sequences are one sequence of rounds·L slots in chunks of m, each "
               "looking back at the chunk before it cyclically (round r's first chunk at round r−1's last); a key "
               "twice in a window counts twice",
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
  const Mat xr = x * r;  // x R   [L, b/2], row-major
  std::vector<int32_t> out(static_cast<size_t>(x.rows()));
  for (int64_t i = 0; i < x.rows(); ++i) {
    // argmax over [xR; −xR]: bucket c < b/2 is +xR_c, bucket b/2 + c is −xR_c. The first
    // maximum of the joined list is the first largest xR_c unless −min xR beats it strictly,
    // then b/2 + the first smallest; one pass over the row (NaN compares false: skipped).
    const float* row = xr.data() + i * half;
    int64_t hi = 0, lo = 0;
    float hi_v = -std::numeric_limits<float>::infinity(), lo_v = -hi_v;
    for (int64_t c = 0; c < half; ++c) {
      if (row[c] > hi_v) {
        hi_v = row[c];
        hi = c;
      }
      if (row[c] < lo_v) {
        lo_v = row[c];
        lo = c;
      }
    }
    out[static_cast<size_t>(i)] = static_cast<int32_t>(hi_v >= -lo_v ? hi : half + lo);
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

// The chunk structure of one head. Slot t = r·L + s holds round r's sorted
// index s (position σ_r(s)). Without wrap each round is cut into chunks of
// m = min(chunk, L) and a round's chunk 0 looks back at nothing (the paper's
// Figure 2). With wrap, as trax does it (bucket ids r·b + h_r sort all rounds
// into one sequence; look_adjacent over its chunks), the rounds·L slots are
// cut into chunks of m = min(chunk, rounds·L) and chunk g looks back at chunk
// g − 1 mod G: round r's chunk 0 sees round r − 1's last chunk, and a chunk
// may hold slots of two rounds. A key can then sit in one window twice.
struct LshLayout {
  const LshOptions& o;
  int64_t length, chunk, per_round, chunks;  // per_round: chunks of a round (no wrap)
  const std::vector<std::vector<int32_t>>& buckets;
  const std::vector<std::vector<int32_t>>& order;
  std::vector<std::vector<int32_t>> where;  // [rounds][L]: sorted index of each position (σ_r⁻¹)
  std::vector<uint8_t> self_only;           // [L]: query i has no key but itself in any window

  int64_t slot(size_t r, int32_t i) const { return static_cast<int64_t>(r) * length + where[r][static_cast<size_t>(i)]; }
  size_t roundOf(int64_t t) const { return static_cast<size_t>(t / length); }
  int32_t position(int64_t t) const { return order[roundOf(t)][static_cast<size_t>(t % length)]; }
  int64_t chunkOf(int64_t t) const { return o.wrap ? t / chunk : t / length * per_round + t % length / chunk; }
  // Slots of chunk g: [first, last).
  int64_t first(int64_t g) const { return o.wrap ? g * chunk : g / per_round * length + g % per_round * chunk; }
  int64_t last(int64_t g) const {
    return o.wrap ? std::min(static_cast<int64_t>(order.size()) * length, (g + 1) * chunk)
                  : g / per_round * length + std::min(length, (g % per_round + 1) * chunk);
  }
  // The chunk g looks back at; −1: none. One chunk in all: trax's window would
  // be that chunk twice, which doubles every N_ij and every count alike and so
  // changes no weight.
  int64_t previous(int64_t g) const {
    if (o.wrap) return chunks > 1 ? (g + chunks - 1) % chunks : -1;
    return g % per_round > 0 ? g - 1 : -1;
  }
  // Key slot u in query slot t's window, before the self rule: causal by
  // position, and unless across_buckets the same bucket id r·b + h_r (so the
  // same round: trax's bucket mask).
  bool admits(int64_t t, int64_t u) const {
    const int32_t i = position(t), j = position(u);
    if (o.causal && j > i) return false;
    if (o.across_buckets) return true;
    const size_t r = roundOf(t);
    return roundOf(u) == r && buckets[r][static_cast<size_t>(i)] == buckets[r][static_cast<size_t>(j)];
  }
  // A query attends to itself only when its windows hold no other key.
  bool member(int64_t t, int64_t u) const {
    const int32_t i = position(t);
    return (position(u) != i || self_only[static_cast<size_t>(i)]) && admits(t, u);
  }
  // Slots of chunk g's queries and of its window (the previous chunk, then its own).
  void gather(int64_t g, std::vector<int64_t>& queries, std::vector<int64_t>& keys) const {
    queries.clear();
    keys.clear();
    for (int64_t t = first(g); t < last(g); ++t) queries.push_back(t);
    if (const int64_t p = previous(g); p >= 0)
      for (int64_t u = first(p); u < last(p); ++u) keys.push_back(u);
    keys.insert(keys.end(), queries.begin(), queries.end());
  }
  // Every key slot of the window of query slot t's chunk.
  template <class F>
  void forWindow(int64_t t, F&& f) const {
    const int64_t g = chunkOf(t);
    if (const int64_t p = previous(g); p >= 0)
      for (int64_t u = first(p); u < last(p); ++u) f(u);
    for (int64_t u = first(g); u < last(g); ++u) f(u);
  }
};

Mat gatherRows(const MatRef& m, const std::vector<int32_t>& rows) {
  Mat out(static_cast<int64_t>(rows.size()), m.cols());
  for (size_t a = 0; a < rows.size(); ++a) out.row(static_cast<int64_t>(a)) = m.row(rows[a]);
  return out;
}

// The keys of each query, ∪_r P_i^r as CSR (ascending), with
// N_ij = Σ_r (occurrences of j admitted in query i's window of round r);
// fills lay.self_only.
void unionOfWindows(LshLayout& lay, SparseRows& w, std::vector<int32_t>& n_ij, const RunContext& ctx) {
  const int64_t L = lay.length;
  const size_t rounds = lay.order.size();
  lay.self_only.assign(static_cast<size_t>(L), 0);
  constexpr int64_t kRowsPerTask = 256;
  const int64_t tasks = (L + kRowsPerTask - 1) / kRowsPerTask;
  // Calls row(i, touched, count) for each query i of `task`: touched lists
  // its keys (unsorted), count[j] is N_ij.
  auto eachRow = [&](int64_t task, auto&& row) {
    // count[j]: j's places in the windows so far; touched: the keys with count > 0.
    std::vector<int32_t> count(static_cast<size_t>(L), 0), touched;
    for (int64_t i = task * kRowsPerTask; i < std::min(L, (task + 1) * kRowsPerTask); ++i) {
      const auto qi = static_cast<int32_t>(i);
      auto add = [&](int32_t j) {
        if (count[static_cast<size_t>(j)]++ == 0) touched.push_back(j);
      };
      for (size_t r = 0; r < rounds; ++r) {
        const int64_t t = lay.slot(r, qi);
        lay.forWindow(t, [&](int64_t u) {
          if (const int32_t j = lay.position(u); j != qi && lay.admits(t, u)) add(j);
        });
      }
      if (touched.empty()) {
        lay.self_only[static_cast<size_t>(i)] = 1;
        for (size_t r = 0; r < rounds; ++r) {
          const int64_t t = lay.slot(r, qi);
          lay.forWindow(t, [&](int64_t u) {
            if (lay.position(u) == qi && lay.admits(t, u)) add(qi);
          });
        }
      }
      row(i, touched, count);
      for (const int32_t j : touched) count[static_cast<size_t>(j)] = 0;
      touched.clear();
    }
  };
  // Two passes, the row lengths and then the rows written in place: the key
  // lists are never held twice (a copy per task doubled LSH's peak memory).
  std::vector<int64_t> row_length(static_cast<size_t>(L), 0);
  parallelFor(tasks, ctx, [&](int64_t task) {
    eachRow(task, [&](int64_t i, std::vector<int32_t>& touched, const std::vector<int32_t>&) {
      row_length[static_cast<size_t>(i)] = static_cast<int64_t>(touched.size());
    });
  });
  w.indptr.assign(static_cast<size_t>(L) + 1, 0);
  for (int64_t i = 0; i < L; ++i) w.indptr[static_cast<size_t>(i) + 1] = w.indptr[static_cast<size_t>(i)] + row_length[static_cast<size_t>(i)];
  w.indices.assign(static_cast<size_t>(w.indptr.back()), 0);
  n_ij.assign(static_cast<size_t>(w.indptr.back()), 0);
  parallelFor(tasks, ctx, [&](int64_t task) {
    eachRow(task, [&](int64_t i, std::vector<int32_t>& touched, const std::vector<int32_t>& count) {
      std::sort(touched.begin(), touched.end());
      auto e = static_cast<size_t>(w.indptr[static_cast<size_t>(i)]);
      for (const int32_t j : touched) {
        w.indices[e] = j;
        n_ij[e++] = count[static_cast<size_t>(j)];
      }
    });
  });
}

// entry[j] = the index of key j in row i of w, for the keys of that row (all
// of query i's window keys, by construction); clear() resets them to −1.
struct RowEntries {
  std::vector<int64_t> entry;
  const SparseRows& w;
  RowEntries(const SparseRows& w_, int64_t length) : entry(static_cast<size_t>(length), -1), w(w_) {}
  void load(int32_t i) {
    for (int64_t e = w.rowBegin(i); e < w.rowEnd(i); ++e) entry[static_cast<size_t>(w.indices[static_cast<size_t>(e)])] = e;
  }
  void clear(int32_t i) {
    for (int64_t e = w.rowBegin(i); e < w.rowEnd(i); ++e) entry[static_cast<size_t>(w.indices[static_cast<size_t>(e)])] = -1;
  }
  size_t operator[](int32_t j) const { return static_cast<size_t>(entry[static_cast<size_t>(j)]); }
};

}  // namespace

LshHead lshAttentionHead(const MatRef& q, const MatRef& v, const MatRef& rotations, const LshOptions& o,
                         const RunContext& ctx, int64_t shown_round) {
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
  const int64_t m = std::min(o.chunk, o.wrap ? o.rounds * L : L), per_round = (L + m - 1) / m;
  LshLayout lay{o, L, m, per_round, o.wrap ? (o.rounds * L + m - 1) / m : o.rounds * per_round, h.buckets, h.order, {}, {}};
  for (size_t r = 0; r < rounds; ++r) {
    lay.where.emplace_back(static_cast<size_t>(L));
    for (int64_t s = 0; s < L; ++s) lay.where[r][static_cast<size_t>(h.order[r][static_cast<size_t>(s)])] = static_cast<int32_t>(s);
  }
  SparseRows& w = h.weights;
  std::vector<int32_t> n_ij;  // [nnz]: N_ij of each entry of w
  unionOfWindows(lay, w, n_ij, ctx);
  ctx.progress(0.1f);

  // Per chunk, the query slots of every round at once:
  //   S = Q_c K_cᵀ / √d_head                       [m, 2m]   (keys: previous chunk, own chunk)
  //   logit_tu = S_tu − ln N_ij where slot u ∈ P(t), −∞ elsewhere   (i, j the slots' positions)
  //   z_r(i) = logsumexp_u logit_tu,   o_r(i) = Σ_u exp(logit_tu − z_r(i)) v_j    (r: t's round)
  Mat z(o.rounds, L);                                  // [rounds, L]
  std::vector<Mat> o_r(rounds, Mat::Zero(L, dv));      // [rounds][L, d_v]
  const bool keep_round = shown_round >= 0 && shown_round < o.rounds;
  std::vector<float> round_values(keep_round ? w.indices.size() : 0, 0.0f);
  const float neg_inf = -std::numeric_limits<float>::infinity();
  // Tasks of ≥ L/8 slots, so the [L] entry table each one fills costs at most 8 entries a slot.
  const int64_t per_task = std::max<int64_t>(1, L / (8 * m)), tasks = (lay.chunks + per_task - 1) / per_task;
  parallelFor(tasks, ctx, [&](int64_t task) {
    RowEntries entry(w, L);
    for (int64_t c = task * per_task; c < std::min(lay.chunks, (task + 1) * per_task); ++c) {
      std::vector<int64_t> q_slots, k_slots;
      lay.gather(c, q_slots, k_slots);
      std::vector<int32_t> queries, keys;
      for (const int64_t t : q_slots) queries.push_back(lay.position(t));
      for (const int64_t u : k_slots) keys.push_back(lay.position(u));
      Mat logits = (gatherRows(q, queries) * scale) * gatherRows(k, keys).transpose();
      Mat p = Mat::Zero(logits.rows(), logits.cols());
      for (int64_t a = 0; a < logits.rows(); ++a) {
        const int32_t i = queries[static_cast<size_t>(a)];
        entry.load(i);
        for (size_t b = 0; b < keys.size(); ++b) {
          float& l = logits(a, static_cast<int64_t>(b));
          if (!lay.member(q_slots[static_cast<size_t>(a)], k_slots[b]))
            l = neg_inf;
          else if (o.duplicate_correction)
            l -= std::log(static_cast<float>(n_ij[entry[keys[b]]]));
        }
        const auto r = static_cast<int64_t>(lay.roundOf(q_slots[static_cast<size_t>(a)]));
        const float mx = logits.row(a).maxCoeff();
        if (mx == neg_inf) {  // no key in this round's window: its weight exp(z_r − z) is 0
          z(r, i) = neg_inf;
          entry.clear(i);
          continue;
        }
        float sum = 0;
        for (int64_t b = 0; b < logits.cols(); ++b) sum += p(a, b) = logits(a, b) == neg_inf ? 0.0f : std::exp(logits(a, b) - mx);
        p.row(a) /= sum;
        z(r, i) = mx + std::log(sum);
        if (keep_round && r == shown_round)
          for (size_t b = 0; b < keys.size(); ++b)
            if (p(a, static_cast<int64_t>(b)) > 0) round_values[entry[keys[b]]] += p(a, static_cast<int64_t>(b));
        entry.clear(i);
      }
      const Mat o_c = p * gatherRows(v, keys);  // [m, d_v]
      for (size_t a = 0; a < queries.size(); ++a)
        o_r[lay.roundOf(q_slots[a])].row(queries[a]) = o_c.row(static_cast<int64_t>(a));
    }
  });
  ctx.progress(0.6f);

  // z(i) = logsumexp_r z_r(i);  o_i = Σ_r exp(z_r(i) − z(i)) o_r(i)
  for (int64_t i = 0; i < L; ++i) {
    const float mx = z.col(i).maxCoeff();
    float sum = 0;
    for (size_t r = 0; r < rounds; ++r) sum += std::exp(z(static_cast<int64_t>(r), i) - mx);
    const float z_all = mx + std::log(sum);
    for (size_t r = 0; r < rounds; ++r)
      if (const float zr = z(static_cast<int64_t>(r), i); zr != neg_inf)
        h.output.row(i) += std::exp(zr - z_all) * o_r[r].row(i);
  }
  o_r.clear();

  // The weights, each key once: w_ij = Σ over its occurrences exp(logit − z(i))
  //   = N_ij exp(s_ij − ln N_ij − z(i))   (without the correction N_ij exp(s_ij − z(i))),
  // where z(i) = ln Σ_j N_ij exp(s_ij − ln N_ij): the softmax over the row's entries of
  // s_ij (+ ln N_ij without the correction). Taken as that softmax, with s_ij from one dot
  // product, and not against the chunks' z(i): at scores near 10^10 the chunks' GEMM and
  // the dot product round apart by more than 1, and exp of the difference overflowed.
  w.values.resize(w.indices.size());
  constexpr int64_t kRowsPerTask = 256;
  parallelFor((L + kRowsPerTask - 1) / kRowsPerTask, ctx, [&](int64_t t) {
    for (int64_t i = t * kRowsPerTask; i < std::min(L, (t + 1) * kRowsPerTask); ++i) {
      const int64_t begin = w.rowBegin(i), end = w.rowEnd(i);
      if (begin == end) continue;
      float mx = neg_inf;
      for (int64_t e = begin; e < end; ++e) {
        const auto x = static_cast<size_t>(e);
        float& l = w.values[x] = scale * q.row(i).dot(k.row(w.indices[x]));
        if (!o.duplicate_correction) l += std::log(static_cast<float>(n_ij[x]));
        mx = std::max(mx, l);
      }
      float sum = 0;
      for (int64_t e = begin; e < end; ++e) sum += w.values[static_cast<size_t>(e)] = std::exp(w.values[static_cast<size_t>(e)] - mx);
      for (int64_t e = begin; e < end; ++e) w.values[static_cast<size_t>(e)] /= sum;
    }
  });
  if (keep_round) {
    // Round `shown_round`'s own softmax, only the keys its windows hold.
    SparseRows& s = h.round_weights;
    s.rows = s.cols = L;
    s.indptr.assign(static_cast<size_t>(L) + 1, 0);
    for (int64_t i = 0; i < L; ++i) {
      for (int64_t e = w.rowBegin(i); e < w.rowEnd(i); ++e)
        if (const float x = round_values[static_cast<size_t>(e)]; x > 0) {
          s.indices.push_back(w.indices[static_cast<size_t>(e)]);
          s.values.push_back(x);
        }
      s.indptr[static_cast<size_t>(i) + 1] = s.nnz();
    }
  }

  // Hashing, the chunks' scores and weighted sums, and the weights' scores.
  double chunk_pairs = 0;
  for (int64_t c = 0; c < lay.chunks; ++c) {
    const int64_t p = lay.previous(c);
    chunk_pairs += static_cast<double>(lay.last(c) - lay.first(c)) *
                   static_cast<double>(lay.last(c) - lay.first(c) + (p >= 0 ? lay.last(p) - lay.first(p) : 0));
  }
  h.flops = static_cast<double>(o.rounds) * 2.0 * L * dh * half + chunk_pairs * (2.0 * dh + 2.0 * dv) +
            static_cast<double>(w.nnz()) * 2.0 * dh;
  return h;
}

double lshPassCost(const LshOptions& o, int64_t length) {
  const int64_t m = std::min(o.chunk, o.wrap ? o.rounds * length : length);
  return static_cast<double>(o.rounds) * static_cast<double>(length) * static_cast<double>(o.n_buckets + 10 * m);
}

std::vector<int64_t> lshChunkStarts(const LshOptions& o, int64_t length, int64_t round) {
  // Chunks of m over round r's slots r·L … r·L + L − 1 (wrap) or over the round alone.
  const int64_t m = std::min(o.chunk, o.wrap ? o.rounds * length : length), base = o.wrap ? round * length : 0;
  std::vector<int64_t> out;
  for (int64_t s = (m - base % m) % m; s < length; s += m)
    if (s > 0) out.push_back(s);
  return out;
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
