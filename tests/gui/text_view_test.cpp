// The text view in the real window under Xvfb: its cells carry the weights
// the figure of the same selection carries, the keys S and H switch the
// shading and the head as F1 says, its labels name their marks, and a text
// of 3,000 tokens opens scrolled to the query at the size of a short one.
#include "engine/npy.h"
#include "tests/gui_support.h"
#include "tests/mark_rules.h"

#include <nlohmann/json.hpp>

#include <QImage>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace attn::test {
namespace {

TEST_F(GuiTest, TextViewKeysSwitchTheShadingAndTheScreenIsTheFigure) {
  const struct {
    std::string keys, shade, head;
  } cases[] = {{"", "head", "2"}, {"S", "layer", "2"}, {"S,S", "rollout", "2"}, {"H", "head", "3"}};
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--model", "shipped:default", "--view", "text", "--layer", "1", "--head", "2", "--query", "12"};
    if (!c.keys.empty()) args.insert(args.end(), {"--keys", c.keys});
    nlohmann::json screen;
    ASSERT_FALSE(shootAt("1280x720", args, &screen, nullptr, 12).isNull());
    for (const std::string& why : describedRuleBreaks(screen)) ADD_FAILURE() << c.keys << ": " << why;
    const RunResult fig = runAttnlab({"render", "--default-model", "--view", "text", "--shade-by", c.shade, "--layer", "1", "--head",
                                      c.head, "--query", "12", "--out", (dir_ / "f.svg").string(), "--describe",
                                      (dir_ / "f.json").string()});
    ASSERT_EQ(fig.status, 0) << fig.err;
    const std::map<int64_t, double> on_screen = marksByIndex(screen), on_page = marksByIndex(nlohmann::json::parse(slurp(dir_ / "f.json")));
    ASSERT_EQ(on_screen.size(), 13u) << "keys " << c.keys << ": query 12's keys";
    ASSERT_EQ(on_screen.size(), on_page.size()) << c.keys;
    for (const auto& [j, w] : on_page) EXPECT_NEAR(on_screen.at(j), w, 1e-6) << "keys " << c.keys << ", token " << j;
  }
}

TEST_F(GuiTest, TextViewOfThousandsOfTokensOpensOnTheQueryAtTheReadableSize) {
  const int64_t L = 3000, query = 2500;
  std::vector<float> map(static_cast<size_t>(L * L), 0.0f);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j <= i; ++j) map[static_cast<size_t>(i * L + j)] = 1.0f / static_cast<float>(i + 1);
  writeNpy(dir_ / "long.npy", Array{{L, L}, map});
  nlohmann::json tokens = nlohmann::json::array();
  for (int64_t i = 0; i < L; ++i) tokens.push_back(i % 5 == 0 ? " attention" : " the");
  std::ofstream(dir_ / "tokens.json") << tokens.dump();
  nlohmann::json shorter, longer;
  shootAt("1280x720", {"--model", "shipped:default", "--view", "text"}, &shorter, nullptr, 12);
  shootAt("1280x720", {"--attention", (dir_ / "long.npy").string(), "--tokens", (dir_ / "tokens.json").string(), "--view", "text",
                       "--query", std::to_string(query)},
          &longer, nullptr, 12);
  const std::map<int64_t, double> drawn = marksByIndex(longer);
  ASSERT_TRUE(drawn.count(query)) << "the query's line is in view";
  EXPECT_LT(drawn.size(), 1000u) << "only the lines in view are drawn";
  const nlohmann::json& area = longer.at("view_area");
  double smallest = 1e9, short_cells = 1e9;
  for (const nlohmann::json& m : shorter.at("marks")) short_cells = std::min(short_cells, m.at("box")[3].get<double>());
  for (const nlohmann::json& m : longer.at("marks")) {
    smallest = std::min(smallest, m.at("box")[3].get<double>());
    if (m.at("id").get<std::string>().ends_with("[" + std::to_string(query) + "]")) {
      EXPECT_GE(m.at("box")[1].get<double>(), area[1].get<double>());
      EXPECT_LE(m.at("box")[1].get<double>() + m.at("box")[3].get<double>(), area[1].get<double>() + area[3].get<double>());
    }
  }
  EXPECT_GE(smallest * 1.6, short_cells - 0.5) << "a long text's cells are the base size a short one's grows from";
  EXPECT_GE(smallest, 16.0) << "cells a reader reads";
  for (const std::string& why : describedRuleBreaks(longer)) ADD_FAILURE() << why;
}

}  // namespace
}  // namespace attn::test
