// A Vision Transformer's attention over its picture, laid out once as
// primitives for the screen and the figures: small multiples of the picture
// the model read, the patch grid over it, and one token's weights on each
// patch as the colour map over the picture, more opaque with the weight. A
// chip under each picture carries the weight on the [CLS] token, which has
// no place in the picture; where the area leaves height, the patches each
// map weighs most are listed under it. The maps are the rows the caller chose: one
// query's row per head and their mean, or the [CLS] row of the rollout after
// each layer.
#pragma once

#include "engine/tensor.h"
#include "widgets/primitives.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct PatchMap {
  std::string title;
  std::vector<float> weights;  // [1 + P]: the [CLS] key first, then the patches in raster order
};

struct PatchMaps {
  const Array* picture = nullptr;  // [H, W, 3] in [0, 1]
  int64_t grid_h = 0, grid_w = 0;  // P = grid_h · grid_w patches
  int64_t query = -1;              // the token whose rows these are: 0 [CLS], 1 + p a patch; −1 none marked
  std::vector<PatchMap> maps;
  // A first panel of the picture itself, in colour, under this title (empty:
  // none), with these lines where the maps list their patches (the labels).
  std::string picture_title;
  std::vector<std::string> picture_notes;
  // Colours: every map on one scale, 0 … the largest patch weight of them
  // all (heads compare), or each map on its own (rollout shrinks with depth).
  bool own_scale = false;
  std::string scale_caption;  // the colour bar's caption
  std::string key;            // names the rasters across frames (the screen's texture cache)
  std::string version;        // what changes them under the same key
};

struct PatchMapsLayout {
  std::vector<Box> pictures;  // each map's picture
  std::vector<Box> chips;     // each map's [CLS] chip
  int64_t grid_h = 1, grid_w = 1;
  // The token under (x, y): 0 on a [CLS] chip, 1 + p on patch p of any map, −1 elsewhere.
  int64_t tokenAt(float x, float y) const;
};

// The maps' weights colour the picture, opacity growing with the weight,
// so the picture shows where a map has little. Lays the maps out in `area`
// as the grid that holds the most picture; a page as tall as
// patchMapsHeight() asks for at its width gets patchMapsColumns() columns
// (pictures at least 9 text units wide) or a grid with pictures as large.
PatchMapsLayout patchMapsPrimitives(Primitives& out, const Canvas& c, const Box& area, const PatchMaps& m);
int patchMapsColumns(const Canvas& c, float width, size_t maps);
float patchMapsHeight(const Canvas& c, float width, const PatchMaps& m);

}  // namespace attn
