// An encoder–decoder run (engine/model/seq2seq.h) as Results for the view
// registry's layouts: the encoder's self-attention (source × source), the
// decoder's (target × target, causal) and the cross-attention (target rows
// over source columns), one head, one layer's heads, or every head.
#pragma once

#include "engine/model/seq2seq.h"
#include "engine/result.h"

#include <string>
#include <vector>

namespace attn {

enum class Seq2SeqMaps { Encoder, Decoder, Cross };
// "encoder self-attention", "decoder self-attention", "cross-attention, target → source"
std::string seq2seqMapsTitle(Seq2SeqMaps kind);
// The layers a run has of that kind (the encoder's, or the decoder's for both of its kinds).
int64_t seq2seqLayers(const Seq2SeqRun& run, Seq2SeqMaps kind);

// One head's map; every head of one layer (token lines); every layer's heads, layer-major (the grid).
Result seq2seqHeadResult(const Seq2SeqRun& run, Seq2SeqMaps kind, int64_t layer, int64_t head);
Result seq2seqLayerResult(const Seq2SeqRun& run, Seq2SeqMaps kind, int64_t layer);
Result seq2seqAllHeadsResult(const Seq2SeqRun& run, Seq2SeqMaps kind);

}  // namespace attn
