// ViT (engine/model/families/vit.cpp, vision.cpp) against a plain-loop double
// reference written from transformers' models/vit/modeling_vit.py: tiny
// checkpoints in ViTForImageClassification's and ViTModel's exact tensor
// names and shapes; every map, the hidden states and the classifier's labels;
// the picture's preprocessing against Pillow (scripts/vision_reference.py,
// run by scripts/test.sh); the command line; the refusals.
#include "engine/image.h"
#include "engine/model/blocks/head_metrics.h"
#include "engine/model/model.h"
#include "engine/model/kinds/vision.h"
#include "engine/npy.h"

#include "tests/engine/model/families/conformance.h"
#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>

namespace fs = std::filesystem;

namespace attn::vit_test {
namespace {

using namespace mref;
using test::TinyModel;

constexpr int64_t kD = 16, kHeads = 4, kFf = 24, kLayers = 2, kImage = 32, kPatch = 8, kGrid = kImage / kPatch;
const std::vector<std::string> kLabels = {"tench", "goldfish", "great white shark", "tiger shark", "hammerhead"};

struct VitCase {
  bool classifier = true;  // ViTForImageClassification ("vit." prefix, classifier) or ViTModel (pooler)
  bool qkv_bias = true;
  std::string act = "gelu";
  DType dtype = DType::F32;
  uint64_t seed = 1;
};

TinyModel writeVit(const fs::path& dir, const VitCase& o) {
  nlohmann::json id2label = nlohmann::json::object();
  for (size_t i = 0; i < kLabels.size(); ++i) id2label[std::to_string(i)] = kLabels[i];
  nlohmann::json config = {{"architectures", {o.classifier ? "ViTForImageClassification" : "ViTModel"}},
                           {"model_type", "vit"},
                           {"hidden_size", kD},
                           {"num_hidden_layers", kLayers},
                           {"num_attention_heads", kHeads},
                           {"intermediate_size", kFf},
                           {"hidden_act", o.act},
                           {"layer_norm_eps", 1e-12},
                           {"image_size", kImage},
                           {"patch_size", kPatch},
                           {"num_channels", 3},
                           {"qkv_bias", o.qkv_bias},
                           {"encoder_stride", kPatch},
                           {"hidden_dropout_prob", 0.0},
                           {"id2label", id2label},
                           {"dtype", "float32"},
                           {"transformers_version", "5.0.0"}};
  const std::string pre = o.classifier ? "vit." : "";
  std::vector<test::TensorSpec> t = {{pre + "embeddings.cls_token", {1, 1, kD}},
                                     {pre + "embeddings.position_embeddings", {1, 1 + kGrid * kGrid, kD}},
                                     {pre + "embeddings.patch_embeddings.projection.weight", {kD, 3, kPatch, kPatch}, 0.1f},
                                     {pre + "embeddings.patch_embeddings.projection.bias", {kD}, 0.2f},
                                     {pre + "layernorm.weight", {kD}, 0.2f, 1.0f},
                                     {pre + "layernorm.bias", {kD}, 0.2f}};
  for (int64_t l = 0; l < kLayers; ++l) {
    const std::string p = pre + "encoder.layer." + std::to_string(l) + ".";
    for (const char* x : {"query", "key", "value"}) {
      t.push_back({p + "attention.attention." + x + ".weight", {kD, kD}});
      if (o.qkv_bias) t.push_back({p + "attention.attention." + x + ".bias", {kD}, 0.2f});
    }
    t.push_back({p + "attention.output.dense.weight", {kD, kD}});
    t.push_back({p + "attention.output.dense.bias", {kD}, 0.2f});
    t.push_back({p + "intermediate.dense.weight", {kFf, kD}});
    t.push_back({p + "intermediate.dense.bias", {kFf}, 0.2f});
    t.push_back({p + "output.dense.weight", {kD, kFf}});
    t.push_back({p + "output.dense.bias", {kD}, 0.2f});
    for (const char* n : {"layernorm_before", "layernorm_after"}) {
      t.push_back({p + n + ".weight", {kD}, 0.2f, 1.0f});
      t.push_back({p + n + ".bias", {kD}, 0.2f});
    }
  }
  if (o.classifier) {
    t.push_back({"classifier.weight", {static_cast<int64_t>(kLabels.size()), kD}});
    t.push_back({"classifier.bias", {static_cast<int64_t>(kLabels.size())}, 0.2f});
  } else {
    t.push_back({"pooler.dense.weight", {kD, kD}});
    t.push_back({"pooler.dense.bias", {kD}});
  }
  TinyModel m = test::writeCheckpoint(dir, config, t, {.dtype = o.dtype, .seed = o.seed});
  fs::remove(dir / "tokenizer.json");  // a ViT folder has no tokenizer
  fs::remove(dir / "tokenizer_config.json");
  return m;
}

Array randomPixels(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  Array a{{3, kImage, kImage}, std::vector<float>(3 * kImage * kImage)};
  for (float& v : a.data) v = n(rng);
  return a;
}

struct VitRef {
  std::vector<std::vector<Rows>> attention;  // [layer][head] [1 + P][1 + P]
  Rows hidden;
  std::vector<double> logits;
};

// transformers' ViTEmbeddings, ViTLayer and ViTForImageClassification, in double precision.
VitRef vitRef(const TinyModel& m, const VitCase& o, const Array& px) {
  const std::string pre = o.classifier ? "vit." : "";
  auto w = [&](const std::string& name) -> const std::vector<float>& { return m.weights.at(pre + name); };
  const std::vector<float> none;
  const size_t d = kD, P = kGrid * kGrid, H = kHeads, dh = d / H;
  // embeddings = Conv2d(pixel_values) flattened, cls_token first, + position_embeddings
  Rows x = zeros(1 + P, d);
  const std::vector<float>& conv = w("embeddings.patch_embeddings.projection.weight");
  for (size_t e = 0; e < d; ++e) x[0][e] = w("embeddings.cls_token")[e];
  for (int64_t gy = 0; gy < kGrid; ++gy)
    for (int64_t gx = 0; gx < kGrid; ++gx)
      for (size_t e = 0; e < d; ++e) {
        double s = w("embeddings.patch_embeddings.projection.bias")[e];
        for (int64_t c = 0; c < 3; ++c)
          for (int64_t i = 0; i < kPatch; ++i)
            for (int64_t j = 0; j < kPatch; ++j)
              s += conv[((e * 3 + c) * kPatch + i) * kPatch + j] *
                   px.data[static_cast<size_t>((c * kImage + gy * kPatch + i) * kImage + gx * kPatch + j)];
        x[1 + gy * kGrid + gx][e] = s;
      }
  for (size_t t = 0; t < 1 + P; ++t)
    for (size_t e = 0; e < d; ++e) x[t][e] += w("embeddings.position_embeddings")[t * d + e];
  VitRef r;
  for (int64_t l = 0; l < kLayers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    auto b = [&](const std::string& n) -> const std::vector<float>& { return o.qkv_bias ? w(p + n) : none; };
    Rows a = x;
    layerNormRef(a, w(p + "layernorm_before.weight"), w(p + "layernorm_before.bias"), 1e-12);
    const Rows q = linearRef(a, w(p + "attention.attention.query.weight"), b("attention.attention.query.bias"), d, d, true);
    const Rows k = linearRef(a, w(p + "attention.attention.key.weight"), b("attention.attention.key.bias"), d, d, true);
    const Rows v = linearRef(a, w(p + "attention.attention.value.weight"), b("attention.attention.value.bias"), d, d, true);
    std::vector<Rows> maps;
    Rows ctx;
    attentionRef(q, k, v, H, false, maps, ctx);
    r.attention.push_back(maps);
    addInto(x, linearRef(ctx, w(p + "attention.output.dense.weight"), w(p + "attention.output.dense.bias"), d, d, true));
    a = x;
    layerNormRef(a, w(p + "layernorm_after.weight"), w(p + "layernorm_after.bias"), 1e-12);
    Rows f = linearRef(a, w(p + "intermediate.dense.weight"), w(p + "intermediate.dense.bias"), d, kFf, true);
    for (auto& row : f)
      for (double& e : row) e = o.act == "gelu" ? geluErf(e) : geluTanh(e);
    addInto(x, linearRef(f, w(p + "output.dense.weight"), w(p + "output.dense.bias"), kFf, d, true));
  }
  layerNormRef(x, w("layernorm.weight"), w("layernorm.bias"), 1e-12);
  r.hidden = x;
  (void)dh;
  if (o.classifier) r.logits = linearRef({x[0]}, m.weights.at("classifier.weight"), m.weights.at("classifier.bias"), d, kLabels.size(), true)[0];
  return r;
}

void expectMatches(const VisionRun& run, const VitRef& ref) {
  ASSERT_EQ(run.attention.size(), ref.attention.size());
  for (size_t l = 0; l < ref.attention.size(); ++l)
    for (size_t h = 0; h < ref.attention[l].size(); ++h)
      for (size_t i = 0; i < ref.attention[l][h].size(); ++i)
        for (size_t j = 0; j < ref.attention[l][h][i].size(); ++j)
          ASSERT_NEAR(run.attention[l][h](i, j), ref.attention[l][h][i][j], kModelTol) << "layer " << l << " head " << h;
  for (size_t i = 0; i < ref.hidden.size(); ++i)
    for (size_t e = 0; e < ref.hidden[i].size(); ++e) ASSERT_NEAR(run.hidden(i, e), ref.hidden[i][e], kModelTol);
  if (ref.logits.empty()) {
    EXPECT_TRUE(run.top_k.empty());
    return;
  }
  expectTopK({run.top_k}, {ref.logits}, static_cast<int>(run.top_k.size()));
  for (const Prediction& p : run.top_k) EXPECT_EQ(p.token, kLabels.at(static_cast<size_t>(p.id)));
}

TEST(FamilyVit, MatchesTransformersOnEveryMapHiddenStateAndLabel) {
  for (const VitCase& o : {VitCase{}, VitCase{.classifier = false, .qkv_bias = false, .act = "gelu_new"}}) {
    SCOPED_TRACE(o.classifier ? "ViTForImageClassification" : "ViTModel");
    test::TempDir dir;
    const TinyModel tiny = writeVit(dir.path, o);
    const auto model = loadModel(filesOnDisk(dir.path.string()));
    const Array px = randomPixels(7);
    const VisionRun run = runVision(*model, px, 3);
    EXPECT_EQ(run.grid_h, kGrid);
    EXPECT_EQ(run.attention[0][0].rows(), 1 + kGrid * kGrid);
    const VitRef ref = vitRef(tiny, o, px);
    expectMatches(run, ref);
    // Mean attention distance in pixels, from the reference's maps: patch-to-patch rows renormalised, [CLS] left out.
    const std::vector<std::vector<double>> distance = attentionDistance(run, kPatch);
    ASSERT_EQ(distance.size(), static_cast<size_t>(kLayers));
    for (size_t l = 0; l < distance.size(); ++l)
      for (size_t h = 0; h < static_cast<size_t>(kHeads); ++h) {
        double sum = 0;
        for (int64_t i = 0; i < kGrid * kGrid; ++i) {
          double z = 0, weighted = 0;
          for (int64_t j = 0; j < kGrid * kGrid; ++j) {
            const double a = ref.attention[l][h][1 + i][1 + j];
            const double dy = static_cast<double>(i / kGrid - j / kGrid), dx = static_cast<double>(i % kGrid - j % kGrid);
            z += a;
            weighted += a * std::sqrt(dy * dy + dx * dx) * kPatch;
          }
          sum += weighted / z;
        }
        EXPECT_NEAR(distance[l][h], sum / (kGrid * kGrid), 1e-4) << "layer " << l << " head " << h;
        EXPECT_GT(distance[l][h], 0.0);
      }
  }
}

// Pillow's bilinear resize, rescale and normalisation, as transformers' ViTImageProcessor does them.
TEST(FamilyVit, PicturesArePreparedAsTheImageProcessorDoes) {
  const fs::path dir = fs::path(ATTNLAB_NPM_DIR) / "vision";
  ImagePreprocessing p;
  p.height = p.width = kImage;
  for (const std::string name : {"shrunk", "slightly", "enlarged"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(fs::exists(dir / (name + ".png"))) << "write it with: " << test::referenceIdsCommand(ATTNLAB_NPM_DIR);
    const Array got = preprocessImage(readImageRgb((dir / (name + ".png")).string(), "--image", 1 << 20), p);
    const Array want = readNpy(dir / (name + "_pixels.npy"), "reference");
    ASSERT_EQ(got.shape, want.shape);
    for (size_t i = 0; i < want.data.size(); ++i) ASSERT_NEAR(got.data[i], want.data[i], 1e-6) << "value " << i;
  }
}

// A PNG whose chunk claims more bytes than the file has is refused before stb_image sizes a buffer by it
// (a few bytes claiming a 1 GiB IDAT made it allocate 2 GiB: found by fuzz_image, kept in its corpus).
TEST(FamilyVit, APngChunkLongerThanTheFileIsRefusedBeforeDecoding) {
  test::TempDir dir;
  std::string png("\x89PNG\r\n\x1a\n", 8);
  png += std::string("\x00\x00\x00\x0dIHDR", 8) + std::string("\x00\x00\x00\x04\x00\x00\x00\x03\x08\x02\x00\x00\x00", 13) + "CRC!";
  png += std::string("\x40\x00\x00\x00IDAT", 8) + "xyz";
  std::ofstream(dir.path / "bomb.png", std::ios::binary) << png;
  const std::string e = test::errorOf([&] { readImageRgb((dir.path / "bomb.png").string(), "--image", 1 << 20); });
  EXPECT_NE(e.find("bomb.png (--image): expected a PNG or JPEG image, got a corrupt PNG: chunk 'IDAT' at byte 33 claims 1073741824 bytes, but the file has"),
            std::string::npos) << e;
}

TEST(FamilyVit, ModelRunWritesTheMapsOfAPictureThroughTheCli) {
  test::TempDir dir, out;
  writeVit(dir.path, {});
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  // --pixels as given
  const Array px = randomPixels(3);
  writeNpy(out.path / "px.npy", px);
  test::RunResult r = test::runAttnlab({"model", "run", dir.path.string(), "--pixels", (out.path / "px.npy").string(),
                                        "--out", (out.path / "a").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const VisionRun run = runVision(*model, px, 5);
  const int64_t n = 1 + kGrid * kGrid;
  std::vector<int64_t> shape;
  const std::vector<float> maps = test::readTyped<float>(out.path / "a" / "attention.npy", "<f4", shape);
  ASSERT_EQ(shape, (std::vector<int64_t>{kLayers, kHeads, n, n}));
  EXPECT_EQ(maps[static_cast<size_t>(((1 * kHeads + 2) * n + 5) * n + 7)], run.attention[1][2](5, 7));
  test::readTyped<float>(out.path / "a" / "hidden.npy", "<f4", shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{n, kD}));
  test::readTyped<float>(out.path / "a" / "pixel_values.npy", "<f4", shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{3, kImage, kImage}));
  const std::vector<float> rollout = test::readTyped<float>(out.path / "a" / "rollout.npy", "<f4", shape);
  ASSERT_EQ(shape, (std::vector<int64_t>{kLayers, n, n}));
  EXPECT_EQ(rollout[static_cast<size_t>((1 * n + 0) * n + 9)], attentionRollout(run.attention)[1](0, 9));  // [CLS]'s row
  const std::vector<float> distance = test::readTyped<float>(out.path / "a" / "attention_distance.npy", "<f4", shape);
  ASSERT_EQ(shape, (std::vector<int64_t>{kLayers, kHeads}));
  EXPECT_FLOAT_EQ(distance[static_cast<size_t>(kHeads + 1)], static_cast<float>(attentionDistance(run, kPatch)[1][1]));
  const nlohmann::json meta = nlohmann::json::parse(test::slurp(out.path / "a" / "meta.json"));
  EXPECT_EQ(meta["top_k"][0]["token"], run.top_k[0].token);
  EXPECT_EQ(meta["grid"], (nlohmann::json{kGrid, kGrid}));
  // --image through preprocessor_config.json: the same pixel values as the processor's
  const fs::path vision = fs::path(ATTNLAB_NPM_DIR) / "vision";
  std::ofstream(dir.path / "preprocessor_config.json")
      << R"({"do_resize": true, "size": {"height": 32, "width": 32}, "resample": 2, "do_rescale": true,
            "rescale_factor": 0.00392156862745098, "do_normalize": true, "image_mean": [0.5, 0.5, 0.5],
            "image_std": [0.5, 0.5, 0.5], "image_processor_type": "ViTImageProcessor"})";
  r = test::runAttnlab({"model", "run", dir.path.string(), "--image", (vision / "shrunk.png").string(), "--out",
                        (out.path / "b").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<float> values = test::readTyped<float>(out.path / "b" / "pixel_values.npy", "<f4", shape);
  const Array want = readNpy(vision / "shrunk_pixels.npy", "reference");
  ASSERT_EQ(values.size(), want.data.size());
  for (size_t i = 0; i < values.size(); ++i) ASSERT_NEAR(values[i], want.data[i], 1e-6);

  // One line, nothing written.
  test::TempDir gpt2;
  test::writeTinyModel(gpt2.path);
  struct Bad {
    std::vector<std::string> args;
    std::string needle;
  };
  writeNpy(out.path / "two.npy", Array{{2, kImage, kImage}, std::vector<float>(2 * kImage * kImage, 0.0f)});
  const std::string vit = dir.path.string();
  for (const Bad& b : std::vector<Bad>{
           {{"model", "run", vit, "--text", "hello"}, "--text: a vision model reads a picture"},
           {{"model", "run", vit, "--pixels", (out.path / "two.npy").string()}, "--pixels: expected float32 [3, 32, 32]"},
           {{"model", "run", gpt2.path.string(), "--image", (vision / "shrunk.png").string()}, "--image: GPT2LMHeadModel reads text, not pictures"},
           {{"model", "run", vit, "--image", (out.path / "missing.png").string()}, "no such file"},
       }) {
    std::vector<std::string> args = b.args;
    args.insert(args.end(), {"--out", (out.path / "refused").string()});
    const test::RunResult bad = test::runAttnlab(args);
    EXPECT_NE(bad.status, 0) << b.needle;
    EXPECT_NE(bad.err.find(b.needle), std::string::npos) << bad.err;
    EXPECT_EQ(test::countLines(bad.err), 1) << bad.err;
    EXPECT_FALSE(fs::exists(out.path / "refused")) << b.needle;
  }
  fs::remove(dir.path / "preprocessor_config.json");
  const test::RunResult missing = test::runAttnlab({"model", "run", vit, "--image", (vision / "shrunk.png").string(),
                                                    "--out", (out.path / "refused").string()});
  EXPECT_NE(missing.err.find("preprocessor_config.json: missing"), std::string::npos) << missing.err;
  // In the engine: text for a picture model, and a picture model's config fields it does not compute.
  EXPECT_NE(test::errorOf([&] { runModel(*model, "hello"); }).find("ViT reads pictures, not text"), std::string::npos);
  TinyModel bad = writeVit(dir.path, {});
  test::setConfigField(bad, "image_size", "[32, 48]");
  EXPECT_NE(test::loadError(dir.path).find("only square pictures"), std::string::npos);
  test::setConfigField(bad, "image_size", "30");
  EXPECT_NE(test::loadError(dir.path).find("'patch_size' (8) must divide image_size (30)"), std::string::npos);
}

}  // namespace
}  // namespace attn::vit_test

namespace attn {

test::TinyModel test::writeVitFixture(const fs::path& dir, const test::FamilyFixture& f) {
  return vit_test::writeVit(dir, {.dtype = f.dtype, .seed = f.seed});
}

}  // namespace attn
