// `attnlab render --format html`: the interactive page, read as a browser
// would without one. Its META and its maps (base64 of gzip of one byte per
// weight, some maps' rows stored as differences) are decoded here with zlib, and every map of every kind of page
// equals `model run`'s arrays of the same run within the bound the page
// states; a long file's page holds pooled maps plus the named heads; and
// every bad request is one line, with nothing written. The page's script in
// a real browser: tests/browser/page_test.js.
#include "engine/model/tokenizers/precompiled_charsmap.h"
#include "engine/npy.h"
#include "tests/test_support.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace attn::test {
namespace {

namespace fs = std::filesystem;

// The page's parts: META and the decompressed map bytes.
struct Page {
  nlohmann::json meta;
  std::vector<uint8_t> bytes;
};

std::string between(const std::string& text, const std::string& open, const std::string& close) {
  const size_t a = text.find(open);
  if (a == std::string::npos) return {};
  const size_t b = text.find(close, a + open.size());
  return b == std::string::npos ? std::string() : text.substr(a + open.size(), b - a - open.size());
}

Page readPage(const fs::path& file) {
  const std::string html = slurp(file);
  Page p;
  p.meta = nlohmann::json::parse(between(html, "<script id=\"attnlab-meta\" type=\"application/json\">", "</script>"));
  const std::string gz = base64Decode(between(html, "<script id=\"attnlab-maps\" type=\"text/plain\">", "</script>"), "page");
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, MAX_WBITS + 16), Z_OK);  // gzip, as DecompressionStream("gzip") reads it
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  std::vector<uint8_t> chunk(1 << 16);
  int r = Z_OK;
  while (r == Z_OK) {
    z.next_out = chunk.data();
    z.avail_out = static_cast<uInt>(chunk.size());
    r = inflate(&z, Z_NO_FLUSH);
    p.bytes.insert(p.bytes.end(), chunk.data(), chunk.data() + (chunk.size() - z.avail_out));
  }
  inflateEnd(&z);
  EXPECT_EQ(r, Z_STREAM_END);
  // Maps stored with the Up filter: row i holds its bytes minus row i − 1's (mod 256) where both have them.
  auto restore = [&p](const nlohmann::json& list, int64_t rows, int64_t cols, bool triangle) {
    for (size_t k = 0; k < list["maps"].size(); ++k) {
      if (list["maps"][k].is_null() || !list["up"][k].get<bool>()) continue;
      const int64_t offset = list["maps"][k];
      auto start = [&](int64_t i) { return static_cast<size_t>(offset + (triangle ? i * (i + 1) / 2 : i * cols)); };
      for (int64_t i = 1; i < rows; ++i)
        for (int64_t j = 0; j < (triangle ? i : cols); ++j) p.bytes.at(start(i) + j) += p.bytes.at(start(i - 1) + j);
    }
  };
  for (const nlohmann::json& set : p.meta["sets"]) {
    const int64_t rows = static_cast<int64_t>(set["rows"].size()), cols = static_cast<int64_t>(set["cols"].size());
    restore(set, rows, cols, set["triangle"]);
    if (!set["pooled"].is_null()) restore(set["pooled"], set["pooled"]["blocks"], set["pooled"]["blocks"], false);
    if (!set["rollout"].is_null()) restore(set["rollout"], rows, rows, set["rollout"]["triangle"]);
  }
  return p;
}

// The weight a byte stands for, as the contract (and the page's script) reads it.
double byteWeight(uint8_t b) { return b == 0 ? 0.0 : std::pow(10.0, -4.0 + 4.0 * (b - 1) / 254.0); }

// Every map the page's set holds against `a` [layers, heads, rows, cols]; the largest excess over the bound.
double worstExcess(const Page& p, const nlohmann::json& set, const Array& a, int64_t* compared) {
  const double rel = p.meta["quantisation"]["relative"], abs_bound = p.meta["quantisation"]["absolute"];
  const int64_t layers = set["layers"], heads = set["heads"];
  const int64_t rows = static_cast<int64_t>(set["rows"].size()), cols = static_cast<int64_t>(set["cols"].size());
  EXPECT_EQ(a.shape, (std::vector<int64_t>{layers, heads, rows, cols}));
  const bool triangle = set["triangle"];
  double worst = -1;
  for (int64_t m = 0; m < layers * heads; ++m) {
    if (set["maps"][static_cast<size_t>(m)].is_null()) continue;
    ++*compared;
    const int64_t offset = set["maps"][static_cast<size_t>(m)];
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const double w = a.data[static_cast<size_t>((m * rows + i) * cols + j)];
        double got = 0;
        if (!triangle || j <= i)
          got = byteWeight(p.bytes.at(static_cast<size_t>(offset + (triangle ? i * (i + 1) / 2 : i * cols) + j)));
        worst = std::max(worst, std::abs(got - w) - std::max(rel * w, abs_bound));
      }
  }
  return worst;
}

TEST(Page, EveryKindDecodesToItsRunWithinTheStatedBound) {
  TempDir t;
  struct Case {
    std::vector<std::string> model;  // render's and model run's model flags
    std::vector<std::pair<std::string, std::string>> sets;  // set name → model run's array
    std::string kind;
  };
  const std::vector<Case> cases = {
      {{}, {{"self", "attention.npy"}}, "text"},
      {{"shipped:t5-toy"},
       {{"cross", "cross_attention.npy"}, {"encoder", "encoder_attention.npy"}, {"decoder", "decoder_attention.npy"}},
       "encoder-decoder"},
      {{"shipped:vit-shapes"}, {{"self", "attention.npy"}}, "vision"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind);
    const fs::path page = t / (c.kind + ".html"), run = t / c.kind;
    std::vector<std::string> render = {"render"};
    if (c.model.empty()) render.push_back("--default-model");
    else render.insert(render.end(), {"--model", c.model[0]});
    render.insert(render.end(), {"--format", "html", "--out", page.string()});
    const RunResult r = runAttnlab(render);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("wrote " + page.string()), std::string::npos) << r.out;
    std::vector<std::string> model_run = {"model", "run"};
    model_run.insert(model_run.end(), c.model.begin(), c.model.end());
    model_run.insert(model_run.end(), {"--out", run.string()});
    ASSERT_EQ(runAttnlab(model_run).status, 0);

    const Page p = readPage(page);
    EXPECT_EQ(p.meta["kind"], c.kind);
    EXPECT_LE(static_cast<double>(p.meta["quantisation"]["relative"]), 0.0183);
    ASSERT_EQ(p.meta["sets"].size(), c.sets.size());
    ASSERT_EQ(p.meta["colormap"].size(), 256u);
    for (size_t s = 0; s < c.sets.size(); ++s) {
      const nlohmann::json& set = p.meta["sets"][s];
      EXPECT_EQ(set["name"], c.sets[s].first);
      int64_t compared = 0;
      EXPECT_LE(worstExcess(p, set, readNpy((run / c.sets[s].second).string(), "reference"), &compared), 1e-9)
          << set["name"];
      EXPECT_EQ(compared, static_cast<int64_t>(set["layers"]) * static_cast<int64_t>(set["heads"]));
      EXPECT_EQ(set["table"]["rows"].size(), set["maps"].size());
    }
    // Only the shipped ViT carries a picture, and its rollout per layer.
    EXPECT_EQ(p.meta["picture"].is_null(), c.kind != "vision");
    if (c.kind == "vision") {
      EXPECT_TRUE(p.meta["picture"]["src"].get<std::string>().starts_with("data:image/png;base64,"));
      // Its rollout after each layer, as `model run` writes it [layers, 1 + P, 1 + P]: a set of one head per layer.
      nlohmann::json rollout = p.meta["sets"][0];
      rollout["heads"] = 1;
      rollout["maps"] = p.meta["sets"][0]["rollout"]["maps"];
      rollout["triangle"] = p.meta["sets"][0]["rollout"]["triangle"];
      Array r = readNpy((run / "rollout.npy").string(), "reference");
      r.shape.insert(r.shape.begin() + 1, 1);
      int64_t compared = 0;
      EXPECT_LE(worstExcess(p, rollout, r, &compared), 1e-9);
      EXPECT_EQ(compared, static_cast<int64_t>(rollout["layers"]));
    }
  }
}

// A file of 1,100 tokens: every head pooled, the named one whole and equal to the file.
TEST(Page, ALongFileHoldsPooledMapsAndTheNamedHeadsWhole) {
  TempDir t;
  const int64_t layers = 1, heads = 2, L = 1100;
  Array a{{layers, heads, L, L}, std::vector<float>(static_cast<size_t>(layers * heads * L * L), 0.0f)};
  for (int64_t m = 0; m < layers * heads; ++m)
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j <= i; ++j)  // a share on the first token, the rest by distance
        a.data[static_cast<size_t>((m * L + i) * L + j)] =
            static_cast<float>(j == 0 ? (i == 0 ? 1.0 : 0.5) : 0.5 * std::pow(0.5, i - j + 1) / (1 - std::pow(0.5, i)));
  writeNpy((t / "long.npy").string(), a);
  const fs::path page = t / "long.html";
  RunResult r = runAttnlab({"render", "--attention", (t / "long.npy").string(), "--heads", "0:1", "--out", page.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const Page p = readPage(page);
  const nlohmann::json& set = p.meta["sets"][0];
  EXPECT_TRUE(set["maps"][0].is_null());
  EXPECT_FALSE(set["maps"][1].is_null());
  ASSERT_FALSE(set["pooled"].is_null());
  EXPECT_EQ(set["pooled"]["maps"].size(), 2u);
  EXPECT_NE(p.meta["note"].get<std::string>().find("L0 H1"), std::string::npos) << p.meta["note"];
  int64_t compared = 0;
  EXPECT_LE(worstExcess(p, set, a, &compared), 1e-9);
  EXPECT_EQ(compared, 1);

  // Without --heads the note says how to keep some whole.
  r = runAttnlab({"render", "--attention", (t / "long.npy").string(), "--out", page.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(readPage(page).meta["note"].get<std::string>().find("--heads"), std::string::npos);
}

// A folder of pooled maps (model run --maps pooled) opens pooled; it holds no head whole to name.
TEST(Page, APooledFolderOpensPooledAndRefusesHeadsItLacks) {
  TempDir t;
  ASSERT_EQ(runAttnlab({"model", "run", "--maps", "pooled", "--out", (t / "run").string()}).status, 0);
  const fs::path page = t / "p.html";
  RunResult r = runAttnlab({"render", "--attention", (t / "run").string(), "--out", page.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json set = readPage(page).meta["sets"][0];
  EXPECT_FALSE(set["pooled"].is_null());
  for (const nlohmann::json& m : set["maps"]) EXPECT_TRUE(m.is_null());
  fs::remove(page);
  r = runAttnlab({"render", "--attention", (t / "run").string(), "--heads", "0:1", "--out", page.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("pooled maps only"), std::string::npos) << r.err;
  EXPECT_EQ(countLines(r.err), 1) << r.err;
  EXPECT_FALSE(fs::exists(page));
}

// Cross-attention from a file has no pooled maps: past 1,024 target rows every head stays whole. And maps a
// meta.json calls causal that are not keep their upper weights: the page stores whole rows then.
TEST(Page, LongCrossAttentionStaysWholeAndAFalseCausalLosesNothing) {
  TempDir t;
  const int64_t rows = 1030, cols = 6;
  Array cross{{1, 1, rows, cols}, std::vector<float>(static_cast<size_t>(rows * cols))};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) cross.data[static_cast<size_t>(i * cols + j)] = static_cast<float>(j + 1 + i % 3) / static_cast<float>(21 + 6 * (i % 3));
  writeNpy(t / "cross.npy", cross);
  RunResult r = runAttnlab({"render", "--attention", (t / "cross.npy").string(), "--out", (t / "cross.html").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  Page p = readPage(t / "cross.html");
  int64_t compared = 0;
  EXPECT_LE(worstExcess(p, p.meta["sets"][0], cross, &compared), 1e-9);
  EXPECT_EQ(compared, 1);

  const int64_t L = 5;
  Array square{{1, 1, L, L}, std::vector<float>(static_cast<size_t>(L * L), 1.0f / L)};  // uniform: not causal
  fs::create_directories(t / "lie");
  writeNpy(t / "lie" / "attention.npy", square);
  std::ofstream(t / "lie" / "meta.json") << R"({"causal": true})";
  r = runAttnlab({"render", "--attention", (t / "lie").string(), "--out", (t / "lie.html").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  p = readPage(t / "lie.html");
  EXPECT_FALSE(p.meta["sets"][0]["triangle"].get<bool>());
  compared = 0;
  EXPECT_LE(worstExcess(p, p.meta["sets"][0], square, &compared), 1e-9);
}

// --attention-of opens an encoder–decoder's page on that kind of attention.
TEST(Page, OpensOnTheKindOfAttentionAsked) {
  TempDir t;
  const fs::path page = t / "t5.html";
  ASSERT_EQ(runAttnlab({"render", "--model", "shipped:t5-toy", "--attention-of", "decoder", "--layer", "1", "--head", "2",
                        "--out", page.string()}).status, 0);
  const nlohmann::json meta = readPage(page).meta;
  const int64_t set = meta["focus"]["set"];
  EXPECT_EQ(meta["sets"][static_cast<size_t>(set)]["name"], "decoder");
  EXPECT_EQ(meta["focus"]["layer"], 1);
  EXPECT_EQ(meta["focus"]["head"], 2);
}

TEST(Page, BadRequestsAreOneLineAndWriteNothing) {
  TempDir t;
  const std::string out = (t / "p.html").string();
  struct Bad {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Bad> bad = {
      {{"render", "--default-model", "--out", out, "--max-bytes", "1000"}, "--max-bytes"},
      {{"render", "--default-model", "--out", out, "--view", "heads"}, "--view"},
      {{"render", "--default-model", "--out", out, "--heads", "5:0"}, "--heads: layer 5 head 0 is outside"},
      {{"render", "--default-model", "--out", out, "--heads", "0-1"}, "--heads: expected layer:head pairs"},
      {{"render", "--default-model", "--out", out, "--layer", "9"}, "--layer"},
      {{"render", "--default-model", "--out", out, "--colormap", "coolwarm"}, "--colormap"},
      {{"render", "--default-model", "--format", "html", "--out", (t / "p.png").string()}, "writes a .html file"},
      {{"render", "--default-model", "--format", "gif", "--out", (t / "p.gif").string()}, "--format: expected png, svg, pdf or html"},
      {{"render", "scaled-dot-product", "--out", out}, "--format html: the page shows a model's heads"},
      {{"render", "--model", "shipped:t5-toy", "--out", out, "--heads", "0:1"}, "--heads"},
      {{"render", "--default-model", "--out", (t / "p.png").string(), "--heads", "0:1"}, "--heads"},
      {{"render", "--default-model", "--out", out, "--size", "slide"}, "--size: a figure's option"},
      {{"render", "--default-model", "--out", out, "--scale", "log"}, "--scale: a figure's option"},
      {{"render", "--default-model", "--out", out, "--max-bytes", "999999999999"}, "--max-bytes: expected at most"},
      {{"render", "--default-model", "--out", out, "--max-bytes", "0"}, "--max-bytes: expected a positive number"},
      {{"render", "--default-model", "--out", out, "--attention-of", "decoder"}, "--attention-of: only encoder"},
      {{"render", "--model", "shipped:t5-toy", "--out", out, "--attention-of", "both"}, "--attention-of"},
      {{"render", "multi-head", "--heads", "2x", "--out", (t / "v.png").string()}, "--heads: expected a variant's number of heads"},
  };
  for (const Bad& b : bad) {
    const RunResult r = runAttnlab(b.args);
    EXPECT_EQ(r.status, 2) << b.says;
    EXPECT_NE(r.err.find(b.says), std::string::npos) << r.err;
    EXPECT_EQ(countLines(r.err), 1) << r.err;
    EXPECT_TRUE(listFiles(t.path).empty()) << b.says;
  }
  // The size refusal names the value that admits the page, and that value does.
  const RunResult r = runAttnlab({"render", "--default-model", "--out", out, "--max-bytes", "1000"});
  const std::string key = "--max-bytes ";
  const size_t at = r.err.rfind(key);
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string admits = r.err.substr(at + key.size(), r.err.find(' ', at + key.size()) - at - key.size());
  EXPECT_EQ(runAttnlab({"render", "--default-model", "--out", out, "--max-bytes", admits}).status, 0);
  EXPECT_EQ(static_cast<int64_t>(fs::file_size(out)), std::stoll(admits));
  // A variant's --heads is still its number of heads.
  EXPECT_EQ(runAttnlab({"render", "multi-head", "--heads", "2", "--out", (t / "v.png").string()}).status, 0);
}

}  // namespace
}  // namespace attn::test
