// PLACEHOLDER
#include "engine/model/tokenizer_json.h"
#include <nlohmann/json.hpp>
namespace attn {
HfTokenizer makeHfTokenizer(const std::string& tokenizer_json, const std::optional<std::string>& tokenizer_config,
                            const std::string& what_json, const std::string&) {
  const nlohmann::json j = nlohmann::json::parse(tokenizer_json);
  std::string merges;
  for (const auto& mg : j["model"]["merges"]) merges += mg.get<std::string>() + "\n";
  HfTokenizer t;
  t.tokenizer = makeGpt2Tokenizer(j["model"]["vocab"].dump(), merges, what_json, what_json);
  t.bos = t.tokenizer->specialId("<s>");
  t.eos = t.tokenizer->specialId("</s>");
  if (tokenizer_config) t.add_bos = nlohmann::json::parse(*tokenizer_config).value("add_bos_token", false);
  return t;
}
}  // namespace attn
