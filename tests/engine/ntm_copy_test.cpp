// The copy-task NTM (engine/variants/ntm_copy.h, assets/trained/ntm-copy.safetensors):
// the C++ forward pass against the torch one scripts/train_ntm_copy.py wrote
// (tests/data/ntm_copy_forward.json), the invariants of every step, the
// learned write-then-read addressing of the paper's Figure 6, and weights
// files that do not fit, each refused in one line naming what is wrong.
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/npy.h"
#include "engine/parallel.h"
#include "engine/trained.h"
#include "engine/variants/ntm_copy.h"
#include "tests/engine_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace attn {
namespace {

const std::filesystem::path kShipped = test::sourceDir() / "assets/trained/ntm-copy.safetensors";

const NtmCopyModel& shippedModel() {
  static const NtmCopyModel m = NtmCopyModel::load(*openTrainedModel("ntm-copy.safetensors", ""));
  return m;
}

Mat jsonMat(const nlohmann::json& j) {
  Mat m(static_cast<int64_t>(j.size()), static_cast<int64_t>(j.at(0).size()));
  for (int64_t i = 0; i < m.rows(); ++i)
    for (int64_t k = 0; k < m.cols(); ++k) m(i, k) = j[static_cast<size_t>(i)][static_cast<size_t>(k)].get<float>();
  return m;
}

void expectNear(const Vec& got, const nlohmann::json& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size())) << what;
  for (int64_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got(i), want[static_cast<size_t>(i)].get<double>(), tol) << what << " [" << i << "]";
}

TEST(NtmCopy, ForwardMatchesTorch) {
  const nlohmann::json ref = nlohmann::json::parse(test::slurp(test::sourceDir() / "tests/data/ntm_copy_forward.json"));
  const NtmCopyModel& m = shippedModel();
  const Mat x = jsonMat(ref["input"]);
  const int64_t L = ref["length"].get<int64_t>();
  ASSERT_EQ(x.rows(), 2 * L + 1);
  ASSERT_EQ(x.cols(), m.bits() + 1);
  // The copy task's input is the sequence, the delimiter, then zeros.
  EXPECT_EQ(m.copyInput(x.topLeftCorner(L, m.bits())), x);

  const std::vector<NtmCopyStep> steps = m.run(x);
  ASSERT_EQ(static_cast<int64_t>(steps.size()), x.rows());
  constexpr double kTol = 1e-4;
  for (size_t t = 0; t < steps.size(); ++t) {
    const std::string at = " at step " + std::to_string(t);
    expectNear(steps[t].y, ref["output"][t], kTol, "y" + at);
    for (const char* name : {"write", "read"}) {
      const NtmHeadStep& h = std::strcmp(name, "write") == 0 ? steps[t].write : steps[t].read;
      const nlohmann::json& want = ref[name];
      const std::string head = std::string(name) + " head";
      expectNear(h.k, want["k"][t], kTol, head + " k" + at);
      // β and γ are up to ~100: relative tolerance.
      EXPECT_NEAR(h.beta, want["beta"][t].get<double>(), kTol * std::max(1.0, h.beta)) << head << " β" << at;
      EXPECT_NEAR(h.g, want["g"][t].get<double>(), kTol) << head << " g" << at;
      EXPECT_NEAR(h.gamma, want["gamma"][t].get<double>(), kTol * std::max(1.0, h.gamma)) << head << " γ" << at;
      expectNear(Eigen::Map<const Eigen::VectorXd>(h.s.data(), 3).cast<float>(), want["s"][t], kTol, head + " s" + at);
      expectNear(h.w.w_c, want["w_c"][t], kTol, head + " w_c" + at);
      expectNear(h.w.w_g, want["w_g"][t], kTol, head + " w_g" + at);
      expectNear(h.w.w_tilde, want["w_tilde"][t], kTol, head + " w̃" + at);
      expectNear(h.w.w, want["w"][t], kTol, head + " w" + at);
    }
    expectNear(steps[t].write.e, ref["write"]["e"][t], kTol, "erase" + at);
    expectNear(steps[t].write.a, ref["write"]["a"][t], kTol, "add" + at);
  }
  const Mat memory = jsonMat(ref["final_memory"]);
  EXPECT_LT(ref::maxAbsDiff(steps.back().memory, memory), kTol);
}

// Every weighting of every stage is a distribution, outputs are probabilities,
// and the result draws them on a fixed [0, 1] scale.
TEST(NtmCopy, StepsKeepTheirInvariants) {
  for (const int64_t L : {int64_t{1}, int64_t{5}, shippedModel().maxLength()}) {
    const Inputs in = ref::gaussianInputs(static_cast<uint64_t>(L), L, L, 8, 1);
    const Result r = ref::run("ntm-copy", in, {{"step", std::to_string(2 * L)}});
    ASSERT_EQ(r.heads(), 2);
    EXPECT_EQ(r.queries(), 2 * L + 1);
    EXPECT_EQ(r.keys(), shippedModel().rows());
    EXPECT_TRUE(r.weights_unit_range);
    EXPECT_EQ(r.timeline.param, "step");
    EXPECT_EQ(r.timeline.count, 2 * L + 1);
    for (int h = 0; h < 2; ++h)
      for (int64_t t = 0; t < r.queries(); ++t) {
        EXPECT_GE(r.weights[static_cast<size_t>(h)].row(t).minCoeff(), 0.0f);
        EXPECT_NEAR(r.weights[static_cast<size_t>(h)].row(t).sum(), 1.0f, 1e-5f) << "head " << h << " step " << t;
      }
    EXPECT_GE(r.output.minCoeff(), 0.0f);
    EXPECT_LE(r.output.maxCoeff(), 1.0f);
    for (const char* name : {"write_stages", "read_stages"}) {
      const Extra* e = r.findExtra(name);
      ASSERT_NE(e, nullptr) << name;
      EXPECT_TRUE(e->unit_range);
      EXPECT_EQ(e->row_labels.size(), 4u);
      const Mat stages = e->value.toMat(name);
      for (int64_t k = 0; k < 4; ++k) {
        EXPECT_GE(stages.row(k).minCoeff(), 0.0f) << name << " stage " << k;
        EXPECT_NEAR(stages.row(k).sum(), 1.0f, 1e-5f) << name << " stage " << k;
      }
    }
    for (const char* name : {"input", "output", "w_write", "w_read", "memory", "erase", "add", "bits_wrong"})
      EXPECT_NE(r.findExtra(name), nullptr) << name;
  }
}

TEST(NtmCopy, IndependentOfThreadCount) {
  const Inputs in = ref::gaussianInputs(5, 9, 9, 8, 1);
  auto runOn = [&](int threads) {
    const ThreadScope scope(threads);
    RunContext ctx;
    ctx.adapt_threads = false;  // exactly `threads`, however busy the machine is
    return ref::run("ntm-copy", in, {}, ctx);
  };
  const Result one = runOn(1), two = runOn(2);
  ASSERT_EQ(one.threads, 1);
  ASSERT_EQ(two.threads, 2);
  EXPECT_EQ(one.weights, two.weights);
  EXPECT_EQ(one.output, two.output);
}

// Figure 6: while the sequence comes in, the write head moves one row per
// step; during the copy the read head visits the rows written, in order.
TEST(NtmCopy, WritesThenReadsSequentially) {
  const NtmCopyModel& m = shippedModel();
  const int64_t L = m.maxLength(), n = m.rows();
  const Inputs in = ref::gaussianInputs(7, L, L, 8, 1);
  const Result r = ref::run("ntm-copy", in);
  auto focus = [&](int h, int64_t t) {
    Eigen::Index j = 0;
    r.weights[static_cast<size_t>(h)].row(t).maxCoeff(&j);
    return static_cast<int64_t>(j);
  };
  for (int64_t t = 0; t < L; ++t) {
    EXPECT_GT(r.weights[0].row(t).maxCoeff(), 0.5f) << "the write head is focused at step " << t;
    if (t > 0) {
      const int64_t step = ((focus(0, t) - focus(0, t - 1)) % n + n) % n;
      EXPECT_TRUE(step == 1 || step == n - 1) << "the write head moves by one row at step " << t;
    }
    EXPECT_EQ(focus(1, L + 1 + t), focus(0, t)) << "output " << t + 1 << " reads the row input " << t + 1 << " wrote";
  }
  EXPECT_EQ(r.findExtra("bits_wrong")->value.data[0], 0.0f);
}

// The copy error docs/variants.md states for the C++ forward pass: bits of the copy
// on the wrong side of 0.5, per sequence, over 1000 seeded sequences of
// lengths 1 … max_length in turn (the script's own measure, on other sequences).
TEST(NtmCopy, CopyErrorIsSmall) {
  const NtmCopyModel& m = shippedModel();
  constexpr int kSequences = 1000;
  double wrong = 0;
  for (int i = 0; i < kSequences; ++i) {
    const int64_t L = 1 + i % m.maxLength();
    const Mat seq = (randomNormal(L, m.bits(), static_cast<uint64_t>(i), "copy error").array() > 0.0f).cast<float>();
    const std::vector<NtmCopyStep> steps = m.run(m.copyInput(seq));
    for (int64_t t = 0; t < L; ++t)
      for (int64_t b = 0; b < m.bits(); ++b)
        wrong += (steps[static_cast<size_t>(L + 1 + t)].y(b) > 0.5f) != (seq(t, b) > 0.5f);
  }
  const double per_sequence = wrong / kSequences;
  RecordProperty("bits_wrong_per_sequence", std::to_string(per_sequence));
  std::printf("copy error: %.4f bits wrong per sequence over %d sequences\n", per_sequence, kSequences);
  EXPECT_LT(per_sequence, 0.1);
}

// A sequence longer than the model was trained on, and a step past the end.
TEST(NtmCopy, RefusesLengthAndStepOutOfRange) {
  const int64_t max = shippedModel().maxLength();
  const Inputs too_long = ref::gaussianInputs(1, max + 1, max + 1, 8, 1);
  ref::expectInputError([&] { ref::run("ntm-copy", too_long); },
                        {"ntm-copy: --length " + std::to_string(max + 1), "max_length " + std::to_string(max)});
  const Inputs in = ref::gaussianInputs(1, 3, 3, 8, 1);
  ref::expectInputError([&] { ref::run("ntm-copy", in, {{"step", "7"}}); }, {"step 7 is past the end", "0 … 6"});
}

// A given sequence decides L and is the one copied; a file that is not a
// sequence of the model's bits, or is longer than it was trained on, is refused.
TEST(NtmCopy, GivenSequenceIsCopiedAndBadOnesAreRefused) {
  const int64_t bits = shippedModel().bits(), max = shippedModel().maxLength();
  Mat seq = Mat::Zero(4, bits);
  for (int64_t b = 0; b < bits; ++b) seq((b * 3) % 4, b) = 1.0f;
  const test::TempDir dir;
  auto file = [&](const std::string& name, const Mat& m) {
    const std::string path = (dir / name).string();
    writeNpy(path, Array::fromMat(m));
    return path;
  };
  const Inputs in = ref::gaussianInputs(1, 9, 9, 8, 1);  // L = 9 is the file's to decide, not --length's
  const Result r = ref::run("ntm-copy", in, {{"sequence", file("seq.npy", seq)}, {"step", "2"}});
  EXPECT_EQ(ref::maxAbsDiff(ref::recorded(r, "sequence"), seq), 0.0);
  ASSERT_EQ(r.queries(), 2 * 4 + 1);
  EXPECT_EQ(ref::maxAbsDiff(ref::recorded(r, "x"), shippedModel().copyInput(seq)), 0.0);
  const std::vector<NtmCopyStep> steps = shippedModel().run(shippedModel().copyInput(seq));
  for (int64_t t = 0; t < r.queries(); ++t)
    EXPECT_EQ(ref::maxAbsDiff(r.output.row(t), steps[static_cast<size_t>(t)].y.transpose()), 0.0) << "step " << t;

  Mat half = seq;
  half(0, 0) = 0.5f;
  ref::expectInputError([&] { ref::run("ntm-copy", in, {{"sequence", file("half.npy", half)}}); },
                        {"half.npy (sequence)", "0 or 1"});
  ref::expectInputError([&] { ref::run("ntm-copy", in, {{"sequence", file("wide.npy", Mat::Zero(4, bits + 1))}}); },
                        {"wide.npy (sequence)", "[L, " + std::to_string(bits) + "]", "[4, " + std::to_string(bits + 1) + "]"});
  ref::expectInputError([&] { ref::run("ntm-copy", in, {{"sequence", file("long.npy", Mat::Zero(max + 1, bits))}}); },
                        {"long.npy (sequence) has " + std::to_string(max + 1) + " rows", "max_length " + std::to_string(max)});
}

// [SECTION] Weights files that do not fit

// The shipped file as header JSON and data bytes, changed by a test and written back.
struct TrainedFile {
  nlohmann::json header;
  std::string data;

  static TrainedFile shipped() {
    const std::string bytes = test::slurp(kShipped);
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    return {nlohmann::json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
  }
  void write(const std::filesystem::path& path) const {
    std::string head = header.dump();
    head.append((8 - head.size() % 8) % 8, ' ');
    const uint64_t n = head.size();
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(&n), 8);
    f << head << data;
  }
  void poke(const std::string& tensor, float value) {
    const size_t at = header[tensor]["data_offsets"][0].get<size_t>();
    std::memcpy(data.data() + at, &value, sizeof value);
  }
};

void expectRefused(const TrainedFile& f, const std::vector<std::string>& needles) {
  const ref::TempPath path("ntm_copy_bad.safetensors");
  f.write(path.path);
  std::vector<std::string> all = needles;
  all.push_back(path.path.string());
  const Inputs in = ref::gaussianInputs(1, 4, 4, 8, 1);
  try {
    ref::run("ntm-copy", in, {{"weights", path.path.string()}, {"step", "3"}});
    ADD_FAILURE() << "expected InputError mentioning '" << needles.at(0) << "'";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(test::countLines(msg), 0) << msg;
    for (const std::string& n : all) EXPECT_NE(msg.find(n), std::string::npos) << "message: " << msg << "\nmissing: " << n;
  }
}

TEST(NtmCopy, TheShippedFileAsAUserFileRuns) {
  const ref::TempPath path("ntm_copy_good.safetensors");
  TrainedFile::shipped().write(path.path);
  const Inputs in = ref::gaussianInputs(1, 4, 4, 8, 1);
  const Result user = ref::run("ntm-copy", in, {{"weights", path.path.string()}, {"step", "3"}});
  const Result embedded = ref::run("ntm-copy", in, {{"step", "3"}});
  EXPECT_EQ(user.weights[1], embedded.weights[1]);
}

TEST(NtmCopy, RefusesAMissingTensor) {
  TrainedFile f = TrainedFile::shipped();
  f.header["read0_renamed"] = f.header["read0"];
  f.header.erase("read0");
  expectRefused(f, {"tensor 'read0' is missing"});
}

TEST(NtmCopy, RefusesAWrongShape) {
  TrainedFile f = TrainedFile::shipped();
  const auto shape = f.header["memory0"]["shape"];
  f.header["memory0"]["shape"] = {shape[1], shape[0]};
  expectRefused(f, {"tensor 'memory0'", "expected shape [" + std::to_string(shape[0].get<int64_t>())});
}

TEST(NtmCopy, RefusesNonFiniteWeights) {
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    TrainedFile f = TrainedFile::shipped();
    f.poke("write_head.weight", bad);
    expectRefused(f, {"tensor 'write_head.weight'"});
  }
}

TEST(NtmCopy, RefusesAnInitialWeightingThatIsNoDistribution) {
  TrainedFile f = TrainedFile::shipped();
  f.poke("read_w0", 0.75f);
  expectRefused(f, {"tensor 'read_w0'", "sum to 1"});
}

TEST(NtmCopy, RefusesMetadataOutOfRangeOrContradictingTheTensors) {
  TrainedFile f = TrainedFile::shipped();
  f.header["__metadata__"]["memory_rows"] = "100000";
  expectRefused(f, {"'memory_rows'", "[2, 1024]", "100000"});
  f = TrainedFile::shipped();
  f.header["__metadata__"].erase("bits");
  expectRefused(f, {"'bits' is missing"});
  // memory_rows 16 in the metadata, M_0 of 32 rows in the file.
  f = TrainedFile::shipped();
  f.header["__metadata__"]["memory_rows"] = "16";
  expectRefused(f, {"tensor 'memory0'", "expected shape [16, "});
}

}  // namespace
}  // namespace attn
