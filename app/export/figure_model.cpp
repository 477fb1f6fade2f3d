// The text kind: decoder or encoder-only models (GPT-2, BERT, Llama, …), the
// embedded default's kind. Its views' figures; the window draws them in
// app/gui/gui_model.cpp.
#include "app/export/model_kinds.h"

#include "app/model/embedded_model.h"
#include "engine/error.h"
#include "widgets/shaded_text.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn {

namespace {

// One result as a figure's results.
std::shared_ptr<const std::vector<Result>> alone(Result r) {
  return std::make_shared<const std::vector<Result>>(std::vector<Result>{std::move(r)});
}

std::string textSubtitle(const ModelOutput& out) {
  return modelShortName(*out.model) + " (" + modelInfo(*out.model).config.arch_name + "), " +
                         std::to_string(out.analysis->run.tokens.size()) + " tokens: \"" + quotedStart(out.text) + "\"";
}

// What every view's page starts from: the analysis (its selection checked),
// the model's name, "layer l, head h" and the options with the subtitle.
// `every_map`: the view reads every map, which a pooled run kept too few of.
struct TextPage {
  const ModelAnalysis& a;
  std::string name, head;
  FigureOptions fo;
  void titled(const std::string& t) {
    if (!fo.title) fo.title = t;
  }
};
TextPage textPage(const ModelOutput& out, const ModelFigureSelection& sel, const FigureOptions& options, const char* view,
                  bool every_map) {
  if (!out.analysis)
    throw InputError(!out.error.empty()               ? out.error
                     : out.too_long_message.empty() ? "model: nothing to draw"
                                                    : out.too_long_message);
  const ModelAnalysis& a = *out.analysis;
  checkSelection("--layer", sel.layer, a.run.layers);
  checkSelection("--head", sel.head, a.run.heads);
  TextPage p{a, outputName(out), "layer " + std::to_string(sel.layer) + ", head " + std::to_string(sel.head), options};
  p.fo.params.head = 0;
  p.fo.subtitle = literalSubtitle(modelKindOf(out).subtitle(out));
  if (every_map && a.pooled) throw InputError(everyMapRefusal(a, std::string("--view ") + view));
  return p;
}

// The text (no --target, no --image), and the pattern where its view is drawn.
ModelOutput textRun(const ModelRunRequest& r) {
  if (r.target) throw InputError("--target: only encoder\xE2\x80\x93" "decoder models (T5, BART) read a target");
  if (!r.image.empty()) throw InputError("--image: only vision models (ViT) read a picture");
  if (r.attention_of) throw InputError("--attention-of: only encoder\xE2\x80\x93" "decoder models (T5, BART) have more than one attention");
  ModelScene scene;
  scene.model = loadModel(*r.files);
  scene.text = textOrExample(r.text, r.path);
  scene.truncate = r.truncate;
  scene.pattern = r.view == "pattern";
  scene.layer = r.layer;
  scene.head = r.head;
  if (scene.pattern) {
    scene.pattern_variant = r.pattern->name;
    scene.pattern_params = r.pattern_params;
  }
  ModelOutput out = computeModelScene(scene, nullptr, {});
  if (out.too_long_tokens > 0) throw InputError(out.too_long_message);
  return out;
}

// [SECTION] Views

PreparedFigure textModelFigure(const ModelOutput& out, const ModelFigureSelection& sel, const FigureOptions& options) {
  TextPage p = textPage(out, sel, options, "model", false);
  const ModelRun& r = p.a.run;
  // Too many heads for thumbnails a reader could see: one cell per head, its summary.
  const bool cells = !thumbnailsReadable(static_cast<float>(p.fo.width) * 0.85f, 0.0f, r.layers, r.heads);
  p.titled(p.name + " \xE2\x80\x94 " + layersByHeads(r.layers, r.heads) +
           (cells ? ": " + headMeasureLabel(sel.measure) + " per head" : std::string()));
  if (cells) {  // a page whose height follows its content (a paper's column) takes the heads down its length
    p.fo.view = "heatmap";
    return prepareFigure(alone(headMeasureResult(p.a, sel.measure, p.name, p.fo.height == 0 && r.heads > r.layers)), p.fo);
  }
  p.fo.view = "heads";
  if (!p.fo.params.marks.empty()) p.fo.params.head = static_cast<int>(sel.layer * r.heads + sel.head);  // the focused head's panel carries the marks
  p.fo.params.panel_titles = layerHeadNames(r);
  return prepareFigure(alone(p.a.pooled ? pooledHeadsResult(p.a, p.name) : allHeadsResult(r, p.name)), p.fo);
}

PreparedFigure textHeadsFigure(const ModelOutput& out, const ModelFigureSelection& sel, const FigureOptions& options) {
  TextPage p = textPage(out, sel, options, "heads", true);
  p.titled(p.name + " \xE2\x80\x94 layer " + std::to_string(sel.layer) + ", heads as colours");
  p.fo.view = "lines";
  return prepareFigure(alone(layerResult(p.a.run, sel.layer, p.name)), p.fo);
}

PreparedFigure textQkFigure(const ModelOutput& out, const ModelFigureSelection& sel, const FigureOptions& options) {
  TextPage p = textPage(out, sel, options, "qk", true);
  const ModelRun& r = p.a.run;
  if (r.q.empty() || r.k.empty())
    throw InputError("--view qk: needs each layer's queries and keys, which this file lacks: give --q Q.npy and --k K.npy "
                     "([layers, L, heads\xC2\xB7" "d_head] or [layers, heads, L, d_head])");
  const int64_t n = static_cast<int64_t>(r.tokens.size());
  const int64_t q = sel.query < 0 ? n - 1 : sel.query;
  checkSelection("--query", q, n);
  const int64_t k = sel.key < 0 ? strongestKey(r, sel.layer, sel.head, q) : sel.key;
  checkSelection("--key", k, n);
  p.titled(p.name + " \xE2\x80\x94 " + p.head + ": q, k and q\xE2\x88\x98k");
  p.fo.view = "extras";
  return prepareFigure(alone(qkResult(r, qkTerms(r, sel.layer, sel.head, q, k), p.name)), p.fo);
}

PreparedFigure textRolloutFigure(const ModelOutput& out, const ModelFigureSelection& sel, const FigureOptions& options) {
  TextPage p = textPage(out, sel, options, "rollout", true);
  if (!p.a.run.query_tokens.empty())
    throw InputError("--view rollout: rollout composes a model's self-attention layer by layer; these maps are cross-attention");
  p.titled(p.name + " \xE2\x80\x94 attention rollout through layer " + std::to_string(sel.layer));
  p.fo.view = "heatmap";
  return prepareFigure(alone(rolloutResult(p.a, sel.layer, p.name)), p.fo);
}

PreparedFigure textTableFigure(const ModelOutput& out, const ModelFigureSelection& sel, const FigureOptions& options) {
  TextPage p = textPage(out, sel, options, "table", false);
  p.titled(p.name + " \xE2\x80\x94 head summaries");
  return prepareTableFigure(headTableColumns(), headTableRows(p.a.summaries), p.fo, headScatter(p.a.summaries));
}

PreparedFigure textPatternFigure(const ModelOutput& out, const ModelFigureSelection& sel, const FigureOptions& options) {
  TextPage p = textPage(out, sel, options, "pattern", true);
  if (!out.pattern)
    throw InputError("--view pattern: " + (out.pattern_error.empty() ? std::string("no pattern computed") : out.pattern_error));
  p.titled(out.pattern->result.variant + " on " + p.name + " " + p.head);
  p.fo.view = "extras";
  return prepareFigure(alone(patternResult(*out.pattern, p.a.run, p.name)), p.fo);
}

// Each head's attention entropy against its layer (the head summaries'
// entropy: the mean over queries of −Σ_j w_ij ln w_ij, in nats): low where
// a head reads a few keys, high where it spreads its weight; a layer's heads
// side by side about its depth, in the heads' colours.
ModelViewBody textEntropyBody(const ModelOutput& out, const ModelFigureSelection& sel, const ViewParams&) {
  const TextPage p = textPage(out, sel, {}, "entropy", false);
  const float heads = static_cast<float>(p.a.run.heads), spread = 0.8f / heads;
  Scatter s;
  s.x_axis = "layer (from 1)";
  s.y_axis = "attention entropy (nats)";
  s.x_counts = true;
  for (const HeadSummary& h : p.a.summaries) {
    const float x = static_cast<float>(h.layer + 1) + (static_cast<float>(h.head) - 0.5f * (heads - 1)) * spread;
    s.points.push_back({x, static_cast<float>(h.entropy), headColor(static_cast<int>(h.head)), ""});
    s.y_hi = std::max(s.y_hi, static_cast<float>(h.entropy) * 1.15f);
  }
  for (int64_t h = 0; h < p.a.run.heads && h < 16; ++h) s.legend.push_back({headColor(static_cast<int>(h)), "head " + std::to_string(h)});
  s.x_hi = static_cast<float>(p.a.run.layers) + 1.0f;
  return {p.name + " \xE2\x80\x94 attention entropy of each head",
          "each head's attention entropy (mean over queries of \xE2\x88\x92\xCE\xA3 w ln w, nats) against its layer: "
          "low, a head that reads a few keys; high, one that spreads its weight",
          [s](Primitives& prims, const Canvas& c, const Box& body) { scatterPrimitives(prims, c, body, s); },
          [](const Canvas& c, float width) { return c.unit * 4 + width * 0.55f; }};
}

// The running text, each token shaded by the attention the selected query
// gives it (one head, the layer's mean, rollout), the query outlined
// (widgets/shaded_text.h); a text longer than the page shows the lines about
// the query and says which tokens they are.
ModelViewBody textShadedBody(const ModelOutput& out, const ModelFigureSelection& sel, const ViewParams& p) {
  const TextPage page = textPage(out, sel, {}, "text", false);
  const ModelRun& r = page.a.run;
  const auto n = static_cast<int64_t>(r.tokens.size());
  const int64_t q = sel.query < 0 ? n - 1 : sel.query;
  checkSelection("--query", q, n);
  auto received = std::make_shared<const ReceivedAttention>(receivedAttention(out, sel.shade, sel.layer, sel.head, q));
  auto tokens = std::make_shared<const std::vector<std::string>>(r.tokens);
  ShadedText t;
  t.tokens = tokens.get();
  t.weights = &received->weights;
  t.query = q;
  t.range = receivedRange(*received, p.scale);
  t.cmap = p.colormap;
  t.what = "weight (" + received->what + ")";
  return {page.name + " \xE2\x80\x94 attention from query " + std::to_string(q) + ", " + received->what,
          "the text, each token shaded by the attention the query gives it (" + received->what + ")",
          [t, received, tokens](Primitives& prims, const Canvas& c, const Box& body) { shadedTextPagePrimitives(prims, c, body, t); },
          [t, received, tokens](const Canvas& c, float width) { return shadedTextPageHeight(c, width, t); }};
}

}  // namespace

PageContent textKindPage(const ModelOutput& out, const PageRequest& req) {
  const TextPage p = textPage(out, {}, {}, "", false);
  const ModelRun& run = p.a.run;
  checkLayerHeads(req.heads, run.layers, run.heads, "--heads");
  PageContent c;
  c.title = p.name + " \xE2\x80\x94 " + layersByHeads(run.layers, run.heads);
  c.subtitle = modelKindOf(out).subtitle(out);
  PageMaps s;
  const bool cross = !run.query_tokens.empty();
  s.name = "self";
  s.label = cross ? "cross-attention, target \xE2\x86\x92 source" : "self-attention";
  s.rows = cross ? run.query_tokens : run.tokens;
  s.cols = run.tokens;
  s.layers = run.layers;
  s.heads = run.heads;
  s.causal = run.causal && !cross && run.first_position == 0;
  s.log_scale = static_cast<int64_t>(s.cols.size()) >= kLogScaleKeys;
  const int64_t L = static_cast<int64_t>(s.rows.size());
  // Every head whole up to whole_limit rows, and at any length where there are no pooled maps (a file's
  // cross-attention: --max-bytes bounds the page).
  if (!p.a.pooled && (L <= req.whole_limit || run.pooled.mean.empty())) {
    for (const std::vector<Mat>& layer : run.attention)
      for (const Mat& m : layer) s.maps.push_back(&m);
    for (const Mat& r : p.a.rollout) s.rollout.push_back(&r);
  } else {
    // Every head pooled, and the heads asked for whole: kept by the run, else recomputed (or read from the file).
    s.maps.assign(static_cast<size_t>(run.layers * run.heads), nullptr);
    for (const auto& [l, h] : req.heads) {
      const auto ul = static_cast<size_t>(l), uh = static_cast<size_t>(h);
      const Mat* whole = ul < run.attention.size() && uh < run.attention[ul].size() && run.attention[ul][uh].size() > 0
                             ? &run.attention[ul][uh]
                         : out.focus_map && out.focus_layer == l && out.focus_head == h ? out.focus_map.get()
                                                                                          : nullptr;
      if (!whole) whole = &c.owned.emplace_back(wholeHeadMap(out, l, h));
      s.maps[static_cast<size_t>(l * run.heads + h)] = whole;
    }
    for (const Mat& m : run.pooled.mean) s.pooled.push_back(&m);
    if (s.pooled.empty()) throw InputError("--format html: this run kept neither every map nor pooled ones");
    std::string named;
    for (const auto& [l, h] : req.heads) named += (named.empty() ? "" : ", ") + headLabel(l, h);
    s.pooled_block = run.pooled.block;
    s.block_labels = pooledBlockLabels(run);
    c.note = groupDigits(L) + " tokens: every head is pooled into blocks of " + std::to_string(run.pooled.block) +
             " positions (the mean of each block); " +
             (req.heads.empty() ? "name heads to keep whole with --heads L:H,…"
                                : "whole maps of " + named + " (--heads)");
  }
  s.table_columns = headTableColumns();
  s.table_rows = headTableRows(p.a.summaries);
  c.sets.push_back(std::move(s));
  return c;
}

const std::vector<ModelKindView>& textKindViews() {
  static const std::vector<ModelKindView> views = {
      {"model", "every layer \xC3\x97 head as a thumbnail; click one to focus it (heatmap with tokens)", textModelFigure},
      {"heads", "token lines of the focused layer: opacity = weight, colour = head; hover a token", textHeadsFigure},
      {"qk", "the query vector, the key vector and their element-wise product; the sum is the score", textQkFigure},
      {"rollout", "attention rollout (Abnar & Zuidema) up to the focused layer, residual included", textRolloutFigure},
      {"table", "head summaries, sortable by every column; click a row to focus that head", textTableFigure},
      {"pattern", "an efficient-attention pattern on the focused head's own q, k: mass kept", textPatternFigure},
      {"entropy", "each head's attention entropy against its layer: focused heads low, spread heads high", nullptr, textEntropyBody},
      {"text", "the running text shaded by the attention the query gives each token (head, layer mean or rollout); hover a token",
       nullptr, textShadedBody},
  };
  return views;
}

extern const ModelKindInfo kTextKind = {
    "text",
    "a text model",
    "decoder or encoder-only text models (GPT-2, BERT, the Llama family, …): one text, every layer's self-attention",
    nullptr,
    textRun,
    textSubtitle,
    textKindViews(),
    textKindPage,
};

}  // namespace attn
