#include "app/model/compare_scene.h"

#include "app/model/embedded_model.h"
#include "engine/error.h"
#include "engine/model/kinds/seq2seq.h"
#include "engine/model/kinds/vision.h"

namespace attn {

std::shared_ptr<const Model> loadComparableModel(const Model& a, const std::string& path, const RunContext& ctx) {
  std::shared_ptr<const Model> b = loadModel(modelFiles(path), ctx);
  const ModelInfo& info = modelInfo(*b);
  if (isEncoderDecoder(*b) || isVisionModel(*b))
    throw InputError("compare: B, " + info.label + " (" + info.config.arch_name +
                     "), is not a text model; compare reads two runs of decoder or encoder-only text models");
  checkComparable(modelInfo(a), modelTokenizer(a).vocabSize(), info, modelTokenizer(*b).vocabSize());
  return b;
}

std::shared_ptr<const CompareAnalysis> compareSceneAnalysis(const std::shared_ptr<const Model>& model_a, const ModelRun& a,
                                                            const std::string& text_a, const CompareInputs& in,
                                                            bool truncate, const CompareAnalysis* previous,
                                                            const RunContext& ctx) {
  if (in.text.empty() && in.model.empty())
    throw InputError("compare: run B needs a second prompt or a second model (--text-b, --model-b)");
  auto c = std::make_shared<CompareAnalysis>();
  c->inputs = in;
  c->model_b = in.model.empty()                                      ? model_a
               : previous && previous->inputs.model == in.model ? previous->model_b
                                                                    : loadComparableModel(*model_a, in.model, ctx);
  c->text_b = in.text.empty() ? text_a : in.text;
  ModelRunOptions options;
  options.truncate = truncate;
  options.top_k = 0;
  options.maps.mode = MapsChoice::Mode::Auto;  // every map when it fits; compareRuns refuses the rest
  options.keep_projections = false;
  c->run_b = runModel(*c->model_b, c->text_b, options, ctx);
  c->comparison = compareRuns(a, c->run_b, ctx);
  return c;
}

}  // namespace attn
