// The GGUF reader (engine/model/checkpoint/gguf.h): a round trip through the
// test writer with every metadata type, and every bad file named in one line:
// truncated, wrong magic, old versions, huge counts, misaligned and
// overlapping offsets, unknown and unsupported types.
#include "engine/model/checkpoint/gguf.h"

#include "tests/gguf_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <cstring>

namespace attn::gguf_test {
namespace {

using namespace attn::test;

GgufHeader parse(const std::string& bytes) {
  return parseGgufHeader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "x.gguf");
}

std::string headerError(const std::string& bytes) {
  try {
    parse(bytes);
  } catch (const InputError& e) {
    EXPECT_EQ(test::countLines(e.what()), 0) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

std::vector<float> ramp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 0.25f * static_cast<float>(i) - 3.0f;
  return v;
}

// Two tensors: a [3, 64] F32 matrix and a [64] F16 vector.
std::vector<GgufTensorOut> twoTensors() {
  return {{"blk.0.attn_q.weight", {64, 3}, DType::F32, ramp(192)}, {"output_norm.weight", {64}, DType::F16, ramp(64)}};
}

// The byte offset just after the first occurrence of `name` as a GGUF string (its u64 length and bytes).
size_t after(const std::string& bytes, const std::string& name) {
  const size_t at = bytes.find(name);
  EXPECT_NE(at, std::string::npos) << name;
  return at + name.size();
}

template <class T>
void patch(std::string& bytes, size_t at, T v) {
  std::memcpy(bytes.data() + at, &v, sizeof(T));
}

TEST(Gguf, RoundTripsEveryMetadataTypeAndTheTensorsInfo) {
  const std::vector<GgufKv> kv = {
      {"a.u8", ggufInt(GgufType::UInt8, 200)},          {"a.i8", ggufInt(GgufType::Int8, -100)},
      {"a.u16", ggufInt(GgufType::UInt16, 60000)},      {"a.i16", ggufInt(GgufType::Int16, -30000)},
      {"a.u32", ggufInt(GgufType::UInt32, 4000000000)}, {"a.i32", ggufInt(GgufType::Int32, -2000000000)},
      {"a.u64", ggufInt(GgufType::UInt64, 1ll << 50)},  {"a.i64", ggufInt(GgufType::Int64, -(1ll << 50))},
      {"a.f32", ggufFloat(0.5)},                        {"a.bool", ggufInt(GgufType::Bool, 1)},
      {"a.str", ggufString("héllo")},                   {"a.strs", ggufStrings({"x", "", "zz"})},
      {"a.floats", ggufFloats({1.5f, -2.0f})},          {"a.ints", ggufInts(GgufType::Int32, {7, -8, 9})},
  };
  const GgufHeader h = parse(ggufBytes(kv, twoTensors()));
  EXPECT_EQ(h.version, 3u);
  EXPECT_EQ(h.metadata.size(), kv.size());
  EXPECT_EQ(h.find("a.u8")->integer, 200);
  EXPECT_EQ(h.find("a.i8")->integer, -100);
  EXPECT_EQ(h.find("a.u16")->integer, 60000);
  EXPECT_EQ(h.find("a.i16")->integer, -30000);
  EXPECT_EQ(h.find("a.u32")->integer, 4000000000);
  EXPECT_EQ(h.find("a.i32")->integer, -2000000000);
  EXPECT_EQ(h.find("a.u64")->integer, 1ll << 50);
  EXPECT_EQ(h.find("a.i64")->integer, -(1ll << 50));
  EXPECT_EQ(h.find("a.f32")->number, 0.5);
  EXPECT_TRUE(h.find("a.f32")->isFloat());
  EXPECT_EQ(h.find("a.bool")->type, GgufType::Bool);
  EXPECT_EQ(h.find("a.str")->text, "héllo");
  EXPECT_EQ(h.find("a.strs")->texts, (std::vector<std::string>{"x", "", "zz"}));
  EXPECT_EQ(h.find("a.floats")->numbers, (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(h.find("a.ints")->integers, (std::vector<int64_t>{7, -8, 9}));
  EXPECT_EQ(h.find("a.ints")->element, GgufType::Int32);
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[0].name, "blk.0.attn_q.weight");
  EXPECT_EQ(h.tensors[0].dims, (std::vector<int64_t>{64, 3}));
  EXPECT_EQ(h.tensors[0].type, DType::F32);
  EXPECT_EQ(h.tensors[0].bytes, 192u * 4);
  EXPECT_EQ(h.tensors[1].type, DType::F16);
  EXPECT_EQ(h.tensors[1].bytes, 128u);
  EXPECT_EQ(h.tensors[1].offset % 32, 0u);
  EXPECT_EQ(h.data_start % 32, 0u);
}

TEST(Gguf, RefusesWrongMagicOldVersionsAndTruncation) {
  const std::string good = ggufBytes({{"general.architecture", ggufString("llama")}}, twoTensors());
  expectHas(headerError("GGUX" + good.substr(4)), {"x.gguf", "not a GGUF file"});
  expectHas(headerError("GG"), {"x.gguf", "not a GGUF file"});
  expectHas(headerError(ggufBytes({}, twoTensors(), 2)), {"GGUF version 2", "expected version 3"});
  expectHas(headerError(ggufBytes({}, twoTensors(), 1)), {"GGUF version 1", "not supported"});
  expectHas(headerError(ggufBytes({}, twoTensors(), 7)), {"GGUF version 7"});
  // Cut anywhere in the header: one line saying what ran past the end.
  for (const size_t cut : {size_t{6}, size_t{20}, size_t{30}, after(good, "llama") - 2, after(good, "attn_q.weight") + 5})
    expectHas(headerError(good.substr(0, cut)), {"x.gguf", "past the end", "truncated"});
  // Cut in the data section: the last tensor's bytes run past it.
  expectHas(headerError(good.substr(0, good.size() - 10)), {"tensor 'output_norm.weight'", "past the end of the data section"});
}

TEST(Gguf, RefusesHugeCountsBeforeAllocating) {
  std::string b = ggufBytes({{"k", ggufString("v")}}, twoTensors());
  std::string huge = b;
  patch<uint64_t>(huge, 8, uint64_t{1} << 40);  // tensor_count
  expectHas(headerError(huge), {"tensor_count 1099511627776", "over the limit"});
  huge = b;
  patch<uint64_t>(huge, 16, uint64_t{1} << 62);  // metadata_kv_count
  expectHas(headerError(huge), {"metadata_kv_count", "over the limit"});
  huge = b;
  patch<uint64_t>(huge, 24, uint64_t{1} << 60);  // the first key's length
  expectHas(headerError(huge), {"metadata key 0", "over the limit"});
  // An array whose count is past the bytes left.
  std::string arr = ggufBytes({{"list", ggufInts(GgufType::Int32, {1, 2})}}, {});
  patch<uint64_t>(arr, after(arr, "list") + 8, uint64_t{1} << 20);
  expectHas(headerError(arr), {"metadata 'list'", "past the end"});
  // A dimension too large.
  std::string dims = b;
  patch<uint64_t>(dims, after(dims, "attn_q.weight") + 4, uint64_t{1} << 50);
  expectHas(headerError(dims), {"tensor 'blk.0.attn_q.weight'", "dimensions too large"});
}

TEST(Gguf, RefusesUnknownTypesByName) {
  const std::string b = ggufBytes({{"k", ggufString("v")}}, twoTensors());
  const size_t type_at = after(b, "attn_q.weight") + 4 + 2 * 8;  // n_dims, ne[2]
  std::string t = b;
  patch<uint32_t>(t, type_at, 16);  // IQ2_XXS
  expectHas(headerError(t), {"tensor 'blk.0.attn_q.weight'", "IQ2_XXS is not supported", "Q4_K", "IQ4_XS"});
  patch<uint32_t>(t, type_at, 99);
  expectHas(headerError(t), {"type 99 is not a ggml type"});
  std::string v = b;
  patch<uint32_t>(v, after(v, "k"), 13);  // a value type past float64
  expectHas(headerError(v), {"metadata 'k'", "value type 13"});
  std::string flag = ggufBytes({{"f", ggufInt(GgufType::Bool, 1)}}, {});
  patch<uint8_t>(flag, after(flag, "f") + 4, 7);
  expectHas(headerError(flag), {"metadata 'f'", "bool must be 0 or 1"});
}

TEST(Gguf, RefusesMisalignedOverlappingAndDuplicateTensors) {
  // general.alignment 64 over offsets written for 32: the second tensor's 768 is fine, so shift it by 32.
  std::string b = ggufBytes({{"general.alignment", ggufInt(GgufType::UInt32, 64)}}, twoTensors(), 3, 64);
  patch<uint64_t>(b, after(b, "output_norm.weight") + 4 + 8 + 4, 768 + 32);
  expectHas(headerError(b), {"tensor 'output_norm.weight'", "offset 800", "multiple of general.alignment 64"});
  expectHas(headerError(ggufBytes({{"general.alignment", ggufInt(GgufType::UInt32, 48)}}, twoTensors())),
            {"general.alignment", "power of two"});
  std::string overlap = ggufBytes({}, twoTensors());
  patch<uint64_t>(overlap, after(overlap, "output_norm.weight") + 4 + 8 + 4, 32);
  expectHas(headerError(overlap), {"'blk.0.attn_q.weight' and 'output_norm.weight' overlap"});
  std::vector<GgufTensorOut> twice = twoTensors();
  twice[1].name = twice[0].name;
  twice[1].dims = {64, 3};
  twice[1].values = ramp(192);
  expectHas(headerError(ggufBytes({}, twice)), {"tensor 'blk.0.attn_q.weight' appears twice"});
  expectHas(headerError(ggufBytes({{"k", ggufString("a")}, {"k", ggufString("b")}}, {})), {"metadata key 'k' appears twice"});
  // A row that is not a whole number of blocks.
  std::vector<GgufTensorOut> partial = {{"w", {16, 2}, DType::F32, ramp(32)}};
  std::string q = ggufBytes({}, partial);
  patch<uint32_t>(q, after(q, "w") + 4 + 2 * 8, 8);  // Q8_0: blocks of 32
  expectHas(headerError(q), {"tensor 'w'", "ne[0] = 16", "Q8_0 blocks of 32"});
}

}  // namespace
}  // namespace attn::gguf_test
