// The encoder–decoder kind (T5, BART; app/model/seq2seq_scene.h): a source,
// a target, and three kinds of attention. Its views' figures; the window
// draws them in app/gui/gui_seq2seq.cpp.
#include "app/export/model_kinds.h"

#include "app/model/embedded_model.h"
#include "app/model/seq2seq_scene.h"
#include "engine/error.h"
#include "engine/model/blocks/head_metrics.h"

#include <memory>

namespace attn {

namespace {

std::string seq2seqSubtitle(const ModelOutput& out) {
  const Seq2SeqRun& run = out.seq2seq->run;
  return modelShortName(*out.model) + " (" + modelInfo(*out.model).config.arch_name + "), source \"" +
                         quotedStart(out.text) + "\"" +
                         (run.decoder_layers > 0 ? ", target \"" + quotedStart(out.seq2seq->target) + "\"" : "");
}

// What every view's page starts from: the run, the model's name and the
// options with the subtitle. An encoder alone has only its own self-attention.
struct Seq2SeqPage {
  const Seq2SeqRun& run;
  std::string name;
  FigureOptions fo;
  void titled(const std::string& t) {
    if (!fo.title) fo.title = t;
  }
};
Seq2SeqPage seq2seqPage(const ModelOutput& out, const FigureOptions& options, bool encoder_alone_too) {
  if (!out.seq2seq) throw InputError(!out.error.empty() ? out.error : "model: nothing to draw");
  const Seq2SeqRun& run = out.seq2seq->run;
  if (run.decoder_layers == 0 && !encoder_alone_too)
    throw InputError("--view: " + modelInfo(*out.model).config.arch_name +
                     " is an encoder alone (--view model --attention-of encoder)");
  Seq2SeqPage p{run, modelShortName(*out.model), options};
  p.fo.params.head = 0;
  p.fo.subtitle = literalSubtitle(seq2seqSubtitle(out));
  return p;
}

// No source is the model's example, no target its own greedy translation (as the window shows it).
ModelOutput seq2seqRun(const ModelRunRequest& r) {
  if (r.truncate) throw InputError("--truncate: not available for encoder\xE2\x80\x93" "decoder models (shorten the source or the target)");
  if (!r.image.empty()) throw InputError("--image: only vision models (ViT) read a picture");
  ModelOutput out;
  out.model = loadModel(*r.files);
  if (r.target && !hasDecoder(*out.model))
    throw InputError("--target: " + modelInfo(*out.model).config.arch_name + " is an encoder alone (no decoder reads a target)");
  out.text = textOrExample(r.text, r.path);
  out.seq2seq = std::make_shared<const Seq2SeqAnalysis>(analyseSeq2Seq(*out.model, out.text, r.target.value_or(""), !r.target));
  return out;
}

// [SECTION] Views

// The three maps of one layer and head: cross-attention (target × source,
// framed), encoder and decoder self-attention (the family view).
PreparedFigure seq2seqMapsFigure(const ModelOutput& out, const ModelFigureSelection& sel, const FigureOptions& options) {
  Seq2SeqPage p = seq2seqPage(out, options, false);
  auto results = std::make_shared<std::vector<Result>>();
  for (const Seq2SeqMaps kind : {Seq2SeqMaps::Cross, Seq2SeqMaps::Encoder, Seq2SeqMaps::Decoder})
    results->push_back(seq2seqHeadResult(p.run, kind, sel.layer, sel.head));
  p.titled(p.name + " \xE2\x80\x94 layer " + std::to_string(sel.layer) + ", head " + std::to_string(sel.head) +
           ": cross-attention and the two self-attentions");
  p.fo.view = "family";
  return prepareFigure(results, p.fo);
}

// Every layer's heads of one kind of attention (--attention-of): the grid.
PreparedFigure seq2seqGridFigure(const ModelOutput& out, const ModelFigureSelection& sel, const FigureOptions& options) {
  Seq2SeqPage p = seq2seqPage(out, options, sel.kind == Seq2SeqMaps::Encoder);
  const int64_t layers = seq2seqLayers(p.run, sel.kind);
  p.titled(p.name + " \xE2\x80\x94 " + seq2seqMapsTitle(sel.kind) + ", " + layersByHeads(layers, p.run.heads));
  p.fo.view = "heads";
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t h = 0; h < p.run.heads; ++h) p.fo.params.panel_titles.push_back(headLabel(l, h));
  return prepareFigure(std::make_shared<const std::vector<Result>>(1, seq2seqAllHeadsResult(p.run, sel.kind)), p.fo);
}

// The cross-attention of one layer as token lines, target on the left,
// source on the right, a colour per head (BertViz's view).
PreparedFigure seq2seqLinesFigure(const ModelOutput& out, const ModelFigureSelection& sel, const FigureOptions& options) {
  Seq2SeqPage p = seq2seqPage(out, options, false);
  auto results = std::make_shared<std::vector<Result>>(1, seq2seqLayerResult(p.run, Seq2SeqMaps::Cross, sel.layer));
  p.titled(p.name + " \xE2\x80\x94 layer " + std::to_string(sel.layer) +
           " cross-attention, target \xE2\x86\x92 source, heads as colours");
  p.fo.view = "lines";
  return prepareFigure(results, p.fo);
}

PreparedFigure seq2seqTableFigure(const ModelOutput& out, const ModelFigureSelection&, const FigureOptions& options) {
  Seq2SeqPage p = seq2seqPage(out, options, false);
  p.titled(p.name + " \xE2\x80\x94 head summaries of the three kinds of attention");
  std::vector<std::string> columns = {"attention"};
  for (const std::string& c : headTableColumnNames(seq2seqTableColumns())) columns.push_back(c);
  std::vector<std::vector<std::string>> rows;
  for (const Seq2SeqMaps kind : {Seq2SeqMaps::Encoder, Seq2SeqMaps::Decoder, Seq2SeqMaps::Cross})
    for (std::vector<std::string>& row : headTableRows(seq2seqSummaries(p.run, kind), seq2seqTableColumns())) {
      row.insert(row.begin(), seq2seqMapsNames()[static_cast<size_t>(kind)]);
      rows.push_back(std::move(row));
    }
  return prepareTableFigure(std::move(columns), std::move(rows), p.fo);
}

// The page: cross-attention first (what an encoder–decoder adds), then the two
// self-attentions (an encoder alone: its own); every head whole.
PageContent seq2seqKindPage(const ModelOutput& out, const PageRequest& req) {
  const Seq2SeqPage p = seq2seqPage(out, {}, true);
  if (!req.heads.empty())
    throw InputError("--heads: names the heads a long text's page keeps whole; an encoder\xE2\x80\x93" "decoder's page holds every head");
  PageContent c;
  c.subtitle = seq2seqSubtitle(out);
  c.title = p.name + " \xE2\x80\x94 " + layersByHeads(p.run.encoder_layers, p.run.heads) + " encoder" +
            (p.run.decoder_layers > 0 ? ", " + layersByHeads(p.run.decoder_layers, p.run.heads) + " decoder" : "");
  for (const Seq2SeqMaps kind : {Seq2SeqMaps::Cross, Seq2SeqMaps::Encoder, Seq2SeqMaps::Decoder}) {
    if (kind != Seq2SeqMaps::Encoder && p.run.decoder_layers == 0) continue;
    PageMaps s;
    s.name = seq2seqMapsNames()[static_cast<size_t>(kind)];
    s.label = seq2seqMapsTitle(kind);
    s.rows = kind == Seq2SeqMaps::Encoder ? p.run.source_tokens : p.run.target_tokens;
    s.cols = kind == Seq2SeqMaps::Decoder ? p.run.target_tokens : p.run.source_tokens;
    s.layers = seq2seqLayers(p.run, kind);
    s.heads = p.run.heads;
    s.causal = kind == Seq2SeqMaps::Decoder;
    s.log_scale = static_cast<int64_t>(s.cols.size()) >= kLogScaleKeys;
    for (const std::vector<Mat>& layer : seq2seqMaps(p.run, kind))
      for (const Mat& m : layer) s.maps.push_back(&m);
    s.table_columns = headTableColumnNames(seq2seqTableColumns());
    s.table_rows = headTableRows(out.seq2seq->summaries[static_cast<size_t>(kind)], seq2seqTableColumns());
    c.sets.push_back(std::move(s));
  }
  return c;
}

}  // namespace

extern const ModelKindInfo kSeq2SeqKind = {
    "encoder-decoder",
    "an encoder\xE2\x80\x93" "decoder model",
    "encoder\xE2\x80\x93" "decoder models (T5, BART): a source and a target, the encoder's and the decoder's self-attention and the cross-attention",
    [](const ModelConfig& c) { return c.encoderDecoder(); },
    seq2seqRun,
    seq2seqSubtitle,
    {
        {"maps", "the focused head's cross-attention, encoder and decoder self-attention, side by side", seq2seqMapsFigure},
        {"model", "every layer \xC3\x97 head of one kind of attention (cross, encoder or decoder) as thumbnails; click one to focus it",
         seq2seqGridFigure},
        {"heads", "token lines of the focused layer's cross-attention, target \xE2\x86\x92 source: colour = head", seq2seqLinesFigure},
        {"table", "head summaries of the three kinds of attention, sortable; click a row to focus that head", seq2seqTableFigure},
    },
    seq2seqKindPage,
};

}  // namespace attn
