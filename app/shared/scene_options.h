// What the window shows, as `attnlab gui`'s flags give it: the workspace,
// the variant or the model, parameters, input, view and selection. A lesson
// step is one of these (app/lesson), checked by the same validateScene.
#pragma once

#include "app/shared/input_options.h"
#include "widgets/views/view.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct SceneOptions {
  std::string variant;            // empty: the default scene's (multi-head on a sentence)
  std::vector<std::string> sets;  // KEY=VALUE
  InputOptions input;
  bool input_given = false;       // any INPUT flag was given; else the default text
  std::string view;               // empty: the workspace's first (heatmap / model)
  // The model workspace (a real checkpoint): opened by default, by --model
  // and --pattern; --variant, --set and synthetic or file inputs open the variant workspace.
  bool model_workspace = true;
  std::string model;              // --model PATH (folder or .safetensors, or shipped:NAME); empty: the embedded default
  std::string attention;          // --attention PATH: attention from a file instead of a model (its q, k: input.q, input.k)
  std::string tokens;             // --tokens FILE: its tokens
  bool truncate = false;          // --truncate: cut a model's text longer than its positions
  std::string target;             // --target TEXT: an encoder–decoder's target (empty: the model's own translation)
  std::string image;              // --image FILE: a ViT's picture (a shipped model's "examples/…" or a file)
  std::string corrupted;          // --corrupted TEXT: the patching view's corrupted prompt (empty: none)
  std::string pattern;            // --pattern NAME: the pattern view's variant (its --set values)
  std::string text_b, model_b;    // --text-b, --model-b: the compare view's run B (empty: A's text, A's model)
  int layer = -1, head = -1;      // focused head (variants: the head shown); -1: the default scene's
  int64_t query = -1, key = -1;   // Q/K pair, image-view query; -1: the view's default
  int stage = -1;                 // the walkthrough stage, or the step of an extra played over steps; -1: none
  std::string panel;              // the extras view's panel to frame and scroll to (an extra's name); empty: none
};

// The scene AttnLab opens with (assets/default_scene.json, embedded).
struct DefaultScene {
  std::string variant, text, source_text;
  int64_t dim = 64, heads = 4;
  uint64_t seed = 0;
  // The model workspace: the embedded model on this text, this head focused.
  std::string model_text, model_view, pattern;
  int layer = 0, head = 0;
};
const DefaultScene& defaultScene();

// The input the variants workspace computes for `o`: its INPUT flags when
// given, else the default scene's sentence; the default source sentence
// (cross-attention) where none is given.
InputOptions sceneInput(const SceneOptions& o);

// The view `name` of `info`. Throws InputError: "--view: variant 'x' has no
// 'y' view (it has: …)", or viewOrThrow's for a name that is no view.
const ViewInfo& variantView(const VariantInfo& info, const std::string& name);

// The variant `name` as a pattern applied to a real head. Throws InputError:
// "--pattern: 'x' cannot run on a real head (it has no compare view)".
const VariantInfo& headPattern(const std::string& name);

// Throws InputError naming the flag for an unknown variant, parameter,
// value, view or pattern (the checks that need no computation).
void validateScene(const SceneOptions& o);

}  // namespace attn
