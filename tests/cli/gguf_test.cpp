// GGUF files through the real binary: `model info`, `model run` and `model
// generate` open a .gguf file as a user would give it, info shows how its
// weights are stored, and a bad file gets one line naming it, with nothing written.
#include "tests/gguf_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

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

}  // namespace
}  // namespace attn::gguf_cli_test
