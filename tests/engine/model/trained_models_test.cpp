// The trained models AttnLab ships in assets/trained/ (scripts/train_t5_toy.py,
// scripts/train_vit_shapes.py) against their own torch implementations: the
// scripts wrote what their torch model gives on held-out inputs
// (tests/data/*_expected.json), and the engine, reading the folders as
// transformers' layout, must give the same tokens, labels, maps and hidden
// states. And summarizeMaps (the encoder–decoder head table) against a
// plain double loop over the same maps.
#include "engine/image.h"
#include "engine/model/blocks/head_metrics.h"
#include "engine/model/model.h"
#include "engine/model/kinds/seq2seq.h"
#include "engine/model/kinds/vision.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <string>

namespace attn::trained {
namespace {

const std::string kRoot = std::string(ATTNLAB_SOURCE_DIR);

nlohmann::json expected(const std::string& name) {
  std::ifstream in(kRoot + "/tests/data/" + name);
  EXPECT_TRUE(in) << name;
  return nlohmann::json::parse(in);
}

std::shared_ptr<const Model> shipped(const std::string& name) {
  return loadModel(filesOnDisk(kRoot + "/assets/trained/" + name));
}

std::vector<int32_t> ids(const nlohmann::json& j) { return j.get<std::vector<int32_t>>(); }

TEST(TrainedT5, TranslatesTheHeldOutSentencesAsItsTorchModelDoes) {
  const auto model = shipped("t5-toy");
  const nlohmann::json e = expected("t5_toy_expected.json");
  ASSERT_GE(e.at("examples").size(), 6u);
  int reordered = 0;
  for (const nlohmann::json& x : e.at("examples")) {
    const std::string source = x.at("source").get<std::string>();
    EXPECT_EQ(sourceIds(*model, source), ids(x.at("source_ids"))) << source;
    const Seq2SeqGeneration g = generateSeq2Seq(*model, source, 32);
    std::vector<int32_t> got;
    for (const Prediction& p : g.tokens) got.push_back(p.id);
    EXPECT_EQ(got, ids(x.at("generated_ids"))) << source;
    EXPECT_EQ(g.text, x.at("translation").get<std::string>()) << source;
    EXPECT_TRUE(g.stopped_at_eos) << source;
    // The translation is the rule's (word for word, adjectives after the noun).
    EXPECT_EQ(g.text, x.at("reference").get<std::string>()) << source;
    reordered += g.text.find(" rouge") != std::string::npos || g.text.find(" grand") != std::string::npos;
  }
  EXPECT_GE(reordered, 2);  // the set has adjectives to move
}

TEST(TrainedT5, TeacherForcedPassEqualsTheTorchModelsCrossAttentionAndEncoderOutput) {
  const auto model = shipped("t5-toy");
  const nlohmann::json p = expected("t5_toy_expected.json").at("pass");
  EXPECT_EQ(targetIds(*model, p.at("target").get<std::string>()), ids(p.at("target_ids")));
  const Seq2SeqRun run = runSeq2SeqIds(*model, ids(p.at("source_ids")), ids(p.at("target_ids")), 1);
  const nlohmann::json& cross = p.at("cross_attention_last_layer");  // [heads][T][S]
  const std::vector<Mat>& last = run.cross_attention.back();
  ASSERT_EQ(cross.size(), last.size());
  double worst = 0;
  for (size_t h = 0; h < last.size(); ++h) {
    ASSERT_EQ(static_cast<int64_t>(cross[h].size()), last[h].rows());
    for (int64_t i = 0; i < last[h].rows(); ++i)
      for (int64_t j = 0; j < last[h].cols(); ++j)
        worst = std::max(worst, std::abs(last[h](i, j) - cross[h][static_cast<size_t>(i)][static_cast<size_t>(j)].get<double>()));
  }
  EXPECT_LT(worst, 1e-4);
  const nlohmann::json& enc = p.at("encoder_hidden");  // [S][d]
  ASSERT_EQ(static_cast<int64_t>(enc.size()), run.encoder_hidden.rows());
  worst = 0;
  for (int64_t i = 0; i < run.encoder_hidden.rows(); ++i)
    for (int64_t j = 0; j < run.encoder_hidden.cols(); ++j)
      worst = std::max(worst, std::abs(run.encoder_hidden(i, j) - enc[static_cast<size_t>(i)][static_cast<size_t>(j)].get<double>()));
  EXPECT_LT(worst, 1e-4);
}

// The picture's run through the folder's preprocessing, as `model run --image` does.
VisionRun visionRunOn(const Model& m, const std::string& picture) {
  const ModelFiles files = filesOnDisk(kRoot + "/assets/trained/vit-shapes");
  const Array rgb = readImageRgb(kRoot + "/assets/trained/vit-shapes/examples/" + picture, "test", int64_t{1} << 20);
  return runVision(m, preprocessImage(rgb, readPreprocessing(files, "test")), 3);
}

TEST(TrainedViT, NamesEachExamplePictureAsItsTorchModelDoes) {
  const auto model = shipped("vit-shapes");
  const nlohmann::json e = expected("vit_shapes_expected.json");
  ASSERT_GE(e.at("examples").size(), 5u);
  for (const auto& [picture, x] : e.at("examples").items()) {
    const VisionRun run = visionRunOn(*model, picture);
    const nlohmann::json& top = x.at("top3");
    ASSERT_EQ(run.top_k.size(), top.size()) << picture;
    for (size_t k = 0; k < top.size(); ++k) {
      EXPECT_EQ(run.top_k[k].token, top[k].at("label").get<std::string>()) << picture << " #" << k;
      EXPECT_NEAR(run.top_k[k].probability, top[k].at("probability").get<double>(), 1e-4) << picture << " #" << k;
    }
    // Each example shows its own shape, and the model names it.
    EXPECT_EQ(run.top_k[0].token + ".png", picture);
  }
}

TEST(TrainedViT, ClsAttentionAndHiddenStateEqualTheTorchModels) {
  const auto model = shipped("vit-shapes");
  const nlohmann::json e = expected("vit_shapes_expected.json");
  const VisionRun run = visionRunOn(*model, e.at("attention_example").get<std::string>());
  const nlohmann::json& cls = e.at("cls_attention_last_layer");  // [heads][1 + P]
  ASSERT_EQ(cls.size(), run.attention.back().size());
  double worst = 0;
  for (size_t h = 0; h < cls.size(); ++h) {
    const Mat& A = run.attention.back()[h];
    ASSERT_EQ(static_cast<int64_t>(cls[h].size()), A.cols());
    for (int64_t j = 0; j < A.cols(); ++j) worst = std::max(worst, std::abs(A(0, j) - cls[h][static_cast<size_t>(j)].get<double>()));
  }
  EXPECT_LT(worst, 1e-4);
  const nlohmann::json& hidden = e.at("cls_hidden");  // [d]
  ASSERT_EQ(static_cast<int64_t>(hidden.size()), run.hidden.cols());
  worst = 0;
  for (int64_t j = 0; j < run.hidden.cols(); ++j) worst = std::max(worst, std::abs(run.hidden(0, j) - hidden[static_cast<size_t>(j)].get<double>()));
  EXPECT_LT(worst, 1e-4);
}

// summarizeMaps' columns, from their definitions, in double.
TEST(SummarizeMaps, EqualsPlainLoopsOnEveryKindOfAShippedRun) {
  const auto model = shipped("t5-toy");
  const Seq2SeqRun run = runSeq2Seq(*model, "the big red cat often sees a small dog", "le chat rouge grand voit souvent", 1);
  for (const auto* maps : {&run.encoder_attention, &run.decoder_attention, &run.cross_attention}) {
    const std::vector<HeadSummary> got = summarizeMaps(*maps);
    ASSERT_EQ(got.size(), maps->size() * maps->front().size());
    size_t k = 0;
    for (size_t l = 0; l < maps->size(); ++l)
      for (size_t h = 0; h < (*maps)[l].size(); ++h, ++k) {
        const Mat& A = (*maps)[l][h];
        double prev = 0, sink = 0, dist = 0, ent = 0;
        for (int64_t i = 0; i < A.rows(); ++i) {
          for (int64_t j = 0; j < A.cols(); ++j) {
            const double a = A(i, j);
            dist += a * std::abs(static_cast<double>(i - j));
            ent += a > 0 ? -a * std::log(a) : 0.0;
          }
          if (i >= 1) sink += A(i, 0);
          if (i >= 1 && i - 1 < A.cols()) prev += A(i, i - 1);
        }
        const double n = static_cast<double>(A.rows());
        EXPECT_EQ(got[k].layer, static_cast<int64_t>(l));
        EXPECT_EQ(got[k].head, static_cast<int64_t>(h));
        EXPECT_NEAR(got[k].previous_token, prev / (n - 1), 1e-9);
        EXPECT_NEAR(got[k].sink, sink / (n - 1), 1e-9);
        EXPECT_NEAR(got[k].mean_distance, dist / n, 1e-9);
        EXPECT_NEAR(got[k].entropy, ent / n, 1e-9);
        EXPECT_EQ(got[k].induction, 0.0);
      }
  }
}

}  // namespace
}  // namespace attn::trained
