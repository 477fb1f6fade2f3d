// One value per item (ExtraKind::TokenValues per token, HeadValues per head)
// as vertical bars with item labels and a hover tooltip.
#pragma once

#include "engine/tensor.h"
#include "widgets/colormap.h"
#include "widgets/value_range.h"

#include <imgui.h>

#include <string>
#include <vector>

namespace attn {

void valueBars(const char* id, const Array& values, const std::vector<std::string>* labels, const ValueRange& range,
               Colormap cmap, const std::string& value_label, ImVec2 size, const std::string& item_axis = "token");

}  // namespace attn
