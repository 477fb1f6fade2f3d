// The safetensors reader (engine/model/checkpoint/safetensors.h): a round trip
// through the writer with F32 views into the map and F16/BF16 converted, BF16
// rounding across the writer's chunks, and every bad header and truncated file
// named in one line.
#include "engine/model/checkpoint/safetensors.h"
#include "engine/model/model.h"

#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;

namespace attn::safetensors_test {
namespace {

using test::TinyModel;

std::string fileBytes(const std::string& header, const std::string& data) {
  std::string s(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(s.data(), &n, 8);
  return s + header + data;
}

std::string headerError(const std::string& bytes) {
  try {
    parseSafetensorsHeader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "x.safetensors");
  } catch (const InputError& e) {
    EXPECT_EQ(test::countLines(e.what()), 0);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(Safetensors, RoundTripAndZeroCopy) {
  test::TempDir dir;
  const std::vector<float> a = {1, -2, 3.5f, 4, 5, 6}, b = {0.5f, -0.25f, 1024.0f};
  writeSafetensors(dir / "t.safetensors",
                   {tensorFromValues("a", DType::F32, {2, 3}, a), tensorFromValues("b", DType::F16, {3}, b),
                    tensorFromValues("c", DType::BF16, {3}, b), tensorFromValues("e", DType::F32, {0}, {})},
                   {{"format", "pt"}});
  const auto f = SafetensorsFile::open((dir / "t.safetensors").string());
  EXPECT_EQ(f->header().data_start % 8, 0u);
  EXPECT_EQ(f->header().metadata.at("format"), "pt");
  std::vector<float> storage;
  const float* pa = f->floats(*f->find("a"), storage);
  EXPECT_TRUE(storage.empty());  // F32, aligned: a pointer into the map
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(pa), f->data(*f->find("a")));
  EXPECT_EQ(std::vector<float>(pa, pa + 6), a);
  for (const char* n : {"b", "c"}) {
    std::vector<float> st;
    const float* p = f->floats(*f->find(n), st);
    EXPECT_EQ(std::vector<float>(p, p + 3), b) << n;  // exactly representable in both
  }
  EXPECT_EQ(f->find("e")->elements(), 0);
  EXPECT_EQ(f->find("missing"), nullptr);
}

// The bench's TinyLlama-shaped checkpoint is BF16 written chunk by chunk:
// a tensor longer than the writer's 2^20-float chunk is filled at both
// offsets, and values between two BF16 numbers round to the nearest, ties
// to the even mantissa (bf16 keeps 8 significant bits: 1 + 2^-7 is 1's neighbour).
TEST(Safetensors, Bf16RoundsToNearestEvenAcrossChunks) {
  test::TempDir dir;
  const int64_t n = (int64_t{1} << 20) + 4;
  const std::vector<float> given = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-8f + 0x1p-16f, -(1.0f + 3 * 0x1p-8f)};
  const std::vector<float> stored = {1.0f, 1.0f + 0x1p-6f, 1.0f + 0x1p-7f, -(1.0f + 0x1p-6f)};
  const int64_t tail = n - static_cast<int64_t>(given.size());
  auto value = [&](int64_t e) { return e >= tail ? given[static_cast<size_t>(e - tail)] : static_cast<float>(e % 256); };
  writeSafetensors(dir / "t.safetensors", {{"t", DType::BF16, {n}, [&](int64_t first, int64_t count, float* out) {
                                              for (int64_t i = 0; i < count; ++i) out[i] = value(first + i);
                                            }}});
  const auto f = SafetensorsFile::open((dir / "t.safetensors").string());
  EXPECT_EQ(f->find("t")->end - f->find("t")->begin, static_cast<uint64_t>(2 * n));
  std::vector<float> storage;
  const float* p = f->floats(*f->find("t"), storage);
  int64_t wrong = 0;
  for (int64_t e = 0; e < tail; ++e) wrong += p[e] != static_cast<float>(e % 256);  // exact in bf16
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(std::vector<float>(p + tail, p + n), stored);
}

TEST(Safetensors, BadHeadersNameTheProblem) {
  const std::string ok = R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";
  EXPECT_NO_THROW(parseSafetensorsHeader(reinterpret_cast<const uint8_t*>(fileBytes(ok, std::string(8, 'x')).data()),
                                         fileBytes(ok, std::string(8, 'x')).size(), "x"));
  EXPECT_NE(headerError("abc").find("shorter than the 8-byte header length"), std::string::npos);
  // header longer than the file
  std::string longer = fileBytes(ok, "");
  longer.resize(longer.size() - 5);
  EXPECT_NE(headerError(longer).find("runs past the end of the file"), std::string::npos);
  // absurd header length
  std::string absurd(16, '\0');
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(absurd.data(), &huge, 8);
  EXPECT_NE(headerError(absurd).find("over the limit"), std::string::npos);
  EXPECT_NE(headerError(fileBytes("{\"t\": ", "")).find("not valid JSON"), std::string::npos);
  EXPECT_NE(headerError(fileBytes("[1, 2]", "")).find("must be a JSON object"), std::string::npos);
  // offsets outside the data
  EXPECT_NE(headerError(fileBytes(ok, std::string(4, 'x'))).find("run past the end of the data section"),
            std::string::npos);
  // overlapping offsets
  const std::string overlap = R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                  "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})";
  const std::string e = headerError(fileBytes(overlap, std::string(12, 'x')));
  EXPECT_NE(e.find("overlap"), std::string::npos);
  EXPECT_NE(e.find("'a'"), std::string::npos);
  // dtype / shape / byte count
  const std::string count = R"({"h.0.attn.c_attn.weight": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 100]}})";
  EXPECT_EQ(headerError(fileBytes(count, std::string(100, 'x'))),
            "x.safetensors: tensor 'h.0.attn.c_attn.weight': data_offsets [0, 100] hold 100 bytes, but F32 [3, 4] "
            "needs 48");
  const std::string dtype = R"({"t": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 8]}})";
  EXPECT_NE(headerError(fileBytes(dtype, std::string(8, 'x'))).find("dtype 'Q4' is not supported"), std::string::npos);
  const std::string shape = R"({"t": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})";
  EXPECT_NE(headerError(fileBytes(shape, std::string(8, 'x'))).find("non-negative"), std::string::npos);
  const std::string big = R"({"t": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]}})";
  EXPECT_NE(headerError(fileBytes(big, std::string(8, 'x'))).find("too large"), std::string::npos);
  const std::string backwards = R"({"t": {"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}})";
  EXPECT_NE(headerError(fileBytes(backwards, std::string(8, 'x'))).find("end before they begin"), std::string::npos);
}

TEST(ModelErrors, TruncatedWeights) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  fs::resize_file(dir / "model.safetensors", fs::file_size(dir / "model.safetensors") - 100);
  test::expectHas(test::loadError(dir.path), {"model.safetensors", "past the end of the data section", "truncated"});
  fs::resize_file(dir / "model.safetensors", 5);
  test::expectHas(test::loadError(dir.path), {"model.safetensors", "shorter than the 8-byte header"});
}

}  // namespace
}  // namespace attn::safetensors_test
