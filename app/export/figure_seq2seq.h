// Figures of an encoder–decoder run (T5, BART) through the registry's views
// and the same QPainter export as every figure: `attnlab render --model PATH
// --text SOURCE --target TARGET --view V`.
//   maps     the three maps of one layer and head: cross-attention (target ×
//            source, framed), encoder and decoder self-attention (the family view)
//   lines    the cross-attention of one layer as token lines, target on the
//            left, source on the right, a colour per head (BertViz's view)
//   cross, encoder, decoder   every layer's heads of that kind (the grid)
//   table    the head summaries of the three kinds
#pragma once

#include "app/export/figure.h"
#include "engine/model/kinds/seq2seq.h"

#include <string>
#include <vector>

namespace attn {

const std::vector<std::string>& seq2seqViewNames();
// Throws InputError for an unknown view or a layer or head out of range.
// `source` and `target` are the texts as typed (the subtitle quotes them).
PreparedFigure prepareSeq2SeqFigure(const Model& m, const Seq2SeqRun& run, const std::string& source,
                                    const std::string& target, const std::string& view, int64_t layer, int64_t head,
                                    const FigureOptions& options);

}  // namespace attn
