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
#include <map>
#include <random>
#include <string>

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

// A finite float64 beyond float32's range has no float value: refused, not cast.
TEST(HostileNpy, Float64BeyondFloat32RangeIsRefused) {
  std::string bytes = encodeNpy({2}, std::vector<float>{1.0f, 2.0f});
  bytes.replace(bytes.find("<f4"), 3, "<f8");
  bytes.resize(bytes.size() - 8);
  const double values[2] = {1.0, 1e300};
  bytes.append(reinterpret_cast<const char*>(values), sizeof values);
  expectInputError([&] { parseNpy(bytes, "wide.npy (--x)"); }, {"wide.npy (--x)", "1e+300", "float32's range"});
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
  // Arrays that come from elsewhere than the .npy reader (a model's q, k, v) get the NaN check here.
  Mat nan = tiny;
  nan(2, 3) = std::numeric_limits<float>::quiet_NaN();
  expectInputError([&] { checkInputMagnitude({nan.data(), 16}, "layer 0 head 1 of the model (q)"); },
                   {"layer 0 head 1 of the model (q)", "NaN or infinite"});
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
    // As an input x the variant projects, and as given q, k, v where the variant takes them.
    Inputs x = makeFromMatrices(c.qkv, {}, {}, {}, 2, 7);
    x.x_kv = c.qkv;  // the source of the cross-attention variants
    x.source_tokens = positionTokens(c.qkv.rows(), "s");
    const Inputs qkv = makeFromMatrices(Mat(), c.qkv, c.qkv, c.qkv, 2, 7);
    for (const VariantInfo& info : variants()) {
      SCOPED_TRACE(info.name + " at " + c.name);
      const Params p = Params::defaults(info.params);
      // learned-pe cannot run without its file; pointer-sort reads only L, and 16 numbers are more than its model sorts.
      if (info.name == "learned-pe" || info.name == "pointer-sort") {
        EXPECT_THROW(runVariant(info, x, p), InputError);
        continue;
      }
      if (info.name == "ntm-copy") continue;  // reads only L from x (16 is past its trained length); its bits are seeded
      EXPECT_EQ(runVariant(info, x, p).firstNonFinite(true), "");
      if (info.given_qkv != GivenQkv::Refused) {
        EXPECT_EQ(runVariant(info, qkv, p).firstNonFinite(true), "");
      }
    }
  }
}

// LSH given non-finite values straight into the head (past the input check):
// pass 1 of the CSR weights counted entries that pass 2 then wrote by
// another test, so a row got more entries than counted (a heap overflow
// under AddressSanitizer at ±3e38, whose logits were NaN) or fewer (slots
// left at key 0). The rows' keys now come from the chunk windows alone,
// before any logit: every row is exactly filled, its keys strictly ascending.
TEST(ExtremeValues, LshCsrRowsAreExactlyFilledWhenLogitsAreNotFinite) {
  // The NaN (or ∞) row at every position, with chunks of 1–4: some query
  // then has a window of masked keys and one non-finite logit.
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()})
    for (int64_t row = 0; row < 16; ++row)
      for (const int64_t chunk : {1, 2, 4}) {
        SCOPED_TRACE("row " + std::to_string(row) + " chunk " + std::to_string(chunk));
        Mat q = extremeMatrix(16, 8, 1.0f, 5);
        q.row(row).setConstant(bad);
        LshOptions o;
        o.n_buckets = 2;
        o.chunk = chunk;
        o.rounds = 2;
        const LshHead h = lshAttentionHead(q, q, Mat::Identity(8, 2), o, {});
        ASSERT_EQ(h.weights.indptr.size(), 17u);
        EXPECT_EQ(h.weights.indptr.back(), h.weights.nnz());
        for (int64_t i = 0; i < 16; ++i)
          for (int64_t e = h.weights.rowBegin(i) + 1; e < h.weights.rowEnd(i); ++e)
            EXPECT_LT(h.weights.indices[static_cast<size_t>(e) - 1], h.weights.indices[static_cast<size_t>(e)])
                << "row " << i << " has an unfilled or repeated slot";
      }
}

// Found by fuzz_engine: v with another width than q and k reached the
// sparse variants' V = X_v W^v with W^v [d, d] (an Eigen assert, and a read
// past the end of v in a Release build). Given q, k, v are used as they are,
// so the variants that split v into heads like q (multi-head, cross-attention,
// ALiBi, RoPE, adaptive span, the pattern variants) refuse a v unlike q,
// naming themselves and the shapes; the variants that take no
// given q, k, v refuse them as such; every other variant runs to a finite
// result. An unexpected refusal, or a run where a refusal is expected, fails.
TEST(HostileShapes, ValueWidthUnlikeTheQueriesIsRefusedOrHandled) {
  const Mat q = extremeMatrix(8, 8, 1.0f, 6), v = extremeMatrix(8, 5, 1.0f, 7);
  const Inputs in = makeFromMatrices(Mat(), q, q, v, 2, 3);
  const std::map<std::string, std::string> refused_shape = {
      {"multi-head", "inputs must share d_model (q has 8, k has 8, v has 5)"},
      {"cross-attention", "inputs must share d_model (q has 8, k has 8, v has 5)"},
      {"alibi", "v must be [8, 8] like q, got [8, 5]"},
      {"rope", "v must be [8, 8] like q, got [8, 5]"},
      {"adaptive-span", "v must be [8, 8] like q, got [8, 5]"},
      {"linear-attention", "v must be [8, 8] like q, got [8, 5]"},
      {"sparse-strided", "projected v must be [8, 8]"},
      {"sparse-fixed", "projected v must be [8, 8]"},
      {"local-1d", "projected v must be [8, 8]"},
      {"local-2d", "projected v must be [8, 8]"},
  };
  for (const VariantInfo& info : variants()) {
    SCOPED_TRACE(info.name);
    const auto run = [&] { return runVariant(info, in, Params::defaults(info.params)); };
    if (const auto it = refused_shape.find(info.name); it != refused_shape.end()) {
      expectInputError(run, {info.name, it->second});
    } else if (info.given_qkv == GivenQkv::Refused) {
      expectInputError(run, {info.name});
    } else {
      try {
        EXPECT_EQ(run().firstNonFinite(true), "");
      } catch (const InputError& e) {
        ADD_FAILURE() << "refused a v unlike q: " << e.what();
      }
    }
  }
}

// Found by fuzz_engine (tests/fuzz/corpus/engine/regression_reversible_hash_work
// decodes to this run): 64 reversible layers of 4 heads, 7 rounds over 4,096
// buckets, chunks of 1, on a zero x [64, 16] replayed in 95-154 s under the
// sanitizers, past the fuzz run's 60 s hang limit. The stack's LSH work is
// bounded now: the run is refused naming the product, and one just inside
// the bound finishes with finite results.
TEST(HostileParameters, ReversibleStackWorkIsBoundedNamingTheProduct) {
  // The fuzz input (tests/fuzz/corpus/engine/regression_reversible_hash_work) under the fuzz target's limit.
  const Inputs in = makeFromMatrices(Mat::Zero(64, 16), {}, {}, {}, 4, 34);
  std::map<std::string, std::string> set = {{"layers", "64"}, {"ff_chunks", "4096"}, {"ff_mult", "8"}, {"n_buckets", "4096"},
                                            {"chunk", "1"},   {"rounds", "7"},       {"causal", "false"}};
  RunContext fuzz;
  fuzz.work_limit = double(int64_t{1} << 23);
  expectInputError([&] { ref::run("reversible", in, set, fuzz); },
                   {"reversible", "layers × heads × rounds × L × (n_buckets + 10m)", "64 × 4 × 7 × 64 × (4096 + 10·1)",
                    "470908928", "8388608"});
  set["n_buckets"] = "62";  // 64 × 4 × 7 × 64 × 72 = 8,257,536 ≤ 2^23
  EXPECT_EQ(ref::run("reversible", in, set, fuzz).firstNonFinite(true), "");
  // The default limit, 2^31, before any work: 64 × 4 × 16 × 256 × (4096 + 10) > 2^31.
  set["n_buckets"] = "4096";
  set["rounds"] = "16";
  expectInputError([&] { ref::run("reversible", makeFromMatrices(Mat::Zero(256, 16), {}, {}, {}, 4, 34), set); },
                   {"reversible", "64 × 4 × 16 × 256 × (4096 + 10·1)", "4305453056", "2147483648"});
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
