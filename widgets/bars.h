// One value per token (ExtraKind::TokenValues) as vertical bars with token
// labels and a hover tooltip.
#pragma once

#include "engine/tensor.h"
#include "widgets/colormap.h"
#include "widgets/value_range.h"

#include <imgui.h>

#include <string>
#include <vector>

namespace attn {

void valueBars(const char* id, const Array& values, const std::vector<std::string>* labels, const ValueRange& range,
               Colormap cmap, const std::string& value_label, ImVec2 size);

}  // namespace attn
