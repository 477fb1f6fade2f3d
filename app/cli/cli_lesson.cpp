// attnlab lesson list / lesson export: the lessons (app/lesson) without a window.
#include "app/cli/cli.h"

#include "app/export/model_kinds.h"
#include "app/export/handout.h"
#include "app/lesson/lesson.h"
#include "app/model/embedded_model.h"
#include "engine/compare.h"
#include "engine/error.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

namespace attn {

int cmdLessonList(bool json) {
  std::vector<std::string> errors;
  const std::vector<Lesson> lessons = allLessons(errors);
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Lesson& l : lessons)
      out.push_back({{"name", l.name},
                     {"title", l.title},
                     {"steps", l.steps.size()},
                     {"variants", l.variants()},
                     {"summary", l.summary},
                     {"file", l.file}});
    std::cout << out.dump(2) << "\n";
  } else {
    for (const Lesson& l : lessons) {
      std::string variants;
      for (const std::string& v : l.variants()) variants += (variants.empty() ? "" : ", ") + v;
      std::cout << l.name << std::string(l.name.size() < 22 ? 22 - l.name.size() : 1, ' ') << l.title << "  ("
                << l.steps.size() << " steps)\n"
                << "      " << l.summary << "\n"
                << "      variants: " << variants << "\n";
    }
  }
  // Lessons that do not load are reported after the list, one line each.
  for (const std::string& e : errors) std::cerr << "attnlab: " << e << "\n";
  return errors.empty() ? 0 : 2;
}

namespace {

// What one step's figure needs, computed before Qt starts.
struct StepFigure {
  FigureOptions options;
  std::shared_ptr<const std::vector<Result>> results;  // a variant's step
  std::unique_ptr<Comparison> comparison;    // its compare view
  std::unique_ptr<ModelOutput> model;        // a model step
  std::string model_view;
  ModelFigureSelection selection;
};

// The models the steps have read so far, by path ("" the embedded default).
using LoadedModels = std::map<std::string, std::pair<std::shared_ptr<const Model>, std::shared_ptr<const ModelFiles>>>;

StepFigure computeStep(const LessonStep& step, LoadedModels& models) {
  const SceneOptions& scene = step.scene;
  const DefaultScene& d = defaultScene();
  StepFigure f;
  f.options.params.marks = step.highlights;
  f.options.font_size = 8;  // points, as the paper sizes; the page gives the size (writeHandout)
  f.options.title = "";     // the page titles the step
  if (scene.model_workspace) {
    auto& [model, files] = models[scene.model];
    if (!model) {
      files = std::make_shared<const ModelFiles>(modelFiles(scene.model.empty() ? kDefaultModelPath : scene.model));
      model = loadModel(*files);
    }
    ModelScene ms;
    ms.model = model;
    ms.files = files;
    ms.text = textOrExample(scene.input.text, scene.model);
    ms.truncate = scene.truncate;
    setModelInputs(ms, scene.model, scene.target, scene.image);
    f.model_view = scene.view.empty() ? d.model_view : scene.view;
    checkModelViewName(f.model_view);
    f.selection = {scene.layer >= 0 ? scene.layer : d.layer, scene.head >= 0 ? scene.head : d.head, scene.query, scene.key,
                   Seq2SeqMaps::Cross};
    ms.pattern = f.model_view == "pattern";
    ms.probe = probeOfView(f.model_view);
    ms.corrupted = scene.corrupted;
    ms.predict_at = scene.query;
    ms.layer = f.selection.layer;
    ms.head = f.selection.head;
    const VariantInfo& pattern = variantOrThrow(scene.pattern.empty() ? d.pattern : scene.pattern);
    ms.pattern_variant = pattern.name;
    ms.pattern_params = resolveParams(pattern, scene.sets);
    f.model = std::make_unique<ModelOutput>(computeModelScene(ms, nullptr, {}));
    if (f.model->too_long_tokens > 0)
      throw InputError("\"text\": " + std::to_string(f.model->too_long_tokens) + " tokens, more than the " +
                       std::to_string(f.model->too_long_limit) + " the model reads: shorten it, or cut it with \"truncate\": true");
    if (!f.model->error.empty()) throw InputError(f.model->error);
    return f;
  }
  const VariantInfo& info = variantOrThrow(scene.variant);
  const ViewInfo& view = viewOrThrow(scene.view.empty() ? "heatmap" : scene.view);
  f.options.view = view.name;
  f.options.params.head = std::max(0, scene.head);
  f.options.params.query = scene.query;
  f.options.params.stage = scene.stage;
  f.options.params.focus_panel = scene.panel;
  f.results = std::make_shared<const std::vector<Result>>(
      figureResults(info, resolveInputs(sceneInput(scene)), resolveParams(info, scene.sets), view));
  if (view.comparison) f.comparison = std::make_unique<Comparison>(compareWithFull((*f.results)[0]));
  return f;
}

std::string stepError(const Lesson& l, size_t i, const std::string& what) {
  return l.file + ": step " + std::to_string(i + 1) + ": " + what;
}

}  // namespace

int cmdLessonExport(int argc, char** argv, const LessonExportOptions& o) {
  const Lesson lesson = findLesson(o.name);
  const auto [width, height] = parseSize(o.size, "--size");
  if (width < 288 || height < 288)
    throw InputError("--size: a handout page needs at least 288x288 points (4 in), got '" + o.size + "'");
  // Every step computed first (a bad step fails before anything is written), then painted.
  LoadedModels models;
  std::vector<StepFigure> figures;
  for (size_t i = 0; i < lesson.steps.size(); ++i) {
    try {
      figures.push_back(computeStep(lesson.steps[i], models));
    } catch (const InputError& e) {
      throw InputError(stepError(lesson, i, e.what()));
    }
  }
  HeadlessQt qt(argc, argv);
  std::vector<HandoutPage> pages;
  for (size_t i = 0; i < lesson.steps.size(); ++i) {
    const LessonStep& step = lesson.steps[i];
    const StepFigure& f = figures[i];
    // Laid out once here, so a step the figure cannot show fails before anything is written.
    auto prepare = [&f](int w, int h) {
      FigureOptions o = f.options;
      o.width = w;
      o.height = h;
      return f.model ? prepareModelFigure(*f.model, f.model_view, f.selection, o) : prepareFigure(f.results, o, f.comparison.get());
    };
    try {
      prepare(width, height);
    } catch (const InputError& e) {
      throw InputError(stepError(lesson, i, e.what()));
    }
    HandoutPage page;
    page.figure = prepare;
    page.heading = lesson.title + "  \xC2\xB7  step " + std::to_string(i + 1) + " of " + std::to_string(lesson.steps.size());
    page.title = step.title;
    page.narration = paperNarration(step);
    if (page.narration.empty())
      throw InputError(stepError(lesson, i, "\"narration\": every sentence acts on the window; give the handout's text as \"paper\""));
    page.formula = step.formula;
    page.prompt = paperPrompt(step);
    pages.push_back(std::move(page));
  }
  writeHandout(pages, lesson.title, width, height, o.out);
  std::cout << "wrote " << o.out << " (" << pages.size() << " pages, " << width << "x" << height << " pt)\n";
  return 0;
}

}  // namespace attn
