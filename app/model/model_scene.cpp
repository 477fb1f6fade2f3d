#include "app/model/model_scene.h"

#include "app/model/embedded_model.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/model/blocks/maps.h"
#include "engine/model/kinds/seq2seq.h"
#include "engine/model/kinds/vision.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace attn {

// [SECTION] Scene and output

std::string probeOfView(const std::string& view) {
  return view == "importance" || view == "lens" || view == "attribution" || view == "patching" ? view : "";
}

bool sameModelScene(const ModelScene& a, const ModelScene& b) {
  if (a.model != b.model || a.source != b.source || a.text != b.text || a.truncate != b.truncate || a.pattern != b.pattern ||
      a.compare != b.compare ||
      a.predict_at != b.predict_at || a.generation != b.generation || a.generation_steps != b.generation_steps ||
      a.maps != b.maps || a.inputs != b.inputs || a.probe != b.probe || a.corrupted != b.corrupted ||
      a.value_weighted != b.value_weighted)
    return false;
  if ((a.pattern || a.focus_whole || b.focus_whole || a.probe == "importance") && (a.layer != b.layer || a.head != b.head))
    return false;
  return !a.pattern || (a.pattern_variant == b.pattern_variant && a.pattern_params == b.pattern_params);
}

ModelOutput generateModelScene(const ModelScene& s, const GenerateOptions& o, const RunContext& ctx,
                               const std::function<void(std::shared_ptr<const ModelOutput>)>& publish) {
  if (!s.model) throw InputError("model: no model is loaded (File \xE2\x96\xB8 Open Model\xE2\x80\xA6)");
  GenerateOptions options = o;
  options.truncate = s.truncate;
  RunContext quiet = ctx;  // the progress counts new tokens (generate's own), not each step's passes
  quiet.on_progress = nullptr;
  ModelScene step = s;
  std::shared_ptr<const ModelOutput> last;  // the newest partial output: its induction run is reused
  const Generation g = generate(*s.model, s.text, options, ctx, [&](const Generation& partial) {
    step.generation = std::make_shared<const Generation>(partial);
    step.generation_steps = static_cast<int64_t>(partial.tokens.size());
    last = std::make_shared<const ModelOutput>(computeModelScene(step, last.get(), quiet));
    publish(last);
  });
  // The last partial already holds every token: only the generation's totals (EOS, seconds) are new.
  ModelOutput out = last ? *last : computeModelScene(step, nullptr, quiet);
  out.generation = std::make_shared<const Generation>(g);
  return out;
}

const VariantInfo* defaultPatternVariant() {
  const std::vector<const VariantInfo*> v = headPatternVariants();
  return v.empty() ? nullptr : v.front();
}

bool hasModelRun(const ModelOutput& o) { return o.analysis || o.seq2seq || o.vision; }

void setModelInputs(ModelScene& s, const std::string& model_path, const std::string& target, const std::string& image) {
  s.inputs.seq2seq = {target, target.empty()};
  const std::vector<std::string> examples = modelExamplePictures(model_path);
  s.inputs.vision.example = image.empty() ? !examples.empty()
                                          : model_path.rfind(kShippedPrefix, 0) == 0 && image.rfind("examples/", 0) == 0;
  s.inputs.vision.picture = !image.empty() ? image : examples.empty() ? "" : examples.front();
}

void startOnModel(ModelScene& s, const std::string& path) {
  if (!s.model) return;
  if (isVisionModel(*s.model) && s.inputs.vision.picture.empty()) {
    const std::vector<std::string> examples = modelExamplePictures(path);
    if (!examples.empty()) s.inputs.vision = {examples.front(), true};
  }
  if (isEncoderDecoder(*s.model) && s.inputs.seq2seq.target.empty()) s.inputs.seq2seq.translate = true;
  if (isModelExampleText(s.text)) s.text = modelExampleText(path);
}

std::vector<std::string> pooledBlockLabels(const ModelRun& run) {
  const int64_t L = static_cast<int64_t>(run.tokens.size());
  std::vector<std::string> out;
  for (int64_t b = 0; b < run.pooled.n; ++b)
    out.push_back(std::to_string(b * run.pooled.block) + "\xE2\x80\x93" + std::to_string(std::min(L, (b + 1) * run.pooled.block) - 1));
  return out;
}

Mat wholeHeadMap(const ModelOutput& out, int64_t layer, int64_t head, const RunContext& ctx) {
  return out.source ? attentionHeadMap(*out.source, layer, head) : headMap(out.analysis->run, layer, head, ctx);
}

namespace {

// Every map as α_ij ‖v_j^h W_O^h‖ (valueWeightedMap), each row scaled to sum 1
// so the views' scales and rollout read it as they read weights.
void valueWeightMaps(ModelRun& run) {
  if (run.maps != MapsChoice::Mode::All)
    throw InputError("value-weighted maps need every map, and this text's are pooled: shorten it, or turn value-weighting off");
  for (int64_t l = 0; l < run.layers; ++l)
    for (int64_t h = 0; h < run.heads; ++h) {
      Mat vw = valueWeightedMap(run, l, h);  // [L, L]
      for (int64_t i = 0; i < vw.rows(); ++i)
        if (const float z = vw.row(i).sum(); z > 0) vw.row(i) /= z;
      run.attention[static_cast<size_t>(l)][static_cast<size_t>(h)] = std::move(vw);
    }
}

}  // namespace

void finishAnalysis(ModelAnalysis& a) {
  if (a.run.maps != MapsChoice::Mode::All) {
    a.pooled = true;
    const PooledMaps& p = a.run.pooled;
    a.thumbnails.resize(static_cast<size_t>(a.run.layers));
    for (int64_t l = 0; l < a.run.layers; ++l)
      for (int64_t h = 0; h < a.run.heads; ++h)
        a.thumbnails[static_cast<size_t>(l)].push_back(p.mean[static_cast<size_t>(l * a.run.heads + h)]);
    a.block_labels = pooledBlockLabels(a.run);
  }
  if (!a.pooled && a.run.query_tokens.empty()) a.rollout = attentionRollout(a.run.attention);  // self-attention's
  for (const Mat& r : a.rollout) {
    const int64_t skip = a.run.causal && r.rows() > 1 ? 1 : 0;
    a.rollout_stats.push_back(ValueStats::of(r.data() + skip * r.cols(), (r.rows() - skip) * r.cols()));
    if (skip && a.rollout_mask.size() == 0) {
      a.rollout_mask = Mat::Ones(r.rows(), r.cols());
      a.rollout_mask.row(0).setZero();
    }
  }
}

namespace {

// A pooled run's focused head, whole: the previous output's while it is the
// same run and head, else wholeHeadMap (its error shown in the view).
void focusWhole(ModelOutput& out, const ModelScene& s, const ModelOutput* previous, const RunContext& ctx) {
  const ModelRun& r = out.analysis->run;
  out.focus_layer = std::clamp<int64_t>(s.layer, 0, r.layers - 1);
  out.focus_head = std::clamp<int64_t>(s.head, 0, r.heads - 1);
  if (previous && previous->analysis == out.analysis && previous->focus_layer == out.focus_layer &&
      previous->focus_head == out.focus_head) {
    out.focus_map = previous->focus_map;
    out.focus_error = previous->focus_error;
    return;
  }
  try {
    out.focus_map = std::make_shared<const Mat>(wholeHeadMap(out, out.focus_layer, out.focus_head, ctx));
  } catch (const InputError& e) {
    out.focus_error = e.what();
  }
}

}  // namespace

namespace {

// The analysis of the view of which heads matter that the scene shows, for
// the model's top token after predicted_at; `same`: the previous output of
// the same run and query, whose analyses are reused.
void probeHeads(ModelOutput& out, const ModelScene& s, const ModelOutput* same, const RunContext& ctx) {
  const Model& m = *s.model;
  const std::vector<int32_t>& ids = out.analysis->run.ids;
  if (same) {  // the same run and query: what other views computed stays (switching views back costs nothing)
    out.importance = same->importance;
    out.lens = same->lens;
    out.attribution = same->attribution;
    if (same->corrupted == s.corrupted) out.patching = same->patching, out.corrupted = same->corrupted;
    if (same->ablation && same->ablation->ablated.heads == std::vector<std::pair<int64_t, int64_t>>{{s.layer, s.head}})
      out.ablation = same->ablation;
  }
  try {
    if (out.predictions.empty()) needsPrediction(m);
    // the model's own top token after the query: the side panel's first
    const Target target{out.predicted_at, out.predictions.at(0).id, out.predictions.at(0).token};
    if (s.probe == "importance") {
      if (!out.importance)
        out.importance = std::make_shared<const ImportanceGrid>(importanceGrid(m, ids, HeadAblation::Mode::Zero, target, ctx));
      if (!out.ablation)
        out.ablation = std::make_shared<const AblationEffect>(
            ablationEffect(m, ids, {HeadAblation::Mode::Zero, {{s.layer, s.head}}}, target, kPredictions, ctx));
    } else if (s.probe == "lens") {
      std::vector<int64_t> positions;
      for (int64_t i = std::max<int64_t>(0, out.predicted_at - kLensPositions + 1); i <= out.predicted_at; ++i)
        positions.push_back(i);
      if (!out.lens) out.lens = std::make_shared<const LogitLens>(logitLens(m, ids, kPredictions, ctx, positions));
    } else if (s.probe == "patching") {
      if (s.corrupted.empty())
        throw InputError("the patching view needs a corrupted prompt of as many tokens as the text: type one under "
                         "CORRUPTED PROMPT (--corrupted on the command line)");
      out.corrupted = s.corrupted;
      if (!out.patching)
        out.patching = std::make_shared<const PatchingResult>(
            activationPatching(m, ids, textIds(m, s.corrupted, s.truncate), target, {}, ctx));
    } else if (s.probe == "attribution") {
      if (!out.attribution)
        out.attribution = std::make_shared<const LogitAttribution>(directLogitAttribution(m, ids, target, ctx));
    }
  } catch (const InputError& e) {
    out.probe_error = e.what();  // shown in the view (a model without an LM head, a post-norm family)
  }
}

}  // namespace

ModelOutput computeModelScene(const ModelScene& s, const ModelOutput* previous, const RunContext& ctx) {
  ModelOutput out;
  out.text = s.text;
  out.inputs = s.inputs;
  if (s.source) {  // attention from a file: the analysis read when it was opened
    out.source = s.source;
    out.text = s.source->text;
    out.analysis = s.source->analysis;
    out.maps = s.maps;
    if (out.analysis->pooled) focusWhole(out, s, previous, ctx);
    return out;
  }
  if (!s.model) throw InputError("model: no model is loaded (File ▸ Open Model…)");
  const Model& m = *s.model;
  out.model = s.model;
  out.truncate = s.truncate;
  out.files = s.files;
  if (isEncoderDecoder(m) || isVisionModel(m)) {
    // Their own runs: reused while the source, target and picture are the same (a new focus costs nothing).
    const bool same = previous && previous->model == s.model && previous->text == s.text;
    try {
      if (isVisionModel(m)) out.vision = visionSceneAnalysis(m, s.files.get(), s.inputs.vision, same ? previous->vision : nullptr, ctx);
      else out.seq2seq = seq2seqSceneAnalysis(m, s.text, s.inputs.seq2seq, same ? previous->seq2seq : nullptr, ctx);
    } catch (const InputError& e) {
      out.error = e.what();  // shown in the view (an empty source, an unreadable picture), the scene stays editable
    }
    return out;
  }
  out.generation = s.generation;
  out.generation_steps = s.generation ? std::clamp<int64_t>(s.generation_steps, 0, static_cast<int64_t>(s.generation->tokens.size())) : 0;
  const bool same_model = previous && previous->model == s.model;
  out.maps = s.maps;
  out.value_weighted = s.value_weighted;
  if (same_model && previous->text == s.text && previous->truncate == s.truncate && previous->analysis &&
      previous->maps == s.maps && previous->value_weighted == s.value_weighted &&
      previous->generation == out.generation && previous->generation_steps == out.generation_steps) {
    out.analysis = previous->analysis;
    out.repeated = previous->repeated;
  } else {
    ModelRunOptions options;
    options.truncate = s.truncate;
    options.top_k = 0;  // predictions below, at the selected query only
    options.maps.mode = s.maps;  // Auto: every map when they fit, else pooled (maps on demand)
    if (s.value_weighted) {
      if (out.generation) throw InputError("value-weighted maps: not for a generation (run the text instead)");
      options.edit.value_norms = true;
    }
    auto a = std::make_shared<ModelAnalysis>();
    try {
      a->run = out.generation ? generationRun(*out.generation, static_cast<size_t>(out.generation_steps))
                              : runModel(m, s.text, options, ctx);
    } catch (const TooLongError& e) {
      out.too_long_tokens = e.tokens;
      out.too_long_limit = e.limit;
      out.too_long_message = e.what();
      return out;
    }
    // Induction needs a repeated sequence: run once per model.
    if (same_model && previous->repeated) {
      out.repeated = previous->repeated;
    } else {
      out.repeated = std::make_shared<const ModelRun>(inductionRun(m, ctx));
    }
    a->summaries = summarizeHeads(a->run, *out.repeated);
    if (s.value_weighted) valueWeightMaps(a->run);
    a->every_map_limit = longestTextWithEveryMap(m);
    finishAnalysis(*a);
    out.analysis = std::move(a);
  }
  const int64_t L = static_cast<int64_t>(out.analysis->run.ids.size());
  out.predicted_at = s.predict_at < 0 ? L - 1 : std::min(s.predict_at, L - 1);
  const bool same_run = previous && previous->analysis == out.analysis;
  if (same_run && previous->predicted_at == out.predicted_at)
    out.predictions = previous->predictions;
  else
    out.predictions = std::move(predictTokens(m, out.analysis->run.hidden, {out.predicted_at}, kPredictions,
                                              ctx)[static_cast<size_t>(out.predicted_at)]);
  if (out.analysis->pooled) focusWhole(out, s, previous, ctx);
  if (!s.probe.empty()) probeHeads(out, s, same_run && previous->predicted_at == out.predicted_at ? previous : nullptr, ctx);
  if (s.compare) {
    // Reused while run A and B's inputs are the same (a new focused head costs nothing).
    const CompareAnalysis* before = previous ? previous->compare.get() : nullptr;
    if (before && same_run && before->inputs == s.inputs.compare && previous->truncate == s.truncate) {
      out.compare = previous->compare;
    } else {
      try {
        if (out.analysis->pooled) throw InputError(everyMapRefusal(*out.analysis, "the compare view"));
        if (s.value_weighted)  // run B's maps are weights: the two would not be the same measure
          throw InputError("the compare view compares attention weights; turn value-weighting off");
        out.compare = compareSceneAnalysis(s.model, out.analysis->run, s.text, s.inputs.compare, s.truncate, before, ctx);
      } catch (const InputError& e) {
        out.compare_error = e.what();
      }
    }
  }
  if (s.pattern) {
    out.has_pattern = true;
    const VariantInfo* v = findVariant(s.pattern_variant);
    if (!v) {
      out.pattern_error = "no pattern variant '" + s.pattern_variant + "'";
      return out;
    }
    if (out.analysis->pooled) {
      out.pattern_error = everyMapRefusal(*out.analysis, "the pattern view");
      return out;
    }
    try {
      out.pattern = std::make_shared<const HeadPattern>(
          applyPatternToHead(*v, s.pattern_params, out.analysis->run, s.layer, s.head, ctx));
    } catch (const InputError& e) {
      out.pattern_error = e.what();
    }
  }
  return out;
}

// [SECTION] Results

namespace {

Result tokensResult(const ModelRun& run, const std::string& title) {
  Result r;
  r.variant = title;
  r.q_tokens = queryTokens(run);
  r.k_tokens = run.tokens;
  if (run.causal && run.query_tokens.empty()) r.mask = causalMask(static_cast<int64_t>(run.tokens.size()), static_cast<int64_t>(run.tokens.size()));
  return r;
}

Extra tokenValues(const std::string& name, const std::string& label, const Array& values) {
  Extra e;
  e.name = name;
  e.label = label;
  e.kind = ExtraKind::TokenValues;
  e.value = values;
  return e;
}

Extra scalar(const std::string& name, const std::string& label, double v) {
  Extra e;
  e.name = name;
  e.label = label;
  e.kind = ExtraKind::Scalar;
  e.value = Array{{1}, {static_cast<float>(v)}};
  return e;
}

}  // namespace

Result layerResult(const ModelRun& run, int64_t layer, const std::string& title) {
  Result r = tokensResult(run, title);
  r.weights = run.attention.at(static_cast<size_t>(layer));
  r.computeStats();
  return r;
}

std::string headLabel(int64_t layer, int64_t head) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "L%lld H%lld", static_cast<long long>(layer), static_cast<long long>(head));
  return buf;
}

std::string layersByHeads(int64_t layers, int64_t heads) {
  return std::to_string(layers) + (layers == 1 ? " layer" : " layers") + " \xC3\x97 " + std::to_string(heads) +
         (heads == 1 ? " head" : " heads");
}

std::vector<std::string> layerHeadNames(const ModelRun& run) {
  std::vector<std::string> names;
  const int64_t group = run.kv_heads > 0 && run.kv_heads < run.heads ? run.heads / run.kv_heads : 1;
  for (int64_t l = 0; l < run.layers; ++l)
    for (int64_t h = 0; h < run.heads; ++h)
      names.push_back(headLabel(l, h) + (group > 1 ? " kv " + std::to_string(h / group) : std::string()));
  return names;
}

bool thumbnailsReadable(float w, float h, int64_t layers, int64_t heads) {
  const float across = w / static_cast<float>(std::max<int64_t>(1, heads));
  const float down = h > 0 ? h / static_cast<float>(std::max<int64_t>(1, layers)) : across;
  return std::min(across, down) >= kReadableThumbnail;
}

const std::vector<std::string>& headMeasureNames() {
  static const std::vector<std::string> names = {"sink", "previous-token", "induction", "entropy", "distance"};
  return names;
}

namespace {
// The index of `name` in `names`; else an InputError naming `flag` and the names.
int nameIndex(const std::vector<std::string>& names, const std::string& name, const std::string& flag) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    throw InputError(flag + ": expected one of " + list + ", got '" + name + "'");
  }
  return static_cast<int>(it - names.begin());
}
}  // namespace

HeadMeasure headMeasureFromName(const std::string& name, const std::string& flag) {
  return static_cast<HeadMeasure>(nameIndex(headMeasureNames(), name, flag));
}

std::string headMeasureLabel(HeadMeasure m) {
  switch (m) {
    case HeadMeasure::Sink: return "first-token share";
    case HeadMeasure::PreviousToken: return "previous-token score";
    case HeadMeasure::Induction: return "induction score";
    case HeadMeasure::Entropy: return "entropy (nats)";
    case HeadMeasure::Distance: return "mean distance (tokens)";
  }
  return "";
}

Result headMeasureResult(const ModelAnalysis& a, HeadMeasure m, const std::string& title, bool heads_down) {
  const ModelRun& run = a.run;
  Result r;
  r.variant = title;
  Mat grid = Mat::Zero(run.layers, run.heads);  // [layers, heads]
  for (const HeadSummary& h : a.summaries) {
    const double v = m == HeadMeasure::Sink            ? h.sink
                     : m == HeadMeasure::PreviousToken ? h.previous_token
                     : m == HeadMeasure::Induction     ? h.induction
                     : m == HeadMeasure::Entropy       ? h.entropy
                                                       : h.mean_distance;
    grid(h.layer, h.head) = static_cast<float>(v);
  }
  for (int64_t l = 0; l < run.layers; ++l) r.q_tokens.push_back("L" + std::to_string(l));
  for (int64_t h = 0; h < run.heads; ++h) r.k_tokens.push_back("H" + std::to_string(h));
  r.weights = {grid};
  r.weights_label = headMeasureLabel(m);
  r.weights_row_axis = "layer";
  r.weights_col_axis = "head";
  if (heads_down) {
    r.weights = {Mat(grid.transpose())};
    std::swap(r.q_tokens, r.k_tokens);
    std::swap(r.weights_row_axis, r.weights_col_axis);
  }
  r.computeStats();
  return r;
}

Result allHeadsResult(const ModelRun& run, const std::string& title) {
  Result r = tokensResult(run, title);
  for (const std::vector<Mat>& layer : run.attention) r.weights.insert(r.weights.end(), layer.begin(), layer.end());
  r.computeStats();
  return r;
}

Result pooledHeadsResult(const ModelAnalysis& a, const std::string& title) {
  Result r;
  r.variant = title;
  r.q_tokens = r.k_tokens = a.block_labels;
  for (const std::vector<Mat>& layer : a.thumbnails) r.weights.insert(r.weights.end(), layer.begin(), layer.end());
  r.weights_label = "mean weight of " + std::to_string(a.run.pooled.block) + "\xC3\x97" +
                    std::to_string(a.run.pooled.block) + " positions";
  r.computeStats();
  return r;
}

std::string everyMapRefusal(const ModelAnalysis& a, const std::string& view) {
  return view + " reads every map of the run: this text's " + std::to_string(a.run.ids.size()) +
         " tokens were pooled (every map would not fit in memory); texts up to " + std::to_string(a.every_map_limit) +
         " tokens give it";
}

Result rolloutResult(const ModelAnalysis& a, int64_t layer, const std::string& title) {
  Result r = tokensResult(a.run, title);
  r.weights = {a.rollout.at(static_cast<size_t>(layer))};
  r.weights_label = "rollout weight";
  r.mask = a.rollout_mask;
  r.computeStats();
  r.weights_stats = a.rollout_stats.at(static_cast<size_t>(layer));
  return r;
}

const std::vector<std::string>& textShadeNames() {
  static const std::vector<std::string> names = {"head", "layer", "rollout"};
  return names;
}

TextShade textShadeFromName(const std::string& name, const std::string& flag) {
  return static_cast<TextShade>(nameIndex(textShadeNames(), name, flag));
}

ReceivedAttention receivedAttention(const ModelOutput& out, TextShade shade, int64_t layer, int64_t head, int64_t query) {
  const ModelAnalysis& a = *out.analysis;
  const ModelRun& run = a.run;
  const std::string flag = "--shade-by " + textShadeNames()[static_cast<size_t>(shade)];
  if (!run.query_tokens.empty())
    throw InputError("--view text: the text's tokens are keys of cross-attention, whose queries are another text's");
  if (a.pooled && shade != TextShade::Head) throw InputError(everyMapRefusal(a, flag));
  const int64_t n = static_cast<int64_t>(run.tokens.size());
  ReceivedAttention r;
  r.weights.assign(static_cast<size_t>(n), 0.0f);
  const auto add = [&](const Mat& m, float scale) {  // row `query`, its keys aligned to the tokens
    const int64_t cols = std::min<int64_t>(n, m.cols());
    for (int64_t j = 0; j < cols; ++j) r.weights[static_cast<size_t>(j)] += scale * m(query, m.cols() - cols + j);
  };
  const auto ul = static_cast<size_t>(layer);
  if (shade == TextShade::Head) {
    r.what = headLabel(layer, head);
    if (!a.pooled) add(run.attention[ul][static_cast<size_t>(head)], 1.0f);
    else if (out.focus_map && out.focus_layer == layer && out.focus_head == head) add(*out.focus_map, 1.0f);
    else add(wholeHeadMap(out, layer, head), 1.0f);
  } else if (shade == TextShade::LayerMean) {
    r.what = "layer " + std::to_string(layer) + ", mean over " + std::to_string(run.heads) + (run.heads == 1 ? " head" : " heads");
    for (const Mat& m : run.attention[ul]) add(m, 1.0f / static_cast<float>(run.heads));  // (1/H) Σ_h A_l,h[q, ·]
  } else {
    r.what = "rollout through layer " + std::to_string(layer);
    add(a.rollout.at(ul), 1.0f);
  }
  if (run.causal)
    for (int64_t j = query + 1; j < n; ++j) r.weights[static_cast<size_t>(j)] = -1.0f;
  return r;
}

ValueRange receivedRange(const ReceivedAttention& r, const ColorScale& scale) {
  std::vector<float> seen;  // the keys the query sees (−1 marks the others)
  for (const float w : r.weights)
    if (w >= 0) seen.push_back(w);
  const float top = seen.empty() ? 1.0f : std::max(1e-6f, *std::max_element(seen.begin(), seen.end()));
  return withScale({0.0f, top, false}, scale, static_cast<int64_t>(seen.size()), seen.data(), static_cast<int64_t>(seen.size()));
}

Result qkResult(const ModelRun& run, const QkTerms& t, const std::string& title) {
  Result r = tokensResult(run, title);
  r.weights = {run.attention[static_cast<size_t>(t.layer)][static_cast<size_t>(t.head)]};
  const std::string pair = "query " + std::to_string(t.query) + " '" + run.tokens[static_cast<size_t>(t.query)] +
                           "', key " + std::to_string(t.key) + " '" + run.tokens[static_cast<size_t>(t.key)] + "'";
  // The head's map first, so q, k and their product are read against it.
  Extra map;
  map.name = "weights";
  map.label = "attention weight, layer " + std::to_string(t.layer) + " head " + std::to_string(t.head);
  map.kind = ExtraKind::Weights;
  map.slice_axis = "map";  // one map, not a head of several beside the main weights
  map.value = Array::fromMats({run.attention[static_cast<size_t>(t.layer)][static_cast<size_t>(t.head)]});
  r.extras.push_back(std::move(map));
  r.extras.push_back(tokenValues("q", "q (query " + std::to_string(t.query) + ")", t.q));
  r.extras.push_back(tokenValues("k", "k (key " + std::to_string(t.key) + ")", t.k));
  r.extras.push_back(tokenValues("qk", "q \xE2\x88\x98 k, " + pair, t.product));
  if (!t.q_prenorm.data.empty()) {
    r.extras.push_back(tokenValues("q_prenorm", "q before QK-norm (query " + std::to_string(t.query) + ")", t.q_prenorm));
    r.extras.push_back(tokenValues("k_prenorm", "k before QK-norm (key " + std::to_string(t.key) + ")", t.k_prenorm));
  }
  if (run.rope) {
    const bool partial = t.rotary_dims < run.d_head;
    Extra bands = tokenValues(
        "band",
        partial ? "frequency bands of the " + std::to_string(t.rotary_dims) + " rotated of " + std::to_string(run.d_head) +
                      " dimensions (the rest add " + std::to_string(t.unrotated) + ")"
                : std::string("frequency bands q_i k_i + q_{i+d/2} k_{i+d/2} by \xCE\xB8_i (sum: q\xC2\xB7k)"),
        t.band);
    bands.row_labels = thetaLabels(run, t.layer);
    r.extras.push_back(std::move(bands));
    Extra angles;
    angles.name = "rope_angle";
    angles.label = "RoPE angle m\xC2\xB7\xCE\xB8_i mod 2\xCF\x80 (rad)";
    angles.kind = ExtraKind::Matrix;
    angles.value = Array::fromMat(ropeAngles(layerRopeTheta(run, t.layer), static_cast<int64_t>(run.tokens.size())));  // [L, r/2]
    angles.row_axis = "position m";
    angles.col_axis = "pair i";
    r.extras.push_back(std::move(angles));
  }
  r.extras.push_back(scalar("dot", "\xCE\xA3 q\xE2\x88\x98k = q\xC2\xB7k", t.dot));
  r.extras.push_back(scalar("score", run.score_scale > 0 ? "score q\xC2\xB7k \xC2\xB7 scale" : "score q\xC2\xB7k / \xE2\x88\x9A" "d", t.score));
  if (run.softcap > 0) {
    r.extras.push_back(scalar("capped", "soft-capped c\xC2\xB7tanh(score/c)", t.capped));
    Extra bend;
    bend.name = "softcap_bend";
    bend.label = "how far the soft-cap bent each score: s \xE2\x88\x92 c\xC2\xB7tanh(s/c)";
    bend.kind = ExtraKind::Matrix;
    bend.value = Array::fromMat(softcapBend(run, t.layer, t.head));
    bend.row_axis = "query";
    bend.col_axis = "key";
    r.extras.push_back(std::move(bend));
  }
  if (!run.alibi_slopes.empty()) {
    r.extras.push_back(scalar("alibi", "ALiBi bias slope\xC2\xB7j", t.bias));
    Extra bias;
    bias.name = "alibi_bias";
    bias.label = "ALiBi bias added to the scores: slope\xC2\xB7j";
    bias.kind = ExtraKind::Matrix;
    bias.value = Array::fromMat(alibiBias(run, t.layer, t.head));
    bias.row_axis = "query";
    bias.col_axis = "key";
    r.extras.push_back(std::move(bias));
  }
  r.extras.push_back(scalar("weight", "attention weight", t.weight));
  r.computeStats();
  return r;
}

std::vector<std::string> thetaLabels(const ModelRun& run, int64_t layer) {
  std::vector<std::string> out;
  for (const double t : layerRopeTheta(run, layer)) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%.2g", t);
    out.emplace_back(buf);
  }
  return out;
}

Result patternResult(const HeadPattern& p, const ModelRun& run, const std::string& title) {
  Result r = p.result;
  r.variant = title;
  r.q_tokens = r.k_tokens = run.tokens;
  Extra real;
  real.name = "real";
  real.label = "real head " + headLabel(p.layer, p.head);
  real.kind = ExtraKind::Weights;
  real.value = Array::fromMats({p.real});
  r.extras.push_back(std::move(real));
  Array kept;  // [L]
  kept.shape = {p.mass_kept.cols()};
  kept.data.assign(p.mass_kept.data(), p.mass_kept.data() + p.mass_kept.size());
  r.extras.push_back(tokenValues("mass_kept", "real attention mass the pattern keeps, per query", kept));
  r.extras.push_back(scalar("mass_kept_mean", "mass kept (mean over queries)", p.mass_kept_mean));
  r.computeStats();
  return r;
}

int64_t strongestKey(const ModelRun& run, int64_t layer, int64_t head, int64_t query) {
  Eigen::Index j = 0;
  run.attention[static_cast<size_t>(layer)][static_cast<size_t>(head)].row(query).maxCoeff(&j);
  return j;
}

std::vector<std::vector<std::string>> headTableRows(const std::vector<HeadSummary>& summaries, const std::vector<int>& columns) {
  std::vector<std::vector<std::string>> rows;
  auto num = [](double v) {  // NaN: a measure that means nothing for the head (cross-attention's previous token)
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return std::isnan(v) ? std::string("\xE2\x80\x94") : std::string(buf);
  };
  for (const HeadSummary& s : summaries) {
    const std::vector<std::string> all = {std::to_string(s.layer), std::to_string(s.head), num(s.previous_token), num(s.sink),
                                          num(s.induction), num(s.mean_distance), num(s.entropy), std::to_string(s.kv_head),
                                          s.group_size > 1 ? num(s.group_divergence) : "\xE2\x80\x94"};
    if (columns.empty()) {
      rows.push_back(all);
      continue;
    }
    std::vector<std::string> row;
    for (const int c : columns) row.push_back(all[static_cast<size_t>(c)]);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> headTableColumnNames(const std::vector<int>& columns) {
  if (columns.empty()) return headTableColumns();
  std::vector<std::string> names;
  for (const int c : columns) names.push_back(headTableColumns()[static_cast<size_t>(c)]);
  return names;
}

Scatter headScatter(const std::vector<HeadSummary>& summaries) {
  Scatter s;
  s.x_axis = "previous-token score";
  s.y_axis = "induction score";
  int64_t layers = 0;
  for (const HeadSummary& h : summaries) {
    s.points.push_back({static_cast<float>(h.previous_token), static_cast<float>(h.induction), headColor(static_cast<int>(h.layer)),
                        headLabel(h.layer, h.head)});
    layers = std::max(layers, h.layer + 1);
  }
  for (int64_t l = 0; l < layers && l < 12; ++l) s.legend.push_back({headColor(static_cast<int>(l)), "layer " + std::to_string(l)});
  return s;
}

std::string modelShortName(const Model& m) { return shortModelName(modelInfo(m).label); }

std::string outputName(const ModelOutput& o) {
  return o.source ? o.source->name : o.model ? modelShortName(*o.model) : std::string("model");
}

}  // namespace attn
