// LOCAL STUB (not committed): the helper's real file replaces it.
#pragma once
#include "engine/model/checkpoint/gguf.h"
#include "engine/model/tokenizers/tokenizer_json.h"
namespace attn {
HfTokenizer makeGgufTokenizer(const GgufHeader& h, const std::string& what);
}
