#include "engine/registry.h"

#include "engine/error.h"
#include "engine/parallel.h"

#include <nlohmann/json.hpp>

#include <chrono>

namespace attn {

ParamSpec causalParam() {
  return {.key = "causal", .symbol = "causal", .type = ParamType::Bool,
          .help = "Decoder mask: query i sees keys j ≤ i only", .def = false};
}

ParamSpec scaleParam() {
  return {.key = "scale", .symbol = "1/√d_k", .type = ParamType::Bool,
          .help = "Divide scores by √d_k (off: plain dot-product attention)", .def = true};
}

// [SECTION] Look-ups
const VariantInfo* findVariant(const std::string& name) {
  for (const VariantInfo& v : variants())
    if (v.name == name) return &v;
  return nullptr;
}

WeightAxes weightAxes(const Result& r) {
  if (!r.weights_row_axis.empty()) return {r.weights_row_axis, r.weights_col_axis};
  const VariantInfo* info = findVariant(r.variant);
  if (info && !info->row_axis.empty()) return {info->row_axis, info->col_axis};
  if (info && info->input == InputKind::CrossAttention) return {"query (target)", "key (source)"};
  return {"query", "key"};
}

const VariantInfo& variantOrThrow(const std::string& name) {
  if (const VariantInfo* v = findVariant(name)) return *v;
  std::string known;
  for (const VariantInfo& v : variants()) known += (known.empty() ? "" : ", ") + v.name;
  throw InputError("unknown variant '" + name + "' (expected one of: " + known + ")");
}

std::vector<std::string> families() {
  std::vector<std::string> out;
  for (const VariantInfo& v : variants())
    if (std::find(out.begin(), out.end(), v.family) == out.end()) out.push_back(v.family);
  return out;
}

// [SECTION] Running
std::string inputKindName(InputKind k) {
  switch (k) {
    case InputKind::SelfAttention: return "self";
    case InputKind::CrossAttention: return "cross";
    case InputKind::PositionsOnly: return "positions";
    case InputKind::Image: return "image";
    case InputKind::Memory: return "memory";
    case InputKind::OwnSequence: return "sequence";
  }
  return "?";
}

std::string givenQkvName(GivenQkv g) {
  switch (g) {
    case GivenQkv::Refused: return "refused";
    case GivenQkv::OneHead: return "one-head";
    case GivenQkv::Heads: return "heads";
  }
  return "?";
}

namespace {

// Why a variant of this kind refuses given q, k, v, and what to give instead.
std::string refusedQkvReason(InputKind k) {
  switch (k) {
    case InputKind::PositionsOnly: return "encodes positions and reads no queries, keys or values (leave the files out)";
    case InputKind::Image:
      return "reads a picture of its own and no queries, keys or values (leave the files out; give the picture as its "
             "parameter)";
    case InputKind::Memory:
      return "reads a memory M with a key, not queries, keys and values (give the memory as --x X.npy or its parameter)";
    case InputKind::OwnSequence:
      return "runs on a sequence of its own and reads no queries, keys or values (leave the files out; give the "
             "sequence as its parameter)";
    case InputKind::SelfAttention:
    case InputKind::CrossAttention: break;
  }
  return "reads an input sequence and makes its own queries, keys and values (give --x X.npy)";
}

void checkGivenQkv(const VariantInfo& info, const Inputs& in) {
  if (!in.projected) return;
  if (info.given_qkv == GivenQkv::Refused) throw InputError("--q/--k/--v: " + info.name + " " + refusedQkvReason(info.input));
  if (info.given_qkv == GivenQkv::OneHead && in.per_head_files && in.heads > 1)
    throw InputError("--q/--k/--v: " + info.name + " takes one head [L, d], the files hold " +
                     std::to_string(in.heads) + " heads [H, L, d_head] (multi-head and the pattern variants take them)");
}

}  // namespace

Result runVariant(const VariantInfo& info, const Inputs& inputs, const Params& params, const RunContext& ctx) {
  inputs.validate();
  checkGivenQkv(info, inputs);
  if (info.input == InputKind::CrossAttention && inputs.x_kv.size() == 0 && !inputs.k)
    throw InputError(info.name + ": needs a source sequence (--source-length, or --k/--v files)");
  // Self-attention reads x for keys and values (inputs.h): synthetic and
  // text inputs always carry a source x_kv, which key() would return.
  if (info.input == InputKind::SelfAttention && inputs.x_kv.size() != 0) {
    Inputs self = inputs;
    self.x_kv = Mat();
    self.source_tokens = self.k ? inputs.source_tokens : inputs.tokens;
    return runVariant(info, self, params, ctx);
  }
  const ThreadScope threads(ctx.adapt_threads ? threadsAvailable() : omp_get_max_threads());
  const auto t0 = std::chrono::steady_clock::now();
  Result r = info.run(inputs, params, ctx);
  r.compute_seconds = secondsSince(t0);
  r.threads = omp_get_max_threads();
  r.variant = info.name;
  r.params = params;
  r.computeStats();
  // Finite input (readers refuse NaN and Inf, and magnitudes beyond
  // kMaxInputMagnitude) must give finite results; if a variant ever breaks
  // that, say so as our bug rather than hand Inf or NaN to a view or a file.
  if (const std::string bad = r.firstNonFinite(); !bad.empty())
    throw std::logic_error(info.name + " produced NaN or infinite values in " + bad +
                           " from finite input (a bug in AttnLab; please report it with the command)");
  return r;
}

// [SECTION] Families
Params carryParams(const Params& from, const VariantInfo& to) {
  Params p = Params::defaults(to.params);
  for (const ParamSpec& spec : to.params) {
    if (!from.has(spec.key) || from.get(spec.key).index() != spec.def.index()) continue;
    try {
      p.setValue(to.params, spec.key, from.get(spec.key));
    } catch (const InputError&) {
      // Out of this variant's range: keep its default.
    }
  }
  return p;
}

std::vector<FamilyMember> runFamily(const VariantInfo& info, const Inputs& inputs, const Params& params,
                                    const RunContext& ctx) {
  std::vector<const VariantInfo*> members;
  for (const VariantInfo& v : variants())
    if (v.family == info.family) members.push_back(&v);
  std::vector<FamilyMember> out;
  for (size_t k = 0; k < members.size(); ++k) {
    const VariantInfo& v = *members[k];
    // Member k reports its progress inside [k, k+1] / n.
    RunContext part;
    part.cancel = ctx.cancel;
    if (ctx.on_progress)
      part.on_progress = [&ctx, k, n = static_cast<float>(members.size())](float f) {
        ctx.on_progress((static_cast<float>(k) + f) / n);
      };
    FamilyMember m;
    m.variant = v.name;
    if (&v == &info) {
      m.result = std::make_shared<const Result>(runVariant(v, inputs, params, part));
    } else {
      try {
        m.result = std::make_shared<const Result>(runVariant(v, inputs, carryParams(params, v), part));
      } catch (const InputError& e) {
        m.error = e.what();
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

nlohmann::json registryToJson() {
  nlohmann::json out = nlohmann::json::array();
  for (const VariantInfo& v : variants()) {
    nlohmann::json j = {{"name", v.name},     {"family", v.family},     {"title", v.title},
                        {"summary", v.summary}, {"citation", v.citation}};
    j["input"] = inputKindName(v.input);
    j["given_qkv"] = givenQkvName(v.given_qkv);
    j["params"] = nlohmann::json::array();
    for (const ParamSpec& p : v.params) j["params"].push_back(specToJson(p));
    j["views"] = nlohmann::json::array();
    for (const std::string& k : v.views) j["views"].push_back(k);
    out.push_back(j);
  }
  return out;
}

}  // namespace attn
