// PLACEHOLDER (lead's local build only; replaced by the i15-tokenizer branch)
#pragma once
#include "engine/model/tokenizer.h"
#include <optional>
namespace attn {
struct HfTokenizer {
  std::unique_ptr<Tokenizer> tokenizer;
  int32_t bos = -1, eos = -1;
  bool add_bos = false;
};
HfTokenizer makeHfTokenizer(const std::string& tokenizer_json, const std::optional<std::string>& tokenizer_config,
                            const std::string& what_json, const std::string& what_config);
}  // namespace attn
