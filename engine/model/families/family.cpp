// The list of model families (families.def) and what the loader asks of it.
#include "engine/model/families/family.h"

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
  if (lazy && e.dtype != DType::F32) return {.file = loc.file.get(), .entry = &e, .rows = rows, .cols = cols};
  model_.converted.emplace_back();
  const float* p = loc.file->floats(e, model_.converted.back());
  if (model_.converted.back().empty()) model_.converted.pop_back();
  return {.data = p, .rows = rows, .cols = cols};
}

}  // namespace attn
