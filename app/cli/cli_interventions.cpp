// attnlab model ablate | importance | patch | lens | attribute: which heads a
// text model's prediction depends on (engine/model/analysis/interventions.h),
// each written as .npy arrays and one .json beside them, all or nothing.
#include "app/cli/cli.h"
#include "app/cli/staged_dir.h"
#include "app/model/embedded_model.h"
#include "engine/files.h"
#include "engine/model/analysis/interventions.h"
#include "engine/model/blocks/maps.h"
#include "engine/model/model.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

namespace attn {

namespace {

nlohmann::json scoreJson(const TokenScore& s) {
  return {{"logit", s.logit}, {"log_prob", s.log_prob}, {"probability", s.probability()}};
}

nlohmann::json targetJson(const Target& t) { return {{"position", t.position}, {"id", t.id}, {"token", t.token}}; }

HeadAblation::Mode ablationMode(const std::string& mode) {
  if (mode == "zero") return HeadAblation::Mode::Zero;
  if (mode == "mean") return HeadAblation::Mode::Mean;
  throw InputError("--mode: expected zero or mean, got '" + mode + "'");
}

// The text read as `model run` reads it: --text, --text-file or the model's example.
std::string textOf(const std::string& text, const std::string& text_file, const std::string& path, const char* flag) {
  return text_file.empty() ? textOrExample(text, path) : readWholeFile(text_file, flag);
}

// "‹ cat›" and its probability, for the one-line summaries.
std::string said(const std::string& token, double p) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", p);
  return "‹" + token + "› " + buf;
}

}  // namespace

int cmdModelIntervention(const InterventionCliOptions& o) {
  if (o.top_k < 1) throw InputError("--top-k: expected K ≥ 1, got " + std::to_string(o.top_k));
  if (!o.token.empty() && o.token_id >= 0) throw InputError("--token and --token-id: give one of them");
  const HeadAblation::Mode mode = ablationMode(o.mode);
  const std::vector<std::pair<int64_t, int64_t>> heads =
      o.heads.empty() ? std::vector<std::pair<int64_t, int64_t>>{} : parseLayerHeads(o.heads, "--heads");
  if (o.what == "ablate" && heads.empty()) throw InputError("--heads: name the heads to ablate, layer:head pairs such as 0:3,5:1");
  const ModelFiles files = modelFiles(o.path);
  const std::shared_ptr<const Model> model = loadModel(files);
  const ModelConfig& c = modelInfo(*model).config;
  if (c.encoderDecoder() || c.vision())
    throw InputError(o.path + ": " + c.arch_name + " is not a text model with one stack; model " + o.what +
                     " edits a decoder's or an encoder's pass");
  checkLayerHeads(heads, c.layers, c.heads, "--heads");
  const std::vector<int32_t> ids = textIds(*model, textOf(o.text, o.text_file, o.path, "--text-file"), o.truncate);
  std::vector<int32_t> corrupted;
  if (o.what == "patch") {
    if (o.corrupted.empty() && o.corrupted_file.empty())
      throw InputError("--corrupted: model patch needs the corrupted text (--corrupted or --corrupted-file)");
    corrupted = textIds(*model, o.corrupted_file.empty() ? o.corrupted : readWholeFile(o.corrupted_file, "--corrupted-file"),
                        o.truncate);
  } else if (!o.corrupted.empty() || !o.corrupted_file.empty()) {
    throw InputError("--corrupted: only model patch reads a second text");
  }
  if (o.token_id >= c.vocab || o.token_id < -1)  // before the narrowing below (chooseTarget checks an int32)
    throw InputError("--token-id: " + std::to_string(o.token_id) + " is outside the vocabulary [0, " +
                     std::to_string(c.vocab) + ")");
  const int32_t token_id = o.token.empty() ? static_cast<int32_t>(o.token_id) : tokenIdOf(*model, o.token);
  StagedDir dir(o.out_dir);  // validates --out before the passes
  const auto t0 = std::chrono::steady_clock::now();
  nlohmann::json meta{{"model", modelInfo(*model).label}, {"command", o.what}, {"layers", c.layers}, {"heads", c.heads}};
  std::vector<std::string> tokens;
  for (const int32_t id : ids) tokens.push_back(modelTokenizer(*model).display(id));
  meta["tokens"] = tokens;
  std::string summary;
  if (o.what == "lens") {
    const LogitLens lens = logitLens(*model, ids, o.top_k);
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& layer : lens.top) {
      nlohmann::json row = nlohmann::json::array();
      for (const auto& top : layer) row.push_back(predictionsJson(top));
      layers.push_back(row);
    }
    meta["top_k"] = layers;  // [layer 0 = embeddings … layers][position][k]
    dir.writeNpy("lens.npy", lens.final_token);
    const auto& last = lens.top.back().back();
    summary = "logit lens over " + std::to_string(c.layers + 1) + " streams × " + std::to_string(ids.size()) +
              " positions; the last position predicts " + said(last.at(0).token, last.at(0).probability);
  } else {
    const Target target = chooseTarget(*model, ids, o.position, token_id);
    meta["target"] = targetJson(target);
    if (o.what == "ablate") {
      const AblationEffect e = ablationEffect(*model, ids, {mode, heads}, target, o.top_k);
      meta["mode"] = o.mode;
      meta["ablated"] = o.heads;
      meta["before"] = scoreJson(e.before);
      meta["after"] = scoreJson(e.after);
      meta["top_k_before"] = predictionsJson(e.top_before);
      meta["top_k_after"] = predictionsJson(e.top_after);
      summary = "ablated " + o.heads + " (" + o.mode + "): " + said(target.token, e.before.probability()) + " → " +
                said(target.token, e.after.probability()) + " at position " + std::to_string(target.position);
    } else if (o.what == "importance") {
      const ImportanceGrid g = importanceGrid(*model, ids, mode, target);
      meta["mode"] = o.mode;
      meta["base"] = scoreJson(g.base);
      meta["layer_passes"] = g.layer_passes;
      meta["full_pass_layers"] = c.layers * (1 + c.layers * c.heads);  // the same heads, each in a whole pass
      nlohmann::json ranking = nlohmann::json::array();
      const std::vector<std::pair<int64_t, int64_t>> ranked = headsByValue(g.delta);
      for (const auto& [l, h] : ranked) ranking.push_back({{"layer", l}, {"head", h}, {"delta_log_prob", g.delta(l, h)}});
      meta["ranking"] = ranking;  // the heads whose ablation lowers log p(target) most first
      dir.writeNpy("importance.npy", g.delta);
      const auto& top = ranked.front();
      const float d0 = g.delta(top.first, top.second);
      char buf[96];
      std::snprintf(buf, sizeof buf, "%.4f", d0);
      summary = "importance of " + std::to_string(c.layers * c.heads) + " heads for " + said(target.token, g.base.probability()) +
                ": most, layer " + std::to_string(top.first) + " head " + std::to_string(top.second) + " (Δ log p " + buf + ")";
    } else if (o.what == "patch") {
      const PatchingResult r = activationPatching(*model, ids, corrupted, target, {});
      meta["clean"] = scoreJson(r.clean);
      meta["corrupted"] = scoreJson(r.corrupted);
      std::vector<std::string> corrupted_tokens;
      for (const int32_t id : corrupted) corrupted_tokens.push_back(modelTokenizer(*model).display(id));
      meta["corrupted_tokens"] = corrupted_tokens;
      // log p(target) in the corrupted pass with the clean value patched in, and the share of the clean prediction it restores
      dir.writeNpy("patch_heads.npy", r.heads);
      dir.writeNpy("patch_residual.npy", r.residual);
      meta["restorable"] = r.restorable();
      if (r.restorable()) {
        dir.writeNpy("restored_heads.npy", r.restoredHeads());
        dir.writeNpy("restored_residual.npy", r.restoredResidual());
      } else {
        std::cerr << "patch: the two texts give the target nearly the same probability (less than " << kPatchingSpan
                  << " nats apart): no share restored is written\n";
      }
      summary = "patched " + std::to_string(c.layers * c.heads) + " heads and " + std::to_string(c.layers) + " × " +
                std::to_string(ids.size()) + " residual positions: clean " + said(target.token, r.clean.probability()) +
                ", corrupted " + said(target.token, r.corrupted.probability());
    } else {
      const LogitAttribution a = directLogitAttribution(*model, ids, target);
      meta["logit"] = a.logit;
      meta["sum"] = a.sum();
      nlohmann::json parts = nlohmann::json::array();
      for (const LogitAttribution::Part& p : a.parts)
        parts.push_back({{"name", p.name}, {"layer", p.layer}, {"head", p.head}, {"value", p.value}});
      meta["parts"] = parts;  // in the order of the stream; they add up to `logit`
      dir.writeNpy("attribution_heads.npy", a.heads);
      char buf[96];
      std::snprintf(buf, sizeof buf, "logit %.4f = %.4f summed over %zu parts", a.logit, a.sum(), a.parts.size());
      summary = "attribution of ‹" + target.token + "› at position " + std::to_string(target.position) + ": " + buf;
    }
  }
  meta["seconds"] = secondsSince(t0);
  dir.write(o.what + ".json", jsonText(meta));
  dir.commit();
  std::cout << "wrote " << o.out_dir << ": " << summary << "\n";
  return 0;
}

}  // namespace attn
