// Model folders with only SentencePiece's tokenizer.model (no tokenizer.json):
// engine/model/tokenizers/tokenizer_sp.cpp reads it with libsentencepiece. The model
// tests/data/sentencepiece/tokenizer.model and the ids in expected.json were
// written by scripts/make_sentencepiece_fixture.py with Python's
// sentencepiece (SentencePieceProcessor.encode_as_ids, the call transformers'
// slow LlamaTokenizer and GemmaTokenizer make); here the engine must give
// the same ids, decode them back, and the model loader must put bos in
// front as tokenizer_config.json says (add_bos_token, true by default).
#include "engine/error.h"
#include "engine/model/model.h"
#include "engine/model/tokenizers/tokenizer_json.h"

#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace attn {
namespace {

using Ids = std::vector<int32_t>;
using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kSpData = fs::path(ATTNLAB_SOURCE_DIR) / "tests" / "data" / "sentencepiece";

std::string spModelBytes() { return test::slurp(kSpData / "tokenizer.model"); }
json spExpected() { return json::parse(test::slurp(kSpData / "expected.json")); }

HfTokenizer loadSp(const std::optional<std::string>& config = std::nullopt) {
  return makeSentencePieceTokenizer(spModelBytes(), config, "tokenizer.model", "tokenizer_config.json");
}

TEST(TokenizerSentencePiece, IdsAsPythonSentencePieceGivesThem) {
  const HfTokenizer hf = loadSp();
  const Tokenizer& tok = *hf.tokenizer;
  const json e = spExpected();
  EXPECT_EQ(tok.vocabSize(), e.at("vocab_size").get<int32_t>());
  ASSERT_GE(e.at("cases").size(), 10u);
  for (const json& c : e.at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    EXPECT_EQ(tok.encode(text), c.at("ids").get<Ids>()) << "text " << c.at("text").dump();
    EXPECT_EQ(tok.decode(tok.encode(text)), c.at("decoded").get<std::string>()) << "text " << c.at("text").dump();
  }
  // whitespace alone is text: "   " → ▁ ▁ ▁ ▁ (the dummy prefix and three spaces)
  EXPECT_EQ(tok.encode("   ").size(), 4u);
  // special pieces by name; '▁' shown as a space; byte pieces as the byte
  EXPECT_EQ(tok.specialId("<s>"), 1);
  EXPECT_EQ(tok.specialId("</s>"), 2);
  EXPECT_EQ(tok.specialId("no such piece"), -1);
  EXPECT_EQ(tok.display(tok.specialId("▁the")), " the");
  EXPECT_EQ(tok.display(tok.specialId("<0x0A>")), "\n");
  EXPECT_EQ(tok.display(tok.specialId("<0xC3>")), "\\xC3");
  EXPECT_EQ(tok.display(99999), "<99999>");
  // bos from the model (bos_id 1), prepended by default
  EXPECT_EQ(hf.bos, e.at("bos_id").get<int32_t>());
  EXPECT_EQ(hf.eos, e.at("eos_id").get<int32_t>());
  EXPECT_TRUE(hf.add_bos);
  EXPECT_EQ(hf.before, (Ids{1}));
}

TEST(TokenizerSentencePiece, TokenizerConfig) {
  HfTokenizer hf = loadSp(R"({"add_bos_token": false, "bos_token": "<s>", "eos_token": {"content": "</s>"}})");
  EXPECT_FALSE(hf.add_bos);
  EXPECT_TRUE(hf.before.empty());
  EXPECT_EQ(hf.eos, 2);
  hf = loadSp(R"({"bos_token": "</s>"})");  // a named bos wins over the model's
  EXPECT_EQ(hf.bos, 2);
  EXPECT_EQ(hf.before, (Ids{2}));
  const auto refused = [](const std::string& config, const std::string& needle) {
    try {
      loadSp(config);
      ADD_FAILURE() << "no InputError for " << config;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  hf = loadSp(R"({"add_eos_token": true})");  // the text, then eos: [bos] … [eos]
  EXPECT_EQ(hf.after, (Ids{2}));
  EXPECT_EQ(hf.before, (Ids{1}));
  EXPECT_FALSE(hf.add_bos);
  refused(R"({"bos_token": "<bos>"})", "tokenizer_config.json: bos_token: '<bos>' is not a piece");
  refused(R"({"add_bos_token": "yes"})", "add_bos_token: expected true or false");
  refused("{", "tokenizer_config.json: malformed JSON");
  try {
    makeSentencePieceTokenizer("not a model", std::nullopt, "tokenizer.model", "tokenizer_config.json");
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.model: not a SentencePiece model"), std::string::npos) << e.what();
  }
}

// A one-layer LLaMA checkpoint over the SentencePiece vocabulary (340),
// tokenizer.json removed, tokenizer.model beside config.json.
void writeSentencePieceLlama(const fs::path& dir, const std::optional<std::string>& tokenizer_config) {
  const int64_t d = 8, ff = 16, V = 340;
  const json config = {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"num_hidden_layers", 1},
                       {"num_attention_heads", 2}, {"num_key_value_heads", 2}, {"hidden_size", d},
                       {"intermediate_size", ff}, {"max_position_embeddings", 32}, {"vocab_size", V},
                       {"hidden_act", "silu"}, {"rms_norm_eps", 1e-5}, {"rope_theta", 10000.0},
                       {"tie_word_embeddings", false}, {"bos_token_id", 1}, {"eos_token_id", 2}};
  const std::string L = "model.layers.0.";
  test::writeCheckpoint(dir, config,
                        {{"model.embed_tokens.weight", {V, d}},
                         {L + "self_attn.q_proj.weight", {d, d}},
                         {L + "self_attn.k_proj.weight", {d, d}},
                         {L + "self_attn.v_proj.weight", {d, d}},
                         {L + "self_attn.o_proj.weight", {d, d}},
                         {L + "mlp.gate_proj.weight", {ff, d}},
                         {L + "mlp.up_proj.weight", {ff, d}},
                         {L + "mlp.down_proj.weight", {d, ff}},
                         {L + "input_layernorm.weight", {d}, 0.1f, 1.0f},
                         {L + "post_attention_layernorm.weight", {d}, 0.1f, 1.0f},
                         {"model.norm.weight", {d}, 0.1f, 1.0f},
                         {"lm_head.weight", {V, d}}});
  fs::remove(dir / "tokenizer.json");
  fs::remove(dir / "tokenizer_config.json");
  if (tokenizer_config) std::ofstream(dir / "tokenizer_config.json") << *tokenizer_config;
  fs::copy_file(kSpData / "tokenizer.model", dir / "tokenizer.model");
}

TEST(TokenizerSentencePiece, ModelLoaderUsesTokenizerModel) {
  const json e = spExpected();
  const json& first = e.at("cases").at(0);
  Ids ids = first.at("ids").get<Ids>();
  test::TempDir dir;
  writeSentencePieceLlama(dir.path, std::nullopt);  // no tokenizer_config.json: bos by default
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  Ids with_bos = {1};
  with_bos.insert(with_bos.end(), ids.begin(), ids.end());
  EXPECT_EQ(runModel(*m, first.at("text").get<std::string>()).ids, with_bos);
  EXPECT_EQ(runModel(*m, "   ").ids.size(), 5u);  // <s> ▁ ▁ ▁ ▁: whitespace is text

  test::TempDir no_bos;
  writeSentencePieceLlama(no_bos.path, R"({"add_bos_token": false})");
  EXPECT_EQ(runModel(*loadModel(filesOnDisk(no_bos.path.string())), first.at("text").get<std::string>()).ids, ids);

  // tokenizer.json, when there, is the one read
  test::TempDir both;
  writeSentencePieceLlama(both.path, std::nullopt);
  std::ofstream(both / "tokenizer.json") << "{";
  try {
    loadModel(filesOnDisk(both.path.string()));
    ADD_FAILURE() << "tokenizer.json was not read";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("tokenizer.json: malformed JSON"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace attn
