#include "app/export/figure_seq2seq.h"

#include "app/export/figure_model.h"
#include "app/model/model_scene.h"
#include "app/model/seq2seq_scene.h"
#include "engine/error.h"
#include "engine/model/blocks/head_metrics.h"

#include <algorithm>
#include <memory>

namespace attn {

const std::vector<std::string>& seq2seqViewNames() {
  static const std::vector<std::string> names = {"maps", "lines", "cross", "encoder", "decoder", "table"};
  return names;
}

PreparedFigure prepareSeq2SeqFigure(const Model& m, const Seq2SeqRun& run, const std::string& source,
                                    const std::string& target, const std::string& view, int64_t layer, int64_t head,
                                    const FigureOptions& options) {
  const std::vector<std::string>& names = seq2seqViewNames();
  if (std::find(names.begin(), names.end(), view) == names.end()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    throw InputError("--view: '" + view + "' is not a view of an encoder–decoder model (expected one of " + list + ")");
  }
  if (run.decoder_layers == 0 && view != "encoder")
    throw InputError("--view " + view + ": " + modelInfo(m).config.arch_name + " is an encoder alone (--view encoder)");
  const std::string name = modelShortName(m);
  FigureOptions fo = options;
  fo.params.head = 0;
  fo.subtitle = literalSubtitle(name + " (" + modelInfo(m).config.arch_name + "), source \"" + quotedStart(source) + "\"" +
                                (run.decoder_layers > 0 ? ", target \"" + quotedStart(target) + "\"" : ""));
  const auto titled = [&](const std::string& t) {
    if (!fo.title) fo.title = t;
  };
  const std::string at = "layer " + std::to_string(layer) + ", head " + std::to_string(head);
  auto results = std::make_shared<std::vector<Result>>();
  if (view == "maps") {
    titled(name + " \xE2\x80\x94 " + at + ": cross-attention and the two self-attentions");
    fo.view = "family";
    for (const Seq2SeqMaps kind : {Seq2SeqMaps::Cross, Seq2SeqMaps::Encoder, Seq2SeqMaps::Decoder})
      results->push_back(seq2seqHeadResult(run, kind, layer, head));
  } else if (view == "lines") {
    titled(name + " \xE2\x80\x94 layer " + std::to_string(layer) + " cross-attention, target \xE2\x86\x92 source, heads as colours");
    fo.view = "lines";
    results->push_back(seq2seqLayerResult(run, Seq2SeqMaps::Cross, layer));
  } else if (view == "table") {
    titled(name + " \xE2\x80\x94 head summaries of the three kinds of attention");
    std::vector<std::string> columns = {"attention"};
    for (const std::string& c : headTableColumnNames(seq2seqTableColumns())) columns.push_back(c);
    std::vector<std::vector<std::string>> rows;
    for (const Seq2SeqMaps kind : {Seq2SeqMaps::Encoder, Seq2SeqMaps::Decoder, Seq2SeqMaps::Cross})
      for (std::vector<std::string>& row : headTableRows(seq2seqSummaries(run, kind), seq2seqTableColumns())) {
        row.insert(row.begin(), kind == Seq2SeqMaps::Encoder ? "encoder" : kind == Seq2SeqMaps::Decoder ? "decoder" : "cross");
        rows.push_back(std::move(row));
      }
    return prepareTableFigure(std::move(columns), std::move(rows), fo);
  } else {
    const Seq2SeqMaps kind = view == "cross" ? Seq2SeqMaps::Cross : view == "encoder" ? Seq2SeqMaps::Encoder : Seq2SeqMaps::Decoder;
    const int64_t layers = seq2seqLayers(run, kind);
    titled(name + " \xE2\x80\x94 " + seq2seqMapsTitle(kind) + ", " + std::to_string(layers) + " layers \xC3\x97 " +
           std::to_string(run.heads) + " heads");
    fo.view = "heads";
    for (int64_t l = 0; l < layers; ++l)
      for (int64_t h = 0; h < run.heads; ++h) fo.params.panel_titles.push_back(headLabel(l, h));
    results->push_back(seq2seqAllHeadsResult(run, kind));
  }
  return prepareFigure(results, fo);
}

}  // namespace attn
