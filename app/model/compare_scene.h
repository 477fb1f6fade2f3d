// Two runs of a text model compared in the model workspace, GUI-free: run B
// (a second prompt, a second checkpoint of the same shape, or both) beside
// the scene's own run A, and their comparison (engine/model/analysis/run_compare.h),
// for the compare view in the window and `attnlab render --view compare`.
#pragma once

#include "engine/model/analysis/run_compare.h"
#include "engine/model/model.h"
#include "engine/run_context.h"

#include <memory>
#include <string>

namespace attn {

// What run B reads (ModelScene::inputs): its text (empty: A's) and its
// model (a path as `--model` takes it; empty: A's). One of them is needed.
struct CompareInputs {
  std::string text, model;
  bool operator==(const CompareInputs&) const = default;
};

struct CompareAnalysis {
  CompareInputs inputs;                  // as computed
  std::shared_ptr<const Model> model_b;  // B's model (A's when inputs.model is empty)
  std::string text_b;                    // B's text as run
  ModelRun run_b;
  RunComparison comparison;
};

// Runs B and compares it with `a` (a run of `model_a` that kept every map).
// `previous` (may be null) lends its loaded model B while the path is the
// same. Throws InputError: no second input, a checkpoint of another shape or
// kind, B's text too long, either run without every map.
std::shared_ptr<const CompareAnalysis> compareSceneAnalysis(const std::shared_ptr<const Model>& model_a, const ModelRun& a,
                                                            const std::string& text_a, const CompareInputs& in,
                                                            bool truncate, const CompareAnalysis* previous,
                                                            const RunContext& ctx);

// The checkpoint at `path` (a text model), loaded, and refused unless it can
// be compared with `a` (checkComparable). Throws InputError.
std::shared_ptr<const Model> loadComparableModel(const Model& a, const std::string& path, const RunContext& ctx = {});

}  // namespace attn
