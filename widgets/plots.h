// Small plots for extras on screen: line plots of Curves [S, n] with
// labelled marker lines (the adaptive-span ramp m_z(x) with R and z), points,
// bars per category, token strips, stacked bars — each the layout of
// widgets/plot_layouts.h replayed, with its hover. (Category matrices are
// matrix panels: widgets/matrix_panel.h.)
#pragma once

#include "engine/result.h"
#include "engine/tensor.h"

#include <imgui.h>

#include <string>
#include <vector>

namespace attn {

class HeatmapRenderer;

// `curves` is [S, n]: series s is y = curves[s, x] for x = 0 … n−1, drawn in
// headColor(s) and named `series_names[s]` (else `series_axis` s) in the
// legend. Markers are dashed vertical lines at their x, in their series'
// colour, labelled above the plot; levels are dashed horizontal lines at
// y = their x, labelled at the right. `reveal` ≥ 0 draws the series up to
// x = reveal only (a timeline playing the process step by step), with that
// x marked. The layout is curvesPrimitives (widgets/plot_layouts.h).
void linePlot(const char* id, const Array& curves, const std::string& series_axis, const std::string& x_axis,
              const std::vector<Marker>& markers, ImVec2 size, const std::vector<std::string>& series_names = {},
              const std::vector<Marker>& levels = {}, int64_t reveal = -1);

// ExtraKind::Points: points (x, y, category) in headColor(category) around
// the origin, the sectors between the rays `e.markers` (angle x, the sector
// counter-clockwise of it is category `series`) tinted, and `e.arrows` from
// the origin. Equal scale on both axes.
void pointPlot(const char* id, const Extra& e, ImVec2 size);

// ExtraKind::CategoryValues: one bar per category in its colour.
void categoryBars(const char* id, const Array& values, const std::vector<std::string>& categories,
                  const std::string& value_label, ImVec2 size);

// ExtraKind::TokenCategories: the tokens in a wrapped strip, each on its
// category's colour; when they do not fit as text, one cell per token
// (drawn by `gl`).
void categoryStrip(const char* id, const Array& categories_of, const std::vector<std::string>& tokens,
                   const std::vector<std::string>& categories, HeatmapRenderer& gl, ImVec2 size);

// `values` is [T, n] ≥ 0 (ExtraKind::Stacked): bar t stacks values[t, 0 … n−1]
// bottom to top, segment k in headColor(k) and named `segment_axis` k+1 in the
// legend (segments that are 0 everywhere are left out); `row_labels[t]`, which
// may span several lines, is written under bar t.
void stackedBars(const char* id, const Array& values, const std::vector<std::string>& row_labels,
                 const std::string& row_axis, const std::string& segment_axis, ImVec2 size);

}  // namespace attn
