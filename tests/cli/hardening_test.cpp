// Hostile files through the real binary: every variant given finite but
// extreme q = k = v, and every file input given an empty axis, a 0-d array
// or a NaN. Each run exits 2 with one line naming the file, or exits 0 with
// only finite arrays written. scripts/test.sh runs these under
// AddressSanitizer and UBSan as well.
#include "engine/npy.h"
#include "engine/registry.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace attn::test {
namespace {

// q = k = v [16, 8], each entry magnitude·U(0.5, 1) with a random sign.
void writeExtreme(const std::filesystem::path& p, float magnitude) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> u(0.5f, 1.0f);
  std::vector<float> v(16 * 8);
  for (float& x : v) x = (rng() & 1 ? 1.0f : -1.0f) * magnitude * u(rng);
  writeNpy(p, Array{{16, 8}, v});
}

// Every float32 array the run wrote must read back (readNpy refuses NaN and
// infinities); the int index arrays of sparse weights are left out.
void expectOnlyFiniteArrays(const std::filesystem::path& dir) {
  for (const std::string& f : listFiles(dir)) {
    if (!f.ends_with(".npy") || slurp(dir / f).find("'<f4'") == std::string::npos) continue;
    EXPECT_NO_THROW(readNpy(dir / f, f)) << f;
  }
}

struct Magnitude {
  const char* name;
  float value;
  bool refused;  // beyond kMaxInputMagnitude
};

TEST(CliExtremeValues, EveryVariantRefusesInOneLineOrWritesOnlyFiniteArrays) {
  const Magnitude magnitudes[] = {{"3e38", 3e38f, true}, {"1e38", 1e38f, true}, {"denormal", 1e-40f, false}};
  for (const Magnitude& m : magnitudes) {
    TempDir t;
    writeExtreme(t / "qkv.npy", m.value);
    const std::string qkv = (t / "qkv.npy").string();
    for (const VariantInfo& info : variants()) {
      SCOPED_TRACE(info.name + " at " + m.name);
      const RunResult r = runAttnlab({"compute", info.name, "--q", qkv, "--k", qkv, "--v", qkv, "--heads", "2", "--out",
                                      (t / info.name).string()});
      if (r.status == 2) {
        EXPECT_EQ(countLines(r.err), 1) << r.err;
        EXPECT_FALSE(std::filesystem::exists(t / info.name)) << "no partial output";
        if (m.refused) {
          EXPECT_NE(r.err.find("qkv.npy (--q): values up to ±1e+15"), std::string::npos) << r.err;
        }
      } else {
        EXPECT_FALSE(m.refused) << "exit " << r.status << ": " << r.err;
        ASSERT_EQ(r.status, 0) << r.err;
        expectOnlyFiniteArrays(t / info.name);
      }
    }
  }
}

// Every file a variant reads gets the same refusals as --x/--q/--k/--v.
struct FileInput {
  const char* name;
  std::vector<std::string> args;  // "{f}" is the defective file
  std::string where;              // the flag the one line names after the file
};

TEST(CliDegenerateFiles, EveryFileInputRefusesEmptyScalarAndNanInOneLine) {
  TempDir t;
  writeNpy(t / "x.npy", Array{{4, 8}, std::vector<float>(32, 0.5f)});
  const std::string x = (t / "x.npy").string();
  const FileInput inputs[] = {
      {"x", {"compute", "multi-head", "--x", "{f}"}, "(--x)"},
      {"q", {"compute", "dot", "--q", "{f}", "--k", x, "--v", x}, "(--q)"},
      {"k", {"compute", "dot", "--q", x, "--k", "{f}", "--v", x}, "(--k)"},
      {"v", {"compute", "dot", "--q", x, "--k", x, "--v", "{f}"}, "(--v)"},
      {"mask", {"compute", "scaled-dot-product", "--length", "4", "--set", "mask={f}"}, "(mask)"},
      {"pe", {"compute", "learned-pe", "--set", "pe={f}"}, "(pe)"},
      {"R", {"compute", "lsh", "--length", "8", "--dim", "8", "--heads", "1", "--set", "R={f}"}, "(R)"},
      {"memory", {"compute", "ntm", "--set", "memory={f}"}, "(memory)"},
      {"key", {"compute", "ntm", "--set", "key={f}"}, "(key)"},
      {"w_prev", {"compute", "ntm", "--set", "w_prev={f}"}, "(w_prev)"},
      {"enc", {"compute", "pointer", "--set", "enc={f}"}, "(enc)"},
      {"dec", {"compute", "pointer", "--set", "dec={f}"}, "(dec)"},
      {"x", {"compute", "sagan", "--set", "x={f}"}, "(x)"},
  };
  std::string nan_file = encodeNpy(Array{{4, 8}, std::vector<float>(32, 0.5f)});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  nan_file.replace(nan_file.size() - 4, 4, reinterpret_cast<const char*>(&nan), 4);
  writeFileAtomic(t / "nan.npy", nan_file);
  writeNpy(t / "rows0.npy", Array{{0, 8}, {}});
  writeNpy(t / "cols0.npy", Array{{4, 0}, {}});
  writeNpy(t / "scalar.npy", Array{{}, {1.0f}});
  for (const FileInput& in : inputs) {
    for (const char* defect : {"nan.npy", "rows0.npy", "cols0.npy", "scalar.npy"}) {
      SCOPED_TRACE(std::string(in.name) + " given " + defect);
      std::vector<std::string> args;
      for (std::string a : in.args) {
        if (const size_t at = a.find("{f}"); at != std::string::npos) a.replace(at, 3, (t / defect).string());
        args.push_back(a);
      }
      args.insert(args.end(), {"--out", (t / "out").string()});
      const RunResult r = runAttnlab(args);
      EXPECT_EQ(r.status, 2) << r.err;
      EXPECT_EQ(countLines(r.err), 1) << r.err;
      EXPECT_NE(r.err.find(std::string(defect) + " " + in.where), std::string::npos) << r.err;
      EXPECT_FALSE(std::filesystem::exists(t / "out")) << "no partial output";
    }
  }
}

}  // namespace
}  // namespace attn::test
