// Real checkpoints in the Hugging Face layout: config.json, model.safetensors
// (or shards with model.safetensors.index.json) and the tokenizer files.
// Each architecture is a family of engine/model/families/family.h (modelFamilies():
// GPT-2, BERT, the LLaMA family, …), run in Eigen with every attention map
// captured, or, for a long text, pooled and summarised as it is made
// (engine/model/blocks/maps.h).
// The face of engine/model: opening a model and running it. The types it
// hands out are declared on the floors below, which include none of this:
// engine/model/checkpoint/checkpoint.h (config, files, info),
// engine/model/blocks/run.h (a run's options and results) and
// engine/model/families/families.h (the family list, next-token predictions).
#pragma once

#include "engine/model/blocks/run.h"
#include "engine/model/checkpoint/checkpoint.h"
#include "engine/model/families/families.h"
#include "engine/run_context.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn {

// Reads config.json's text (`where` names the file in errors): the
// architecture and its sizes, each checked for type and range; a field that
// changes the computation and is not implemented is refused. Throws InputError.
ModelConfig parseConfig(const std::string& text, const std::string& where);

// PATH is a model folder, or a .safetensors file whose folder holds the rest.
ModelFiles filesOnDisk(const std::string& path);

nlohmann::json modelInfoToJson(const ModelInfo& info);

// Reads config, tokenizer and weights; checks every tensor the architecture
// needs is present with the shape the config implies, and that no tensor is
// left unused (extra tensors are an error naming them). Calls
// ctx.progress() per layer; cancellable. Throws InputError naming the file.
std::shared_ptr<const Model> loadModel(const ModelFiles& files, const RunContext& ctx = {});

// Tokenizes `text` and runs the forward pass. Empty text and text longer
// than the positions (without truncate) throw InputError / TooLongError.
ModelRun runModel(const Model& m, const std::string& text, const ModelRunOptions& options = {},
                  const RunContext& ctx = {});
// The forward pass on given ids (BERT: the caller adds [CLS]/[SEP]).
ModelRun runModelIds(const Model& m, const std::vector<int32_t>& ids, const ModelRunOptions& options = {},
                     const RunContext& ctx = {});

// The run induction is read from: half of the model's positions, at most
// kInductionTokens seeded random tokens (kInductionSeed), repeated once,
// every map kept and no LM head.
constexpr int64_t kInductionTokens = 40;
constexpr uint64_t kInductionSeed = 1;
ModelRun inductionRun(const Model& m, const RunContext& ctx = {});

}  // namespace attn
