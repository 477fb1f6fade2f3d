#include "app/cli/cli.h"

#include "app/bench/bench.h"
#include "app/model/embedded_model.h"
#include "app/model/seq2seq_scene.h"
#include "app/export/model_kinds.h"
#include "app/qt/qt_messages.h"
#include "app/cli/staged_dir.h"
#include "app/shared/scene_options.h"

#include "engine/attention_math.h"
#include "engine/compare.h"
#include "engine/error.h"
#include "engine/model/kinds/seq2seq.h"
#include "engine/npy.h"

#include <nlohmann/json.hpp>

#include <QGuiApplication>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <tuple>

namespace fs = std::filesystem;

namespace attn {

// [SECTION] list
int cmdList(bool json) {
  if (json) {
    std::cout << registryToJson().dump(2) << "\n";
    return 0;
  }
  for (const std::string& family : families()) {
    std::cout << family << "\n";
    for (const VariantInfo& v : variants()) {
      if (v.family != family) continue;
      std::cout << "  " << v.name << std::string(v.name.size() < 20 ? 20 - v.name.size() : 1, ' ') << v.title
                << "  (" << v.citation << ")\n";
      std::cout << "      " << v.summary << "\n";
      for (const ParamSpec& p : v.params) {
        std::cout << "      --set " << p.key << "=" << formatValue(p.def) << "  [" << paramTypeName(p.type);
        if (hasRange(p.type))
          std::cout << " " << formatValue(p.type == ParamType::Int ? ParamValue(static_cast<int64_t>(p.min)) : ParamValue(p.min))
                    << ".." << formatValue(p.type == ParamType::Int ? ParamValue(static_cast<int64_t>(p.max)) : ParamValue(p.max));
        if (p.type == ParamType::Choice)
          for (size_t i = 0; i < p.choices.size(); ++i) std::cout << (i ? "|" : " ") << p.choices[i];
        std::cout << "]  " << p.symbol << ": " << p.help << "\n";
      }
      std::cout << "      views:";
      for (const std::string& k : v.views) std::cout << " " << k;
      std::cout << "\n";
    }
  }
  return 0;
}

int cmdListKinds(bool json) {
  nlohmann::json out = nlohmann::json::array();
  for (const ModelKindInfo* k : modelKindRegistry()) {
    nlohmann::json views = nlohmann::json::array();
    for (size_t i = 0; i < k->views.size(); ++i)
      views.push_back({{"name", k->views[i].name},
                       {"key", modelViewDigit(i) >= 0 ? nlohmann::json(modelViewDigit(i)) : nlohmann::json()},
                       {"help", k->views[i].help}});
    out.push_back({{"name", k->name}, {"summary", k->summary}, {"views", views}});
  }
  if (json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  for (const nlohmann::json& k : out) {
    std::cout << k["name"].get<std::string>() << "\n      " << k["summary"].get<std::string>() << "\n";
    for (const nlohmann::json& v : k["views"]) {
      const std::string name = v["name"];
      std::cout << "  " << (v["key"].is_null() ? " " : std::to_string(v["key"].get<int>())) << " " << name
                << std::string(name.size() < 12 ? 12 - name.size() : 1, ' ')
                << v["help"].get<std::string>() << "\n";
    }
  }
  return 0;
}

// [SECTION] compute
namespace {

nlohmann::json shapeJson(const Array& a) { return a.shape; }

// Sparse weights as CSR over all heads (docs/cli.md "Sparse weights"):
//   weights_indptr  int64 [H, Lq + 1]: head h, query i owns entries
//                   [indptr[h, i], indptr[h, i + 1]) of the two arrays below
//                   (offsets into the concatenation of all heads, so
//                   indptr[h, 0] = nnz of heads 0 … h−1 and indptr[H−1, Lq] = nnz)
//   weights_indices int32 [nnz]: key j of each entry, ascending within a row
//   weights_values  float32 [nnz]: attention weight of each entry
nlohmann::json writeSparseWeights(const std::vector<SparseRows>& heads, StagedDir& dir) {
  std::vector<int64_t> indptr;
  std::vector<std::span<const int32_t>> indices;
  std::vector<std::span<const float>> values;
  int64_t offset = 0;
  for (const SparseRows& s : heads) {
    for (const int64_t p : s.indptr) indptr.push_back(offset + p);
    indices.emplace_back(s.indices);
    values.emplace_back(s.values);
    offset += s.nnz();
  }
  const int64_t h = static_cast<int64_t>(heads.size()), rows = heads.empty() ? 0 : heads[0].rows;
  dir.writeNpy("weights_indptr.npy", {h, rows + 1}, std::vector{std::span<const int64_t>(indptr)});
  dir.writeNpy("weights_indices.npy", {offset}, indices);
  dir.writeNpy("weights_values.npy", {offset}, values);
  return {{"weights_indptr", {h, rows + 1}}, {"weights_indices", {offset}}, {"weights_values", {offset}}};
}

}  // namespace

int cmdCompute(const ComputeOptions& o) {
  const VariantInfo& info = variantOrThrow(o.variant);
  if (o.compare && std::find(info.views.begin(), info.views.end(), "compare") == info.views.end())
    throw InputError("--compare: " + info.name + " is not a pattern that can be compared with full attention "
                     "(variants with the compare view: see attnlab list)");
  const Params params = resolveParams(info, o.sets);
  const Inputs inputs = resolveInputs(o.input);
  StagedDir dir(o.out_dir);  // validates --out before the (possibly long) run
  RunContext ctx;
  ctx.keep_weights = !o.no_weights;  // no dense copies of a sparse result nobody writes
  const Result r = runVariant(info, inputs, params, ctx);

  nlohmann::json meta;
  meta["variant"] = r.variant;
  meta["family"] = info.family;
  meta["params"] = r.params.toJson();
  meta["flops"] = r.flops;
  meta["compute_seconds"] = r.compute_seconds;
  meta["threads"] = r.threads;
  meta["seed"] = inputs.seed;
  meta["heads"] = r.heads();
  meta["q_tokens"] = r.q_tokens;
  meta["k_tokens"] = r.k_tokens;
  meta["weights_are_probabilities"] = r.weights_are_probabilities;
  nlohmann::json shapes;

  const std::vector<int64_t> weights_shape = {r.heads(), r.queries(), r.keys()};
  shapes["weights"] = weights_shape;
  // Straight from the result's matrices: no stacked copy of [H, Lq, Lk].
  if (!r.weights.empty() && !o.no_weights) dir.writeNpy("weights.npy", weights_shape, values(r.weights));
  if (r.isSparse()) {
    nlohmann::json sparse = {{"set_names", r.set_names}, {"image_width", r.image_width}};
    for (const SparseRows& s : r.sparse) sparse["nnz"].push_back(s.nnz());
    // Dense weights exist only where denseFits(); beyond that they are written as CSR.
    if (r.weights.empty() && !o.no_weights) shapes.update(writeSparseWeights(r.sparse, dir));
    meta["sparse"] = sparse;
  }
  if (!r.scores.empty()) {
    const std::vector<int64_t> shape = {static_cast<int64_t>(r.scores.size()), r.scores[0].rows(), r.scores[0].cols()};
    shapes["scores"] = shape;
    dir.writeNpy("scores.npy", shape, values(r.scores));
  }
  if (r.output.size()) {
    shapes["output"] = {r.output.rows(), r.output.cols()};
    dir.writeNpy("output.npy", r.output);
  }
  if (r.mask.size()) {
    shapes["mask"] = {r.mask.rows(), r.mask.cols()};
    dir.writeNpy("mask.npy", r.mask);
  }
  nlohmann::json in_json = nlohmann::json::object();
  for (const auto& [name, m] : r.inputs) {
    const bool vector = std::find(r.vector_inputs.begin(), r.vector_inputs.end(), name) != r.vector_inputs.end();
    const auto given = r.input_shapes.find(name);
    const std::vector<int64_t> shape = given != r.input_shapes.end() ? given->second
                                       : vector ? std::vector<int64_t>{m.size()}
                                                : std::vector<int64_t>{m.rows(), m.cols()};
    in_json[name] = shape;
    dir.writeNpy("inputs/" + name + ".npy", shape, std::vector{values(m)});
  }
  meta["inputs"] = in_json;
  nlohmann::json ex_json = nlohmann::json::object();
  for (const Extra& e : r.extras) {
    ex_json[e.name] = {{"kind", extraKindName(e.kind)}, {"label", e.label}, {"shape", shapeJson(e.value)},
                       {"dtype", e.integer ? "int32" : "float32"}};
    if (!e.integer) {
      dir.writeNpy("extras/" + e.name + ".npy", e.value);
      continue;
    }
    std::vector<int32_t> whole(e.value.data.size());
    std::transform(e.value.data.begin(), e.value.data.end(), whole.begin(),
                   [](float x) { return static_cast<int32_t>(std::lround(x)); });
    dir.writeNpy("extras/" + e.name + ".npy", e.value.shape, std::vector{std::span<const int32_t>(whole)});
  }
  meta["extras"] = ex_json;
  meta["shapes"] = shapes;
  if (o.compare) {
    // What the pattern loses against full causal attention on the same q, k, v.
    const Comparison c = compareWithFull(r);
    dir.write("compare.json", comparisonToJson(c).dump(2) + "\n");
    dir.writeNpy("compare/mass_kept.npy", c.mass_kept);
    dir.writeNpy("compare/kl.npy", c.kl);
    std::cout << r.variant << " against full attention: mass kept " << c.mass_kept_mean * 100.0 << "%, KL(full‖pattern) "
              << (std::isfinite(c.kl_mean) ? std::to_string(c.kl_mean) : "∞ (" + std::to_string(c.kl_finite) + " finite)")
              << ", output error " << c.output_rel_error * 100.0 << "%, " << c.pattern_connections << " of "
              << c.full_connections << " connections\n";
  }
  meta["peak_rss_bytes"] = peakMemoryBytes();  // this process, for checking that large L stays sparse
  meta["page_faults"] = pageFaults();          // this process so far: the cost of touching fresh memory
  dir.write("meta.json", meta.dump(2) + "\n");
  dir.commit();
  std::cout << "wrote " << o.out_dir << ": " << r.variant << " weights " << Array{weights_shape, {}}.shapeString()
            << (!r.weights.empty() ? "" : r.isSparse() ? " (sparse)" : " (streamed, not kept)") << ", "
            << r.flops / 1e9 << " GFLOP in " << r.compute_seconds * 1e3 << " ms\n";
  return 0;
}

// [SECTION] render
std::pair<int, int> parseSize(const std::string& s, const std::string& flag) {
  int w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(s.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || x != 'x' || w < 64 || h < 64 || w > 16384 ||
      h > 16384)
    throw InputError(flag + ": expected WxH with 64 ≤ W, H ≤ 16384, got '" + s + "'");
  return {w, h};
}

namespace {

// Size, colormap, title and theme of a render, with the output name checked.
FigureOptions figureOptions(const RenderOptions& o) {
  FigureOptions fig;
  applyFigureSize(o.size, "--size", fig);
  if (!scaleKindFromName(o.scale, fig.params.scale.kind))
    throw InputError("--scale: unknown scale '" + o.scale + "' (expected auto, linear, log, power or percentile)");
  if (!(o.gamma >= 0.1 && o.gamma <= 4)) throw InputError("--gamma: expected 0.1 to 4, got " + std::to_string(o.gamma));
  if (!(o.percentile >= 50 && o.percentile <= 100))
    throw InputError("--percentile: expected 50 to 100, got " + std::to_string(o.percentile));
  fig.params.scale.gamma = static_cast<float>(o.gamma);
  fig.params.scale.percentile = static_cast<float>(o.percentile);
  if (o.font_size != 0) {
    if (!(o.font_size >= 4 && o.font_size <= 200))
      throw InputError("--font-size: expected 4 to 200 (points for SVG/PDF, pixels for PNG), got " + std::to_string(o.font_size));
    fig.font_size = o.font_size;
  }
  if (!colormapFromName(o.colormap, fig.params.colormap))
    throw InputError("--colormap: unknown colormap '" + o.colormap + "' (expected viridis, magma, blues, gray or coolwarm)");
  fig.title = o.title;
  fig.dark = o.dark;
  return fig;
}

// What `render` writes: --format, else --out's extension; "html" is a model's page.
std::string outputFormat(const RenderOptions& o) {
  const std::string ext = fs::path(o.out).extension().string();
  const std::string f = o.format.empty() ? (ext.empty() ? "" : ext.substr(1)) : o.format;
  if (f != "png" && f != "svg" && f != "pdf" && f != "html")
    throw InputError(o.format.empty() ? "--out " + o.out + ": expected a .png, .svg, .pdf or .html file name"
                                      : "--format: expected png, svg, pdf or html, got '" + o.format + "'");
  if (ext != "." + f) throw InputError("--out " + o.out + ": --format " + f + " writes a ." + f + " file");
  return f;
}

// `attnlab render --model PATH | --default-model [--text T | --target T | --image FILE] --view V`,
// or `render --attention PATH [--tokens FILE] [--q Q.npy --k K.npy] --view V`:
// the kind (app/export/model_kinds.h) runs it and draws the view.
// The kind that draws `o`: attention from a file, or the model's (read from its config).
const ModelKindInfo& renderKind(const RenderOptions& o, ModelRunRequest& r) {
  if (!o.variant.empty()) throw InputError("render: give a variant NAME or --model / --default-model / --attention, not both");
  if ((!o.model.empty()) + o.default_model + (!o.attention.empty()) > 1)
    throw InputError("render: give one of --model PATH, --default-model and --attention PATH");
  r.tokens = o.tokens;
  r.q = o.input.q;
  r.k = o.input.k;
  if (!o.attention.empty()) {
    r.path = o.attention;
    return attentionFileKind();
  }
  if (!o.tokens.empty()) throw InputError("--tokens: names the tokens of attention from a file (--attention PATH); a model has its own");
  if (!o.input.q.empty() || !o.input.k.empty())
    throw InputError(std::string(o.input.q.empty() ? "--k" : "--q") +
                     ": a model computes its own q and k; --q and --k go with --attention PATH or a variant");
  r.path = o.default_model ? kDefaultModelPath : o.model;
  r.files = std::make_shared<const ModelFiles>(modelFiles(r.path));
  const std::optional<std::string> config = r.files->read_text("config.json");
  return config ? modelKindOf(parseConfig(*config, (fs::path(r.files->label) / "config.json").string()))
                : modelKindOf(static_cast<const Model*>(nullptr));
}

// `render --format html`: the kind's page of every head (app/export/html_page.h).
int renderPage(int argc, char** argv, const RenderOptions& o, ModelRunRequest& r, const ModelKindInfo& kind) {
  if (!o.view.empty()) throw InputError("--view: the page (--format html) holds every view of the model; leave --view out");
  // A figure's flags: a page sizes itself to the window, has its own scale toggle and query.
  const RenderOptions figure;
  const std::vector<std::pair<const char*, bool>> figure_only = {
      {"--size", o.size != figure.size},         {"--font-size", o.font_size != figure.font_size},
      {"--scale", o.scale != figure.scale},      {"--gamma", o.gamma != figure.gamma},
      {"--percentile", o.percentile != figure.percentile}, {"--dark", o.dark},
      {"--describe", !o.describe.empty()},       {"--query", o.query != figure.query},
      {"--key", o.key != figure.key},            {"--summary", o.summary != figure.summary},
      {"--shade-by", o.shade_by != figure.shade_by},
      {"--pattern", !o.pattern.empty()},         {"--set", !o.sets.empty()},
      {"--corrupted", !o.corrupted.empty()},     {"--value-weighted", o.value_weighted}};
  for (const auto& [flag, given] : figure_only)
    if (given)
      throw InputError(std::string(flag) + ": a figure's option; the page (--format html) sizes itself to the window "
                                           "and holds every view, kind of attention and query (leave it out)");
  if (o.max_bytes < 1) throw InputError("--max-bytes: expected a positive number of bytes, got " + std::to_string(o.max_bytes));
  PageRequest page;
  if (!o.heads.empty()) page.heads = parseLayerHeads(o.heads, "--heads");
  PageOptions po;
  po.layer = o.layer;
  po.head = o.head;
  po.max_bytes = o.max_bytes;
  if (!page.heads.empty() && o.layer == 0 && o.head == 0) std::tie(po.layer, po.head) = page.heads.front();  // opens on one held whole
  if (!colormapFromName(o.colormap, po.colormap) || colormapIsDiverging(po.colormap))
    throw InputError("--colormap: expected viridis, magma, blues or gray for a page of weights, got '" + o.colormap + "'");
  if (!o.attention_of.empty()) {
    seq2seqMapsFromName(o.attention_of, "--attention-of");  // one of the names, else the error naming them
    po.set = o.attention_of;
  }
  r.text = o.input.text;
  r.target = o.target;
  r.image = o.image;
  r.truncate = o.truncate;
  r.attention_of = !o.attention_of.empty();
  const ModelOutput out = kind.run(r);
  HeadlessQt qt(argc, argv);  // the picture's PNG
  po.title = o.title;
  const std::string html = modelPage(out, page, po);
  writeFileAtomic(o.out, html);
  std::cout << "wrote " << o.out << " (" << formatBytes(static_cast<double>(html.size())) << ", " << kind.name
            << " page of " << outputName(out) << ")\n";
  return 0;
}

int cmdRenderModel(int argc, char** argv, const RenderOptions& o) {
  ModelRunRequest r;
  const ModelKindInfo& kind = renderKind(o, r);
  if (outputFormat(o) == "html") return renderPage(argc, argv, o, r, kind);
  if (!o.heads.empty())
    throw InputError("--heads: a model has its own heads; --heads names those a page (--format html) keeps whole");
  const ModelKindView& view = modelViewOrThrow(kind, o.view.empty() ? kind.views.front().name : o.view);
  if (view.name != "compare" && (!o.text_b.empty() || !o.model_b.empty()))
    throw InputError(std::string(o.text_b.empty() ? "--model-b" : "--text-b") +
                     ": run B of the compare view (--view compare); the " + view.name + " view shows one run");
  ModelFigureSelection sel{o.layer, o.head, o.query, o.key};
  sel.kind = seq2seqMapsFromName(o.attention_of.empty() ? "cross" : o.attention_of, "--attention-of");
  sel.measure = headMeasureFromName(o.summary, "--summary");
  sel.shade = textShadeFromName(o.shade_by, "--shade-by");
  const FigureOptions fig = figureOptions(o);
  r.text = o.input.text;
  r.target = o.target;
  r.image = o.image;
  r.truncate = o.truncate;
  r.attention_of = !o.attention_of.empty();
  r.view = view.name;
  if (!o.corrupted.empty() && view.name != "patching")
    throw InputError("--corrupted: only the patching view reads a corrupted prompt (--view patching)");
  r.corrupted = o.corrupted;
  if (o.value_weighted && kind.name != "text")
    throw InputError("--value-weighted: only a text model's maps (a decoder's or an encoder's) are value-weighted here");
  r.value_weighted = o.value_weighted;
  r.query = o.query;
  r.text_b = o.text_b;
  r.model_b = o.model_b;
  r.layer = o.layer;
  r.head = o.head;
  r.pattern = o.pattern.empty() ? defaultPatternVariant() : &variantOrThrow(o.pattern);
  if (view.name == "pattern" && r.pattern) {
    r.pattern = &headPattern(r.pattern->name);
    r.pattern_params = resolveParams(*r.pattern, o.sets);
  }
  const ModelOutput out = kind.run(r);
  HeadlessQt qt(argc, argv);
  const PreparedFigure f = prepareModelFigure(out, view.name, sel, fig);
  writeFigure(f, o.out);
  if (!o.describe.empty()) writeFileAtomic(o.describe, f.described->dump(2) + "\n");
  std::cout << "wrote " << o.out << " (" << view.name << " of " << outputName(out)
            << (out.inputs.vision.picture.empty() ? "" : " on " + fs::path(out.inputs.vision.picture).filename().string()) << ", " << f.options.width
            << "x" << f.options.height << ")\n";
  return 0;
}

}  // namespace

// Headless: QPainter needs a QGuiApplication but no display (the offscreen platform).
int& offscreenPlatform(int& argc) {
  setenv("QT_QPA_PLATFORM", "offscreen", 1);
  quietQtMessages();
  return argc;
}

std::vector<Result> figureResults(const VariantInfo& info, const Inputs& inputs, const Params& params, const ViewInfo& view) {
  std::vector<Result> results;
  if (view.family) {
    // The subject first (it titles the figure), then the members that ran.
    const std::vector<FamilyMember> family = runFamily(info, inputs, params);
    for (const FamilyMember& m : family)
      if (m.variant == info.name) results.push_back(*m.result);
    for (const FamilyMember& m : family)
      if (m.result && m.variant != info.name) results.push_back(*m.result);
  } else {
    results.push_back(runVariant(info, inputs, params));
  }
  return results;
}

int cmdRender(int argc, char** argv, const RenderOptions& o) {
  if (!o.model.empty() || o.default_model || !o.attention.empty()) return cmdRenderModel(argc, argv, o);
  if (!o.tokens.empty()) throw InputError("--tokens: names the tokens of attention from a file (--attention PATH)");
  if (o.truncate) throw InputError("--truncate: cuts a model's text (--model PATH); a variant's text is never cut");
  if (o.variant.empty())
    throw InputError("render: give a variant NAME (see 'attnlab list'), or --model PATH / --default-model / --attention PATH");
  if (outputFormat(o) == "html")
    throw InputError("--format html: the page shows a model's heads (--model, --default-model or --attention); a variant's "
                     "figure is a .png, .svg or .pdf");
  InputOptions input = o.input;
  if (!o.heads.empty()) {  // a variant's number of heads
    size_t used = 0;
    try {
      input.heads = std::stoll(o.heads, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != o.heads.size() || input.heads < 1)
      throw InputError("--heads: expected a variant's number of heads (a positive integer), got '" + o.heads + "'");
  }
  const VariantInfo& info = variantOrThrow(o.variant);
  const Params params = resolveParams(info, o.sets);
  FigureOptions fig = figureOptions(o);
  const ViewInfo& view = variantView(info, o.view.empty() ? "heatmap" : o.view);
  fig.view = view.name;
  const std::vector<Result> results = figureResults(info, resolveInputs(input), params, view);
  fig.params.head = o.head;
  fig.params.query = o.query;
  // The comparison with full attention can take seconds at large L: computed
  // here, before any Qt set-up, and handed to the figure.
  std::optional<Comparison> comparison;
  if (view.comparison) comparison = compareWithFull(results[0]);

  HeadlessQt qt(argc, argv);
  nlohmann::json described;
  const int height = exportFigure(results, fig, o.out, comparison ? &*comparison : nullptr, &described);
  if (!o.describe.empty()) writeFileAtomic(o.describe, described.dump(2) + "\n");
  std::cout << "wrote " << o.out << " (" << fig.view << ", " << fig.width << "x" << height << ")\n";
  return 0;
}

}  // namespace attn
