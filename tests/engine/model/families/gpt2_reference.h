// GPT-2's double-precision plain-loop reference (GPT2LMHeadModel's
// modelling code), traced: every residual stream, every head's output and
// what it writes through its rows of c_proj, every MLP's output, and the
// edits the engine's Interventions make, applied by hand. gpt2_test.cpp
// checks the pass against it; analysis/interventions_test.cpp the analyses.
#pragma once

#include "tests/model_fixture.h"
#include "tests/model_reference.h"

#include <map>
#include <utility>
#include <vector>

namespace attn::mref {

// The edits of one traced pass, as Interventions names them.
struct Gpt2Edit {
  std::vector<std::pair<int64_t, int64_t>> ablate;  // heads (layer, head)
  bool mean = false;                                // ablate to the mean over positions, else to zero
  std::map<std::pair<int64_t, int64_t>, Rows> patch_heads;  // (layer, head) → its output [L][d_head]
  int64_t patch_layer = -1, patch_position = -1;            // resid entering patch_layer at patch_position
  std::vector<double> patch_value;                          // … becomes this [d]
};

struct Gpt2Trace {
  Reference ref;                          // maps, q, k, v, hidden (after ln_f), logits
  std::vector<Rows> resid;                // [layers + 1] [L][d]: entering each layer, then before ln_f
  std::vector<Rows> heads;                // [layer] [L][d]: Concat(head_1 … head_H), as edited
  std::vector<std::vector<Rows>> writes;  // [layer][head] [L][d]: head_h W_proj[h rows], no bias
  std::vector<std::vector<float>> proj_b; // [layer] [d]
  std::vector<Rows> mlp;                  // [layer] [L][d]: the MLP's output, its bias included
};

// lm_head.weight where saved, else wte tied                         [V, d]
inline const std::vector<float>& unembedding(const test::TinyModel& m) {
  return m.has("lm_head.weight") ? m.w("lm_head.weight") : m.w("wte.weight");
}

inline Gpt2Trace gpt2Trace(const test::TinyModel& m, const std::vector<int32_t>& ids, const Gpt2Edit& edit = {}) {
  const ModelConfig& c = m.config;
  const size_t L = ids.size(), d = static_cast<size_t>(c.d_model), ff = static_cast<size_t>(c.d_ff);
  const size_t H = static_cast<size_t>(c.heads), dh = d / H;
  Gpt2Trace t;
  Rows x = zeros(L, d);
  for (size_t i = 0; i < L; ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] = m.w("wte.weight")[ids[i] * d + e] + m.w("wpe.weight")[i * d + e];
  for (int64_t l = 0; l < c.layers; ++l) {
    auto W = [&](const std::string& n) { return m.w("h." + std::to_string(l) + "." + n); };
    if (l == edit.patch_layer)
      for (size_t e = 0; e < d; ++e) x[static_cast<size_t>(edit.patch_position)][e] = edit.patch_value[e];
    t.resid.push_back(x);
    Rows a = x;
    layerNormRef(a, W("ln_1.weight"), W("ln_1.bias"), c.ln_eps);
    const Rows qkv = linearRef(a, W("attn.c_attn.weight"), W("attn.c_attn.bias"), d, 3 * d, false);
    Rows q = zeros(L, d), k = zeros(L, d), v = zeros(L, d);
    for (size_t i = 0; i < L; ++i)
      for (size_t e = 0; e < d; ++e) q[i][e] = qkv[i][e], k[i][e] = qkv[i][d + e], v[i][e] = qkv[i][2 * d + e];
    Rows out = attendAndKeep(t.ref, q, k, v, H, true);
    for (const auto& [al, ah] : edit.ablate) {
      if (al != l) continue;
      for (size_t e = static_cast<size_t>(ah) * dh; e < static_cast<size_t>(ah + 1) * dh; ++e) {
        double avg = 0;
        for (size_t i = 0; i < L; ++i) avg += out[i][e] / static_cast<double>(L);
        for (size_t i = 0; i < L; ++i) out[i][e] = edit.mean ? avg : 0.0;
      }
    }
    for (const auto& [lh, rows] : edit.patch_heads) {
      if (lh.first != l) continue;
      for (size_t i = 0; i < L; ++i)
        for (size_t e = 0; e < dh; ++e) out[i][static_cast<size_t>(lh.second) * dh + e] = rows[i][e];
    }
    t.heads.push_back(out);
    // head h's write: its d_head columns times c_proj's rows h·d_head … (Conv1D [in, out])
    const std::vector<float>& wp = W("attn.c_proj.weight");
    std::vector<Rows> writes(H, zeros(L, d));
    for (size_t h = 0; h < H; ++h)
      for (size_t i = 0; i < L; ++i)
        for (size_t o = 0; o < d; ++o)
          for (size_t e = h * dh; e < (h + 1) * dh; ++e) writes[h][i][o] += out[i][e] * wp[e * d + o];
    t.writes.push_back(writes);
    t.proj_b.push_back(W("attn.c_proj.bias"));
    const Rows proj = linearRef(out, wp, W("attn.c_proj.bias"), d, d, false);
    addInto(x, proj);
    a = x;
    layerNormRef(a, W("ln_2.weight"), W("ln_2.bias"), c.ln_eps);
    Rows f = linearRef(a, W("mlp.c_fc.weight"), W("mlp.c_fc.bias"), d, ff, false);
    for (auto& row : f)
      for (double& u : row) u = geluTanh(u);
    const Rows f2 = linearRef(f, W("mlp.c_proj.weight"), W("mlp.c_proj.bias"), ff, d, false);
    t.mlp.push_back(f2);
    addInto(x, f2);
  }
  t.resid.push_back(x);
  layerNormRef(x, m.w("ln_f.weight"), m.w("ln_f.bias"), c.ln_eps);
  t.ref.hidden = x;
  t.ref.logits = linearRef(x, unembedding(m), {}, d, static_cast<size_t>(c.vocab), true);
  return t;
}

}  // namespace attn::mref
