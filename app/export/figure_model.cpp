#include "app/export/figure_model.h"

#include "app/export/figure_seq2seq.h"
#include "app/export/figure_vision.h"

#include "engine/error.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn {

namespace {

void checkRange(const char* flag, int64_t v, int64_t n) {
  if (v < 0 || v >= n)
    throw InputError(std::string(flag) + ": expected 0.." + std::to_string(n - 1) + ", got " + std::to_string(v));
}

// One result as a figure's results.
std::shared_ptr<const std::vector<Result>> alone(Result r) {
  return std::make_shared<const std::vector<Result>>(std::vector<Result>{std::move(r)});
}

}  // namespace

std::string quotedStart(const std::string& text) {
  constexpr size_t kQuoted = 160;
  if (text.size() <= kQuoted) return text;
  size_t cut = kQuoted;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  return text.substr(0, cut) + "\xE2\x80\xA6";
}

std::string literalSubtitle(const std::string& plain) {
  std::string out;
  for (const char c : plain) {
    if (c == '^' || c == '_' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

PreparedFigure prepareModelFigure(const ModelOutput& out, ModelView view, const ModelFigureSelection& sel,
                                  const FigureOptions& options) {
  if (out.seq2seq) {
    const std::string kind = sel.kind == Seq2SeqMaps::Encoder ? "encoder" : sel.kind == Seq2SeqMaps::Decoder ? "decoder" : "cross";
    const std::string name = view == ModelView::Maps    ? "maps"
                             : view == ModelView::Heads ? "lines"
                             : view == ModelView::Model ? kind
                             : view == ModelView::Table ? "table"
                                                        : modelViewName(view);
    return prepareSeq2SeqFigure(*out.model, out.seq2seq->run, out.text, out.seq2seq->target, name, sel.layer, sel.head, options);
  }
  if (out.vision)
    return prepareVisionFigure(*out.model, *out.vision, view == ModelView::Picture ? "picture" : modelViewName(view), sel.layer,
                               std::max<int64_t>(sel.query, 0), options);
  if (!out.analysis)
    throw InputError(!out.error.empty()               ? out.error
                     : out.too_long_message.empty() ? "model: nothing to draw"
                                                    : out.too_long_message);
  const ModelAnalysis& a = *out.analysis;
  const ModelRun& r = a.run;
  checkRange("--layer", sel.layer, r.layers);
  checkRange("--head", sel.head, r.heads);
  const std::string name = modelShortName(*out.model);
  const std::string head = "layer " + std::to_string(sel.layer) + ", head " + std::to_string(sel.head);
  FigureOptions fo = options;
  fo.params.head = 0;
  fo.subtitle = literalSubtitle(name + " (" + modelInfo(*out.model).config.arch_name + "), " +
                                std::to_string(r.tokens.size()) + " tokens: \"" + quotedStart(out.text) + "\"");
  auto titled = [&](const std::string& t) {
    if (!fo.title) fo.title = t;
  };
  if (a.pooled && view != ModelView::Model && view != ModelView::Table)
    throw InputError(everyMapRefusal(a, "--view " + modelViewName(view)));
  switch (view) {
    case ModelView::Model: {
      // Too many heads for thumbnails a reader could see: one cell per head, its summary.
      const bool cells = !thumbnailsReadable(static_cast<float>(fo.width) * 0.85f, 0.0f, r.layers, r.heads);
      titled(name + " \xE2\x80\x94 " + std::to_string(r.layers) + " layers \xC3\x97 " + std::to_string(r.heads) + " heads" +
             (cells ? ": " + headMeasureLabel(sel.measure) + " per head" : std::string()));
      if (cells) {  // a page whose height follows its content (a paper's column) takes the heads down its length
        fo.view = "heatmap";
        return prepareFigure(alone(headMeasureResult(a, sel.measure, name, fo.height == 0 && r.heads > r.layers)), fo);
      }
      fo.view = "heads";
      if (!fo.params.marks.empty()) fo.params.head = static_cast<int>(sel.layer * r.heads + sel.head);  // the focused head's panel carries the marks
      fo.params.panel_titles = layerHeadNames(r);
      return prepareFigure(alone(a.pooled ? pooledHeadsResult(a, name) : allHeadsResult(r, name)), fo);
    }
    case ModelView::Heads:
      titled(name + " \xE2\x80\x94 layer " + std::to_string(sel.layer) + ", heads as colours");
      fo.view = "lines";
      return prepareFigure(alone(layerResult(r, sel.layer, name)), fo);
    case ModelView::Qk: {
      const int64_t n = static_cast<int64_t>(r.tokens.size());
      const int64_t q = sel.query < 0 ? n - 1 : sel.query;
      checkRange("--query", q, n);
      const int64_t k = sel.key < 0 ? strongestKey(r, sel.layer, sel.head, q) : sel.key;
      checkRange("--key", k, n);
      titled(name + " \xE2\x80\x94 " + head + ": q, k and q\xE2\x88\x98k");
      fo.view = "extras";
      return prepareFigure(alone(qkResult(r, qkTerms(r, sel.layer, sel.head, q, k), name)), fo);
    }
    case ModelView::Rollout:
      titled(name + " \xE2\x80\x94 attention rollout through layer " + std::to_string(sel.layer));
      fo.view = "heatmap";
      return prepareFigure(alone(rolloutResult(a, sel.layer, name)), fo);
    case ModelView::Table:
      titled(name + " \xE2\x80\x94 head summaries");
      return prepareTableFigure(headTableColumns(), headTableRows(a.summaries), fo, headScatter(a.summaries));
    case ModelView::Pattern:
      if (!out.pattern)
        throw InputError("--view pattern: " + (out.pattern_error.empty() ? std::string("no pattern computed") : out.pattern_error));
      titled(out.pattern->result.variant + " on " + name + " " + head);
      fo.view = "extras";
      return prepareFigure(alone(patternResult(*out.pattern, r, name)), fo);
    case ModelView::Maps:
    case ModelView::Picture:
    case ModelView::Distance:
      throw InputError("--view " + modelViewName(view) + ": " + modelInfo(*out.model).config.arch_name + " is a text model (" +
                       (view == ModelView::Maps ? "maps need an encoder\xE2\x80\x93" "decoder: T5, BART)" : "this view needs a ViT)"));
  }
  throw std::logic_error("prepareModelFigure: unknown view");
}

int exportModelFigure(const ModelOutput& out, ModelView view, const ModelFigureSelection& sel,
                      const FigureOptions& options, const std::string& path) {
  const PreparedFigure f = prepareModelFigure(out, view, sel, options);
  writeFigure(f, path);
  return f.options.height;
}

}  // namespace attn
