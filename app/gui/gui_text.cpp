// The model workspace on a decoder or encoder-only text model (GPT-2, BERT,
// the Llama family, …): the live text and Generate in the panel, the
// pattern's controls and the next-token predictions under DISPLAY, and the
// views — every layer's heads as a grid with the focused head beside it,
// token lines of one layer, q and k of one pair, rollout, the head table,
// an efficient-attention pattern on the focused head and the running text
// shaded by the attention a query gives each token.
// Index
//   [SECTION] Selection helpers
//   [SECTION] Control panel
//   [SECTION] Model view (grid + focused head)
//   [SECTION] Heads view (token lines of one layer)
//   [SECTION] Q/K view
//   [SECTION] Rollout view
//   [SECTION] Table view
//   [SECTION] Pattern view
//   [SECTION] Text view (the running text shaded by attention)
#include "app/gui/gui_kinds.h"

#include "app/gui/gui_generate.h"
#include "app/gui/gui_lesson.h"
#include "app/gui/gui_panels.h"
#include "app/gui/gui_views.h"
#include "engine/model/analysis/qk_terms.h"
#include "engine/model/blocks/maps.h"
#include "widgets/bars.h"
#include "widgets/head_grid.h"
#include "widgets/head_table.h"
#include "widgets/plot_layouts.h"
#include "widgets/primitives_imgui.h"
#include "widgets/shaded_text.h"
#include "widgets/token_lines.h"
#include "widgets/value_range.h"
#include "widgets/views/view.h"

#include <GLFW/glfw3.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

namespace attn {

namespace {

// The text views' own state: the Q/K view's pair and the grid's measure of a
// large model, with the caches rebuilt when what they show changes.
struct TextViewState {
  // The Q/K view's pair: its terms and bar ranges, rebuilt when the output,
  // the head or the selection (query, key as chosen, −1 included) changes.
  struct QkPair {
    uint64_t generation = 0;
    int64_t query_selected = 0, key_selected = 0;
    QkTerms terms;
    ValueRange qk_range, product_range;  // q and k share one signed scale, so their bars compare
    // RoPE models: the frequency bands' range, the rotation angles [L, d/2] and "θ_i" labels.
    ValueRange band_range;
    Mat angles;
    std::vector<std::string> theta_labels;
    // Soft-capped heads: how far the cap bent each score (s − c·tanh(s/c));
    // ALiBi heads: the bias slope_h·j. [L, L], for the panel under the head.
    Mat score_change;
  };
  std::optional<QkPair> qk_pair;
  // A model too large for a thumbnail per head: the grid's measure per head,
  // and its [layers, heads] map, rebuilt when the output or the measure changes.
  HeadMeasure measure = HeadMeasure::Sink;
  std::shared_ptr<const Result> measure_result;
  uint64_t measure_generation = ~uint64_t{0};
  HeadMeasure measure_of_result = HeadMeasure::Sink;
  HeatmapZoom rollout_zoom, pattern_zoom, angle_zoom;
  // The text view: what shades the tokens, whether a click pinned the query
  // (then hover only reads weights off), the token under the mouse, and the
  // weights drawn with what they were computed for.
  TextShade shade = TextShade::Head;
  bool pinned = false;
  int64_t hovered = -1;
  struct Shading {
    uint64_t generation = 0;
    TextShade shade = TextShade::Head;
    int layer = 0, head = 0;
    int64_t query = 0;
    std::shared_ptr<const ReceivedAttention> received;
    std::string error;  // why there are none (a pooled run's layer mean, cross-attention)
  };
  std::optional<Shading> shading;
  int64_t scrolled_to = -1;  // the selected query the text was last scrolled to
  uint64_t scrolled_generation = ~uint64_t{0};
  // The compare view's folder of run B's model as typed: the scene's until
  // the field is being edited, taken on Enter (a half-typed path loads nothing).
  std::string model_b;
  bool model_b_editing = false;
};

// [SECTION] Selection helpers

const ModelRun* currentRun(const AppState& s) {
  const ModelOutput* o = s.model.output.get();
  return o && o->analysis ? &o->analysis->run : nullptr;
}

int64_t tokenCount(const ModelRun& r) { return static_cast<int64_t>(r.tokens.size()); }

// The focused head's whole map: the run's own, or, when its maps were
// pooled, the one the job recomputed for this head (null until it has).
const Mat* focusMap(const AppState& s) {
  const ModelOutput* o = s.model.output.get();
  if (!o || !o->analysis) return nullptr;
  const ModelRun& r = o->analysis->run;
  const int layer = std::clamp(s.model.view.layer, 0, static_cast<int>(r.layers) - 1);
  const int head = std::clamp(s.model.view.head, 0, static_cast<int>(r.heads) - 1);
  if (!o->analysis->pooled) return &r.attention[static_cast<size_t>(layer)][static_cast<size_t>(head)];
  return o->focus_layer == layer && o->focus_head == head ? o->focus_map.get() : nullptr;
}

MatrixStyle probabilityStyle(AppState& s) {
  MatrixStyle st;
  const ModelRun* r = currentRun(s);
  const Mat* focus = focusMap(s);
  st.range = withScale({0.0f, 1.0f, false}, s.scale, r ? tokenCount(*r) : 0, focus ? focus->data() : nullptr,
                       focus ? focus->size() : 0);
  st.colormap = s.settings.colormap;
  return st;
}

// A run of tokens, for the tooltip-free token caption ("query 5 ' the'").
std::string tokenCaption(const ModelRun& r, int64_t i) {
  return std::to_string(i) + " '" + r.tokens[static_cast<size_t>(i)] + "'";
}
// The same for a query (a map's row: cross-attention's rows have tokens of their own).
std::string queryCaption(const ModelRun& r, int64_t i) {
  return std::to_string(i) + " '" + queryTokens(r)[static_cast<size_t>(i)] + "'";
}

}  // namespace

namespace {

void clampModelSelection(ModelState& m) {
  ModelViewState& v = m.view;
  const ModelOutput* o = m.output.get();
  if (!o || !o->analysis) return;
  const ModelRun& r = o->analysis->run;
  v.layer = std::clamp<int>(v.layer, 0, static_cast<int>(std::max<int64_t>(1, r.layers)) - 1);
  v.head = std::clamp<int>(v.head, 0, static_cast<int>(std::max<int64_t>(1, r.heads)) - 1);
  const int64_t n = tokenCount(r), rows = static_cast<int64_t>(queryTokens(r).size());
  if (n == 0 || rows == 0) return;
  if (v.query >= rows) v.query = rows - 1;
  if (v.key >= n) v.key = -1;
  if (r.causal && v.key > std::max<int64_t>(v.query, 0)) v.key = -1;
}

// [SECTION] Control panel

void textSection(AppState& s) {
  ModelState& m = s.model;
  ImGui::TextDisabled("recomputed as you type");
  if (ImGui::InputTextMultiline("##modeltext", &m.scene.text, ImVec2(-1, ImGui::GetTextLineHeight() * 4.6f)))
    m.text_edited = std::chrono::steady_clock::now();
  const ModelOutput* o = m.output.get();
  if (o && o->too_long_tokens > 0) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(ImVec4(0.95f, 0.55f, 0.3f, 1.0f), "%lld tokens, but the model has %lld positions",
                       static_cast<long long>(o->too_long_tokens), static_cast<long long>(o->too_long_limit));
    ImGui::PopTextWrapPos();
    if (ImGui::SmallButton("truncate")) m.scene.truncate = true;
  } else if (const ModelRun* r = currentRun(s)) {
    ImGui::TextDisabled("%lld tokens%s", static_cast<long long>(tokenCount(*r)), r->truncated ? " (truncated)" : "");
  }
  // Every map, or the pooled maps and summaries (a long text; chosen for you when every map would not fit).
  int pooled = m.scene.maps == MapsChoice::Mode::Pooled ? 1 : 0;
  const char* maps[] = {"every map when it fits", "pooled maps"};
  ImGui::SetNextItemWidth(-1);
  if (ImGui::Combo("##maps", &pooled, maps, 2)) m.scene.maps = pooled ? MapsChoice::Mode::Pooled : MapsChoice::Mode::Auto;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("pooled: the grid shows means of blocks of positions, the head table the streamed summaries,\n"
                      "and the focused head is recomputed whole; the run keeps no layer's every map");
  if (o && o->analysis && o->analysis->pooled && !o->analysis->run.maps_note.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%s", o->analysis->run.maps_note.c_str());
    ImGui::PopTextWrapPos();
  }
}

// The layer, the head and the query of a text model.
void textDisplayControls(AppState& s) {
  ModelViewState& v = s.model.view;
  const ModelRun* r = currentRun(s);
  if (!r) return;
  ImGui::SliderInt("layer", &v.layer, 0, static_cast<int>(r->layers) - 1);
  ImGui::SliderInt("head", &v.head, 0, static_cast<int>(r->heads) - 1);
  const int n = static_cast<int>(queryTokens(*r).size());
  int q = static_cast<int>(v.query < 0 ? n - 1 : v.query);
  if (ImGui::SliderInt("query", &q, 0, n - 1)) v.query = q;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the query token of the Q/K view and of the predictions");
  ImGui::Checkbox("value-weighted", &s.model.scene.value_weighted);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("each map as \xCE\xB1_ij \xE2\x80\x96v_j W_O\xE2\x80\x96, rows scaled to sum 1 (Kobayashi et al. 2020): "
                      "a key whose value writes little counts little; the head views and rollout (key W)");
}

void patternSection(AppState& s) {
  ModelScene& sc = s.model.scene;
  const std::vector<const VariantInfo*> options = headPatternVariants();
  const VariantInfo* info = findVariant(sc.pattern_variant);
  // A model with a sliding window (Mistral) offers its own window first: the real head against its own mask.
  const WindowPattern window = currentRun(s) ? slidingWindowPattern(*currentRun(s)) : WindowPattern{};
  const bool on_window = window.variant && info == window.variant && sc.pattern_params == window.params;
  if (ImGui::BeginCombo("pattern", on_window ? window.title.c_str() : info ? info->title.c_str() : "(none)")) {
    if (window.variant && ImGui::Selectable(window.title.c_str(), on_window) && !on_window) {
      sc.pattern_variant = window.variant->name;
      sc.pattern_params = window.params;
    }
    for (const VariantInfo* v : options)
      if (ImGui::Selectable(v->title.c_str(), v == info) && v != info) {
        sc.pattern_variant = v->name;
        sc.pattern_params = Params::defaults(v->params);
      }
    ImGui::EndCombo();
  }
  if (!info) return;
  ImGui::PushTextWrapPos(0.0f);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_PlotLinesHovered]);
  ImGui::TextUnformatted(info->summary.c_str());
  ImGui::PopStyleColor();
  ImGui::TextDisabled("%s", info->citation.c_str());
  ImGui::PopTextWrapPos();
  for (const ParamSpec& p : info->params) {
    ImGui::PushID(p.key.c_str());
    paramControl(s, sc.pattern_params, *info, p, 1, true);
    ImGui::PopID();
  }
  if (!info->params.empty() && ImGui::SmallButton("defaults")) sc.pattern_params = Params::defaults(info->params);
}

void predictionsSection(const AppState& s) {
  const ModelRun* r = currentRun(s);
  const ModelOutput* o = s.model.output.get();
  if (!r || !o || o->predictions.empty()) return;
  sectionTitle("NEXT TOKEN");
  ImGui::TextDisabled("after %s", tokenCaption(*r, o->predicted_at).c_str());
  const float w = ImGui::GetContentRegionAvail().x;
  for (const Prediction& p : o->predictions) shareRow(p.probability, "'" + shownToken(p.token) + "'", w);
}

// Run B of the compare view: its prompt (recomputed as you type) and, for a
// fine-tune, its model's folder; how the two runs were aligned.
void compareSection(AppState& s) {
  ModelState& m = s.model;
  CompareInputs& in = m.scene.inputs.compare;
  ImGui::TextDisabled("B's text (empty: A's)");
  if (ImGui::InputTextMultiline("##textb", &in.text, ImVec2(-1, ImGui::GetTextLineHeight() * 3.4f)))
    m.text_edited = std::chrono::steady_clock::now();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("run B's prompt; where its tokens differ from A's, the two are aligned by token\n"
                      "(their longest common subsequence) and each aligned row renormalised");
  TextViewState& v = kindView<TextViewState>(m.view);
  if (!v.model_b_editing) v.model_b = in.model;
  ImGui::TextDisabled("B's model folder (empty: A's)");
  ImGui::SetNextItemWidth(-1);
  if (ImGui::InputText("##modelb", &v.model_b, ImGuiInputTextFlags_EnterReturnsTrue)) in.model = v.model_b;
  v.model_b_editing = ImGui::IsItemActive();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("a checkpoint of the same layers, heads and vocabulary (a fine-tune), or shipped:NAME; Enter loads it");
  const ModelOutput* o = m.output.get();
  ImGui::PushTextWrapPos(0.0f);
  if (o && o->compare) ImGui::TextDisabled("%s", o->compare->comparison.alignment.describe().c_str());
  ImGui::PopTextWrapPos();
}

// TEXT and GENERATE
void textSections(AppState& s) {
  sectionTitle("TEXT");
  textSection(s);
  sectionTitle("GENERATE");
  generateSection(s);
}

// The pattern's controls where its view is shown, and the next-token predictions.
void textSectionsBelow(AppState& s) {
  if (s.model.view.view == "patching") {
    sectionTitle("CORRUPTED PROMPT");
    ModelState& m = s.model;
    ImGui::TextDisabled("as many tokens as the text; recomputed as you type");
    if (ImGui::InputTextMultiline("##corrupted", &m.scene.corrupted, ImVec2(-1, ImGui::GetTextLineHeight() * 3.6f)))
      m.text_edited = std::chrono::steady_clock::now();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Each head's output, and the residual stream at each position, is taken from the text's run into "
                        "this prompt's run: how much of the text's prediction does each restore?");
  }
  if (s.model.view.view == "pattern") {
    sectionTitle("PATTERN ON THE FOCUSED HEAD");
    patternSection(s);
  }
  if (s.model.view.view == "compare") {
    sectionTitle("RUN B");
    compareSection(s);
  }
  predictionsSection(s);
}


// The window of `layer` (0: none): models alternating local and global layers have one on the local ones only.
// [SECTION] Model view (grid + focused head)

int64_t layerWindow(const ModelRun& r, int layer) {
  return r.layer_window.empty() ? r.sliding_window : r.layer_window[static_cast<size_t>(layer)];
}

// One head's map (`map`, of `layer`) with token axes and the layer's window.
MatrixSpec headView(const ModelRun& r, const Mat& map, int layer) {
  MatrixSpec v = MatrixSpec::of(map);
  v.row_labels = &queryTokens(r);
  v.col_labels = &r.tokens;
  v.sliding_window = layerWindow(r, layer);
  v.window_centered = !r.causal;
  return v;
}

// The grid of a model too large for thumbnails: a layers × heads map of one
// measure per head, chosen above it; hover a cell for its head's map, click
// to focus the head.
void headMeasureGrid(AppState& s, const ModelAnalysis& a, HeatmapRenderer& gl, ImVec2 size) {
  ModelViewState& v = s.model.view;
  TextViewState& own = kindView<TextViewState>(v);
  const ModelRun& r = a.run;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("each cell: one head's");
  ImGui::SameLine();
  const std::vector<std::string>& names = headMeasureNames();
  int chosen = static_cast<int>(own.measure);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
  if (ImGui::BeginCombo("##measure", names[static_cast<size_t>(chosen)].c_str())) {
    for (size_t i = 0; i < names.size(); ++i)
      if (ImGui::Selectable(names[i].c_str(), static_cast<int>(i) == chosen)) chosen = static_cast<int>(i);
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", (std::to_string(r.layers * r.heads) +
                             " thumbnails would be too small to read: each head is one cell of this measure").c_str());
  own.measure = static_cast<HeadMeasure>(chosen);
  if (!own.measure_result || own.measure_generation != s.model.generation || own.measure_of_result != own.measure) {
    own.measure_result = std::make_shared<const Result>(headMeasureResult(a, own.measure, "heads"));
    own.measure_generation = s.model.generation;
    own.measure_of_result = own.measure;
  }
  const Result& m = *own.measure_result;
  MatrixSpec spec = weightsSpec(m, 0);
  spec.title = headMeasureLabel(own.measure) + " per head";
  MatrixStyle st;
  st.range = weightsRange(m);
  st.colormap = s.settings.colormap;
  st.tooltip = false;
  st.max_cell_aspect = 3.0f;
  const float used = ImGui::GetCursorScreenPos().y - origin.y;
  const HeatmapEvents ev = heatmap("measures", spec, st, v.grid_zoom, gl, ImVec2(size.x, std::max(8.0f, size.y - used)));
  offerAnchor(s, ev.placed);
  if (s.describe && ev.placed.valid()) {  // the matrix as drawn: its cells' box and size
    const MatrixPlacement& p = ev.placed;
    s.described["panels"] = {{{"kind", "matrix"},
                              {"title", spec.title},
                              {"rows", m.weights[0].rows()},
                              {"cols", m.weights[0].cols()},
                              {"range", {st.range.lo, st.range.hi}},
                              {"area", {p.x0, p.y0, p.x1 - p.x0, p.y1 - p.y0}},
                              {"cell", std::min((p.x1 - p.x0) / static_cast<float>(p.cols), (p.y1 - p.y0) / static_cast<float>(p.rows))}}};
  }
  if (ev.placed.valid()) {  // the focused head framed
    const MatrixPlacement& p = ev.placed;
    ImGui::GetWindowDrawList()->AddRect(ImVec2(p.colX(v.head), p.rowY(v.layer)), ImVec2(p.colX(v.head + 1.0), p.rowY(v.layer + 1.0)),
                                        ImGui::GetColorU32(ImGuiCol_PlotHistogram), 0.0f, 0, 2.0f);
  }
  if (ev.hovered && ev.row >= 0 && ev.col >= 0) {
    const auto l = static_cast<size_t>(ev.row), h = static_cast<size_t>(ev.col);
    ImGui::BeginTooltip();
    ImGui::Text("%s: %s %.3f; click to focus it", headLabel(ev.row, ev.col).c_str(), headMeasureLabel(own.measure).c_str(),
                static_cast<double>(m.weights[0](ev.row, ev.col)));
    const std::vector<std::vector<Mat>>& maps = a.pooled ? a.thumbnails : r.attention;
    MatrixStyle thumb = probabilityStyle(s);
    thumb.labels = thumb.colorbar = thumb.tooltip = false;
    const float side = ImGui::GetFontSize() * 11;
    heatmap("hovered", MatrixSpec::of(maps[l][h]), thumb, v.focus_zoom, gl, ImVec2(side, side));
    ImGui::EndTooltip();
  }
  if (ev.clicked && ev.row >= 0 && ev.col >= 0) {
    v.layer = static_cast<int>(ev.row);
    v.head = static_cast<int>(ev.col);
  }
}

void modelGridView(AppState& s, const ModelAnalysis& a, HeatmapRenderer& gl) {
  ModelViewState& v = s.model.view;
  const ModelRun& r = a.run;
  const bool gqa = r.kv_heads > 0 && r.kv_heads < r.heads;
  const std::string pooled =
      a.pooled ? "; thumbnails pooled (means of " + std::to_string(r.pooled.block) + "\xC3\x97" +
                     std::to_string(r.pooled.block) + " positions: every map would not fit), the focused head whole"
               : std::string();
  // Whether thumbnails would be readable in the grid's column (the layout below), the header's line aside.
  const float font = ImGui::GetFontSize();
  const ImVec2 whole = ImGui::GetContentRegionAvail();
  const float caption_h = font * (gqa ? 3.4f : 2.0f);
  const float group_gaps = gqa ? font * 0.7f * static_cast<float>(r.kv_heads - 1) : 0.0f;
  const bool cells = !thumbnailsReadable(whole.x * 0.4f - font * 3 - group_gaps, (whole.y - font * 2) * 0.7f - caption_h, r.layers, r.heads);
  modelHeader(s, layersByHeads(r.layers, r.heads) +
                (gqa ? " in " + std::to_string(r.kv_heads) + " kv groups" : std::string()) + pooled +
                (cells ? "; a cell per head (thumbnails would be too small to read), its map on hover"
                       : "; bar: first-token share (accent from 0.3: a sink)") +
                (layerWindow(r, v.layer) > 0
                     ? "; line: layer " + std::to_string(v.layer) + "'s window of " +
                           std::to_string(layerWindow(r, v.layer)) + " keys"
                     : std::string()) +
                "; click " + (cells ? "a cell" : "a thumbnail") + " to focus it (right: " + headLabel(v.layer, v.head) + ")");
  // Layout: the grid in a left column 40 % of the width (less when the
  // grid is tall and narrow), the focused head's numbers under it, and the
  // focused head taking the rest, its cells stretched up to 1.6:1 so it fills
  // the height and the width alike. A model whose thumbnails would be too
  // small to read shows a cell per head instead (a summary of the head, its
  // map on hover), in a column of 46 % of the width.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float gap = font * 1.5f;
  const float layers = static_cast<float>(std::max<int64_t>(1, r.layers)), heads = static_cast<float>(std::max<int64_t>(1, r.heads));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const MatrixStyle st = probabilityStyle(s);
  float grid_w = 0, grid_h = 0;
  // Many heads across (64 of them at 1280 × 720): the cells' map takes the width over the focused head,
  // where the left column would leave a cell under 8 pixels.
  const bool across = cells && std::min((avail.x * 0.46f - font * 9) / heads, (avail.y * 0.72f - font * 5) / layers) < 8.0f;
  if (cells) {
    grid_w = across ? avail.x : avail.x * 0.46f;
    grid_h = avail.y * (across ? 0.56f : 0.72f);
    headMeasureGrid(s, a, gl, ImVec2(grid_w, grid_h));
  } else {
    grid_w = std::min(avail.x * 0.4f, (avail.y * 0.7f - caption_h) * heads / layers + font * 3 + group_gaps);
    grid_h = std::min(avail.y * 0.7f, (grid_w - font * 3 - group_gaps) * layers / heads + caption_h);
    // Each thumbnail's first-token share (engine summaries) as a bar; GQA groups side by side.
    std::vector<float> sinks;
    for (const HeadSummary& h : a.summaries) sinks.push_back(static_cast<float>(h.sink));
    HeadGridMarks marks;
    marks.group = r.kv_heads > 0 ? static_cast<int>(r.heads / r.kv_heads) : 1;
    marks.share = &sinks;
    marks.share_threshold = static_cast<float>(kSinkShare);
    marks.share_name = "first-token share";
    const HeadPick pick =
        headGrid("grid", a.pooled ? a.thumbnails : r.attention, nullptr, st, v.layer, v.head, v.grid_zoom, gl,
                 ImVec2(grid_w, grid_h), marks);
    if (pick.layer >= 0) {
      v.layer = pick.layer;
      v.head = pick.head;
    }
  }
  // The focused head's numbers under the grid (across: in a column under its left side), its map beside
  // the grid (across: beside the numbers, under the grid).
  const float column_w = across ? avail.x * 0.34f : grid_w, below = origin.y + grid_h + font;
  if (s.model.output && s.model.output->analysis) {
    ImGui::SetCursorScreenPos(ImVec2(origin.x, below));
    focusedHeadNumbers(s.model.output->analysis->summaries, v.layer, v.head, column_w, {});
    ImGui::Spacing();
    const int64_t q = v.query < 0 ? static_cast<int64_t>(queryTokens(r).size()) - 1 : v.query;
    if (const Mat* map = focusMap(s))
      strongestKeys("QUERY " + queryCaption(r, q) + " ATTENDS TO", *map, q, [&r](int64_t k) { return tokenCaption(r, k); },
                    column_w, origin.y + avail.y - ImGui::GetCursorScreenPos().y);
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x + column_w + gap, across ? below : origin.y));
  ImGui::BeginGroup();
  ImGui::Text("layer %d, head %d", v.layer, v.head);
  MatrixStyle focus = st;
  focus.max_cell_aspect = 1.6f;
  const ImVec2 focus_size(avail.x - column_w - gap,
                          (across ? origin.y + avail.y - below : avail.y) - ImGui::GetTextLineHeightWithSpacing());
  if (const Mat* map = focusMap(s)) {
    offerAnchor(s, heatmap("focus", headView(r, *map, v.layer), focus, v.focus_zoom, gl, focus_size).placed);
  } else {  // a pooled run: the job recomputes this head's map, or says why it cannot
    const ModelOutput& o = *s.model.output;
    const bool failed = o.focus_layer == v.layer && o.focus_head == v.head && !o.focus_error.empty();
    centeredText(focus_size, failed ? (o.focus_error + "; the grid shows it pooled").c_str()
                                    : ("computing " + headLabel(v.layer, v.head) + "'s whole map over " +
                                       std::to_string(tokenCount(r)) + " tokens\xE2\x80\xA6")
                                          .c_str());
  }
  ImGui::EndGroup();
}

// [SECTION] Heads view

void headsView(AppState& s, const ModelRun& r) {
  ModelViewState& v = s.model.view;
  modelHeader(s, "layer " + std::to_string(v.layer) + ": token lines, opacity = weight, colour = head; hover a token");
  if (!v.layer_result || v.layer_generation != s.model.generation || v.layer_of_result != v.layer) {
    v.layer_result = std::make_shared<const Result>(layerResult(r, v.layer, "layer " + std::to_string(v.layer)));
    v.layer_generation = s.model.generation;
    v.layer_of_result = v.layer;
  }
  tokenLines("lines", *v.layer_result, v.lines, ImGui::GetContentRegionAvail());
}

// [SECTION] Q/K view

void qkView(AppState& s, const ModelRun& r, HeatmapRenderer& gl) {
  ModelViewState& v = s.model.view;
  TextViewState& own = kindView<TextViewState>(v);
  if (!own.qk_pair || own.qk_pair->generation != s.model.generation || own.qk_pair->terms.layer != v.layer ||
      own.qk_pair->terms.head != v.head || own.qk_pair->query_selected != v.query || own.qk_pair->key_selected != v.key) {
    const int64_t q = v.query < 0 ? tokenCount(r) - 1 : v.query;
    const int64_t k = v.key < 0 ? strongestKey(r, v.layer, v.head, q) : v.key;
    TextViewState::QkPair p{s.model.generation, v.query, v.key, qkTerms(r, v.layer, v.head, q, k), {}, {}};
    const ValueStats qs = ValueStats::of(p.terms.q.data.data(), p.terms.q.size());
    const ValueStats ks = ValueStats::of(p.terms.k.data.data(), p.terms.k.size());
    p.qk_range = valueRange({std::min(qs.min, ks.min), std::max(qs.max, ks.max)}, true);
    p.product_range = valueRange(ValueStats::of(p.terms.product.data.data(), p.terms.product.size()), true);
    if (r.rope) {
      p.band_range = valueRange(ValueStats::of(p.terms.band.data.data(), p.terms.band.size()), true);
      p.angles = ropeAngles(layerRopeTheta(r, v.layer), tokenCount(r));
      p.theta_labels = thetaLabels(r, v.layer);
    }
    if (r.softcap > 0) p.score_change = softcapBend(r, v.layer, v.head);
    else if (!r.alibi_slopes.empty()) p.score_change = alibiBias(r, v.layer, v.head);
    own.qk_pair = std::move(p);
  }
  const QkTerms& t = own.qk_pair->terms;
  const int64_t q = t.query, k = t.key;
  modelHeader(s, headLabel(v.layer, v.head) + ": query " + tokenCaption(r, q) + " \xC2\xB7 key " + tokenCaption(r, k) +
                "; click a cell to pick another pair");
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float gap = ImGui::GetFontSize() * 1.5f;
  // The head's weights take the left half at full height (cells up to 2.2:1),
  // the q, k and product bars the rest. RoPE: the head's weights take the top
  // 60 % of the left half and the rotation angles the rest under them; the
  // frequency bands are a fourth bar panel.
  const bool under = r.rope || own.qk_pair->score_change.size() > 0;  // a panel under the head's weights
  const float side = avail.x * 0.5f, head_h = under ? avail.y * 0.6f : avail.y;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  MatrixStyle st = probabilityStyle(s);
  st.max_cell_aspect = 2.2f;
  const HeatmapEvents ev = heatmap("pairs", headView(r, *focusMap(s), v.layer), st, v.qk_zoom, gl, ImVec2(side, head_h));
  offerAnchor(s, ev.placed);
  if (ev.clicked && ev.row >= 0 && ev.col >= 0) {
    v.query = ev.row;
    v.key = ev.col;
  }
  if (own.qk_pair->score_change.size() > 0) {
    // What the family adds to the scores: the soft-cap's bend (Gemma 2) or ALiBi's bias (BLOOM).
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + head_h + ImGui::GetStyle().ItemSpacing.y));
    const bool cap = r.softcap > 0;
    if (cap)
      ImGui::TextDisabled("soft-cap c = %g: how far it bent each score, s \xE2\x88\x92 c\xC2\xB7tanh(s/c)", r.softcap);
    else
      ImGui::TextDisabled("ALiBi bias added to the scores: slope %.3g \xC2\xB7 key position j",
                          r.alibi_slopes[static_cast<size_t>(v.head)]);
    MatrixSpec m = MatrixSpec::of(own.qk_pair->score_change);
    m.row_labels = m.col_labels = &r.tokens;
    m.value_label = cap ? "score \xE2\x88\x92 capped" : "bias";
    MatrixStyle cs;
    cs.range = valueRange(ValueStats::of(own.qk_pair->score_change.data(), own.qk_pair->score_change.size()), true);
    cs.colormap = s.settings.colormap;
    cs.max_cell_aspect = 2.2f;
    heatmap("score_change", m, cs, own.angle_zoom, gl, ImVec2(side, origin.y + avail.y - ImGui::GetCursorScreenPos().y));
  } else if (r.rope) {
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + head_h + ImGui::GetStyle().ItemSpacing.y));
    ImGui::TextDisabled("RoPE angle m\xC2\xB7\xCE\xB8\xE1\xB5\xA2 mod 2\xCF\x80 per position m and pair i");
    MatrixSpec m = MatrixSpec::of(own.qk_pair->angles);
    m.row_labels = &r.tokens;
    m.col_labels = &own.qk_pair->theta_labels;
    m.row_axis = "position m";
    m.col_axis = "\xCE\xB8\xE1\xB5\xA2";
    m.value_label = "angle (rad)";
    MatrixStyle as;
    as.range = {0.0f, 6.2832f, false};
    as.colormap = s.settings.colormap;
    as.max_cell_aspect = 16.0f;  // a few dimension pairs over many positions: wide cells fill the space
    heatmap("angles", m, as, own.angle_zoom, gl, ImVec2(side, origin.y + avail.y - ImGui::GetCursorScreenPos().y));
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x + side + gap, origin.y));
  ImGui::BeginGroup();
  const float w = avail.x - side - gap;
  ImGui::Text("\xCE\xA3 q\xE2\x88\x98k = q\xC2\xB7k = %.4g", t.dot);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  // Two short lines: at 1280 px one would run off the column (and wrapping broke it inside a number).
  if (r.score_scale > 0)
    ImGui::Text("score = q\xC2\xB7k \xC3\x97 %.4g = %.4g", t.scale, t.score);
  else
    ImGui::Text("score = q\xC2\xB7k / \xE2\x88\x9A%lld = %.4g", static_cast<long long>(r.d_head), t.score);
  if (r.softcap > 0)
    ImGui::Text("capped = %g\xC2\xB7tanh(score/%g) = %.4g%s", r.softcap, r.softcap, t.capped, t.bent ? " (bent by the cap)" : "");
  if (!r.alibi_slopes.empty()) ImGui::Text("+ ALiBi bias %.4g = %.4g before softmax", t.bias, t.logit);
  ImGui::Text("weight after softmax = %.4f", t.weight);
  ImGui::PopStyleColor();
  const ValueRange& vr = own.qk_pair->qk_range;
  const ValueRange& pr = own.qk_pair->product_range;
  const bool qknorm = !t.q_prenorm.data.empty();
  ValueRange pre_range = vr;
  if (qknorm) {
    const ValueStats a = ValueStats::of(t.q_prenorm.data.data(), t.q_prenorm.size());
    const ValueStats b = ValueStats::of(t.k_prenorm.data.data(), t.k_prenorm.size());
    pre_range = valueRange({std::min(a.min, b.min), std::max(a.max, b.max)}, true);
  }
  // Partial rotary: only the first r of d dimensions rotate; the rest add their products unrotated.
  const bool partial = t.rotary_dims < r.d_head;
  // Partial rotary: say which dimensions turned.
  const std::string rotated = !r.rope ? ""
                              : partial ? " (dims 0\xE2\x80\x93" + std::to_string(t.rotary_dims - 1) + " rotated)"
                                        : " (rotated)";
  const std::string band_title =
      partial
          ? "q\xC2\xB7k by band, dims 0\xE2\x80\x93" + std::to_string(t.rotary_dims - 1) + "; unrotated " +
                std::to_string(t.rotary_dims) + "\xE2\x80\x93" + std::to_string(r.d_head - 1) + " add " +
                formatValueShort(t.unrotated)
          : std::string("q\xC2\xB7k by frequency band \xCE\xB8\xE1\xB5\xA2: q\xE1\xB5\xA2k\xE1\xB5\xA2 + "
                        "q\xE1\xB5\xA2\xE2\x82\x8A\xE2\x82\x95k\xE1\xB5\xA2\xE2\x82\x8A\xE2\x82\x95 (h = d/2)");
  const struct {
    const char* id;
    std::string title;
    const Array& values;
    const ValueRange& range;
    const std::vector<std::string>* labels;
    const char* axis;
  } bars[] = {{"q", "q \xE2\x80\x94 query " + tokenCaption(r, q) + (qknorm ? " after QK-norm" : "") + rotated, t.q, vr, nullptr, "dimension"},
              {"k", "k \xE2\x80\x94 key " + tokenCaption(r, k) + (qknorm ? " after QK-norm" : "") + rotated, t.k, vr, nullptr, "dimension"},
              {"p", "q \xE2\x88\x98 k (element-wise product; its sum is q\xC2\xB7k)", t.product, pr, nullptr, "dimension"},
              {"band", band_title, t.band, own.qk_pair->band_range, &own.qk_pair->theta_labels, "\xCE\xB8_i"},
              {"qpre", "q before QK-norm", t.q_prenorm, pre_range, nullptr, "dimension"},
              {"kpre", "k before QK-norm", t.k_prenorm, pre_range, nullptr, "dimension"}};
  // The bar panels one above the other: q, k, q∘k, for RoPE the bands, for QK-norm q and k before it.
  std::vector<int> shown = {0, 1, 2};
  if (r.rope) shown.push_back(3);
  if (qknorm) shown.insert(shown.end(), {4, 5});
  const int panels = static_cast<int>(shown.size());
  // Each panel: its caption line, the bars, the spacing after them.
  const float line = ImGui::GetTextLineHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
  const float panel = (ImGui::GetContentRegionAvail().y - line * static_cast<float>(panels)) / static_cast<float>(panels);
  for (const int i : shown) {
    const auto& b = bars[i];
    ImGui::TextDisabled("%s", b.title.c_str());
    valueBars(b.id, b.values, b.labels, b.range, colormapFor(b.range, s.settings.colormap), b.title, ImVec2(w, panel),
              b.axis);
  }
  ImGui::EndGroup();
}

// [SECTION] Rollout view

void rolloutView(AppState& s, const ModelAnalysis& a, HeatmapRenderer& gl) {
  ModelViewState& v = s.model.view;
  TextViewState& own = kindView<TextViewState>(v);
  modelHeader(s, "attention rollout through layers 0\xE2\x80\xA6" + std::to_string(v.layer) +
                " (\xC2\xBD mean of heads + \xC2\xBD identity, multiplied layer by layer)" +
                (a.rollout_mask.size() ? "; query 0 reads only itself (grey)" : ""));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  ImGui::SliderInt("up to layer##rollout", &v.layer, 0, static_cast<int>(a.rollout.size()) - 1);
  MatrixSpec m = MatrixSpec::of(a.rollout[static_cast<size_t>(v.layer)]);
  if (a.rollout_mask.size()) m.mask = &a.rollout_mask;  // row 0 reads only itself: grey, as in the figure
  m.row_labels = &a.run.tokens;
  m.col_labels = &a.run.tokens;
  m.value_label = "rollout weight";
  MatrixStyle st;
  st.range = valueRange(a.rollout_stats[static_cast<size_t>(v.layer)], false);
  st.colormap = s.settings.colormap;
  st.max_cell_aspect = cellAspect(imguiCanvas(), m, viewParams(s));  // a view's square map: 1.6:1 on the desk, 2.5:1 presenting
  offerAnchor(s, heatmap("rollout", m, st, own.rollout_zoom, gl, ImGui::GetContentRegionAvail()).placed);
}

// [SECTION] Table view

// Induction against previous-token score, a dot per head in its layer's
// colour: the two scores that find an induction circuit, under a table short
// enough to leave the room. Hover names a dot, a click focuses its head.
void drawHeadScatter(AppState& s, const ModelAnalysis& a, ImVec2 size) {
  ModelViewState& v = s.model.view;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##scatter", size);
  const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
  const Scatter scatter = headScatter(a.summaries);
  Primitives prims;
  const ScatterLayout g = scatterPrimitives(prims, imguiCanvas(), {origin.x, origin.y, size.x, size.y}, scatter);
  drawPrimitives(ImGui::GetWindowDrawList(), prims);
  if (s.describe)  // the plot's frame (the legend and axes around it are texts the description lists)
    s.described["panels"] = {{{"kind", "points"}, {"title", scatter.y_axis + " against " + scatter.x_axis},
                              {"area", {g.plot.x, g.plot.y, g.plot.w, g.plot.h}}}};
  const ImVec2 m = ImGui::GetIO().MousePos;
  const int64_t at = hovered ? g.pointAt(m.x, m.y, ImGui::GetFontSize()) : -1;
  if (at < 0) return;
  const HeadSummary& h = a.summaries[static_cast<size_t>(at)];
  ImGui::SetTooltip("%s: previous-token %.3f, induction %.3f\nclick to focus it", headLabel(h.layer, h.head).c_str(),
                    h.previous_token, h.induction);
  if (clicked) {
    v.layer = static_cast<int>(h.layer);
    v.head = static_cast<int>(h.head);
  }
}

void tableView(AppState& s, const ModelAnalysis& a) {
  ModelViewState& v = s.model.view;
  modelHeader(s, "head summaries; click a column to sort, a row to focus the head (hover a header for its definition)");
  ImVec2 avail = ImGui::GetContentRegionAvail();
  // The table as tall as its rows; what is left, when it is room for a plot, shows the heads' two scores.
  const float line = ImGui::GetFrameHeightWithSpacing();
  const float row_h = ImGui::GetTextLineHeight() + ImGui::GetStyle().CellPadding.y * 2;
  const float table_h = row_h * (static_cast<float>(a.summaries.size()) + 2.0f) + ImGui::GetStyle().CellPadding.y * 4 + 2;
  const bool scatter = avail.y - table_h >= line * 9;
  const int row = headTable("##heads", a.summaries, v.layer, v.head, v.table, ImVec2(avail.x, scatter ? table_h : avail.y));
  if (row >= 0) {
    v.layer = static_cast<int>(a.summaries[static_cast<size_t>(row)].layer);
    v.head = static_cast<int>(a.summaries[static_cast<size_t>(row)].head);
  }
  if (!scatter) return;
  ImGui::Spacing();
  avail = ImGui::GetContentRegionAvail();
  drawHeadScatter(s, a, avail);
}

// [SECTION] Pattern view

void patternView(AppState& s, const ModelRun& r, HeatmapRenderer& gl) {
  ModelViewState& v = s.model.view;
  TextViewState& own = kindView<TextViewState>(v);
  const ModelOutput& o = *s.model.output;
  const VariantInfo* info = findVariant(s.model.scene.pattern_variant);
  if (!o.has_pattern || (o.pattern && (o.pattern->layer != v.layer || o.pattern->head != v.head))) {
    centeredText(ImGui::GetContentRegionAvail(), "applying the pattern to the head\xE2\x80\xA6");
    return;
  }
  if (!o.pattern) {
    centeredText(ImGui::GetContentRegionAvail(), o.pattern_error.c_str());
    return;
  }
  const HeadPattern& p = *o.pattern;
  char kept[64];
  std::snprintf(kept, sizeof kept, "%.1f%%", 100.0 * p.mass_kept_mean);
  modelHeader(s, std::string(info ? info->title : p.result.variant) + " on " + headLabel(v.layer, v.head) +
                ": keeps " + kept + " of the head's real attention mass");
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float gap = ImGui::GetFontSize() * 1.2f, caption = ImGui::GetTextLineHeightWithSpacing();
  const float strip = ImGui::GetFontSize() * 9.0f;
  // The two maps side by side over the strip, their cells stretching as a view's square map does.
  const ImVec2 box(std::max(8.0f, (avail.x - gap) * 0.5f), std::max(8.0f, avail.y - strip - caption * 2));
  MatrixStyle st = probabilityStyle(s);
  st.max_cell_aspect = cellAspect(imguiCanvas(), MatrixSpec::of(p.real), viewParams(s));
  ImGui::BeginGroup();
  ImGui::TextDisabled("real head %s", headLabel(v.layer, v.head).c_str());
  MatrixSpec real = MatrixSpec::of(p.real);
  real.row_labels = real.col_labels = &r.tokens;
  real.sliding_window = layerWindow(r, v.layer);
  real.window_centered = !r.causal;
  offerAnchor(s, heatmap("real", real, st, own.pattern_zoom, gl, box).placed);
  ImGui::EndGroup();
  ImGui::SameLine(0, gap);
  ImGui::BeginGroup();
  ImGui::TextDisabled("%s weights on the same q, k", info ? info->title.c_str() : "pattern");
  MatrixSpec pat = p.result.weights.empty() ? MatrixSpec::of(p.result.sparse[0]) : MatrixSpec::of(p.result.weights[0]);
  pat.row_labels = pat.col_labels = &r.tokens;
  if (p.result.mask.size()) pat.mask = &p.result.mask;  // keys outside the pattern in grey, as the figure has them
  heatmap("pattern", pat, st, own.pattern_zoom, gl, box);
  ImGui::EndGroup();
  ImGui::TextDisabled("real attention mass kept per query (mean %s)", kept);
  Array mass;
  mass.shape = {p.mass_kept.cols()};
  mass.data.assign(p.mass_kept.data(), p.mass_kept.data() + p.mass_kept.size());
  const ValueRange unit{0.0f, 1.0f, false};
  valueBars("kept", mass, &r.tokens, unit, s.settings.colormap, "mass kept", ImGui::GetContentRegionAvail());
}

// [SECTION] Text view

// The text view's shading of query `q` in the current selection, recomputed when any of it changes.
const TextViewState::Shading& currentShading(AppState& s, const ModelOutput& o, int64_t q) {
  ModelViewState& v = s.model.view;
  TextViewState& own = kindView<TextViewState>(v);
  const std::optional<TextViewState::Shading>& c = own.shading;
  if (!c || c->generation != s.model.generation || c->shade != own.shade || c->layer != v.layer || c->head != v.head ||
      c->query != q) {
    TextViewState::Shading next{s.model.generation, own.shade, v.layer, v.head, q, nullptr, ""};
    try {
      next.received = std::make_shared<const ReceivedAttention>(receivedAttention(o, own.shade, v.layer, v.head, q));
    } catch (const InputError& e) {
      next.error = e.what();
    }
    own.shading = std::move(next);
  }
  return *own.shading;
}

// The running text wrapped to the view's width at the window's text size,
// scrolling; each token shaded by the attention the query gives it. Hovering
// a token makes it the query until a click pins one; the selected query's
// lines are scrolled into view when it changes.
void textView(AppState& s, const ModelOutput& o) {
  ModelViewState& v = s.model.view;
  TextViewState& own = kindView<TextViewState>(v);
  const ModelRun& r = o.analysis->run;
  const int64_t n = tokenCount(r), selected = v.query < 0 ? n - 1 : v.query;
  const int64_t q = own.hovered >= 0 && !own.pinned ? own.hovered : selected;
  const char* shades[] = {"one head", "layer mean", "rollout"};
  modelHeader(s, std::string("each token shaded by the attention query ") + tokenCaption(r, q) + " gives it; " +
                     (own.pinned ? "pinned (click it again to unpin)" : "hover a token to make it the query, click to pin it") +
                     "; \xE2\x86\x90 \xE2\x86\x92 query, \xE2\x86\x91 \xE2\x86\x93 layer, H head, S shading");
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("shade by");
  for (int i = 0; i < 3; ++i) {
    ImGui::SameLine();
    if (ImGui::RadioButton(shades[i], own.shade == static_cast<TextShade>(i))) own.shade = static_cast<TextShade>(i);
  }
  ImGui::SameLine();
  ImGui::TextDisabled("(key S)");
  // A pooled run's head: its whole map comes from the job (ModelOutput::focus_map).
  if (o.analysis->pooled && own.shade == TextShade::Head && !focusMap(s)) {
    const bool failed = o.focus_layer == v.layer && o.focus_head == v.head && !o.focus_error.empty();
    centeredText(ImGui::GetContentRegionAvail(), failed ? o.focus_error.c_str()
                                                        : ("computing " + headLabel(v.layer, v.head) + "'s whole map over " +
                                                           groupDigits(n) + " tokens\xE2\x80\xA6").c_str());
    return;
  }
  const TextViewState::Shading& shading = currentShading(s, o, q);
  if (!shading.received) {
    centeredText(ImGui::GetContentRegionAvail(), shading.error.c_str());
    return;
  }
  const Canvas canvas = imguiCanvas();
  ShadedText t;
  t.tokens = &r.tokens;
  t.weights = &shading.received->weights;
  t.query = q;
  t.range = receivedRange(*shading.received, s.scale);
  t.cmap = s.settings.colormap;
  t.what = "weight (" + shading.received->what + ")";
  // The colour bar in a column at the right; the text scrolls in the rest.
  const ImVec2 avail = ImGui::GetContentRegionAvail(), origin = ImGui::GetCursorScreenPos();
  const float bar_w = shadedTextBarWidth(canvas, t.range);
  Primitives bar;
  colorbarPrimitives(bar, origin.x + avail.x - bar_w + canvas.unit * 0.8f, origin.y, canvas.unit * 0.9f,
                     std::min(avail.y, canvas.unit * 18), t.cmap, t.range, t.what, labelPx(canvas), canvas.measure(labelPx(canvas)));
  drawPrimitives(ImGui::GetWindowDrawList(), bar);
  ImGui::BeginChild("##shadedtext", ImVec2(std::max(8.0f, avail.x - bar_w), avail.y), false);
  const float width = std::max(canvas.unit * 4, ImGui::GetWindowWidth() - ImGui::GetStyle().ScrollbarSize - canvas.unit * 0.5f);
  const TextFlow flow = flowTokens(canvas, r.tokens, width, shadedTextPx(canvas, r.tokens, width, ImGui::GetWindowHeight()));
  const ImVec2 top = ImGui::GetCursorScreenPos();  // the flow's top-left, scrolled
  ImGui::InvisibleButton("##tokens", ImVec2(width, std::max(1.0f, flow.height())));
  const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
  const ImVec2 m = ImGui::GetIO().MousePos;
  own.hovered = hovered ? flow.tokenAt(m.x - top.x, m.y - top.y) : -1;
  if (clicked && own.hovered >= 0) {  // pin the token as the query, or unpin the pinned one
    own.pinned = !(own.pinned && own.hovered == selected);
    v.query = own.hovered;
  }
  // The selected query's lines in view when it changes (keys, a pin, a new run), not as the mouse moves.
  const float view_h = ImGui::GetWindowHeight(), scroll = ImGui::GetScrollY();
  if (own.scrolled_to != selected || own.scrolled_generation != s.model.generation) {
    const float y = flow.line_h * static_cast<float>(flow.lineOf(selected));
    if (y < scroll || y + flow.line_h > scroll + view_h) ImGui::SetScrollY(std::max(0.0f, y - view_h * 0.4f));
    own.scrolled_to = selected;
    own.scrolled_generation = s.model.generation;
  }
  // Only the lines in view are drawn (thousands of tokens scroll).
  const auto line0 = static_cast<int64_t>(scroll / flow.line_h);
  const auto line1 = static_cast<int64_t>((scroll + view_h) / flow.line_h) + 1;
  Primitives prims;
  shadedTextPrimitives(prims, canvas, flow, top.x, top.y + flow.line_h * static_cast<float>(line0), line0, line1, t);
  drawPrimitives(ImGui::GetWindowDrawList(), prims);
  if (own.hovered >= 0) {
    const float w = shading.received->weights[static_cast<size_t>(own.hovered)];
    const std::string weight = w < 0 ? "not seen by the query (it comes after it)" : "weight " + formatValueShort(w);
    ImGui::SetTooltip("%s: %s from query %s\n%s", tokenCaption(r, own.hovered).c_str(), weight.c_str(),
                      tokenCaption(r, q).c_str(),
                      own.pinned ? (own.hovered == selected ? "click: unpin" : "click: pin it as the query")
                                 : "click: pin it as the query");
  }
  ImGui::EndChild();
}

// B the compare view (past the tenth view: no digit); ← → the query, ↑ ↓ the layer,
// H the next head, S the next shading: the text view's keys.
void textKey(AppState& s, int key) {
  ModelViewState& v = s.model.view;
  if (key == GLFW_KEY_B && findModelView(modelKindOf(s.model.scene), "compare")) {  // attention from a file has none
    v.view = "compare";
    return;
  }
  const ModelRun* r = currentRun(s);
  if (key == GLFW_KEY_W && r) s.model.scene.value_weighted = !s.model.scene.value_weighted;  // every view
  if (v.view != "text" || !r) return;
  TextViewState& own = kindView<TextViewState>(v);
  const int64_t n = tokenCount(*r);
  // After Generate, ← → step through the new tokens (generationKey).
  if (!s.model.scene.generation && (key == GLFW_KEY_LEFT || key == GLFW_KEY_RIGHT)) {
    const int64_t q = v.query < 0 ? n - 1 : v.query;
    v.query = std::clamp<int64_t>(q + (key == GLFW_KEY_LEFT ? -1 : 1), 0, n - 1);
    own.pinned = true;
  }
  if (key == GLFW_KEY_UP) v.layer = std::max(0, v.layer - 1);
  if (key == GLFW_KEY_DOWN) v.layer = std::min(static_cast<int>(r->layers) - 1, v.layer + 1);
  if (key == GLFW_KEY_H) v.head = (v.head + 1) % static_cast<int>(r->heads);
  if (key == GLFW_KEY_S) own.shade = static_cast<TextShade>((static_cast<int>(own.shade) + 1) % 3);
}

// Every view of a text model shares the generation's timeline; the views that read every map refuse a pooled run.
bool textPrepare(AppState& s, const ModelOutput& o) {
  clampModelSelection(s.model);
  generationTimeline(s);
  const std::string& view = s.model.view.view;
  if (o.analysis->pooled && (view == "heads" || view == "qk" || view == "rollout")) {
    centeredText(ImGui::GetContentRegionAvail(), everyMapRefusal(*o.analysis, "the " + view + " view").c_str());
    return false;
  }
  if (view == "rollout" && !o.analysis->run.query_tokens.empty()) {
    centeredText(ImGui::GetContentRegionAvail(), "rollout composes a model's self-attention layer by layer: cross-attention has none");
    return false;
  }
  if (view == "qk" && o.analysis->run.q.empty()) {  // attention from a file without its q and k
    centeredText(ImGui::GetContentRegionAvail(),
                 "the Q/K view needs each layer's queries and keys, which this file lacks: open it with --q Q.npy --k K.npy");
    return false;
  }
  return true;
}

// ATTENTION FILE: what was read, and what the views can draw from it.
void attentionSections(AppState& s) {
  const AttentionSource* src = s.model.scene.source.get();
  if (!src) return;
  const ModelRun& r = src->analysis->run;
  sectionTitle("ATTENTION FILE");
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", src->described.c_str());
  if (!r.query_tokens.empty())
    ImGui::TextDisabled("cross-attention: %lld target rows over %lld source tokens", static_cast<long long>(r.query_tokens.size()),
                        static_cast<long long>(tokenCount(r)));
  else
    ImGui::TextDisabled("%lld tokens \xC2\xB7 %s", static_cast<long long>(tokenCount(r)), r.causal ? "causal" : "bidirectional");
  ImGui::TextDisabled("%s", r.q.empty() ? "no q, k (Q/K view off)" : "q, k given");
  if (src->analysis->pooled)
    ImGui::TextDisabled("pooled in blocks of %lld tokens; the focused head is read whole from the file",
                        static_cast<long long>(r.pooled.block));
  ImGui::PopTextWrapPos();
}

}  // namespace

extern const GuiModelKind kGuiTextKind = {
    "text",
    textSections,
    textDisplayControls,
    textSectionsBelow,
    textPrepare,
    {
        {"model", [](AppState& s, const ModelOutput& o, HeatmapRenderer& gl) { modelGridView(s, *o.analysis, gl); }},
        {"heads", [](AppState& s, const ModelOutput& o, HeatmapRenderer&) { headsView(s, o.analysis->run); }},
        {"qk", [](AppState& s, const ModelOutput& o, HeatmapRenderer& gl) { qkView(s, o.analysis->run, gl); }},
        {"rollout", [](AppState& s, const ModelOutput& o, HeatmapRenderer& gl) { rolloutView(s, *o.analysis, gl); }},
        {"table", [](AppState& s, const ModelOutput& o, HeatmapRenderer&) { tableView(s, *o.analysis); }},
        {"pattern", [](AppState& s, const ModelOutput& o, HeatmapRenderer& gl) { patternView(s, o.analysis->run, gl); }},
        {"text", [](AppState& s, const ModelOutput& o, HeatmapRenderer&) { textView(s, o); }},
    },
    [](const ModelViewState& v, ModelFigureSelection& f) {
      const TextViewState own = kindView<TextViewState>(v);
      f.measure = own.measure;
      f.shade = own.shade;
    },
    nullptr,
    textKey,
};

// Attention from a file: the text kind's views of its maps, without the
// text, the predictions or the pattern (no model ran; app/export/figure_attention.cpp).
extern const GuiModelKind kGuiAttentionKind = {
    "attention",
    attentionSections,
    textDisplayControls,
    nullptr,
    textPrepare,
    [] {
      std::vector<ModelScreen> screens = kGuiTextKind.screens;
      std::erase_if(screens, [](const ModelScreen& m) { return m.view == "pattern"; });
      return screens;
    }(),
    kGuiTextKind.select,
    nullptr,
    textKey,
};

}  // namespace attn
