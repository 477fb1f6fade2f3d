// T5 and BART (engine/model/families/t5.cpp, bart.cpp, seq2seq.cpp) against plain-loop
// double references written from transformers' models/t5/modeling_t5.py and
// models/bart/modeling_bart.py: tiny checkpoints in the exact tensor names and
// shapes of T5ForConditionalGeneration / T5EncoderModel and
// BartForConditionalGeneration / BartModel; every map of the three kinds,
// both hidden states and the top-k under teacher forcing, greedy generation,
// and the configs and runs that are refused.
#include "engine/model/model.h"
#include "engine/model/kinds/seq2seq.h"

#include "tests/engine/model/families/conformance.h"
#include "tests/engine_reference.h"
#include "tests/model_fixture.h"
#include "tests/model_reference.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <functional>

namespace fs = std::filesystem;

namespace attn::s2s {
namespace {

using namespace mref;
using test::TinyModel;

constexpr int64_t kD = 16, kHeads = 4, kFf = 24, kV = test::kTokenizerVocab;
constexpr int32_t kBos = 259, kEos = 260;  // the fixture tokenizer's <s> and </s>

// [SECTION] Reference pieces
// Every head: s_ij = q_i·k_j · scale + bias(h, i, j), causal keeps j ≤ i;
// softmax; head_h = Σ_j a_ij v_j. maps[h] [Lq][Lk]; returns Concat(head_1 … head_H).
using BiasFn = std::function<double(size_t h, size_t i, size_t j)>;
Rows attendRef(const Rows& q, const Rows& k, const Rows& v, size_t heads, double scale, const BiasFn& bias, bool causal,
               std::vector<Rows>& maps) {
  const size_t Lq = q.size(), Lk = k.size(), dh = q[0].size() / heads;
  Rows out = zeros(Lq, q[0].size());
  maps.assign(heads, zeros(Lq, Lk));
  for (size_t h = 0; h < heads; ++h)
    for (size_t i = 0; i < Lq; ++i) {
      const size_t last = causal ? i : Lk - 1;
      std::vector<double> s(last + 1);
      double mx = -1e300, z = 0;
      for (size_t j = 0; j <= last; ++j) {
        double dot = 0;
        for (size_t e = 0; e < dh; ++e) dot += q[i][h * dh + e] * k[j][h * dh + e];
        s[j] = dot * scale + (bias ? bias(h, i, j) : 0.0);
        mx = std::max(mx, s[j]);
      }
      for (size_t j = 0; j <= last; ++j) z += std::exp(s[j] - mx);
      for (size_t j = 0; j <= last; ++j) {
        maps[h][i][j] = std::exp(s[j] - mx) / z;
        for (size_t e = 0; e < dh; ++e) out[i][h * dh + e] += maps[h][i][j] * v[j][h * dh + e];
      }
    }
  return out;
}

struct Seq2SeqRef {
  std::vector<std::vector<Rows>> encoder, decoder, cross;  // [layer][head] [rows][cols]
  Rows encoder_hidden, decoder_hidden, logits;
};

void expectMaps(const std::vector<std::vector<Mat>>& got, const std::vector<std::vector<Rows>>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t l = 0; l < want.size(); ++l) {
    ASSERT_EQ(got[l].size(), want[l].size()) << what;
    for (size_t h = 0; h < want[l].size(); ++h) {
      ASSERT_EQ(got[l][h].rows(), static_cast<int64_t>(want[l][h].size())) << what;
      ASSERT_EQ(got[l][h].cols(), static_cast<int64_t>(want[l][h][0].size())) << what;
      for (size_t i = 0; i < want[l][h].size(); ++i)
        for (size_t j = 0; j < want[l][h][i].size(); ++j)
          ASSERT_NEAR(got[l][h](i, j), want[l][h][i][j], kModelTol) << what << " layer " << l << " head " << h << " (" << i << ", " << j << ")";
    }
  }
}

void expectRows(const Mat& got, const Rows& want, const char* what) {
  ASSERT_EQ(got.rows(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got.cols(), static_cast<int64_t>(want[i].size())) << what;
    for (size_t e = 0; e < want[i].size(); ++e) ASSERT_NEAR(got(i, e), want[i][e], kModelTol) << what << " (" << i << ", " << e << ")";
  }
}

void expectMatchesRef(const Seq2SeqRun& run, const Seq2SeqRef& ref, int top_k) {
  expectMaps(run.encoder_attention, ref.encoder, "encoder");
  expectMaps(run.decoder_attention, ref.decoder, "decoder");
  expectMaps(run.cross_attention, ref.cross, "cross");
  expectRows(run.encoder_hidden, ref.encoder_hidden, "encoder hidden");
  if (!ref.decoder_hidden.empty()) expectRows(run.decoder_hidden, ref.decoder_hidden, "decoder hidden");
  expectTopK(run.top_k, ref.logits, top_k);
}

Rows embedRef(const std::vector<float>& table, const std::vector<int32_t>& ids, size_t d, double scale) {
  Rows x = zeros(ids.size(), d);
  for (size_t i = 0; i < ids.size(); ++i)
    for (size_t e = 0; e < d; ++e) x[i][e] = table[static_cast<size_t>(ids[i]) * d + e] * scale;
  return x;
}

// logits = hidden headᵀ (+ bias)                                  [rows][V]
Rows logitsRef(const Rows& hidden, const std::vector<float>& head, const std::vector<float>& bias) {
  return linearRef(hidden, head, bias, hidden[0].size(), static_cast<size_t>(kV), true);
}

// [SECTION] BART
struct BartCase {
  bool scale_embedding = false;
  bool tied = true;
  bool saved_head = false;   // tied, lm_head.weight saved too (equal to shared)
  bool logits_bias = true;   // final_logits_bias saved
  bool base_model = false;   // BartModel: no "model." prefix, no head
  bool own_tables = false;   // encoder.embed_tokens / decoder.embed_tokens saved instead of shared
  std::string act = "gelu";
  int64_t encoder_layers = 2, decoder_layers = 2;
  DType dtype = DType::F32;
  uint64_t seed = 1;
};

// BART's tokenizer wraps a text as <s> … </s> (RobertaProcessing).
const char* kBartTokenizerConfig =
    R"({"add_bos_token": true, "add_eos_token": true, "bos_token": "<s>", "eos_token": "</s>"})";

TinyModel writeBart(const fs::path& dir, const BartCase& o) {
  const int64_t d = kD, P = 40;
  nlohmann::json config = {{"architectures", {o.base_model ? "BartModel" : "BartForConditionalGeneration"}},
                           {"model_type", "bart"},
                           {"d_model", d},
                           {"encoder_layers", o.encoder_layers},
                           {"decoder_layers", o.decoder_layers},
                           {"encoder_attention_heads", kHeads},
                           {"decoder_attention_heads", kHeads},
                           {"encoder_ffn_dim", kFf},
                           {"decoder_ffn_dim", kFf},
                           {"max_position_embeddings", P},
                           {"vocab_size", kV},
                           {"activation_function", o.act},
                           {"scale_embedding", o.scale_embedding},
                           {"tie_word_embeddings", o.tied},
                           {"decoder_start_token_id", kEos},
                           {"bos_token_id", kBos},
                           {"eos_token_id", kEos},
                           {"pad_token_id", 1},
                           {"dropout", 0.1},
                           {"is_encoder_decoder", true},
                           {"dtype", "float32"},
                           {"transformers_version", "5.0.0"}};
  const std::string pre = o.base_model ? "" : "model.";
  std::vector<test::TensorSpec> t;
  if (o.own_tables) {
    t.push_back({pre + "encoder.embed_tokens.weight", {kV, d}});
    t.push_back({pre + "decoder.embed_tokens.weight", {kV, d}});
  } else {
    t.push_back({pre + "shared.weight", {kV, d}});
  }
  for (const std::string stack : {"encoder.", "decoder."}) {
    t.push_back({pre + stack + "embed_positions.weight", {P + 2, d}});
    t.push_back({pre + stack + "layernorm_embedding.weight", {d}, 0.2f, 1.0f});
    t.push_back({pre + stack + "layernorm_embedding.bias", {d}, 0.2f});
    const int64_t layers = stack == "encoder." ? o.encoder_layers : o.decoder_layers;
    for (int64_t l = 0; l < layers; ++l) {
      const std::string p = pre + stack + "layers." + std::to_string(l) + ".";
      auto linear = [&](const std::string& name, int64_t out, int64_t in) {
        t.push_back({p + name + ".weight", {out, in}});
        t.push_back({p + name + ".bias", {out}, 0.2f});
      };
      auto norm = [&](const std::string& name) {
        t.push_back({p + name + ".weight", {d}, 0.2f, 1.0f});
        t.push_back({p + name + ".bias", {d}, 0.2f});
      };
      for (const std::string a : {"self_attn", "encoder_attn"}) {
        if (a == "encoder_attn" && stack == "encoder.") continue;
        linear(a + ".k_proj", d, d), linear(a + ".v_proj", d, d), linear(a + ".q_proj", d, d);
        linear(a + ".out_proj", d, d);
        norm(a + "_layer_norm");
      }
      linear("fc1", kFf, d), linear("fc2", d, kFf);
      norm("final_layer_norm");
    }
  }
  if (!o.base_model) {
    if (!o.tied) t.push_back({"lm_head.weight", {kV, d}});
    if (o.logits_bias) t.push_back({"final_logits_bias", {1, kV}, 0.5f});
  }
  TinyModel m = test::writeCheckpoint(dir, config, t, {.dtype = o.dtype, .seed = o.seed}, {}, kBartTokenizerConfig);
  if (!o.base_model && o.tied && o.saved_head) {
    m.weights["lm_head.weight"] = m.weights.at(o.own_tables ? "model.decoder.embed_tokens.weight" : "model.shared.weight");
    m.shapes["lm_head.weight"] = {kV, d};
    test::writeWeights(m);
  }
  return m;
}

// transformers' BartEncoder, BartDecoder and their layers, in double precision.
Seq2SeqRef bartRef(const TinyModel& m, const BartCase& o, const std::vector<int32_t>& src, const std::vector<int32_t>& tgt) {
  const size_t d = kD, H = kHeads;
  const std::string pre = o.base_model ? "" : "model.";
  auto w = [&](const std::string& name) -> const std::vector<float>& { return m.weights.at(name); };
  const double scale = o.scale_embedding ? std::sqrt(static_cast<double>(d)) : 1.0;
  const double attn_scale = 1.0 / std::sqrt(static_cast<double>(d / H));
  auto act = [&](double u) { return o.act == "relu" ? std::max(u, 0.0) : o.act == "gelu_new" ? geluTanh(u) : geluErf(u); };
  Seq2SeqRef r;
  auto stack = [&](const std::string& name, const std::vector<int32_t>& ids, const Rows* memory,
                   std::vector<std::vector<Rows>>& self_maps, std::vector<std::vector<Rows>>* cross_maps) {
    const std::string s = pre + name;
    // inputs_embeds = embed_tokens(ids) · embed_scale; + embed_positions(positions + 2); layernorm_embedding
    Rows x = embedRef(w(o.own_tables ? s + "embed_tokens.weight" : pre + "shared.weight"), ids, d, scale);
    for (size_t i = 0; i < ids.size(); ++i)
      for (size_t e = 0; e < d; ++e) x[i][e] += w(s + "embed_positions.weight")[(i + 2) * d + e];
    layerNormRef(x, w(s + "layernorm_embedding.weight"), w(s + "layernorm_embedding.bias"), 1e-5);
    const int64_t layers = memory ? o.decoder_layers : o.encoder_layers;
    for (int64_t l = 0; l < layers; ++l) {
      const std::string p = s + "layers." + std::to_string(l) + ".";
      auto lin = [&](const Rows& a, const std::string& n, size_t in, size_t out) {
        return linearRef(a, w(p + n + ".weight"), w(p + n + ".bias"), in, out, true);
      };
      // residual = x; x = self_attn(x); x = residual + x; x = self_attn_layer_norm(x)   (post-LN)
      auto attention = [&](const std::string& a, const Rows& kv, bool causal, std::vector<Rows>& maps) {
        const Rows q = lin(x, a + ".q_proj", d, d), k = lin(kv, a + ".k_proj", d, d), v = lin(kv, a + ".v_proj", d, d);
        const Rows ctx = attendRef(q, k, v, H, attn_scale, nullptr, causal, maps);
        addInto(x, lin(ctx, a + ".out_proj", d, d));
        layerNormRef(x, w(p + a + "_layer_norm.weight"), w(p + a + "_layer_norm.bias"), 1e-5);
      };
      std::vector<Rows> maps;
      attention("self_attn", x, memory != nullptr, maps);
      self_maps.push_back(maps);
      if (memory) {
        attention("encoder_attn", *memory, false, maps);
        cross_maps->push_back(maps);
      }
      Rows f = lin(x, "fc1", d, kFf);
      for (auto& row : f)
        for (double& e : row) e = act(e);
      addInto(x, lin(f, "fc2", kFf, d));
      layerNormRef(x, w(p + "final_layer_norm.weight"), w(p + "final_layer_norm.bias"), 1e-5);
    }
    return x;
  };
  r.encoder_hidden = stack("encoder.", src, nullptr, r.encoder, nullptr);
  r.decoder_hidden = stack("decoder.", tgt, &r.encoder_hidden, r.decoder, &r.cross);
  if (!o.base_model) {
    // lm_logits = lm_head(outputs[0]) + final_logits_bias; lm_head tied to shared unless tie_word_embeddings is false
    const std::vector<float> none;
    const std::string table = o.own_tables ? pre + "decoder.embed_tokens.weight" : pre + "shared.weight";
    r.logits = logitsRef(r.decoder_hidden, w(o.tied ? table : "lm_head.weight"),
                         o.logits_bias ? w("final_logits_bias") : none);
  }
  return r;
}

// The ids tests read: a source with both specials and a target after decoder_start.
const std::string kSource = "the cat sat on the mat";
const std::string kTarget = "le chat";

TEST(FamilyBart, MatchesTransformersOnEveryMapAndHiddenState) {
  const std::vector<BartCase> cases = {
      {},
      {.scale_embedding = true, .act = "relu"},
      {.tied = false, .logits_bias = false, .act = "gelu_new"},
      {.saved_head = true, .own_tables = true, .encoder_layers = 1, .decoder_layers = 3},
      {.base_model = true},
  };
  for (size_t n = 0; n < cases.size(); ++n) {
    SCOPED_TRACE("case " + std::to_string(n));
    test::TempDir dir;
    const TinyModel tiny = writeBart(dir.path, cases[n]);
    const auto model = loadModel(filesOnDisk(dir.path.string()));
    const Seq2SeqRun run = runSeq2Seq(*model, kSource, kTarget, 5);
    // <s> text </s>; </s> (decoder_start) <s> target (the labels shifted right)
    ASSERT_EQ(run.source_ids.front(), kBos);
    ASSERT_EQ(run.source_ids.back(), kEos);
    ASSERT_EQ(run.target_ids[0], kEos);
    ASSERT_EQ(run.target_ids[1], kBos);
    EXPECT_NE(run.target_ids.back(), kEos);
    EXPECT_EQ(run.target_ids.size(), 2 + modelTokenizer(*model).encode(kTarget).size());
    expectMatchesRef(run, bartRef(tiny, cases[n], run.source_ids, run.target_ids), 5);
  }
}

// [SECTION] T5
struct T5Case {
  bool gated = false;         // feed_forward_proj "gated-gelu" (T5 v1.1, flan-T5)
  bool tied = true;
  bool encoder_only = false;  // T5EncoderModel
  bool saved_tables = false;  // encoder.embed_tokens / decoder.embed_tokens saved beside shared
  bool config_derived = false;  // dense_act_fn / is_gated_act saved as T5Config writes them
  int64_t layers = 2, decoder_layers = 2;
  int64_t vocab = kV;
  DType dtype = DType::F32;
  uint64_t seed = 1;
};
constexpr int64_t kDkv = 6, kBuckets = 8, kMaxDistance = 20;  // inner width 4 · 6 = 24 ≠ d_model

// T5's tokenizer appends </s> and puts nothing before.
const char* kT5TokenizerConfig = R"({"add_bos_token": false, "add_eos_token": true, "eos_token": "</s>"})";

TinyModel writeT5(const fs::path& dir, const T5Case& o) {
  const int64_t d = kD, inner = kHeads * kDkv;
  nlohmann::json config = {{"architectures", {o.encoder_only ? "T5EncoderModel" : "T5ForConditionalGeneration"}},
                           {"model_type", "t5"},
                           {"d_model", d},
                           {"d_kv", kDkv},
                           {"d_ff", kFf},
                           {"num_layers", o.layers},
                           {"num_decoder_layers", o.decoder_layers},
                           {"num_heads", kHeads},
                           {"relative_attention_num_buckets", kBuckets},
                           {"relative_attention_max_distance", kMaxDistance},
                           {"layer_norm_epsilon", 1e-6},
                           {"feed_forward_proj", o.gated ? "gated-gelu" : "relu"},
                           {"tie_word_embeddings", o.tied},
                           {"vocab_size", o.vocab},
                           {"decoder_start_token_id", 0},
                           {"eos_token_id", kEos},
                           {"pad_token_id", 0},
                           {"n_positions", 512},
                           {"dropout_rate", 0.1},
                           {"is_encoder_decoder", true},
                           {"dtype", "float32"},
                           {"transformers_version", "5.0.0"}};
  if (o.config_derived) {
    config["dense_act_fn"] = o.gated ? "gelu_new" : "relu";
    config["is_gated_act"] = o.gated;
  }
  std::vector<test::TensorSpec> t = {{"shared.weight", {o.vocab, d}, 1.0f}};
  if (o.saved_tables) {
    t.push_back({"encoder.embed_tokens.weight", {o.vocab, d}, 1.0f});
    if (!o.encoder_only) t.push_back({"decoder.embed_tokens.weight", {o.vocab, d}, 1.0f});
  }
  for (const std::string stack : {"encoder.", "decoder."}) {
    const int64_t layers = stack == "encoder." ? o.layers : o.encoder_only ? 0 : o.decoder_layers;
    for (int64_t l = 0; l < layers; ++l) {
      const std::string p = stack + "block." + std::to_string(l) + ".layer.";
      auto attention = [&](const std::string& sub) {
        for (const char* x : {"q", "k", "v"}) t.push_back({p + sub + "." + x + ".weight", {inner, d}});
        t.push_back({p + sub + ".o.weight", {d, inner}});
      };
      attention("0.SelfAttention");
      if (l == 0) t.push_back({p + "0.SelfAttention.relative_attention_bias.weight", {kBuckets, kHeads}, 1.0f});
      t.push_back({p + "0.layer_norm.weight", {d}, 0.2f, 1.0f});
      const std::string ff = stack == "decoder." ? "2" : "1";
      if (stack == "decoder.") {
        attention("1.EncDecAttention");
        t.push_back({p + "1.layer_norm.weight", {d}, 0.2f, 1.0f});
      }
      if (o.gated) {
        t.push_back({p + ff + ".DenseReluDense.wi_0.weight", {kFf, d}});
        t.push_back({p + ff + ".DenseReluDense.wi_1.weight", {kFf, d}});
      } else {
        t.push_back({p + ff + ".DenseReluDense.wi.weight", {kFf, d}});
      }
      t.push_back({p + ff + ".DenseReluDense.wo.weight", {d, kFf}});
      t.push_back({p + ff + ".layer_norm.weight", {d}, 0.2f, 1.0f});
    }
    if (layers > 0) t.push_back({stack + "final_layer_norm.weight", {d}, 0.2f, 1.0f});
  }
  if (!o.encoder_only && !o.tied) t.push_back({"lm_head.weight", {o.vocab, d}});
  return test::writeCheckpoint(dir, config, t, {.dtype = o.dtype, .seed = o.seed}, {}, kT5TokenizerConfig);
}

// T5Attention._relative_position_bucket, from its Python, in double.
int64_t bucketRef(int64_t relative_position, bool bidirectional, int64_t num_buckets, int64_t max_distance) {
  int64_t relative_buckets = 0;
  if (bidirectional) {
    num_buckets /= 2;
    relative_buckets += relative_position > 0 ? num_buckets : 0;
    relative_position = std::llabs(relative_position);
  } else {
    relative_position = -std::min<int64_t>(relative_position, 0);
  }
  const int64_t max_exact = num_buckets / 2;
  if (relative_position < max_exact) return relative_buckets + relative_position;
  int64_t large = max_exact + static_cast<int64_t>(std::log(static_cast<double>(relative_position) / max_exact) /
                                                   std::log(static_cast<double>(max_distance) / max_exact) *
                                                   static_cast<double>(num_buckets - max_exact));
  large = std::min(large, num_buckets - 1);
  return relative_buckets + large;
}

// transformers' T5Stack, T5Block and T5Attention, in double precision.
Seq2SeqRef t5Ref(const TinyModel& m, const T5Case& o, const std::vector<int32_t>& src, const std::vector<int32_t>& tgt) {
  const size_t d = kD, H = kHeads, inner = kHeads * kDkv;
  auto w = [&](const std::string& name) -> const std::vector<float>& { return m.weights.at(name); };
  const std::vector<float> none;
  Seq2SeqRef r;
  auto stack = [&](const std::string& s, const std::vector<int32_t>& ids, const Rows* memory,
                   std::vector<std::vector<Rows>>& self_maps, std::vector<std::vector<Rows>>* cross_maps) {
    Rows x = embedRef(w(o.saved_tables ? s + "embed_tokens.weight" : "shared.weight"), ids, d, 1.0);
    // position_bias = relative_attention_bias(bucket(memory_position − context_position)), block 0's, every block
    const std::vector<float>& table = w(s + "block.0.layer.0.SelfAttention.relative_attention_bias.weight");
    const BiasFn bias = [&](size_t h, size_t i, size_t j) {
      const int64_t b = bucketRef(static_cast<int64_t>(j) - static_cast<int64_t>(i), memory == nullptr, kBuckets, kMaxDistance);
      return static_cast<double>(table[static_cast<size_t>(b) * H + h]);
    };
    const int64_t layers = memory ? o.decoder_layers : o.layers;
    for (int64_t l = 0; l < layers; ++l) {
      const std::string p = s + "block." + std::to_string(l) + ".layer.";
      auto lin = [&](const Rows& a, const std::string& n, size_t in, size_t out) {
        return linearRef(a, w(p + n + ".weight"), none, in, out, true);
      };
      // hidden = hidden + o(softmax(q kᵀ + position_bias) v) on the normed hidden; no 1/√d
      auto attention = [&](const std::string& sub, const Rows* kv, const BiasFn& b, bool causal, std::vector<Rows>& maps) {
        Rows a = x;
        rmsNormRef(a, w(p + sub.substr(0, 1) + ".layer_norm.weight"), 1e-6);
        const Rows& src_kv = kv ? *kv : a;
        const Rows q = lin(a, sub + ".q", d, inner), k = lin(src_kv, sub + ".k", d, inner), v = lin(src_kv, sub + ".v", d, inner);
        addInto(x, lin(attendRef(q, k, v, H, 1.0, b, causal, maps), sub + ".o", inner, d));
      };
      std::vector<Rows> maps;
      attention("0.SelfAttention", nullptr, bias, memory != nullptr, maps);
      self_maps.push_back(maps);
      if (memory) {
        attention("1.EncDecAttention", memory, nullptr, false, maps);  // cross-attention has no position bias
        cross_maps->push_back(maps);
      }
      const std::string ff = memory ? "2" : "1";
      Rows a = x;
      rmsNormRef(a, w(p + ff + ".layer_norm.weight"), 1e-6);
      Rows h;
      if (o.gated) {  // act(wi_0(x)) * wi_1(x), act gelu_new
        h = lin(a, ff + ".DenseReluDense.wi_0", d, kFf);
        const Rows linear = lin(a, ff + ".DenseReluDense.wi_1", d, kFf);
        for (size_t i = 0; i < h.size(); ++i)
          for (size_t e = 0; e < h[i].size(); ++e) h[i][e] = geluTanh(h[i][e]) * linear[i][e];
      } else {
        h = lin(a, ff + ".DenseReluDense.wi", d, kFf);
        for (auto& row : h)
          for (double& e : row) e = std::max(e, 0.0);
      }
      addInto(x, lin(h, ff + ".DenseReluDense.wo", kFf, d));
    }
    rmsNormRef(x, w(s + "final_layer_norm.weight"), 1e-6);
    return x;
  };
  r.encoder_hidden = stack("encoder.", src, nullptr, r.encoder, nullptr);
  if (o.encoder_only) return r;
  r.decoder_hidden = stack("decoder.", tgt, &r.encoder_hidden, r.decoder, &r.cross);
  // tied: sequence_output · model_dim^-0.5, then lm_head (= shared)
  Rows scaled = r.decoder_hidden;
  if (o.tied)
    for (auto& row : scaled)
      for (double& e : row) e *= std::pow(static_cast<double>(d), -0.5);
  const std::string table = o.saved_tables ? "decoder.embed_tokens.weight" : "shared.weight";
  r.logits = linearRef(scaled, w(o.tied ? table : "lm_head.weight"), none, d, static_cast<size_t>(o.vocab), true);
  return r;
}

TEST(FamilyT5, MatchesTransformersOnEveryMapAndHiddenState) {
  const std::vector<T5Case> cases = {
      {},
      {.gated = true, .tied = false, .config_derived = true},
      {.saved_tables = true, .layers = 3, .decoder_layers = 1},
      {.encoder_only = true},
  };
  const std::string long_source = "the cat sat on the mat, and the dog sat on the log";
  for (size_t n = 0; n < cases.size(); ++n) {
    SCOPED_TRACE("case " + std::to_string(n));
    test::TempDir dir;
    const TinyModel tiny = writeT5(dir.path, cases[n]);
    const auto model = loadModel(filesOnDisk(dir.path.string()));
    const Seq2SeqRun run = runSeq2Seq(*model, long_source, cases[n].encoder_only ? "" : kTarget, 4);
    ASSERT_GT(run.source_ids.size(), static_cast<size_t>(kMaxDistance));  // past max_distance: the capped buckets
    EXPECT_EQ(run.source_ids.back(), kEos);  // … </s>, nothing before
    EXPECT_NE(run.source_ids.front(), kBos);
    if (!cases[n].encoder_only) {
      ASSERT_EQ(run.target_ids[0], 0);  // decoder_start_token_id, then the target without </s>
      EXPECT_EQ(run.target_ids.size(), 1 + modelTokenizer(*model).encode(kTarget).size());
    } else {
      EXPECT_TRUE(run.target_ids.empty());
      EXPECT_TRUE(run.decoder_attention.empty());
    }
    expectMatchesRef(run, t5Ref(tiny, cases[n], run.source_ids, run.target_ids), 4);
  }
}

// A T5 folder as the Hub has them: the SentencePiece Unigram tokenizer.json
// (nmt_nfkc charsmap, from scripts/unigram_reference.py), or only spiece.model.
// scripts/unigram_reference.py's T5 tokenizer.json, and the ids `tokenizers` gives on its strings.
struct UnigramT5 {
  fs::path dir = fs::path(ATTNLAB_NPM_DIR) / "unigram";
  nlohmann::json expected;
  std::string tokenizer_json;
  std::vector<std::string> strings;

  bool read() {
    const std::string text = test::slurp(dir / "unigram_expected.json");
    if (text.empty()) return false;
    expected = nlohmann::json::parse(text);
    tokenizer_json = test::slurp(dir / "unigram_t5" / "tokenizer.json");
    strings = expected["strings"].get<std::vector<std::string>>();
    return true;
  }
  int64_t vocab() const { return static_cast<int64_t>(nlohmann::json::parse(tokenizer_json)["model"]["vocab"].size()); }
  // The ids of `text` as `tokenizers` gives them, with the post-processor's "$A </s>"; empty when it is not listed.
  std::vector<int32_t> ids(const std::string& text) const {
    const auto it = std::find(strings.begin(), strings.end(), text);
    if (it == strings.end()) return {};
    std::vector<int32_t> want = expected["t5"][static_cast<size_t>(it - strings.begin())].get<std::vector<int32_t>>();
    want.push_back(1);
    return want;
  }
  // A tiny T5 in `path` that reads this tokenizer.json (no tokenizer_config.json).
  TinyModel write(const fs::path& path, const T5Case& o) const {
    TinyModel tiny = writeT5(path, o);
    fs::remove(path / "tokenizer_config.json");
    std::ofstream(path / "tokenizer.json", std::ios::binary) << tokenizer_json;
    return tiny;
  }
};

TEST(FamilyT5, ReadsTheUnigramTokenizerOfRealT5Folders) {
  UnigramT5 unigram;
  ASSERT_TRUE(unigram.read()) << "write it with: " << test::referenceIdsCommand(ATTNLAB_NPM_DIR);
  const std::string text = "translate English to German: The house is wonderful.";
  const std::vector<int32_t> want = unigram.ids(text);
  ASSERT_FALSE(want.empty());

  test::TempDir json_dir, spiece_dir, out;
  const T5Case o{.gated = true, .tied = false, .vocab = unigram.vocab()};
  const TinyModel tiny = unigram.write(json_dir.path, o);
  writeT5(spiece_dir.path, o);
  fs::remove(spiece_dir.path / "tokenizer.json");
  fs::remove(spiece_dir.path / "tokenizer_config.json");
  fs::copy_file(unigram.dir / "unigram_t5" / "spiece.model", spiece_dir.path / "spiece.model");
  for (const fs::path& dir : {json_dir.path, spiece_dir.path}) {
    SCOPED_TRACE(dir.string());
    const auto model = loadModel(filesOnDisk(dir.string()));
    const Seq2SeqRun run = runSeq2Seq(*model, text, "Das Haus ist wunderbar.", 3);
    EXPECT_EQ(run.source_ids, want);
    EXPECT_EQ(run.target_ids.front(), 0);  // <pad>, T5's decoder_start_token_id
    EXPECT_NE(run.target_ids.back(), 1);
    if (dir == json_dir.path) expectMatchesRef(run, t5Ref(tiny, o, run.source_ids, run.target_ids), 3);
  }
  // Through the binary: tokens.json's source ids are the tokenizers library's.
  const test::RunResult r = test::runAttnlab({"model", "run", json_dir.path.string(), "--text", text, "--target",
                                              "Das Haus", "--out", (out.path / "o").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(test::slurp(out.path / "o" / "tokens.json"))["source_ids"].get<std::vector<int32_t>>(), want);
}

// Whitespace alone gives T5's Unigram tokenizer.json no token of its own:
// `tokenizers` encodes it as the post-processor's </s> alone, and so does the engine.
TEST(FamilyT5, WhitespaceOnlyTextIsTheEndTokenAlone) {
  UnigramT5 unigram;
  ASSERT_TRUE(unigram.read()) << "write it with: " << test::referenceIdsCommand(ATTNLAB_NPM_DIR);
  test::TempDir dir;
  const T5Case o{.gated = true, .tied = false, .vocab = unigram.vocab()};
  const TinyModel tiny = unigram.write(dir.path, o);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  for (const std::string text : {" ", "   ", "\n", " \t\n "}) {
    SCOPED_TRACE(nlohmann::json(text).dump());
    const std::vector<int32_t> want = unigram.ids(text);
    EXPECT_EQ(want, (std::vector<int32_t>{1})) << "tokenizers gives </s> alone";
    const Seq2SeqRun run = runSeq2Seq(*model, text, "Das Haus", 3);
    EXPECT_EQ(run.source_ids, want);
    expectMatchesRef(run, t5Ref(tiny, o, run.source_ids, run.target_ids), 3);
  }
  EXPECT_THROW(runSeq2Seq(*model, "", "Das Haus", 3), InputError);
}

// [SECTION] Generation, refusals
TEST(FamilySeq2Seq, GreedyGenerationTakesTheReferencesArgmaxAtEachStep) {
  test::TempDir bart_dir, t5_dir;
  const TinyModel bart = writeBart(bart_dir.path, {});
  const TinyModel t5 = writeT5(t5_dir.path, {.gated = true, .tied = false});
  for (const fs::path& dir : {bart_dir.path, t5_dir.path}) {
    SCOPED_TRACE(dir.string());
    const auto model = loadModel(filesOnDisk(dir.string()));
    const Seq2SeqGeneration g = generateSeq2Seq(*model, kSource, 5);
    ASSERT_FALSE(g.tokens.empty());
    ASSERT_EQ(g.run.target_ids.size(), g.tokens.size());  // one decoder row per step
    const Seq2SeqRef ref = dir == bart_dir.path ? bartRef(bart, {}, g.run.source_ids, g.run.target_ids)
                                                : t5Ref(t5, {.gated = true, .tied = false}, g.run.source_ids, g.run.target_ids);
    expectMaps(g.run.cross_attention, ref.cross, "cross");
    for (size_t s = 0; s < g.tokens.size(); ++s) {
      const std::vector<double>& z = ref.logits[s];
      const auto best = std::max_element(z.begin(), z.end()) - z.begin();
      EXPECT_EQ(g.tokens[s].id, best) << "step " << s;
      if (s + 1 < g.tokens.size()) {
        EXPECT_EQ(g.run.target_ids[s + 1], g.tokens[s].id);  // fed back
      }
    }
    if (!g.stopped_at_eos) {
      EXPECT_EQ(g.tokens.size(), 5u);
    }
  }
}

// The decoded text leaves out the specials around a text: a BART whose logits bias makes <s> win every step
// generates only <s> (its tokens say so) and an empty text.
TEST(FamilySeq2Seq, GeneratedTextLeavesOutSpecials) {
  test::TempDir dir;
  TinyModel bart = writeBart(dir.path, {});
  bart.weights.at("final_logits_bias")[kBos] = 50.0f;
  test::writeWeights(bart);
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const Seq2SeqGeneration g = generateSeq2Seq(*model, kSource, 3);
  ASSERT_EQ(g.tokens.size(), 3u);
  for (const Prediction& t : g.tokens) EXPECT_EQ(t.id, kBos);
  EXPECT_EQ(g.text, "");
}

TEST(FamilySeq2Seq, RefusesConfigsItDoesNotCompute) {
  struct Bad {
    bool t5;
    std::string key, value, needle;
  };
  const std::vector<Bad> bad = {
      {false, "add_final_layer_norm", "true", "add_final_layer_norm"},
      {false, "scale_embedding", "\"yes\"", "scale_embedding"},
      {false, "decoder_attention_heads", "2", "'decoder_attention_heads' differs from encoder_attention_heads"},
      {false, "activation_function", "\"swiglu\"", "activation_function"},
      {false, "decoder_start_token_id", "999", "'decoder_start_token_id' must be a token id from 0 to 260"},
      {true, "feed_forward_proj", "\"gelu-new\"", "feed_forward_proj"},
      {true, "dense_act_fn", "\"mish\"", "dense_act_fn"},
      {true, "relative_attention_num_buckets", "2", "expected at least 4"},
      {true, "relative_attention_max_distance", "3", "expected more than half"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.key + " = " + b.value);
    test::TempDir dir;
    const TinyModel m = b.t5 ? writeT5(dir.path, {}) : writeBart(dir.path, {});
    test::setConfigField(m, b.key, b.value);
    const std::string e = test::loadError(dir.path);
    EXPECT_NE(e.find("config.json"), std::string::npos) << e;
    EXPECT_NE(e.find(b.needle), std::string::npos) << e;
  }
  // A decoder-only family's config with a field of these blocks is refused, not ignored.
  test::TempDir gpt2;
  const TinyModel g = test::writeTinyModel(gpt2.path);
  test::setConfigField(g, "scale_embedding", "true");
  EXPECT_NE(test::loadError(gpt2.path).find("'scale_embedding' is true, which GPT-2 does not implement"), std::string::npos);
}

TEST(FamilySeq2Seq, RefusesRunsItCannotDo) {
  test::TempDir t5_dir, enc_dir, bart_dir, base_dir;
  writeT5(t5_dir.path, {});
  writeT5(enc_dir.path, {.encoder_only = true});
  writeBart(bart_dir.path, {});
  writeBart(base_dir.path, {.base_model = true});
  const auto t5 = loadModel(filesOnDisk(t5_dir.path.string()));
  const auto enc = loadModel(filesOnDisk(enc_dir.path.string()));
  const auto bart = loadModel(filesOnDisk(bart_dir.path.string()));
  const auto base = loadModel(filesOnDisk(base_dir.path.string()));
  EXPECT_NE(test::errorOf([&] { runModel(*t5, "hello"); }).find("T5 is an encoder–decoder model"), std::string::npos);
  EXPECT_NE(test::errorOf([&] { runSeq2Seq(*t5, "", kTarget, 5); }).find("text: empty"), std::string::npos);
  EXPECT_NE(test::errorOf([&] { runSeq2Seq(*enc, kSource, kTarget, 5); }).find("T5EncoderModel is an encoder alone"),
            std::string::npos);
  EXPECT_NE(test::errorOf([&] { generateSeq2Seq(*base, kSource, 3); }).find("BartModel has no decoder with an LM head"),
            std::string::npos);
  EXPECT_NE(test::errorOf([&] { generateSeq2Seq(*bart, kSource, 0); }).find("--max-new"), std::string::npos);
  // BART has 40 positions; T5 none, but the maps' memory is checked before the pass.
  const std::string long_text(60, 'x');
  EXPECT_NE(test::errorOf([&] { runSeq2Seq(*bart, long_text, kTarget, 5); }).find("has only 40 positions"),
            std::string::npos);
  EXPECT_NE(test::errorOf([&] { runSeq2Seq(*bart, kSource, long_text, 5); }).find("--target: "), std::string::npos);
  const ref::ScopedEnv limit("ATTNLAB_MEMORY_LIMIT_MB", "4");
  const std::string e = test::errorOf([&] { runSeq2Seq(*t5, std::string(3000, 'x'), kTarget, 5); });
  EXPECT_NE(e.find("the attention maps of"), std::string::npos) << e;
  EXPECT_NE(e.find("memory"), std::string::npos) << e;
}

// [SECTION] Through the command line
// The [layer][head] maps of a run equal the .npy's [layers, heads, rows, cols].
void expectNpyMaps(const fs::path& file, const std::vector<std::vector<Mat>>& maps, std::vector<int64_t> shape) {
  std::vector<int64_t> got_shape;
  const std::vector<float> v = test::readTyped<float>(file, "<f4", got_shape);
  ASSERT_EQ(got_shape, shape) << file;
  size_t at = 0;
  for (const std::vector<Mat>& layer : maps)
    for (const Mat& a : layer)
      for (int64_t i = 0; i < a.rows(); ++i)
        for (int64_t j = 0; j < a.cols(); ++j) ASSERT_EQ(v[at++], a(i, j)) << file;
}

TEST(FamilySeq2Seq, ModelRunWritesTheThreeKindsOfMapsThroughTheCli) {
  test::TempDir t5_dir, bart_dir, gpt2_dir, out;
  writeT5(t5_dir.path, {.gated = true, .tied = false});
  writeBart(bart_dir.path, {});
  test::writeTinyModel(gpt2_dir.path);
  for (const fs::path& dir : {t5_dir.path, bart_dir.path}) {
    SCOPED_TRACE(dir.string());
    const fs::path o = out.path / dir.filename();
    const test::RunResult r =
        test::runAttnlab({"model", "run", dir.string(), "--text", kSource, "--target", kTarget, "--out", o.string()});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("cross-attention [2, 4, "), std::string::npos) << r.out;
    const auto model = loadModel(filesOnDisk(dir.string()));
    const Seq2SeqRun run = runSeq2Seq(*model, kSource, kTarget, 5);
    const int64_t S = static_cast<int64_t>(run.source_ids.size()), T = static_cast<int64_t>(run.target_ids.size());
    const nlohmann::json tokens = nlohmann::json::parse(test::slurp(o / "tokens.json"));
    EXPECT_EQ(tokens["source_ids"].get<std::vector<int32_t>>(), run.source_ids);
    EXPECT_EQ(tokens["target_ids"].get<std::vector<int32_t>>(), run.target_ids);
    EXPECT_EQ(tokens["target_tokens"].size(), static_cast<size_t>(T));
    expectNpyMaps(o / "encoder_attention.npy", run.encoder_attention, {2, kHeads, S, S});
    expectNpyMaps(o / "decoder_attention.npy", run.decoder_attention, {2, kHeads, T, T});
    expectNpyMaps(o / "cross_attention.npy", run.cross_attention, {2, kHeads, T, S});
    std::vector<int64_t> shape;
    const std::vector<float> enc = test::readTyped<float>(o / "encoder_hidden.npy", "<f4", shape);
    EXPECT_EQ(shape, (std::vector<int64_t>{S, kD}));
    EXPECT_EQ(enc[static_cast<size_t>(S * kD - 1)], run.encoder_hidden(S - 1, kD - 1));
    const std::vector<float> dec = test::readTyped<float>(o / "decoder_hidden.npy", "<f4", shape);
    EXPECT_EQ(shape, (std::vector<int64_t>{T, kD}));
    EXPECT_EQ(dec[0], run.decoder_hidden(0, 0));
    const nlohmann::json meta = nlohmann::json::parse(test::slurp(o / "meta.json"));
    ASSERT_EQ(meta["top_k"].size(), static_cast<size_t>(T));
    EXPECT_EQ(meta["top_k"][0][0]["id"].get<int32_t>(), run.top_k[0][0].id);
    EXPECT_EQ(meta["decoder_start_token_id"].get<int32_t>(), run.target_ids[0]);

    // model generate: each step's cross-attention row over the source
    const fs::path g = out.path / (dir.filename().string() + "_gen");
    const test::RunResult gr =
        test::runAttnlab({"model", "generate", dir.string(), "--text", kSource, "--max-new", "3", "--out", g.string()});
    ASSERT_EQ(gr.status, 0) << gr.err;
    const Seq2SeqGeneration gen = generateSeq2Seq(*model, kSource, 3);
    const std::vector<float> cross = test::readTyped<float>(g / "cross_attention.npy", "<f4", shape);
    const int64_t steps = static_cast<int64_t>(gen.tokens.size());
    ASSERT_EQ(shape, (std::vector<int64_t>{steps, 2, kHeads, S}));
    for (int64_t st = 0; st < steps; ++st)
      for (int64_t j = 0; j < S; ++j)
        ASSERT_EQ(cross[static_cast<size_t>(((st * 2 + 1) * kHeads + 3) * S + j)], gen.run.cross_attention[1][3](st, j));
    const nlohmann::json gt = nlohmann::json::parse(test::slurp(g / "tokens.json"));
    ASSERT_EQ(gt["ids"].size(), static_cast<size_t>(steps));
    EXPECT_EQ(gt["ids"][0].get<int32_t>(), gen.tokens[0].id);
  }
  // One line, nothing written: --target without an encoder–decoder, an empty one with one, sampling, the encoder's options.
  struct Bad {
    std::vector<std::string> args;
    std::string needle;
  };
  const std::string t5 = t5_dir.path.string(), gpt2 = gpt2_dir.path.string();
  const std::vector<Bad> bad = {
      {{"model", "run", gpt2, "--text", "hi", "--target", "x"}, "--target: GPT2LMHeadModel is not an encoder–decoder model"},
      {{"model", "run", t5, "--text", "hi", "--target", ""}, "--target: empty (leave the flag out for the model's own translation)"},
      {{"model", "run", t5, "--text", "hi", "--target", "x", "--maps", "pooled"}, "--maps: an encoder–decoder run writes every map"},
      {{"model", "run", t5, "--text", "hi", "--target", "x", "--predict-at", "last"}, "--predict-at"},
      {{"model", "generate", t5, "--text", "hi", "--top-k", "3"}, "--top-k: encoder–decoder models generate greedily"},
  };
  for (const Bad& b : bad) {
    const fs::path o = out.path / "refused";
    std::vector<std::string> args = b.args;
    args.insert(args.end(), {"--out", o.string()});
    const test::RunResult r = test::runAttnlab(args);
    EXPECT_NE(r.status, 0) << b.needle;
    EXPECT_NE(r.err.find(b.needle), std::string::npos) << r.err;
    EXPECT_EQ(test::countLines(r.err), 1) << r.err;
    EXPECT_FALSE(fs::exists(o)) << b.needle;
  }
}

// `attnlab render --model T5 --text --target`: the three maps, the token lines and the grid, each panel's strongest
// cell the run's; the views and selections it cannot draw are refused in one line.
TEST(FamilySeq2Seq, RenderDrawsTheThreeMapsTheLinesAndTheGrids) {
  test::TempDir dir, out;
  writeT5(dir.path, {.gated = true, .tied = false});
  const auto model = loadModel(filesOnDisk(dir.path.string()));
  const Seq2SeqRun run = runSeq2Seq(*model, kSource, kTarget, 0);
  const auto render = [&](const std::vector<std::string>& extra, const std::string& name) {
    std::vector<std::string> args = {"render", "--model", dir.path.string(), "--text", kSource, "--target", kTarget,
                                     "--out", (out.path / (name + ".png")).string(), "--describe", (out.path / (name + ".json")).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::runAttnlab(args);
  };
  const auto strongest = [](const Mat& a) { return static_cast<double>(a.maxCoeff()); };
  {
    const test::RunResult r = render({"--layer", "1", "--head", "2"}, "maps");  // --view maps is the default
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json d = nlohmann::json::parse(test::slurp(out.path / "maps.json"));
    ASSERT_EQ(d["panels"].size(), 3u);
    EXPECT_EQ(d["panels"][0]["title"], "cross-attention, target \xE2\x86\x92 source");
    EXPECT_EQ(d["panels"][0]["rows"], run.target_ids.size());
    EXPECT_EQ(d["panels"][0]["cols"], run.source_ids.size());
    EXPECT_NEAR(d["panels"][0]["strongest"]["value"].get<double>(), strongest(run.cross_attention[1][2]), 1e-6);
    EXPECT_EQ(d["panels"][1]["title"], "encoder self-attention");
    EXPECT_NEAR(d["panels"][1]["strongest"]["value"].get<double>(), strongest(run.encoder_attention[1][2]), 1e-6);
    EXPECT_EQ(d["panels"][2]["title"], "decoder self-attention");
    EXPECT_NEAR(d["panels"][2]["strongest"]["value"].get<double>(), strongest(run.decoder_attention[1][2]), 1e-6);
  }
  {
    const test::RunResult r = render({"--view", "model", "--attention-of", "cross"}, "cross");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json d = nlohmann::json::parse(test::slurp(out.path / "cross.json"));
    ASSERT_EQ(d["panels"].size(), static_cast<size_t>(2 * kHeads));  // layers × heads
    EXPECT_EQ(d["panels"][kHeads + 3]["title"], "L1 H3");
    EXPECT_NEAR(d["panels"][kHeads + 3]["strongest"]["value"].get<double>(), strongest(run.cross_attention[1][3]), 1e-6);
  }
  {
    const test::RunResult r = render({"--view", "heads", "--layer", "0"}, "lines");
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json d = nlohmann::json::parse(test::slurp(out.path / "lines.json"));
    ASSERT_EQ(d["panels"].size(), 1u);
    EXPECT_EQ(d["panels"][0]["kind"], "lines");
  }
  for (const std::string name : {"maps", "cross", "lines"}) EXPECT_GT(fs::file_size(out.path / (name + ".png")), 10000u) << name;
  struct Bad {
    std::vector<std::string> extra;
    std::string needle;
  };
  for (const Bad& b : std::vector<Bad>{{{"--view", "rollout"}, "--view: 'rollout' is not a view of an encoder–decoder model (expected one of maps, model, heads, table)"},
                                       {{"--layer", "2"}, "--layer: expected 0..1"},
                                       {{"--head", "4"}, "--head: expected 0..3"}}) {
    const test::RunResult r = render(b.extra, "bad");
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find(b.needle), std::string::npos) << r.err;
    EXPECT_EQ(test::countLines(r.err), 1) << r.err;
    EXPECT_FALSE(fs::exists(out.path / "bad.png"));
  }
  test::TempDir gpt2;
  test::writeTinyModel(gpt2.path);
  const test::RunResult r = test::runAttnlab({"render", "--model", gpt2.path.string(), "--text", "hi", "--target", "x",
                                              "--out", (out.path / "g.png").string()});
  EXPECT_NE(r.err.find("--target: only encoder–decoder models"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace attn::s2s

namespace attn {

test::TinyModel test::writeT5Fixture(const fs::path& dir, const test::FamilyFixture& f) {
  return s2s::writeT5(dir, {.dtype = f.dtype, .seed = f.seed});
}

test::TinyModel test::writeBartFixture(const fs::path& dir, const test::FamilyFixture& f) {
  return s2s::writeBart(dir, {.dtype = f.dtype, .seed = f.seed});
}

}  // namespace attn
