// attnlab model info / model run: a real checkpoint without a window.
#include "app/cli/cli.h"
#include "app/cli/staged_dir.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/model/model.h"
#include "engine/npy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace attn {

// [SECTION] model info
int cmdModelInfo(const std::string& path, bool json) {
  const std::shared_ptr<const Model> model = loadModel(filesOnDisk(path));
  const ModelInfo& info = modelInfo(*model);
  if (json) {
    std::cout << modelInfoToJson(info).dump(2) << "\n";
    return 0;
  }
  const ModelConfig& c = info.config;
  std::printf("%s\n", info.label.c_str());
  std::printf("  architecture  %s\n", c.arch_name.c_str());
  std::printf("  layers        %lld\n", static_cast<long long>(c.layers));
  std::printf("  heads         %lld (d_head %lld)\n", static_cast<long long>(c.heads), static_cast<long long>(c.head_dim));
  std::printf("  d_model       %lld (d_ff %lld)\n", static_cast<long long>(c.d_model), static_cast<long long>(c.d_ff));
  std::printf("  positions     %lld\n", static_cast<long long>(c.positions));
  std::printf("  vocabulary    %lld\n", static_cast<long long>(c.vocab));
  std::printf("  parameters    %lld\n", static_cast<long long>(info.parameters));
  std::printf("  dtype         %s\n", info.dtype.c_str());
  std::printf("  size on disk  %s (%llu bytes)\n", formatBytes(static_cast<double>(info.bytes_on_disk)).c_str(),
              static_cast<unsigned long long>(info.bytes_on_disk));
  size_t width = 4;
  for (const TensorSummary& t : info.tensors) width = std::max(width, t.name.size());
  std::printf("\n  %-*s  %-18s %-5s %s\n", static_cast<int>(width), "name", "shape", "dtype", "file");
  for (const TensorSummary& t : info.tensors)
    std::printf("  %-*s  %-18s %-5s %s\n", static_cast<int>(width), t.name.c_str(),
                Array{t.shape, {}}.shapeString().c_str(), t.dtype.c_str(), t.file.c_str());
  return 0;
}

// [SECTION] model run
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

}  // namespace

int cmdModelRun(const ModelRunCliOptions& o) {
  if (o.top_k < 0) throw InputError("--top-k: expected K ≥ 0, got " + std::to_string(o.top_k));
  const std::shared_ptr<const Model> model = loadModel(filesOnDisk(o.path));
  StagedDir dir(o.out_dir);  // validates --out before the run
  ModelRunOptions options{.truncate = o.truncate, .top_k = o.top_k};
  options.predict_at = parsePredictAt(o.predict_at);
  const ModelRun run = runModel(*model, o.text, options);
  const int64_t L = static_cast<int64_t>(run.ids.size());

  dir.write("tokens.json", nlohmann::json{{"ids", run.ids}, {"tokens", run.tokens}}.dump(2) + "\n");
  // attention.npy: float32 [layers, heads, L, L]
  const std::vector<int64_t> attention_shape = {run.layers, run.heads, L, L};
  std::vector<std::span<const float>> maps;  // every head's map in place, no stacked copy
  for (const std::vector<Mat>& layer : run.attention)
    for (const Mat& a : layer) maps.push_back(values(a));
  dir.writeNpy("attention.npy", attention_shape, maps);
  dir.writeNpy("hidden.npy", run.hidden);

  const ModelInfo& info = modelInfo(*model);
  nlohmann::json meta;
  meta["model"] = info.label;
  meta["architecture"] = info.config.arch_name;
  meta["layers"] = run.layers;
  meta["heads"] = run.heads;
  meta["d_head"] = run.d_head;
  meta["causal"] = run.causal;
  meta["tokens"] = L;
  meta["truncated"] = run.truncated;
  meta["flops"] = run.flops;
  meta["compute_seconds"] = run.compute_seconds;
  meta["threads"] = run.threads;
  meta["shapes"] = {{"attention", attention_shape}, {"hidden", {run.hidden.rows(), run.hidden.cols()}}};
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
  dir.write("meta.json", meta.dump(2) + "\n");
  dir.commit();
  std::cout << "wrote " << o.out_dir << ": " << info.config.arch_name << ", " << L << " tokens"
            << (run.truncated ? " (truncated)" : "") << ", attention " << Array{attention_shape, {}}.shapeString()
            << ", " << run.flops / 1e9 << " GFLOP in " << run.compute_seconds * 1e3 << " ms\n";
  return 0;
}

}  // namespace attn
