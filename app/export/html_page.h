// The interactive page (`render --format html`): one offline HTML file of a
// model's attention. Each kind says what the page holds (PageContent: its
// kinds of attention, their maps, rollout and head table, a ViT's picture);
// this file stores the maps one byte per weight on a log scale, gzips and
// base64-encodes them, and writes them with the page's own markup, style and
// script (app/export/page/, embedded at build time). The page decodes them
// with the browser's DecompressionStream and draws on canvases: no library,
// no request beyond the file itself.
#pragma once

#include "engine/model/blocks/run.h"
#include "engine/tensor.h"
#include "widgets/colormap.h"

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attn {

// [SECTION] The byte per weight

// w ≥ 10^−4 → 1 … 255 on a log scale over four decades (255: 1), rounded to the
// nearest step; smaller → 0 or 1, whichever is nearer. Read back:
// ŵ = 10^(−4 + 4·(b − 1)/254), 0 for b = 0.
uint8_t weightByte(float w);
float byteWeight(uint8_t b);
// The bound every weight is read back within: |ŵ − w| ≤ max(kPageRelative·w, kPageAbsolute)
// (half a step of 4/254 decades, 10^(2/254) − 1 < 1.83 %; below 10^−4, at most 10^−4).
constexpr double kPageRelative = 0.0183, kPageAbsolute = 1e-4;

// [SECTION] What a kind puts in the page

// One kind of attention: a text's self-attention, or one of an encoder–decoder's three.
struct PageMaps {
  std::string name, label;              // "self", "self-attention"; "cross", "cross-attention, target → source"
  std::vector<std::string> rows, cols;  // query and key tokens
  int64_t layers = 0, heads = 0;
  bool causal = false;             // rows == cols and zero above the diagonal: the page keeps the lower triangle
  std::vector<const Mat*> maps;    // [layer·heads + head] [rows, cols]; null: the page holds it pooled only
  // A long text: every head pooled (mean over blocks of `pooled_block` positions), [layer·heads + head] [n, n].
  std::vector<const Mat*> pooled;
  int64_t pooled_block = 0;
  std::vector<std::string> block_labels;  // "0–31", …
  std::vector<const Mat*> rollout;        // per layer [rows, rows]; empty: none
  std::vector<std::string> table_columns;
  std::vector<std::vector<std::string>> table_rows;  // one per head, as the figures print the cells
  bool log_scale = false;  // the figures' colour scale for it: log (a ViT, 512 keys or more), else linear
};

struct PageContent {
  std::string kind;   // the kind's name (modelPage sets it)
  std::string title;  // "gpt2 — 12 layers × 12 heads"
  std::string subtitle;  // what it read, plain text
  std::string note;      // what the page leaves out (a long text's pooled heads), "" when nothing
  std::vector<PageMaps> sets;
  // A ViT's picture as the model read it [H, W, 3] in [0, 1] (null otherwise), its patches down and across.
  const Array* picture = nullptr;
  int64_t grid_h = 0, grid_w = 0;
  std::deque<Mat> owned;  // maps made for the page (a pooled run's heads recomputed whole)
};

// How the page opens: the focused head of a kind of attention, and the colour map.
struct PageOptions {
  std::string set;  // the PageMaps::name the page opens on; empty: the first
  int64_t layer = 0, head = 0;
  Colormap colormap = Colormap::Viridis;
  int64_t max_bytes = int64_t{64} << 20;
  std::optional<std::string> title;  // instead of the kind's
};

// What the command line asks of the page.
struct PageRequest {
  std::vector<std::pair<int64_t, int64_t>> heads;  // --heads: a long text's heads held whole
  int64_t whole_limit = 1024;  // longer texts: pooled maps plus `heads`
};
// [SECTION] Writing

// The whole page as text. Throws InputError for a focus outside the first
// kind of attention (naming --layer, --head), --max-bytes over kMaxPageBytes, or a page
// over o.max_bytes (naming --max-bytes and the value that admits it).
std::string htmlPage(const PageContent& content, const PageOptions& o);
// Above this a browser cannot hold the maps' text (V8's strings stop at 2^29 characters).
constexpr int64_t kMaxPageBytes = int64_t{384} << 20;

struct ModelOutput;
// The page of every head of a model's output (`render --format html`, the
// window's File ▸ Export page): its kind's content (ModelKindInfo::page) through htmlPage.
std::string modelPage(const ModelOutput& out, const PageRequest& r, const PageOptions& o);

}  // namespace attn
