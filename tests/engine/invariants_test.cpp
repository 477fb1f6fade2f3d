// Invariants every variant must keep, whatever the reference: softmax rows
// sum to 1 where a key is allowed, masked entries are exactly 0, causal
// upper triangles are exactly 0, and nothing depends on the thread count.
#include "engine/npy.h"
#include "engine/attention_math.h"
#include "engine/parallel.h"
#include "tests/engine_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
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
// number is bitwise the same for 1 and 2 threads. Pictures (ExtraKind::Picture)
// are compared unless `pictures` is false.
void expectSameResult(const Result& a, const Result& b, const std::string& what, bool pictures = true) {
  auto same = [&](const Mat& x, const Mat& y, const std::string& part) {
    EXPECT_EQ(ref::maxAbsDiff(x, y), 0.0) << what << " " << part;
  };
  ASSERT_EQ(a.heads(), b.heads()) << what;
  for (int h = 0; h < a.heads(); ++h) same(a.weights[h], b.weights[h], "weights head " + std::to_string(h));
  // Scores where there are any (ntm's weighting has no pre-softmax matrix).
  ASSERT_EQ(a.scores.size(), b.scores.size()) << what;
  for (size_t h = 0; h < a.scores.size(); ++h) same(a.scores[h], b.scores[h], "scores head " + std::to_string(h));
  same(a.output, b.output, "output");
  same(a.mask, b.mask, "mask");
  ASSERT_EQ(a.extras.size(), b.extras.size()) << what;
  for (size_t e = 0; e < a.extras.size(); ++e) {
    EXPECT_EQ(a.extras[e].name, b.extras[e].name) << what;
    if (pictures || a.extras[e].kind != ExtraKind::Picture) {
      EXPECT_EQ(a.extras[e].value.shape, b.extras[e].value.shape) << what << " extra " << a.extras[e].name;
      EXPECT_EQ(a.extras[e].value.data, b.extras[e].value.data) << what << " extra " << a.extras[e].name;
    }
  }
  ASSERT_EQ(a.inputs.size(), b.inputs.size()) << what;
  for (const auto& [name, m] : a.inputs) {
    ASSERT_TRUE(b.inputs.count(name)) << what << ": no input " << name;
    same(m, b.inputs.at(name), "input " + name);
  }
}

TEST(Invariants, IndependentOfThreadCount) {
  // Big enough that Eigen's GEMM and the OpenMP row loops really split.
  const Inputs in = ref::gaussianInputs(23, 96, 112, 64, 4);
  const ref::TempPath pe("pe.npy");
  writeNpy(pe.path, Array::fromMat(randomNormal(96, 64, 1, "pe")));
  for (const VariantInfo& v : variants()) {
    if (v.name == "ntm-copy") continue;  // L = 96 is past its trained length: engine/ntm_copy_test.cpp checks it
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

// [SECTION] Replay

// The run `r` of `v` with `set` on `in`, again from what `compute` writes of
// it: inputs/<name>.npy, the parameters and the seed. A recorded tensor that a
// parameter of its name reads goes back through that parameter (a file as
// compute writes it, or a list: pointer-sort's numbers); x, x_kv or q, k, v go
// back as the sequence input, as --x (with the source) or --q/--k/--v would
// give them. What a variant's input kind says it does not read of the
// sequence input is another one: zeros of the same shape where only L and d
// count (positions), else an input of other lengths, width and values.
Result replayed(const VariantInfo& v, const Inputs& in, std::map<std::string, std::string> set, const Result& r,
                const test::TempDir& dir) {
  std::set<std::string> by_parameter;
  for (const auto& input : r.inputs) {
    const std::string& name = input.first;  // a named reference: clang 14 captures no structured binding
    const Mat& m = input.second;
    const auto spec = std::find_if(v.params.begin(), v.params.end(), [&](const ParamSpec& p) { return p.key == name; });
    if (spec == v.params.end()) continue;
    by_parameter.insert(name);
    if (spec->type == ParamType::FloatList) {
      std::string list;
      for (int64_t i = 0; i < m.size(); ++i) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(m.data()[i]));
        list += (i ? "," : "") + std::string(buf);
      }
      set[name] = list;
      continue;
    }
    EXPECT_EQ(spec->type, ParamType::File) << v.name << "." << name;
    const bool vector = std::find(r.vector_inputs.begin(), r.vector_inputs.end(), name) != r.vector_inputs.end();
    const auto shaped = r.input_shapes.find(name);
    const std::vector<int64_t> shape = shaped != r.input_shapes.end() ? shaped->second
                                       : vector                       ? std::vector<int64_t>{m.size()}
                                                                      : std::vector<int64_t>{m.rows(), m.cols()};
    const std::string path = (dir / (v.name + "_" + name + ".npy")).string();
    writeNpy(path, Array{shape, std::vector<float>(m.data(), m.data() + m.size())});
    set[name] = path;
  }
  // A recorded tensor that goes back as the sequence input.
  auto asInput = [&](const char* name) { return r.inputs.count(name) && !by_parameter.count(name); };
  // By default another sequence input, with the seed and heads of `in`.
  Inputs again = ref::gaussianInputs(in.seed, in.x.rows() + 3, in.x_kv.rows() + 2, in.dim() + 8, in.heads);
  switch (v.input) {
    case InputKind::PositionsOnly:
      again = in;
      again.x.setZero();
      again.x_kv.setZero();
      break;
    case InputKind::SelfAttention:
    case InputKind::CrossAttention:
      if (asInput("x")) {
        again = makeFromMatrices(r.inputs.at("x"), {}, {}, {}, in.heads, in.seed);
        if (v.input == InputKind::CrossAttention) {
          EXPECT_TRUE(asInput("x_kv")) << v.name << ": records x but not the source x_kv";
          if (asInput("x_kv")) again.x_kv = r.inputs.at("x_kv");
          again.source_tokens = positionTokens(again.x_kv.rows(), "s");
        }
      } else if (asInput("q")) {
        again = makeFromMatrices(Mat(), r.inputs.at("q"), r.inputs.at("k"), r.inputs.at("v"), in.heads, in.seed);
      } else {
        EXPECT_FALSE(by_parameter.empty()) << v.name << ": reads a sequence, records neither x nor q and replays nothing";
      }
      break;
    case InputKind::Image:
    case InputKind::Memory:
    case InputKind::OwnSequence: break;
  }
  return ref::run(v.name, again, set);
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
      {"linear-attention", {"x", "w_q", "w_k", "w_v", "q", "k", "v"}},
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
      {"sinusoidal-pe", {}},
      {"learned-pe", {"pe"}},
      // sagan's x [C, H, W] is the picture's features (or the given x), as are the weights of its 1×1 convolutions.
      {"sagan", {"x", "w_f", "w_g", "w_h"}},
      {"ntm", {"memory", "key", "w_prev"}},
      // ntm-copy's sequence [L, B] and the input x [2L + 1, B + 1] the model reads (the sequence, the delimiter, zeros).
      {"ntm-copy", {"sequence", "x"}},
      {"pointer-sort", {"numbers", "enc", "dec", "w_1", "w_2", "v"}},
  };
  const Inputs in = ref::gaussianInputs(24, 6, 8, 16, 4);
  const test::TempDir dir;
  const std::string pe = (dir / "pe.npy").string();
  writeNpy(pe, Array::fromMat(randomNormal(6, 16, 1, "pe")));
  for (const VariantInfo& v : variants()) {
    SCOPED_TRACE(v.name);
    std::map<std::string, std::string> set;
    if (v.name == "learned-pe") set["pe"] = pe;
    const Result r = ref::run(v.name, in, set);
    ASSERT_TRUE(expected.count(v.name)) << v.name << ": add its symbols to this table";
    std::set<std::string> recorded;
    for (const auto& [name, m] : r.inputs) recorded.insert(name);
    EXPECT_EQ(recorded, expected.at(v.name)) << v.name;
    // Generated tensors come from the seed alone: a second run records the same numbers.
    const Result again = ref::run(v.name, in, set);
    for (const auto& [name, m] : r.inputs) EXPECT_EQ(ref::maxAbsDiff(again.inputs.at(name), m), 0.0) << v.name << "." << name;
    // The queries (or the memory) were read, under whatever symbol the variant uses (x, q, memory, …).
    const bool reads_x = v.input == InputKind::SelfAttention || v.input == InputKind::CrossAttention ||
                         v.input == InputKind::Memory;
    if (reads_x) {
      EXPECT_TRUE(std::any_of(r.inputs.begin(), r.inputs.end(), [&](const auto& kv) {
        return kv.second.rows() == in.x.rows() && kv.second.cols() == in.x.cols() && kv.second == in.x;
      })) << v.name;
    }
    // What was recorded replays the run, bit for bit. A picture shows what was
    // given (sagan's scene, or the channels of a given x), not a result.
    try {
      expectSameResult(r, replayed(v, in, set, r, dir), v.name + " replayed", false);
    } catch (const std::exception& e) {  // a replay the variant refuses (it read what it did not record)
      ADD_FAILURE() << v.name << " replayed: " << e.what();
    }
    EXPECT_EQ(static_cast<int64_t>(r.q_tokens.size()), r.queries()) << v.name;
    EXPECT_EQ(static_cast<int64_t>(r.k_tokens.size()), r.keys()) << v.name;
    EXPECT_GT(r.flops, 0) << v.name;
    EXPECT_FALSE(v.views.empty()) << v.name;
    for (const ParamSpec& p : v.params) EXPECT_FALSE(p.help.empty()) << v.name << "." << p.key;
  }
}

}  // namespace
}  // namespace attn
