// Hostile input: empty and degenerate arrays, finite but extreme values, and
// the crashes the fuzz targets (tests/fuzz) found, each kept as a regression
// test. Run under AddressSanitizer and UBSan by scripts/test.sh --sanitize.
#include "engine/error.h"
#include "engine/inputs.h"
#include "engine/lsh.h"
#include "engine/model/model.h"
#include "engine/npy.h"
#include "engine/registry.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace attn {
namespace {

using ref::expectInputError;

// [SECTION] empty and degenerate .npy arrays

// Zero elements used to reach memcpy with an empty vector's null data
// pointer (undefined behaviour that UBSan reported in parseNpy).
TEST(HostileNpy, ZeroLengthAxesParseToEmptyArrays) {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{0}, {0, 4}, {3, 0}, {2, 0, 5}}) {
    const Array a = parseNpy(encodeNpy(shape, std::vector<float>{}), "empty.npy");
    EXPECT_EQ(a.shape, shape);
    EXPECT_TRUE(a.data.empty());
  }
}

TEST(HostileNpy, ZeroDimensionalArrayHoldsOneValue) {
  const Array a = parseNpy(encodeNpy(std::vector<int64_t>{}, std::vector<float>{2.5f}), "scalar.npy");
  EXPECT_TRUE(a.shape.empty());
  ASSERT_EQ(a.data.size(), 1u);
  EXPECT_EQ(a.data[0], 2.5f);
  expectInputError([&] { (void)a.toMat("scalar.npy (--x)"); }, {"scalar.npy (--x)"});
}

TEST(HostileNpy, NanAndInfinityAreRefused) {
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()})
    expectInputError([&] { parseNpy(encodeNpy({2}, std::vector<float>{1.0f, bad}), "bad.npy (--q)"); },
                     {"bad.npy (--q)", "NaN or infinite"});
}

// A header whose shape multiplies past 2^64 must be refused before anything
// is allocated from it.
TEST(HostileNpy, LyingShapeIsRefusedBeforeAllocating) {
  std::string bytes = encodeNpy({2, 2}, std::vector<float>(4, 1.0f));
  bytes.replace(bytes.find("(2, 2)"), 6, "(4294967296, 4294967296)");
  expectInputError([&] { parseNpy(bytes, "lying.npy"); }, {"lying.npy", "too large"});
}

// [SECTION] finite but extreme values

// Each entry drawn from ±magnitude·U(0.5, 1), seeded.
Mat extremeMatrix(int64_t rows, int64_t cols, float magnitude, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.5f, 1.0f);
  Mat m(rows, cols);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = (rng() & 1 ? 1.0f : -1.0f) * magnitude * u(rng);
  return m;
}

// The input check: above kMaxInputMagnitude is one line naming the file and
// the limit; at the limit and below (denormals too) it passes.
TEST(ExtremeValues, InputCheckNamesTheFileAndTheLimit) {
  const Mat big = extremeMatrix(4, 4, 3e38f, 1);
  expectInputError([&] { checkInputMagnitude({big.data(), 16}, "q.npy (--q)"); }, {"q.npy (--q)", "1e+15"});
  const Mat edge = extremeMatrix(4, 4, kMaxInputMagnitude, 2).cwiseMin(kMaxInputMagnitude).cwiseMax(-kMaxInputMagnitude);
  EXPECT_NO_THROW(checkInputMagnitude({edge.data(), 16}, "q.npy (--q)"));
  const Mat tiny = Mat::Constant(4, 4, 1e-40f);
  EXPECT_NO_THROW(checkInputMagnitude({tiny.data(), 16}, "q.npy (--q)"));
}

// The policy's promise: any input the check admits gives finite arrays in
// every variant, at the largest magnitude admitted and at denormals.
TEST(ExtremeValues, EveryVariantIsFiniteAtTheLimitAndAtDenormals) {
  struct Case {
    const char* name;
    Mat qkv;
  };
  const Case cases[] = {{"±1e15", extremeMatrix(16, 8, kMaxInputMagnitude, 3)},
                        {"1e15", Mat::Constant(16, 8, kMaxInputMagnitude)},
                        {"denormals", extremeMatrix(16, 8, 1e-40f, 4)}};
  for (const Case& c : cases) {
    const Inputs in = makeFromMatrices(Mat(), c.qkv, c.qkv, c.qkv, 2, 7);
    for (const VariantInfo& info : variants()) {
      SCOPED_TRACE(info.name + " at " + c.name);
      const Params p = Params::defaults(info.params);
      try {
        const Result r = runVariant(info, in, p);
        EXPECT_EQ(r.firstNonFinite(true), "");
      } catch (const InputError& e) {
        // A variant that needs another kind of input (a source sequence, a
        // file) may refuse, but never because of the values.
        EXPECT_EQ(std::string(e.what()).find("1e+15"), std::string::npos) << e.what();
      }
    }
  }
}

// LSH at ±3e38 (beyond the input check, so straight into the head): the
// logits overflow to NaN, and pass 1 of the CSR weights counted entries that
// pass 2 did not write the same way, writing past the end of a row (heap
// overflow under AddressSanitizer). Both passes now keep the same entries.
TEST(ExtremeValues, LshCsrRowsMatchTheirCountsWhenLogitsOverflow) {
  const Mat q = extremeMatrix(16, 8, 3e38f, 5);
  LshOptions o;
  o.n_buckets = 2;
  o.chunk = 4;
  o.rounds = 2;
  const LshHead h = lshAttentionHead(q, q, Mat::Identity(8, 2), o, {});
  ASSERT_EQ(h.weights.indptr.size(), 17u);
  EXPECT_EQ(h.weights.indptr.back(), h.weights.nnz());
  EXPECT_EQ(h.weights.values.size(), h.weights.indices.size());
  for (int64_t i = 0; i < 16; ++i) EXPECT_LE(h.weights.rowBegin(i), h.weights.rowEnd(i));
}

// Found by fuzz_engine: v with another width than q and k reached the
// sparse variants' V = X_v W^v with W^v [d, d] (an Eigen assert, and a read
// past the end of v in a Release build). Every variant now refuses or copes.
TEST(HostileShapes, ValueWidthUnlikeTheQueriesIsRefusedOrHandled) {
  const Mat q = extremeMatrix(8, 8, 1.0f, 6), v = extremeMatrix(8, 5, 1.0f, 7);
  const Inputs in = makeFromMatrices(Mat(), q, q, v, 2, 3);
  for (const VariantInfo& info : variants()) {
    SCOPED_TRACE(info.name);
    try {
      const Result r = runVariant(info, in, Params::defaults(info.params));
      EXPECT_EQ(r.firstNonFinite(true), "");
    } catch (const InputError&) {
    }
  }
  expectInputError([&] { runVariant(variantOrThrow("sparse-strided"), in, Params::defaults(variantOrThrow("sparse-strided").params)); },
                   {"sparse-strided", "inputs must share d_model", "v has 5"});
}

// [SECTION] config.json sizes

TEST(HostileConfig, SizesBeyondAnyModelAreRefusedNamingTheField) {
  const std::string base = R"({"architectures": ["GPT2LMHeadModel"], "n_layer": 2, "n_head": 2, "n_embd": 8,
                              "n_positions": 16, "vocab_size": 300)";
  EXPECT_NO_THROW(parseConfig(base + "}", "config.json"));
  expectInputError([&] { parseConfig(base + R"(, "n_inner": 9223372036854775807})", "m/config.json"); },
                   {"m/config.json", "'n_inner'", "from 1 to"});
  expectInputError([&] { parseConfig(base + R"(, "layer_norm_epsilon": -1})", "m/config.json"); },
                   {"m/config.json", "'layer_norm_epsilon'"});
}

}  // namespace
}  // namespace attn
