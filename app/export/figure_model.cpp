// The text kind: decoder or encoder-only models (GPT-2, BERT, Llama, …), the
// embedded default's kind. Its views' figures; the window draws them in
// app/gui/gui_model.cpp.
#include "app/export/model_kinds.h"

#include "app/model/embedded_model.h"
#include "engine/attention_math.h"
#include "engine/error.h"
#include "widgets/cell_grid.h"
#include "widgets/shaded_text.h"
#include "widgets/views/view.h"

#include <algorithm>
#include <cstdio>
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

// With a comparison: run B's model (where it is another), its text and how the two were aligned.
std::string textSubtitle(const ModelOutput& out) {
  std::string s = modelShortName(*out.model) + " (" + modelInfo(*out.model).config.arch_name + "), " +
                  std::to_string(out.analysis->run.tokens.size()) + " tokens: \"" + quotedStart(out.text) + "\"";
  if (const CompareAnalysis* c = out.compare.get()) {
    s = "A: " + s + "; B: " + (c->model_b == out.model ? "" : modelShortName(*c->model_b) + ", ") +
        std::to_string(c->run_b.tokens.size()) + " tokens: \"" + quotedStart(c->text_b) + "\"; " + c->comparison.alignment.describe();
  }
  return s;
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
  TextPage p{a, outputName(out) + (out.value_weighted ? " (value-weighted)" : ""),
             "layer " + std::to_string(sel.layer) + ", head " + std::to_string(sel.head), options};
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
  scene.probe = probeOfView(r.view);
  scene.corrupted = r.corrupted;
  scene.value_weighted = r.value_weighted;
  scene.predict_at = r.query;
  scene.compare = r.view == "compare";
  scene.inputs.compare = {r.text_b, r.model_b};
  scene.layer = r.layer;
  scene.head = r.head;
  if (scene.pattern) {
    scene.pattern_variant = r.pattern->name;
    scene.pattern_params = r.pattern_params;
  }
  ModelOutput out = computeModelScene(scene, nullptr, {});
  if (out.too_long_tokens > 0) throw InputError(out.too_long_message);
  // the query a view of which heads matter explains: inside the text, never clamped to it
  if (out.analysis && !scene.probe.empty() && r.query >= 0)
    checkSelection("--query", r.query, static_cast<int64_t>(out.analysis->run.ids.size()));
  if (!out.compare_error.empty()) throw InputError(out.compare_error);
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

// [SECTION] Which heads matter (engine/model/analysis/interventions.h)

// "L1 H0, L1 H3"
std::string headNames(const HeadAblation& a) {
  std::string s;
  for (const auto& [l, h] : a.heads) s += (s.empty() ? "L" : ", L") + std::to_string(l) + " H" + std::to_string(h);
  return s;
}

// " 83.9%"
std::string percent(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, " %.1f%%", 100.0 * p);
  return buf;
}

// "‹ And› 83.9%"
std::string tokenShare(const std::string& token, double p) { return "\xE2\x80\xB9" + token + "\xE2\x80\xBA" + percent(p); }

std::string formatShare(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(v));
  return buf;
}

std::string signedValue(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.3f", v);
  return buf;
}

// The output's analysis for a view of which heads matter, or the error that stopped it.
template <class T>
const T& probeOf(const ModelOutput& out, const std::shared_ptr<const T>& p, const char* view) {
  if (!out.probe_error.empty()) throw InputError(out.probe_error);
  if (!p) throw InputError(std::string("the ") + view + " view: nothing computed for this run");
  return *p;
}

// Lines of text down a column: (text, role, bold) each, at the label size.
struct TextLine {
  std::string text;
  Role role = Role::Text;
  bool bold = false;
};
float textLinesHeight(const Canvas& c, size_t lines) { return static_cast<float>(lines) * labelPx(c) * 1.45f; }
void textLinesPrimitives(Primitives& out, const Canvas& c, float x, float y, const std::vector<TextLine>& lines) {
  const float px = labelPx(c);
  for (const TextLine& l : lines) {
    addText(out, x, y, l.text, px, l.role).bold = l.bold;
    y += px * 1.45f;
  }
}
float textLinesWidth(const Canvas& c, const std::vector<TextLine>& lines) {
  float w = 0;
  for (const TextLine& l : lines) w = std::max(w, c.textWidth(l.text, labelPx(c), l.bold));
  return w;
}

// A layers × heads grid of one value per head on a diverging scale (symmetric
// about 0), the focused head outlined.
CellGrid headValuesGrid(const Mat& values, const ModelFigureSelection& sel, const std::string& array, const std::string& bar) {
  CellGrid g;
  g.values = values;
  for (int64_t l = 0; l < values.rows(); ++l) g.row_labels.push_back("L" + std::to_string(l));
  for (int64_t h = 0; h < values.cols(); ++h) g.col_labels.push_back("H" + std::to_string(h));
  g.row_caption = "layer";
  g.col_caption = "head";
  g.bar_caption = bar;
  g.array = array;
  const float m = std::max(values.cwiseAbs().maxCoeff(), 1e-6f);
  g.range = {-m, m, true};
  g.cmap = Colormap::Coolwarm;
  g.mark_row = sel.layer;
  g.mark_col = sel.head;
  g.max_cell = 5.0f;
  return g;
}

// A grid beside a column of text lines: the body of the importance and attribution views.
ModelViewBody gridBesideLines(std::string title, std::string hint, CellGrid g, std::vector<TextLine> lines) {
  auto layout = [g, lines](Primitives& prims, const Canvas& c, const Box& body) {
    const float col = textLinesWidth(c, lines) + c.unit * 1.5f;
    const float grid_w = std::max(body.w - col, body.w * 0.5f);
    const CellGridLayout lay = cellGridPrimitives(prims, c, {body.x, body.y, grid_w, body.h}, g);
    textLinesPrimitives(prims, c, lay.right + c.unit * 1.5f, body.y + c.unit * 0.3f, lines);
  };
  auto height = [g, lines](const Canvas& c, float width) {
    const float col = textLinesWidth(c, lines) + c.unit * 1.5f;
    return std::max(cellGridHeight(c, std::max(width - col, width * 0.5f), g), textLinesHeight(c, lines.size()) + c.unit);
  };
  return {std::move(title), std::move(hint), layout, height};
}

std::vector<TextLine> topTokenLines(const std::string& heading, const std::vector<Prediction>& top) {
  std::vector<TextLine> lines = {{heading, Role::Muted, false}};
  for (const Prediction& p : top) lines.push_back({"  " + tokenShare(p.token, p.probability), Role::Text, false});
  return lines;
}

ModelViewBody textImportanceBody(const ModelOutput& out, const ModelFigureSelection& sel, const ViewParams&) {
  const TextPage p = textPage(out, sel, {}, "importance", false);
  const ImportanceGrid& g = probeOf(out, out.importance, "importance");
  const AblationEffect& e = probeOf(out, out.ablation, "importance");
  const Target& t = g.target;
  std::vector<TextLine> lines = {
      {"predicting " + tokenShare(t.token, g.base.probability()), Role::Text, true},
      {"after \xE2\x80\xB9" + p.a.run.tokens[static_cast<size_t>(t.position)] + "\xE2\x80\xBA (position " +
           std::to_string(t.position) + ")",
       Role::Muted, false},
      {"", Role::Text, false},
      {"ablating " + headNames(e.ablated) + " alone:", Role::Text, true},
      {tokenShare(t.token, e.before.probability()) + " \xE2\x86\x92" + percent(e.after.probability()), Role::Text, false},
      {"\xCE\x94 log p " + signedValue(e.after.log_prob - e.before.log_prob), Role::Muted, false},
  };
  for (const TextLine& l : topTokenLines("top tokens after:", e.top_after)) lines.push_back(l);
  lines.push_back({"", Role::Text, false});
  lines.push_back({"heads that matter most:", Role::Text, true});
  const std::vector<std::pair<int64_t, int64_t>> ranked = headsByValue(g.delta);
  for (size_t i = 0; i < std::min<size_t>(5, ranked.size()); ++i) {
    const auto [l, h] = ranked[i];
    lines.push_back({"  L" + std::to_string(l) + " H" + std::to_string(h) + "  " + signedValue(g.delta(l, h)), Role::Text, false});
  }
  return gridBesideLines(p.name + " \xE2\x80\x94 which heads matter: each head ablated alone",
                         "\xCE\x94 log p of " + tokenShare(t.token, g.base.probability()) +
                             " when one head's output is zeroed (blue: the prediction falls); the focused head is outlined "
                             "and ablated on the right",
                         headValuesGrid(g.delta, sel, "\xCE\x94 log p", "\xCE\x94 log p(target)"), std::move(lines));
}

ModelViewBody textAttributionBody(const ModelOutput& out, const ModelFigureSelection& sel, const ViewParams&) {
  const TextPage p = textPage(out, sel, {}, "attribution", false);
  const LogitAttribution& a = probeOf(out, out.attribution, "attribution");
  char sum[96];
  std::snprintf(sum, sizeof sum, "logit %.3f = %.3f, the sum of %zu parts", a.logit, a.sum(), a.parts.size());
  std::vector<TextLine> lines = {{"\xE2\x80\xB9" + a.target.token + "\xE2\x80\xBA after position " +
                                      std::to_string(a.target.position),
                                  Role::Text, true},
                                 {sum, Role::Muted, false},
                                 {"", Role::Text, false},
                                 {"the stream's other parts:", Role::Text, true}};
  double heads = 0;
  for (const LogitAttribution::Part& part : a.parts)
    if (part.head >= 0) heads += part.value;
    else lines.push_back({"  " + part.name + "  " + signedValue(part.value), Role::Text, false});
  lines.push_back({"  every head  " + signedValue(heads), Role::Text, false});
  return gridBesideLines(p.name + " \xE2\x80\x94 direct logit attribution of \xE2\x80\xB9" + a.target.token +
                             "\xE2\x80\xBA",
                         "each head's output through W_O and the final norm (its scale from this run), dotted with the "
                         "token's unembedding: red raises the logit, blue lowers it",
                         headValuesGrid(a.heads, sel, "logit part", "part of the logit"), std::move(lines));
}

ModelViewBody textPatchingBody(const ModelOutput& out, const ModelFigureSelection& sel, const ViewParams&) {
  const TextPage p = textPage(out, sel, {}, "patching", false);
  const PatchingResult& r = probeOf(out, out.patching, "patching");
  const Target& t = r.target;
  // A share of nearly nothing is noise: the query must be one where the two prompts disagree.
  if (!r.restorable())
    throw InputError("patching: the text and the corrupted prompt give \xE2\x80\xB9" + t.token + "\xE2\x80\xBA after position " +
                     std::to_string(t.position) + " nearly the same probability (" + percent(r.clean.probability()).substr(1) +
                     " and" + percent(r.corrupted.probability()) +
                     "): there is nothing to restore; choose a query where they differ");
  // how much of the clean prediction each patch restores: 1 all of it, 0 none, on one scale for both grids
  const Mat heads = r.restoredHeads(), resid = r.restoredResidual();
  const float m = std::max({1.0f, heads.cwiseAbs().maxCoeff(), resid.cwiseAbs().maxCoeff()});
  CellGrid hg = headValuesGrid(heads, sel, "restored", "share restored");
  hg.range = {-m, m, true};
  CellGrid rg;
  rg.values = resid;
  for (int64_t l = 0; l < resid.rows(); ++l) rg.row_labels.push_back("L" + std::to_string(l));
  rg.col_labels = p.a.run.tokens;
  rg.row_caption = "layer";
  rg.col_caption = "the residual stream entering the layer, at each position of the text";
  rg.bar_caption = "share restored";
  rg.array = "restored";
  rg.range = {-m, m, true};
  rg.cmap = Colormap::Coolwarm;
  rg.max_cell = 4.2f;
  rg.text.assign(static_cast<size_t>(resid.size()), "");  // a cell per position: the colour says it
  for (int64_t l = 0; l < resid.rows(); ++l)
    for (int64_t i = 0; i < resid.cols(); ++i)
      if (std::abs(resid(l, i)) >= 0.05f) rg.text[static_cast<size_t>(l * resid.cols() + i)] = formatShare(resid(l, i));
  const std::vector<TextLine> lines = {
      {"predicting \xE2\x80\xB9" + t.token + "\xE2\x80\xBA after position " + std::to_string(t.position), Role::Text, true},
      {"the text:" + percent(r.clean.probability()), Role::Text, false},
      {"the corrupted prompt:" + percent(r.corrupted.probability()), Role::Text, false},
      {"", Role::Text, false},
      {"a cell: the corrupted run with that", Role::Muted, false},
      {"one value taken from the text's run;", Role::Muted, false},
      {"1 restores the text's prediction", Role::Muted, false},
  };
  ModelViewBody top = gridBesideLines("", "", hg, lines);
  auto layout = [top, rg](Primitives& prims, const Canvas& c, const Box& body) {
    const float h1 = std::min(top.height(c, body.w), body.h * 0.5f);
    top.layout(prims, c, {body.x, body.y, body.w, h1});
    const float gap = c.unit * 1.2f;
    cellGridPrimitives(prims, c, {body.x, body.y + h1 + gap, body.w, body.h - h1 - gap}, rg);
  };
  auto height = [top, rg](const Canvas& c, float width) { return top.height(c, width) + c.unit * 1.2f + cellGridHeight(c, width, rg); };
  return {p.name + " \xE2\x80\x94 activation patching: how much of the prediction each value restores",
          "the corrupted prompt's run with one head's output (top) or the residual stream at one position (bottom) taken "
          "from the text's run: red restores the text's prediction of " + tokenShare(t.token, r.clean.probability()),
          layout, height};
}

ModelViewBody textLensBody(const ModelOutput& out, const ModelFigureSelection& sel, const ViewParams& vp) {
  const TextPage p = textPage(out, sel, {}, "lens", false);
  const LogitLens& lens = probeOf(out, out.lens, "lens");
  const int64_t streams = static_cast<int64_t>(lens.top.size()), P = static_cast<int64_t>(lens.positions.size());
  CellGrid g;
  g.values.resize(streams, P);
  for (int64_t l = 0; l < streams; ++l) {
    g.row_labels.push_back(l == 0 ? "embeddings" : "after L" + std::to_string(l - 1));
    for (int64_t i = 0; i < P; ++i) {
      const Prediction& best = lens.top[static_cast<size_t>(l)][static_cast<size_t>(i)].at(0);
      g.values(l, i) = best.probability;
      g.text.push_back(best.token);
    }
  }
  for (const int64_t i : lens.positions) g.col_labels.push_back(p.a.run.tokens[static_cast<size_t>(i)]);
  g.col_caption = "the token at each position (each cell: the next token that stream predicts)";
  g.bar_caption = "probability";
  g.array = "top token";
  g.range = {0, 1};
  g.cmap = vp.colormap;
  g.max_cell = 4.2f;
  return {p.name + " \xE2\x80\x94 logit lens: what each layer already predicts",
          "each layer's residual stream through the final norm and the unembedding: the most likely next token in each "
          "cell, coloured by its probability; positions " + std::to_string(lens.positions.front()) + "\xE2\x80\x93" +
              std::to_string(lens.positions.back()) + " (up to the selected query)",
          [g](Primitives& prims, const Canvas& c, const Box& body) { cellGridPrimitives(prims, c, body, g); },
          [g](const Canvas& c, float width) { return cellGridHeight(c, width, g); }};
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

// Where the compare view's parts go in `body`: the grid of heads beside the
// ranking and the focused head's three maps in a row under them; on a narrow
// page whose height follows its content (a paper's column), the ranking under
// the grid and the three maps in as many columns as keep each 16 units wide.
struct CompareBoxes {
  Box grid, rank, focus;
  int focus_cols = 3;
};
// The parts' heights at `width`: the top's (the grid, and the ranking beside it or under it) and the focus row's.
struct CompareHeights {
  float grid = 0, rank = 0, focus = 0;
  int focus_cols = 3;
  float total() const { return grid + rank + focus; }
};
CompareHeights compareHeights(const Canvas& c, float width, bool narrow) {
  CompareHeights h;
  h.grid = width * (narrow ? 0.75f : 0.42f);
  h.rank = narrow ? width * 0.45f : 0.0f;
  h.focus_cols = narrow ? std::clamp(static_cast<int>(width / (c.unit * 16)), 1, 3) : 3;
  const float panel_w = width / static_cast<float>(h.focus_cols);
  h.focus = c.unit * 3 + static_cast<float>((3 + h.focus_cols - 1) / h.focus_cols) * (panel_w * 0.7f + c.unit * 2);
  return h;
}
bool narrowPage(const Canvas& c, float width) { return width < c.unit * 48; }
CompareBoxes compareBoxes(const Canvas& c, const Box& body) {
  // A screen or a page of a fixed size too short for the narrow arrangement takes the wide one, scaled to fit.
  const CompareHeights tall = compareHeights(c, body.w, true);
  const bool narrow = narrowPage(c, body.w) && body.h >= tall.total() * 0.95f;
  const CompareHeights h = narrow ? tall : compareHeights(c, body.w, false);
  const float scale = body.h / h.total(), gap = c.unit * 1.5f;
  CompareBoxes b;
  b.focus_cols = h.focus_cols;
  const float top = h.grid * scale, rank = h.rank * scale;
  if (narrow) {
    b.grid = {body.x, body.y, body.w, top - gap};
    b.rank = {body.x, body.y + top, body.w, rank - gap};
  } else {
    b.grid = {body.x, body.y, body.w * 0.64f, top - gap};
    b.rank = {b.grid.right() + gap, body.y, body.right() - b.grid.right() - gap, top - gap};
  }
  b.focus = {body.x, body.y + top + rank, body.w, body.h - top - rank};
  return b;
}

// Run A against run B (app/model/compare_scene.h): every head's A − B on one
// diverging scale (or, where thumbnails would be unreadable, each head's JS as
// a layers × heads map), the heads ranked by the JS of their rows, and the
// focused head's two aligned maps and their difference.
ModelViewBody textCompareBody(const ModelOutput& out, const ModelFigureSelection& sel, const ViewParams& params) {
  const TextPage p = textPage(out, sel, {}, "compare", true);
  if (!out.compare)
    throw InputError(out.compare_error.empty() ? "--view compare: no run B to compare with (give --text-b or --model-b)"
                                               : out.compare_error);
  const std::shared_ptr<const CompareAnalysis> cmp = out.compare;
  const RunComparison& rc = cmp->comparison;
  const int64_t n = static_cast<int64_t>(rc.tokens.size());
  // The focused head's aligned maps, and what the panels point into: made once, owned by the layout.
  struct Data {
    Mat a, b, js, mask;
    std::vector<std::string> head_names, layer_names, ranked_names;
    Array ranked;
  };
  auto d = std::make_shared<Data>();
  d->a = alignedMap(p.a.run, rc.alignment, 0, sel.layer, sel.head);
  d->b = alignedMap(cmp->run_b, rc.alignment, 1, sel.layer, sel.head);
  if (p.a.run.causal) d->mask = causalMask(n, n);
  d->js = Mat(rc.layers, rc.heads);
  for (int64_t l = 0; l < rc.layers; ++l) {
    d->layer_names.push_back("L" + std::to_string(l));
    for (int64_t h = 0; h < rc.heads; ++h) d->js(l, h) = static_cast<float>(rc.js[static_cast<size_t>(l * rc.heads + h)]);
  }
  for (int64_t h = 0; h < rc.heads; ++h) d->head_names.push_back("H" + std::to_string(h));
  constexpr size_t kRanked = 16;  // the bars of the most divergent heads
  for (size_t k = 0; k < std::min(kRanked, rc.ranking.size()); ++k) {
    const int64_t i = rc.ranking[k];
    d->ranked_names.push_back(headLabel(i / rc.heads, i % rc.heads));
    d->ranked.data.push_back(static_cast<float>(rc.js[static_cast<size_t>(i)]));
  }
  d->ranked.shape = {static_cast<int64_t>(d->ranked.data.size())};
  float grid_max = 1e-6f;  // one diverging scale for every head's difference: ±max |A − B|
  for (const std::vector<Mat>& layer : rc.difference)
    for (const Mat& m : layer) grid_max = std::max(grid_max, m.cwiseAbs().maxCoeff());
  const float weight_max = std::max({1e-6f, d->a.maxCoeff(), d->b.maxCoeff()});
  const Colormap cmap = params.colormap;
  const int64_t layers = rc.layers, heads = rc.heads;
  const std::string head = p.head;
  char js_text[32];
  std::snprintf(js_text, sizeof js_text, "%.3f", rc.js[static_cast<size_t>(sel.layer * heads + sel.head)]);
  const std::string focus_js = js_text;
  auto layout = [d, cmp, n, grid_max, weight_max, cmap, layers, heads, sel, head, focus_js](
                    Primitives& prims, const Canvas& c, const Box& body) {
    const RunComparison& rc = cmp->comparison;
    const CompareBoxes boxes = compareBoxes(c, body);
    const Box &grid_box = boxes.grid, &rank_box = boxes.rank, &focus_box = boxes.focus;
    const float gap = c.unit * 1.5f;
    const ValueRange diverging{-grid_max, grid_max, true};
    const Colormap signed_map = colormapFor(diverging, cmap);
    auto matrix = [&](const Mat& m, const std::vector<std::string>* rows, const std::vector<std::string>* cols) {
      ViewPanel panel;
      panel.spec = MatrixSpec::of(m);
      panel.spec.row_labels = rows;
      panel.spec.col_labels = cols;
      panel.style.max_cell_aspect = cellAspect(c, panel.spec, {});
      return panel;
    };
    // Every head's A − B (thumbnails), or its JS where thumbnails would be too small to read.
    const float title_h = panelTitle(prims, c, "A \xE2\x88\x92 B of every head", grid_box.x, grid_box.y, grid_box.w);
    const Box cells{grid_box.x, grid_box.y + title_h, grid_box.w, grid_box.h - title_h};
    const float bar_w = c.unit * 6;
    if (thumbnailsReadable(cells.w - bar_w, cells.h, layers, heads)) {
      std::vector<ViewPanel> panels;
      for (int64_t l = 0; l < layers; ++l)
        for (int64_t h = 0; h < heads; ++h) {
          ViewPanel& panel = panels.emplace_back(matrix(rc.difference[static_cast<size_t>(l)][static_cast<size_t>(h)], &rc.tokens, &rc.tokens));
          panel.spec.title = headLabel(l, h);
          panel.spec.value_label = "A \xE2\x88\x92 B";
          panel.spec.row_axis = panel.spec.col_axis = "";
          panel.style.range = diverging;
          panel.style.colormap = signed_map;
          panel.style.colorbar = false;
          panel.style.labels = n <= 24;
          panel.style.max_cell_aspect = 1.5f;
          panel.style.highlight = l == sel.layer && h == sel.head;
          panel.shared_scale = true;
        }
      labelledGrid(c, {cells.x, cells.y, cells.w - bar_w, cells.h}, panels, c.unit * 0.5f);
      float top = cells.bottom(), bottom = cells.y;
      for (const ViewPanel& panel : panels)
        if (const MatrixPlacement at = panelPrimitives(prims, c, panel); at.valid()) {
          top = std::min(top, at.y0);
          bottom = std::max(bottom, at.y1);
        }
      sideColorbar(prims, c, cells, bar_w, top, bottom, diverging, signed_map, "A \xE2\x88\x92 B");
    } else {
      ViewPanel panel = matrix(d->js, &d->layer_names, &d->head_names);
      panel.area = cells;
      panel.spec.row_axis = "layer";
      panel.spec.col_axis = "head";
      panel.spec.value_label = "JS (bits)";
      panel.style.range = {0.0f, std::max(1e-6f, d->js.maxCoeff()), false};
      panel.style.colormap = cmap;
      panelPrimitives(prims, c, panel);
    }
    // The heads ranked by the JS of their rows.
    const float rank_title = panelTitle(prims, c, "heads ranked by JS of their rows (bits)", rank_box.x, rank_box.y, rank_box.w);
    barsPrimitives(prims, c, {rank_box.x, rank_box.y + rank_title, rank_box.w, rank_box.h - rank_title}, d->ranked, "js",
                   &d->ranked_names, {0.0f, std::max(1e-6f, d->ranked.data.empty() ? 0.0f : d->ranked.data.front()), false}, cmap,
                   false);
    // The focused head: A and B aligned on one scale, and their difference on the grid's (a head where the runs
    // agree stays pale instead of showing its rounding noise at full contrast).
    const float focus_title = panelTitle(prims, c, head + " (JS " + focus_js + " bits): A, B and A \xE2\x88\x92 B", focus_box.x,
                                         focus_box.y + c.unit * 0.5f, focus_box.w);
    const int cols = boxes.focus_cols, rows = (3 + cols - 1) / cols;
    const float y = focus_box.y + c.unit * 0.5f + focus_title, w = (focus_box.w - static_cast<float>(cols - 1) * gap) / static_cast<float>(cols),
                h = (focus_box.bottom() - y) / static_cast<float>(rows);
    const Mat& diff = rc.difference[static_cast<size_t>(sel.layer)][static_cast<size_t>(sel.head)];
    const struct {
      const Mat& m;
      const char* title;
      ValueRange range;
      const char* value;
    } focus[] = {{d->a, "A", {0.0f, weight_max, false}, "weight"},
                 {d->b, "B", {0.0f, weight_max, false}, "weight"},
                 {diff, "A \xE2\x88\x92 B", diverging, "A \xE2\x88\x92 B"}};
    for (int k = 0; k < 3; ++k) {
      ViewPanel panel = matrix(focus[k].m, &rc.tokens, &rc.tokens);
      panel.area = {focus_box.x + static_cast<float>(k % cols) * (w + gap), y + static_cast<float>(k / cols) * h, w, h};
      panel.spec.title = focus[k].title;
      panel.spec.value_label = focus[k].value;
      if (k < 2 && d->mask.size() > 0) panel.spec.mask = &d->mask;
      panel.style.range = focus[k].range;
      panel.style.colormap = colormapFor(focus[k].range, cmap);
      panel.style.labels = n <= 40;
      panelPrimitives(prims, c, panel);
    }
  };
  return {p.name + " \xE2\x80\x94 run A against run B",
          "every head's A \xE2\x88\x92 B (blue: A weighs less, red: more), the heads ranked by the Jensen\xE2\x80\x93Shannon "
          "divergence of their rows, the focused head's maps; " + rc.alignment.describe(),
          layout, [](const Canvas& c, float width) { return compareHeights(c, width, narrowPage(c, width)).total(); }};
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
      {"importance", "which heads the prediction depends on: each head ablated alone, \xCE\x94 log p of the top token", nullptr,
       textImportanceBody},
      {"lens", "logit lens: each layer's residual stream through the final norm and unembedding, its top token", nullptr,
       textLensBody},
      {"attribution", "direct logit attribution: each head's share of the top token's logit", nullptr, textAttributionBody},
      {"patching", "activation patching from the text into a corrupted prompt: how much of the prediction each head "
                   "and each position restores", nullptr, textPatchingBody},
      {"compare", "run A against run B (a second prompt or checkpoint): every head's A \xE2\x88\x92 B, heads ranked by JS", nullptr,
       textCompareBody},
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
