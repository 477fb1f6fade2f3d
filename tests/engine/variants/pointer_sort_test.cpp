// The trained pointer network that sorts (engine/variants/pointer_sort.h,
// scripts/train_pointer_sort.py): the C++ forward against the torch forward
// the script wrote (tests/data/pointer_sort_crosscheck.json), the invariants
// of every run, the shipped model's accuracy, and one clear error for each
// kind of bad weights file and bad list of numbers.
#include "engine/error.h"
#include "engine/model/checkpoint/safetensors.h"
#include "engine/trained.h"
#include "engine/variants/pointer_sort.h"
#include "tests/engine_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

namespace attn {
namespace {


std::shared_ptr<const SafetensorsFile> embeddedFile() { return openTrainedModel("pointer-sort.safetensors", ""); }

// Eight numbers; the variant reads `numbers` or, when that is empty, the length of x.
Inputs someInputs() { return makeSynthetic({.length = 8, .dim = 4, .heads = 1}); }

std::string joined(const std::vector<float>& x) {
  std::string s;
  for (float v : x) {
    if (!s.empty()) s += ',';
    s += std::to_string(v);
  }
  return s;
}

TEST(PointerSort, ForwardMatchesTorch) {
  const nlohmann::json ref = nlohmann::json::parse(test::slurp(test::sourceDir() / "tests/data/pointer_sort_crosscheck.json"));
  const std::vector<float> x = ref["numbers"].get<std::vector<float>>();
  const auto n = static_cast<int64_t>(x.size());
  const PointerSortRun run = pointerSort(PointerSortModel::load(*embeddedFile()), x);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      // u sums 128 float products: 1e-4 relative (the sanitizer build's -O2 differs from Release's -O3 by 3e-5).
      const float u = ref["u"][i][j].get<float>();
      EXPECT_NEAR(run.u(i, j), u, 1e-4 * std::max(1.0f, std::abs(u))) << "u, step " << i << " position " << j;
      EXPECT_NEAR(run.p(i, j), ref["p"][i][j].get<float>(), 1e-4) << "p, step " << i << " position " << j;
    }
  EXPECT_EQ(run.chosen, ref["chosen"].get<std::vector<int64_t>>());
  EXPECT_EQ(run.chosen, ref["sorted"].get<std::vector<int64_t>>()) << "the cross-check input is sorted right";

  // The variant shows the same run: p as the weights, u as the scores.
  const Result r = ref::run("pointer-sort", someInputs(), {{"numbers", joined(x)}});
  ASSERT_EQ(r.weights.size(), 1u);
  EXPECT_LE(ref::maxAbsDiff(r.weights[0], run.p), 1e-6f);
  EXPECT_LE(ref::maxAbsDiff(r.scores[0], run.u), 1e-6f);
  EXPECT_EQ(r.k_tokens.front(), "0.42");
  EXPECT_EQ(r.q_tokens.front(), "0: 0.07");
  EXPECT_EQ(r.findExtra("correct")->value.data, std::vector<float>{1.0f});
}

// Every row is a distribution over the positions not chosen before; those
// chosen before are exactly 0; the pointers are a permutation.
TEST(PointerSort, RowsAreDistributionsOverTheUnchosenAndTheOutputIsAPermutation) {
  const PointerSortModel m = PointerSortModel::load(*embeddedFile());
  for (int64_t n = m.min_length; n <= m.max_length; ++n)
    for (uint64_t seed = 0; seed < 3; ++seed) {
      const Result r = ref::run("pointer-sort", makeSynthetic({.seed = seed, .length = n, .dim = 4, .heads = 1}));
      const std::string where = "n = " + std::to_string(n) + ", seed " + std::to_string(seed);
      ASSERT_EQ(r.weights[0].rows(), n) << where;
      ASSERT_EQ(r.weights[0].cols(), n) << where;
      const Mat& p = r.weights[0];
      const Extra* pointed = r.findExtra("pointed");
      ASSERT_NE(pointed, nullptr);
      std::vector<bool> taken(static_cast<size_t>(n), false);
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_GE(p.row(i).minCoeff(), 0.0f) << where;
        EXPECT_NEAR(p.row(i).sum(), 1.0f, 1e-5f) << where << ", step " << i;
        for (int64_t j = 0; j < n; ++j) {
          EXPECT_EQ(r.mask(i, j), taken[static_cast<size_t>(j)] ? 0.0f : 1.0f) << where << ", step " << i;
          if (taken[static_cast<size_t>(j)]) {
            EXPECT_EQ(p(i, j), 0.0f) << where << ", step " << i;
          }
        }
        const auto j = static_cast<int64_t>(pointed->value.data[static_cast<size_t>(i)]);
        ASSERT_FALSE(taken[static_cast<size_t>(j)]) << where << ": position " << j << " chosen twice";
        taken[static_cast<size_t>(j)] = true;
      }
      for (const char* e : {"numbers", "output", "correct", "steps_correct"})
        EXPECT_NE(r.findExtra(e), nullptr) << e;
      for (const char* t : {"numbers", "enc", "dec", "w_1", "w_2", "v"}) EXPECT_NO_THROW(ref::recorded(r, t)) << t;
      const Mat& x = ref::recorded(r, "numbers");
      EXPECT_GE(x.minCoeff(), 0.0f);
      EXPECT_LE(x.maxCoeff(), 1.0f);
    }
}

// Greedy decoding of 1,000 sequences per length, uniform in [0, 1): the exact
// (whole output sorted) and per-step accuracy docs/variants.md reports for the C++
// engine, each within 3 points of what the script measured in torch.
TEST(PointerSort, ShippedModelSortsAsAccuratelyAsInTorch) {
  const auto f = embeddedFile();
  const PointerSortModel m = PointerSortModel::load(*f);
  constexpr int kSequences = 1000;
  for (int64_t n = m.min_length; n <= m.max_length; ++n) {
    std::mt19937 gen(static_cast<uint32_t>(n));
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    int exact = 0, steps = 0;
    for (int s = 0; s < kSequences; ++s) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = uniform(gen);
      std::vector<float> sorted = x;
      std::sort(sorted.begin(), sorted.end());
      const PointerSortRun run = pointerSort(m, x);
      int right = 0;
      for (int64_t i = 0; i < n; ++i)
        right += x[static_cast<size_t>(run.chosen[static_cast<size_t>(i)])] == sorted[static_cast<size_t>(i)];
      exact += right == n;
      steps += right;
    }
    const double exact_pct = 100.0 * exact / kSequences, step_pct = 100.0 * steps / (kSequences * static_cast<double>(n));
    std::printf("pointer-sort C++ n = %lld: exact %.1f %%, per step %.1f %% (%d sequences)\n", static_cast<long long>(n),
                exact_pct, step_pct, kSequences);
    const std::string key = "accuracy_exact_n" + std::to_string(n), step_key = "accuracy_step_n" + std::to_string(n);
    EXPECT_NEAR(exact_pct, std::stod(f->header().metadata.at(key)), 3.0) << "n = " << n;
    EXPECT_NEAR(step_pct, std::stod(f->header().metadata.at(step_key)), 3.0) << "n = " << n;
  }
}

// [SECTION] Bad weights files and numbers: one line naming what is wrong.

// The embedded model's tensors and metadata, for a test to spoil one thing.
struct ModelCopy {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, std::vector<float>> values;
  std::map<std::string, std::string> metadata;

  ModelCopy() {
    const auto f = embeddedFile();
    metadata = f->header().metadata;
    for (const TensorEntry& t : f->header().tensors) {
      std::vector<float> storage;
      const float* p = f->floats(t, storage);
      shapes[t.name] = t.shape;
      values[t.name] = std::vector<float>(p, p + t.elements());
    }
  }
  void write(const std::filesystem::path& path) const {
    std::vector<TensorToWrite> tensors;
    for (const auto& [name, v] : values) tensors.push_back(tensorFromValues(name, DType::F32, shapes.at(name), v));
    writeSafetensors(path, tensors, metadata);
  }
};

void expectRefused(const ModelCopy& m, const std::vector<std::string>& needles) {
  const ref::TempPath file("pointer_sort_bad.safetensors");
  m.write(file.path);
  std::vector<std::string> all = needles;
  all.push_back(file.path.string());
  try {
    ref::run("pointer-sort", someInputs(), {{"weights", file.path.string()}, {"numbers", "0.3,0.1,0.2,0.5,0.4"}});
    ADD_FAILURE() << "no error for " << needles.at(0);
  } catch (const InputError& e) {
    const std::string what = e.what();
    for (const std::string& n : all) EXPECT_NE(what.find(n), std::string::npos) << what << "\nmissing: " << n;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(PointerSort, BadWeightsFilesAreRefusedInOneLine) {
  {
    ModelCopy m;  // a copy as written sorts like the embedded one
    const ref::TempPath file("pointer_sort_copy.safetensors");
    m.write(file.path);
    const Result r = ref::run("pointer-sort", someInputs(), {{"weights", file.path.string()}, {"numbers", "0.3,0.1,0.2,0.5,0.4"}});
    EXPECT_EQ(r.findExtra("correct")->value.data, std::vector<float>{1.0f});
  }
  {
    ModelCopy m;
    m.values.erase("pointer.v");
    m.shapes.erase("pointer.v");
    expectRefused(m, {"'pointer.v' is missing"});
  }
  {
    ModelCopy m;
    std::vector<int64_t>& s = m.shapes["pointer.w_1.weight"];
    m.values["pointer.w_1.weight"].resize(static_cast<size_t>(s[0] * (s[1] + 1)));
    s[1] += 1;
    expectRefused(m, {"'pointer.w_1.weight'", "expected shape"});
  }
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    ModelCopy m;
    m.values["decoder.weight_hh"][7] = bad;
    expectRefused(m, {"'decoder.weight_hh'"});
  }
  {
    ModelCopy m;
    m.metadata["max_length"] = "5000";
    expectRefused(m, {"'max_length'", "5000"});
  }
  {
    ModelCopy m;
    m.metadata["min_length"] = "13";
    m.metadata["max_length"] = "12";
    expectRefused(m, {"'max_length'", "[13, 1000]"});
  }
  {
    ModelCopy m;
    m.metadata.erase("hidden");
    expectRefused(m, {"'hidden' is missing"});
  }
  {
    ModelCopy m;  // a hidden size that contradicts the tensors
    m.metadata["hidden"] = "64";
    expectRefused(m, {"'encoder.weight_ih'", "expected shape"});
  }
}

TEST(PointerSort, BadNumbersAreRefusedInOneLine) {
  ref::expectInputError([] { ref::run("pointer-sort", someInputs(), {{"numbers", "0.2,1.5,0.3,0.4,0.5"}}); },
                        {"numbers", "element 1", "0..1", "1.5"});
  ref::expectInputError([] { ref::run("pointer-sort", someInputs(), {{"numbers", "0.2,0.1,0.3,0.4,0.5,0.6,0.7,0.8,0.9,0.15,0.25,0.35,0.45"}}); },
                        {"pointer-sort", "5 to 12 numbers, got 13", "parameter 'numbers'"});
  ref::expectInputError([] { ref::run("pointer-sort", someInputs(), {{"numbers", "0.2,0.1"}}); },
                        {"5 to 12 numbers, got 2"});
  ref::expectInputError([] { ref::run("pointer-sort", makeSynthetic({.length = 30, .dim = 4, .heads = 1})); },
                        {"5 to 12 numbers, got 30", "--length"});
}

}  // namespace
}  // namespace attn
