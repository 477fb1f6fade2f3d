// What the positional-encoding variants share: the encoding PE [L, d] is
// shown as an extra and its similarity PE·PEᵀ [L, L] as the main matrix.
#pragma once

#include "engine/registry.h"
#include "engine/result.h"

#include <string>
#include <vector>

namespace attn {

// Fills weights[0] = scores[0] = PE·PEᵀ (signed, not probabilities), the
// `pe` Matrix extra and the similarity FLOPs. `tokens` label the positions.
Result positionEncodingResult(const Mat& pe, std::vector<std::string> tokens, const std::string& what);

// A variant of the "positions" family: positions-only input, heatmap of
// PE·PEᵀ, the PE extra, and the family view.
VariantInfo positionVariant(std::string name, std::string title, std::string summary, std::string citation,
                            std::vector<ParamSpec> params, decltype(VariantInfo::run) run);

}  // namespace attn
