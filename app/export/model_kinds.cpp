#include "app/export/model_kinds.h"

#include "engine/error.h"

#include <memory>
#include <utility>

namespace attn {

// The kinds, one line each; a kind is defined in app/export/figure_<kind>.cpp
// (`extern const ModelKindInfo kNameKind`). A model is of the kind whose
// `fits` takes it, else of the one without `fits` (text).
#define ATTN_MODEL_KINDS(X) \
  X(kTextKind)              \
  X(kSeq2SeqKind)           \
  X(kVisionKind)            \
  X(kAttentionKind)

#define ATTN_DECLARE_MODEL_KIND(entry) extern const ModelKindInfo entry;
ATTN_MODEL_KINDS(ATTN_DECLARE_MODEL_KIND)

const std::vector<const ModelKindInfo*>& modelKindRegistry() {
#define ATTN_MODEL_KIND_ADDRESS(entry) &entry,
  static const std::vector<const ModelKindInfo*> kinds = {ATTN_MODEL_KINDS(ATTN_MODEL_KIND_ADDRESS)};
  return kinds;
}

const ModelKindInfo& modelKindOf(const ModelConfig& c) {
  const ModelKindInfo* rest = nullptr;
  for (const ModelKindInfo* k : modelKindRegistry()) {
    if (k->fits && k->fits(c)) return *k;
    if (!k->fits) rest = k;
  }
  if (!rest) throw std::logic_error("modelKindOf: no kind takes the rest");
  return *rest;
}

const ModelKindInfo& modelKindOf(const Model* m) { return m ? modelKindOf(modelInfo(*m).config) : kTextKind; }
const ModelKindInfo& attentionFileKind() { return kAttentionKind; }
const ModelKindInfo& modelKindOf(const ModelScene& s) { return s.source ? kAttentionKind : modelKindOf(s.model.get()); }
const ModelKindInfo& modelKindOf(const ModelOutput& o) { return o.source ? kAttentionKind : modelKindOf(o.model.get()); }

int modelViewDigit(size_t i) { return i < 9 ? static_cast<int>(i) + 1 : i == 9 ? 0 : -1; }

const ModelKindView* findModelView(const ModelKindInfo& k, const std::string& name) {
  for (const ModelKindView& v : k.views)
    if (v.name == name) return &v;
  return nullptr;
}

std::string modelViewNames(const ModelKindInfo& k) {
  std::string names;
  for (const ModelKindView& v : k.views) names += (names.empty() ? "" : ", ") + v.name;
  return names;
}

std::string modelViewsHelp() {
  std::string help;
  for (const ModelKindInfo* k : modelKindRegistry()) help += (help.empty() ? "" : "; ") + k->name + " models: " + modelViewNames(*k);
  return help;
}

const ModelKindView& modelViewOrThrow(const ModelKindInfo& k, const std::string& name, const std::string& flag) {
  if (const ModelKindView* v = findModelView(k, name)) return *v;
  throw InputError(flag + ": '" + name + "' is not a view of " + k.noun + " (expected one of " + modelViewNames(k) + ")");
}

void checkModelViewName(const std::string& name, const std::string& flag) {
  std::string all;  // every kind's views, each name once
  for (const ModelKindInfo* k : modelKindRegistry())
    for (const ModelKindView& v : k->views) {
      if (v.name == name) return;
      if ((", " + all + ", ").find(", " + v.name + ", ") == std::string::npos) all += (all.empty() ? "" : ", ") + v.name;
    }
  throw InputError(flag + ": the model workspace has no view '" + name + "' (expected " + all + ")");
}

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

void checkSelection(const char* flag, int64_t v, int64_t n) {
  if (v < 0 || v >= n)
    throw InputError(std::string(flag) + ": expected 0.." + std::to_string(n - 1) + ", got " + std::to_string(v));
}

PreparedFigure prepareModelFigure(const ModelOutput& out, const std::string& view, const ModelFigureSelection& sel,
                                  const FigureOptions& options) {
  const ModelKindInfo& kind = modelKindOf(out);
  const ModelKindView& v = modelViewOrThrow(kind, view);
  if (v.figure) return v.figure(out, sel, options);
  ModelViewBody body = v.body(out, sel, options.params);
  FigureOptions fo = options;
  fo.params.head = 0;
  if (!fo.title) fo.title = body.title;
  fo.subtitle = literalSubtitle(kind.subtitle(out));
  return prepareLayoutFigure(std::move(body.layout), body.height, fo);
}

int exportModelFigure(const ModelOutput& out, const std::string& view, const ModelFigureSelection& sel,
                      const FigureOptions& options, const std::string& path) {
  const PreparedFigure f = prepareModelFigure(out, view, sel, options);
  writeFigure(f, path);
  return f.options.height;
}

}  // namespace attn
