// The INPUT flags of the command-line contract, shared by compute, render
// and gui, and their resolution into engine Inputs.
#pragma once

#include "engine/inputs.h"
#include "engine/registry.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn {

struct InputOptions {
  uint64_t seed = 0;
  int64_t length = 12;
  int64_t source_length = 0;  // 0: L + 4
  int64_t dim = 64;
  int64_t heads = 4;
  std::string preset = "repeated";
  std::string text, source_text;  // whitespace tokens with hashed embeddings
  std::string x, q, k, v;         // .npy paths
};

void addInputFlags(CLI::App& cmd, InputOptions& o);

// A text given on the command line (--text, --source-text, --target) that
// is empty is refused, as no text is not: "--target: empty (leave --target
// out for the model's own translation)"; `left_out` is what no flag gives.
CLI::Validator nonEmptyText(const std::string& left_out);
// --truncate of the commands that run a model on text (model run, render,
// gui): cut a text longer than the model's positions instead of refusing it.
void addTruncateFlag(CLI::App& cmd, bool& truncate);

// Synthetic unless --text or files were given. Throws InputError.
Inputs resolveInputs(const InputOptions& o);

// KEY=VALUE pairs from --set, applied to the variant's defaults. Throws InputError.
Params resolveParams(const VariantInfo& info, const std::vector<std::string>& sets);

}  // namespace attn
