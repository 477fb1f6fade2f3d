// LOCAL STUB (not committed)
#include "engine/model/tokenizers/tokenizer_gguf.h"
#include <nlohmann/json.hpp>
namespace attn {
HfTokenizer makeGgufTokenizer(const GgufHeader& h, const std::string& what) {
  const GgufValue* tokens = h.find("tokenizer.ggml.tokens");
  const GgufValue* merges = h.find("tokenizer.ggml.merges");
  const GgufValue* types = h.find("tokenizer.ggml.token_type");
  if (!tokens || !merges || !types) throw InputError(what + ": stub tokenizer needs tokens");
  nlohmann::json vocab = nlohmann::json::object(), added = nlohmann::json::array();
  for (size_t i = 0; i < tokens->texts.size(); ++i) {
    vocab[tokens->texts[i]] = i;
    if (types->integers[i] == 3) added.push_back({{"id", i}, {"content", tokens->texts[i]}, {"single_word", false}, {"lstrip", false}, {"rstrip", false}, {"normalized", false}, {"special", true}});
  }
  const nlohmann::json tok = {{"version", "1.0"}, {"added_tokens", added}, {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor", nullptr}, {"decoder", nullptr},
      {"model", {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr}, {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false}, {"vocab", vocab}, {"merges", merges->texts}}}};
  return makeHfTokenizer(tok.dump(), std::string(R"({"add_bos_token": true, "bos_token": "<s>", "eos_token": "</s>"})"), what, what);
}
}
