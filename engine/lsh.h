// Reformer (Kitaev et al. 2020): LSH attention and reversible residual
// layers. The `lsh` and `reversible` variants, the tests and `attnlab bench
// --only lsh` call these directly.
//
// LSH attention, one head, per hash round r (§2, "LSH attention"):
//   h_r(x) = argmax([x R_r ; −x R_r])        R_r [d_head, b/2] random     bucket in 0 … b−1
//   k_j    = q_j / ‖q_j‖                      shared-QK
//   σ_r    = positions sorted stably by (h_r, position)
//   the sorted sequence is cut into chunks of m; a query attends to the keys
//   of its chunk and the previous one that share its bucket, j ≤ i, and to
//   itself only when it has no other key (in any round).
// wrap (trax, trax/layers/research/efficient_attention.py: look_adjacent over
// the bucket ids r·b + h_r of all rounds sorted together): the rounds' sorted
// sequences are ONE sequence of rounds·L slots, slot r·L + s holding σ_r(s),
// cut into chunks of m = min(chunk, rounds·L); chunk g looks back at chunk
// g − 1 cyclically over it, so round r's chunk 0 sees round r − 1's last chunk
// (round 0's the last round's), and a chunk may hold slots of two rounds. Of
// the previous round's slots only across_buckets admits any (trax's bucket
// mask compares r·b + h_r). A key can sit in one window twice; P_i^r then
// holds it twice and N_ij counts both.
// Rounds (§2, "Multi-round LSH attention"), with P_i^r the keys of query i
// in round r (a multiset under wrap) and N_ij = Σ_r (times j is in P_i^r):
//   z_r(i) = log Σ_{j∈P_i^r} exp(s_ij − ln N_ij)          s_ij = q_i·k_j / √d_head
//   o_r(i) = Σ_{j∈P_i^r} exp(s_ij − ln N_ij − z_r(i)) v_j
//   z(i)   = log Σ_r exp z_r(i),   o_i = Σ_r exp(z_r(i) − z(i)) o_r(i)
// so key j's weight is exp(s_ij − z(i)): the softmax over the union of the
// rounds' keys (without the duplicate correction, N_ij times that, renormalised).
#pragma once

#include "engine/params.h"
#include "engine/result.h"
#include "engine/run_context.h"
#include "engine/sparse.h"
#include "engine/tensor.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attn {

// [SECTION] LSH attention

struct LshOptions {
  int64_t n_buckets = 8;  // b, even, ≥ 2
  int64_t chunk = 64;     // m, positions per chunk of the sorted sequence
  int64_t rounds = 1;     // n_rounds
  bool causal = true;     // key j ≤ query i
  // The trax reference's behaviours (trax.layers.research.efficient_attention):
  bool across_buckets = false;       // keys of any bucket inside the chunk window (only causality and self masked)
  bool duplicate_correction = true;  // subtract ln N_ij (off: a key seen in n rounds counts n times)
  bool wrap = false;                 // all rounds' slots one sequence, look-back cyclic over it (see above)
};

// Throws InputError naming the parameter: b odd or < 2, chunk ≤ 0, rounds < 1.
void validateLshOptions(const LshOptions& o);

// The registry's parameters of LshOptions (n_buckets, chunk, rounds, causal,
// across_buckets, duplicate_correction, wrap), shared by `lsh` and
// `reversible`, and the options a run's values give (validated).
std::vector<ParamSpec> lshParamSpecs();
LshOptions lshOptionsOf(const Params& p);

// R for every round, seeded: [d_head, rounds·b/2], round r in columns [r·b/2, (r+1)·b/2)
// (trax's random_rotations [d, n_hashes, b/2] in C order).
Mat lshRotations(int64_t d_head, const LshOptions& o, uint64_t seed);

// h(x) = argmax([x R ; −x R]) per row of x [L, d]; R [d, b/2]. Ties go to the lower bucket.
std::vector<int32_t> lshHash(const MatRef& x, const MatRef& r);

// Positions sorted stably by (bucket, position): order[s] is the position at sorted index s.
std::vector<int32_t> sortByBucket(const std::vector<int32_t>& buckets, int64_t n_buckets);

struct LshHead {
  SparseRows weights;                         // [L, L]: each query's keys (union of the rounds), ascending
  Mat output;                                 // [L, d_v]
  std::vector<std::vector<int32_t>> buckets;  // [rounds][L]: h_r(q_i)
  std::vector<std::vector<int32_t>> order;    // [rounds][L]: σ_r
  SparseRows round_weights;                   // [L, L]: one round's own softmax, exp(logit_ij − z_r(i)) summed
                                              // over j's places in the window (only when asked for)
  double flops = 0;                           // hashing, scores and weighted sums of the chunks
};

// One head: q [L, d_head], v [L, d_v], rotations [d_head, rounds·b/2];
// shown_round ≥ 0 also fills round_weights for that round.
// Chunks run in parallel (parallelFor); memory is O(L·(rounds·d_v + keys per query)).
LshHead lshAttentionHead(const MatRef& q, const MatRef& v, const MatRef& rotations, const LshOptions& o,
                         const RunContext& ctx, int64_t shown_round = -1);

// The work of one pass of one head in hash entries, rounds·L·(b + 10m): the
// hash's [xR; −xR] and the chunk windows' 2m entries a slot (scores, masks,
// N_ij, the union of the windows), each measured at ~5 hash entries, both in
// a Release build and under the sanitizers. m as above.
double lshPassCost(const LshOptions& o, int64_t length);

// Sorted indices 1 … L−1 of round r at which a chunk begins (the walkthrough's dividers).
std::vector<int64_t> lshChunkStarts(const LshOptions& o, int64_t length, int64_t round);

// [SECTION] Reversible residual layers (§3)

// Y₁ = X₁ + F(X₂), Y₂ = X₂ + G(Y₁); inverse X₂ = Y₂ − G(Y₁), X₁ = Y₁ − F(X₂).
// F and G map [L, d] to [L, d].
struct ReversibleBlock {
  std::function<Mat(const Mat&)> f, g;
};
void reversibleForward(const ReversibleBlock& b, const Mat& x1, const Mat& x2, Mat& y1, Mat& y2);
void reversibleInverse(const ReversibleBlock& b, const Mat& y1, const Mat& y2, Mat& x1, Mat& x2);

// Position-wise feed-forward FF(y) = max(0, y W₁ + b₁) W₂ + b₂, [L, d] → [L, d],
// computed in `chunks` blocks of rows (§3, "Chunking"): each block's hidden
// [L/c, d_ff] is the only one alive, so the peak is c times smaller and the
// result is the same row by row.
struct FeedForward {
  Mat w1, w2;   // [d, d_ff], [d_ff, d]
  RowVec b1, b2;
  Mat operator()(const Mat& y, int64_t chunks = 1) const;
  int64_t hiddenPeakFloats(int64_t length, int64_t chunks) const;  // floats of the largest live hidden block
};
FeedForward makeFeedForward(int64_t d, int64_t d_ff, uint64_t seed, const std::string& stream);

}  // namespace attn
