#include "app/model/attention_scene.h"

#include "app/model/embedded_model.h"
#include "app/model/model_scene.h"
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/files.h"
#include "engine/model/blocks/maps.h"
#include "engine/model/checkpoint/config.h"
#include "engine/parallel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <numeric>

namespace attn {

namespace fs = std::filesystem;

std::string shortModelName(const std::string& label) {
  if (label.rfind(kShippedPrefix, 0) == 0) return label.substr(std::string(kShippedPrefix).size());
  const fs::path p(label);
  const std::string name = p.has_filename() ? p.filename().string() : p.parent_path().filename().string();
  return name.empty() ? label : name;
}

namespace {

// What meta.json says of the maps (every field optional).
struct AttentionMeta {
  std::string model, architecture, text;
  bool scores = false;
  std::optional<bool> causal;
  int64_t repeat = 0;  // > 0: the last 2·repeat tokens are a sequence of `repeat` tokens twice
  std::string maps;    // a `model run` folder's: "all", "pooled", "heads", "none"
  int64_t pooled_block = 0, tokens = 0;
};

AttentionMeta readMeta(const fs::path& file) {
  AttentionMeta m;
  if (!fs::exists(file)) return m;
  const nlohmann::json j = parseJsonObject(readWholeFile(file, "meta.json", uintmax_t{64} << 20), file.string());
  const ConfigReader r{j, file.string()};
  m.model = r.text("model", "");
  m.architecture = r.text("architecture", "");
  m.text = r.text("text", "");
  m.scores = r.flag("scores", false);
  if (r.has("causal")) m.causal = r.flag("causal", false);
  m.repeat = r.has("repeat") ? r.positive("repeat", kMaxCount) : 0;
  m.maps = r.text("maps", "");
  m.pooled_block = r.has("pooled_block") ? r.positive("pooled_block", kMaxCount) : 0;
  m.tokens = r.has("tokens") ? r.positive("tokens", kMaxCount) : 0;
  return m;
}

// heads.json of a `model run` folder: the run's own summaries (induction where it wrote it).
std::vector<HeadSummary> readHeads(const fs::path& file, int64_t layers, int64_t heads) {
  const std::string where = file.string();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(readWholeFile(file, "heads.json", uintmax_t{256} << 20));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_array() || static_cast<int64_t>(j.size()) != layers * heads)
    throw InputError(where + ": expected a list of " + std::to_string(layers * heads) + " heads (" + std::to_string(layers) +
                     " layers \xC3\x97 " + std::to_string(heads) + " heads)");
  std::vector<HeadSummary> out;
  for (size_t n = 0; n < j.size(); ++n) {
    if (!j[n].is_object()) throw InputError(where + ": entry " + std::to_string(n) + " is not an object");
    const ConfigReader r{j[n], where + " entry " + std::to_string(n)};
    HeadSummary s;
    s.layer = static_cast<int64_t>(n) / heads;
    s.head = static_cast<int64_t>(n) % heads;
    if (r.number("layer", std::nullopt, 0, 1e9) != static_cast<double>(s.layer) ||
        r.number("head", std::nullopt, 0, 1e9) != static_cast<double>(s.head))
      r.fail("layer", "and 'head' are not layer-major: expected layer " + std::to_string(s.layer) + ", head " + std::to_string(s.head));
    s.previous_token = r.number("previous_token", std::nullopt, 0, 1);
    s.sink = r.number("sink", std::nullopt, 0, 1);
    s.mean_distance = r.number("mean_distance", std::nullopt, 0, 1e12);
    s.entropy = r.number("entropy", std::nullopt, 0, 1e3);
    s.induction = r.number("induction", 0.0, 0, 1);
    s.kv_head = static_cast<int64_t>(r.number("kv_head", 0.0, 0, static_cast<double>(heads)));
    s.group_size = static_cast<int64_t>(r.number("group_size", 1.0, 1, static_cast<double>(heads)));
    s.group_divergence = r.number("group_divergence", 0.0, 0, 1);
    out.push_back(s);
  }
  return out;
}

// "0", "1", …: the tokens of maps given none.
std::vector<std::string> numberedTokens(int64_t n) {
  std::vector<std::string> t;
  for (int64_t i = 0; i < n; ++i) t.push_back(std::to_string(i));
  return t;
}

// Tokens for maps of L rows: --tokens, else the folder's tokens.json, else "0", "1", ….
std::vector<std::string> readTokens(const AttentionInputs& in, const fs::path& folder_tokens, const std::string& maps_what, int64_t L) {
  std::vector<std::string> tokens;
  std::string from;
  if (!in.tokens.empty()) {
    tokens = readTokenList(in.tokens, "--tokens");
    from = in.tokens;
  } else if (!folder_tokens.empty() && fs::exists(folder_tokens)) {
    tokens = readTokenList(folder_tokens, "tokens");
    from = folder_tokens.string();
  } else {
    return numberedTokens(L);
  }
  if (static_cast<int64_t>(tokens.size()) != L)
    throw InputError(from + ": " + std::to_string(tokens.size()) + " tokens, but " + maps_what + " has " + std::to_string(L) +
                     " (one token per row and column)");
  return tokens;
}

// A tokens file as JSON, read once: discarded (not JSON: one token a line)
// or absent (no file) where it is not a JSON value.
nlohmann::json tokensJson(const std::string& file) {
  if (file.empty()) return nlohmann::json();
  return nlohmann::json::parse(readWholeFile(file, "--tokens", uintmax_t{256} << 20), nullptr, false);
}

// Whether a tokens file names the tokens of cross-attention (a JSON object
// with "source_tokens"): maps of as many target rows as source columns are cross-attention too.
bool namesCrossTokens(const nlohmann::json& j) { return j.is_object() && j.contains("source_tokens"); }

// Tokens of cross-attention maps [Lq, Lk] from `file` (read as `j`): a JSON
// object with "target_tokens" (the rows) and "source_tokens" (the columns),
// as an encoder–decoder's `model run` writes tokens.json; without a file,
// numbered positions.
void readCrossTokens(const std::string& file, const nlohmann::json& j, const std::string& maps_what, int64_t rows, int64_t cols,
                     ModelRun& run) {
  if (file.empty()) {
    run.query_tokens = numberedTokens(rows);
    run.tokens = numberedTokens(cols);
    return;
  }
  const auto list = [&](const char* key, int64_t n, const char* axis) {
    const auto it = j.is_object() ? j.find(key) : j.end();
    if (it == j.end() || !it->is_array() || !std::all_of(it->begin(), it->end(), [](const nlohmann::json& t) { return t.is_string(); }))
      throw InputError(file + ": --tokens: cross-attention needs a JSON object with \"target_tokens\" (the rows) and "
                       "\"source_tokens\" (the columns), lists of strings");
    if (static_cast<int64_t>(it->size()) != n)
      throw InputError(file + ": --tokens: " + std::to_string(it->size()) + " " + key + ", but " + maps_what + " has " +
                       std::to_string(n) + " " + axis);
    return it->get<std::vector<std::string>>();
  };
  run.query_tokens = list("target_tokens", rows, "rows");
  run.tokens = list("source_tokens", cols, "columns");
}

// q or k of every layer as the run keeps them: [layer] [L, heads·d_head].
std::vector<Mat> readProjections(const std::string& path, const char* flag, int64_t layers, int64_t heads, int64_t L,
                                 int64_t& d_head) {
  const FloatTensor t = FloatTensor::open(path, flag);
  const std::vector<int64_t>& s = t.shape();
  const auto refuse = [&] {
    throw InputError(t.what() + ": " + flag + ": shape " + shapeText(s) + " fits no layout; expected [" + std::to_string(layers) +
                     ", " + std::to_string(L) + ", heads\xC2\xB7" "d_head] or [" + std::to_string(layers) + ", " +
                     std::to_string(heads) + ", " + std::to_string(L) + ", d_head] (layers, heads and tokens of the maps)");
  };
  const bool by_head = s.size() == 4;
  if ((s.size() != 3 && !by_head) || s[0] != layers) refuse();
  if (by_head ? s[1] != heads || s[2] != L || s[3] < 1 : s[1] != L || s[2] < heads || s[2] % heads != 0) refuse();
  const int64_t d = by_head ? s[3] : s[2] / heads;
  if (d_head != 0 && d != d_head)
    throw InputError(t.what() + ": " + flag + ": d_head " + std::to_string(d) + ", but the queries' is " + std::to_string(d_head));
  d_head = d;
  checkMemoryBudget(static_cast<double>(t.elements()) * 4, std::string(flag) + " (" + shapeText(s) + " float32)");
  std::vector<Mat> out;
  std::vector<float> head(static_cast<size_t>(L * d));
  for (int64_t l = 0; l < layers; ++l) {
    Mat m(L, heads * d);
    if (by_head) {
      for (int64_t h = 0; h < heads; ++h) {
        t.read(((l * heads + h) * L) * d, L * d, head.data());
        m.middleCols(h * d, d) = Eigen::Map<const Mat>(head.data(), L, d);
      }
    } else {
      t.read(l * L * heads * d, L * heads * d, m.data());
    }
    if (!m.allFinite()) throw InputError(t.what() + ": " + flag + ": layer " + std::to_string(l) + " holds NaN or Inf");
    out.push_back(std::move(m));
  }
  return out;
}

// The maps of a folder whose every map was too large to write (`model run
// --maps pooled`): the pooled maps and the run's head summaries.
void readPooledFolder(const fs::path& dir, const AttentionMeta& meta, const AttentionInputs& in, ModelRun& run,
                      std::vector<HeadSummary>& summaries) {
  const AttentionMaps pooled = attentionMaps(FloatTensor::open(dir / "attention_pooled.npy", "attention_pooled"), "attention_pooled");
  if (pooled.tensor.shape().size() != 4 || pooled.rows != pooled.cols)
    throw InputError(pooled.tensor.what() + ": expected [layers, heads, n, n], got " + shapeText(pooled.tensor.shape()));
  if (meta.tokens < 1 || meta.pooled_block < 1 || (meta.tokens + meta.pooled_block - 1) / meta.pooled_block != pooled.rows)
    throw InputError((dir / "meta.json").string() + ": fields 'tokens' and 'pooled_block' must give the pooled maps' " +
                     std::to_string(pooled.rows) + " blocks (⌈tokens / pooled_block⌉)");
  run.layers = pooled.layers;
  run.heads = pooled.heads;
  run.maps = MapsChoice::Mode::Pooled;
  run.pooled.block = meta.pooled_block;
  run.pooled.n = pooled.rows;
  for (int64_t l = 0; l < run.layers; ++l)
    for (int64_t h = 0; h < run.heads; ++h) {
      run.pooled.mean.push_back(pooled.map(l, h));
      if (!run.pooled.mean.back().allFinite())
        throw InputError(pooled.tensor.what() + ": layer " + std::to_string(l) + ", head " + std::to_string(h) + " holds NaN or Inf");
    }
  run.tokens = readTokens(in, dir / "tokens.json", "meta.json's 'tokens'", meta.tokens);
  if (!fs::exists(dir / "heads.json"))
    throw InputError(dir.string() + ": a folder of pooled maps needs its heads.json (the run's head summaries)");
  summaries = readHeads(dir / "heads.json", run.layers, run.heads);
}

// Each head of `maps` once, on the OpenMP threads: checked (a map of scores
// made weights) and handed to `use` (on its thread; a head's rows in order,
// as MapStream wants them). The first bad head in (layer, head) order is the
// one named, whatever the threads' order.
void forEachHead(const AttentionMaps& maps, bool scores, const RunContext& ctx,
                 const std::function<void(int64_t l, int64_t h, Mat& m)>& use) {
  const int64_t n = maps.layers * maps.heads;
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::atomic<int64_t> done{0};
  parallelFor(n, ctx, [&](int64_t t) {
    const int64_t l = t / maps.heads, h = t % maps.heads;
    try {
      Mat m = maps.map(l, h);
      checkAttentionMap(m, scores, maps.tensor.what(), l, h);
      use(l, h, m);
    } catch (const InputError& e) {
      errors[static_cast<size_t>(t)] = e.what();
    }
    ctx.progress(static_cast<float>(++done) / static_cast<float>(n));
  });
  for (const std::string& e : errors)
    if (!e.empty()) throw InputError(e);
}

std::string dtypeWord(DType t) { return t == DType::F32 ? "float32" : t == DType::F16 ? "float16" : "bfloat16"; }

}  // namespace

std::shared_ptr<const AttentionSource> readAttention(const AttentionInputs& in, const RunContext& ctx) {
  auto src = std::make_shared<AttentionSource>();
  src->inputs = in;
  const fs::path path(in.path);
  if (!fs::exists(path)) throw InputError(in.path + ": --attention: no such file or folder");
  const bool folder = fs::is_directory(path);
  const AttentionMeta meta = folder ? readMeta(path / "meta.json") : AttentionMeta{};
  if (meta.maps == "heads" || meta.maps == "none")
    throw InputError((path / "meta.json").string() + ": field 'maps' is '" + meta.maps +
                     "': the folder holds no map of every head; run `model run` with --maps all or pooled");
  src->name = !meta.model.empty() ? shortModelName(meta.model) : shortModelName(path.lexically_normal().string());
  src->architecture = meta.architecture;
  src->text = meta.text;
  src->scores = meta.scores;
  auto a = std::make_shared<ModelAnalysis>();
  ModelRun& run = a->run;
  // A folder's maps: attention.npy, or an encoder–decoder's `model run`'s cross-attention.
  const fs::path file = !folder                                   ? path
                        : fs::exists(path / "attention.npy")      ? path / "attention.npy"
                        : fs::exists(path / "cross_attention.npy") ? path / "cross_attention.npy"
                                                                   : path / "attention.npy";
  const std::string folder_tokens = folder && fs::exists(path / "tokens.json") ? (path / "tokens.json").string() : "";
  if (folder && !fs::exists(file)) {
    if (!fs::exists(path / "attention_pooled.npy"))
      throw InputError(in.path + ": --attention: the folder holds no attention.npy, cross_attention.npy or attention_pooled.npy");
    readPooledFolder(path, meta, in, run, a->summaries);
    run.kv_heads = run.heads;
    run.causal = meta.causal.value_or(true);
    src->described = "attention_pooled.npy " + shapeText({run.layers, run.heads, run.pooled.n, run.pooled.n}) +
                     " (blocks of " + std::to_string(run.pooled.block) + " tokens)";
  } else {
    src->maps = attentionMaps(FloatTensor::open(file, "--attention"), "--attention");
    const AttentionMaps& maps = *src->maps;
    src->described = file.filename().string() + ", " + dtypeWord(maps.tensor.dtype()) + " " + shapeText(maps.tensor.shape());
    run.layers = maps.layers;
    run.heads = run.kv_heads = maps.heads;
    const int64_t n = run.layers * run.heads, L = maps.cols;
    const double bytes = static_cast<double>(n) * static_cast<double>(maps.rows * maps.cols) * 4;
    const bool keep = bytes <= memoryForARun();
    run.maps = keep ? MapsChoice::Mode::All : MapsChoice::Mode::Pooled;
    if (keep) run.attention.assign(static_cast<size_t>(run.layers), std::vector<Mat>(static_cast<size_t>(run.heads)));
    const auto kept = [&](int64_t l, int64_t h, Mat& m) {
      if (keep) run.attention[static_cast<size_t>(l)][static_cast<size_t>(h)] = std::move(m);
    };
    const std::string tokens_file = in.tokens.empty() ? folder_tokens : in.tokens;
    const nlohmann::json tokens = tokensJson(tokens_file);
    if (maps.rows != maps.cols || namesCrossTokens(tokens)) {
      // Cross-attention: target rows over source columns, every map kept (no
      // pooled maps of a rectangle), summarised from the maps; no causality.
      if (!keep) checkMemoryBudget(bytes, maps.tensor.what() + ": cross-attention's maps (every one is kept)");
      readCrossTokens(tokens_file, tokens, maps.tensor.what(), maps.rows, maps.cols, run);
      forEachHead(maps, meta.scores, ctx, kept);
      run.causal = false;
      a->summaries = summarizeMaps(run.attention);
      if (!in.q.empty() || !in.k.empty())
        throw InputError(std::string(in.q.empty() ? "--k" : "--q") + ": the Q/K view reads self-attention; these maps are cross-attention");
    } else {
      run.tokens = readTokens(in, folder_tokens, maps.tensor.what(), L);
      if (meta.repeat > 0 && 2 * meta.repeat > L)
        throw InputError((path / "meta.json").string() + ": field 'repeat' is " + std::to_string(meta.repeat) + ", but " +
                         std::to_string(L) + " tokens cannot hold the sequence twice");
      // Summarised and pooled as a pass streams its maps; causal where every
      // map is zero above its diagonal (unless meta.json says).
      MapStream stream(run, L, run.maps, {}, nullptr);
      std::vector<double> induction(static_cast<size_t>(n), 0.0);
      std::vector<char> upper_zero(static_cast<size_t>(n), 1);
      forEachHead(maps, meta.scores, ctx, [&](int64_t l, int64_t h, Mat& m) {
        const size_t t = static_cast<size_t>(l * run.heads + h);
        for (int64_t i = 0; i < L; ++i) {
          const float* w = m.row(i).data();
          double entropy = 0;
          for (int64_t j = 0; j < L; ++j)
            if (w[j] > 0) entropy -= static_cast<double>(w[j]) * std::log(static_cast<double>(w[j]));
          if (upper_zero[t] && i + 1 < L && (m.row(i).tail(L - i - 1).array() != 0).any()) upper_zero[t] = 0;
          stream.addRow(l, h, i, 0, w, L, 1.0f, static_cast<float>(entropy));
        }
        // Induction (the file says the text repeats): mean over the second copy i of A[i, i − T + 1].
        if (const int64_t T = meta.repeat; T > 0) {
          double sum = 0;
          for (int64_t i = L - T; i < L; ++i) sum += m(i, i - T + 1);
          induction[t] = sum / static_cast<double>(T);
        }
        kept(l, h, m);
      });
      stream.finish(run);
      run.causal = meta.causal.value_or(std::all_of(upper_zero.begin(), upper_zero.end(), [](char c) { return c != 0; }));
      if (folder && fs::exists(path / "heads.json")) {
        a->summaries = readHeads(path / "heads.json", run.layers, run.heads);
      } else {
        a->summaries = run.summaries;
        for (HeadSummary& s : a->summaries) s.induction = induction[static_cast<size_t>(s.layer * run.heads + s.head)];
      }
      const std::string q = !in.q.empty() ? in.q : folder && fs::exists(path / "q.npy") ? (path / "q.npy").string() : "";
      const std::string k = !in.k.empty() ? in.k : folder && fs::exists(path / "k.npy") ? (path / "k.npy").string() : "";
      if (q.empty() != k.empty())
        throw InputError(q.empty() ? "--k: needs --q too (the scores are q\xC2\xB7k)" : "--q: needs --k too (the scores are q\xC2\xB7k)");
      if (!q.empty()) {
        if (!keep) throw InputError("--q: the Q/K view reads every map, and this file's maps do not all fit in memory");
        run.q = readProjections(q, "--q", run.layers, run.heads, L, run.d_head);
        run.k = readProjections(k, "--k", run.layers, run.heads, L, run.d_head);
      }
    }
    // The longest text whose every map would fit, for the views that read them all.
    a->every_map_limit = static_cast<int64_t>(std::sqrt(memoryForARun() / (4.0 * static_cast<double>(n))));
  }
  run.ids.resize(run.tokens.size());  // no vocabulary: the positions (the views count tokens by ids)
  std::iota(run.ids.begin(), run.ids.end(), 0);
  finishAnalysis(*a);
  src->analysis = std::move(a);
  return src;
}

bool isAttentionPath(const std::string& path) {
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec))
    return !fs::exists(p / "config.json", ec) && (fs::exists(p / "attention.npy", ec) || fs::exists(p / "attention_pooled.npy", ec));
  const std::string ext = p.extension().string();
  return ext == ".npy" || ext == ".npz" || (ext == ".safetensors" && !fs::exists(p.parent_path() / "config.json", ec));
}

Mat attentionHeadMap(const AttentionSource& a, int64_t layer, int64_t head) {
  if (!a.maps)
    throw InputError(a.inputs.path + ": the folder holds the pooled maps only (model run --maps pooled): no head is in it whole");
  const AttentionMaps& maps = *a.maps;
  checkMemoryBudget(static_cast<double>(maps.rows) * static_cast<double>(maps.cols) * 4, "one head's map");
  Mat m = maps.map(layer, head);
  checkAttentionMap(m, a.scores, maps.tensor.what(), layer, head);
  return m;
}

}  // namespace attn
