// Attention maps from the user's files (engine/model/checkpoint/attention_file.h):
// .npy, .npz (stored and deflated, zip64 fields) and .safetensors written
// here byte by byte, every accepted dtype and rank read back to the exact
// floats (16-bit values against a plain-loop decoding), the choice of an
// array, every refusal in one line naming the file and the field, the
// check of a map's weights and the softmax of scores, and the token lists.
#include "engine/model/checkpoint/attention_file.h"

#include "engine/error.h"
#include "engine/npy.h"

#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>

namespace fs = std::filesystem;

namespace attn::attention_file_test {
namespace {

// [SECTION] Writing the files

// float16 bits to float by the definition: sign, 5 exponent bits (bias 15), 10 fraction bits.
float halfReference(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1F, fraction = h & 0x3FF;
  double v;
  if (exponent == 0) v = std::ldexp(fraction, -24);  // subnormal: fraction · 2^-14 · 2^-10
  else if (exponent == 31) v = fraction ? std::numeric_limits<double>::quiet_NaN() : HUGE_VAL;
  else v = std::ldexp(1024 + fraction, exponent - 25);
  return static_cast<float>(sign ? -v : v);
}
// bfloat16 bits to float: the top 16 bits of a float32.
float bfloatReference(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Exact, with any NaN equal to any NaN (a conversion may quiet a signalling one).
void expectSameFloats(const float* got, const std::vector<float>& want, int64_t offset, int64_t count,
                      const std::string& what) {
  for (int64_t i = 0; i < count; ++i) {
    const float g = got[i], w = want[static_cast<size_t>(offset + i)];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << what << " element " << offset + i;
      continue;
    }
    ASSERT_EQ(std::bit_cast<uint32_t>(g), std::bit_cast<uint32_t>(w)) << what << " element " << offset + i << ": " << g
                                                                      << " vs " << w;
  }
}

std::string le(uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}

// A .npy: magic, version, header length (2 bytes in 1.0, 4 in 2.0 and 3.0), the dict padded to 64, the data.
std::string npy(const std::string& descr, const std::vector<int64_t>& shape, const std::string& data, int version = 1,
                bool fortran = false) {
  std::string dims = "(";
  for (const int64_t d : shape) dims += std::to_string(d) + (shape.size() == 1 ? "," : ", ");
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  dims += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + dims + ", }";
  const size_t prefix = version == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  return std::string("\x93NUMPY", 6) + static_cast<char>(version) + '\0' + le(header.size(), version == 1 ? 2 : 4) +
         header + data;
}

std::string raw(const std::vector<float>& v) { return {reinterpret_cast<const char*>(v.data()), v.size() * 4}; }
std::string raw(const std::vector<uint16_t>& v) { return {reinterpret_cast<const char*>(v.data()), v.size() * 2}; }

std::string deflated(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct Member {
  std::string name;  // "attention.npy"
  std::string data;  // uncompressed
  bool deflate = false;
};

// A ZIP as numpy's savez writes it (stored or deflated members); `zip64`
// masks every size and offset as 0xFFFFFFFF and gives them in zip64 fields
// and a zip64 end record, as numpy does for large members.
std::string zip(const std::vector<Member>& members, bool zip64 = false) {
  std::string out, central;
  for (const Member& m : members) {
    const std::string body = m.deflate ? deflated(m.data) : m.data;
    const uint64_t crc = crc32_z(0, reinterpret_cast<const Bytef*>(m.data.data()), m.data.size());
    const uint64_t method = m.deflate ? 8 : 0, offset = out.size();
    const auto sizes = [&] { return zip64 ? le(0xFFFFFFFF, 4) + le(0xFFFFFFFF, 4) : le(body.size(), 4) + le(m.data.size(), 4); };
    const std::string local_extra = zip64 ? le(1, 2) + le(16, 2) + le(m.data.size(), 8) + le(body.size(), 8) : "";
    out += le(0x04034b50, 4) + le(45, 2) + le(0, 2) + le(method, 2) + le(0, 4) + le(crc, 4) + sizes() +
           le(m.name.size(), 2) + le(local_extra.size(), 2) + m.name + local_extra + body;
    const std::string extra = zip64 ? le(1, 2) + le(24, 2) + le(m.data.size(), 8) + le(body.size(), 8) + le(offset, 8) : "";
    central += le(0x02014b50, 4) + le(45, 2) + le(45, 2) + le(0, 2) + le(method, 2) + le(0, 4) + le(crc, 4) + sizes() +
               le(m.name.size(), 2) + le(extra.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
               le(zip64 ? 0xFFFFFFFF : offset, 4) + m.name + extra;
  }
  const uint64_t start = out.size(), count = members.size();
  out += central;
  if (zip64) {
    const uint64_t record = out.size();
    out += le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) + le(count, 8) + le(count, 8) +
           le(central.size(), 8) + le(start, 8);
    out += le(0x07064b50, 4) + le(0, 4) + le(record, 8) + le(1, 4);
    return out + le(0x06054b50, 4) + le(0, 4) + le(0xFFFF, 2) + le(0xFFFF, 2) + le(0xFFFFFFFF, 4) +
           le(0xFFFFFFFF, 4) + le(0, 2);
  }
  return out + le(0x06054b50, 4) + le(0, 4) + le(count, 2) + le(count, 2) + le(central.size(), 4) + le(start, 4) +
         le(0, 2);
}

fs::path write(const test::TempDir& dir, const std::string& name, const std::string& bytes) {
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

std::string openError(const fs::path& p, const std::string& name = "") {
  try {
    attentionMaps(FloatTensor::open(p, "--attention", name), "--attention");
  } catch (const InputError& e) {
    EXPECT_EQ(test::countLines(e.what()), 0) << e.what();
    // The file (and the array in it), then the field.
    EXPECT_EQ(std::string(e.what()).rfind(p.string(), 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(": --attention: "), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << p << ": no error";
  return "";
}

// Random float32s and special ones (zeros of both signs, a subnormal, the largest, −inf).
std::vector<float> floats(int64_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-3, 3);
  std::vector<float> f(static_cast<size_t>(n));
  for (float& x : f) x = u(rng);
  const float specials[] = {0.0f, -0.0f, 1e-40f, std::numeric_limits<float>::max(), -HUGE_VALF};
  std::copy(std::begin(specials), std::end(specials), f.begin());
  return f;
}
// All 65,536 bit patterns of a 16-bit type, shuffled.
std::vector<uint16_t> everyPattern(int64_t n) {
  std::vector<uint16_t> bits(static_cast<size_t>(n));
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i * 40503u);  // odd: a permutation of 2^16
  return bits;
}

// [SECTION] Reading back

struct Case {
  std::string label;
  fs::path path;
  std::vector<float> want;
  DType dtype;
};

// Each rank's layout, [L, L] · [heads, L, L] · [layers, heads, Lq, Lk], of 2^16 elements.
const std::vector<std::vector<int64_t>> kShapes = {{256, 256}, {4, 128, 128}, {2, 2, 64, 256}};

TEST(AttentionFile, EveryDtypeAndRankReadsBackExactly) {
  test::TempDir dir;
  const int64_t n = 1 << 16;
  const std::vector<float> f = floats(n);
  const std::vector<uint16_t> bits = everyPattern(n);
  std::vector<float> half, bfloat;
  for (const uint16_t b : bits) half.push_back(halfReference(b)), bfloat.push_back(bfloatReference(b));
  std::vector<Case> cases;
  for (size_t s = 0; s < kShapes.size(); ++s) {
    const std::vector<int64_t>& shape = kShapes[s];
    const std::string r = std::to_string(shape.size());
    const auto add = [&](const std::string& label, const std::string& bytes, std::vector<float> want, DType t) {
      cases.push_back({label + " rank " + r, write(dir, label + r, bytes), std::move(want), t});
    };
    add("npy <f4 v1", npy("<f4", shape, raw(f)), f, DType::F32);
    add("npy <f2 v1", npy("<f2", shape, raw(bits)), half, DType::F16);
    add("npy =f4 v2", npy("=f4", shape, raw(f), 2), f, DType::F32);
    add("npy |f2 v3", npy("|f2", shape, raw(bits), 3), half, DType::F16);
    add("npz stored <f4", zip({{"attention.npy", npy("<f4", shape, raw(f))}}), f, DType::F32);
    add("npz deflated <f2", zip({{"attention.npy", npy("<f2", shape, raw(bits)), true}}), half, DType::F16);
    add("npz zip64 deflated <f4", zip({{"attention.npy", npy("<f4", shape, raw(f)), true}}, true), f, DType::F32);
    add("npz zip64 stored <f2", zip({{"attention.npy", npy("<f2", shape, raw(bits))}}, true), half, DType::F16);
    const fs::path st = dir / ("st" + r + ".safetensors");
    // The writer rounds floats to 16 bits: every pattern but NaN's comes back as itself.
    std::vector<float> half_in = half, bfloat_in = bfloat;
    for (float& x : half_in) x = std::isnan(x) ? 0.0f : x;
    for (float& x : bfloat_in) x = std::isnan(x) ? 0.0f : x;
    writeSafetensors(st, {tensorFromValues("f32", DType::F32, shape, f),
                          tensorFromValues("f16", DType::F16, shape, half_in),
                          tensorFromValues("bf16", DType::BF16, shape, bfloat_in)});
    cases.push_back({"safetensors F32 rank " + r, st, f, DType::F32});
    cases.push_back({"safetensors F16 rank " + r, st, half_in, DType::F16});
    cases.push_back({"safetensors BF16 rank " + r, st, bfloat_in, DType::BF16});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    const std::string name = c.label.starts_with("safetensors") ? (c.dtype == DType::F32 ? "f32" : c.dtype == DType::F16 ? "f16" : "bf16") : "";
    FloatTensor t = FloatTensor::open(c.path, "--attention", name);
    EXPECT_EQ(t.dtype(), c.dtype);
    EXPECT_EQ(t.elements(), n);
    const std::vector<int64_t> shape = t.shape();
    const AttentionMaps a = attentionMaps(std::move(t), "--attention");
    EXPECT_EQ(a.layers, shape.size() == 4 ? shape[0] : 1);
    EXPECT_EQ(a.heads, shape.size() >= 3 ? shape[shape.size() - 3] : 1);
    EXPECT_EQ(a.rows, shape[shape.size() - 2]);
    EXPECT_EQ(a.cols, shape.back());
    for (int64_t l = 0; l < a.layers; ++l)
      for (int64_t h = 0; h < a.heads; ++h) {
        const Mat m = a.map(l, h);
        ASSERT_EQ(m.rows(), a.rows);
        ASSERT_EQ(m.cols(), a.cols);
        expectSameFloats(m.data(), c.want, (l * a.heads + h) * a.rows * a.cols, m.size(), c.label);
      }
    // read() at an odd offset, past the F16C path's blocks of eight.
    std::vector<float> part(13);
    a.tensor.read(1001, 13, part.data());
    expectSameFloats(part.data(), c.want, 1001, 13, c.label + " read(1001, 13)");
  }
}

// Files numpy itself writes (Debian's python3-numpy, which scripts/deps.sh
// installs): np.save, np.savez (zip64 local headers) and np.savez_compressed,
// float16, against the same values saved as float32 and read by readNpy.
TEST(AttentionFile, ReadsWhatNumpyWrites) {
  test::TempDir dir;
  const test::RunResult r = test::runProgram(
      "/usr/bin/python3",
      {"-c",
       "import sys, numpy as np\n"
       "a = (np.arange(2 * 3 * 5 * 7) % 11 / 7 - 0.5).reshape(2, 3, 5, 7).astype(np.float16)\n"
       "d = sys.argv[1]\n"
       "np.save(d + '/want.npy', a.astype(np.float32))\n"
       "np.save(d + '/a.npy', a)\n"
       "np.savez(d + '/a.npz', attention=a, other=a[0])\n"
       "np.savez_compressed(d + '/c.npz', maps=a)\n",
       dir.path.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const Array want = readNpy(dir / "want.npy", "reference");
  for (const char* name : {"a.npy", "a.npz", "c.npz"}) {
    SCOPED_TRACE(name);
    const AttentionMaps a = attentionMaps(FloatTensor::open(dir / name, "--attention"), "--attention");
    EXPECT_EQ(a.tensor.dtype(), DType::F16);
    ASSERT_EQ(a.tensor.shape(), want.shape);
    for (int64_t l = 0; l < a.layers; ++l)
      for (int64_t h = 0; h < a.heads; ++h) {
        const Mat m = a.map(l, h);
        expectSameFloats(m.data(), want.data, (l * a.heads + h) * m.size(), m.size(), name);
      }
  }
}

TEST(AttentionFile, NamesTheArrayItRead) {
  test::TempDir dir;
  const std::string a = npy("<f4", {1, 1}, raw(std::vector<float>{1}));
  EXPECT_EQ(FloatTensor::open(write(dir, "a.npy", a), "--attention").what(), (dir / "a.npy").string());
  EXPECT_EQ(FloatTensor::open(write(dir, "a.npz", zip({{"attention.npy", a}})), "--attention").what(),
            (dir / "a.npz").string() + " 'attention'");
}

// [SECTION] Choosing the array

TEST(AttentionFile, ChoosesTheNamedThenAttentionThenTheOnlyArray) {
  test::TempDir dir;
  const auto one = [](float v) { return npy("<f4", {1, 1}, raw(std::vector<float>{v})); };
  const auto value = [](const fs::path& p, const std::string& name = "") {
    float v = 0;
    FloatTensor::open(p, "--attention", name).read(0, 1, &v);
    return v;
  };
  const fs::path two = write(dir, "two.npz", zip({{"a.npy", one(1)}, {"b.npy", one(2)}}));
  EXPECT_EQ(value(two, "b"), 2);
  EXPECT_EQ(value(two, "a"), 1);
  EXPECT_EQ(openError(two), two.string() + ": --attention: holds 'a', 'b'; name one of them");
  EXPECT_EQ(openError(two, "c"), two.string() + ": --attention: holds no array 'c' (it holds 'a', 'b')");
  EXPECT_EQ(value(write(dir, "att.npz", zip({{"q.npy", one(1)}, {"attention.npy", one(2)}, {"notes.txt", "x"}}))), 2);
  EXPECT_EQ(value(write(dir, "atts.npz", zip({{"attentions.npy", one(3)}, {"k.npy", one(1)}}))), 3);
  EXPECT_EQ(value(write(dir, "only.npz", zip({{"maps.npy", one(4), true}, {"readme.txt", "x"}}))), 4);
  const fs::path none = write(dir, "none.npz", zip({{"readme.txt", "x"}}));
  EXPECT_EQ(openError(none), none.string() + ": --attention: holds no arrays");

  const fs::path st = dir / "two.safetensors";
  writeSafetensors(st, {tensorFromValues("x", DType::F32, {1, 1}, {5}), tensorFromValues("y", DType::BF16, {1, 1}, {6})});
  EXPECT_EQ(value(st, "y"), 6);
  EXPECT_EQ(openError(st), st.string() + ": --attention: holds 'x', 'y'; name one of them");
  const fs::path st1 = dir / "one.safetensors";
  writeSafetensors(st1, {tensorFromValues("attn", DType::F16, {1, 1}, {7})});
  EXPECT_EQ(value(st1), 7);
}

// [SECTION] Refusals

TEST(AttentionFile, RefusesWhatItCannotRead) {
  test::TempDir dir;
  const std::vector<float> twelve(12, 0.25f);
  const std::string good = npy("<f4", {3, 4}, raw(twelve));
  const auto error = [&](const std::string& name, const std::string& bytes) { return openError(write(dir, name, bytes)); };
  const auto where = [&](const std::string& name) { return (dir / name).string() + ": --attention: "; };

  EXPECT_EQ(error("bad.npy", "not an array at all"),
            where("bad.npy") + "not a .npy, .npz or .safetensors file (its first bytes are none of theirs)");
  EXPECT_EQ(error("short.npy", good.substr(0, good.size() - 5)),
            where("short.npy") + "shape [3, 4] of float32 needs 48 bytes of data, the file has 43 (truncated)");
  EXPECT_EQ(error("fortran.npy", npy("<f4", {3, 4}, raw(twelve), 1, true)),
            where("fortran.npy") + "Fortran-order array (expected C order; save with np.ascontiguousarray)");
  for (const char* descr : {"<f8", "<i4"})
    EXPECT_EQ(error("dtype.npy", npy(descr, {3, 2}, raw(twelve))),
              where("dtype.npy") + "dtype '" + descr +
                  "' is not accepted (expected float32 '<f4' or float16 '<f2', or bfloat16 in a .safetensors file; "
                  "save with .astype(np.float32))");
  EXPECT_EQ(error("big.npy", npy(">f4", {3, 4}, raw(twelve))),
            where("big.npy") +
                "dtype '>f4' is big-endian (expected little-endian float32 '<f4' or float16 '<f2'; save with .astype('<f4'))");
  // A member's own .npy is checked as a file is, named by its member.
  EXPECT_EQ(error("member.npz", zip({{"attention.npy", "not an npy"}})),
            where("member.npz") + "member 'attention.npy': not a .npy file (missing the \\x93NUMPY magic)");
  EXPECT_EQ(error("memberbig.npz", zip({{"attention.npy", npy(">f2", {3, 2}, raw(twelve))}})),
            where("memberbig.npz") +
                "member 'attention.npy': dtype '>f2' is big-endian (expected little-endian float32 '<f4' or float16 "
                "'<f2'; save with .astype('<f4'))");

  // The central directory's offset (the end record's bytes 16-19) past the file.
  std::string outside = zip({{"attention.npy", good}});
  outside.replace(outside.size() - 6, 4, le(1000000, 4));
  EXPECT_EQ(error("outside.npz", outside),
            where("outside.npz") + ".npz: central directory at 1000000 (" + std::to_string(46 + 13) +
                " bytes) lies outside the file's " + std::to_string(outside.size()) + " bytes (truncated or corrupt)");
  // A member's local header offset moved into its data.
  std::string moved = zip({{"attention.npy", good}});
  const size_t central = moved.find(std::string("PK\x01\x02", 4));
  moved.replace(central + 42, 4, le(7, 4));
  EXPECT_EQ(error("moved.npz", moved), where("moved.npz") + "member 'attention.npy': no local header at 7 (corrupt)");
  std::string cut = zip({{"attention.npy", good}});
  EXPECT_EQ(error("cut.npz", cut.substr(0, cut.size() - 30)), where("cut.npz") + "not a .npz: no ZIP end record (truncated?)");

  // A CRC-32 that is not the inflated data's, in both headers.
  std::string crc = zip({{"attention.npy", good, true}});
  const uint32_t right = static_cast<uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(good.data()), good.size()));
  for (size_t at : {size_t{14}, crc.find(std::string("PK\x01\x02", 4)) + 16}) crc.replace(at, 4, le(right ^ 1, 4));
  char hex[2][16];
  std::snprintf(hex[0], 16, "0x%08x", right);
  std::snprintf(hex[1], 16, "0x%08x", right ^ 1);
  EXPECT_EQ(error("crc.npz", crc), where("crc.npz") + "member 'attention.npy': CRC-32 " + hex[0] +
                                       " of its data is not the " + hex[1] + " the archive records (corrupt)");
  // Deflate data cut short: the sizes in both headers say half the stream.
  const std::string body = deflated(good);
  std::string early = zip({{"attention.npy", good, true}});
  early.replace(18, 4, le(body.size() / 2, 4));
  early.replace(early.find(std::string("PK\x01\x02", 4)) + 20, 4, le(body.size() / 2, 4));
  EXPECT_EQ(error("early.npz", early), where("early.npz") + "member 'attention.npy': deflate data ends early (truncated)");
  // A declared size deflate could never produce from the bytes given (refused before allocating).
  std::string bomb = zip({{"attention.npy", good, true}});
  const size_t bomb_central = bomb.find(std::string("PK\x01\x02", 4));
  bomb.replace(bomb_central + 24, 4, le(0xFFFFFFF0, 4));
  bomb.replace(22, 4, le(0xFFFFFFF0, 4));
  EXPECT_EQ(error("bomb.npz", bomb), where("bomb.npz") + "member 'attention.npy' says it inflates to 4294967280 bytes from " +
                                         std::to_string(body.size()) + ", more than deflate can give (corrupt)");

  // Shapes that fit no layout.
  const std::string layouts = " fits no layout; expected [L, L], [heads, L, L], [layers, heads, L, L] or [layers, heads, Lq, Lk]";
  EXPECT_EQ(error("x.npy", npy("<f4", {3, 4, 5, 6, 7}, std::string(4 * 2520, '\0'))),
            where("x.npy") + "shape [3, 4, 5, 6, 7]" + layouts);
  EXPECT_EQ(error("rank1.npy", npy("<f4", {12}, raw(twelve))), where("rank1.npy") + "shape [12]" + layouts);
  EXPECT_EQ(error("zero.npy", npy("<f4", {2, 0, 0}, "")), where("zero.npy") + "shape [2, 0, 0]" + layouts);
  EXPECT_EQ(error("zero4.npy", npy("<f4", {1, 1, 0, 3}, "")), where("zero4.npy") + "shape [1, 1, 0, 3]" + layouts);
  EXPECT_EQ(error("wide.npy", good), where("wide.npy") + "shape [3, 4]" + layouts);  // [Lq, Lk] only as 4-D
  // In an archive the array is named beside the file.
  EXPECT_EQ(error("x.npz", zip({{"attention.npy", good}})),
            (dir / "x.npz").string() + " 'attention': --attention: shape [3, 4]" + layouts);
}

TEST(AttentionFile, RefusesABadSafetensorsFileNamingTheField) {
  test::TempDir dir;
  const std::string header = R"({"t": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}})";
  const std::string bytes = le(header.size(), 8) + header + std::string(8, '\0');
  const fs::path p = write(dir, "t.safetensors", bytes);
  EXPECT_EQ(openError(p), p.string() + ": --attention: tensor 't': data_offsets [0, 16] run past the end of the data "
                                       "section (8 bytes; truncated?)");
  EXPECT_EQ(openError(dir / "missing.npy"), (dir / "missing.npy").string() + ": --attention: cannot open (No such file or directory)");
}

// [SECTION] Checking a map

Mat rows(const std::vector<std::vector<float>>& r) {
  Mat m(static_cast<int64_t>(r.size()), static_cast<int64_t>(r[0].size()));
  for (size_t i = 0; i < r.size(); ++i)
    for (size_t j = 0; j < r[i].size(); ++j) m(static_cast<int64_t>(i), static_cast<int64_t>(j)) = r[i][j];
  return m;
}

std::string checkError(Mat m, bool scores) {
  try {
    checkAttentionMap(m, scores, "a.npy", 2, 5);
  } catch (const InputError& e) {
    EXPECT_EQ(test::countLines(e.what()), 0);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// bfloat16 keeps 8 significant bits: a row of weights each rounded to
// nearest may sum to 1 ± 2⁻⁸, and arrives as float32 from numpy: it passes;
// a row further off does not.
TEST(AttentionFile, Bfloat16RoundedRowsPass) {
  // A third each, as bfloat16 holds them (multiples of 2⁻⁹ here): 172, 171 and 171 / 512 sum to 1 + 2⁻⁸.
  Mat within = rows({{0.3359375f, 0.333984375f, 0.333984375f}});
  EXPECT_NO_THROW(checkAttentionMap(within, false, "a.npy", 0, 0));
  Mat off = rows({{0.33984375f, 0.33984375f, 0.33984375f}});  // 174 / 512 each: 1.0195, more than rounding explains
  EXPECT_NE(checkError(off, false).find("sums to 1.01953, not 1"), std::string::npos) << checkError(off, false);
}

TEST(AttentionFile, ChecksWeights) {
  // A causal map: zeros above the diagonal, every row summing to 1 (within kRowSumTolerance).
  Mat causal = rows({{1, 0, 0}, {0.5f, 0.5f, 0}, {0.2f, 0.3f, 0.5004f}});
  const Mat before = causal;
  checkAttentionMap(causal, false, "a.npy", 0, 0);
  EXPECT_EQ(causal, before);  // weights are left as they are
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::string weights = " (weights are finite and >= 0; scores: say \"scores\": true in meta.json)";
  EXPECT_EQ(checkError(rows({{1, 0}, {0.3f, 0.32f}}), false),
            "a.npy: layer 2, head 5, row 1 sums to 0.62, not 1 (weights: softmax rows; scores: say \"scores\": true in "
            "meta.json)");
  EXPECT_EQ(checkError(rows({{1, 0}, {0.5f, 0.5f}, {1, 0.006f}}), false),
            "a.npy: layer 2, head 5, row 2 sums to 1.006, not 1 (weights: softmax rows; scores: say \"scores\": true in "
            "meta.json)");
  EXPECT_EQ(checkError(rows({{1, 0}, {nan, 1}}), false), "a.npy: layer 2, head 5, row 1, column 0 is nan, not a weight" + weights);
  EXPECT_EQ(checkError(rows({{0, inf}}), false), "a.npy: layer 2, head 5, row 0, column 1 is inf, not a weight" + weights);
  EXPECT_EQ(checkError(rows({{1.5f, -0.5f}}), false), "a.npy: layer 2, head 5, row 0, column 1 is -0.5, not a weight" + weights);
}

TEST(AttentionFile, TurnsScoresIntoSoftmaxRows) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // Masked keys (−inf) take weight 0; large scores do not overflow.
  const std::vector<std::vector<float>> scores = {
      {0.5f, -inf, -inf}, {2, -1, -inf}, {300, 301.5f, 299}, {-7, 0.25f, 3}};
  Mat m = rows(scores);
  checkAttentionMap(m, true, "a.npy", 0, 0);
  for (size_t r = 0; r < scores.size(); ++r) {
    double top = -HUGE_VAL, z = 0;
    for (const float s : scores[r]) top = std::max(top, static_cast<double>(s));
    for (const float s : scores[r]) z += std::exp(s - top);
    for (size_t c = 0; c < scores[r].size(); ++c) {
      const double want = std::exp(scores[r][c] - top) / z;
      EXPECT_NEAR(m(static_cast<int64_t>(r), static_cast<int64_t>(c)), want, 1e-6 * want + 1e-30) << r << ", " << c;
    }
  }
  EXPECT_EQ(m(0, 1), 0.0f);
  Mat again = m;
  checkAttentionMap(again, false, "a.npy", 0, 0);  // the result passes as weights
  const std::string why = " (scores may hold -inf for a masked key, not NaN or +inf)";
  EXPECT_EQ(checkError(rows({{0, nan}}), true), "a.npy: layer 2, head 5, row 0, column 1 is nan" + why);
  EXPECT_EQ(checkError(rows({{0, 1}, {inf, 0}}), true), "a.npy: layer 2, head 5, row 1, column 0 is inf" + why);
  EXPECT_EQ(checkError(rows({{0, 1}, {-inf, -inf}}), true),
            "a.npy: layer 2, head 5, row 1 is -inf everywhere (every key masked: no softmax)");
}

// [SECTION] Tokens

TEST(AttentionFile, ReadsTokenLists) {
  test::TempDir dir;
  const auto tokens = [&](const std::string& name, const std::string& text) {
    return readTokenList(write(dir, name, text), "--tokens");
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(tokens("list.json", R"(["The", " cat", "\u00e9t\u00e9", ""])"), (V{"The", " cat", "été", ""}));
  // `model run`'s tokens.json: ids beside the tokens.
  EXPECT_EQ(tokens("tokens.json", R"({"ids": [464, 3797], "tokens": ["The", " cat"]})"), (V{"The", " cat"}));
  EXPECT_EQ(tokens("list.txt", "  [\"a\", \"b\"]\n"), (V{"a", "b"}));  // JSON by its first character
  EXPECT_EQ(tokens("lines.txt", "The\n cat\n\nsat\n"), (V{"The", " cat", "", "sat"}));
  EXPECT_EQ(tokens("crlf.txt", "The\r\n cat\r\nsat"), (V{"The", " cat", "sat"}));
  EXPECT_EQ(tokens("bert.txt", "[CLS]\nhello\n[SEP]\n"), (V{"[CLS]", "hello", "[SEP]"}));  // not JSON after all
  EXPECT_EQ(tokens("bom.txt", "\xEF\xBB\xBF\xE6\x97\xA5\n\xE6\x9C\xAC\n"), (V{"日", "本"}));
  EXPECT_EQ(tokens("one-empty.txt", "\n"), (V{""}));
}

TEST(AttentionFile, RefusesBadTokenLists) {
  test::TempDir dir;
  const std::string expected = " (expected a JSON list of strings, an object with a \"tokens\" list, or one token a line)";
  const auto error = [&](const std::string& name, const std::string& text) {
    const fs::path p = write(dir, name, text);
    try {
      readTokenList(p, "--tokens");
    } catch (const InputError& e) {
      EXPECT_EQ(test::countLines(e.what()), 0) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(p.string() + ": --tokens: ", 0), 0u) << e.what();
      return std::string(e.what()).substr(p.string().size() + 12);
    }
    ADD_FAILURE() << name << ": no error";
    return std::string();
  };
  EXPECT_EQ(error("numbers.json", "[464, 3797]"), "token 0 is not a string (a JSON number)" + expected);
  EXPECT_EQ(error("mixed.txt", R"(["a", null])"), "token 1 is not a string (a JSON null)" + expected);
  EXPECT_EQ(error("object.json", R"({"ids": [1]})"), "a JSON object without a \"tokens\" list" + expected);
  EXPECT_EQ(error("nested.json", R"({"tokens": "The cat"})"), "holds a JSON string" + expected);
  EXPECT_EQ(error("number.json", "3"), "holds a JSON number" + expected);
  EXPECT_EQ(error("empty.json", "[]"), "holds no tokens" + expected);
  EXPECT_EQ(error("empty.txt", ""), "holds no tokens" + expected);
  EXPECT_EQ(error("latin1.txt", "caf\xC3\xA9\ncaf\xE9\n"), "line 2 is not UTF-8 (byte \\xE9)" + expected);
  EXPECT_EQ(error("bad.json", "[\"a\", ").rfind("not valid JSON ([json.exception.parse_error", 0), 0u);
  EXPECT_EQ(error("bad-utf8.json", "[\"caf\xE9\"]").rfind("not valid JSON (", 0), 0u);
  // A number past double's range is JSON nlohmann refuses with out_of_range, not parse_error (found by fuzz_attention_folder).
  EXPECT_EQ(error("huge.json", "[1e400]").rfind("not valid JSON ([json.exception.out_of_range", 0), 0u);
}

}  // namespace
}  // namespace attn::attention_file_test
