// Attention maps on demand (maps.h): the choice of maps, the stream that pools
// and summarises every head's rows as they are computed, and the memory
// estimate a run is checked against before it starts.
//
// [SECTION] The choice
// [SECTION] The stream
// [SECTION] Memory
#include "engine/model/blocks/maps.h"

#include "engine/model/blocks/head_metrics.h"
#include "engine/model/blocks/model_impl.h"

#include "engine/attention_math.h"
#include "engine/parallel.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace attn {

// [SECTION] The choice
std::vector<std::pair<int64_t, int64_t>> parseLayerHeads(const std::string& text, const std::string& flag,
                                                        const std::string& expected) {
  std::vector<std::pair<int64_t, int64_t>> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    const size_t colon = item.find(':');
    long long layer = -1, head = -1;
    size_t a = 0, b = 0;
    try {
      if (colon != std::string::npos) {
        layer = std::stoll(item.substr(0, colon), &a);
        head = std::stoll(item.substr(colon + 1), &b);
      }
    } catch (const std::exception&) {
      layer = -1;
    }
    if (colon == std::string::npos || a != colon || b != item.size() - colon - 1 || layer < 0 || head < 0)
      throw InputError(flag + ": expected " + expected + "layer:head pairs such as 0:3,5:1, got '" + text + "'");
    out.emplace_back(layer, head);
    start = end + 1;
  }
  return out;
}

void checkLayerHeads(const std::vector<std::pair<int64_t, int64_t>>& heads, int64_t layers, int64_t heads_per_layer,
                     const std::string& flag) {
  for (const auto& [l, h] : heads)
    if (l < 0 || h < 0 || l >= layers || h >= heads_per_layer)
      throw InputError(flag + ": layer " + std::to_string(l) + " head " + std::to_string(h) + " is outside the model's " +
                       std::to_string(layers) + " layers of " + std::to_string(heads_per_layer) + " heads (from 0)");
}

int64_t checkPosition(const std::string& flag, int64_t i, int64_t L) {
  if (i < -L || i >= L)
    throw InputError(flag + ": position " + std::to_string(i) + " is outside the " + std::to_string(L) + " tokens (0 … " +
                     std::to_string(L - 1) + ", or −1 … −" + std::to_string(L) + " from the end)");
  return i < 0 ? L + i : i;
}

MapsChoice parseMapsChoice(const std::string& text) {
  if (text == "auto") return {};
  if (text == "all") return {MapsChoice::Mode::All, {}};
  if (text == "pooled") return {MapsChoice::Mode::Pooled, {}};
  if (text == "none") return {MapsChoice::Mode::None, {}};
  return {MapsChoice::Mode::Heads, parseLayerHeads(text, "--maps", "all, pooled, none, auto or ")};
}

std::string mapsModeName(MapsChoice::Mode mode) {
  switch (mode) {
    case MapsChoice::Mode::Auto: return "auto";
    case MapsChoice::Mode::All: return "all";
    case MapsChoice::Mode::Pooled: return "pooled";
    case MapsChoice::Mode::None: return "none";
    case MapsChoice::Mode::Heads: return "heads";
  }
  return "auto";
}

int64_t pooledBlock(int64_t L) {
  const int64_t n = std::min(L, kPooledBlocks);
  return n > 0 ? (L + n - 1) / n : 1;
}

int64_t streamBlockRows(int64_t L) {
  const int64_t s = pooledBlock(L);
  return s * ((64 + s - 1) / s);
}

int64_t divergenceStride(int64_t L) { return std::max<int64_t>(1, (L + 63) / 64); }

int64_t KeyRange::first(int64_t i) const {
  if (window <= 0) return 0;
  const int64_t back = causal ? window - 1 : window / 2;
  return std::max<int64_t>(0, p0 + i - back);
}

int64_t KeyRange::end(int64_t i) const {
  if (causal) return std::min(keys, p0 + i + 1);
  return window > 0 ? std::min(keys, p0 + i + window / 2 + 1) : keys;
}

// [SECTION] The stream
MapStream::MapStream(const ModelRun& run, int64_t L, MapsChoice::Mode mode,
                     const std::vector<std::pair<int64_t, int64_t>>& heads, MapRowsFn rows, bool summarize)
    : layers_(run.layers),
      heads_(run.heads),
      kv_heads_(run.kv_heads > 0 ? run.kv_heads : run.heads),
      L_(L),
      block_rows_(streamBlockRows(L)),
      blocks_((L + block_rows_ - 1) / block_rows_),
      summaries_(run.first_position == 0 && summarize),
      pooled_are_maps_(mode == MapsChoice::Mode::All && rows && pooledBlock(L) == 1),
      mode_(mode),
      keep_(static_cast<size_t>(run.layers * run.heads), 0),
      rows_(std::move(rows)) {
  if (mode == MapsChoice::Mode::All && !rows_) std::fill(keep_.begin(), keep_.end(), 1);
  if (mode == MapsChoice::Mode::Heads)
    for (const auto& [l, h] : heads) keep_[static_cast<size_t>(l * heads_ + h)] = 1;
  if (!summaries_) return;
  sums_.resize(static_cast<size_t>(layers_ * heads_ * blocks_));
  pooled_.block = pooledBlock(L);
  pooled_.n = (L + pooled_.block - 1) / pooled_.block;
  if (pooled_are_maps_) return;
  // Zeroed on every thread: this is where a cold pass first touches the
  // pooled stacks (two of 9.4 MiB for GPT-2 at 256 tokens), a page fault per 4 KiB.
  const int64_t maps = layers_ * heads_, n = pooled_.n;
  pooled_sum_.resize(static_cast<size_t>(maps));
  pooled_.max.resize(static_cast<size_t>(maps));
  parallelFor(maps, RunContext{}, [&](int64_t m) {
    pooled_sum_[static_cast<size_t>(m)].setZero(n, n);
    pooled_.max[static_cast<size_t>(m)].setZero(n, n);
  });
}

bool MapStream::keeps(int64_t layer, int64_t head) const { return keep_[static_cast<size_t>(layer * heads_ + head)] != 0; }

namespace {

// One head's rows of the query block being pooled, on this thread: the
// column sums and maxima of A over the keys [lo, hi) some row has read.
struct PooledRows {
  Eigen::ArrayXf sum, max;  // by key
  int64_t lo = 0, hi = 0;
};

}  // namespace

void MapStream::addRow(int64_t l, int64_t h, int64_t i, int64_t first, const float* e, int64_t count, float inv_z,
                       float entropy) {
  if (!summaries_) return;
  Sums& s = sums(l, h, i / block_rows_);
  s.entropy += static_cast<double>(entropy);
  const auto w = Eigen::Map<const Eigen::ArrayXf>(e, count);  // A[i, first + j] = w_j · inv_z
  if (count > 0) {
    if (i >= 1 && i - 1 >= first && i - 1 < first + count) s.previous += static_cast<double>(w[i - 1 - first] * inv_z);
    if (i >= 1 && first == 0) s.sink += static_cast<double>(w[0] * inv_z);
    // Σ_j A[i, j]·|i − j|, the row's sum in float (vectorised), the rows' in double
    thread_local Eigen::ArrayXf offsets;  // 0, 1, 2, … (grown as rows grow)
    if (offsets.size() < count) {
      offsets.resize(count);
      for (int64_t j = 0; j < count; ++j) offsets[j] = static_cast<float>(j);
    }
    const float d0 = static_cast<float>(first - i);  // key first + j is |j + d0| from query i
    s.distance += static_cast<double>(inv_z * ((offsets.head(count) + d0).abs() * w).sum());
  }
  if (pooled_are_maps_) return;
  // Pooled: the rows of a query block are summed and maximised by key, then,
  // after its last row, cut at the key blocks' edges (a block of the pass's
  // rows never splits a query block, and brings one head's rows in order).
  thread_local PooledRows pool;
  const int64_t pb = pooled_.block, bi = i / pb;
  if (i % pb == 0) {
    if (pool.sum.size() < L_) pool.sum.resize(L_), pool.max.resize(L_);
    pool.lo = pool.hi = first;
  }
  if (count > 0) {
    const int64_t end = first + count;
    if (pool.hi == pool.lo) pool.lo = pool.hi = first;
    if (first < pool.lo) {
      pool.sum.segment(first, pool.lo - first).setZero();
      pool.max.segment(first, pool.lo - first).setZero();
      pool.lo = first;
    }
    if (end > pool.hi) {
      pool.sum.segment(pool.hi, end - pool.hi).setZero();
      pool.max.segment(pool.hi, end - pool.hi).setZero();
      pool.hi = end;
    }
    pool.sum.segment(first, count) += inv_z * w;
    pool.max.segment(first, count) = pool.max.segment(first, count).max(inv_z * w);
  }
  if ((i + 1) % pb != 0 && i + 1 != L_) return;
  Mat& psum = pooled_sum_[static_cast<size_t>(l * heads_ + h)];
  Mat& pmax = pooled_.max[static_cast<size_t>(l * heads_ + h)];
  for (int64_t j0 = pool.lo; j0 < pool.hi;) {
    const int64_t jb = j0 / pb, j1 = std::min(pool.hi, (jb + 1) * pb);
    psum(bi, jb) += pool.sum.segment(j0, j1 - j0).sum();
    pmax(bi, jb) = std::max(pmax(bi, jb), pool.max.segment(j0, j1 - j0).maxCoeff());
    j0 = j1;
  }
}

void MapStream::handOn(int64_t l, int64_t h, int64_t r0, const MatRef& full) const {
  if (rows_ && mode_ == MapsChoice::Mode::All) rows_(l, h, r0, full);
}

void MapStream::addGroup(int64_t l, int64_t g, int64_t group, int64_t r0, const MatRef& stacked, const float* inv_z) {
  if (!summaries_ || group < 2) return;
  Sums& s = sums(l, g * group, r0 / block_rows_);  // the group's sums live with its first head
  const int64_t stride = divergenceStride(L_), n = stacked.rows() / group, keys = stacked.cols();
  Mat A(group, keys);  // the group's weights on one query
  for (int64_t r = 0; r < n; ++r) {
    if ((r0 + r) % stride != 0) continue;
    for (int64_t a = 0; a < group; ++a) A.row(a) = stacked.row(a * n + r) * inv_z[a * n + r];
    for (int64_t a = 0; a < group; ++a)
      for (int64_t b = a + 1; b < group; ++b) {
        s.divergence += jensenShannonBits(A.row(a).data(), A.row(b).data(), keys);
        ++s.divergence_terms;
      }
  }
}

void MapStream::finish(ModelRun& run) {
  if (!summaries_) return;
  const int64_t group = heads_ / kv_heads_;
  run.summaries.clear();
  for (int64_t l = 0; l < layers_; ++l)
    for (int64_t h = 0; h < heads_; ++h) {
      HeadSummary x;
      x.layer = l;
      x.head = h;
      x.kv_head = h / group;
      x.group_size = group;
      double divergence = 0;
      int64_t terms = 0;
      for (int64_t b = 0; b < blocks_; ++b) {
        const Sums& s = sums_[static_cast<size_t>((l * heads_ + h) * blocks_ + b)];
        const Sums& first = sums_[static_cast<size_t>((l * heads_ + x.kv_head * group) * blocks_ + b)];
        x.previous_token += s.previous;
        x.sink += s.sink;
        x.mean_distance += s.distance;
        x.entropy += s.entropy;
        divergence += first.divergence;
        terms += first.divergence_terms;
      }
      if (L_ > 1) x.previous_token /= static_cast<double>(L_ - 1);
      if (L_ > 1) x.sink /= static_cast<double>(L_ - 1);
      x.mean_distance /= static_cast<double>(L_);
      x.entropy /= static_cast<double>(L_);
      x.group_divergence = terms > 0 ? divergence / static_cast<double>(terms) : 0.0;
      run.summaries.push_back(x);
    }
  // Pooled means: block sums over the block's rows × columns (the last block
  // shorter), divided in place and moved into the run (no copy of the maps).
  if (!pooled_are_maps_) {
    const int64_t pb = pooled_.block;
    auto size = [&](int64_t b) { return static_cast<float>(std::min(L_, (b + 1) * pb) - b * pb); };
    Mat cells(pooled_.n, pooled_.n);  // the cells' sizes
    for (int64_t i = 0; i < pooled_.n; ++i)
      for (int64_t j = 0; j < pooled_.n; ++j) cells(i, j) = size(i) * size(j);
    for (Mat& m : pooled_sum_) m.array() /= cells.array();
    pooled_.mean = std::move(pooled_sum_);
  }
  run.pooled = std::move(pooled_);
}

Mat headMap(const ModelRun& run, int64_t layer, int64_t head, const RunContext& ctx) {
  if (!run.keep_scores || layer < 0 || layer >= static_cast<int64_t>(run.scores.size()) || head < 0 || head >= run.heads)
    throw InputError("head map: layer " + std::to_string(layer) + " head " + std::to_string(head) +
                     " cannot be recomputed (the run kept no q and k for it)");
  const LayerScores& s = run.scores[static_cast<size_t>(layer)];
  const int64_t L = s.q.rows(), dh = run.d_head, kv = run.kv_heads > 0 ? run.kv_heads : run.heads;
  const int64_t group = run.heads / kv, g = head / group, B = streamBlockRows(L);
  const ScoreMods mods{s.softcap, run.alibi_slopes.empty() ? nullptr : &run.alibi_slopes};
  // The map, and per thread a block of the group's weights.
  const double bytes = 4.0 * static_cast<double>(s.keys.keys) *
                       (static_cast<double>(L) + static_cast<double>(omp_get_max_threads() * group * B));
  const double available = memoryForARun();
  if (bytes > available)
    throw InputError("head map: layer " + std::to_string(layer) + " head " + std::to_string(head) + " over " +
                     std::to_string(L) + " tokens needs " + formatBytes(bytes) + ", more than the " +
                     formatBytes(available) + " of memory available");
  Mat map = Mat::Zero(L, s.keys.keys);
  // The pass's blocks and stacking: the same bits (its group's rows come along).
  parallelFor((L + B - 1) / B, ctx, [&](int64_t b) {
    const int64_t r0 = b * B, n = std::min(B, L - r0), k0 = s.keys.first(r0);
    const int64_t nk = std::max(k0, s.keys.end(r0 + n - 1)) - k0;
    Mat S;
    groupWeights(s.q, s.k.block(k0, g * dh, nk, dh), r0, n, k0, s.keys, g, group, s.scale, mods, S);
    map.block(r0, k0, n, nk) = S.middleRows(head % group * n, n);
  });
  return map;
}

int64_t longestTextWithEveryMap(const Model& m) {
  const ModelConfig& c = modelInfo(m).config;
  const double available = memoryForARun();
  int64_t lo = 1, hi = std::max<int64_t>(1, c.positions);
  while (lo < hi) {  // the largest L whose run with every map and the views' projections fits
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (estimateRunMemory(m, mid, c.layers * c.heads, true, 1).total() <= available) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// [SECTION] Memory
double memoryForARun() { return 0.75 * static_cast<double>(availableMemoryBytes()); }

RunMemory estimateRunMemory(const Model& m, int64_t L, int64_t kept_maps, bool keep_projections, int64_t predict_rows) {
  const ModelConfig& c = modelInfo(m).config;
  const double f = 4.0, l = static_cast<double>(L), d = static_cast<double>(c.d_model);
  const double qd = static_cast<double>(c.heads * c.head_dim), kvd = static_cast<double>(c.kv_heads * c.head_dim);
  const double ff = static_cast<double>(std::max(c.d_ff, c.d_model)), threads = omp_get_max_threads();
  const double block = static_cast<double>(streamBlockRows(L)), n = static_cast<double>((L + pooledBlock(L) - 1) / pooledBlock(L));
  RunMemory r;
  r.weights = static_cast<double>(modelInfo(m).bytes_on_disk);
  // One layer's rows: x, the normed input, the projection and the MLP's
  // output (d each), q, the heads' concatenation and a GQA copy (q width),
  // k and v, the MLP's two hidden rows; the hidden state out. Per thread: a
  // block of scores and weights, and the whole rows handed on. The largest
  // 16-bit matrix converted. The pooled maps' sums and maxima.
  r.activations = f * (l * (5 * d + 3 * qd + 2 * kvd + 2 * ff) + threads * 3 * block * l + ff * d +
                       2.0 * static_cast<double>(c.layers * c.heads) * n * n);
  // For the views, with every map: q, k, v as the attention used them and q,
  // k before the rotation (and the norm); else the q and k of the scores.
  const bool every = kept_maps >= c.layers * c.heads;
  if (keep_projections) r.kept = f * static_cast<double>(c.layers) * l * (every ? qd * (c.qk_norm ? 7 : 5) : qd + kvd);
  r.maps = f * static_cast<double>(kept_maps) * l * l;
  r.logits = f * static_cast<double>(predict_rows) * static_cast<double>(c.vocab);
  return r;
}

}  // namespace attn
