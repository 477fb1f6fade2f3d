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

std::vector<Expected> lmHeadUnlessTied(const ModelConfig& c) {
  if (c.tie_embeddings) return {};
  return {{"lm_head.weight", {c.vocab, c.d_model}}};
}

std::string layerName(const std::string& stem, int64_t layer, const std::string& rest) {
  return stem + std::to_string(layer) + "." + rest;
}

Weight WeightSource::takeFull(const std::string& name) const {
  const auto it = all_.find(name);
  if (it == all_.end()) return {};
  const Located& loc = it->second;
  model_.converted.emplace_back();
  const float* p = loc.file->floats(*loc.entry, model_.converted.back());
  if (model_.converted.back().empty()) model_.converted.pop_back();
  const std::vector<int64_t>& s = loc.entry->shape;
  return {.data = p, .rows = s[0], .cols = s.size() > 1 ? s[1] : 1};
}

Weight WeightSource::lazyFull(const std::string& name) const {
  const auto it = all_.find(name);
  if (it == all_.end() || it->second.entry->dtype == DType::F32) return takeFull(name);
  const TensorEntry& e = *it->second.entry;
  return {.file = it->second.file.get(), .entry = &e, .rows = e.shape[0], .cols = e.shape.size() > 1 ? e.shape[1] : 1};
}

}  // namespace attn
