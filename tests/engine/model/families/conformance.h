// The checkpoints the family conformance suite (conformance_test.cpp) runs its
// checks on: each family's test file writes its own, in the family's exact
// tensor names and config.json, at the dtype and seed the suite asks for.
#pragma once

#include "tests/model_fixture.h"

#include <filesystem>

namespace attn::test {

struct FamilyFixture {
  DType dtype = DType::F32;  // F16/BF16: the weights rounded to it and saved so
  uint64_t seed = 1;
};

TinyModel writeModernBertFixture(const std::filesystem::path& dir, const FamilyFixture& f);
TinyModel writeGemmaFixture(const std::filesystem::path& dir, const FamilyFixture& f, int generation);  // 1, 2 or 3
TinyModel writePhiFixture(const std::filesystem::path& dir, const FamilyFixture& f);
TinyModel writeGptNeoxFixture(const std::filesystem::path& dir, const FamilyFixture& f);
TinyModel writeGptBigcodeFixture(const std::filesystem::path& dir, const FamilyFixture& f);
TinyModel writeOptFixture(const std::filesystem::path& dir, const FamilyFixture& f);
TinyModel writeBloomFixture(const std::filesystem::path& dir, const FamilyFixture& f);
TinyModel writeQwen3Fixture(const std::filesystem::path& dir, const FamilyFixture& f);
TinyModel writeOlmo2Fixture(const std::filesystem::path& dir, const FamilyFixture& f);
TinyModel writeStarcoder2Fixture(const std::filesystem::path& dir, const FamilyFixture& f);
TinyModel writePhi3Fixture(const std::filesystem::path& dir, const FamilyFixture& f);
TinyModel writeT5Fixture(const std::filesystem::path& dir, const FamilyFixture& f);
TinyModel writeBartFixture(const std::filesystem::path& dir, const FamilyFixture& f);
TinyModel writeVitFixture(const std::filesystem::path& dir, const FamilyFixture& f);

}  // namespace attn::test
