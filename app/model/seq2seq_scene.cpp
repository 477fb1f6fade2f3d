#include "app/model/seq2seq_scene.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/model/blocks/head_metrics.h"

#include <algorithm>
#include <limits>

namespace attn {

namespace {

// The axes of a kind: queries down, keys across; the decoder's causal mask.
Result axesOf(const Seq2SeqRun& run, Seq2SeqMaps kind) {
  Result r;
  r.variant = seq2seqMapsTitle(kind);
  r.q_tokens = kind == Seq2SeqMaps::Encoder ? run.source_tokens : run.target_tokens;
  r.k_tokens = kind == Seq2SeqMaps::Decoder ? run.target_tokens : run.source_tokens;
  if (kind == Seq2SeqMaps::Decoder)
    r.mask = causalMask(static_cast<int64_t>(run.target_tokens.size()), static_cast<int64_t>(run.target_tokens.size()));
  return r;
}

const std::vector<Mat>& layerOf(const Seq2SeqRun& run, Seq2SeqMaps kind, int64_t layer) {
  const std::vector<std::vector<Mat>>& maps = seq2seqMaps(run, kind);
  if (layer < 0 || layer >= static_cast<int64_t>(maps.size()))
    throw InputError("--layer: expected 0.." + std::to_string(static_cast<int64_t>(maps.size()) - 1) + " (" +
                     seq2seqMapsTitle(kind) + "), got " + std::to_string(layer));
  return maps[static_cast<size_t>(layer)];
}

}  // namespace

const std::vector<std::string>& seq2seqMapsNames() {
  static const std::vector<std::string> names = {"encoder", "decoder", "cross"};
  return names;
}

Seq2SeqMaps seq2seqMapsFromName(const std::string& name, const std::string& flag) {
  const std::vector<std::string>& names = seq2seqMapsNames();
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) throw InputError(flag + ": expected one of encoder, decoder, cross, got '" + name + "'");
  return static_cast<Seq2SeqMaps>(it - names.begin());
}

const std::vector<std::vector<Mat>>& seq2seqMaps(const Seq2SeqRun& run, Seq2SeqMaps kind) {
  return kind == Seq2SeqMaps::Encoder ? run.encoder_attention : kind == Seq2SeqMaps::Decoder ? run.decoder_attention
                                                                                              : run.cross_attention;
}

const std::vector<int>& seq2seqTableColumns() {
  static const std::vector<int> columns = {0, 1, 2, 3, 5, 6};
  return columns;
}

std::vector<HeadSummary> seq2seqSummaries(const Seq2SeqRun& run, Seq2SeqMaps kind) {
  std::vector<HeadSummary> s = summarizeMaps(seq2seqMaps(run, kind));
  if (kind == Seq2SeqMaps::Cross)
    for (HeadSummary& h : s) h.previous_token = h.mean_distance = std::numeric_limits<double>::quiet_NaN();
  return s;
}

Seq2SeqAnalysis analyseSeq2Seq(const Model& m, const std::string& source, const std::string& target, bool translate,
                               const RunContext& ctx) {
  Seq2SeqAnalysis a;
  if (translate && hasDecoder(m)) {
    Seq2SeqGeneration g = generateSeq2Seq(m, source, kTranslateTokens, ctx);
    a.run = std::move(g.run);
    a.target = g.text;
    a.translated = true;
  } else {
    a.run = runSeq2Seq(m, source, hasDecoder(m) ? target : "", 5, ctx);
    a.target = hasDecoder(m) ? target : "";
  }
  for (const Seq2SeqMaps kind : {Seq2SeqMaps::Encoder, Seq2SeqMaps::Decoder, Seq2SeqMaps::Cross})
    a.summaries[static_cast<size_t>(kind)] = seq2seqSummaries(a.run, kind);
  return a;
}

std::shared_ptr<const Seq2SeqAnalysis> seq2seqSceneAnalysis(const Model& m, const std::string& source, const Seq2SeqInputs& in,
                                                            const std::shared_ptr<const Seq2SeqAnalysis>& previous,
                                                            const RunContext& ctx) {
  if (previous && previous->translated == in.translate && (in.translate || previous->target == in.target)) return previous;
  return std::make_shared<const Seq2SeqAnalysis>(analyseSeq2Seq(m, source, in.target, in.translate, ctx));
}

std::string seq2seqMapsTitle(Seq2SeqMaps kind) {
  // Not a registry variant's name: a view that looks names up (the family view's titles) finds none.
  return kind == Seq2SeqMaps::Encoder ? "encoder self-attention"
         : kind == Seq2SeqMaps::Decoder ? "decoder self-attention"
                                         : "cross-attention, target \xE2\x86\x92 source";
}

int64_t seq2seqLayers(const Seq2SeqRun& run, Seq2SeqMaps kind) { return static_cast<int64_t>(seq2seqMaps(run, kind).size()); }

Result seq2seqHeadResult(const Seq2SeqRun& run, Seq2SeqMaps kind, int64_t layer, int64_t head) {
  const std::vector<Mat>& maps = layerOf(run, kind, layer);
  if (head < 0 || head >= static_cast<int64_t>(maps.size()))
    throw InputError("--head: expected 0.." + std::to_string(static_cast<int64_t>(maps.size()) - 1) + ", got " +
                     std::to_string(head));
  Result r = axesOf(run, kind);
  r.weights = {maps[static_cast<size_t>(head)]};
  r.computeStats();
  return r;
}

Result seq2seqLayerResult(const Seq2SeqRun& run, Seq2SeqMaps kind, int64_t layer) {
  Result r = axesOf(run, kind);
  r.weights = layerOf(run, kind, layer);
  r.computeStats();
  return r;
}

Result seq2seqAllHeadsResult(const Seq2SeqRun& run, Seq2SeqMaps kind) {
  Result r = axesOf(run, kind);
  for (const std::vector<Mat>& layer : seq2seqMaps(run, kind)) r.weights.insert(r.weights.end(), layer.begin(), layer.end());
  r.computeStats();
  return r;
}

}  // namespace attn
