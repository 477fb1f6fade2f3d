// Inputs of a run: synthetic (seeded, with structure presets), .npy files,
// or typed text. Everything resolves to the same Inputs struct.
#pragma once

#include "engine/tensor.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace attn {

enum class Preset { Gaussian, ClusteredKeys, Positional, RepeatedSegment };
const std::vector<std::string>& presetNames();  // "gaussian", "clustered", "positional", "repeated"
Preset presetFromName(const std::string& name);  // throws InputError

struct SyntheticSpec {
  uint64_t seed = 0;
  int64_t length = 12;         // L (target / query length)
  int64_t source_length = 0;   // S for cross-attention; 0 means "same as L + 4"
  int64_t dim = 64;            // d (d_model)
  int64_t heads = 4;           // h
  Preset preset = Preset::RepeatedSegment;
};

// Everything a variant may read. Variants take what they need:
//   self-attention: query() = key() = value() = x unless q/k/v files were given;
//   cross-attention: key() and value() come from x_kv (the source sequence).
struct Inputs {
  Mat x;      // [L, d] target / self-attention sequence
  Mat x_kv;   // [S, d] source sequence for cross-attention (may be empty)
  std::optional<Mat> q, k, v;  // given directly (--q/--k/--v)
  std::vector<std::string> tokens, source_tokens;
  uint64_t seed = 0;  // seeds generated weights (W^q, W_a, ...)
  int64_t heads = 4;
  // q, k, v are the projected queries, keys and values (--q/--k/--v, a real
  // model's head), head h in columns [h·d_head, (h+1)·d_head): variants use
  // them as they are, with no seeded W^q, W^k, W^v and no W^o; a variant
  // that reads an input sequence refuses them (VariantInfo::given_qkv).
  bool projected = false;
  // q, k, v were given as [H, L, d_head] (heads = H), held here side by side as [L, H·d_head].
  bool per_head_files = false;

  const Mat& query() const { return q ? *q : x; }
  const Mat& key() const { return k ? *k : (x_kv.size() ? x_kv : x); }
  const Mat& value() const { return v ? *v : (x_kv.size() ? x_kv : x); }
  int64_t dim() const { return query().cols(); }

  // Checks shapes against each other; throws InputError naming the tensors.
  void validate() const;
};

// The largest magnitude accepted in a user's array (x, q, k, v, a learned PE,
// LSH's R, a model head's q, k, v). Scores multiply two projected values and
// sum d of them. A seeded projection of |x| ≤ 1e15 is ~1.6·|x| typically and
// at most ~0.8·√d·|x| when x lines up with a column of W, so for d ≤ 8192 a
// score stays below ~4e37, under float32's 3.4e38. Every variant is tested
// finite at the limit (tests/engine/hardening_test.cpp); a wider d or a stack of
// many layers on adversarial input could still overflow, and runVariant then
// refuses the result rather than show Inf or NaN. Denormals are fine.
inline constexpr float kMaxInputMagnitude = 1e15f;
// Throws InputError naming `where` (a file and its flag) when `values` holds
// a NaN or an infinity, or a magnitude beyond the limit (naming both).
void checkInputMagnitude(std::span<const float> values, const std::string& where);

Inputs makeSynthetic(const SyntheticSpec& spec);

// Whitespace tokens; each gets a deterministic embedding from its string
// (FNV-1a hash seeds a Gaussian), plus a sinusoidal position signal so
// repeated words are similar but not identical.
Inputs makeFromText(const std::string& text, const std::string& source_text, int64_t dim, int64_t heads, uint64_t seed);

std::vector<std::string> splitWhitespace(const std::string& text);
std::vector<std::string> positionTokens(int64_t n, const std::string& prefix);  // "t0", "t1", ...

// Inputs from matrices already admitted (finite, within kMaxInputMagnitude):
// x, or q, k and v together (projected; x is then q); token labels are
// positions. Validated; throws InputError.
Inputs makeFromMatrices(Mat x, std::optional<Mat> q, std::optional<Mat> k, std::optional<Mat> v, int64_t heads,
                        uint64_t seed);

// A user's 2-D array file (an input or a file parameter such as ntm's memory),
// checked for rank, emptiness and magnitude; errors name the file, `flag`
// and the expected `shape`.
Mat readInputMatrix(const std::string& path, const std::string& flag, const std::string& shape = "[L, d]");

// Loads --x or --q --k --v files (each checked by checkInputMagnitude) into
// makeFromMatrices. q, k, v are [L, d] (split into `heads` heads) or all
// three [H, L, d_head], which sets heads = H.
Inputs makeFromFiles(const std::string& x_path, const std::string& q_path, const std::string& k_path,
                     const std::string& v_path, int64_t heads, uint64_t seed);

}  // namespace attn
