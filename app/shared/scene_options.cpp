#include "app/shared/scene_options.h"

#include "app/export/model_kinds.h"
#include "app/model/embedded_model.h"
#include "app/model/model_scene.h"
#include "engine/error.h"

#include <algorithm>

namespace attn {

const ViewInfo& variantView(const VariantInfo& info, const std::string& name) {
  const ViewInfo& v = viewOrThrow(name);
  if (std::find(info.views.begin(), info.views.end(), name) != info.views.end()) return v;
  std::string names;
  for (const std::string& k : info.views) names += (names.empty() ? "" : ", ") + k;
  throw InputError("--view: variant '" + info.name + "' has no '" + name + "' view (it has: " + names + ")");
}

const VariantInfo& headPattern(const std::string& name) {
  const VariantInfo& pattern = variantOrThrow(name);
  const std::vector<const VariantInfo*> patterns = headPatternVariants();
  if (std::find(patterns.begin(), patterns.end(), &pattern) == patterns.end())
    throw InputError("--pattern: '" + pattern.name + "' cannot run on a real head (it has no compare view)");
  return pattern;
}

void validateScene(const SceneOptions& o) {
  if (!o.model.empty() && !o.variant.empty())
    throw InputError("--model and --variant: choose one workspace (a real model or a variant)");
  if (!o.variant.empty()) {
    const VariantInfo& info = variantOrThrow(o.variant);
    resolveParams(info, o.sets);
    if (!o.model_workspace && !o.view.empty()) variantView(info, o.view);
  }
  if (!o.attention.empty()) {
    if (!o.model.empty() || !o.variant.empty())
      throw InputError(std::string("--attention and ") + (o.model.empty() ? "--variant" : "--model") +
                       ": choose one (attention from a file, a model or a variant)");
    if (!o.target.empty() || !o.image.empty() || !o.pattern.empty() || o.truncate || !o.input.text.empty())
      throw InputError(!o.target.empty() ? "--target: a model's input; attention from a file has its tokens (--tokens)"
                       : !o.image.empty() ? "--image: a model's input; attention from a file has its tokens (--tokens)"
                       : !o.pattern.empty() ? "--pattern: runs on a model's q and k in its pass; attention from a file has none"
                       : o.truncate ? "--truncate: cuts a model's text; attention from a file is drawn whole"
                                    : "--text: attention from a file has its own tokens (--tokens FILE names them)");
    if (!o.text_b.empty() || !o.model_b.empty())
      throw InputError(std::string(o.text_b.empty() ? "--model-b" : "--text-b") +
                       ": run B of a model's compare view; attention from a file has no model to run again");
  } else if (!o.tokens.empty()) {
    throw InputError("--tokens: names the tokens of attention from a file (--attention PATH)");
  }
  if ((!o.text_b.empty() || !o.model_b.empty()) && !o.model_workspace)
    throw InputError(std::string(o.text_b.empty() ? "--model-b" : "--text-b") + ": run B of a model's compare view (the model workspace)");
  if (o.model.rfind(kShippedPrefix, 0) == 0) modelFiles(o.model);  // an unknown shipped name, before any window opens
  if (o.truncate && !o.model_workspace) throw InputError("--truncate: cuts a model's text (the model workspace); a variant's text is never cut");
  if (o.model_workspace && !o.view.empty()) checkModelViewName(o.view);
  if (!o.model_workspace && !o.view.empty()) viewOrThrow(o.view);
  if (!o.pattern.empty()) {
    const VariantInfo& pattern = headPattern(o.pattern);
    if (o.model_workspace) resolveParams(pattern, o.sets);
  }
  if (o.layer < -1 || o.head < -1 || o.query < -1 || o.key < -1 || o.stage < -1)
    throw InputError("--layer, --head, --query, --key: expected a number ≥ 0");
}

}  // namespace attn
