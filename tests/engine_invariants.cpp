// Invariants every variant must keep, whatever the reference: softmax rows
// sum to 1 where a key is allowed, masked entries are exactly 0, causal
// upper triangles are exactly 0, and nothing depends on the thread count.
#include "engine/npy.h"
#include "engine/attention_math.h"
#include "engine/parallel.h"
#include "tests/engine_reference.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace attn {
namespace {

const std::vector<std::string> kSoft = {"scaled-dot-product", "multi-head", "cross-attention", "additive",
                                        "general", "dot", "scaled-dot", "cosine", "location", "global"};

void expectSoftmaxRows(const Result& r, const std::string& what) {
  ASSERT_GT(r.heads(), 0) << what;
  for (int h = 0; h < r.heads(); ++h)
    for (int64_t i = 0; i < r.queries(); ++i) {
      const bool any = r.mask.size() == 0 || r.mask.row(i).maxCoeff() != 0.0f;
      const float sum = r.weights[h].row(i).sum();
      if (any) {
        EXPECT_NEAR(sum, 1.0f, 1e-5f) << what << " head " << h << " row " << i;
      } else {
        EXPECT_EQ(sum, 0.0f) << what << " row " << i;
      }
      EXPECT_GE(r.weights[h].row(i).minCoeff(), 0.0f) << what;
      for (int64_t j = 0; j < r.keys(); ++j)
        if (r.mask.size() && r.mask(i, j) == 0.0f) {
          EXPECT_EQ(r.weights[h](i, j), 0.0f) << what;
        }
    }
}

TEST(Invariants, SoftmaxRowsSumToOne) {
  const Inputs in = ref::gaussianInputs(21, 11, 14, 32, 4);
  for (const std::string& name : kSoft) expectSoftmaxRows(ref::run(name, in), name);
  for (const std::string name : {"global", "hard", "local-p"})
    for (const std::string score : {"additive", "cosine", "location"}) {
      const Result r = ref::run(name, in, {{"score", score}});
      if (name == "global") {
        expectSoftmaxRows(r, name + "/" + score);
        continue;
      }
      // hard samples from its soft weights α_t; local-p keeps global
      // attention on the same scores beside its windowed weights.
      const Extra* soft = r.findExtra(name == "hard" ? "soft" : "global");
      ASSERT_NE(soft, nullptr) << name << "/" << score << ": no soft weights among the extras";
      EXPECT_TRUE(ref::slice(soft->value, 0).rowwise().sum().isOnes(1e-5f)) << name << "/" << score;
    }
}

TEST(Invariants, CausalUpperTriangleIsExactlyZero) {
  const Inputs in = ref::gaussianInputs(22, 10, 13, 32, 4);
  for (const std::string name : {"scaled-dot-product", "multi-head", "cross-attention"}) {
    const Result r = ref::run(name, in, {{"causal", "true"}});
    const int64_t offset = r.keys() - r.queries();
    EXPECT_EQ(offset, name == "cross-attention" ? 3 : 0);
    expectSoftmaxRows(r, name + " causal");
    for (int h = 0; h < r.heads(); ++h)
      for (int64_t i = 0; i < r.queries(); ++i)
        for (int64_t j = i + offset + 1; j < r.keys(); ++j) ASSERT_EQ(r.weights[h](i, j), 0.0f) << name;
    // The last allowed key gets weight (a masked model that leaked would not be caught otherwise).
    EXPECT_GT(r.weights[0](0, offset), 0.0f);
  }
}

// Rows are split among threads but each row's arithmetic is fixed, and
// Eigen's parallel GEMM splits the output, not the inner sums, so every
// number is bitwise the same for 1 and 2 threads.
void expectSameResult(const Result& a, const Result& b, const std::string& what) {
  ASSERT_EQ(a.heads(), b.heads()) << what;
  for (int h = 0; h < a.heads(); ++h) EXPECT_EQ(a.weights[h], b.weights[h]) << what << " weights head " << h;
  // Scores where there are any (ntm's weighting has no pre-softmax matrix).
  ASSERT_EQ(a.scores.size(), b.scores.size()) << what;
  for (size_t h = 0; h < a.scores.size(); ++h) EXPECT_EQ(a.scores[h], b.scores[h]) << what << " scores head " << h;
  EXPECT_EQ(a.output, b.output) << what << " output";
  EXPECT_EQ(a.mask, b.mask) << what << " mask";
  ASSERT_EQ(a.extras.size(), b.extras.size()) << what;
  for (size_t e = 0; e < a.extras.size(); ++e) EXPECT_EQ(a.extras[e].value.data, b.extras[e].value.data) << what;
  EXPECT_EQ(a.inputs, b.inputs) << what;
}

TEST(Invariants, IndependentOfThreadCount) {
  // Big enough that Eigen's GEMM and the OpenMP row loops really split.
  const Inputs in = ref::gaussianInputs(23, 96, 112, 64, 4);
  const ref::TempPath pe("pe.npy");
  writeNpy(pe.path, Array::fromMat(randomNormal(96, 64, 1, "pe")));
  for (const VariantInfo& v : variants()) {
    if (v.name == "ntm-copy") continue;  // L = 96 is past its trained length: engine_ntm_copy.cpp checks it
    std::map<std::string, std::string> set;
    if (v.name == "learned-pe") set["pe"] = pe.path.string();
    if (v.name == "hard") set["score"] = "additive";
    if (v.name == "pointer-sort") set["numbers"] = "0.5,0.2,0.9,0.1,0.7,0.3";  // its model sorts 5 to 12, not 96
    auto runOn = [&](int threads) {
      const ThreadScope scope(threads);
      RunContext ctx;
      ctx.adapt_threads = false;  // exactly `threads`, however busy the machine is
      return ref::run(v.name, in, set, ctx);
    };
    const Result one = runOn(1), two = runOn(2);
    ASSERT_EQ(one.threads, 1) << v.name;
    ASSERT_EQ(two.threads, 2) << v.name;
    expectSameResult(one, two, v.name);
  }
}

// SNAIL's default blocks at L = 6: attention blocks 0, 2, 4 (W_q, W_k, W_v)
// and TC blocks 1, 3 of ⌈log2 6⌉ = 3 dense blocks each (W_f, b_f, W_g, b_g).
std::set<std::string> snailSymbols() {
  std::set<std::string> s = {"x"};
  for (const char* b : {"block0_", "block2_", "block4_"})
    for (const char* w : {"w_q", "w_k", "w_v"}) s.insert(std::string(b) + w);
  for (const char* b : {"block1_", "block3_"})
    for (int i = 0; i < 3; ++i)
      for (const char* w : {"w_f", "b_f", "w_g", "b_g"}) s.insert(std::string(b) + "dense" + std::to_string(i) + "_" + w);
  return s;
}

// reversible's default N = 12 layers, each with its attention (W^q, W^v, W^o,
// R) and feed-forward (W_1, b_1, W_2, b_2).
std::set<std::string> reversibleSymbols() {
  std::set<std::string> s = {"x"};
  for (int l = 0; l < 12; ++l)
    for (const char* w : {"w_q", "w_v", "w_o", "R", "w_1", "b_1", "w_2", "b_2"})
      s.insert("layer" + std::to_string(l) + "_" + w);
  return s;
}

TEST(Invariants, EveryVariantRecordsWhatItNeedsToReplay) {
  // Every tensor a variant reads or generates, by the paper's symbol.
  const std::map<std::string, std::set<std::string>> expected = {
      {"scaled-dot-product", {"q", "k", "v"}},
      {"multi-head", {"x", "w_q", "w_k", "w_v", "w_o"}},
      {"cross-attention", {"x", "x_kv", "w_q", "w_k", "w_v", "w_o"}},
      {"additive", {"x", "x_kv", "w_a", "v_a"}},
      {"general", {"x", "x_kv", "w_a"}},
      {"dot", {"x", "x_kv"}},
      {"scaled-dot", {"x", "x_kv"}},
      {"cosine", {"x", "x_kv"}},
      {"location", {"x", "x_kv", "w_a"}},
      {"global", {"x", "x_kv", "w_a"}},
      {"local-p", {"x", "x_kv", "w_a", "w_p", "v_p"}},
      {"hard", {"x", "x_kv", "w_a", "u"}},
      {"adaptive-span", {"x", "w_q", "w_k", "w_v", "q", "k", "v"}},
      {"alibi", {"x", "w_q", "w_k", "w_v", "q", "k", "v"}},
      {"rope", {"x", "w_q", "w_k", "w_v", "q", "k", "v", "q_rot", "k_rot"}},
      {"transformer-xl", {"x", "w_q", "w_k", "w_v", "w_o", "w_r", "u", "v"}},
      // Sparse patterns record q, k, v projected (the compare contract) next to x and the weights.
      {"sparse-strided", {"x", "q", "k", "v", "w_q", "w_k", "w_v"}},
      {"sparse-fixed", {"x", "q", "k", "v", "w_q", "w_k", "w_v"}},
      {"local-1d", {"x", "q", "k", "v", "w_q", "w_k", "w_v"}},
      {"local-2d", {"x", "q", "k", "v", "w_q", "w_k", "w_v"}},
      // Shared-QK: k = q/‖q‖; w_k only feeds the walkthrough's panels (a), (b). R: [d_head, rounds·b/2].
      {"lsh", {"x", "q", "k", "v", "w_q", "w_k", "w_v", "R"}},
      {"reversible", reversibleSymbols()},
      {"act", {"x", "w_x", "w_s", "w_h", "w_y", "s"}},
      {"universal-transformer", {"x", "w_q", "w_k", "w_v", "w_o", "w_1", "w_2", "w_h"}},
      {"gtrxl-gate", {"x", "y", "w_q", "w_k", "w_v", "w_o", "w_r", "u_r", "w_z", "u_z", "w_g", "u_g"}},
      {"pointer", {"enc", "dec", "w_1", "w_2", "v"}},
      {"snail", snailSymbols()},
  };
  const Inputs in = ref::gaussianInputs(24, 6, 8, 16, 4);
  for (const VariantInfo& v : variants()) {
    if (v.input == InputKind::PositionsOnly) continue;
    const Result r = ref::run(v.name, in);
    ASSERT_TRUE(expected.count(v.name)) << v.name << ": add its symbols to this table";
    std::set<std::string> recorded;
    for (const auto& [name, m] : r.inputs) recorded.insert(name);
    EXPECT_EQ(recorded, expected.at(v.name)) << v.name;
    // Generated tensors come from the seed alone: a second run records the same numbers.
    const Result again = ref::run(v.name, in);
    for (const auto& [name, m] : r.inputs) EXPECT_EQ(again.inputs.at(name), m) << v.name << "." << name;
    // The queries were read, under whatever symbol the variant uses (x, q, …).
    EXPECT_TRUE(std::any_of(r.inputs.begin(), r.inputs.end(), [&](const auto& kv) { return kv.second == in.x; }))
        << v.name;
    EXPECT_EQ(static_cast<int64_t>(r.q_tokens.size()), r.queries()) << v.name;
    EXPECT_EQ(static_cast<int64_t>(r.k_tokens.size()), r.keys()) << v.name;
    EXPECT_GT(r.flops, 0) << v.name;
    EXPECT_FALSE(v.views.empty()) << v.name;
    for (const ParamSpec& p : v.params) EXPECT_FALSE(p.help.empty()) << v.name << "." << p.key;
  }
}

}  // namespace
}  // namespace attn
