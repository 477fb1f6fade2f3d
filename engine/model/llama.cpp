// The LLaMA family's forward pass (Touvron et al. 2023), with the Hugging
// Face semantics of LlamaForCausalLM, MistralForCausalLM and Qwen2ForCausalLM:
//   x = embed_tokens[ids]
//   per layer:  a = RMSNorm(x) · w_in
//               q = a W_qᵀ (+ b_q), k = a W_kᵀ (+ b_k), v = a W_vᵀ (+ b_v)   Qwen2's biases
//               q, k turned by RoPE at their positions (rotate_half layout)
//               head_h = softmax(q_h k_gᵀ / √d_head + causal (+ window)) v_g,  g = h / (H / H_kv)
//               x = x + Concat(head_1 … head_H) W_oᵀ
//               a = RMSNorm(x) · w_post
//               x = x + (SiLU(a W_gateᵀ) ⊙ a W_upᵀ) W_downᵀ
//   hidden = RMSNorm(x) · w_norm;  logits = hidden lm_headᵀ
// 16-bit weights stay in the map and are converted one matrix at a time.
#include "engine/activations.h"
#include "engine/attention_math.h"
#include "engine/model/model_impl.h"

#include <cmath>
#include <numbers>

namespace attn {

std::vector<double> llamaRopeFrequencies(const ModelConfig& c) {
  std::vector<double> theta = ropeFrequencies(c.head_dim, c.rope_theta);
  if (c.rope_factor <= 0) return theta;
  // rope_scaling "llama3" (transformers' _compute_llama3_parameters):
  // wavelengths longer than original/low_freq_factor are slowed by `factor`,
  // shorter than original/high_freq_factor kept, and those between blended.
  const double original = static_cast<double>(c.rope_original_positions);
  const double low_wavelen = original / c.rope_low_freq, high_wavelen = original / c.rope_high_freq;
  for (double& t : theta) {
    const double wavelen = 2.0 * std::numbers::pi / t;
    if (wavelen > low_wavelen) {
      t /= c.rope_factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (original / wavelen - c.rope_low_freq) / (c.rope_high_freq - c.rope_low_freq);
      t = (1.0 - smooth) * t / c.rope_factor + smooth * t;
    }
  }
  return theta;
}

namespace {

// y = x / √(mean(x²) + ε) · w, per row (Zhang & Sennrich 2019)     [L, d]
void rmsNorm(const Mat& x, const Weight& w, double eps, Mat& y) {
  y.resize(x.rows(), x.cols());
  for (int64_t i = 0; i < x.rows(); ++i) {
    const double ms = static_cast<double>(x.row(i).squaredNorm()) / static_cast<double>(x.cols());
    y.row(i) = x.row(i) * static_cast<float>(1.0 / std::sqrt(ms + eps));
  }
  y.array().rowwise() *= w.vec().array();
}

// Each key/value head's columns repeated for the heads/kv_heads query heads
// that read it: [L, kv_heads·d_head] → [L, heads·d_head].
Mat repeatKvHeads(const Mat& x, int64_t heads, int64_t kv_heads, int64_t dh) {
  if (heads == kv_heads) return x;
  Mat out(x.rows(), heads * dh);
  const int64_t group = heads / kv_heads;
  for (int64_t h = 0; h < heads; ++h) out.middleCols(h * dh, dh) = x.middleCols(h / group * dh, dh);
  return out;
}

// x = embed_tokens[ids]: only the rows read are converted.          [L, d]
Mat embedRows(const Weight& embed, const std::vector<int32_t>& ids) {
  Mat x(static_cast<int64_t>(ids.size()), embed.cols);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t r = static_cast<int64_t>(i);
    if (embed.data) x.row(r) = embed.mat().row(ids[i]);
    else embed.file->floatsAt(*embed.entry, int64_t{ids[i]} * embed.cols, embed.cols, x.row(r).data());
  }
  return x;
}

}  // namespace

void llamaForward(const Model& m, ModelRun& run, KvCache* cache, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const int64_t L = static_cast<int64_t>(run.ids.size()), p0 = run.first_position, T = p0 + L;
  const int64_t H = c.heads, Hkv = c.kv_heads, dh = c.head_dim;
  Mat x = embedRows(m.embed, run.ids);
  // Causal, aligned to the bottom right (query i is position p0 + i); with a
  // sliding window W, key j is kept while p0 + i − j < W (transformers' rule).
  Mat mask = causalMask(L, T);
  if (c.sliding_window > 0)
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < T; ++j)
        if (p0 + i - j >= c.sliding_window) mask(i, j) = 0;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  run.q_unrotated.resize(static_cast<size_t>(c.layers));
  run.k_unrotated.resize(static_cast<size_t>(c.layers));
  std::vector<float> scratch;  // the 16-bit matrix being used, as floats
  Mat a, q, k, v, concat, proj, gate, up, down;
  for (int64_t l = 0; l < c.layers; ++l) {
    const size_t li = static_cast<size_t>(l);
    const LlamaLayer& w = m.llama[li];
    auto lin = [&](const Mat& in, const Weight& wt, const Weight& b, Mat& out) {
      linear(in, wt.floats(scratch), b.data ? &b : nullptr, true, out);
      run.flops += linearFlops(in.rows(), wt);
    };
    // a = RMSNorm(x) · w_in; q, k, v                                [L, H·dh], [L, Hkv·dh] × 2
    rmsNorm(x, w.in_norm, c.rms_eps, a);
    lin(a, w.q_w, w.q_b, q);
    lin(a, w.k_w, w.k_b, k);
    lin(a, w.v_w, w.v_b, v);
    run.q_unrotated[li] = q;
    run.k_unrotated[li] = repeatKvHeads(k, H, Hkv, dh);
    // RoPE: positions p0 … p0 + L − 1
    rotateHalfHeads(q, H, m.rope_theta, p0);
    rotateHalfHeads(k, Hkv, m.rope_theta, p0);
    run.k[li] = repeatKvHeads(k, H, Hkv, dh);
    run.v[li] = repeatKvHeads(v, H, Hkv, dh);
    const auto [K, V] = keysWithCache(cache, l, k, v);
    attentionLayer(q, *K, *V, mask, H, Hkv, scale, ctx, run.attention[li], concat);
    run.q[li] = std::move(q);
    run.flops += 4.0 * static_cast<double>(L) * static_cast<double>(T) * static_cast<double>(H * dh);
    // x = x + Concat(head_1 … head_H) W_oᵀ                         [L, d]
    lin(concat, w.o_w, Weight{}, proj);
    x += proj;
    // x = x + (SiLU(a W_gateᵀ) ⊙ a W_upᵀ) W_downᵀ,  a = RMSNorm(x) · w_post     [L, d_ff] → [L, d]
    rmsNorm(x, w.post_norm, c.rms_eps, a);
    lin(a, w.gate_w, Weight{}, gate);
    lin(a, w.up_w, Weight{}, up);
    gate = gate.unaryExpr([](float g) { return static_cast<float>(g * sigmoid(g)); }).cwiseProduct(up);
    lin(gate, w.down_w, Weight{}, down);
    x += down;
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  rmsNorm(x, m.final_norm, c.rms_eps, run.hidden);
}

}  // namespace attn
