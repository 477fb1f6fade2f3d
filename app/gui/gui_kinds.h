// The model workspace on the other kinds of model: an encoder–decoder
// (gui_seq2seq.cpp: source and target, the three kinds of attention) and a
// Vision Transformer (gui_vision.cpp: a picture, attention over it, rollout,
// attention distance). gui_model.cpp draws the panel and the view and
// hands these models' sections and views to them.
#pragma once

#include "app/gui/gui_state.h"
#include "widgets/heatmap.h"

#include <functional>
#include <string>
#include <vector>

namespace attn {

// The model view's header line: the model's name, then `what` (wrapped when it does not fit).
void modelHeader(const AppState& s, const std::string& what);
// "83.9%  'And'" over a bar `share` (0..1) of `width`: a prediction, or a key a query attends to.
void shareRow(float share, const std::string& what, float width);
// The keys `query` attends to most in `map`, strongest first, under `title`,
// as many as fit in `height` (under a grid of heads); `name` names a key.
void strongestKeys(const std::string& title, const Mat& map, int64_t query, const std::function<std::string(int64_t)>& name,
                   float width, float height);
// The focused head's row of the head table, one number per line with its column's name
// (`shown`: indices into headTableColumns(); empty: all), in `width`.
void focusedHeadNumbers(const std::vector<HeadSummary>& summaries, int layer, int head, float width,
                        const std::vector<int>& shown);

void seq2seqTextSections(AppState& s);     // SOURCE and TARGET
void seq2seqDisplayControls(AppState& s);  // the grid's and table's kind, layer, head
void drawSeq2SeqView(AppState& s, const Seq2SeqAnalysis& a, HeatmapRenderer& gl);

void pictureSection(AppState& s);         // PICTURE: the examples, Open Picture…, the predicted labels
void visionDisplayControls(AppState& s);  // layer, head (grid), the token whose attention is shown
void drawVisionView(AppState& s, const VisionAnalysis& a, HeatmapRenderer& gl);

}  // namespace attn
