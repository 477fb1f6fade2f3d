// attnlab model info / model run: a real checkpoint without a window.
#include "app/cli.h"
#include "app/staged_dir.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/model/model.h"
#include "engine/npy.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

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
  std::printf("  heads         %lld (d_head %lld)\n", static_cast<long long>(c.heads), static_cast<long long>(c.headDim()));
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
int cmdModelRun(const ModelRunCliOptions& o) {
  if (o.top_k < 0) throw InputError("--top-k: expected K ≥ 0, got " + std::to_string(o.top_k));
  const std::shared_ptr<const Model> model = loadModel(filesOnDisk(o.path));
  StagedDir dir(o.out_dir);  // validates --out before the run
  const ModelRun run = runModel(*model, o.text, {.truncate = o.truncate, .top_k = o.top_k});
  const int64_t L = static_cast<int64_t>(run.ids.size());

  dir.write("tokens.json", nlohmann::json{{"ids", run.ids}, {"tokens", run.tokens}}.dump(2) + "\n");
  // attention.npy: float32 [layers, heads, L, L]
  const std::vector<int64_t> attention_shape = {run.layers, run.heads, L, L};
  std::vector<float> values;
  values.reserve(static_cast<size_t>(run.layers * run.heads * L * L));
  for (const std::vector<Mat>& layer : run.attention)
    for (const Mat& a : layer) values.insert(values.end(), a.data(), a.data() + a.size());
  dir.write("attention.npy", encodeNpy(attention_shape, values));
  const Array hidden = Array::fromMat(run.hidden);
  dir.write("hidden.npy", encodeNpy(hidden));

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
  meta["shapes"] = {{"attention", attention_shape}, {"hidden", hidden.shape}};
  if (!run.top_k.empty()) {
    // GPT-2: row i is the next token after position i; BERT MLM: the token at position i.
    meta["top_k_predicts"] = run.causal ? "next token" : "token at the position";
    nlohmann::json top = nlohmann::json::array();
    for (const std::vector<Prediction>& row : run.top_k) {
      nlohmann::json r = nlohmann::json::array();
      for (const Prediction& p : row) r.push_back({{"id", p.id}, {"token", p.token}, {"probability", p.probability}});
      top.push_back(r);
    }
    meta["top_k"] = top;
  }
  dir.write("meta.json", meta.dump(2) + "\n");
  dir.commit();
  std::cout << "wrote " << o.out_dir << ": " << info.config.arch_name << ", " << L << " tokens"
            << (run.truncated ? " (truncated)" : "") << ", attention " << Array{attention_shape, {}}.shapeString()
            << ", " << run.flops / 1e9 << " GFLOP in " << run.compute_seconds * 1e3 << " ms\n";
  return 0;
}

}  // namespace attn
