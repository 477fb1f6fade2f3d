// Attention maps on demand, so a long text never holds every map: which maps
// a run keeps, the pooled maps and the head summaries computed block of rows
// by block of rows while the attention runs, and the memory a run will need
// (refused before the pass when it will not fit).
#pragma once

#include "engine/model/blocks/run.h"
#include "engine/run_context.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attn {

// "auto", "all", "pooled", "none" or "L:H,L:H,…" (from 0); InputError otherwise.
MapsChoice parseMapsChoice(const std::string& text);
std::string mapsModeName(MapsChoice::Mode mode);
// "0:3,5:1": layer:head pairs from 0 (--maps, render --heads); else an InputError
// naming `flag`: "expected <expected>layer:head pairs such as 0:3,5:1, got '…'".
std::vector<std::pair<int64_t, int64_t>> parseLayerHeads(const std::string& text, const std::string& flag,
                                                        const std::string& expected = "");
// An InputError naming `flag` for a pair outside layers × heads_per_layer.
void checkLayerHeads(const std::vector<std::pair<int64_t, int64_t>>& heads, int64_t layers, int64_t heads_per_layer,
                     const std::string& flag);
// Position i of L tokens, from 0, or from the end when negative (−1: the last);
// outside them an InputError naming `flag`.
int64_t checkPosition(const std::string& flag, int64_t i, int64_t L);
// The pooled maps' block s = ⌈L / min(L, 256)⌉.
constexpr int64_t kPooledBlocks = 256;
int64_t pooledBlock(int64_t L);

// The maps of one run as its attention produces them: per layer and head,
// blocks of streamBlockRows(L) query rows (a multiple of the pooled block).
// Each block is kept where the run keeps that map, handed to the run's
// `map_rows` callback, pooled, and summed into the head summaries. Blocks may
// arrive from any thread; the sums are added up in block order at the end,
// so the result does not depend on the thread count.
class MapStream {
 public:
  // The `L` query rows of `run` (positions from run.first_position; summaries and pooled maps only from 0,
  // and only where `summarize`), kept as `mode` and `heads` say, each block also handed to `rows` when set
  // and the maps are All.
  MapStream(const ModelRun& run, int64_t L, MapsChoice::Mode mode, const std::vector<std::pair<int64_t, int64_t>>& heads,
            MapRowsFn rows, bool summarize = true);
  int64_t blockRows() const { return block_rows_; }
  int64_t blocks() const { return blocks_; }
  bool keeps(int64_t layer, int64_t head) const;  // the run keeps this map whole
  bool wantsFullRows(int64_t layer, int64_t head) const { return keeps(layer, head) || (rows_ && mode_ == MapsChoice::Mode::All); }
  // Query row i of head h of layer l, as groupWeights hands it on: its
  // weights are e · inv_z on keys first … first + count − 1 (0 elsewhere),
  // its entropy −Σ A ln A. A block's rows of one head come in order, on one
  // thread.
  void addRow(int64_t l, int64_t h, int64_t i, int64_t first, const float* e, int64_t count, float inv_z,
              float entropy);
  // Rows r0 … of head h whole, [n, keys], to the run's `rows` callback (every map, when wantsFullRows).
  void handOn(int64_t l, int64_t h, int64_t r0, const MatRef& full) const;
  // The heads of key/value group g on the same rows and keys (GQA), stacked
  // unnormalised [group·n, keys] (head g·group + a in rows a·n …) with each
  // row's 1/Σe: the Jensen–Shannon divergences of every pair, on the rows
  // that count.
  void addGroup(int64_t l, int64_t g, int64_t group, int64_t r0, const MatRef& stacked, const float* inv_z);
  // Summaries (without induction) and pooled maps, moved into `run`: the stream is spent.
  // With pooled blocks of 1 (L ≤ 256) and every map handed on whole (`rows`),
  // each pooled cell is one weight, its mean and max the weight itself: the
  // pooled maps are the maps the caller was handed, and none are made
  // (run.pooled: block 1, n = L, mean and max empty).
  void finish(ModelRun& run);

 private:
  struct Sums {
    double previous = 0, sink = 0, distance = 0, entropy = 0, divergence = 0;
    int64_t divergence_terms = 0;
  };
  Sums& sums(int64_t l, int64_t h, int64_t b) { return sums_[static_cast<size_t>((l * heads_ + h) * blocks_ + b)]; }
  int64_t layers_, heads_, kv_heads_, L_, block_rows_, blocks_;
  bool summaries_;
  bool pooled_are_maps_;  // finish() says when
  MapsChoice::Mode mode_;
  std::vector<char> keep_;  // [layer·heads + head]
  MapRowsFn rows_;
  std::vector<Sums> sums_;  // [layer][head][block]
  PooledMaps pooled_;
  std::vector<Mat> pooled_sum_;
};

// The rows of one block: the pooled block times ⌈64 / it⌉, so a block of
// queries never splits a pooled block.
int64_t streamBlockRows(int64_t L);
// Group divergence reads every k-th query, k = ⌈L / 64⌉ (every query up to 64).
int64_t divergenceStride(int64_t L);

// One head's whole map [L, p0 + L], recomputed from the q and k its layer's
// scores were made of (ModelRun::scores), the same bits as the pass made:
// how a run whose maps were pooled shows any head at full resolution.
// InputError when the run kept no scores' inputs, or, before allocating,
// when the map would not fit in the memory available.
Mat headMap(const ModelRun& run, int64_t layer, int64_t head, const RunContext& ctx = {});
// The longest text whose every map fits in memory with the pass (what the
// views that read every map — rollout, token lines, Q/K, patterns — allow).
int64_t longestTextWithEveryMap(const Model& m);

// The memory a run, or a head map, may take: three quarters of what is available.
double memoryForARun();

// What a run on L tokens will allocate beyond the weights it maps, in bytes.
struct RunMemory {
  double weights = 0;      // the checkpoint's weights, read from the mapped file
  double activations = 0;  // one layer's work (the 16-bit matrix being converted, the attention's blocks)
  double kept = 0;         // per-layer q, k, v kept for the views
  double maps = 0;         // the maps kept whole
  double logits = 0;       // the LM head's rows
  double total() const { return activations + kept + maps + logits; }
};
// `kept_maps` maps held whole (every map: layers·heads); `keep_projections`
// as ModelRunOptions says; the LM head on `predict_rows` rows.
RunMemory estimateRunMemory(const Model& m, int64_t L, int64_t kept_maps, bool keep_projections, int64_t predict_rows);

}  // namespace attn
