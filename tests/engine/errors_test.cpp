// Bad input a user can cause: each must be an InputError whose message
// names the field (or file) and what was expected. And .npy round trips.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/npy.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <cstring>

namespace attn {
namespace {

using ref::expectInputError;

TEST(BadInput, HeadsNotDividingD) {
  Inputs in = ref::gaussianInputs(1, 5, 7, 16, 4);
  in.heads = 3;
  for (const std::string name : {"multi-head", "cross-attention"})
    expectInputError([&] { ref::run(name, in); }, {"--heads", "h=3", "d=16"});
  SyntheticSpec spec;
  spec.dim = 10;
  spec.heads = 4;
  expectInputError([&] { makeSynthetic(spec); }, {"--heads", "d=10"});
}

TEST(BadInput, MismatchedKeyWidth) {
  Inputs in = ref::givenQkv(randomNormal(4, 8, 1, "q"), randomNormal(6, 5, 1, "k"), randomNormal(6, 5, 1, "v"));
  for (const std::string name : {"scaled-dot-product", "dot", "global", "local-p", "hard"})
    expectInputError([&] { ref::run(name, in); }, {"q/k", "d_k of q is 8", "d_k of k is 5"});
  in.k = randomNormal(6, 8, 1, "k");
  in.v = randomNormal(7, 8, 1, "v");
  expectInputError([&] { ref::run("additive", in); }, {"k/v", "6 keys", "7 values"});
}

TEST(BadInput, CrossAttentionNeedsSource) {
  Inputs in = ref::gaussianInputs(1, 5, 7, 16, 4);
  in.x_kv = Mat();
  expectInputError([&] { ref::run("additive", in); }, {"additive", "source sequence"});
}

// ATTNLAB_MEMORY_LIMIT_MB=1 leaves 0.75 MiB for dense [Lq, Lk] arrays;
// 600 × 700 floats (1.6 MiB a copy) do not fit, and must be refused before
// they are allocated. Sparse variants need no dense array: they still run,
// and leave the dense copies out.
TEST(BadInput, DenseMemoryGuard) {
  const Inputs in = ref::gaussianInputs(2, 600, 700, 8, 1);
  const ref::ScopedEnv limit("ATTNLAB_MEMORY_LIMIT_MB", "1");
  for (const VariantInfo& v : variants()) {
    if (v.name == "learned-pe") continue;  // L comes from its file; covered below
    if (v.name == "transformer-xl") continue;  // [H, segment, memory + segment]: independent of the input length
    if (v.name == "act") continue;  // [T, M] halting weights: no L×L array
    if (v.name == "ntm") continue;  // [1, 1, N]: one weighting over the memory rows
    if (v.name == "ntm-copy") continue;  // [2, 2L + 1, N] for L up to the model's max_length (engine/ntm_copy_test.cpp)
    if (v.name == "pointer-sort") continue;  // [1, n, n] for the n ≤ 12 numbers its model sorts (a longer L is refused)
    if (v.family == "sparse" || v.family == "local" || v.family == "adaptive span" || v.family == "reformer") {
      const Result r = ref::run(v.name, in);
      EXPECT_TRUE(r.isSparse() && r.weights.empty() && r.scores.empty()) << v.name;
      continue;
    }
    expectInputError([&] { ref::run(v.name, in); }, {v.name, "dense attention", "more than the 1.0 MiB"});
  }
  const ref::TempPath pe("pe.npy");
  writeNpy(pe.path, Array::fromMat(Mat::Zero(700, 2)));
  expectInputError([&] { ref::run("learned-pe", in, {{"pe", pe.path.string()}}); }, {"learned-pe", "[1, 700, 700]"});
}

// A sparse pattern can still be too dense for memory (ℓ = 2 keeps L²/4 of
// the keys): the builder counts entries as it goes and stops with an error
// long before the allocation would fail.
TEST(BadInput, SparsePatternMemoryGuard) {
  const Inputs in = ref::gaussianInputs(2, 4096, 4096, 8, 1);
  const ref::ScopedEnv limit("ATTNLAB_MEMORY_LIMIT_MB", "1");
  expectInputError([&] { ref::run("sparse-strided", in, {{"stride", "2"}}); },
                   {"sparse-strided", "L = 4096", "connections", "choose a sparser pattern"});
}

TEST(BadInput, ParameterRanges) {
  const Inputs in = ref::gaussianInputs(3, 5, 7, 16, 4);
  expectInputError([&] { ref::run("local-p", in, {{"D", "0"}}); }, {"'D'", "an integer in [1,"});
  expectInputError([&] { ref::run("cosine", in, {{"beta", "-0.5"}}); }, {"'beta'", "a number in [0,"});
  expectInputError([&] { ref::run("additive", in, {{"d_a", "0"}}); }, {"'d_a'"});
  expectInputError([&] { ref::run("global", in, {{"score", "concat"}}); }, {"'score'", "additive"});
  expectInputError([&] { ref::run("hard", in, {{"mode", "greedy"}}); }, {"'mode'", "argmax"});
  expectInputError([&] { ref::run("sinusoidal-pe", in, {{"base", "1"}}); }, {"'base'"});
}

// [SECTION] .npy
// A .npy file with a hand-written header (format 1.0).
std::string npyBytes(const std::string& header, const std::string& payload) {
  std::string h = header;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + payload;
}

std::string floats(std::initializer_list<float> v) {
  return std::string(reinterpret_cast<const char*>(std::data(v)), v.size() * sizeof(float));
}

TEST(Npy, RoundTrip) {
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{0}, {3}, {2, 3}, {2, 3, 4}}) {
    Array a;
    a.shape = shape;
    for (int64_t i = 0; i < a.size(); ++i) a.data.push_back(0.5f * static_cast<float>(i) - 3.25f);
    const std::string bytes = encodeNpy(a);
    EXPECT_EQ(bytes.size() % 64, static_cast<size_t>(a.size() * 4) % 64) << "data starts on a 64-byte boundary";
    const Array b = parseNpy(bytes, "round trip");
    EXPECT_EQ(b.shape, a.shape) << a.shapeString();
    EXPECT_EQ(b.data, a.data) << a.shapeString();
  }
}

TEST(Npy, ReadsHandWrittenFloat32AndFloat64) {
  const Array f4 = parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }", floats({1.5f, -2})),
                            "f4");
  EXPECT_EQ(f4.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(f4.data, (std::vector<float>{1.5f, -2}));
  const double d[3] = {0.25, -1e3, 7};
  const Array f8 = parseNpy(
      npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", std::string(reinterpret_cast<const char*>(d), 24)),
      "f8");
  EXPECT_EQ(f8.data, (std::vector<float>{0.25f, -1e3f, 7}));
}

TEST(Npy, BadFilesNameTheFileAndTheProblem) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  expectInputError([] { parseNpy("PK\x03\x04 not numpy at all", "a.npy (--x)"); }, {"a.npy (--x)", "not a .npy file"});
  // Header length says more than the file holds.
  std::string cut = npyBytes(ok, floats({1, 2})).substr(0, 30);
  expectInputError([&] { parseNpy(cut, "b.npy (--q)"); }, {"b.npy (--q)", "truncated .npy header"});
  expectInputError([&] { parseNpy(npyBytes(ok, floats({1})), "c.npy (--k)"); },
                   {"c.npy (--k)", "needs 8 bytes, file has 4", "truncated"});
  expectInputError([&] {
    parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", floats({1, 2})), "d.npy (mask)");
  }, {"d.npy (mask)", "Fortran-order"});
  expectInputError([&] {
    parseNpy(npyBytes("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", floats({1, 2})), "e.npy (pe)");
  }, {"e.npy (pe)", "unsupported dtype '<i4'", "float32"});
  expectInputError([&] {
    parseNpy(npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", floats({1, 2})), "f.npy (--v)");
  }, {"f.npy (--v)", "unsupported dtype '>f4'"});
  expectInputError([&] { parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': False, }", ""), "g.npy (--x)"); },
                   {"g.npy (--x)", "no 'shape' field"});
  expectInputError([&] {
    parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", ""), "h.npy (--x)");
  }, {"h.npy (--x)", "shape entry '-1'"});
  std::string v9 = npyBytes(ok, floats({1, 2}));
  v9[6] = 9;
  expectInputError([&] { parseNpy(v9, "i.npy (--x)"); }, {"i.npy (--x)", "format version 9"});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expectInputError([&] { parseNpy(npyBytes(ok, floats({1, nan})), "j.npy (--x)"); }, {"j.npy (--x)", "NaN"});
  expectInputError([] { readNpy("/nonexistent/x.npy", "--x"); }, {"/nonexistent/x.npy (--x)", "no such file"});
}

}  // namespace
}  // namespace attn
