// Files embedded byte for byte at build time (scripts/cmake/embed_binary.cmake):
// a table of {name, begin, end} ending with a null entry, and its count.
#pragma once

#include <cstdint>
#include <string>

namespace attn {

struct EmbeddedFile {
  const char* name;
  const uint8_t* begin;
  const uint8_t* end;
};

// The entry named `name` in table[0 … count − 1], or nullptr.
inline const EmbeddedFile* findEmbeddedFile(const EmbeddedFile* table, uint64_t count, const std::string& name) {
  for (uint64_t i = 0; i < count; ++i)
    if (name == table[i].name) return &table[i];
  return nullptr;
}

}  // namespace attn
