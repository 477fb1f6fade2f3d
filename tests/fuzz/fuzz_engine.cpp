// libFuzzer target: the engine itself, through the registry, as `attnlab
// compute` calls it. The input picks a variant, a small shape (L ≤ 64,
// d ≤ 16), parameter values inside each parameter's declared range, and the
// raw float32 bits of q, k and v (or of x). Values the .npy reader and the
// input check would refuse (NaN, Inf, beyond kMaxInputMagnitude) end the run
// there, as they would in the CLI. Every run is then either refused with
// InputError or gives a result in which every array, scores and the
// walkthrough's panels included, is finite. New variants are covered
// without editing this file.
#include "engine/error.h"
#include "engine/inputs.h"
#include "engine/registry.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

namespace {

// Reads the input front to back; past its end every read gives zeros.
struct Bytes {
  const uint8_t* data;
  size_t size, at = 0;
  uint8_t byte() { return at < size ? data[at++] : 0; }
  uint32_t word() {
    uint32_t w = 0;
    for (int i = 0; i < 4; ++i) w |= uint32_t(byte()) << (8 * i);
    return w;
  }
  double unit() { return word() / 4294967295.0; }  // [0, 1]
};

// A value of `spec`'s type inside its range: often an end of the range,
// otherwise spread uniformly (log-uniformly for log-scale ranges). The top
// of a range comes up 1 time in 8: several parameters at their maxima at
// once cost the most (`reversible` refuses a stack past its LSH work bound;
// the costliest admitted runs take ~4 s under the sanitizers).
double inRange(const attn::ParamSpec& spec, Bytes& in) {
  const uint8_t how = in.byte() % 8;
  if (how < 2) return spec.min;
  if (how == 2) return spec.max;
  const double u = in.unit();
  if (spec.log_scale && spec.min > 0) return std::exp(std::log(spec.min) + u * (std::log(spec.max) - std::log(spec.min)));
  return spec.min + u * (spec.max - spec.min);
}

attn::Params fuzzParams(const attn::VariantInfo& info, Bytes& in, int64_t heads) {
  attn::Params p = attn::Params::defaults(info.params);
  for (const attn::ParamSpec& spec : info.params) {
    if (in.byte() % 4 == 0) continue;  // keep the default
    attn::ParamValue v;
    switch (spec.type) {
      case attn::ParamType::Bool: v = in.byte() % 2 == 1; break;
      case attn::ParamType::Int: v = static_cast<int64_t>(std::llround(inRange(spec, in))); break;
      case attn::ParamType::Float: v = inRange(spec, in); break;
      case attn::ParamType::Choice:
        if (spec.choices.empty()) continue;
        v = spec.choices[in.byte() % spec.choices.size()];
        break;
      case attn::ParamType::File: continue;  // a path: the readers have their own targets
      case attn::ParamType::Text: continue;  // a syntax the variant checks (tests/engine/variants/*_test.cpp)
      case attn::ParamType::FloatList: {
        std::vector<double> list(1 + in.byte() % std::max<int64_t>(heads, 4));
        for (double& x : list) x = inRange(spec, in);
        v = list;
        break;
      }
    }
    try {
      p.setValue(info.params, spec.key, v);
    } catch (const attn::InputError&) {
      // Outside a constraint the range alone does not say (odd, integral): keep the default.
    }
  }
  return p;
}

// [rows, cols] float32 values from the input's bits, admitted as the .npy
// reader and checkInputMagnitude admit a file; nullopt where they refuse.
std::optional<attn::Mat> fuzzMatrix(Bytes& in, int64_t rows, int64_t cols) {
  attn::Mat m(rows, cols);
  for (int64_t i = 0; i < m.size(); ++i) {
    const uint32_t w = in.word();
    float f;
    std::memcpy(&f, &w, sizeof f);
    if (!std::isfinite(f)) return std::nullopt;
    m.data()[i] = f;
  }
  try {
    attn::checkInputMagnitude(std::span<const float>(m.data(), static_cast<size_t>(m.size())), "fuzz");
  } catch (const attn::InputError&) {
    return std::nullopt;
  }
  return m;
}

// Every array finite (Result::firstNonFinite over all of them) and each
// sparse head's CSR rows exactly as long as its entries (values may be
// empty: a bare pattern).
void requireSound(const attn::Result& r) {
  if (!r.firstNonFinite(true).empty()) std::abort();
  for (const attn::SparseRows& s : r.sparse)
    if (s.indptr.size() != static_cast<size_t>(s.rows + 1) || s.indptr.back() != s.nnz() ||
        (!s.values.empty() && s.values.size() != s.indices.size()))
      std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in{data, size};
  const std::vector<attn::VariantInfo>& all = attn::variants();
  const attn::VariantInfo& info = all[in.byte() % all.size()];
  const int64_t len = 1 + in.byte() % 64, dim = 1 + in.byte() % 16;
  // Mostly a head count that divides d (what most variants need), sometimes any.
  const uint8_t h = in.byte();
  int64_t heads = 1 + h % 4;
  if (h < 192)
    while (dim % heads != 0) --heads;
  const uint64_t seed = in.byte();
  const uint8_t flags = in.byte();
  const bool given_qkv = flags & 1, shared_qkv = flags & 2;
  attn::RunContext ctx;
  ctx.keep_weights = !(flags & 4);
  // Under the sanitizers a run is ~25x slower than in Release: the variants
  // that count their work refuse past 2^23 here, not the default 2^31 (at
  // 2^25 a 60 s fuzz run found admitted reversible inputs of 16 s).
  ctx.work_limit = double(int64_t{1} << 23);
  const attn::Params params = fuzzParams(info, in, heads);

  attn::Inputs inputs;
  try {
    if (!given_qkv) {
      std::optional<attn::Mat> x = fuzzMatrix(in, len, dim);
      if (!x) return 0;
      inputs = attn::makeFromMatrices(std::move(*x), {}, {}, {}, heads, seed);
      if (info.input == attn::InputKind::CrossAttention) {
        std::optional<attn::Mat> src = fuzzMatrix(in, 1 + in.byte() % 64, dim);
        if (!src) return 0;
        inputs.x_kv = std::move(*src);
        inputs.source_tokens = attn::positionTokens(inputs.x_kv.rows(), "s");
      }
    } else {
      std::optional<attn::Mat> q = fuzzMatrix(in, len, dim);
      if (!q) return 0;
      std::optional<attn::Mat> k = q, v = q;  // q = k = v: the shape of the LSH overflow report
      if (!shared_qkv) {
        const int64_t keys = info.input == attn::InputKind::CrossAttention ? 1 + in.byte() % 64 : len;
        k = fuzzMatrix(in, keys, dim);
        v = fuzzMatrix(in, keys, 1 + in.byte() % 16);
        if (!k || !v) return 0;
      }
      inputs = attn::makeFromMatrices(attn::Mat(), std::move(q), std::move(k), std::move(v), heads, seed);
    }
    requireSound(attn::runVariant(info, inputs, params, ctx));
  } catch (const attn::InputError&) {
    // Refused cleanly: the CLI prints the message and exits 2.
  }
  return 0;
}
