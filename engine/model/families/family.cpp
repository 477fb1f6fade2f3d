// The list of model families (families.def), what the loader asks of it,
// and the runs that go through a model's family.
#include "engine/model/families/family.h"

#include "engine/parallel.h"

#include <algorithm>
#include <cmath>

namespace attn {

#define FAMILY(make) Family make();
#include "engine/model/families/families.def"
#undef FAMILY

const std::vector<Family>& modelFamilies() {
  static const std::vector<Family> all = {
#define FAMILY(make) make(),
#include "engine/model/families/families.def"
#undef FAMILY
  };
  return all;
}

const Family* findFamily(const std::string& arch_name) {
  for (const Family& f : modelFamilies()) {
    if (f.model_type == arch_name) return &f;
    for (const std::string& a : f.architectures)
      if (a == arch_name) return &f;
  }
  return nullptr;
}

namespace {

// The family whose model_type is `type` (ModelConfig::family), or null.
const Family* familyOfType(const std::string& type) {
  for (const Family& f : modelFamilies())
    if (f.model_type == type) return &f;
  return nullptr;
}

}  // namespace

bool ModelConfig::encoderDecoder() const {
  const Family* f = familyOfType(family);
  return f && f->seq2seq;
}

bool ModelConfig::vision() const {
  const Family* f = familyOfType(family);
  return f && f->vision;
}

std::vector<FamilySummary> modelFamilySummaries() {
  std::vector<FamilySummary> out;
  for (const Family& f : modelFamilies())
    out.push_back({f.model_type, f.label, f.paper, f.architectures, f.causal,
                   attentionKind(f.causal, static_cast<bool>(f.seq2seq))});
  return out;
}

std::string attentionKind(bool causal, bool encoder_decoder) {
  return encoder_decoder ? "encoder–decoder" : causal ? "causal" : "bidirectional";
}

Weight lmHeadUnlessTied(WeightSource& s, const ModelConfig& c, const Weight& embeddings, TiedHead tied, int64_t width) {
  const WeightSource::Shape shape = {c.vocab, width > 0 ? width : c.d_model};
  if (!c.tie_embeddings) return s.lazyFull("lm_head.weight", shape);
  if (tied == TiedHead::Ignored) s.allowFull("lm_head.weight", shape);
  return embeddings;
}

std::pair<Weight, Weight> takeLinear(WeightSource& s, const std::string& name, int64_t out, int64_t in, bool bias) {
  return {s.lazy(name + ".weight", {out, in}), bias ? s.take(name + ".bias", {out}) : Weight{}};
}

AttentionWeights takeProjections(WeightSource& s, const std::string& stem, const std::string& o, const ModelConfig& c,
                                 bool qkv_bias, bool o_bias) {
  const int64_t d = c.d_model, qd = c.heads * c.head_dim, kvd = c.kv_heads * c.head_dim;
  AttentionWeights w;
  std::tie(w.q_w, w.q_b) = takeLinear(s, stem + "q_proj", qd, d, qkv_bias);
  std::tie(w.k_w, w.k_b) = takeLinear(s, stem + "k_proj", kvd, d, qkv_bias);
  std::tie(w.v_w, w.v_b) = takeLinear(s, stem + "v_proj", kvd, d, qkv_bias);
  std::tie(w.o_w, w.o_b) = takeLinear(s, stem + o, d, qd, o_bias);
  return w;
}

GatedMlpWeights takeGatedMlp(WeightSource& s, const std::string& stem, const ModelConfig& c) {
  return {s.lazy(stem + "gate_proj.weight", {c.d_ff, c.d_model}), s.lazy(stem + "up_proj.weight", {c.d_ff, c.d_model}),
          s.lazy(stem + "down_proj.weight", {c.d_model, c.d_ff})};
}

EncoderDecoderTables takeEncoderDecoderTables(WeightSource& s, const ModelConfig& c) {
  const WeightSource::Shape shape = {c.vocab, c.d_model};
  const Weight shared = s.lazy("shared.weight", shape, Need::Optional);
  const Weight encoder = s.lazy("encoder.embed_tokens.weight", shape, Need::Optional);
  const Weight decoder = c.decoder_layers > 0 ? s.lazy("decoder.embed_tokens.weight", shape, Need::Optional) : Weight{};
  auto first = [&](const Weight& own) {
    for (const Weight& table : {own, shared, encoder, decoder})
      if (table.present()) return table;
    throw InputError(s.where + ": tensor 'shared.weight' (or encoder.embed_tokens.weight) is missing (" + c.arch_name +
                     " needs the token embeddings, shape " + shapeText(shape) + ")");
  };
  return {first(encoder), c.decoder_layers > 0 ? first(decoder) : Weight{}};
}

std::vector<Weight> takeWholeHead(WeightSource& s, const std::vector<HeadTensor>& tensors, const std::string& what) {
  std::vector<Weight> head;
  size_t have = 0;
  for (const HeadTensor& t : tensors) {
    head.push_back(t.lazy ? s.lazyFull(t.name, t.shape, Need::Optional) : s.takeFull(t.name, t.shape, Need::Optional));
    have += head.back().present() ? 1 : 0;
  }
  if (have > 0 && have < tensors.size())
    for (size_t i = 0; i < tensors.size(); ++i)
      if (!head[i].present())
        throw InputError(s.where + ": tensor '" + tensors[i].name + "' is missing (" + what + " is incomplete)");
  return head;
}

std::string layerName(const std::string& stem, int64_t layer, const std::string& rest) {
  return stem + std::to_string(layer) + "." + rest;
}

Weight WeightSource::get(const std::string& name, Shape shape, Need need, bool lazy) {
  declared_.push_back({name, std::move(shape), need == Need::Required});
  const auto it = all_.find(name);
  if (it == all_.end()) return {};
  const Located& loc = it->second;
  const TensorEntry& e = *loc.entry;
  // As a matrix [rows, cols]; the loader refuses any other shape than the one declared before a pass reads it.
  const int64_t rows = e.shape.empty() ? 1 : e.shape[0], cols = e.shape.size() > 1 ? e.shape[1] : 1;
  // A transposed matrix comes as stored, [cols, rows], left in the map when not F32: only linearT reads it.
  const bool t = e.transposed;
  const int64_t r = t ? cols : rows, k = t ? rows : cols;
  if ((lazy || t) && e.dtype != DType::F32) return {.file = loc.file.get(), .entry = &e, .rows = r, .cols = k, .transposed = t};
  model_.converted.emplace_back();
  const float* p = loc.file->floats(e, model_.converted.back());
  if (model_.converted.back().empty()) model_.converted.pop_back();
  return {.data = p, .rows = r, .cols = k, .transposed = t};
}

// [SECTION] Runs through the family: a text model's pass and its LM head
namespace {

// Each edit inside the model and the run: one InputError naming the first that is not.
void checkInterventions(const Interventions& e, const ModelConfig& c, int64_t L, const KvCache* cache) {
  if (cache) throw InputError("interventions: a run continuing a KV cache cannot be edited (run the whole text)");
  checkLayerHeads(e.ablate.heads, c.layers, c.heads, "ablation");
  const int64_t d = c.d_model, dh = c.head_dim;
  auto position = [L](const std::string& flag, int64_t p) {  // from 0 here: the analyses resolve −1 first
    if (checkPosition(flag, p, L) != p) throw InputError(flag + ": position " + std::to_string(p) + " is not counted from 0");
  };
  for (const Interventions::HeadPatch& p : e.patch_heads) {
    checkLayerHeads({{p.layer, p.head}}, c.layers, c.heads, "patching");
    if (p.out.rows() != L || p.out.cols() != dh)
      throw InputError("patching: layer " + std::to_string(p.layer) + " head " + std::to_string(p.head) + ": an output of " +
                       std::to_string(p.out.rows()) + " × " + std::to_string(p.out.cols()) + ", expected " +
                       std::to_string(L) + " × " + std::to_string(dh) + " (the two runs must have the same length)");
  }
  for (const Interventions::ResidualPatch& p : e.patch_residual) {
    if (p.layer < 0 || p.layer >= c.layers)
      throw InputError("patching: layer " + std::to_string(p.layer) + " is outside the model's " +
                       std::to_string(c.layers) + " layers");
    position("patching", p.position);
    if (p.value.size() != d)
      throw InputError("patching: a residual of " + std::to_string(p.value.size()) + " values, expected d_model = " +
                       std::to_string(d));
  }
  if (e.resume_layer >= 0) {
    if (e.resume_layer > c.layers || !e.resume || e.resume->rows() != L || e.resume->cols() != d)
      throw InputError("interventions: a resumed pass needs layer ≤ " + std::to_string(c.layers) + " and a stream of " +
                       std::to_string(L) + " × " + std::to_string(d));
  }
  for (const int64_t p : e.write_positions) position("--position", p);
}

}  // namespace

ModelRun runForward(const Model& m, const std::vector<int32_t>& ids, KvCache* cache, const RunContext& ctx,
                    const ModelRunOptions& options) {
  const ModelConfig& c = m.info.config;
  ModelRun run;
  run.ids = ids;
  run.layers = c.layers;
  run.heads = c.heads;
  run.kv_heads = c.kv_heads;
  run.d_head = c.head_dim;
  run.causal = c.causal;
  run.rope = c.uses_rope;
  if (c.uses_rope) {
    run.rope_theta = c.rope.frequencies(c.head_dim);
    run.rotary_dims = c.rope.rotaryDims(c.head_dim) < c.head_dim ? c.rope.rotaryDims(c.head_dim) : 0;
    if (c.local_rope)
      for (int64_t l = 0; l < c.layers; ++l) run.layer_rope_theta.push_back(c.ropeOf(l).frequencies(c.head_dim));
  }
  run.softcap = c.attn_softcap;
  run.score_scale = c.score_scale;
  run.sliding_window = c.sliding_window;
  run.layer_window = c.layer_window;
  run.first_position = cache ? cache->length : 0;
  run.attention.resize(static_cast<size_t>(c.layers));
  run.q.resize(static_cast<size_t>(c.layers));
  run.k.resize(static_cast<size_t>(c.layers));
  run.v.resize(static_cast<size_t>(c.layers));
  for (const int32_t id : ids) run.tokens.push_back(tokenText(*m.tokenizer, id));
  run.maps = options.maps.mode == MapsChoice::Mode::Auto ? MapsChoice::Mode::All : options.maps.mode;
  // For the views: every map's q, k, v, or, when the maps are not all kept,
  // the q and k any map can be recomputed from (headMap).
  run.keep_projections = options.keep_projections && run.maps == MapsChoice::Mode::All;
  run.keep_scores = options.keep_projections && run.maps != MapsChoice::Mode::All;
  if (run.keep_scores) run.scores.resize(static_cast<size_t>(c.layers));
  if (!options.edit.empty()) {
    checkInterventions(options.edit, c, static_cast<int64_t>(ids.size()), cache);
    if (options.edit.value_norms && !run.keep_projections)
      throw InputError("value-weighted attention: the run must keep every map and its values (maps all, projections kept)");
    run.edit = &options.edit;
    const size_t layers = static_cast<size_t>(c.layers);
    if (options.edit.keep_residual) run.residual.resize(layers + 1);
    if (options.edit.keep_heads) run.head_out.resize(layers);
    if (!options.edit.write_positions.empty() || options.edit.value_norms)
      run.head_writes.resize(layers), run.head_bias.resize(layers), run.attention_out.resize(layers);
    if (options.edit.value_norms) run.value_norms.resize(layers);
  }
  MapStream stream(run, static_cast<int64_t>(ids.size()), run.maps, options.maps.heads, options.map_rows,
                   options.summarize);
  run.stream = &stream;
  run.pass_threads = ctx.pass_threads;
  run.layer_threads.assign(static_cast<size_t>(c.layers), 0);
  m.family->forward(m, run, cache, ctx);
  run.stream = nullptr;
  run.pass_threads = nullptr;
  run.edit = nullptr;
  run.threads = std::max(1, *std::max_element(run.layer_threads.begin(), run.layer_threads.end()));
  stream.finish(run);
  if (cache) cache->length += static_cast<int64_t>(ids.size());
  return run;
}

void checkIds(const Model& m, const std::vector<int32_t>& ids, int64_t first_position) {
  const ModelConfig& c = m.info.config;
  if (m.family->vision)
    throw InputError(c.label + " reads pictures, not text (attnlab model run PATH --image FILE.png, or --pixels FILE.npy)");
  if (m.family->seq2seq)
    throw InputError(c.label + " is an encoder–decoder model: it reads a source and a target (its maps: attnlab model run "
                               "PATH --text SOURCE --target TARGET; its figures: attnlab render --model PATH --text SOURCE "
                               "--target TARGET; its own target: attnlab model generate PATH --text SOURCE)");
  const int64_t L = static_cast<int64_t>(ids.size());
  if (L == 0) throw InputError("text: no tokens to run the model on");
  if (first_position + L > c.positions)
    throw TooLongError("text: " + std::to_string(first_position + L) + " tokens, but " + c.label +
                           " has only " + std::to_string(c.positions) + " positions",
                       first_position + L, c.positions);
  for (const int32_t id : ids)
    if (id < 0 || id >= c.vocab)
      throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(c.vocab) +
                       ")");
}

namespace {

// Rows whose softmax denominators are summed side by side.
constexpr int64_t kRowsTogether = 4;

// The softmax denominators z_r = Σ_j exp(x_rj − max_r) of `n` ≤ kRowsTogether
// rows of `logits` from row p0, each summed in double from the first key to
// the last. One row's sum waits the add's latency at every key; four rows'
// sums side by side do not (and expf, a call that clobbers every vector
// register, runs in a loop of its own).
void softmaxDenominators(const Mat& logits, int64_t p0, int64_t n, const float* mx, double* z) {
  const int64_t V = logits.cols();
  thread_local Mat e;  // [kRowsTogether, V]: the exps, rows past n zero
  e.resize(kRowsTogether, V);
  for (int64_t r = 0; r < kRowsTogether; ++r) {
    if (r >= n) {
      e.row(r).setZero();
      continue;
    }
    for (int64_t id = 0; id < V; ++id) e(r, id) = std::exp(logits(p0 + r, id) - mx[r]);
  }
  double sum[kRowsTogether] = {};
  for (int64_t id = 0; id < V; ++id)
    for (int64_t r = 0; r < kRowsTogether; ++r) sum[r] += e(r, id);
  std::copy_n(sum, n, z);
}

// Top-k of softmax(logits) for one row whose max is `mx` and softmax
// denominator `z`, by a single pass that keeps the k best in order (a partial
// selection: O(V·k) with k ≤ a few, no V-sized sort or index array).  row [V]
std::vector<Prediction> topKOfRow(const Eigen::Ref<const RowVec>& row, int k, float mx, double z, const Tokenizer& tok) {
  const int64_t V = row.size();
  const int kk = static_cast<int>(std::min<int64_t>(std::max(k, 0), V));
  if (kk == 0) return {};
  std::vector<int32_t> best;  // ids, best first; ties go to the smaller id
  best.reserve(static_cast<size_t>(kk) + 1);
  for (int32_t id = 0; id < V; ++id) {
    if (static_cast<int>(best.size()) == kk && row(id) <= row(best.back())) continue;
    auto at = std::find_if(best.begin(), best.end(), [&](int32_t b) { return row(id) > row(b); });
    best.insert(at, id);
    if (static_cast<int>(best.size()) > kk) best.pop_back();
  }
  std::vector<Prediction> out;
  for (const int32_t id : best)
    out.push_back({id, tokenText(tok, id), static_cast<float>(std::exp(static_cast<double>(row(id) - mx)) / z)});
  return out;
}

}  // namespace

std::vector<Prediction> topKOfLogits(const Model& m, const Eigen::Ref<const RowVec>& row, int k) {
  const float mx = row.maxCoeff();
  double z = 0;
  for (int64_t v = 0; v < row.size(); ++v) z += std::exp(static_cast<double>(row(v) - mx));
  return topKOfRow(row, k, mx, z, *m.tokenizer);
}

Mat lmLogits(const Model& m, const Mat& hidden, double* flops) {
  if (m.family->logits) return m.family->logits(m, hidden, flops);
  return lmHeadLogits(m.lm_head, hidden, flops);
}

std::vector<std::vector<Prediction>> predictTokens(const Model& m, const Mat& hidden,
                                                   const std::vector<int64_t>& positions, int k,
                                                   const RunContext& ctx, double* flops) {
  const int64_t L = hidden.rows(), P = static_cast<int64_t>(positions.size());
  std::vector<std::vector<Prediction>> out(static_cast<size_t>(L));
  if (k <= 0 || P == 0 || !m.predicts) return out;
  // h = hidden[positions]                                          [P, d]
  Mat h(P, hidden.cols());
  for (int64_t p = 0; p < P; ++p) h.row(p) = hidden.row(positions[static_cast<size_t>(p)]);
  double f = 0;
  const Mat logits = lmLogits(m, h, &f);
  parallelFor((P + kRowsTogether - 1) / kRowsTogether, ctx, [&](int64_t g) {
    const int64_t p0 = g * kRowsTogether, n = std::min(kRowsTogether, P - p0);
    float mx[kRowsTogether];
    double z[kRowsTogether];
    for (int64_t r = 0; r < n; ++r) mx[r] = logits.row(p0 + r).maxCoeff();
    softmaxDenominators(logits, p0, n, mx, z);
    for (int64_t r = 0; r < n; ++r)
      out[static_cast<size_t>(positions[static_cast<size_t>(p0 + r)])] =
          topKOfRow(logits.row(p0 + r), k, mx[r], z[r], *m.tokenizer);
  });
  if (flops) *flops += f;
  return out;
}

}  // namespace attn
