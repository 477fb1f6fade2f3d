// Attention from a file in the model workspace, GUI-free: maps the user
// computed elsewhere (a notebook, another framework, `attnlab model run`)
// read as a run of the text kind's views — the grid of heads, token lines,
// the head table, rollout, the focused head — with no model behind them.
// The window's load job and `attnlab render --attention` read it alike.
#pragma once

#include "engine/model/blocks/run.h"
#include "engine/model/checkpoint/attention_file.h"
#include "engine/run_context.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn {

struct ModelAnalysis;

// What the attention kind reads (ModelScene::inputs): a folder (what `model
// run` or attnlab.save writes: attention.npy, an encoder–decoder's
// cross_attention.npy, or the pooled maps; tokens.json, meta.json) or one bare .npy, .npz or .safetensors array;
// tokens from a file (--tokens); q and k per layer for the views that need them.
struct AttentionInputs {
  std::string path;    // empty: the scene is a model's, not a file's
  std::string tokens;  // JSON list or one token per line; empty: the folder's tokens.json, else numbered positions
  std::string q, k;    // [layers, L, heads·d_head] or [layers, heads, L, d_head] .npy; empty: the folder's q.npy, k.npy if any
  bool operator==(const AttentionInputs&) const = default;
};

// One file's attention, read once: what the views draw, and the maps
// themselves (mapped) for a head shown whole when every map would not fit.
struct AttentionSource {
  AttentionInputs inputs;
  std::string name;          // titles: meta.json's "model" (its short name), else the file or folder name
  std::string architecture;  // meta.json's "architecture" (a `model run` folder's), else ""
  std::string text;          // meta.json's "text", else ""
  std::string described;     // "attention.npy, float16 [12, 12, 512, 512]": what was read
  std::shared_ptr<const ModelAnalysis> analysis;
  std::optional<AttentionMaps> maps;  // the file's maps (none: a folder of pooled maps only)
  bool scores = false;                // the file holds scores: a head read whole takes each row's softmax
};

// Reads `in` (InputError naming the file, the field and what was expected:
// a shape that fits no layout, a token count that does not match, rows that
// do not sum to 1, NaN or Inf, q or k of another shape). Every map is kept
// when all fit in memory; otherwise the maps are pooled and summarised head
// by head and a focused head is read whole from the file (attentionHeadMap).
std::shared_ptr<const AttentionSource> readAttention(const AttentionInputs& in, const RunContext& ctx = {});

// Whether `path` is attention rather than a model (File ▸ Open takes both):
// an .npy or .npz, a .safetensors with no config.json beside it, or a folder
// holding attention.npy or attention_pooled.npy and no config.json.
bool isAttentionPath(const std::string& path);

// Head (layer, head) of the file at full resolution, checked like the rest.
Mat attentionHeadMap(const AttentionSource& a, int64_t layer, int64_t head);

// A short name for a model label: a folder's or file's name, or a shipped
// model's name without "shipped:" (the figures' titles).
std::string shortModelName(const std::string& label);

}  // namespace attn
