// Sparse Transformer factorized attention (Child et al. 2019, §4.2–4.3).
// Each query i attends to the union of up to two index sets, causal (j ≤ i):
//   strided, stride ℓ:   A¹ᵢ = {max(0, i−ℓ) … i}                 (the previous ℓ positions and i)
//                        A²ᵢ = {j ≤ i : (i − j) mod ℓ = 0}        (every ℓ-th position back)
//   fixed, block ℓ, c:   A¹ᵢ = {j ≤ i : ⌊j/ℓ⌋ = ⌊i/ℓ⌋}             (i's own block)
//                        A²ᵢ = {j ≤ i : j mod ℓ ∈ {ℓ−c … ℓ−1}}    (the last c of every block)
// window = openai: the local window as in openai's reference code
// (openai/sparse_attention, attention.py get_attn_mask, mode 'local':
// band_part(ones, ℓ−1, 0)), ℓ keys {i−ℓ+1 … i} instead of the paper's ℓ+1.
//
// Multi-head layouts (§4.3):
//   single       every head uses `set` (A¹, A² or A¹ ∪ A²);
//   interleaved  residual block l uses A^{(l mod 2)+1}: attention(X) = W_p · attend(X, A^{(r mod p)}), p = 2;
//   merged       every head attends to A¹ ∪ A²;
//   split        heads split between the patterns: head h uses A^{(h mod 2)+1}.
// The compute (engine/sparse_attention.h) touches only the pattern's entries.
#include "engine/error.h"
#include "engine/registry.h"
#include "engine/sparse_attention.h"

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

constexpr uint8_t kA1 = 1, kA2 = 2;  // SparseRows::sets bits

enum class Factorization { Strided, Fixed };

// Row i of the strided pattern, keys ascending; `which` selects A¹ and/or A²
// (entries keep both membership bits, so j = i shows as in both).
void stridedRow(int64_t i, int64_t l, bool openai_window, uint8_t which, std::vector<int32_t>& keys,
                std::vector<uint8_t>& sets) {
  const int64_t lo = std::max<int64_t>(0, openai_window ? i - l + 1 : i - l);  // first key of A¹ᵢ
  // A²ᵢ below the window: j ≡ i (mod ℓ), j < lo
  if (which & kA2)
    for (int64_t j = i % l; j < lo; j += l) {
      keys.push_back(static_cast<int32_t>(j));
      sets.push_back(kA2);
    }
  for (int64_t j = lo; j <= i; ++j) {
    const uint8_t bits = kA1 | ((i - j) % l == 0 ? kA2 : 0);
    if (!(bits & which)) continue;
    keys.push_back(static_cast<int32_t>(j));
    sets.push_back(bits);
  }
}

// Row i of the fixed pattern, keys ascending.
void fixedRow(int64_t i, int64_t l, int64_t c, uint8_t which, std::vector<int32_t>& keys, std::vector<uint8_t>& sets) {
  const int64_t start = i / l * l;  // first position of i's block
  // A²ᵢ in earlier blocks: the summary positions bℓ + ℓ−c … bℓ + ℓ−1
  if (which & kA2)
    for (int64_t b = 0; b < start; b += l)
      for (int64_t j = b + l - c; j < b + l; ++j) {
        keys.push_back(static_cast<int32_t>(j));
        sets.push_back(kA2);
      }
  for (int64_t j = start; j <= i; ++j) {
    const uint8_t bits = kA1 | (j % l >= l - c ? kA2 : 0);
    if (!(bits & which)) continue;
    keys.push_back(static_cast<int32_t>(j));
    sets.push_back(bits);
  }
}

// The sets head `head` of residual block `layer` attends to, as bits.
uint8_t headSets(const std::string& layout, const std::string& set, int64_t layer, int64_t head) {
  if (layout == "merged") return kA1 | kA2;
  if (layout == "interleaved") return layer % 2 == 0 ? kA1 : kA2;
  if (layout == "split") return head % 2 == 0 ? kA1 : kA2;
  return set == "A1" ? kA1 : set == "A2" ? kA2 : kA1 | kA2;
}

Result sparseTransformer(Factorization f, const Inputs& in, const Params& p, const RunContext& ctx) {
  const std::string name = f == Factorization::Strided ? "sparse-strided" : "sparse-fixed";
  const int64_t len = in.query().rows(), heads = in.heads;
  const int64_t l = p.getInt(f == Factorization::Strided ? "stride" : "block");
  const int64_t c = f == Factorization::Fixed ? p.getInt("c") : 0;
  const bool openai_window = f == Factorization::Strided && p.getString("window") == "openai";
  const std::string& layout = p.getString("layout");
  const std::string& set = p.getString("set");
  const int64_t layers = p.getInt("layers"), layer = p.getInt("layer");
  if (c > l)
    throw InputError(name + ": summary width c must be ≤ block ℓ, got c=" + std::to_string(c) + " > ℓ=" +
                     std::to_string(l));
  if (layer >= layers)
    throw InputError(name + ": layer must be < layers, got layer=" + std::to_string(layer) + " with layers=" +
                     std::to_string(layers));
  if (len > INT32_MAX) throw InputError(name + ": L must be < 2^31 (keys are int32)");

  Result r;
  r.variant = name;
  r.q_tokens = in.tokens;
  r.k_tokens = in.tokens;
  r.set_names = f == Factorization::Strided
                    ? std::vector<std::string>{"A¹ local window", "A² strided (every ℓ-th)"}
                    : std::vector<std::string>{"A¹ own block", "A² block summaries (last c)"};
  const int64_t width = p.getInt("width");
  r.image_width = width > 0 ? width : static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(len))));

  // One pattern per distinct set selection, copied to the heads that use it.
  std::vector<SparseRows> per_head(static_cast<size_t>(heads));
  for (int64_t h = 0; h < heads; ++h) {
    const uint8_t which = headSets(layout, set, layer, h);
    int64_t same = 0;  // an earlier head with the same sets, or h itself
    while (same < h && headSets(layout, set, layer, same) != which) ++same;
    if (same < h) {
      per_head[static_cast<size_t>(h)] = per_head[static_cast<size_t>(same)];
      continue;
    }
    per_head[static_cast<size_t>(h)] = buildPattern(
        name, len, len,
        [=](int64_t i, std::vector<int32_t>& keys, std::vector<uint8_t>& sets) {
          if (f == Factorization::Strided) stridedRow(i, l, openai_window, which, keys, sets);
          else fixedRow(i, l, c, which, keys, sets);
        },
        ctx);
  }
  sparseMultiHeadAttention(in, std::move(per_head), ctx, r);

  // Which pattern each head of each residual block uses: 0 A¹, 1 A², 2 A¹ ∪ A²   [layers, H]
  Mat picture(layers, heads);
  for (int64_t b = 0; b < layers; ++b)
    for (int64_t h = 0; h < heads; ++h) picture(b, h) = static_cast<float>(headSets(layout, set, b, h) - 1);
  r.extras.push_back({.name = "layout", .label = "pattern per layer × head (" + layout + ")",
                      .kind = ExtraKind::Matrix, .value = Array::fromMat(picture), .row_axis = "layer",
                      .col_axis = "head", .categories = {"A¹", "A²", "A¹ ∪ A²"}});
  return r;
}

// Parameters both factorizations share.
std::vector<ParamSpec> commonParams() {
  return {
      {.key = "set", .symbol = "A", .type = ParamType::Choice,
       .help = "Sets a head attends to when layout = single: A1, A2 or their union", .def = std::string("union"),
       .choices = {"A1", "A2", "union"}},
      {.key = "layout", .symbol = "layout", .type = ParamType::Choice,
       .help = "Multi-head layout (§4.3): single (every head uses 'set'), interleaved (layer l uses A^(l mod 2 + 1)), "
               "merged (every head uses A1 ∪ A2), split (head h uses A^(h mod 2 + 1))",
       .def = std::string("single"), .choices = {"single", "interleaved", "merged", "split"}},
      {.key = "layers", .symbol = "layers", .type = ParamType::Int,
       .help = "Residual blocks in the layer × head picture (layout = interleaved alternates them)", .min = 1,
       .max = 64, .def = int64_t{4}},
      {.key = "layer", .symbol = "l", .type = ParamType::Int,
       .help = "The residual block that is computed (0 … layers − 1); matters for layout = interleaved", .min = 0,
       .max = 63, .def = int64_t{0}},
      {.key = "width", .symbol = "w", .type = ParamType::Int,
       .help = "Image width of the 2D view, the sequence in raster order (0 = ⌈√L⌉)", .min = 0, .max = 1 << 20,
       .def = int64_t{0}},
  };
}

VariantInfo sparseInfo(Factorization f) {
  VariantInfo v;
  v.family = "sparse";
  v.given_qkv = GivenQkv::Heads;
  v.citation = "Child et al. 2019, §4.2–4.3";
  v.views = {"heatmap", "heads", "image", "extras", "compare"};
  if (f == Factorization::Strided) {
    v.name = "sparse-strided";
    v.title = "Sparse Transformer, strided";
    // No-break spaces around the ellipsis: a wrapped line never ends on it.
    v.summary = "A¹ᵢ = {max(0, i−ℓ) … i},  A²ᵢ = {j ≤ i : (i−j) mod ℓ = 0}";
    v.params = {
        {.key = "stride", .symbol = "ℓ", .type = ParamType::Int,
         .help = "Stride ℓ: length of the local window and step of the strided set (the paper uses ℓ ≈ √L)",
         .min = 1, .max = 1 << 20, .log_scale = true, .def = int64_t{4}},
        {.key = "window", .symbol = "A¹", .type = ParamType::Choice,
         .help = "Local window A¹: paper = {i−ℓ … i} (ℓ+1 keys); openai = {i−ℓ+1 … i} (ℓ keys, as openai's "
                 "reference code sparse_attention)",
         .def = std::string("paper"), .choices = {"paper", "openai"}},
    };
  } else {
    v.name = "sparse-fixed";
    v.title = "Sparse Transformer, fixed";
    v.summary = "A¹ᵢ = {j ≤ i : ⌊j/ℓ⌋ = ⌊i/ℓ⌋},  A²ᵢ = {j ≤ i : j mod ℓ ∈ {ℓ−c … ℓ−1}}";
    v.params = {
        {.key = "block", .symbol = "ℓ", .type = ParamType::Int, .help = "Block length ℓ of the fixed pattern",
         .min = 1, .max = 1 << 20, .log_scale = true, .def = int64_t{4}},
        {.key = "c", .symbol = "c", .type = ParamType::Int,
         .help = "Summary width c: the last c positions of every block are attended to by all later queries (c ≤ ℓ)",
         .min = 1, .max = 1 << 20, .log_scale = true, .def = int64_t{1}},
    };
  }
  for (ParamSpec& s : commonParams()) v.params.push_back(std::move(s));
  v.run = [f](const Inputs& in, const Params& p, const RunContext& ctx) { return sparseTransformer(f, in, p, ctx); };
  return v;
}

}  // namespace

VariantInfo makeSparseStridedVariant() { return sparseInfo(Factorization::Strided); }
VariantInfo makeSparseFixedVariant() { return sparseInfo(Factorization::Fixed); }

}  // namespace attn
