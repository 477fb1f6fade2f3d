// The rules every view and figure is held to, read from what `--describe`
// wrote (the CLI and GUI tests): each label names its own mark
// (markRuleViolations: nearer it than any other mark or on a leader to it,
// over no other mark), and each matrix's colour bar covers its strongest
// value and shows it: on a linear scale a map whose values stay under a
// quarter of its bar's top would be drawn flat, unless the panels share one
// scale on purpose and their colour bar says so (the family, the heads
// grid: equal colours are equal weights).
#pragma once

#include "widgets/views/view.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace attn::test {

inline std::vector<std::string> describedRuleBreaks(const nlohmann::json& described) {
  std::vector<std::string> out = markRuleViolations(markSheetFromJson(described));
  for (const nlohmann::json& p : described.value("panels", nlohmann::json::array())) {
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

}  // namespace attn::test
