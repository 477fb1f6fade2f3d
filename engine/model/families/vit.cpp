// ViT (Dosovitskiy et al. 2021), with the Hugging Face semantics of
// ViTModel / ViTForImageClassification (transformers' models/vit/modeling_vit.py):
//   patches: the picture [C, H, W] cut into P = (H/p)·(W/p) patches of p × p
//            pixels in raster order, each flattened channel-major [C·p·p]
//   x = [cls_token; patches W_convᵀ + b_conv] + position_embeddings     [1 + P, d]
//     (the projection Conv2d(C, d, kernel p, stride p) is this product)
//   per layer:  x = x + SelfAttn(LN(x; layernorm_before))   softmax(q kᵀ / √d_head), every token sees every token
//               x = x + act(LN(x; layernorm_after) W_iᵀ + b_i) W_oᵀ + b_o
//   hidden = LN(x; layernorm)
//   logits = hidden[0] classifierᵀ + b   (ViTForImageClassification: the [CLS] token)
// ViTModel's pooler (tanh(hidden[0] W + b)) is not part of what the views read; its tensors are accepted.
#include "engine/attention_math.h"
#include "engine/model/families/family.h"

#include <cstdio>

namespace attn {

namespace {

struct VitLayer {
  AttentionWeights attn;
  Weight ln1_w, ln1_b, ln2_w, ln2_b, fc1_w, fc1_b, fc2_w, fc2_b;
};
struct VitWeights : FamilyWeights {
  Weight cls, positions, patch_w, patch_b, final_ln_w, final_ln_b, classifier_b;
  std::vector<VitLayer> layers;
  Activation act = Activation::GeluErf;
};

bool vitClassifies(const ModelConfig& c) { return c.arch_name == "ViTForImageClassification"; }
int64_t vitPatches(const ModelConfig& c) { return (c.image_size / c.patch_size) * (c.image_size / c.patch_size); }

Activation vitActivation(const ModelConfig& c) {
  const nlohmann::json j = {{"hidden_act", c.activation}};
  return readActivation(ConfigReader{j, "config.json"}, "hidden_act", "gelu");
}

// id2label {"0": "tench", …}: every id from 0 once. Absent: transformers' two LABEL_0, LABEL_1.
std::vector<std::string> readLabels(const ConfigReader& r) {
  const nlohmann::json* j = r.find("id2label");
  if (!j) return {"LABEL_0", "LABEL_1"};
  if (!j->is_object() || j->empty() || j->size() > static_cast<size_t>(kMaxCount))
    r.fail("id2label", "expected an object {\"0\": \"label\", …}");
  std::vector<std::string> labels(j->size());
  std::vector<char> seen(j->size(), 0);
  for (const auto& [key, value] : j->items()) {
    size_t used = 0;
    long long id = -1;
    try {
      id = std::stoll(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || id < 0 || id >= static_cast<long long>(labels.size()) || seen[static_cast<size_t>(id)] ||
        !value.is_string())
      r.fail("id2label", "entry \"" + key + "\" is not one of the ids 0 … " + std::to_string(labels.size() - 1) +
                             " once, with a label string");
    seen[static_cast<size_t>(id)] = 1;
    labels[static_cast<size_t>(id)] = value.get<std::string>();
  }
  return labels;
}

void vitParse(const ConfigReader& r, ModelConfig& c) {
  c.causal = false;
  c.layers = r.positive("num_hidden_layers", kMaxLayers);
  c.heads = r.positive("num_attention_heads", kMaxWidth);
  c.d_model = r.positive("hidden_size", kMaxWidth);
  c.d_ff = r.positive("intermediate_size", kMaxWidth);
  c.ln_eps = r.epsilon("layer_norm_eps", 1e-12);
  if (r.has("image_size") && !r.find("image_size")->is_number_integer())
    r.fail("image_size", "is " + r.find("image_size")->dump() + ", but only square pictures (one integer) are implemented");
  c.image_size = r.positive("image_size", 16384, 224);
  c.patch_size = r.positive("patch_size", 16384, 16);
  c.channels = r.positive("num_channels", 64, 3);
  if (c.image_size % c.patch_size != 0)
    r.fail("patch_size", "(" + std::to_string(c.patch_size) + ") must divide image_size (" + std::to_string(c.image_size) + ")");
  if (c.channels != 3) r.fail("num_channels", "is " + std::to_string(c.channels) + ", but only RGB pictures (3) are implemented");
  const int64_t tokens = 1 + (c.image_size / c.patch_size) * (c.image_size / c.patch_size);
  if (tokens > kMaxCount) r.fail("image_size", "gives " + std::to_string(tokens) + " tokens, more than the engine allows");
  c.positions = tokens;
  c.vocab = 1;  // no vocabulary: the tokens are patches
  c.qkv_bias = r.flag("qkv_bias", true);
  readActivation(r, "hidden_act", "gelu");
  c.activation = r.text("hidden_act", "gelu");
  if (vitClassifies(c)) c.labels = readLabels(r);

  const std::string eps = formatNumber(c.ln_eps);
  c.blocks = "LayerNorm (ε " + std::string(eps) + ") pre-LN / " + c.activation + " MLP, " + std::to_string(c.image_size) +
             "² pictures in " + std::to_string(c.patch_size) + "² patches (" + std::to_string(tokens - 1) +
             " + [CLS] tokens), learned positions, final LayerNorm" +
             (vitClassifies(c) ? ", classifier of " + std::to_string(c.labels.size()) + " labels" : "");
}

std::unique_ptr<FamilyWeights> vitLoad(WeightSource& s, Model& m, const std::function<void(int64_t)>& progress) {
  const ModelConfig& c = m.info.config;
  const int64_t d = c.d_model, ff = c.d_ff, p = c.patch_size;
  auto w = std::make_unique<VitWeights>();
  // Tensors of more than two dimensions, read as the matrices the pass multiplies.
  w->cls = s.take("embeddings.cls_token", {1, 1, d});
  w->cls.rows = 1, w->cls.cols = d;
  w->positions = s.take("embeddings.position_embeddings", {1, 1 + vitPatches(c), d});
  w->positions.rows = 1 + vitPatches(c), w->positions.cols = d;
  w->patch_w = s.take("embeddings.patch_embeddings.projection.weight", {d, c.channels, p, p});
  w->patch_w.rows = d, w->patch_w.cols = c.channels * p * p;  // [d, C·p·p]
  w->patch_b = s.take("embeddings.patch_embeddings.projection.bias", {d});
  w->final_ln_w = s.take("layernorm.weight", {d});
  w->final_ln_b = s.take("layernorm.bias", {d});
  // ViTModel's pooler: saved, not used by what AttnLab computes
  s.allow("pooler.dense.weight", {d, d});
  s.allow("pooler.dense.bias", {d});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string e = layerName("encoder.layer.", l, "");
    VitLayer& y = w->layers.emplace_back();
    std::tie(y.attn.q_w, y.attn.q_b) = takeLinear(s, e + "attention.attention.query", d, d, c.qkv_bias);
    std::tie(y.attn.k_w, y.attn.k_b) = takeLinear(s, e + "attention.attention.key", d, d, c.qkv_bias);
    std::tie(y.attn.v_w, y.attn.v_b) = takeLinear(s, e + "attention.attention.value", d, d, c.qkv_bias);
    std::tie(y.attn.o_w, y.attn.o_b) = takeLinear(s, e + "attention.output.dense", d, d);
    std::tie(y.fc1_w, y.fc1_b) = takeLinear(s, e + "intermediate.dense", ff, d);
    std::tie(y.fc2_w, y.fc2_b) = takeLinear(s, e + "output.dense", d, ff);
    y.ln1_w = s.take(e + "layernorm_before.weight", {d}), y.ln1_b = s.take(e + "layernorm_before.bias", {d});
    y.ln2_w = s.take(e + "layernorm_after.weight", {d}), y.ln2_b = s.take(e + "layernorm_after.bias", {d});
    progress(l);
  }
  w->act = vitActivation(c);
  if (vitClassifies(c)) {
    const int64_t n = static_cast<int64_t>(c.labels.size());
    m.lm_head = s.takeFull("classifier.weight", {n, d});
    w->classifier_b = s.takeFull("classifier.bias", {n});
    m.predicts = true;
  }
  return w;
}

void vitForward(const Model& m, VisionRun& run, const RunContext& ctx) {
  const ModelConfig& c = m.info.config;
  const VitWeights& W = m.as<VitWeights>();
  const int64_t p = c.patch_size, grid = c.image_size / p, P = grid * grid, C = c.channels, S = c.image_size;
  std::vector<float> scratch;
  // patches [P, C·p·p]: patch (gy, gx) in raster order, its pixels channel-major, then rows, then columns
  Mat patches(P, C * p * p);
  const std::vector<float>& px = run.pixel_values.data;
  for (int64_t gy = 0; gy < grid; ++gy)
    for (int64_t gx = 0; gx < grid; ++gx)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t i = 0; i < p; ++i)
          for (int64_t j = 0; j < p; ++j)
            patches(gy * grid + gx, (ch * p + i) * p + j) = px[static_cast<size_t>((ch * S + gy * p + i) * S + gx * p + j)];
  // x = [cls; patches W_convᵀ + b] + positions                           [1 + P, d]
  Mat embedded;
  linearT(patches, W.patch_w, W.patch_b, scratch, &run.flops, embedded);
  Mat x(1 + P, c.d_model);
  x.row(0) = W.cls.vec();
  x.bottomRows(P) = embedded;
  x += W.positions.mat();
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  run.attention.assign(static_cast<size_t>(c.layers), {});
  Mat a, o, f, f2;
  for (int64_t l = 0; l < c.layers; ++l) {
    const VitLayer& w = W.layers[static_cast<size_t>(l)];
    // x = x + SelfAttn(LN(x; layernorm_before))                          [1 + P, d]
    a = x;
    layerNorm(a, w.ln1_w, w.ln1_b, c.ln_eps);
    denseAttentionBlock(a, a, w.attn, c.heads, scale, {}, false, run.attention[static_cast<size_t>(l)], o, scratch, &run.flops);
    x += o;
    // x = x + act(LN(x; layernorm_after) W_iᵀ + b_i) W_oᵀ + b_o          [1 + P, d_ff] → [1 + P, d]
    a = x;
    layerNorm(a, w.ln2_w, w.ln2_b, c.ln_eps);
    linearT(a, w.fc1_w, w.fc1_b, scratch, &run.flops, f);
    activate(f, W.act);
    linearT(f, w.fc2_w, w.fc2_b, scratch, &run.flops, f2);
    x += f2;
    ctx.check();
    ctx.progress(static_cast<float>(l + 1) / static_cast<float>(c.layers + 1));
  }
  layerNorm(x, W.final_ln_w, W.final_ln_b, c.ln_eps);
  run.hidden = std::move(x);
}

// logits = hidden classifierᵀ + b                                        [rows, labels]
Mat vitLogits(const Model& m, const Mat& hidden, double* flops) {
  Mat logits = lmHeadLogits(m.lm_head, hidden, flops);
  logits.rowwise() += m.as<VitWeights>().classifier_b.vec();
  return logits;
}

}  // namespace

Family makeVitFamily() {
  Family f;
  f.model_type = "vit";
  f.label = "ViT";
  f.architectures = {"ViTForImageClassification", "ViTModel"};
  f.paper = "Dosovitskiy et al. 2021";
  f.prefix = "vit.";
  f.probe = "embeddings.cls_token";
  f.causal = false;
  f.tokenizer = TokenizerFiles::None;
  f.parse = vitParse;
  f.load = vitLoad;
  f.vision = vitForward;
  f.logits = vitLogits;
  return f;
}

}  // namespace attn
