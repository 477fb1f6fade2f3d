#include "engine/inputs.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/npy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <tuple>

namespace attn {

const std::vector<std::string>& presetNames() {
  static const std::vector<std::string> names = {"gaussian", "clustered", "positional", "repeated"};
  return names;
}

Preset presetFromName(const std::string& name) {
  const auto& n = presetNames();
  for (size_t i = 0; i < n.size(); ++i)
    if (n[i] == name) return static_cast<Preset>(i);
  throw InputError("--preset: unknown preset '" + name + "' (expected gaussian, clustered, positional or repeated)");
}

std::vector<std::string> splitWhitespace(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

std::vector<std::string> positionTokens(int64_t n, const std::string& prefix) {
  std::vector<std::string> t;
  t.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t.push_back(prefix + std::to_string(i));
  return t;
}

namespace {

void checkSizes(int64_t length, int64_t dim, int64_t heads) {
  if (length < 1) throw InputError("--length: expected at least 1, got " + std::to_string(length));
  if (dim < 1) throw InputError("--dim: expected at least 1, got " + std::to_string(dim));
  if (heads < 1) throw InputError("--heads: expected at least 1, got " + std::to_string(heads));
  if (dim % heads != 0)
    throw InputError("--heads: h=" + std::to_string(heads) + " does not divide d=" + std::to_string(dim) +
                     " (d_k = d/h must be a whole number)");
  // Refuse inputs that cannot even be held (the dense guard covers L×L).
  const double input_bytes = 2.0 * static_cast<double>(length) * dim * 4.0;
  if (input_bytes > 0.5 * static_cast<double>(availableMemoryBytes()))
    throw InputError("--length/--dim: an input of [" + std::to_string(length) + ", " + std::to_string(dim) +
                     "] needs " + formatBytes(input_bytes) + ", more than the memory available");
}

Mat structured(Preset preset, int64_t length, int64_t dim, uint64_t seed, const std::string& stream) {
  switch (preset) {
    case Preset::Gaussian:
      return randomNormal(length, dim, seed, stream);
    case Preset::ClusteredKeys: {
      // Four centres; each token is its centre plus small noise, so keys
      // (and queries, in self-attention) form blocks of mutual attention.
      const int64_t clusters = 4;
      const Mat centres = randomNormal(clusters, dim, seed, stream + ".centres", 1.5f);
      Mat x = randomNormal(length, dim, seed, stream, 0.35f);
      for (int64_t i = 0; i < length; ++i)
        x.row(i) += centres.row(static_cast<int64_t>(hashString(std::to_string(seed) + ":" + std::to_string(i)) % clusters));
      return x;
    }
    case Preset::Positional:
      return randomNormal(length, dim, seed, stream, 0.5f) + sinusoidalEncoding(length, dim) * 3.0f;
    case Preset::RepeatedSegment: {
      // A random segment of length ~L/3 repeated: token i and i + period are
      // identical up to position, which draws copy/induction diagonals.
      const int64_t period = std::max<int64_t>(1, (length + 2) / 3);
      const Mat seg = randomNormal(period, dim, seed, stream);
      Mat x(length, dim);
      for (int64_t i = 0; i < length; ++i) x.row(i) = seg.row(i % period);
      return x + sinusoidalEncoding(length, dim) * 0.3f;
    }
  }
  return {};
}

}  // namespace

Inputs makeSynthetic(const SyntheticSpec& spec) {
  checkSizes(spec.length, spec.dim, spec.heads);
  const int64_t s = spec.source_length > 0 ? spec.source_length : spec.length + 4;
  checkSizes(s, spec.dim, spec.heads);
  Inputs in;
  in.seed = spec.seed;
  in.heads = spec.heads;
  in.x = structured(spec.preset, spec.length, spec.dim, spec.seed, "x");
  in.x_kv = structured(spec.preset, s, spec.dim, spec.seed, "x_kv");
  in.tokens = positionTokens(spec.length, "t");
  in.source_tokens = positionTokens(s, "s");
  return in;
}

namespace {

Mat embedTokens(const std::vector<std::string>& tokens, int64_t dim, uint64_t seed) {
  Mat x(static_cast<int64_t>(tokens.size()), dim);
  for (size_t i = 0; i < tokens.size(); ++i)
    x.row(static_cast<int64_t>(i)) = randomNormal(1, dim, seed ^ hashString(tokens[i]), "token");
  return x + sinusoidalEncoding(x.rows(), dim) * 0.3f;
}

}  // namespace

Inputs makeFromText(const std::string& text, const std::string& source_text, int64_t dim, int64_t heads, uint64_t seed) {
  Inputs in;
  in.tokens = splitWhitespace(text);
  if (in.tokens.empty()) throw InputError("--text: expected at least one word, got empty text");
  checkSizes(static_cast<int64_t>(in.tokens.size()), dim, heads);
  in.source_tokens = splitWhitespace(source_text);
  if (in.source_tokens.empty()) in.source_tokens = in.tokens;
  in.seed = seed;
  in.heads = heads;
  // The token table does not depend on the run seed: the same word always
  // has the same embedding, as a real model's would.
  in.x = embedTokens(in.tokens, dim, 0);
  in.x_kv = embedTokens(in.source_tokens, dim, 0);
  return in;
}

void checkInputMagnitude(std::span<const float> values, const std::string& where) {
  float largest = 0;
  for (const float v : values) {
    if (!std::isfinite(v)) throw InputError(where + ": contains NaN or infinite values");
    largest = std::max(largest, std::fabs(v));
  }
  if (largest <= kMaxInputMagnitude) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, ": values up to ±%.0e are accepted, this array has %.3g (its scores would overflow float32)",
                static_cast<double>(kMaxInputMagnitude), static_cast<double>(largest));
  throw InputError(where + buf);
}

namespace {

// A user's 2-D array read from `where` ("X.npy (--x)"), checked for shape and magnitude.
Mat inputMatrix(const Array& a, const std::string& where, const std::string& shape = "[L, d]") {
  if (a.rank() != 2 || a.shape[0] == 0 || a.shape[1] == 0)
    throw InputError(where + ": expected a non-empty 2-D array " + shape + ", got shape " + a.shapeString());
  checkInputMagnitude(a.data, where);
  return a.toMat(where);
}

// A user's --q/--k/--v file: [L, d], or [H, L, d_head] laid out as
// [L, H·d_head] (head h in columns h·d_head …), its H in `file_heads` (0 for [L, d]).
Mat readQkvMatrix(const std::string& path, const std::string& flag, int64_t& file_heads) {
  const std::string where = path + " (" + flag + ")";
  const Array a = readNpy(path, flag);
  file_heads = 0;
  if (a.rank() != 3) return inputMatrix(a, where);
  const int64_t H = a.shape[0], L = a.shape[1], dh = a.shape[2];
  if (H == 0 || L == 0 || dh == 0)
    throw InputError(where + ": expected a non-empty [H, L, d_head] array, got shape " + a.shapeString());
  checkInputMagnitude(a.data, where);
  Mat m(L, H * dh);
  for (int64_t h = 0; h < H; ++h)
    m.middleCols(h * dh, dh) = Eigen::Map<const Mat>(a.data.data() + h * L * dh, L, dh);
  file_heads = H;
  return m;
}

}  // namespace

Mat readInputMatrix(const std::string& path, const std::string& flag, const std::string& shape) {
  return inputMatrix(readNpy(path, flag), path + " (" + flag + ")", shape);
}

Inputs makeFromMatrices(Mat x, std::optional<Mat> q, std::optional<Mat> k, std::optional<Mat> v, int64_t heads,
                        uint64_t seed) {
  Inputs in;
  in.seed = seed;
  in.heads = heads;
  in.x = std::move(x);
  if (q || k || v) {
    // makeFromFiles refuses a missing file before reading any; here a partial set is a caller's bug.
    if (!q || !k || !v) throw std::logic_error("makeFromMatrices: q, k and v go together");
    if (in.x.size() == 0) in.x = *q;
    in.q = std::move(q);
    in.k = std::move(k);
    in.v = std::move(v);
    in.projected = true;
  }
  if (in.x.size() == 0) throw InputError("input: expected --x X.npy or --q/--k/--v files");
  in.tokens = positionTokens(in.query().rows(), "t");
  in.source_tokens = positionTokens(in.key().rows(), "s");
  in.validate();
  return in;
}

Inputs makeFromFiles(const std::string& x_path, const std::string& q_path, const std::string& k_path,
                     const std::string& v_path, int64_t heads, uint64_t seed) {
  const bool any_qkv = !q_path.empty() || !k_path.empty() || !v_path.empty();
  if (any_qkv && (q_path.empty() || k_path.empty() || v_path.empty()))
    throw InputError("--q/--k/--v: give all three files (missing " +
                     std::string(q_path.empty() ? "--q" : k_path.empty() ? "--k" : "--v") + ")");
  if (any_qkv && !x_path.empty())
    throw InputError("--x: give --x (an input the variant projects) or --q/--k/--v (projected queries, keys and "
                     "values), not both");
  if (!any_qkv) return makeFromMatrices(inputMatrix(readNpy(x_path, "--x"), x_path + " (--x)"), {}, {}, {}, heads, seed);
  // Read in this order (function arguments have none), so the first bad file is the one named.
  int64_t hq = 0, hk = 0, hv = 0;
  Mat q = readQkvMatrix(q_path, "--q", hq);
  Mat k = readQkvMatrix(k_path, "--k", hk);
  Mat v = readQkvMatrix(v_path, "--v", hv);
  // Heads come from [H, L, d_head] files or from --heads, never from a mix.
  for (const auto& [h, path, flag] : {std::tuple{hk, k_path, "--k"}, std::tuple{hv, v_path, "--v"}})
    if (h != hq)
      throw InputError(path + " (" + flag + "): expected " +
                       (hq ? "[H, L, d_head] with H = " + std::to_string(hq) + " like --q"
                           : std::string("a 2-D array [L, d] like --q")) +
                       ", got " + (h ? "H = " + std::to_string(h) : std::string("a 2-D array")));
  Inputs in = makeFromMatrices(Mat(), std::move(q), std::move(k), std::move(v), hq ? hq : heads, seed);
  in.per_head_files = hq > 0;
  return in;
}

void Inputs::validate() const {
  const Mat& Q = query();
  const Mat& K = key();
  const Mat& V = value();
  auto rows = [](const Mat& m) { return std::to_string(m.rows()); };
  auto cols = [](const Mat& m) { return std::to_string(m.cols()); };
  if (Q.rows() == 0 || Q.cols() == 0) throw InputError("q: expected a non-empty [L, d] matrix");
  if (K.rows() == 0) throw InputError("k: expected at least one key, got an empty [0, d] matrix");
  if (Q.cols() != K.cols())
    throw InputError("q/k: d_k of q is " + cols(Q) + " but d_k of k is " + cols(K) + " (expected equal)");
  if (V.cols() == 0) throw InputError("v: expected a non-empty [S, d_v] matrix, got an empty [S, 0] matrix");
  if (K.rows() != V.rows())
    throw InputError("k/v: k has " + rows(K) + " keys but v has " + rows(V) + " values (expected equal)");
  if (heads < 1) throw InputError("--heads: expected at least 1");
  // Variants generate a few [d, d] weight matrices (W^q, W^k, W^v, W^o, W_a):
  // refuse a d whose weights alone would not fit, before any is allocated.
  const double weight_bytes = 6.0 * static_cast<double>(Q.cols()) * static_cast<double>(Q.cols()) * 4.0;
  if (weight_bytes > 0.5 * static_cast<double>(availableMemoryBytes()))
    throw InputError("d: d=" + std::to_string(Q.cols()) + " needs [d, d] weight matrices of " +
                     formatBytes(weight_bytes) + " in all, more than the memory available");
  if (static_cast<int64_t>(tokens.size()) != Q.rows())
    throw std::logic_error("Inputs: token labels do not match query rows");
}

}  // namespace attn
