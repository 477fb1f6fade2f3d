// An encoder–decoder run (engine/model/kinds/seq2seq.h) as Results for the view
// registry's layouts: the encoder's self-attention (source × source), the
// decoder's (target × target, causal) and the cross-attention (target rows
// over source columns), one head, one layer's heads, or every head.
#pragma once

#include "engine/model/kinds/seq2seq.h"
#include "engine/result.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace attn {

enum class Seq2SeqMaps { Encoder, Decoder, Cross };
// "encoder", "decoder", "cross", in the enum's order (`render --attention-of`, the table's first column).
const std::vector<std::string>& seq2seqMapsNames();
// Parses one of seq2seqMapsNames(); throws InputError naming `flag` and the names.
Seq2SeqMaps seq2seqMapsFromName(const std::string& name, const std::string& flag);
// "encoder self-attention", "decoder self-attention", "cross-attention, target → source"
std::string seq2seqMapsTitle(Seq2SeqMaps kind);
// The layers a run has of that kind (the encoder's, or the decoder's for both of its kinds).
int64_t seq2seqLayers(const Seq2SeqRun& run, Seq2SeqMaps kind);

// The maps of a kind, [layer][head].
const std::vector<std::vector<Mat>>& seq2seqMaps(const Seq2SeqRun& run, Seq2SeqMaps kind);

// The model workspace's run of an encoder–decoder: the teacher-forced pass
// over the target typed, or, with `translate`, the model's own greedy output
// for the source (then `target` is that text); and the head summaries of the
// three kinds (seq2seqSummaries), indexed by Seq2SeqMaps.
// What an encoder–decoder reads besides its source (ModelScene::inputs): the
// decoder's `target` (teacher forcing), or, with `translate`, the model's own greedy output.
struct Seq2SeqInputs {
  std::string target;
  bool translate = false;
  bool operator==(const Seq2SeqInputs&) const = default;
};

struct Seq2SeqAnalysis {
  Seq2SeqRun run;
  std::string target;
  bool translated = false;
  std::array<std::vector<HeadSummary>, 3> summaries;
};
// The head table's columns for an encoder–decoder (indices into
// headTableColumns()): layer, head, previous-token, sink, mean distance,
// entropy; no induction or key/value groups.
const std::vector<int>& seq2seqTableColumns();
// The head summaries of one kind (summarizeMaps). Across two sequences
// (cross-attention) a previous token and a distance |i − j| mean nothing:
// those two are NaN, which the table and its figure show as "—".
std::vector<HeadSummary> seq2seqSummaries(const Seq2SeqRun& run, Seq2SeqMaps kind);
// Greedy output is cut at this many new tokens.
constexpr int64_t kTranslateTokens = 64;
Seq2SeqAnalysis analyseSeq2Seq(const Model& m, const std::string& source, const std::string& target, bool translate,
                               const RunContext& ctx = {});
// An encoder–decoder's part of a scene's job (computeModelScene): `previous`
// (the last output's, of the same model and source; may be null) while it
// read the same target, else a new analysis.
std::shared_ptr<const Seq2SeqAnalysis> seq2seqSceneAnalysis(const Model& m, const std::string& source, const Seq2SeqInputs& in,
                                                            const std::shared_ptr<const Seq2SeqAnalysis>& previous,
                                                            const RunContext& ctx);

// One head's map; every head of one layer (token lines); every layer's heads, layer-major (the grid).
Result seq2seqHeadResult(const Seq2SeqRun& run, Seq2SeqMaps kind, int64_t layer, int64_t head);
Result seq2seqLayerResult(const Seq2SeqRun& run, Seq2SeqMaps kind, int64_t layer);
Result seq2seqAllHeadsResult(const Seq2SeqRun& run, Seq2SeqMaps kind);

}  // namespace attn
