// SNAIL (Mishra et al. 2018): the block list's parser, the dense block
// against a plain-loop causal convolution, the receptive fields against a
// loop over positions, the whole stack against a double-precision loop
// reference built from the recorded weights, causality, and the files' names.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/variants/snail.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <vector>

namespace attn {
namespace {

using ref::DMat;

// [SECTION] References

// tanh(xf) ⊙ σ(xg) with xf_t = Σ_c x_{t−R,c} W⁽⁰⁾_{c,·} + x_{t,c} W⁽¹⁾_{c,·} + b (x_{t−R} = 0 before the start).
DMat denseRef(const DMat& x, int64_t dilation, const Mat& w_f, const Mat& b_f, const Mat& w_g, const Mat& b_g) {
  const int64_t T = x.rows, C = x.cols, D = w_f.cols();
  DMat out(T, D);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t d = 0; d < D; ++d) {
      double f = b_f(d, 0), g = b_g(d, 0);
      for (int64_t c = 0; c < C; ++c) {
        if (t - dilation >= 0) {
          f += x(t - dilation, c) * w_f(c, d);
          g += x(t - dilation, c) * w_g(c, d);
        }
        f += x(t, c) * w_f(C + c, d);
        g += x(t, c) * w_g(C + c, d);
      }
      out(t, d) = std::tanh(f) / (1.0 + std::exp(-g));
    }
  return out;
}

// [x, y] column-wise.
DMat concat(const DMat& x, const DMat& y) {
  DMat out(x.rows, x.cols + y.cols);
  for (int64_t t = 0; t < x.rows; ++t) {
    for (int64_t c = 0; c < x.cols; ++c) out(t, c) = x(t, c);
    for (int64_t c = 0; c < y.cols; ++c) out(t, x.cols + c) = y(t, c);
  }
  return out;
}

// Which positions reach each position, block by block: after a dense block of
// dilation R, position t holds what t and t − R held.
std::vector<std::set<int64_t>> fieldRef(const std::vector<int64_t>& dilations, int64_t T) {
  std::vector<std::set<int64_t>> reach(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) reach[static_cast<size_t>(t)] = {t};
  for (const int64_t r : dilations) {
    std::vector<std::set<int64_t>> next = reach;
    for (int64_t t = r; t < T; ++t) next[static_cast<size_t>(t)].insert(reach[static_cast<size_t>(t - r)].begin(), reach[static_cast<size_t>(t - r)].end());
    reach = next;
  }
  return reach;
}

void expectField(const Mat& got, const std::vector<int64_t>& dilations, int64_t T, const std::string& what) {
  const std::vector<std::set<int64_t>> want = fieldRef(dilations, T);
  ASSERT_EQ(got.rows(), T);
  ASSERT_EQ(got.cols(), T);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < T; ++j)
      EXPECT_EQ(got(t, j), want[static_cast<size_t>(t)].count(j) ? 1.0f : 0.0f) << what << " at (" << t << ", " << j << ")";
}

// [SECTION] Parser

TEST(Snail, BlockListParsesTheThreeKinds) {
  const std::vector<SnailBlock> b = parseSnailBlocks(" attn(64, 32),tc(128) , dense(4,16)");
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].kind, SnailBlock::Kind::Attention);
  EXPECT_EQ(b[0].key_size, 64);
  EXPECT_EQ(b[0].value_size, 32);
  EXPECT_EQ(b[1].kind, SnailBlock::Kind::Tc);
  EXPECT_EQ(b[1].filters, 128);
  EXPECT_EQ(b[2].kind, SnailBlock::Kind::Dense);
  EXPECT_EQ(b[2].dilation, 4);
  EXPECT_EQ(b[2].filters, 16);
}

TEST(Snail, MalformedBlockListsNameTheFieldAndWhatWasExpected) {
  using ref::expectInputError;
  expectInputError([] { parseSnailBlocks(""); }, {"'blocks'", "empty", "attn(K, V), tc(D) or dense(R, D)"});
  expectInputError([] { parseSnailBlocks("attn(8,8),conv(3)"); }, {"'blocks'", "block 1 'conv(3)'", "unknown block 'conv'"});
  expectInputError([] { parseSnailBlocks("attn(8)"); }, {"'blocks'", "block 0 'attn(8)'", "1 arguments, expected attn(K, V)"});
  expectInputError([] { parseSnailBlocks("attn(8,0)"); }, {"'blocks'", "V = 0, expected 1 … 1024"});
  expectInputError([] { parseSnailBlocks("attn(8,x)"); }, {"'blocks'", "argument 'x' is not a positive integer"});
  expectInputError([] { parseSnailBlocks("attn(8,-2)"); }, {"'blocks'", "argument '-2'"});
  expectInputError([] { parseSnailBlocks("attn(8,8"); }, {"'blocks'", "unclosed '('"});
  expectInputError([] { parseSnailBlocks("attn(8,8))"); }, {"'blocks'", "unmatched ')' at character 10"});
  expectInputError([] { parseSnailBlocks("attn(8,8),,tc(4)"); }, {"'blocks'", "block 1 ''", "empty"});
  expectInputError([] { parseSnailBlocks("tc(8),dense(2,4)"); }, {"'blocks'", "no attn(K, V) block"});
  // Through the registry, as --set blocks=… reaches it.
  const Inputs in = ref::gaussianInputs(1, 5, 5, 8, 1);
  expectInputError([&] { ref::run("snail", in, {{"blocks", "attn(4,4),tc(2048)"}}); }, {"'blocks'", "D = 2048"});
}

// [SECTION] TC blocks and receptive fields

TEST(Snail, TcBlockHasCeilLog2TDenseBlocksOfDoublingDilation) {
  EXPECT_EQ(tcDilations(1, 0), std::vector<int64_t>{});
  EXPECT_EQ(tcDilations(2, 0), (std::vector<int64_t>{1}));
  EXPECT_EQ(tcDilations(8, 0), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(tcDilations(9, 0), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(tcDilations(8, 1), (std::vector<int64_t>{2, 4, 8}));  // the paper's pseudo-code
}

TEST(Snail, ReceptiveFieldIsExactlyTheDilatedReach) {
  // Dilations 1, 2, 4 reach exactly 7 back: every offset 0 … 7.
  const Mat f = snailReceptiveField({1, 2, 4}, 20);
  for (int64_t t = 0; t < 20; ++t)
    for (int64_t j = 0; j < 20; ++j) EXPECT_EQ(f(t, j), t - j >= 0 && t - j <= 7 ? 1.0f : 0.0f) << t << ", " << j;
  // Against the loop over positions: repeated, out-of-order and paper-style dilations, and none.
  for (const std::vector<int64_t>& d : std::vector<std::vector<int64_t>>{{}, {1}, {2, 4, 8}, {1, 2, 4, 8, 1, 2}, {3, 5}, {16}})
    expectField(snailReceptiveField(d, 13), d, 13, "dilations of size " + std::to_string(d.size()));
}

TEST(Snail, DenseBlockMatchesThePlainLoopConvolution) {
  const int64_t T = 11, C = 6, D = 5;
  const Mat x = randomNormal(T, C, 3, "x");
  SnailDenseWeights w;
  w.w_f = randomNormal(2 * C, D, 3, "w_f", 0.4f);
  w.w_g = randomNormal(2 * C, D, 3, "w_g", 0.4f);
  w.b_f = randomNormal(D, 1, 3, "b_f").col(0);
  w.b_g = randomNormal(D, 1, 3, "b_g").col(0);
  for (const int64_t r : {1, 2, 4, 10, 11, 30}) {
    const DMat want = denseRef(ref::fromMat(x), r, w.w_f, w.b_f, w.w_g, w.b_g);
    ref::expectClose(snailDenseActivations(x, r, w), want, 1e-5, "dilation " + std::to_string(r));
  }
}

// [SECTION] The variant

const char* const kSpec = "attn(5,4),tc(6),dense(3,2),attn(7,3)";

TEST(Snail, StackMatchesTheLoopReferenceFromTheRecordedWeights) {
  const int64_t T = 9;
  const Inputs in = ref::gaussianInputs(5, T, T, 8, 1);
  const Result r = ref::run("snail", in, {{"blocks", kSpec}});
  ASSERT_EQ(r.heads(), 2);
  // x, attention (K 5, V 4), TC: 4 dense blocks of 6 (T = 9), dense(3, 2), attention (K 7, V 3).
  DMat h = ref::fromMat(ref::recorded(r, "x"));
  auto attention = [&](const std::string& b, int64_t K, int head) {
    const DMat q = ref::matmul(h, ref::fromMat(ref::recorded(r, b + "w_q")));
    const DMat k = ref::matmul(h, ref::fromMat(ref::recorded(r, b + "w_k")));
    const DMat v = ref::matmul(h, ref::fromMat(ref::recorded(r, b + "w_v")));
    DMat s = ref::matmulT(q, k);
    for (double& e : s.a) e /= std::sqrt(static_cast<double>(K));
    DMat mask(T, T);
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j <= i; ++j) mask(i, j) = 1;
    const DMat a = ref::softmaxRows(s, mask);
    ref::expectClose(r.weights[static_cast<size_t>(head)], a, 1e-5, b + " weights");
    h = concat(h, ref::matmul(a, v));
  };
  auto dense = [&](const std::string& b, int64_t dilation) {
    h = concat(h, denseRef(h, dilation, ref::recorded(r, b + "w_f"), ref::recorded(r, b + "b_f"),
                           ref::recorded(r, b + "w_g"), ref::recorded(r, b + "b_g")));
  };
  attention("block0_", 5, 0);
  for (int i = 0; i < 4; ++i) dense("block1_dense" + std::to_string(i) + "_", int64_t{1} << i);
  dense("block2_", 3);
  attention("block3_", 7, 1);
  ASSERT_EQ(h.cols, 8 + 4 + 4 * 6 + 2 + 3);
  ref::expectClose(r.output, h, ref::scaledTol(h, 1e-5), "output");

  // Receptive fields: none before block 0 (each position itself), dilations 1, 2, 4, 8 and 3 before block 3.
  const Extra* field = r.findExtra("receptive_field");
  ASSERT_NE(field, nullptr);
  EXPECT_EQ(field->value.shape, (std::vector<int64_t>{2, T, T}));
  expectField(ref::slice(field->value, 0), {}, T, "before block 0");
  expectField(ref::slice(field->value, 1), {1, 2, 4, 8, 3}, T, "before block 3");
  EXPECT_EQ(r.findExtra("reach_0")->value.data[0], 0.0f);
  EXPECT_EQ(r.findExtra("reach_1")->value.data[0], 8.0f);  // T − 1: every earlier position
  const Extra* att = r.findExtra("attention");
  ASSERT_NE(att, nullptr);
  EXPECT_EQ(att->value.shape, (std::vector<int64_t>{2, T, T}));
  EXPECT_TRUE(ref::slice(att->value, 1) == r.weights[1]);
}

TEST(Snail, AttentionRowsSumToOneAndAreCausal) {
  const Inputs in = ref::gaussianInputs(6, 17, 17, 12, 1);
  const Result r = ref::run("snail", in);
  ASSERT_EQ(r.heads(), 3);
  for (int h = 0; h < r.heads(); ++h)
    for (int64_t i = 0; i < r.queries(); ++i) {
      EXPECT_NEAR(r.weights[h].row(i).sum(), 1.0f, 1e-5f) << "block " << h << " row " << i;
      EXPECT_GT(r.weights[h](i, i), 0.0f);
      for (int64_t j = i + 1; j < r.keys(); ++j) ASSERT_EQ(r.weights[h](i, j), 0.0f) << h << ": " << i << ", " << j;
    }
}

TEST(Snail, ChangingPositionTChangesNothingBeforeT) {
  const int64_t T = 12;
  const Inputs in = ref::gaussianInputs(7, T, T, 8, 1);
  const Result base = ref::run("snail", in);
  for (const int64_t t : {0, 5, 11}) {
    Inputs changed = in;
    changed.x.row(t) = randomNormal(1, 8, 99, "other");
    const Result r = ref::run("snail", changed);
    for (int64_t i = 0; i < T; ++i) {
      const bool same = r.output.row(i) == base.output.row(i);
      EXPECT_EQ(same, i < t) << "output row " << i << " after changing position " << t;
      for (int h = 0; h < r.heads(); ++h)
        if (i < t) {
          EXPECT_TRUE(r.weights[h].row(i) == base.weights[h].row(i)) << "block " << h << " row " << i;
        }
    }
  }
}

TEST(Snail, ConvolutionFeaturesDependOnExactlyTheReceptiveField) {
  // The dense blocks' features (columns after x) before the attention block:
  // perturbing x_j moves position t's features exactly where the field says.
  const int64_t T = 16, d = 4;
  const Inputs in = ref::gaussianInputs(8, T, T, d, 1);
  for (const int64_t i0 : {0, 1}) {
    const std::map<std::string, std::string> set = {{"blocks", "tc(3),attn(2,2)"}, {"dilation_exp0", std::to_string(i0)}};
    const Result base = ref::run("snail", in, set);
    const Mat field = ref::slice(base.findExtra("receptive_field")->value, 0);
    const int64_t conv = base.output.cols() - d - 2;  // 4 dense blocks of 3
    ASSERT_EQ(conv, 12);
    for (int64_t j = 0; j < T; ++j) {
      Inputs changed = in;
      changed.x.row(j).array() += 0.5f;
      const Result r = ref::run("snail", changed, set);
      for (int64_t t = 0; t < T; ++t) {
        const bool moved = r.output.row(t).segment(d, conv) != base.output.row(t).segment(d, conv);
        EXPECT_EQ(moved, field(t, j) == 1.0f) << "i0 " << i0 << ": x_" << j << " at position " << t;
      }
    }
    // i0 = 1 (dilations 2, 4, 8, 16): odd offsets are never reached.
    if (i0 == 1) {
      EXPECT_EQ(field(15, 14), 0.0f);
    }
  }
}

TEST(Snail, RecordsEveryBlocksWeightsUnderItsBlockNumber) {
  const Inputs in = ref::gaussianInputs(9, 6, 6, 8, 1);
  const Result r = ref::run("snail", in, {{"blocks", kSpec}});
  std::set<std::string> want = {"x"};
  for (const char* w : {"w_q", "w_k", "w_v"}) want.insert({std::string("block0_") + w, std::string("block3_") + w});
  for (const char* w : {"w_f", "b_f", "w_g", "b_g"}) {
    for (int i = 0; i < 3; ++i) want.insert("block1_dense" + std::to_string(i) + "_" + w);  // ⌈log2 6⌉ = 3
    want.insert(std::string("block2_") + w);
  }
  std::set<std::string> got;
  for (const auto& [name, m] : r.inputs) got.insert(name);
  EXPECT_EQ(got, want);
  EXPECT_EQ(ref::recorded(r, "block0_w_q").rows(), 8);
  EXPECT_EQ(ref::recorded(r, "block0_w_q").cols(), 5);
  EXPECT_EQ(ref::recorded(r, "block0_w_v").cols(), 4);
  // block 1 dense 2 reads x (8), attention (4) and two dense blocks (6 each): C = 24, taps 2C.
  EXPECT_EQ(ref::recorded(r, "block1_dense2_w_f").rows(), 48);
  EXPECT_EQ(ref::recorded(r, "block1_dense2_w_f").cols(), 6);
  EXPECT_EQ(ref::recorded(r, "block2_b_g").rows(), 2);
  EXPECT_EQ(ref::recorded(r, "block3_w_k").rows(), 8 + 4 + 18 + 2);
}

TEST(Snail, FeaturesBeyondMemoryAreRefusedBeforeAllocating) {
  const Inputs in = ref::gaussianInputs(10, 64, 64, 8, 1);
  const ref::ScopedEnv limit("ATTNLAB_MEMORY_LIMIT_MB", "1");
  // 16 TC blocks of 1024 filters, 6 dense blocks each: ~98k channels × 64 positions.
  std::string spec = "attn(1,1)";
  for (int i = 0; i < 16; ++i) spec += ",tc(1024)";
  ref::expectInputError([&] { ref::run("snail", in, {{"blocks", spec}}); }, {"snail: the features [64, ", "more than the"});
}

}  // namespace
}  // namespace attn
