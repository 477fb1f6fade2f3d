// The rules every view and figure is held to, read from what `--describe`
// wrote (the CLI and GUI tests): each label names its own mark
// (markRuleViolations: nearer it than any other mark or on a leader to it,
// over no other mark), and each matrix's colour bar covers its strongest
// value and shows it: on a linear scale a map whose values stay under a
// quarter of its bar's top would be drawn flat, unless the panels share one
// scale on purpose and their colour bar says so (the family, the heads
// grid: equal colours are equal weights). A matrix names what it holds (a
// title or its value label); no two panels carry one title (Transformer-XL's extras drew "attention weight — head 0" beside
// each of its four terms).
#pragma once

#include "widgets/views/view.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn::test {

inline std::vector<std::string> describedRuleBreaks(const nlohmann::json& described) {
  std::vector<std::string> out = markRuleViolations(markSheetFromJson(described));
  std::vector<std::string> titles;
  for (const nlohmann::json& p : described.value("panels", nlohmann::json::array())) {
    const std::string named = p.value("title", std::string());
    if (!named.empty() && std::find(titles.begin(), titles.end(), named) != titles.end())
      out.push_back("two panels are titled '" + named + "'");
    titles.push_back(named);
    if (p.value("kind", "") == "matrix" && p.contains("value_label") && named.empty() && p.value("value_label", "").empty())
      out.push_back("a matrix names neither its array (a title) nor what its cells hold (a value label)");
    if (!p.contains("strongest") || !p.contains("range")) continue;
    const double v = std::abs(p["strongest"].at("value").get<double>());
    const double lo = p["range"].at(0).get<double>(), hi = p["range"].at(1).get<double>();
    const double top = std::max(std::abs(lo), std::abs(hi));
    const std::string title = "panel '" + p.value("title", std::string()) + "'";
    if (v > top * 1.001)
      out.push_back(title + ": its colour bar [" + std::to_string(lo) + ", " + std::to_string(hi) + "] does not reach its value " +
                    std::to_string(v));
    if (p.value("scale", "linear") == "linear" && !p.value("shared_scale", false) && v > 0 && v < top * 0.25)
      out.push_back(title + ": its values reach " + std::to_string(v) + ", under a quarter of its colour bar's end " +
                    std::to_string(top));
  }
  return out;
}

// The values of the marks `--describe` wrote, by the index their id ends in
// ("weight (L1 H2)[5]" → 5): a view whose marks are one per token.
inline std::map<int64_t, double> marksByIndex(const nlohmann::json& described) {
  std::map<int64_t, double> out;
  for (const nlohmann::json& m : described.at("marks")) {
    const std::string id = m.at("id");
    out[std::stoll(id.substr(id.rfind('[') + 1))] = m.at("value").get<double>();
  }
  return out;
}

}  // namespace attn::test
