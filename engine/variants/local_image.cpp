// Image Transformer local self-attention (Parmar et al. 2018, §3.2, Fig. 2),
// on a sequence that is an image flattened in raster order.
//
// local-1d: the sequence is cut into query blocks of l_q positions. Query i
//   in block b = ⌊i/l_q⌋ (first position s_b = b·l_q) attends to its own
//   block and the l_m positions before it, causally:
//     keys(i) = {j : max(0, s_b − l_m) ≤ j ≤ i}
//
// local-2d: the image is w pixels wide and h = L/w high. It is cut into query
//   blocks of b_h × b_w pixels (a dimension larger than the image is clipped
//   to it; edge blocks may be smaller). The memory block of a query block with
//   rows [r0, r1) and columns [c0, c1) extends it by f_h rows above and f_w
//   columns on each side:
//     memory = rows [max(0, r0 − f_h), r1) × columns [max(0, c0 − f_w), min(w, c1 + f_w))
//   Query i attends to the memory pixels j generated before it (and itself).
//   order = blocks (the paper's and tensor2tensor's masked_local_attention_2d):
//     pixels are generated block by block, blocks in raster order over the
//     grid of blocks, pixels in raster order inside a block, so
//     j precedes i ⟺ block(j) < block(i), or block(j) = block(i) and j ≤ i.
//     That keeps the f_h rows above (earlier block rows) and the left flank
//     (earlier block of the same block row) and drops the right flank.
//   order = raster: plain raster order, j precedes i ⟺ j ≤ i.
//
// SparseRows::sets: bit 0 = key inside the query's own query block, bit 1 =
// key in the memory flank. The QueryGroup extra gives each query's block id.
#include "engine/error.h"
#include "engine/registry.h"
#include "engine/sparse_attention.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

constexpr uint8_t kOwnBlock = 1, kFlank = 2;  // SparseRows::sets bits

Result localResult(const std::string& name, const Inputs& in, int64_t image_width) {
  if (in.query().rows() > INT32_MAX) throw InputError(name + ": L must be < 2^31 (keys are int32)");
  Result r;
  r.variant = name;
  r.q_tokens = in.tokens;
  r.k_tokens = in.tokens;
  r.set_names = {"query block", "memory flank"};
  r.image_width = image_width;
  return r;
}

void addBlockIds(Result& r, const std::vector<float>& block_of) {
  r.extras.push_back({.name = "query_block", .label = "query block of each position", .kind = ExtraKind::QueryGroup,
                      .value = Array::fromVector(block_of)});
}

Result local1d(const Inputs& in, const Params& p, const RunContext& ctx) {
  const int64_t len = in.query().rows(), lq = p.getInt("l_q"), lm = p.getInt("l_m"), width = p.getInt("width");
  if (lq > len)
    throw InputError("local-1d: query block l_q=" + std::to_string(lq) + " is longer than the sequence L=" +
                     std::to_string(len));
  Result r = localResult("local-1d", in, width > 0 ? width : static_cast<int64_t>(std::ceil(std::sqrt(double(len)))));
  const SparseRows pattern = buildPattern(
      "local-1d", len, len,
      [=](int64_t i, std::vector<int32_t>& keys, std::vector<uint8_t>& sets) {
        const int64_t start = i / lq * lq;  // s_b, first position of i's query block
        for (int64_t j = std::max<int64_t>(0, start - lm); j <= i; ++j) {
          keys.push_back(static_cast<int32_t>(j));
          sets.push_back(j >= start ? kOwnBlock : kFlank);
        }
      },
      ctx);
  sparseMultiHeadAttention(in, std::vector<SparseRows>(static_cast<size_t>(in.heads), pattern), ctx, r);
  std::vector<float> block_of(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) block_of[static_cast<size_t>(i)] = static_cast<float>(i / lq);
  addBlockIds(r, block_of);
  return r;
}

// The smallest width w ≥ √L that divides L: the squarest image of L pixels.
int64_t autoWidth(int64_t len) {
  int64_t w = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(len))));
  while (len % w != 0) ++w;
  return w;
}

Result local2d(const Inputs& in, const Params& p, const RunContext& ctx) {
  const int64_t len = in.query().rows();
  const int64_t w = p.getInt("width") > 0 ? p.getInt("width") : autoWidth(len);
  if (len % w != 0)
    throw InputError("local-2d: image width w=" + std::to_string(w) + " does not divide L=" + std::to_string(len) +
                     " (the image is w × L/w pixels; set width to a divisor of L or 0 for auto)");
  const int64_t h = len / w;
  if (p.getInt("b_h") * p.getInt("b_w") > len)
    throw InputError("local-2d: query block b_h×b_w = " + std::to_string(p.getInt("b_h")) + "×" +
                     std::to_string(p.getInt("b_w")) + " has more positions than the sequence L=" +
                     std::to_string(len));
  const int64_t bh = std::min(p.getInt("b_h"), h), bw = std::min(p.getInt("b_w"), w);  // clipped to the image
  const int64_t fh = p.getInt("f_h"), fw = p.getInt("f_w");
  const bool block_order = p.getString("order") == "blocks";
  const int64_t blocks_per_row = (w + bw - 1) / bw;
  auto blockOf = [=](int64_t row, int64_t col) { return row / bh * blocks_per_row + col / bw; };

  Result r = localResult("local-2d", in, w);
  const SparseRows pattern = buildPattern(
      "local-2d", len, len,
      [=](int64_t i, std::vector<int32_t>& keys, std::vector<uint8_t>& sets) {
        const int64_t row = i / w, col = i % w, block = blockOf(row, col);
        // query block rows [r0, r1) × columns [c0, c1)
        const int64_t r0 = row / bh * bh, r1 = std::min(h, r0 + bh);
        const int64_t c0 = col / bw * bw, c1 = std::min(w, c0 + bw);
        // memory block: f_h rows above, f_w columns left and right
        for (int64_t y = std::max<int64_t>(0, r0 - fh); y < r1; ++y)
          for (int64_t x = std::max<int64_t>(0, c0 - fw); x < std::min(w, c1 + fw); ++x) {
            const int64_t j = y * w + x, bj = blockOf(y, x);
            const bool before = block_order ? bj < block || (bj == block && j <= i) : j <= i;
            if (!before) continue;
            keys.push_back(static_cast<int32_t>(j));
            sets.push_back(y >= r0 && x >= c0 && x < c1 ? kOwnBlock : kFlank);
          }
      },
      ctx);
  sparseMultiHeadAttention(in, std::vector<SparseRows>(static_cast<size_t>(in.heads), pattern), ctx, r);
  std::vector<float> block_of(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) block_of[static_cast<size_t>(i)] = static_cast<float>(blockOf(i / w, i % w));
  addBlockIds(r, block_of);
  return r;
}

VariantInfo localInfo(bool two_d) {
  VariantInfo v;
  v.family = "local";
  v.given_qkv = GivenQkv::Heads;
  v.citation = "Parmar et al. 2018, §3.2";
  // No extras view: the block ids are the image view's overlay and the connection counts are in the compare view.
  v.views = {"heatmap", "heads", "image", "compare"};
  if (!two_d) {
    v.name = "local-1d";
    v.title = "Image Transformer, local 1D";
    v.summary = "query blocks of l_q positions attend to themselves and the l_m positions before, causal";
    v.params = {
        {.key = "l_q", .symbol = "l_q", .type = ParamType::Int, .help = "Query block length l_q (≤ L)", .min = 1,
         .max = 1 << 24, .log_scale = true, .def = int64_t{4}},
        {.key = "l_m", .symbol = "l_m", .type = ParamType::Int,
         .help = "Memory: positions before the query block that its queries also attend to", .min = 0,
         .max = 1 << 24, .log_scale = true, .def = int64_t{4}},
        {.key = "width", .symbol = "w", .type = ParamType::Int,
         .help = "Image width of the 2D view, the sequence in raster order (0 = ⌈√L⌉)", .min = 0, .max = 1 << 20,
         .def = int64_t{0}},
    };
    v.run = local1d;
  } else {
    v.name = "local-2d";
    v.title = "Image Transformer, local 2D";
    v.summary = "b_h×b_w query blocks; memory = block + f_h rows above + f_w columns left and right, masked by "
                "generation order";
    v.params = {
        {.key = "width", .symbol = "w", .type = ParamType::Int,
         .help = "Image width w; L must be a multiple of it (0 = the smallest divisor of L that is ≥ √L)", .min = 0,
         .max = 1 << 20, .def = int64_t{0}},
        {.key = "b_h", .symbol = "b_h", .type = ParamType::Int,
         .help = "Query block height (clipped to the image height)", .min = 1, .max = 1 << 16, .log_scale = true,
         .def = int64_t{2}},
        {.key = "b_w", .symbol = "b_w", .type = ParamType::Int,
         .help = "Query block width (clipped to the image width)", .min = 1, .max = 1 << 16, .log_scale = true,
         .def = int64_t{2}},
        {.key = "f_h", .symbol = "f_h", .type = ParamType::Int,
         .help = "Memory flank: rows above the query block", .min = 0, .max = 1 << 16, .def = int64_t{1}},
        {.key = "f_w", .symbol = "f_w", .type = ParamType::Int,
         .help = "Memory flank: columns left and right of the query block", .min = 0, .max = 1 << 16,
         .def = int64_t{1}},
        {.key = "order", .symbol = "order", .type = ParamType::Choice,
         .help = "Generation order for the causal mask: blocks (block by block, raster inside a block, as the paper "
                 "and tensor2tensor) or raster (plain raster order)",
         .def = std::string("blocks"), .choices = {"blocks", "raster"}},
    };
    v.run = local2d;
  }
  return v;
}

}  // namespace

VariantInfo makeLocal1dVariant() { return localInfo(false); }
VariantInfo makeLocal2dVariant() { return localInfo(true); }

}  // namespace attn
