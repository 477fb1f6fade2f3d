// SNAIL, a simple neural attentive meta-learner (Mishra et al. 2018, §3 and
// Appendix B): a stack of blocks over the sequence x [T, C₀], each block's
// output concatenated onto its input (rows are positions):
//   DenseBlock(R, D):  xf = CausalConv(x, R, D), xg = CausalConv(x, R, D)   kernel 2, dilation R
//                      a = tanh(xf) ⊙ σ(xg);  x ← [x, a]                    [T, C + D]
//   TCBlock(T, D):     DenseBlock(2^i, D) for i = 1 … ⌈log2 T⌉               (i0 = 1 below; default i0 = 0)
//   AttentionBlock(K, V):
//                      Q = x W_q, K = x W_k, V = x W_v                     [T, K], [T, K], [T, V]
//                      A = CausallyMaskedSoftmax(Q Kᵀ / √K)                [T, T]
//                      x ← [x, A V]                                        [T, C + V]
// The convolutions give each position precise access to a window that
// doubles with every dense block; attention gives access to every earlier
// position. The receptive field of the convolutions before each attention
// block is computed exactly from the dilations and shown beside its weights.
#include "engine/variants/snail.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/gemm.h"
#include "engine/registry.h"
#include "engine/sparse.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace attn {

namespace {

constexpr int64_t kMaxBlocks = 32, kMaxWidth = 1024, kMaxDilation = 1 << 20;
const char* const kBlocksSyntax = "attn(K, V), tc(D) or dense(R, D), separated by commas";

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

[[noreturn]] void badBlock(size_t index, const std::string& text, const std::string& what) {
  throw InputError("parameter 'blocks': block " + std::to_string(index) + " '" + text + "': " + what);
}

}  // namespace

std::vector<SnailBlock> parseSnailBlocks(const std::string& spec) {
  // Split at the commas outside parentheses.
  std::vector<std::string> items;
  std::string cur;
  int depth = 0;
  for (size_t i = 0; i < spec.size(); ++i) {
    const char ch = spec[i];
    if (ch == '(') ++depth;
    if (ch == ')' && --depth < 0)
      throw InputError("parameter 'blocks': unmatched ')' at character " + std::to_string(i + 1) + " of '" + spec +
                       "', expected " + kBlocksSyntax);
    if (ch == ',' && depth == 0) {
      items.push_back(trim(cur));
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (depth != 0) throw InputError("parameter 'blocks': unclosed '(' in '" + spec + "', expected " + kBlocksSyntax);
  items.push_back(trim(cur));
  if (items.size() == 1 && items[0].empty())
    throw InputError("parameter 'blocks': empty, expected at least one block: " + std::string(kBlocksSyntax));
  if (static_cast<int64_t>(items.size()) > kMaxBlocks)
    throw InputError("parameter 'blocks': " + std::to_string(items.size()) + " blocks, expected at most " +
                     std::to_string(kMaxBlocks));

  std::vector<SnailBlock> blocks;
  bool any_attention = false;
  for (size_t b = 0; b < items.size(); ++b) {
    const std::string& item = items[b];
    const size_t open = item.find('(');
    if (item.empty()) badBlock(b, item, std::string("empty, expected ") + kBlocksSyntax);
    if (open == std::string::npos || item.back() != ')')
      badBlock(b, item, std::string("expected ") + kBlocksSyntax);
    const std::string name = trim(item.substr(0, open));
    // The arguments: integers separated by commas.
    std::vector<int64_t> args;
    const std::string inner = item.substr(open + 1, item.size() - open - 2);
    size_t start = 0;
    for (;;) {
      const size_t comma = inner.find(',', start);
      const std::string arg = trim(inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(arg.c_str(), &end, 10);
      if (arg.empty() || errno || *end != '\0' || !std::isdigit(static_cast<unsigned char>(arg[0])))
        badBlock(b, item, "argument '" + arg + "' is not a positive integer");
      args.push_back(v);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    auto check = [&](const char* symbol, int64_t v, int64_t hi) {
      if (v < 1 || v > hi) badBlock(b, item, std::string(symbol) + " = " + std::to_string(v) + ", expected 1 … " + std::to_string(hi));
    };
    SnailBlock block;
    block.text = item;
    if (name == "attn" && args.size() == 2) {
      block.kind = SnailBlock::Kind::Attention;
      check("K", args[0], kMaxWidth);
      check("V", args[1], kMaxWidth);
      block.key_size = args[0];
      block.value_size = args[1];
      any_attention = true;
    } else if (name == "tc" && args.size() == 1) {
      block.kind = SnailBlock::Kind::Tc;
      check("D", args[0], kMaxWidth);
      block.filters = args[0];
    } else if (name == "dense" && args.size() == 2) {
      block.kind = SnailBlock::Kind::Dense;
      check("R", args[0], kMaxDilation);
      check("D", args[1], kMaxWidth);
      block.dilation = args[0];
      block.filters = args[1];
    } else if (name == "attn" || name == "tc" || name == "dense") {
      badBlock(b, item, std::to_string(args.size()) + " arguments, expected " +
                            (name == "attn" ? "attn(K, V)" : name == "tc" ? "tc(D)" : "dense(R, D)"));
    } else {
      badBlock(b, item, "unknown block '" + name + "', expected " + kBlocksSyntax);
    }
    blocks.push_back(block);
  }
  if (!any_attention)
    throw InputError("parameter 'blocks': no attn(K, V) block in '" + spec +
                     "', expected at least one (the weights shown are the attention blocks')");
  return blocks;
}

std::vector<int64_t> tcDilations(int64_t length, int64_t first_exponent) {
  std::vector<int64_t> d;
  for (int64_t i = 0; (int64_t{1} << i) < length; ++i) d.push_back(int64_t{1} << (first_exponent + i));  // ⌈log2 T⌉ of them
  return d;
}

Mat snailDenseActivations(const MatRef& x, int64_t dilation, const SnailDenseWeights& w) {
  const int64_t T = x.rows(), C = x.cols();
  auto gated = [&](const Mat& weights, const Vec& bias) {
    // x_t W⁽¹⁾, + x_{t−R} W⁽⁰⁾ where t ≥ R, + b                [T, D]
    // (engine/gemm.h: the same sums at any thread count)
    Mat pre = product(x, weights.bottomRows(C));
    if (dilation < T) gemm(x.topRows(T - dilation), weights.topRows(C), false, 1.0f, 1.0f, pre.bottomRows(T - dilation));
    pre.rowwise() += bias.transpose();
    return pre;
  };
  const Mat xf = gated(w.w_f, w.b_f), xg = gated(w.w_g, w.b_g);
  // tanh(xf) ⊙ σ(xg), σ(z) = 1 / (1 + e^−z): e^−z = ∞ gives 0, never NaN.
  return (xf.array().tanh() * (1.0f + (-xg.array()).exp()).inverse()).matrix();
}

Mat snailReceptiveField(const std::vector<int64_t>& dilations, int64_t length) {
  // reached[s]: offset s = t − j is reached (subset sums of the dilations).
  std::vector<bool> reached(static_cast<size_t>(length), false);
  if (length > 0) reached[0] = true;
  for (const int64_t r : dilations)
    for (int64_t s = length - 1; s >= r; --s)  // downwards: each dilation is used at most once
      if (reached[static_cast<size_t>(s - r)]) reached[static_cast<size_t>(s)] = true;
  Mat field = Mat::Zero(length, length);
  for (int64_t t = 0; t < length; ++t)
    for (int64_t s = 0; s <= t; ++s)
      if (reached[static_cast<size_t>(s)]) field(t, t - s) = 1.0f;
  return field;
}

namespace {

// Parameters named "block{b}_…" ("block1_dense0_…" inside a TC block), the file stems under inputs/.
SnailDenseWeights denseWeights(int64_t channels, int64_t filters, uint64_t seed, const std::string& prefix,
                               Result& r) {
  // W ~ N(0, 1/(2C)): unit-variance inputs give unit-variance pre-activations
  // over the 2C taps; biases small, so the gates start near ½.
  const float gain = 1.0f / std::sqrt(2.0f * static_cast<float>(channels));
  SnailDenseWeights w;
  w.w_f = randomNormal(2 * channels, filters, seed, prefix + "w_f", gain);
  w.b_f = randomNormal(filters, 1, seed, prefix + "b_f", 0.1f).col(0);
  w.w_g = randomNormal(2 * channels, filters, seed, prefix + "w_g", gain);
  w.b_g = randomNormal(filters, 1, seed, prefix + "b_g", 0.1f).col(0);
  r.inputs[prefix + "w_f"] = w.w_f;
  r.inputs[prefix + "b_f"] = w.b_f;
  r.inputs[prefix + "w_g"] = w.w_g;
  r.inputs[prefix + "b_g"] = w.b_g;
  for (const char* b : {"b_f", "b_g"}) r.vector_inputs.push_back(prefix + b);
  return w;
}

Result snail(const Inputs& in, const Params& p, const RunContext& ctx) {
  const std::vector<SnailBlock> blocks = parseSnailBlocks(p.getString("blocks"));
  const Mat& x = in.query();  // [T, C₀]
  const int64_t T = x.rows(), c0 = x.cols(), i0 = p.getInt("dilation_exp0");

  // The shapes first, so nothing large is allocated for a run that cannot fit.
  int64_t channels = c0, attention_blocks = 0;
  double weight_floats = 0;
  for (const SnailBlock& b : blocks) {
    if (b.kind == SnailBlock::Kind::Attention) {
      weight_floats += static_cast<double>(channels) * static_cast<double>(2 * b.key_size + b.value_size);
      channels += b.value_size;
      ++attention_blocks;
    } else {
      const int64_t n = b.kind == SnailBlock::Kind::Tc ? static_cast<int64_t>(tcDilations(T, i0).size()) : 1;
      for (int64_t i = 0; i < n; ++i) {
        weight_floats += 2.0 * (2.0 * static_cast<double>(channels) + 1.0) * static_cast<double>(b.filters);
        channels += b.filters;
      }
    }
  }
  // Weights, scores, receptive fields, extras/attention, and the causal mask.
  // (The walkthrough's sparse copies of fields and weights count as one more.)
  // One budget for both, so that each cannot take three quarters on its own.
  const double dense_bytes = 4.0 * 6.0 * static_cast<double>(attention_blocks) * static_cast<double>(T) * static_cast<double>(T);
  const double feature_bytes = 4.0 * (static_cast<double>(T) * static_cast<double>(channels) * 2.0 + weight_floats);
  checkMemoryBudget(dense_bytes + feature_bytes,
                    "snail: the features [" + std::to_string(T) + ", " + std::to_string(channels) +
                        "], the blocks' weights and dense attention [" + std::to_string(attention_blocks) + ", " +
                        std::to_string(T) + ", " + std::to_string(T) + "] (use narrower blocks or a shorter sequence)");

  Result r;
  r.q_tokens = in.tokens;
  r.k_tokens = in.tokens;
  r.mask = causalMask(T, T);
  r.inputs["x"] = x;
  // The features: x, then each block's output concatenated on the right.   [T, C_total]
  Mat features(T, channels);
  features.leftCols(c0) = x;
  int64_t width = c0;           // channels so far
  std::vector<int64_t> dilations;  // of every dense block so far, in order
  std::vector<Mat> fields;
  std::vector<int64_t> reach;  // per attention block: the farthest offset t − j its field reaches
  std::vector<const SnailBlock*> attention_at;  // per attention block: its entry in `blocks`
  std::vector<size_t> attention_index;          // and its number there
  std::vector<std::string> reach_caption;       // "convolutions of dilation 1, 2, 4: 7 back"
  for (size_t b = 0; b < blocks.size(); ++b) {
    const SnailBlock& blk = blocks[b];
    const std::string prefix = "block" + std::to_string(b) + "_";
    if (blk.kind == SnailBlock::Kind::Attention) {
      // W_q, W_k ~ N(0, 1/C), W_v likewise: unit-variance features give unit-variance q, k, v.
      const float gain = 1.0f / std::sqrt(static_cast<float>(width));
      const Mat w_q = randomNormal(width, blk.key_size, in.seed, prefix + "w_q", gain);
      const Mat w_k = randomNormal(width, blk.key_size, in.seed, prefix + "w_k", gain);
      const Mat w_v = randomNormal(width, blk.value_size, in.seed, prefix + "w_v", gain);
      const MatRef xs = features.leftCols(width);
      // Q = x W_q, K = x W_k, V = x W_v                          [T, K], [T, K], [T, V]
      const Mat q = product(xs, w_q), k = product(xs, w_k), v = product(xs, w_v);
      // A = CausallyMaskedSoftmax(Q Kᵀ / √K);  x ← [x, A V]      [T, T], [T, C + V]
      Mat scores, weights;
      attendHead(q, k, v, 1.0f / std::sqrt(static_cast<float>(blk.key_size)), r.mask, scores, weights,
                 features.middleCols(width, blk.value_size));
      r.weights.push_back(std::move(weights));
      r.scores.push_back(std::move(scores));
      fields.push_back(snailReceptiveField(dilations, T));
      int64_t first = 0;  // the last position's first reached key
      while (first + 1 < T && fields.back()(T - 1, first) == 0.0f) ++first;
      reach.push_back(T - 1 - first);
      attention_at.push_back(&blk);
      attention_index.push_back(b);
      std::string ds;
      for (size_t i = 0; i < dilations.size() && i < 12; ++i) ds += (i ? ", " : "") + std::to_string(dilations[i]);
      if (dilations.size() > 12) ds += ", …";
      reach_caption.push_back(dilations.empty() ? "no convolution yet: t itself"
                                                : "convolutions of dilation " + ds + ": " + std::to_string(reach.back()) + " back");
      r.inputs[prefix + "w_q"] = w_q;
      r.inputs[prefix + "w_k"] = w_k;
      r.inputs[prefix + "w_v"] = w_v;
      r.flops += 2.0 * static_cast<double>(T) * static_cast<double>(width) * static_cast<double>(2 * blk.key_size + blk.value_size)  // projections
                 + static_cast<double>(T) * static_cast<double>(T) * static_cast<double>(blk.key_size + blk.value_size)  // causal QKᵀ, AV (half each)
                 + 3.0 * static_cast<double>(T) * static_cast<double>(T);  // softmax
      width += blk.value_size;
    } else {
      const std::vector<int64_t> ds =
          blk.kind == SnailBlock::Kind::Tc ? tcDilations(T, i0) : std::vector<int64_t>{blk.dilation};
      for (size_t i = 0; i < ds.size(); ++i) {
        const std::string name = blk.kind == SnailBlock::Kind::Tc ? prefix + "dense" + std::to_string(i) + "_" : prefix;
        const SnailDenseWeights w = denseWeights(width, blk.filters, in.seed, name, r);
        // a = tanh(xf) ⊙ σ(xg);  x ← [x, a]                      [T, C + D]
        features.middleCols(width, blk.filters) = snailDenseActivations(features.leftCols(width), ds[i], w);
        r.flops += 2.0 * 2.0 * static_cast<double>(T) * static_cast<double>(2 * width) * static_cast<double>(blk.filters)
                   + 6.0 * static_cast<double>(T) * static_cast<double>(blk.filters);
        width += blk.filters;
        dilations.push_back(ds[i]);
      }
    }
    ctx.progress(static_cast<float>(b + 1) / static_cast<float>(blocks.size()));
  }
  r.output = std::move(features);
  r.weights_label = "attention weight";

  // The walkthrough: each attention block's column, its convolutions' field
  // above its weights (blocks in order, so a grid of A columns pairs them).
  if (denseFits(2 * attention_blocks, T, T)) {
    std::vector<Stage> weights_row;
    for (size_t a = 0; a < fields.size(); ++a) {
      const SnailBlock& blk = *attention_at[a];
      const std::string block = "block " + std::to_string(attention_index[a]);
      Stage field{.title = block + ": receptive field",
                  .caption = reach_caption[a],
                  .matrix = sparseFromDense(fields[a], Mat()),
                  .row_labels = r.q_tokens, .col_labels = r.k_tokens};
      Stage att{.title = block + ": " + blk.text,
                .caption = "softmax(QKᵀ/√" + std::to_string(blk.key_size) + ") over all j ≤ t",
                .matrix = sparseFromDense(r.weights[a], r.mask),
                .row_labels = r.q_tokens, .col_labels = r.k_tokens};
      r.stages.push_back(std::move(field));
      weights_row.push_back(std::move(att));
    }
    for (Stage& st : weights_row) r.stages.push_back(std::move(st));
  }

  // One slice per attention block, paired with its weights (the result's "head" of the same number).
  r.extras.push_back({.name = "receptive_field", .label = "convolutions' receptive field (1: position j reaches t)",
                      .kind = ExtraKind::Weights, .value = Array::fromMats(fields), .row_axis = "query position t",
                      .col_axis = "key position j"});
  r.extras.push_back({.name = "attention", .label = "attention weights of each attention block",
                      .kind = ExtraKind::Data, .value = Array::fromMats(r.weights)});
  for (size_t a = 0; a < reach.size(); ++a)
    r.extras.push_back({.name = "reach_" + std::to_string(a),
                        .label = "positions the convolutions reach back before attention block " + std::to_string(a),
                        .kind = ExtraKind::Scalar, .value = Array::fromVector({static_cast<float>(reach[a])}),
                        .integer = true});
  return r;
}

}  // namespace

VariantInfo makeSnailVariant() {
  VariantInfo v;
  v.name = "snail";
  v.family = "memory and pointers";
  v.title = "SNAIL (temporal convolutions and causal attention)";
  v.summary = "DenseBlock: x ← [x, tanh(xf) ⊙ σ(xg)], causal conv kernel 2, dilation R;  "
              "TC: dilations 1, 2, 4, …;  Attention: x ← [x, softmax(QKᵀ/√K, causal) V]";
  v.citation = "Mishra et al. 2018";
  v.input = InputKind::SelfAttention;
  v.given_qkv = GivenQkv::Refused;
  v.params = {
      {.key = "blocks", .symbol = "blocks", .type = ParamType::Text,
       .help = "The block sequence: attn(K, V) (causal attention, key size K, value size V), tc(D) (⌈log2 T⌉ dense "
               "blocks of D filters) or dense(R, D) (one dense block of dilation R), separated by commas; each "
               "block's output is concatenated onto its input. Default: the paper's Omniglot stack at a quarter "
               "of its widths",
       .def = std::string("attn(16,8),tc(32),attn(64,32),tc(32),attn(128,64)"),
       .file_shape = "attn(K, V), tc(D) or dense(R, D), separated by commas"},
      {.key = "dilation_exp0", .symbol = "i₀", .type = ParamType::Int,
       .help = "A TC block's dense block i has dilation 2^(i₀ + i): 0 gives 1, 2, 4, … (every offset up to T − 1 "
               "reached); the paper's pseudo-code counts i from 1 (i₀ = 1: 2, 4, 8, …, odd offsets never reached)",
       .min = 0, .max = 4, .def = int64_t{0}},
  };
  v.views = {"walkthrough", "extras", "heatmap", "heads", "family"};
  v.row_axis = "query position t";
  v.col_axis = "key position j";
  v.run = snail;
  return v;
}

}  // namespace attn
