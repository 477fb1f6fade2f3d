// The model workspace on an encoder–decoder (T5, BART): the source and
// target texts in the panel, and the views of its three kinds of attention —
// the focused head's three maps, the cross-attention token lines of a layer,
// the grid of one kind's heads and their summary table.
#include "app/gui/gui_kinds.h"

#include "app/gui/gui_lesson.h"
#include "app/gui/gui_panels.h"
#include "widgets/head_grid.h"
#include "widgets/head_table.h"
#include "widgets/token_lines.h"

#include <imgui_stdlib.h>

#include <algorithm>

namespace attn {

namespace {

// An encoder–decoder's own view state: which attention the grid and the table show.
struct Seq2SeqViewState {
  Seq2SeqMaps kind = Seq2SeqMaps::Cross;
};

const char* const kKindNames[] = {"encoder self-attention", "decoder self-attention", "cross-attention"};

MatrixStyle unitStyle(const AppState& s) {
  MatrixStyle st;
  st.range = {0.0f, 1.0f, false};
  st.colormap = s.settings.colormap;
  return st;
}

const std::vector<std::string>& rowTokens(const Seq2SeqRun& r, Seq2SeqMaps kind) {
  return kind == Seq2SeqMaps::Encoder ? r.source_tokens : r.target_tokens;
}
const std::vector<std::string>& colTokens(const Seq2SeqRun& r, Seq2SeqMaps kind) {
  return kind == Seq2SeqMaps::Decoder ? r.target_tokens : r.source_tokens;
}

// One head's map of a kind with its token axes.
HeatmapEvents kindMap(AppState& s, const Seq2SeqRun& r, Seq2SeqMaps kind, int layer, int head, HeatmapZoom& zoom,
                      HeatmapRenderer& gl, ImVec2 size) {
  const Mat& map = seq2seqMaps(r, kind)[static_cast<size_t>(layer)][static_cast<size_t>(head)];
  MatrixSpec v = MatrixSpec::of(map);
  v.row_labels = &rowTokens(r, kind);
  v.col_labels = &colTokens(r, kind);
  v.row_axis = kind == Seq2SeqMaps::Encoder ? "source (query)" : "target (query)";
  v.col_axis = kind == Seq2SeqMaps::Decoder ? "target (key)" : "source (key)";
  MatrixStyle st = unitStyle(s);
  st.max_cell_aspect = 2.5f;
  return heatmap(kind == Seq2SeqMaps::Cross ? "s2s_cross" : kind == Seq2SeqMaps::Encoder ? "s2s_enc" : "s2s_dec", v, st, zoom,
                 gl, size);
}

// The layers of the kind the grid and table show (the encoder's or the decoder's).
int kindLayers(const Seq2SeqRun& r, Seq2SeqMaps kind) { return static_cast<int>(seq2seqLayers(r, kind)); }

void mapsView(AppState& s, const Seq2SeqAnalysis& a, HeatmapRenderer& gl) {
  ModelViewState& v = s.model.view;
  const Seq2SeqRun& r = a.run;
  modelHeader(s, headLabel(v.layer, v.head) + ": cross-attention (target rows over source columns) and the two self-attentions");
  const ImVec2 avail = ImGui::GetContentRegionAvail(), origin = ImGui::GetCursorScreenPos();
  const float gap = ImGui::GetFontSize() * 1.2f, line = ImGui::GetTextLineHeightWithSpacing();
  // Cross-attention takes the left 55 %, the encoder's and decoder's maps share the right column.
  const float left = (avail.x - gap) * 0.55f, right = avail.x - gap - left;
  ImGui::TextUnformatted("cross-attention: what each target token reads in the source");
  offerAnchor(s, kindMap(s, r, Seq2SeqMaps::Cross, v.layer, v.head, v.focus_zoom, gl, ImVec2(left, avail.y - line)).placed);
  const float half = (avail.y - gap) * 0.5f;
  ImGui::SetCursorScreenPos(ImVec2(origin.x + left + gap, origin.y));
  ImGui::BeginGroup();
  ImGui::TextDisabled("encoder self-attention (source \xC3\x97 source)");
  const int enc_layer = std::min(v.layer, kindLayers(r, Seq2SeqMaps::Encoder) - 1);
  kindMap(s, r, Seq2SeqMaps::Encoder, enc_layer, v.head, v.grid_zoom, gl, ImVec2(right, half - line));
  ImGui::TextDisabled("decoder self-attention (target \xC3\x97 target, causal)");
  kindMap(s, r, Seq2SeqMaps::Decoder, v.layer, v.head, v.qk_zoom, gl, ImVec2(right, half - line));
  ImGui::EndGroup();
}

void linesView(AppState& s, const Seq2SeqAnalysis& a) {
  ModelViewState& v = s.model.view;
  modelHeader(s, "layer " + std::to_string(v.layer) +
                     " cross-attention: target tokens (left) read source tokens (right); colour = head, opacity = weight");
  if (!v.layer_result || v.layer_generation != s.model.generation || v.layer_of_result != v.layer) {
    v.layer_result = std::make_shared<const Result>(seq2seqLayerResult(a.run, Seq2SeqMaps::Cross, v.layer));
    v.layer_generation = s.model.generation;
    v.layer_of_result = v.layer;
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos(), avail = ImGui::GetContentRegionAvail();
  tokenLines("s2s_lines", *v.layer_result, v.lines, avail);
  if (s.describe) s.described["panels"] = {{{"kind", "lines"}, {"area", {origin.x, origin.y, avail.x, avail.y}}}};
}

// Each query token's strongest key in the head, one row each ("le → cat"),
// as many as fit in `height`: for cross-attention, the head's alignment.
void strongestKeyOfEachQuery(const Seq2SeqRun& r, Seq2SeqMaps kind, int layer, int head, float width, float height) {
  const Mat& map = seq2seqMaps(r, kind)[static_cast<size_t>(layer)][static_cast<size_t>(head)];
  const std::vector<std::string>&rows = rowTokens(r, kind), &cols = colTokens(r, kind);
  const int fit = static_cast<int>(height / ImGui::GetTextLineHeightWithSpacing()) - 1;
  if (fit < 1) return;
  ImGui::TextDisabled("EACH QUERY'S STRONGEST KEY");
  for (int64_t i = 0; i < map.rows() && i < fit; ++i) {
    Eigen::Index j = 0;
    const float w = map.row(i).maxCoeff(&j);
    shareRow(w, "'" + rows[static_cast<size_t>(i)] + "' \xE2\x86\x92 '" + cols[static_cast<size_t>(j)] + "'", width);
  }
}

void gridView(AppState& s, const Seq2SeqAnalysis& a, HeatmapRenderer& gl) {
  ModelViewState& v = s.model.view;
  const Seq2SeqRun& r = a.run;
  const Seq2SeqMaps kind = kindView<Seq2SeqViewState>(v).kind;
  const int layers = kindLayers(r, kind);
  modelHeader(s, std::string(kKindNames[static_cast<int>(kind)]) + ", " + layersByHeads(layers, r.heads) + "; click a thumbnail to focus it (right: " + headLabel(v.layer, v.head) + ")");
  const ImVec2 avail = ImGui::GetContentRegionAvail(), origin = ImGui::GetCursorScreenPos();
  const float font = ImGui::GetFontSize(), gap = font * 1.5f;
  const float grid_w = std::min(avail.x * 0.4f, (avail.y * 0.8f - font * 2) * static_cast<float>(r.heads) / static_cast<float>(layers) + font * 3);
  const float grid_h = std::min(avail.y * 0.8f, (grid_w - font * 3) * static_cast<float>(layers) / static_cast<float>(r.heads) + font * 2);
  const HeadPick pick = headGrid("s2s_grid", seq2seqMaps(r, kind), nullptr, unitStyle(s), v.layer, v.head, v.grid_zoom, gl,
                                 ImVec2(grid_w, grid_h));
  if (pick.layer >= 0) {
    v.layer = pick.layer;
    v.head = pick.head;
  }
  // Under the grid: the focused head's numbers, then the key each query reads most (its alignment, for cross-attention).
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + grid_h + font));
  focusedHeadNumbers(a.summaries[static_cast<size_t>(kind)], v.layer, v.head, grid_w, seq2seqTableColumns());
  ImGui::Spacing();
  strongestKeyOfEachQuery(r, kind, std::min(v.layer, layers - 1), v.head, grid_w, origin.y + avail.y - ImGui::GetCursorScreenPos().y);
  ImGui::SetCursorScreenPos(ImVec2(origin.x + grid_w + gap, origin.y));
  ImGui::BeginGroup();
  ImGui::Text("layer %d, head %d", v.layer, v.head);
  offerAnchor(s, kindMap(s, r, kind, std::min(v.layer, layers - 1), v.head, v.focus_zoom, gl,
                         ImVec2(avail.x - grid_w - gap, avail.y - ImGui::GetTextLineHeightWithSpacing()))
                     .placed);
  ImGui::EndGroup();
}

void tableView(AppState& s, const Seq2SeqAnalysis& a, HeatmapRenderer& gl) {
  ModelViewState& v = s.model.view;
  const Seq2SeqMaps kind = kindView<Seq2SeqViewState>(v).kind;
  modelHeader(s, std::string(kKindNames[static_cast<int>(kind)]) +
                     ": head summaries; click a column to sort, a row to focus the head (hover a header for its definition)");
  const std::vector<HeadSummary>& rows = a.summaries[static_cast<size_t>(kind)];
  // The focused head's map beside the table in a wide view (the table as
  // tall as its rows), or under it (the table at most half the height).
  const ImVec2 avail = ImGui::GetContentRegionAvail(), origin = ImGui::GetCursorScreenPos();
  const bool beside = avail.x > avail.y * 1.4f;
  const float gap = ImGui::GetFontSize() * 1.2f;
  const float row_h = ImGui::GetTextLineHeight() + ImGui::GetStyle().CellPadding.y * 2;
  const float rows_h = row_h * (static_cast<float>(rows.size()) + 2.3f) + ImGui::GetStyle().CellPadding.y * 4 + 2;  // a header of up to two lines
  // Beside: as wide as its headers need, between half and two thirds of the width.
  const float table_w = std::clamp(headTableWidth(seq2seqTableColumns()), (avail.x - gap) * 0.5f, (avail.x - gap) * 0.66f);
  const ImVec2 table(beside ? table_w : avail.x, std::min(beside ? avail.y : avail.y * 0.5f, rows_h));
  const int row = headTable("##s2s_heads", rows, v.layer, v.head, v.table, table, seq2seqTableColumns());
  if (row >= 0) {
    v.layer = static_cast<int>(rows[static_cast<size_t>(row)].layer);
    v.head = static_cast<int>(rows[static_cast<size_t>(row)].head);
  }
  const int layer = std::min(v.layer, kindLayers(a.run, kind) - 1);
  if (beside) {  // under the table, the focused head's strongest key for each query
    ImGui::Spacing();
    strongestKeyOfEachQuery(a.run, kind, layer, v.head, table.x, origin.y + avail.y - ImGui::GetCursorScreenPos().y);
    ImGui::SetCursorScreenPos(ImVec2(origin.x + table.x + gap, origin.y));
  }
  ImGui::BeginGroup();
  ImGui::Text("layer %d, head %d", v.layer, v.head);
  const ImVec2 map(beside ? avail.x - table.x - gap : avail.x, origin.y + avail.y - ImGui::GetCursorScreenPos().y);
  offerAnchor(s, kindMap(s, a.run, kind, layer, v.head, v.focus_zoom, gl, map).placed);
  ImGui::EndGroup();
}

// SOURCE and TARGET
void seq2seqTextSections(AppState& s) {
  ModelState& m = s.model;
  sectionTitle("SOURCE");
  ImGui::TextDisabled("the encoder reads it; recomputed as you type");
  if (ImGui::InputTextMultiline("##source", &m.scene.text, ImVec2(-1, ImGui::GetTextLineHeight() * 3.2f)))
    m.text_edited = std::chrono::steady_clock::now();
  const ModelOutput* o = m.output.get();
  const Seq2SeqAnalysis* a = o ? o->seq2seq.get() : nullptr;
  if (m.scene.model && !hasDecoder(*m.scene.model)) return;  // an encoder alone: no target
  sectionTitle("TARGET");
  Seq2SeqInputs& in = m.scene.inputs.seq2seq;
  ImGui::Checkbox("the model's own translation", &in.translate);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("greedy decoding from the source: the target is what the model writes, token by token\n"
                      "(off: the decoder reads the target you type, teacher forcing)");
  if (in.translate) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(a && a->translated ? ("\xE2\x86\x92 " + a->target).c_str() : "translating\xE2\x80\xA6");
    ImGui::PopTextWrapPos();
    if (a && a->translated && ImGui::SmallButton("edit it")) {
      in.target = a->target;
      in.translate = false;
    }
  } else if (ImGui::InputTextMultiline("##target", &in.target, ImVec2(-1, ImGui::GetTextLineHeight() * 3.2f))) {
    m.text_edited = std::chrono::steady_clock::now();
  }
  if (a) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%zu source tokens, %zu target tokens (the decoder's start token first)", a->run.source_tokens.size(),
                        a->run.target_tokens.size());
    ImGui::PopTextWrapPos();
  }
}

// The grid's and table's kind of attention, the layer, the head.
void seq2seqDisplayControls(AppState& s) {
  ModelViewState& v = s.model.view;
  const Seq2SeqAnalysis* a = s.model.output ? s.model.output->seq2seq.get() : nullptr;
  if (v.view == "model" || v.view == "table") {
    Seq2SeqMaps& kind = kindView<Seq2SeqViewState>(v).kind;
    int chosen = static_cast<int>(kind);
    if (ImGui::Combo("attention", &chosen, kKindNames, 3)) kind = static_cast<Seq2SeqMaps>(chosen);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("which of the three kinds the grid and the table show");
  }
  if (!a) return;
  const int layers = static_cast<int>(std::max(a->run.encoder_layers, a->run.decoder_layers));
  ImGui::SliderInt("layer", &v.layer, 0, std::max(0, layers - 1));
  ImGui::SliderInt("head", &v.head, 0, static_cast<int>(a->run.heads) - 1);
}

void clampSeq2SeqSelection(ModelViewState& v, const Seq2SeqAnalysis& a) {
  const Seq2SeqRun& r = a.run;
  Seq2SeqMaps& kind = kindView<Seq2SeqViewState>(v).kind;
  if (r.decoder_layers == 0) kind = Seq2SeqMaps::Encoder;
  // The maps and lines views read the decoder's layers; the grid and table the kind's.
  const int64_t layers = v.view == "model" || v.view == "table" ? seq2seqLayers(r, kind)
                         : r.decoder_layers > 0                                  ? r.decoder_layers
                                                                                 : r.encoder_layers;
  v.layer = std::clamp<int>(v.layer, 0, static_cast<int>(std::max<int64_t>(1, layers)) - 1);
  v.head = std::clamp<int>(v.head, 0, static_cast<int>(std::max<int64_t>(1, r.heads)) - 1);
}

bool seq2seqPrepare(AppState& s, const ModelOutput& o) {
  ModelViewState& v = s.model.view;
  const Seq2SeqAnalysis& a = *o.seq2seq;
  clampSeq2SeqSelection(v, a);
  if (a.run.decoder_layers == 0 && v.view != "model" && v.view != "table") {
    centeredText(ImGui::GetContentRegionAvail(), "an encoder alone (T5EncoderModel): its self-attention is in the model and table views");
    return false;
  }
  return true;
}

}  // namespace

extern const GuiModelKind kGuiSeq2SeqKind = {
    "encoder-decoder",
    seq2seqTextSections,
    seq2seqDisplayControls,
    nullptr,
    seq2seqPrepare,
    {
        {"maps", [](AppState& s, const ModelOutput& o, HeatmapRenderer& gl) { mapsView(s, *o.seq2seq, gl); }},
        {"model", [](AppState& s, const ModelOutput& o, HeatmapRenderer& gl) { gridView(s, *o.seq2seq, gl); }},
        {"heads", [](AppState& s, const ModelOutput& o, HeatmapRenderer&) { linesView(s, *o.seq2seq); }},
        {"table", [](AppState& s, const ModelOutput& o, HeatmapRenderer& gl) { tableView(s, *o.seq2seq, gl); }},
    },
    [](const ModelViewState& v, ModelFigureSelection& f) { f.kind = kindView<Seq2SeqViewState>(v).kind; },
    nullptr,
    nullptr,
};

}  // namespace attn
