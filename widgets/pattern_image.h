// The image view on screen: the layout of widgets/view_layouts.h (the
// sequence as a raster image with one query's keys coloured by sub-pattern,
// beside the connectivity coloured by sub-pattern), replayed into the window,
// with tooltips and the query picked by a click or a drag on a pixel or a
// matrix row. Both pictures read the CSR rows of a SparseRows and upload
// small RGBA textures only when what they show changes, so a click at
// L = 16,384 costs one row lookup and a w×w upload.
#pragma once

#include "engine/result.h"
#include "widgets/colormap.h"
#include "widgets/heatmap.h"

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// Colour of an entry admitted by the sub-patterns in `bits` (SparseRows::sets),
// setColor() from colormap.h; bits = 0 (no key) is patternBackground().
Rgb8 patternSetColor(unsigned bits, bool dark = true);

// Query `query`'s keys on the image `width` pixels wide and the connectivity
// of `s`; `groups` (a QueryGroup extra, or null) outlines the query's block.
// Returns the position under a pressed mouse button, else −1.
int64_t patternView(const char* id, const SparseRows& s, const std::vector<std::string>& set_names, int64_t width, int64_t query,
                    const Extra* groups, HeatmapRenderer& gl, ImVec2 size);

// The picture view on screen (pictureViewPrimitives): the picture with
// `queries` marked beside each one's map. Returns the pixel under a pressed
// mouse button, else −1; `panel` gets the map it was pressed on (−1: the picture).
int64_t pictureView(const char* id, const Array& picture, const Mat& weights, int64_t key_width,
                    const std::vector<int64_t>& queries, int active, HeatmapRenderer& gl, ImVec2 size, int& panel);

}  // namespace attn
