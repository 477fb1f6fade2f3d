// The one registry of variants: name, family, parameters, fitting views and
// the function that computes it. The GUI, the CLI and `attnlab list` all
// iterate it; nothing elsewhere special-cases a variant by name.
//
// Adding a variant: one file in engine/variants/ defining
// `VariantInfo makeXxxVariant()`, plus one line in variants.def beside it.
#pragma once

#include "engine/inputs.h"
#include "engine/params.h"
#include "engine/result.h"
#include "engine/run_context.h"

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attn {

// What a variant reads of the sequence input (Inputs) and what it reads instead.
enum class InputKind {
  SelfAttention,   // x (or q/k/v)
  CrossAttention,  // x (target) and x_kv (source)
  PositionsOnly,   // only L and d are used (positional encodings)
  Image,           // a picture or feature map [C, H, W] of its own (its parameters, else a default); only the seed
  Memory,          // a memory M [N, W] (x, or its parameter's file), with a key and a previous weighting
  OwnSequence,     // a sequence of its own (bits, numbers: its parameter, else L = --length drawn from the seed)
};
std::string inputKindName(InputKind k);  // "self", "cross", "positions", "image", "memory", "sequence"

// What a variant does with queries, keys and values given as they are
// (--q/--k/--v files, a real model's head: Inputs::projected).
enum class GivenQkv {
  Refused,  // it reads an input sequence x and makes its own; given q, k, v are refused in one line
  OneHead,  // used as given, one head over all their columns ([H, L, d_head] files with H > 1 are refused)
  Heads,    // used as given, head h in columns [h·d_head, (h+1)·d_head): no W^q, W^k, W^v, no W^o
};
std::string givenQkvName(GivenQkv g);  // "refused", "one-head", "heads"

struct VariantInfo {
  std::string name;      // CLI name: "scaled-dot-product"
  std::string family;    // "core", "score functions", "positions", ...
  std::string title;     // "Scaled dot-product attention"
  std::string summary;   // formula line shown in the UI
  std::string citation;  // "Vaswani et al. 2017"
  InputKind input = InputKind::SelfAttention;
  GivenQkv given_qkv = GivenQkv::Refused;
  std::vector<ParamSpec> params;
  // The views that can show its result, by their names in the view registry
  // (widgets/views/: "heatmap", "heads", "lines", "extras", "family",
  // "image", "compare", "walkthrough"); the first is its default. A test
  // checks every name is a registered view.
  std::vector<std::string> views;
  std::string row_axis, col_axis;  // titles of the weights' axes; empty: from `input` (weightAxes)
  std::function<Result(const Inputs&, const Params&, const RunContext&)> run;
};

// Parameters several variants share, described once.
ParamSpec causalParam();  // "causal": query i sees keys j ≤ i only
ParamSpec scaleParam();   // "scale": divide scores by √d_k

const std::vector<VariantInfo>& variants();  // in the order of variants.def
const VariantInfo* findVariant(const std::string& name);
const VariantInfo& variantOrThrow(const std::string& name);  // InputError listing the names
std::vector<std::string> families();  // in registry order, unique

// Titles of a result's weight axes: "query" and "key", or for a variant whose
// keys come from another sequence "query (target)" and "key (source)".
struct WeightAxes {
  std::string rows, cols;
};
WeightAxes weightAxes(const Result& r);

// Validates inputs (given q, k, v against given_qkv), times the run (compute_seconds) and fills variant/params.
Result runVariant(const VariantInfo& info, const Inputs& inputs, const Params& params, const RunContext& ctx = {});

// [SECTION] Families: every variant of one family on the same input.
struct FamilyMember {
  std::string variant;
  std::shared_ptr<const Result> result;  // null when the member could not run
  std::string error;                     // why not (InputError text)
};

// `from`'s values for the keys `to` also has (same type, in range); the rest
// take `to`'s defaults. Used when switching variant and for family members.
Params carryParams(const Params& from, const VariantInfo& to);

// Runs every variant of `info`'s family, in registry order, on `inputs`.
// `info` runs with `params` (its errors propagate); the others with
// carryParams(params) — a member that cannot run on those (learned-pe needs
// its file) carries its error instead. Progress is split evenly.
std::vector<FamilyMember> runFamily(const VariantInfo& info, const Inputs& inputs, const Params& params,
                                    const RunContext& ctx = {});

nlohmann::json registryToJson();

}  // namespace attn
