// Figures of a Vision Transformer run (app/model/vision_scene.h), through
// the same QPainter export as every figure: the GUI's Export and `attnlab
// render --model PATH --image FILE --view V` draw the same page.
//   picture   one token's attention over the picture (--query: 0 [CLS], 1 + p
//             a patch) in layer --layer, the mean of the heads and each head
//   rollout   [CLS]'s row of each layer's mean of heads, and of the rollout after each layer
//   distance  each head's mean attention distance against layer (Figure 7 of the ViT paper)
//   model     every layer's heads as maps over the 1 + P tokens
#pragma once

#include "app/export/figure.h"
#include "app/model/vision_scene.h"

#include <string>
#include <vector>

namespace attn {

const std::vector<std::string>& visionViewNames();
// Throws InputError for an unknown view or a layer or query out of range.
PreparedFigure prepareVisionFigure(const Model& m, const VisionAnalysis& a, const std::string& view, int64_t layer,
                                   int64_t query, const FigureOptions& options);

}  // namespace attn
