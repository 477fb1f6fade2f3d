// Alignment score functions score(s_t, h_i) between decoder states s_t and
// encoder states h_i, shared by the "score functions" family (one variant
// per score) and by the "alignment" family (global, local-p, hard), which
// take the score as a parameter.
//   additive    v_aᵀ tanh(W_a [s_t; h_i])        Bahdanau et al. 2015, eq. 6
//   general     s_tᵀ W_a h_i                     Luong et al. 2015, eq. 8
//   dot         s_tᵀ h_i                         Luong et al. 2015, eq. 8
//   scaled-dot  s_tᵀ h_i / √d                    Vaswani et al. 2017, eq. 1
//   cosine      β · cos(s_t, h_i)                Graves et al. 2014, eqs. 5-6
//   location    (W_a s_t)_i                      Luong et al. 2015, eq. 9
#pragma once

#include "engine/inputs.h"
#include "engine/registry.h"
#include "engine/params.h"
#include "engine/result.h"
#include "engine/run_context.h"

#include <string>
#include <vector>

namespace attn {

enum class ScoreKind { Additive, General, Dot, ScaledDot, Cosine, Location };

const std::vector<std::string>& scoreNames();  // CLI names, in ScoreKind order
ScoreKind scoreFromName(const std::string& name);  // throws InputError

struct ScoreOptions {
  ScoreKind kind = ScoreKind::General;
  int64_t d_a = 32;   // additive: attention hidden size
  double beta = 5.0;  // cosine: key strength β
};

// The `score` Choice parameter (default `def`) plus the d_a and β it uses.
std::vector<ParamSpec> scoreParams(const std::string& def);
// Reads what scoreParams declared; `kind` comes from the `score` key.
ScoreOptions scoreOptions(const Params& p);

// score(s_t, h_i) for every decoder state s = rows of `s` [Lq, d] and
// encoder state h = rows of `h` [Lk, d]: returns [Lq, Lk]. Generated weights
// (w_a, v_a) go into r.inputs and the work into r.flops.
Mat alignmentScores(const Mat& s, const Mat& h, const ScoreOptions& o, uint64_t seed, Result& r);

// vᵀ tanh(a_t + b_i) for rows a_t of `a` [Lq, d_a] and b_i of `b` [Lk, d_a],
// v [d_a]: the additive score once both sides are projected (W_s s_t, W_h h_i;
// a pointer network's W₂ d_i, W₁ e_j). Returns [Lq, Lk].
Mat tanhScores(const Mat& a, const Mat& b, const Vec& v);

// Records the tensors an encoder–decoder run read (q/k/v when given as
// files, else x and x_kv) and the token axes.
void recordCrossInputs(const Inputs& in, Result& r);

// Soft attention over all encoder states, shared by the score-function
// variants and `global`:
//   a_t = softmax_i score(s_t, h_i)    [Lq, Lk]
//   c_t = Σ_i a_ti v_i                 [Lq, d_v]
Result softAlignment(const Inputs& in, const ScoreOptions& o, const std::string& what, const RunContext& ctx);

// A variant of the "alignment" family (global, local-p, hard): encoder–decoder
// input, its own parameters `own` followed by scoreParams("general"), and
// the heatmap, lines and family views (plus extras when it has any).
VariantInfo alignmentVariant(std::string name, std::string title, std::string summary, std::string citation,
                             std::vector<ParamSpec> own, bool has_extras, decltype(VariantInfo::run) run);

}  // namespace attn
