// The image view's two pictures of one head's pattern (the Sparse
// Transformer and Image Transformer figures): the sequence as a raster image
// with one query's keys coloured by sub-pattern, and the L×L connectivity
// coloured by sub-pattern at screen resolution. Both read the CSR rows of a
// SparseRows and upload small RGBA textures only when what they show changes,
// so a click at L = 16,384 costs one row lookup and a w×w upload.
#pragma once

#include "engine/sparse.h"
#include "engine/tensor.h"
#include "widgets/colormap.h"
#include "widgets/heatmap.h"

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// Colour of an entry admitted by the sub-patterns in `bits` (SparseRows::sets),
// setColor() from colormap.h; bits = 0 (no key) is the image background.
Rgb8 patternSetColor(unsigned bits);

// Legend: one swatch per set name (and the union when there are several),
// plus the query pixel and, with `block`, the query block outline.
void patternLegend(const std::vector<std::string>& set_names, bool block);

// The sequence of s.rows queries as a raster image `width` pixels wide (the
// last row may be partial). Query `query`'s keys are coloured by their set
// bits, the query pixel is framed and, when `groups` ([rows], block id per
// query) is given, the pixels of the query's block are outlined. Returns the
// pixel under a pressed mouse button (click or drag), else −1.
int64_t patternImage(const char* id, const SparseRows& s, int64_t width, int64_t query, const Array* groups,
                     HeatmapRenderer& gl, ImVec2 size);

// The [rows, cols] connectivity of `s` coloured by set bits (rasterize() with
// RasterValue::Sets at the on-screen size), row `query` marked. Hover shows
// the cell's sets; returns the row under a pressed mouse button, else −1.
int64_t connectivityMatrix(const char* id, const SparseRows& s, int64_t query, const std::vector<std::string>& set_names,
                           HeatmapRenderer& gl, ImVec2 size);

}  // namespace attn
