// A model too large for a thumbnail per head (32 layers × 64 heads) draws
// one readable cell per head of a summary instead, its labels and colour bar
// held to the rules of tests/mark_rules.h (which tests/cli/figure_text_test.cpp
// holds every other figure to).
#include "tests/mark_rules.h"
#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attn::test {
namespace {

// `render ARGS --out F.png --describe F.json` at `size`: what it described; a failure when it did not draw.
nlohmann::json renderDescribed(const TempDir& dir, std::vector<std::string> args, const std::string& size) {
  const std::string stem = (dir.path / "figure").string();
  args.insert(args.begin(), "render");
  args.insert(args.end(), {"--size", size, "--out", stem + ".png", "--describe", stem + ".json"});
  const RunResult r = runAttnlab(args);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0 ? nlohmann::json::parse(slurp(stem + ".json")) : nlohmann::json();
}

// A GPT-NeoX of 32 layers × 64 heads (d_head 2): its model figure is a
// layers × heads map of the chosen summary whose cells stay readable.
TEST(ModelFigures, AModelTooLargeForThumbnailsDrawsACellPerHead) {
  const TempDir dir;
  constexpr int64_t layers = 32, heads = 64;
  writeManyHeadsCheckpoint(dir / "big", layers, heads);
  for (const std::string size : {"1200x900", "slide", "column"})
    for (const std::string summary : {"sink", "entropy"}) {
      const std::vector<std::string> args = {"--model", (dir / "big").string(), "--text", "the cat sat on the mat, the cat sat",
                                             "--view", "model", "--summary", summary};
      const nlohmann::json d = renderDescribed(dir, args, size);
      ASSERT_EQ(d.at("panels").size(), 1u) << d.dump();
      const nlohmann::json& p = d["panels"][0];
      // A paper's column takes the heads down the page, a slide or a fixed size across.
      const bool down = size == "column";
      EXPECT_EQ(p.at("rows"), down ? heads : layers);
      EXPECT_EQ(p.at("cols"), down ? layers : heads);
      EXPECT_EQ(p.at("row_axis"), down ? "head" : "layer");
      EXPECT_NE(p.value("value_label", "").find(summary == "sink" ? "first-token share" : "entropy"), std::string::npos) << p.dump();
      // A cell per head a reader can point at: 8 units across a slide, 4 points (1.4 mm, 17 pixels at 300 dpi) on a
      // paper's column.
      EXPECT_GE(p.at("strongest").at("cell").get<double>(), down ? 4.0 : 8.0) << size << ": " << p.dump();
      for (const std::string& why : describedRuleBreaks(d)) ADD_FAILURE() << size << ": " << why;
    }
  const RunResult bad = runAttnlab({"render", "--model", (dir / "big").string(), "--view", "model", "--summary", "loudness", "--out",
                                    (dir / "x.png").string()});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err, "attnlab: --summary: expected one of sink, previous-token, induction, entropy, distance, got 'loudness'\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "x.png"));
}

}  // namespace
}  // namespace attn::test
