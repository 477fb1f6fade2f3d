// Attention computed elsewhere (a notebook, another framework, `attnlab
// model run`), read from the user's files without trusting them: a bare
// .npy, a member of an .npz (stored or deflated), or a tensor of a
// .safetensors file, float32, float16 or bfloat16, kept mapped (a deflated
// .npz member inflated once) and converted to float32 a map at a time, so a
// file larger than memory is read head by head.
#pragma once

#include "engine/model/checkpoint/safetensors.h"  // DType
#include "engine/tensor.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

// One float array of a file, any rank, C order.
class FloatTensor {
 public:
  // Opens `path` (.npy, .npz, .safetensors; by its magic bytes, not its
  // name). An .npz or .safetensors holding several arrays: the one called
  // `name`, or, when `name` is empty, "attention" or "attentions" or its only
  // array; otherwise an InputError listing the names it holds. `field` is
  // the flag or file the array is for ("--attention", "--q"), named in errors
  // beside the path: "attn.npz: --attention: holds 'a', 'b'; name one of them …".
  // Refuses dtypes other than float32/float16/bfloat16 (npy '<f4' '<f2',
  // safetensors F32 F16 BF16), Fortran order, big-endian, truncated data.
  static FloatTensor open(const std::filesystem::path& path, const std::string& field, const std::string& name = "");

  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t elements() const;
  DType dtype() const { return dtype_; }
  const std::string& what() const { return what_; }  // "attn.npz 'attention'": for errors
  // Elements [first, first + count) as float32 into `out` (range checked by the caller).
  void read(int64_t first, int64_t count, float* out) const;

 private:
  // The array of .npy bytes kept alive by `keep`; `where` starts its errors.
  static FloatTensor fromNpy(std::string_view bytes, std::shared_ptr<const void> keep, std::string what,
                             const std::string& where);
  std::string what_;
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  std::shared_ptr<const void> keep_;   // the mapping or the inflated bytes
  const uint8_t* data_ = nullptr;
};

// Attention maps as [layers, heads, rows, cols]: a 2-D array [L, L] is one
// layer of one head, a 3-D [heads, L, L] one layer; 4-D [layers, heads,
// Lq, Lk] (Lq ≠ Lk: cross-attention, Lq target rows over Lk source columns).
// Any other rank: InputError naming the shape received and the shapes accepted.
struct AttentionMaps {
  FloatTensor tensor;
  int64_t layers = 1, heads = 1, rows = 0, cols = 0;
  // Map (l, h) as float32 [rows, cols].
  Mat map(int64_t layer, int64_t head) const;
};
AttentionMaps attentionMaps(FloatTensor t, const std::string& field);

// Checks one map of weights: finite, ≥ 0, each row summing to 1 within
// 1e-3 (a causal map's rows too: zeros above the diagonal count). A map of
// scores (`scores`: the file says so) may hold −inf (masked) but no NaN or
// +inf, and is turned into weights in place: each row's softmax (a row of
// −inf only is an error). Throws InputError naming `what`, the layer, the
// head, the row and the value: "attn.npy: layer 2, head 5, row 17 sums to
// 0.62, not 1 (weights: softmax rows; scores: say \"scores\": true in meta.json)".
void checkAttentionMap(Mat& map, bool scores, const std::string& what, int64_t layer, int64_t head);

// Tokens for a file's maps: a JSON list of strings, a JSON object with a
// "tokens" list (tokens.json of `model run`), or a text file of one token
// per line (UTF-8, "\r\n" too, a final newline optional; an empty line is
// an empty token). Throws InputError naming the file and what was expected.
std::vector<std::string> readTokenList(const std::filesystem::path& path, const std::string& field);

}  // namespace attn
