// attnlab model info / run / generate: a real checkpoint without a window.
#include "app/cli/cli.h"
#include "app/cli/staged_dir.h"
#include "app/model/compare_scene.h"
#include "app/model/model_scene.h"
#include "app/model/embedded_model.h"
#include "app/model/seq2seq_scene.h"
#include "app/model/vision_scene.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/files.h"
#include "engine/model/kinds/generate.h"
#include "engine/model/blocks/head_metrics.h"
#include "engine/model/blocks/maps.h"
#include "engine/model/model.h"
#include "engine/model/kinds/seq2seq.h"
#include "engine/model/kinds/vision.h"
#include "engine/npy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace attn {

// [SECTION] model families
int cmdModelFamilies(bool json, bool markdown) {
  const std::vector<FamilySummary> families = modelFamilySummaries();
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const FamilySummary& f : families)
      j.push_back({{"model_type", f.model_type}, {"label", f.label}, {"paper", f.paper},
                   {"architectures", f.architectures}, {"causal", f.causal}, {"attention", f.attention}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (markdown) std::printf("| family | `model_type` | `architectures` | attention | paper |\n|---|---|---|---|---|\n");
  for (const FamilySummary& f : families) {
    std::string archs;
    for (const std::string& a : f.architectures) archs += (archs.empty() ? "" : markdown ? ", " : " ") + (markdown ? "`" + a + "`" : a);
    if (markdown)
      std::printf("| %s | `%s` | %s | %s | %s |\n", f.label.c_str(), f.model_type.c_str(), archs.c_str(),
                  f.attention.c_str(), f.paper.c_str());
    else
      std::printf("%-12s %-14s %-16s %s\n", f.label.c_str(), f.model_type.c_str(), f.attention.c_str(), archs.c_str());
  }
  return 0;
}

// [SECTION] model info
int cmdModelInfo(const std::string& path, bool json) {
  const std::shared_ptr<const Model> model = loadModel(modelFiles(path));
  const ModelInfo& info = modelInfo(*model);
  if (json) {
    std::cout << modelInfoToJson(info).dump(2) << "\n";
    return 0;
  }
  const ModelConfig& c = info.config;
  std::printf("%s\n", info.label.c_str());
  std::printf("  architecture  %s\n", c.arch_name.c_str());
  if (c.encoderDecoder())
    std::printf("  layers        %lld encoder + %lld decoder (decoder starts at token %lld)\n",
                static_cast<long long>(c.layers), static_cast<long long>(c.decoder_layers),
                static_cast<long long>(c.decoder_start));
  else
    std::printf("  layers        %lld\n", static_cast<long long>(c.layers));
  std::printf("  heads         %lld (d_head %lld)\n", static_cast<long long>(c.heads), static_cast<long long>(c.head_dim));
  std::printf("  family        %s (%s)\n", c.label.c_str(), attentionKind(c.causal, c.encoderDecoder()).c_str());
  if (c.kv_heads != c.heads)
    std::printf("  kv heads      %lld (%s)\n", static_cast<long long>(c.kv_heads),
                c.kv_heads == 1 ? "multi-query: all query heads share one"
                                : ("grouped-query: " + std::to_string(c.heads / c.kv_heads) +
                                   " query heads per key/value head").c_str());
  if (c.uses_rope) {
    auto rope = [&](const RopeSpec& r) {
      std::string s = "RoPE, θ base " + nlohmann::json(r.theta).dump();
      if (r.type != "default") s += ", " + r.type + " scaling ×" + nlohmann::json(r.factor).dump();
      if (r.partial < 1) s += ", " + std::to_string(r.rotaryDims(c.head_dim)) + " of " + std::to_string(c.head_dim) + " dimensions rotate";
      return s;
    };
    std::printf("  positions as  %s\n", rope(c.rope).c_str());
    if (c.local_rope) std::printf("  local layers  %s\n", rope(c.rope_local).c_str());
  }
  if (c.alibi) std::printf("  positions as  ALiBi (linear biases on the scores)\n");
  if (!c.layer_window.empty()) {
    int64_t windowed = 0;
    for (const int64_t w : c.layer_window) windowed += w > 0;
    std::printf("  window        %lld keys, on %lld of %lld layers\n", static_cast<long long>(c.sliding_window),
                static_cast<long long>(windowed), static_cast<long long>(c.layers));
  }
  if (c.attn_softcap > 0) std::printf("  soft-capping  scores %g·tanh(s/%g)\n", c.attn_softcap, c.attn_softcap);
  if (c.final_softcap > 0) std::printf("  soft-capping  logits %g·tanh(z/%g)\n", c.final_softcap, c.final_softcap);
  if (c.qk_norm) std::printf("  QK-norm       q and k normalised before the scores\n");
  if (!c.blocks.empty()) std::printf("  norm / MLP    %s\n", c.blocks.c_str());
  std::printf("  d_model       %lld (d_ff %lld)\n", static_cast<long long>(c.d_model), static_cast<long long>(c.d_ff));
  if (c.relative_buckets > 0)
    std::printf("  positions     relative: %lld buckets up to %lld apart, per head, no table to run out of\n",
                static_cast<long long>(c.relative_buckets), static_cast<long long>(c.relative_max_distance));
  else
    std::printf("  positions     %lld\n", static_cast<long long>(c.positions));
  std::printf("  vocabulary    %lld\n", static_cast<long long>(c.vocab));
  std::printf("  parameters    %lld\n", static_cast<long long>(info.parameters));
  std::printf("  dtype         %s", info.dtype.c_str());
  if (!c.dtype.empty() && c.dtype != info.dtype) std::printf(" (saved as %s)", c.dtype.c_str());
  std::printf("\n");
  // The weights by how they are stored (a GGUF file's quantization), and what they cost per weight.
  std::string stored;
  for (const StorageSummary& s : info.storage) {
    char share[32];
    std::snprintf(share, sizeof share, " (%.1f%% of weights)",
                  100.0 * static_cast<double>(s.parameters) / static_cast<double>(std::max<int64_t>(info.parameters, 1)));
    stored += (stored.empty() ? "" : ", ") + s.dtype + " " + std::to_string(s.tensors) +
              (s.tensors == 1 ? " tensor" : " tensors") + share;
  }
  std::printf("  stored as     %s\n", stored.c_str());
  std::printf("  bits / weight %.2f\n", info.bits_per_weight);
  std::printf("  size on disk  %s (%llu bytes)\n", formatBytes(static_cast<double>(info.bytes_on_disk)).c_str(),
              static_cast<unsigned long long>(info.bytes_on_disk));
  size_t width = 4;
  for (const TensorSummary& t : info.tensors) width = std::max(width, t.name.size());
  std::printf("\n  %-*s  %-18s %-6s %s\n", static_cast<int>(width), "name", "shape", "dtype", "file");
  for (const TensorSummary& t : info.tensors)
    std::printf("  %-*s  %-18s %-6s %s\n", static_cast<int>(width), t.name.c_str(),
                Array{t.shape, {}}.shapeString().c_str(), t.dtype.c_str(), t.file.c_str());
  return 0;
}

// [SECTION] model run
std::string jsonText(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

nlohmann::json predictionsJson(const std::vector<Prediction>& top) {
  nlohmann::json r = nlohmann::json::array();
  for (const Prediction& p : top) r.push_back({{"id", p.id}, {"token", p.token}, {"probability", p.probability}});
  return r;
}

namespace {

// --predict-at: "all" (every position), "last" (-1) or integers "0,7,-1" (negative: from the end).
std::vector<int64_t> parsePredictAt(const std::string& text) {
  if (text == "all") return {};
  if (text == "last") return {-1};
  std::vector<int64_t> positions;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size())
      throw InputError("--predict-at: expected all, last or positions such as 0,7,-1, got '" + text + "'");
    positions.push_back(v);
    start = end + 1;
  }
  return positions;
}

// heads.json: what the model view's head table shows, per layer and head.
nlohmann::json headsJson(const std::vector<HeadSummary>& summaries, bool induction) {
  nlohmann::json heads = nlohmann::json::array();
  for (const HeadSummary& s : summaries) {
    nlohmann::json h = {{"layer", s.layer},
                        {"head", s.head},
                        {"previous_token", s.previous_token},
                        {"sink", s.sink},
                        {"mean_distance", s.mean_distance},
                        {"entropy", s.entropy},
                        {"kv_head", s.kv_head},
                        {"group_size", s.group_size},
                        {"group_divergence", s.group_divergence}};
    if (induction) h["induction"] = s.induction;
    heads.push_back(h);
  }
  return heads;
}

// The config of the folder, read before its weights (nullopt without config.json: loadModel says so).
std::optional<ModelConfig> configOf(const ModelFiles& files) {
  const std::optional<std::string> text = files.read_text("config.json");
  if (!text) return std::nullopt;
  return parseConfig(*text, (std::filesystem::path(files.label) / "config.json").string());
}

// [layer][head] maps as one .npy [layers, heads, rows, cols].
void writeMaps(StagedDir& dir, const std::string& name, const std::vector<std::vector<Mat>>& maps, int64_t heads,
               int64_t rows, int64_t cols) {
  std::vector<std::span<const float>> parts;
  for (const std::vector<Mat>& layer : maps)
    for (const Mat& a : layer) parts.push_back(values(a));
  dir.writeNpy(name, {static_cast<int64_t>(maps.size()), heads, rows, cols}, parts);
}

// model run PATH --text SOURCE [--target TARGET] on an encoder–decoder (T5, BART).
int cmdModelRunSeq2Seq(const ModelRunCliOptions& o, const ModelFiles& files, const std::string& text) {
  if (o.maps != "auto") throw InputError("--maps: an encoder–decoder run writes every map (leave --maps out)");
  if (o.predict_at != "all") throw InputError("--predict-at: an encoder–decoder run predicts after every target token (leave --predict-at out)");
  if (o.truncate) throw InputError("--truncate: not available for encoder–decoder models (shorten the source or the target)");
  const std::shared_ptr<const Model> model = loadModel(files);
  const ModelConfig& c = modelInfo(*model).config;
  StagedDir dir(o.out_dir);  // validates --out before the run
  // No --target: the teacher-forced pass over the model's own greedy translation, as the window and render show it.
  const bool translate = hasDecoder(*model) && !o.target;
  const Seq2SeqRun run = translate ? runSeq2SeqIds(*model, sourceIds(*model, text),
                                                   generateSeq2Seq(*model, text, kTranslateTokens).run.target_ids, o.top_k)
                                   : runSeq2Seq(*model, text, o.target.value_or(""), o.top_k);
  const int64_t S = static_cast<int64_t>(run.source_ids.size()), T = static_cast<int64_t>(run.target_ids.size());
  dir.write("tokens.json", jsonText(nlohmann::json{{"source_ids", run.source_ids},
                                                   {"source_tokens", run.source_tokens},
                                                   {"target_ids", run.target_ids},
                                                   {"target_tokens", run.target_tokens}}));
  nlohmann::json shapes;
  writeMaps(dir, "encoder_attention.npy", run.encoder_attention, run.heads, S, S);
  shapes["encoder_attention"] = {run.encoder_layers, run.heads, S, S};
  dir.writeNpy("encoder_hidden.npy", run.encoder_hidden);
  shapes["encoder_hidden"] = {run.encoder_hidden.rows(), run.encoder_hidden.cols()};
  if (run.decoder_layers > 0) {
    writeMaps(dir, "decoder_attention.npy", run.decoder_attention, run.heads, T, T);
    writeMaps(dir, "cross_attention.npy", run.cross_attention, run.heads, T, S);
    dir.writeNpy("decoder_hidden.npy", run.decoder_hidden);
    shapes["decoder_attention"] = {run.decoder_layers, run.heads, T, T};
    shapes["cross_attention"] = {run.decoder_layers, run.heads, T, S};
    shapes["decoder_hidden"] = {run.decoder_hidden.rows(), run.decoder_hidden.cols()};
  }
  nlohmann::json meta = {{"model", modelInfo(*model).label},
                         {"architecture", c.arch_name},
                         {"encoder_layers", run.encoder_layers},
                         {"decoder_layers", run.decoder_layers},
                         {"heads", run.heads},
                         {"d_head", run.d_head},
                         {"source_tokens", S},
                         {"target_tokens", T},
                         {"decoder_start_token_id", c.decoder_start},
                         {"target", translate ? "the model's own greedy translation" : "given (--target)"},
                         {"flops", run.flops},
                         {"compute_seconds", run.compute_seconds},
                         {"cross_attention_layout", "cross_attention[layer, head, t, s]: target position t (row, "
                                                    "decoder_start first) attending to source position s"},
                         {"shapes", shapes}};
  if (!run.top_k.empty() && o.top_k > 0) {
    meta["top_k_predicts"] = "next token after the target position";
    nlohmann::json top = nlohmann::json::array();
    for (const std::vector<Prediction>& row : run.top_k) top.push_back(predictionsJson(row));
    meta["top_k"] = top;  // top_k[t]: after target position t
  }
  dir.write("meta.json", jsonText(meta));
  dir.commit();
  std::cout << "wrote " << o.out_dir << ": " << c.arch_name << ", " << S << " source tokens"
            << (run.decoder_layers > 0 ? ", " + std::to_string(T) + " target tokens, cross-attention " +
                                             Array{shapes["cross_attention"].get<std::vector<int64_t>>(), {}}.shapeString()
                                       : std::string(" (encoder alone)"))
            << ", " << run.flops / 1e9 << " GFLOP in " << run.compute_seconds * 1e3 << " ms\n";
  return 0;
}

// model run PATH --image FILE | --pixels FILE.npy on a vision model (ViT).
int cmdModelRunVision(const ModelRunCliOptions& o, const ModelFiles& files) {
  if (!o.text.empty() || !o.text_file.empty() || o.target)
    throw InputError(std::string(o.target ? "--target" : "--text") + ": a vision model reads a picture (--image FILE or --pixels FILE.npy), not text");
  // No picture: a shipped model's first example.
  const std::vector<std::string> examples = modelExamplePictures(o.path);
  if (o.image.empty() && o.pixels.empty() && examples.empty())
    throw InputError("--image: a vision model reads a picture: give --image FILE.png or --pixels FILE.npy");
  if (o.maps != "auto" || o.predict_at != "all" || o.truncate)
    throw InputError(std::string(o.maps != "auto" ? "--maps" : o.predict_at != "all" ? "--predict-at" : "--truncate") +
                     ": not available for vision models (every map is written)");
  const Array pixels = !o.pixels.empty() ? readNpy(o.pixels, "--pixels")
                                         : preparedPicture(files, o.image.empty() ? examples.front() : o.image,
                                                           o.image.empty(), "--image");
  const std::shared_ptr<const Model> model = loadModel(files);
  const ModelConfig& c = modelInfo(*model).config;
  StagedDir dir(o.out_dir);  // validates --out before the run
  const VisionRun run = runVision(*model, pixels, o.top_k);
  const int64_t n = 1 + run.grid_h * run.grid_w;
  writeMaps(dir, "attention.npy", run.attention, run.heads, n, n);
  dir.writeNpy("hidden.npy", run.hidden);
  dir.writeNpy("pixel_values.npy", run.pixel_values);
  // rollout.npy [layers, 1 + P, 1 + P]: R_l (row 0 is [CLS]'s rollout over the picture); attention_distance.npy [layers, heads]
  const std::vector<Mat> rollout = attentionRollout(run.attention);
  std::vector<std::span<const float>> rolled;
  for (const Mat& R : rollout) rolled.push_back(values(R));
  dir.writeNpy("rollout.npy", {run.layers, n, n}, rolled);
  std::vector<float> distance;
  for (const std::vector<double>& layer : attentionDistance(run, c.patch_size))
    for (const double d : layer) distance.push_back(static_cast<float>(d));
  dir.writeNpy("attention_distance.npy", {run.layers, run.heads}, std::vector{std::span<const float>(distance)});
  nlohmann::json meta = {{"model", modelInfo(*model).label},
                         {"architecture", c.arch_name},
                         {"layers", run.layers},
                         {"heads", run.heads},
                         {"d_head", run.d_head},
                         {"image_size", c.image_size},
                         {"patch_size", c.patch_size},
                         {"grid", {run.grid_h, run.grid_w}},
                         {"tokens", n},
                         {"token_layout", "token 0 is [CLS]; token 1 + gy·grid_w + gx the patch at row gy, column gx"},
                         {"flops", run.flops},
                         {"compute_seconds", run.compute_seconds},
                         {"shapes", {{"attention", {run.layers, run.heads, n, n}},
                                     {"hidden", {run.hidden.rows(), run.hidden.cols()}},
                                     {"pixel_values", run.pixel_values.shape},
                                     {"rollout", {run.layers, n, n}},
                                     {"attention_distance", {run.layers, run.heads}}}},
                         {"rollout", "Abnar & Zuidema with the residual: R_l = (½·mean_h A_l + ½·I, rows renormalised) · R_{l−1}"},
                         {"attention_distance", "per layer and head, pixels: mean over query patches of Σ_j a_ij·|c_i − c_j|, "
                                                "a the patch-to-patch weights renormalised ([CLS] left out)"}};
  if (!run.top_k.empty()) meta["top_k"] = predictionsJson(run.top_k);  // the classifier's labels on [CLS], best first
  dir.write("meta.json", jsonText(meta));
  dir.commit();
  std::cout << "wrote " << o.out_dir << ": " << c.arch_name << ", " << run.grid_h << "×" << run.grid_w
            << " patches + [CLS], attention " << Array{{run.layers, run.heads, n, n}, {}}.shapeString()
            << (run.top_k.empty() ? std::string() : ", top label '" + run.top_k[0].token + "'") << ", "
            << run.compute_seconds * 1e3 << " ms\n";
  return 0;
}

}  // namespace

int cmdModelRun(const ModelRunCliOptions& o) {
  if (o.top_k < 0) throw InputError("--top-k: expected K ≥ 0, got " + std::to_string(o.top_k));
  const ModelFiles files = modelFiles(o.path);
  const std::optional<ModelConfig> config = configOf(files);
  if (config && config->vision()) return cmdModelRunVision(o, files);
  if (!o.image.empty() || !o.pixels.empty())
    throw InputError(std::string(o.image.empty() ? "--pixels" : "--image") + ": " +
                     (config ? config->arch_name : std::string("this model")) + " reads text, not pictures (--image needs a ViT)");
  const std::string text = o.text_file.empty() ? textOrExample(o.text, o.path) : readWholeFile(o.text_file, "--text-file");
  if (const std::optional<ModelConfig>& c = config) {
    if (c->encoderDecoder()) return cmdModelRunSeq2Seq(o, files, text);
    if (o.target)
      throw InputError("--target: " + c->arch_name + " is not an encoder–decoder model (--target needs T5 or BART; "
                       "run it with --text alone)");
  }
  const std::shared_ptr<const Model> model = loadModel(files);
  const ModelInfo& info = modelInfo(*model);
  StagedDir dir(o.out_dir);  // validates --out before the run
  ModelRunOptions options{.truncate = o.truncate, .top_k = o.top_k};
  options.predict_at = parsePredictAt(o.predict_at);
  options.maps = parseMapsChoice(o.maps);
  options.keep_projections = false;  // nothing here reads q, k, v
  // Every map (--maps all, or auto when they fit) goes to attention.npy
  // block of rows by block of rows as the pass makes it: never assembled.
  std::unique_ptr<NpyStreamWriter> maps_file;
  std::filesystem::path maps_path;
  std::once_flag maps_opened;
  options.map_rows = [&](int64_t l, int64_t h, int64_t r0, const Eigen::Ref<const Mat>& rows) {
    const int64_t L = rows.cols();
    std::call_once(maps_opened, [&] {
      maps_path = dir.prepare("attention.npy");
      maps_file = std::make_unique<NpyStreamWriter>(maps_path,
                                                    std::vector<int64_t>{info.config.layers, info.config.heads, L, L});
    });
    // Rows of a row-major matrix: one contiguous run of n·L values.
    const Mat block = rows;
    maps_file->write(((l * info.config.heads + h) * L + r0) * L, block.data(), block.size());
  };
  const ModelRun run = runModel(*model, text, options);
  const int64_t L = static_cast<int64_t>(run.ids.size());
  if (!run.maps_note.empty()) std::cerr << "maps: " << run.maps_note << " (--maps to choose)\n";

  dir.write("tokens.json", jsonText(nlohmann::json{{"ids", run.ids}, {"tokens", run.tokens}}));
  nlohmann::json shapes = {{"hidden", {run.hidden.rows(), run.hidden.cols()}}};
  std::vector<int64_t> attention_shape;
  if (run.maps == MapsChoice::Mode::All) {
    if (maps_file) maps_file->close();
    attention_shape = {run.layers, run.heads, L, L};
  } else if (run.maps == MapsChoice::Mode::Heads) {
    // attention.npy [n, L, L]: the maps of the heads asked for, in that order.
    std::vector<std::span<const float>> maps;
    for (const auto& [l, h] : options.maps.heads) maps.push_back(values(run.attention[static_cast<size_t>(l)][static_cast<size_t>(h)]));
    attention_shape = {static_cast<int64_t>(maps.size()), L, L};
    dir.writeNpy("attention.npy", attention_shape, maps);
  }
  if (!attention_shape.empty()) shapes["attention"] = attention_shape;
  // attention_pooled(_max).npy [layers, heads, n, n]
  const std::vector<int64_t> pooled_shape = {run.layers, run.heads, run.pooled.n, run.pooled.n};
  if (run.pooled.mean.empty()) {
    // Blocks of 1 with every map streamed: the pooled maps are attention.npy (maps.h).
    for (const char* name : {"attention_pooled.npy", "attention_pooled_max.npy"})
      std::filesystem::copy_file(maps_path, dir.prepare(name));
  } else {
    std::vector<std::span<const float>> means, maxima;
    for (size_t i = 0; i < run.pooled.mean.size(); ++i) {
      means.push_back(values(run.pooled.mean[i]));
      maxima.push_back(values(run.pooled.max[i]));
    }
    dir.writeNpy("attention_pooled.npy", pooled_shape, means);
    dir.writeNpy("attention_pooled_max.npy", pooled_shape, maxima);
  }
  shapes["attention_pooled"] = shapes["attention_pooled_max"] = pooled_shape;
  // heads.json: induction from the repeated random sequence, where the model is causal
  const ModelRun repeated = inductionRun(*model);
  dir.write("heads.json", jsonText(headsJson(summarizeHeads(run, repeated), run.causal)));
  dir.writeNpy("hidden.npy", run.hidden);

  nlohmann::json meta;
  meta["model"] = info.label;
  meta["architecture"] = info.config.arch_name;
  meta["layers"] = run.layers;
  meta["heads"] = run.heads;
  meta["d_head"] = run.d_head;
  meta["causal"] = run.causal;
  meta["tokens"] = L;
  meta["text"] = text;  // as read (a truncated run read its first `tokens` tokens): figures of the folder quote it
  meta["truncated"] = run.truncated;
  meta["maps"] = mapsModeName(run.maps);
  if (!run.maps_note.empty()) meta["maps_note"] = run.maps_note;
  if (run.maps == MapsChoice::Mode::Heads) {
    nlohmann::json heads = nlohmann::json::array();
    for (const auto& [l, h] : options.maps.heads) heads.push_back({{"layer", l}, {"head", h}});
    meta["attention_heads"] = heads;  // attention.npy[n] is the map of attention_heads[n]
  }
  meta["pooled_block"] = run.pooled.block;  // pooled entry (i, j): query positions [i·s, (i+1)·s) to keys [j·s, (j+1)·s)
  meta["flops"] = run.flops;
  meta["compute_seconds"] = run.compute_seconds;
  meta["attention_flops"] = run.attention_flops;
  meta["attention_seconds"] = run.attention_seconds;
  meta["threads"] = run.threads;
  meta["layer_threads"] = run.layer_threads;  // a long pass looks at the free cores again between layers
  meta["shapes"] = shapes;
  if (!run.top_k.empty() && o.top_k > 0) {
    // GPT-2: the next token after the position; BERT MLM: the token at the position.
    meta["top_k_predicts"] = run.causal ? "next token" : "token at the position";
    nlohmann::json top = nlohmann::json::array(), positions = nlohmann::json::array();
    for (size_t i = 0; i < run.top_k.size(); ++i) {
      if (run.top_k[i].empty()) continue;  // not asked for (--predict-at)
      nlohmann::json r = nlohmann::json::array();
      for (const Prediction& p : run.top_k[i]) r.push_back({{"id", p.id}, {"token", p.token}, {"probability", p.probability}});
      top.push_back(r);
      positions.push_back(i);
    }
    meta["top_k"] = top;  // top_k[n] is at position top_k_positions[n]
    meta["top_k_positions"] = positions;
  }
  dir.write("meta.json", jsonText(meta));
  dir.commit();
  std::cout << "wrote " << o.out_dir << ": " << info.config.arch_name << ", " << L << " tokens"
            << (run.truncated ? " (truncated)" : "") << ", maps " << mapsModeName(run.maps)
            << (attention_shape.empty() ? "" : " " + Array{attention_shape, {}}.shapeString()) << ", pooled "
            << Array{pooled_shape, {}}.shapeString() << ", " << run.flops / 1e9 << " GFLOP in "
            << run.compute_seconds * 1e3 << " ms\n";
  return 0;
}

// [SECTION] model compare

int cmdModelCompare(const ModelCompareCliOptions& o) {
  if (o.text_b.empty() && o.model_b.empty())
    throw InputError("model compare: run B needs a second prompt (--text-b) or a second model (--model-b)");
  const ModelFiles files = modelFiles(o.path);
  if (const std::optional<ModelConfig> c = configOf(files); c && (c->encoderDecoder() || c->vision()))
    throw InputError("model compare: " + c->arch_name + " is not a text model; compare reads decoder or encoder-only text models");
  const std::shared_ptr<const Model> model_a = loadModel(files);
  const std::shared_ptr<const Model> model_b = o.model_b.empty() ? model_a : loadComparableModel(*model_a, o.model_b);
  StagedDir dir(o.out_dir);  // validates --out before the runs
  const std::string text_a = textOrExample(o.text, o.path), text_b = o.text_b.empty() ? text_a : o.text_b;
  ModelRunOptions options{.truncate = o.truncate, .top_k = 0};
  options.maps.mode = MapsChoice::Mode::All;  // refused before allocating where every map would not fit
  options.keep_projections = false;
  const ModelRun a = runModel(*model_a, text_a, options), b = runModel(*model_b, text_b, options);
  const RunComparison c = compareRuns(a, b);
  const auto n = static_cast<int64_t>(c.tokens.size());
  writeMaps(dir, "diff.npy", c.difference, c.heads, n, n);

  auto head = [&](int64_t i) {
    return nlohmann::json{{"layer", i / c.heads}, {"head", i % c.heads}, {"js", c.js[static_cast<size_t>(i)]}};
  };
  nlohmann::json heads = nlohmann::json::array(), ranking = nlohmann::json::array(), pairs = nlohmann::json::array();
  for (int64_t i = 0; i < static_cast<int64_t>(c.js.size()); ++i) heads.push_back(head(i));
  for (int64_t i : c.ranking) ranking.push_back(head(i));
  for (const auto& [i, j] : c.alignment.pairs) pairs.push_back({i, j});
  auto run = [](const Model& m, const std::string& text, const ModelRun& r) {
    return nlohmann::json{{"model", modelInfo(m).label}, {"text", text}, {"ids", r.ids}, {"tokens", r.tokens}, {"truncated", r.truncated}};
  };
  const bool positional = c.alignment.positional();
  nlohmann::json js = {
      {"a", run(*model_a, text_a, a)},
      {"b", run(*model_b, text_b, b)},
      {"layers", c.layers},
      {"heads", heads},     // layer-major; js: mean over the aligned rows of JS(A_i ‖ B_i), bits (log₂)
      {"ranking", ranking},  // the heads by js, largest first
      {"alignment",
       {{"method", positional ? "position by position" : "longest common subsequence of the token ids"},
        {"description", c.alignment.describe()},
        {"matched", n},
        {"pairs", pairs},  // (position in A, position in B): diff.npy's rows and columns
        {"rows", positional ? "whole rows" : kAlignedRows}}},
      {"tokens", c.tokens},  // diff.npy's rows and columns, as A spells them
      {"shapes", {{"diff", {c.layers, c.heads, n, n}}}}};
  dir.write("js.json", jsonText(js));
  dir.commit();
  const int64_t top = c.ranking.front();
  char line[32];
  std::snprintf(line, sizeof line, "%.3f", c.js[static_cast<size_t>(top)]);
  std::cout << "wrote " << o.out_dir << ": " << c.alignment.describe() << ", diff " << Array{{c.layers, c.heads, n, n}, {}}.shapeString()
            << ", most divergent " << headLabel(top / c.heads, top % c.heads) << " (JS " << line << " bits)\n";
  return 0;
}

// [SECTION] model generate
namespace {

// model generate on an encoder–decoder: greedy, each step's cross-attention row.
int cmdModelGenerateSeq2Seq(const ModelGenerateCliOptions& o, const ModelFiles& files) {
  if (o.top_k > 0 || o.truncate)
    throw InputError(std::string(o.top_k > 0 ? "--top-k" : "--truncate") +
                     ": encoder–decoder models generate greedily here (leave it out)");
  const std::shared_ptr<const Model> model = loadModel(files);
  const ModelConfig& c = modelInfo(*model).config;
  StagedDir dir(o.out_dir);  // validates --out before the run
  const Seq2SeqGeneration g = generateSeq2Seq(*model, textOrExample(o.text, o.path), o.max_new);
  const Seq2SeqRun& r = g.run;
  const int64_t S = static_cast<int64_t>(r.source_ids.size()), steps = static_cast<int64_t>(g.tokens.size());
  nlohmann::json ids = nlohmann::json::array(), tokens = nlohmann::json::array(), probs = nlohmann::json::array();
  for (const Prediction& t : g.tokens) ids.push_back(t.id), tokens.push_back(t.token), probs.push_back(t.probability);
  dir.write("tokens.json", jsonText(nlohmann::json{{"source_ids", r.source_ids},
                                                   {"source_tokens", r.source_tokens},
                                                   {"decoder_ids", r.target_ids},
                                                   {"decoder_tokens", r.target_tokens},
                                                   {"ids", ids},
                                                   {"tokens", tokens},
                                                   {"probabilities", probs},
                                                   {"text", g.text}}));
  // cross_attention.npy [steps, layers, heads, S]: step s's query (the decoder's token s) over the source.
  const std::vector<int64_t> shape = {steps, r.decoder_layers, r.heads, S};
  std::vector<float> cross(static_cast<size_t>(steps * r.decoder_layers * r.heads * S));
  for (int64_t s = 0; s < steps; ++s)
    for (int64_t l = 0; l < r.decoder_layers; ++l)
      for (int64_t h = 0; h < r.heads; ++h) {
        const Mat& a = r.cross_attention[static_cast<size_t>(l)][static_cast<size_t>(h)];
        std::copy(a.row(s).data(), a.row(s).data() + S, cross.begin() + ((s * r.decoder_layers + l) * r.heads + h) * S);
      }
  dir.writeNpy("cross_attention.npy", shape, std::vector{std::span<const float>(cross)});
  writeMaps(dir, "encoder_attention.npy", r.encoder_attention, r.heads, S, S);
  nlohmann::json meta = {{"model", modelInfo(*model).label},
                         {"architecture", c.arch_name},
                         {"encoder_layers", r.encoder_layers},
                         {"decoder_layers", r.decoder_layers},
                         {"heads", r.heads},
                         {"source_tokens", S},
                         {"steps", steps},
                         {"max_new", o.max_new},
                         {"stopped_at_eos", g.stopped_at_eos},
                         {"sampling", {{"mode", "greedy"}}},
                         {"seconds", g.seconds},
                         {"cross_attention_layout", "cross_attention[s, layer, head, j]: the decoder's query at step s "
                                                    "(reading decoder_tokens[s], choosing tokens[s]) over source position j"},
                         {"shapes", {{"cross_attention", shape}, {"encoder_attention", {r.encoder_layers, r.heads, S, S}}}}};
  dir.write("meta.json", jsonText(meta));
  dir.commit();
  std::cout << "wrote " << o.out_dir << ": " << c.arch_name << ", " << S << " source tokens, " << steps << " new"
            << (g.stopped_at_eos ? " (stopped at end of text)" : "") << ", cross-attention "
            << Array{shape, {}}.shapeString() << ", " << g.seconds * 1e3 << " ms\n";
  std::cout << "text: " << g.text << "\n";
  return 0;
}

}  // namespace

int cmdModelGenerate(const ModelGenerateCliOptions& o) {
  if (o.greedy && o.top_k > 0) throw InputError("--greedy and --top-k: give one (greedy takes the most probable token)");
  const ModelFiles files = modelFiles(o.path);
  if (const std::optional<ModelConfig> c = configOf(files); c && c->encoderDecoder()) return cmdModelGenerateSeq2Seq(o, files);
  const std::shared_ptr<const Model> model = loadModel(files);
  StagedDir dir(o.out_dir);  // validates --out before the run
  const Generation g = generate(*model, textOrExample(o.text, o.path),
                                {.max_new = o.max_new, .top_k = o.greedy ? 0 : o.top_k, .temperature = o.temperature,
                                 .seed = o.seed, .truncate = o.truncate});
  const ModelRun& p = g.prompt;
  const int64_t P = static_cast<int64_t>(p.ids.size()), S = static_cast<int64_t>(g.tokens.size());
  const int64_t L_max = P + S, per_step = p.layers * p.heads * L_max;
  checkMemoryBudget(4.0 * static_cast<double>(S) * static_cast<double>(per_step), "the attention of the new tokens");

  nlohmann::json ids = nlohmann::json::array(), tokens = nlohmann::json::array(), probs = nlohmann::json::array();
  std::vector<int32_t> lengths;
  // attention.npy [steps, layers, heads, L_max]: new token s's row over positions 0 … P + s, zero after lengths[s].
  std::vector<float> attention(static_cast<size_t>(S * per_step), 0.0f);
  for (int64_t s = 0; s < S; ++s) {
    const GeneratedToken& t = g.tokens[static_cast<size_t>(s)];
    ids.push_back(t.id), tokens.push_back(t.token), probs.push_back(t.probability);
    lengths.push_back(static_cast<int32_t>(P + s + 1));
    for (int64_t l = 0; l < p.layers; ++l)
      for (int64_t h = 0; h < p.heads; ++h) {
        const Mat& row = t.step.attention[static_cast<size_t>(l)][static_cast<size_t>(h)];
        std::copy(row.data(), row.data() + row.size(),
                  attention.begin() + s * per_step + (l * p.heads + h) * L_max);
      }
  }
  dir.write("tokens.json", jsonText(nlohmann::json{{"prompt_ids", p.ids}, {"prompt_tokens", p.tokens}, {"ids", ids},
                                                   {"tokens", tokens}, {"probabilities", probs}, {"text", g.text}}));
  const std::vector<int64_t> shape = {S, p.layers, p.heads, L_max};
  dir.writeNpy("attention.npy", shape, std::vector{std::span<const float>(attention)});
  dir.writeNpy("lengths.npy", {S}, std::vector{std::span<const int32_t>(lengths)});
  writeMaps(dir, "prompt_attention.npy", p.attention, p.heads, P, P);  // the prompt's own maps [layers, heads, P, P]

  const ModelInfo& info = modelInfo(*model);
  nlohmann::json meta = {{"model", info.label},
                         {"architecture", info.config.arch_name},
                         {"layers", p.layers},
                         {"heads", p.heads},
                         {"kv_heads", p.kv_heads},
                         {"sliding_window", p.sliding_window},
                         {"prompt_tokens", P},
                         {"steps", S},
                         {"max_new", o.max_new},
                         {"stopped_at_eos", g.stopped_at_eos},
                         {"truncated", g.truncated},
                         {"sampling", o.greedy || o.top_k == 0
                                          ? nlohmann::json{{"mode", "greedy"}}
                                          : nlohmann::json{{"mode", "top-k"}, {"top_k", o.top_k},
                                                           {"temperature", o.temperature}, {"seed", o.seed}}},
                         {"seconds", g.seconds},
                         {"attention_layout", "attention[s, layer, head, j]: new token s (position prompt_tokens + s) "
                                              "attending to position j < lengths[s]; zero after"},
                         {"shapes", {{"attention", shape}, {"lengths", {S}}, {"prompt_attention", {p.layers, p.heads, P, P}}}}};
  dir.write("meta.json", jsonText(meta));
  dir.commit();
  std::cout << "wrote " << o.out_dir << ": " << info.config.arch_name << ", " << P << " prompt tokens + " << S
            << " new" << (g.stopped_at_eos ? " (stopped at end of text)" : "") << ", attention "
            << Array{shape, {}}.shapeString() << ", " << g.seconds * 1e3 << " ms\n";
  std::cout << "text: " << g.text << "\n";
  return 0;
}

}  // namespace attn
