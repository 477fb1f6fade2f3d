// Figures of the model workspace's views, through the same QPainter export
// as the variant views (app/export/figure.h): the GUI's Export and `attnlab render
// --model` draw the same figure. Needs a Q(Gui)Application.
#pragma once

#include "app/export/figure.h"
#include "app/model/model_scene.h"

#include <string>

namespace attn {

struct ModelFigureSelection {
  int layer = 0, head = 0;       // focused head (rollout: up to this layer)
  int64_t query = -1, key = -1;  // Q/K pair; -1: last token, its strongest key (a ViT's picture: the token, −1 [CLS])
  Seq2SeqMaps kind = Seq2SeqMaps::Cross;  // an encoder–decoder's grid: which attention
  HeadMeasure measure = HeadMeasure::Sink;  // the model view where thumbnails would be unreadable: a cell per head
};

// A figure's subtitle is laid out as a formula (widgets/formula.h): a
// folder name and a user's text are escaped to stay literal, and a long text
// is quoted by its beginning (160 bytes, then …), so the subtitle stays a
// line or two.
std::string literalSubtitle(const std::string& plain);
std::string quotedStart(const std::string& text);

// Throws InputError for a selection out of range or a pattern view without a
// pattern in `out`.
PreparedFigure prepareModelFigure(const ModelOutput& out, ModelView view, const ModelFigureSelection& sel,
                                  const FigureOptions& options);
// prepareModelFigure and writeFigure; throws InputError (a bad file name
// too) and writes nothing then.
int exportModelFigure(const ModelOutput& out, ModelView view, const ModelFigureSelection& sel,
                      const FigureOptions& options, const std::string& path);

}  // namespace attn
