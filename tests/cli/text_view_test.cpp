// `attnlab render --view text`: the running text shaded by the attention the
// query gives each token. Each shading's marks are the maps `model run`
// writes, read in double (a head's row, the layer's mean, rollout composed
// by hand); the PNG's cells are their weights' colours; a text of thousands
// of tokens shows a readable window about the query; a pooled run's head is
// read whole and its layer mean refused; bad flags are one line.
#include "engine/npy.h"
#include "tests/mark_rules.h"
#include "tests/test_support.h"
#include "widgets/colormap.h"

#include <QImage>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attn::test {
namespace {

namespace fs = std::filesystem;

struct Maps {
  Array a;  // [layers, heads, L, L]
  int64_t layers() const { return a.shape[0]; }
  int64_t heads() const { return a.shape[1]; }
  int64_t L() const { return a.shape[2]; }
  double at(int64_t l, int64_t h, int64_t i, int64_t j) const {
    return a.data[static_cast<size_t>(((l * heads() + h) * L() + i) * L() + j)];
  }
};

// Rollout through `layer`, row `query`: Â_l = ½·mean_h A_l,h + ½·I with rows
// renormalised, R_0 = Â_0, R_l = Â_l · R_{l−1} (Abnar & Zuidema), in double.
std::vector<double> rolloutRow(const Maps& m, int64_t layer, int64_t query) {
  const int64_t L = m.L();
  std::vector<double> r;  // R_l, [L, L]
  for (int64_t l = 0; l <= layer; ++l) {
    std::vector<double> hat(static_cast<size_t>(L * L), 0.0);
    for (int64_t i = 0; i < L; ++i) {
      double z = 0;
      for (int64_t j = 0; j < L; ++j) {
        double mean = 0;
        for (int64_t h = 0; h < m.heads(); ++h) mean += m.at(l, h, i, j) / static_cast<double>(m.heads());
        z += hat[static_cast<size_t>(i * L + j)] = 0.5 * mean + (i == j ? 0.5 : 0.0);
      }
      for (int64_t j = 0; j < L; ++j) hat[static_cast<size_t>(i * L + j)] /= z;
    }
    if (l == 0) {
      r = hat;
      continue;
    }
    std::vector<double> next(static_cast<size_t>(L * L), 0.0);
    for (int64_t i = 0; i < L; ++i)
      for (int64_t k = 0; k < L; ++k)
        for (int64_t j = 0; j < L; ++j)
          next[static_cast<size_t>(i * L + j)] += hat[static_cast<size_t>(i * L + k)] * r[static_cast<size_t>(k * L + j)];
    r = next;
  }
  return {r.begin() + query * L, r.begin() + (query + 1) * L};
}

TEST(TextViewCli, EachShadingIsTheQuerysRowOfItsMaps) {
  TempDir dir;
  const RunResult run = runAttnlab({"model", "run", "shipped:default", "--out", (dir / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const Maps m{readNpy(dir / "run" / "attention.npy", "attention")};
  ASSERT_EQ(m.a.shape.size(), 4u);
  const int64_t layer = m.layers() - 1, head = m.heads() - 1, query = m.L() / 2;
  for (const std::string shade : {"head", "layer", "rollout"}) {
    const RunResult r = runAttnlab({"render", "--default-model", "--view", "text", "--shade-by", shade, "--layer",
                                    std::to_string(layer), "--head", std::to_string(head), "--query", std::to_string(query),
                                    "--out", (dir / "t.svg").string(), "--describe", (dir / "t.json").string()});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::map<int64_t, double> drawn = marksByIndex(nlohmann::json::parse(slurp(dir / "t.json")));
    ASSERT_EQ(static_cast<int64_t>(drawn.size()), query + 1) << shade << ": a causal query's keys, each shaded once";
    const std::vector<double> rollout = shade == "rollout" ? rolloutRow(m, layer, query) : std::vector<double>{};
    for (int64_t j = 0; j <= query; ++j) {
      double want = 0;
      if (shade == "head") want = m.at(layer, head, query, j);
      if (shade == "layer")
        for (int64_t h = 0; h < m.heads(); ++h) want += m.at(layer, h, query, j) / static_cast<double>(m.heads());
      if (shade == "rollout") want = rollout[static_cast<size_t>(j)];
      EXPECT_NEAR(drawn.at(j), want, 1e-5) << shade << " key " << j;
    }
  }
}

// The PNG's cells are the colours of their weights: viridis over [0, the row's
// largest] (a short text's scale is linear), read a few pixels inside each cell's corner.
TEST(TextViewCli, PngCellsAreTheirWeightsColours) {
  TempDir dir;
  const std::string png = (dir / "t.png").string();
  const RunResult r = runAttnlab({"render", "--default-model", "--view", "text", "--layer", "1", "--head", "2", "--out", png,
                                  "--describe", (dir / "t.json").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json d = nlohmann::json::parse(slurp(dir / "t.json"));
  const QImage img(QString::fromStdString(png));
  ASSERT_FALSE(img.isNull());
  double top = 0;
  for (const nlohmann::json& m : d.at("marks")) top = std::max(top, m.at("value").get<double>());
  ASSERT_GT(d.at("marks").size(), 10u);
  for (const nlohmann::json& m : d.at("marks")) {
    const std::vector<float> box = m.at("box");
    EXPECT_GE(box[3], 16.0f) << "a cell a reader can read";
    EXPECT_LE(box[0] + box[2], static_cast<float>(img.width())) << "inside the page";
    const QRgb px = img.pixel(static_cast<int>(box[0] + 2.5f), static_cast<int>(box[1] + 2.5f));
    const Rgb8 want = colormapAt(Colormap::Viridis, static_cast<float>(m.at("value").get<double>() / top));
    EXPECT_NEAR(qRed(px), want.r, 3) << m.at("id");
    EXPECT_NEAR(qGreen(px), want.g, 3) << m.at("id");
    EXPECT_NEAR(qBlue(px), want.b, 3) << m.at("id");
  }
}

// 3,000 tokens from a file: the page shows a window of whole lines about the
// query, at the size a short text has, and says which tokens it shows.
TEST(TextViewCli, ThousandsOfTokensShowAWindowAboutTheQuery) {
  TempDir dir;
  const int64_t L = 3000, query = 1700;
  std::vector<float> map(static_cast<size_t>(L * L), 0.0f);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j <= i; ++j) map[static_cast<size_t>(i * L + j)] = (j == i - 3 ? 0.5f : 0.0f) + 0.5f / static_cast<float>(i + 1);
  for (int64_t j = 0; j < 3; ++j) map[static_cast<size_t>(j * L + j)] += 0.5f;  // rows without an i − 3 key
  writeNpy(dir / "long.npy", Array{{L, L}, map});
  nlohmann::json tokens = nlohmann::json::array();
  for (int64_t i = 0; i < L; ++i) tokens.push_back(i % 9 == 0 ? " the" : i % 9 == 4 ? " attention" : " word");
  std::ofstream(dir / "tokens.json") << tokens.dump();
  const RunResult r = runAttnlab({"render", "--attention", (dir / "long.npy").string(), "--tokens", (dir / "tokens.json").string(),
                                  "--view", "text", "--query", std::to_string(query), "--out", (dir / "t.png").string(),
                                  "--describe", (dir / "t.json").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::map<int64_t, double> drawn = marksByIndex(nlohmann::json::parse(slurp(dir / "t.json")));
  ASSERT_FALSE(drawn.empty());
  EXPECT_LT(drawn.size(), 1000u) << "a window of the text";
  EXPECT_GT(drawn.size(), 200u) << "a page full of it";
  EXPECT_LE(drawn.begin()->first, query - 3);
  EXPECT_EQ(drawn.rbegin()->first, query) << "the causal query's keys end at it";
  EXPECT_NEAR(drawn.at(query - 3), 0.5 + 0.5 / (query + 1), 1e-6) << "the strongest key";
  const QImage img(QString::fromStdString((dir / "t.png").string()));
  ASSERT_FALSE(img.isNull());
  const nlohmann::json described = nlohmann::json::parse(slurp(dir / "t.json"));  // outlives the loop
  for (const nlohmann::json& m : described.at("marks")) {
    const std::vector<float> box = m.at("box");
    EXPECT_GE(box[3], 16.0f) << "as tall as a short text's cells";
    EXPECT_LE(box[1] + box[3], static_cast<float>(img.height())) << "inside the page";
  }
}

// A long file whose maps are pooled: the head shading reads the focused head
// whole from the file, the layer's mean is refused in one line.
TEST(TextViewCli, PooledRunsShadeByTheirHeadAndRefuseTheLayerMean) {
  TempDir dir;
  const int64_t L = 300;
  std::vector<float> maps;  // each layer: head 0 on the first token, head 1 uniform over the keys it sees
  for (int64_t m = 0; m < 4; ++m)
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < L; ++j) maps.push_back(j <= i ? (m % 2 == 0 ? (j == 0 ? 1.0f : 0.0f) : 1.0f / static_cast<float>(i + 1)) : 0.0f);
  writeNpy(dir / "long.npy", Array{{2, 2, L, L}, maps});
  const std::vector<std::string> small = {"ATTNLAB_MEMORY_LIMIT_MB=1"};  // the maps' 1.4 MiB do not fit, one head does
  const RunResult head = runAttnlab({"render", "--attention", (dir / "long.npy").string(), "--view", "text", "--head", "1",
                                     "--query", "250", "--out", (dir / "h.svg").string(), "--describe", (dir / "h.json").string()},
                                    small);
  ASSERT_EQ(head.status, 0) << head.err;
  for (const auto& [j, w] : marksByIndex(nlohmann::json::parse(slurp(dir / "h.json")))) EXPECT_NEAR(w, 1.0 / 251, 1e-6) << j;
  const RunResult layer = runAttnlab({"render", "--attention", (dir / "long.npy").string(), "--view", "text", "--shade-by",
                                      "layer", "--out", (dir / "l.svg").string()},
                                     small);
  EXPECT_EQ(layer.status, 2);
  EXPECT_NE(layer.err.find("reads every map"), std::string::npos) << layer.err;
  EXPECT_EQ(std::count(layer.err.begin(), layer.err.end(), '\n'), 1) << layer.err;
  EXPECT_FALSE(fs::exists(dir / "l.svg"));
}

TEST(TextViewCli, BadFlagsAreOneLineAndWriteNothing) {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--shade-by", "heads"}, "--shade-by: expected one of head, layer, rollout, got 'heads'"},
      {{"--query", "999"}, "--query: expected 0..27, got 999"},
      {{"--layer", "5"}, "--layer: expected 0..1, got 5"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args = {"render", "--default-model", "--view", "text", "--out", (dir / "t.png").string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const RunResult r = runAttnlab(args);
    EXPECT_EQ(r.status, 2) << flags[0];
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir / "t.png"));
  }
}

}  // namespace
}  // namespace attn::test
