// The pieces the plain-loop references of the Llama-like families share
// (qwen3_test.cpp, olmo2_test.cpp, phi3_test.cpp): their sizes, embeddings,
// per-head RMSNorm, SwiGLU, the LM head, the comparison with a run, the
// config.json fields both transformers generations share and the tensors of
// the attention projections and the MLP.
#pragma once

#include "engine/model/model.h"

#include "tests/model_fixture.h"
#include "tests/model_reference.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace attn::llama_like {

using namespace mref;
using test::TinyModel;
using nlohmann::json;

struct LikeReference : Reference {
  std::vector<Rows> q_unrotated, k_unrotated, q_prenorm, k_prenorm;  // [layer], k repeated per query head
};

inline constexpr size_t kLayers = 2, kHeads = 4, kKvHeads = 2, kD = 16, kFf = 24, kPositions = 32;

inline Rows embedRef(const TinyModel& m, const std::vector<int32_t>& ids, size_t d) {
  Rows x = zeros(ids.size(), d);
  for (size_t i = 0; i < ids.size(); ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] = m.w("model.embed_tokens.weight")[static_cast<size_t>(ids[i]) * d + e];
  return x;
}

// RMSNorm on each head's dh columns with one weight [dh] (Qwen3RMSNorm on view(…, −1, head_dim)).
inline Rows rmsNormHeadsRef(const Rows& x, size_t dh, const std::vector<float>& w, double eps) {
  Rows y = x;
  for (auto& row : y)
    for (size_t h = 0; h < row.size() / dh; ++h) {
      double ms = 0;
      for (size_t e = 0; e < dh; ++e) ms += row[h * dh + e] * row[h * dh + e];
      ms /= static_cast<double>(dh);
      for (size_t e = 0; e < dh; ++e) row[h * dh + e] = row[h * dh + e] / std::sqrt(ms + eps) * w[e];
    }
  return y;
}

// The MLP: down(act(gate) ⊙ up).
inline Rows swigluRef(const Rows& gate, const Rows& up) {
  Rows g = gate;
  for (size_t i = 0; i < g.size(); ++i)
    for (size_t e = 0; e < g[i].size(); ++e) g[i][e] = silu(g[i][e]) * up[i][e];
  return g;
}

inline Rows lmHeadRef(const TinyModel& m, const Rows& hidden, size_t d) {
  const std::vector<float>& head = m.has("lm_head.weight") ? m.w("lm_head.weight") : m.w("model.embed_tokens.weight");
  return linearRef(hidden, head, {}, d, static_cast<size_t>(m.config.vocab), true);
}

// Every map, q/k/v, hidden and top-3, and the extras the family fills.
inline void expectRunMatches(const ModelRun& run, const LikeReference& ref, bool qk_norm) {
  expectMatches(run, ref, 3);
  expectRows(run.q_unrotated, ref.q_unrotated, "q_unrotated");
  expectRows(run.k_unrotated, ref.k_unrotated, "k_unrotated");
  if (qk_norm) {
    expectRows(run.q_prenorm, ref.q_prenorm, "q_prenorm");
    expectRows(run.k_prenorm, ref.k_prenorm, "k_prenorm");
  } else {
    EXPECT_TRUE(run.q_prenorm.empty() && run.k_prenorm.empty());
  }
}

// The fields both generations share; v5 writes rope_parameters and dtype, 4.x rope_theta and torch_dtype.
inline json baseConfig(const std::string& arch, const std::string& type, bool v5, double theta) {
  json c = {{"architectures", {arch}},
            {"model_type", type},
            {"num_hidden_layers", kLayers},
            {"num_attention_heads", kHeads},
            {"num_key_value_heads", kKvHeads},
            {"hidden_size", kD},
            {"intermediate_size", kFf},
            {"max_position_embeddings", kPositions},
            {"vocab_size", test::kTokenizerVocab},
            {"rms_norm_eps", 1e-5},
            {"hidden_act", "silu"},
            {"bos_token_id", 259},
            {"eos_token_id", 260},
            {"attention_dropout", 0.0},
            {"initializer_range", 0.02},
            {"use_cache", true},
            {"transformers_version", v5 ? "5.0.0" : "4.51.3"}};
  if (v5) {
    c["dtype"] = "float32";
    c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", theta}};
  } else {
    c["torch_dtype"] = "float32";
    c["rope_theta"] = theta;
    c["rope_scaling"] = nullptr;
  }
  return c;
}

inline std::string layer(size_t l, const std::string& rest) { return "model.layers." + std::to_string(l) + "." + rest; }

// Layer l's q, k, v and o projections [qd, d], [kvd, d], [kvd, d], [d, qd], with their biases when `bias`.
inline void attentionTensors(std::vector<test::TensorSpec>& t, size_t l, int64_t d, int64_t qd, int64_t kvd, bool bias) {
  t.push_back({layer(l, "self_attn.q_proj.weight"), {qd, d}});
  t.push_back({layer(l, "self_attn.k_proj.weight"), {kvd, d}});
  t.push_back({layer(l, "self_attn.v_proj.weight"), {kvd, d}});
  t.push_back({layer(l, "self_attn.o_proj.weight"), {d, qd}});
  if (bias) {
    t.push_back({layer(l, "self_attn.q_proj.bias"), {qd}});
    t.push_back({layer(l, "self_attn.k_proj.bias"), {kvd}});
    t.push_back({layer(l, "self_attn.v_proj.bias"), {kvd}});
    t.push_back({layer(l, "self_attn.o_proj.bias"), {d}});
  }
}

// Layer l's SwiGLU MLP: gate and up [ff, d], down [d, ff].
inline void mlpTensors(std::vector<test::TensorSpec>& t, size_t l, int64_t d, int64_t ff) {
  t.push_back({layer(l, "mlp.gate_proj.weight"), {ff, d}});
  t.push_back({layer(l, "mlp.up_proj.weight"), {ff, d}});
  t.push_back({layer(l, "mlp.down_proj.weight"), {d, ff}});
}

}  // namespace attn::llama_like
