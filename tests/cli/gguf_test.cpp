// GGUF files through the real binary: `model info`, `model run` and `model
// generate` open a .gguf file as a user would give it, info shows how its
// weights are stored, and a bad file gets one line naming it, with nothing written.
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/tokenizers/tokenizer_text.h"
#include "tests/gguf_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

namespace fs = std::filesystem;

namespace attn::gguf_cli_test {
namespace {

using namespace attn::test;

void writeText(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

TEST(GgufCli, AGgufFileOpensAsAModel) {
  for (const std::string family : {"llama", "qwen2"}) {
    TempDir dir;
    const fs::path gguf = convertToGguf(writeGgufParent(dir / "parent", family), DType::F16, dir / "tiny.gguf");
    expectOpensThroughTheCli(gguf, "the cat sat on the mat", family == "llama" ? "Llama" : "Qwen2");
  }
}

TEST(GgufCli, ModelInfoShowsHowTheWeightsAreStored) {
  TempDir dir;
  const fs::path gguf = convertToGguf(writeGgufParent(dir / "parent", "llama"), DType::F16, dir / "tiny.gguf");
  const RunResult json = runAttnlab({"model", "info", gguf.string(), "--json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["dtype"], "mixed");  // F16 matrices, F32 norms
  ASSERT_EQ(j["storage"].size(), 2u);
  EXPECT_EQ(j["storage"][0]["dtype"], "F16");
  EXPECT_EQ(j["storage"][1]["dtype"], "F32");
  int64_t params = 0;
  uint64_t bytes = 0;
  for (const nlohmann::json& s : j["storage"]) {
    params += s["parameters"].get<int64_t>();
    bytes += s["bytes"].get<uint64_t>();
  }
  EXPECT_EQ(params, j["parameters"].get<int64_t>());
  EXPECT_NEAR(j["bits_per_weight"].get<double>(), 8.0 * static_cast<double>(bytes) / static_cast<double>(params), 1e-9);
  EXPECT_GT(j["bits_per_weight"].get<double>(), 16.0);  // mostly F16, the norms F32
  EXPECT_LT(j["bits_per_weight"].get<double>(), 16.2);
  const RunResult text = runAttnlab({"model", "info", gguf.string()});
  ASSERT_EQ(text.status, 0) << text.err;
  expectHas(text.out, {"stored as     F16 16 tensors (", "% of weights), F32 5 tensors", "bits / weight 16.0",
                       "model.layers.0.self_attn.q_proj.weight", "tiny.gguf"});
  EXPECT_EQ(text.out.find("model.safetensors"), std::string::npos) << "the tensors are in the .gguf file";
}

// A Q4_K_M file, as most are downloaded: info names the mix llama-quantize
// wrote (general.file_type) and each type's share, largest first.
TEST(GgufCli, ModelInfoShowsAQ4_K_MFilesMix) {
  TempDir dir;
  const fs::path gguf = convertToGguf(writeGgufParent(dir / "parent", "llama"), DType::Q4_K, dir / "tiny-q4_k_m.gguf", asQ4KM());
  const RunResult json = runAttnlab({"model", "info", gguf.string(), "--json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["dtype"], "mixed");
  std::map<std::string, int64_t> tensors;
  for (const nlohmann::json& s : j["storage"]) tensors[s["dtype"].get<std::string>()] = s["tensors"].get<int64_t>();
  // 2 layers: 7 matrices each, of them the second layer's attn_v and ffn_down Q6_K; the embeddings Q4_K, the head Q6_K.
  EXPECT_EQ(tensors, (std::map<std::string, int64_t>{{"Q4_K", 13}, {"Q6_K", 3}, {"F32", 5}}));
  // Q4_K is 4.5 bits a weight, Q6_K 6.5625: the file's average lies between.
  EXPECT_GT(j["bits_per_weight"].get<double>(), 4.5);
  EXPECT_LT(j["bits_per_weight"].get<double>(), 6.5625);
  const RunResult text = runAttnlab({"model", "info", gguf.string()});
  ASSERT_EQ(text.status, 0) << text.err;
  expectHas(text.out, {"Q4_K_M", "Q4_K 13 tensors (", "Q6_K 3 tensors (", "F32 5 tensors"});
}

TEST(GgufCli, ABadFileGetsOneLineAndNothingIsWritten) {
  TempDir dir;
  const fs::path gguf = convertToGguf(writeGgufParent(dir / "parent", "llama"), DType::F32, dir / "tiny.gguf");
  const std::string bytes = slurp(gguf);
  writeText(dir / "cut.gguf", bytes.substr(0, bytes.size() / 2));
  const RunResult info = runAttnlab({"model", "run", (dir / "cut.gguf").string(), "--text", "hi", "--out", (dir / "out").string()});
  EXPECT_EQ(info.status, 2);
  EXPECT_EQ(countLines(info.err), 1) << info.err;
  expectHas(info.err, {"cut.gguf", "truncated"});
  EXPECT_FALSE(fs::exists(dir / "out"));
  writeText(dir / "notes.gguf", "just some text, not a model");
  const RunResult notgguf = runAttnlab({"model", "info", (dir / "notes.gguf").string()});
  EXPECT_EQ(notgguf.status, 2);
  expectHas(notgguf.err, {"notes.gguf", "not a GGUF file"});
}

// A 4-bit file of TinyLlama-1.1B's shape (22 layers, d 2048, 32 query / 4
// key-value heads, SwiGLU 5632, vocabulary 32000): 128 tokens run within the
// file's size + 1 GiB of peak memory, so the weights were never expanded
// (as float32 they would take 4.4 GB). Its Q4_K blocks are written as bytes
// (a seeded scale, min and 4-bit values per block; quantizing 1.1 B values
// would take minutes): weights of σ ≈ 0.01 around 0.
TEST(GgufCli, AQ4KFileOfTinyLlamaShapeRunsWithinItsSizePlus1GiB) {
  constexpr int64_t layers = 22, d = 2048, heads = 32, kv = 4, ff = 5632, vocab = 32000, dh = d / heads;
  TempDir dir;
  std::vector<GgufTensorToWrite> tensors;
  const auto q4k = [&](const std::string& name, int64_t rows, int64_t cols) {
    GgufTensorToWrite t{name, {cols, rows}, DType::Q4_K, {}, {}};
    t.stored = [seed = tensors.size()](int64_t first, int64_t count, uint8_t* out) {
      std::mt19937_64 random(seed * 1000003 + static_cast<uint64_t>(first));
      for (int64_t b = 0; b < count / 256; ++b, out += 144) {
        for (int i = 4; i < 144; i += 8) {
          const uint64_t r = random();
          std::memcpy(out + i, &r, std::min(8, 144 - i));
        }
        const uint16_t scale = 0x068e, min = 0x1225;  // F16 1e-4 and 7.5e-4: w = 1e-4 · s · q − 7.5e-4 · m
        std::memcpy(out, &scale, 2);
        std::memcpy(out + 2, &min, 2);
      }
    };
    tensors.push_back(std::move(t));
  };
  const auto ones = [&](const std::string& name) {
    tensors.push_back({name, {d}, DType::F32, [](int64_t, int64_t count, float* out) { std::fill_n(out, count, 1.0f); }, {}});
  };
  q4k("token_embd.weight", vocab, d);
  for (int64_t l = 0; l < layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    ones(b + "attn_norm.weight");
    q4k(b + "attn_q.weight", d, d);
    q4k(b + "attn_k.weight", kv * dh, d);
    q4k(b + "attn_v.weight", kv * dh, d);
    q4k(b + "attn_output.weight", d, d);
    ones(b + "ffn_norm.weight");
    q4k(b + "ffn_gate.weight", ff, d);
    q4k(b + "ffn_up.weight", ff, d);
    q4k(b + "ffn_down.weight", d, ff);
  }
  ones("output_norm.weight");
  q4k("output.weight", vocab, d);
  // Byte-level pieces: the three specials, then the 256 byte symbols (one token per character of the text).
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
  for (const std::string& symbol : tok::bytesToUnicode()) pieces.push_back(symbol);
  const fs::path gguf = dir / "tinyllama-shape-q4_k.gguf";
  writeGguf(gguf, ggufLlamaKeys({layers, d, heads, kv, ff, 2048}, pieces), tensors);
  const double file = static_cast<double>(fs::file_size(gguf));
  ASSERT_GT(file, 550.0 * (1 << 20));  // 4.5 bits a weight: ~590 MiB

  std::string text;
  for (int i = 0; text.size() < 127; ++i) text += "the cat sat on the mat. "[i % 24];
  const RunResult r = runAttnlab({"model", "run", gguf.string(), "--text", text, "--out", (dir / "out").string(),
                                  "--maps", "pooled", "--predict-at", "last"}, {}, 600);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json meta = nlohmann::json::parse(slurp(dir / "out" / "meta.json"));
  EXPECT_EQ(meta["tokens"], 128);
  for (const nlohmann::json& e : meta["top_k"].back()) EXPECT_TRUE(std::isfinite(e["probability"].get<double>()));
  const double budget = file + double(1 << 30);
  EXPECT_GT(r.peak_rss_bytes, 0.0);
  EXPECT_LT(r.peak_rss_bytes, budget) << "peak RSS " << r.peak_rss_bytes / (1 << 20) << " MiB, file "
                                      << file / (1 << 20) << " MiB";
  std::printf("Q4_K TinyLlama shape, 128 tokens: file %.1f MiB, peak RSS %.1f MiB (budget %.1f MiB)\n",
              file / (1 << 20), r.peak_rss_bytes / (1 << 20), budget / (1 << 20));
}

}  // namespace
}  // namespace attn::gguf_cli_test
