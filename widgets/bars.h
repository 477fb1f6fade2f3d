// One value per item (ExtraKind::TokenValues per token, HeadValues per head)
// as vertical bars with item labels and a hover tooltip: the layout of
// widgets/plot_layouts.h (barsPrimitives) on screen.
#pragma once

#include "engine/tensor.h"
#include "widgets/colormap.h"
#include "widgets/value_range.h"

#include <imgui.h>

#include <string>
#include <vector>

namespace attn {

// `colour_per_bar`: bar i in headColor(i) (one per head), else coloured by value through `cmap`.
void valueBars(const char* id, const Array& values, const std::vector<std::string>* labels, const ValueRange& range,
               Colormap cmap, const std::string& value_label, ImVec2 size, const std::string& item_axis = "token",
               bool colour_per_bar = false);

}  // namespace attn
