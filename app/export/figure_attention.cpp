// The attention kind: maps from the user's own files (a notebook's tensors,
// another framework's, `attnlab model run`'s folder), drawn by the text
// kind's views — every view that reads only maps, and Q/K where the file
// comes with q and k. No model: no pattern view, no predictions, no view of which heads matter.
#include "app/export/model_kinds.h"

#include "engine/error.h"

#include <string>
#include <vector>

namespace attn {

namespace {

// What the command line gives: the file, its tokens, q and k (--text, --target, --image are a model's).
ModelOutput attentionRun(const ModelRunRequest& r) {
  if (!r.text.empty()) throw InputError("--text: attention from a file has its own tokens (--tokens FILE names them)");
  if (r.target) throw InputError("--target: only encoder\xE2\x80\x93" "decoder models (T5, BART) read a target");
  if (!r.image.empty()) throw InputError("--image: only vision models (ViT) read a picture");
  if (r.attention_of) throw InputError("--attention-of: only encoder\xE2\x80\x93" "decoder models (T5, BART) have more than one attention");
  if (r.truncate) throw InputError("--truncate: cuts a model's text; attention from a file is drawn whole");
  ModelScene scene;
  scene.inputs.attention = {r.path, r.tokens, r.q, r.k};
  scene.source = readAttention(scene.inputs.attention);
  scene.layer = r.layer;
  scene.head = r.head;
  return computeModelScene(scene, nullptr, {});
}

// As a text model's: "name (architecture), N tokens: "text"" where the file says them.
std::string attentionSubtitle(const ModelOutput& out) {
  const AttentionSource& s = *out.source;
  const ModelRun& r = s.analysis->run;
  const std::string tokens = r.query_tokens.empty() ? std::to_string(r.tokens.size()) + " tokens"
                                                    : "cross-attention, " + std::to_string(r.query_tokens.size()) +
                                                          " target over " + std::to_string(r.tokens.size()) + " source tokens";
  return s.name + (s.architecture.empty() ? "" : " (" + s.architecture + ")") + ", " + tokens +
                         (s.text.empty() ? "" : ": \"" + quotedStart(s.text) + "\"");
}

std::vector<ModelKindView> attentionViews() {
  std::vector<ModelKindView> views;
  for (const ModelKindView& v : textKindViews())
    // A pattern runs on a model's q and k, in its pass; which heads matter, on its edited passes; a comparison
    // runs the model again on run B.
    if (v.name != "pattern" && v.name != "compare" && probeOfView(v.name).empty()) views.push_back(v);
  return views;
}

}  // namespace

extern const ModelKindInfo kAttentionKind = {
    "attention",
    "attention from a file",
    "attention maps from your own files (--attention PATH): a folder `model run` or the Python package wrote, or one "
    ".npy, .npz or .safetensors array [L, L], [heads, L, L], [layers, heads, L, L] or [layers, heads, Lq, Lk]",
    [](const ModelConfig&) { return false; },  // a file of maps, never a checkpoint
    attentionRun,
    attentionSubtitle,
    attentionViews(),
    textKindPage,
};

}  // namespace attn
