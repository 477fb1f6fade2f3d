// `attnlab render --attention PATH`: attention from the user's own files.
// A `model run` folder round-trips to the figures `render --model` draws on
// the same text, byte for byte; bare arrays of every rank open, with tokens
// from a file or numbered; what the views show (entropy, induction, the
// strongest keys) is checked against plain loops in double over the maps
// the test wrote; a long file is pooled and its focused head read whole; and
// every bad input is one line naming the file and the field, with nothing written.
#include "engine/model/checkpoint/safetensors.h"
#include "engine/npy.h"
#include "tests/test_support.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace attn::test {
namespace {

namespace fs = std::filesystem;

// Maps [layers, heads, L, L] of softmax rows over seeded scores, causal or
// not: row i of a causal map spreads over keys 0 … i only.
std::vector<float> softmaxMaps(int64_t layers, int64_t heads, int64_t L, bool causal, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> score(0.0, 2.0);
  std::vector<float> out;
  for (int64_t m = 0; m < layers * heads; ++m)
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> e(static_cast<size_t>(L), 0.0);
      double z = 0;
      for (int64_t j = 0; j < L; ++j) {
        if (causal && j > i) continue;
        e[static_cast<size_t>(j)] = std::exp(score(rng));
        z += e[static_cast<size_t>(j)];
      }
      for (double v : e) out.push_back(static_cast<float>(v / z));
    }
  return out;
}

void writeText(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// Entropy −Σ w ln w of each head, mean over rows, in double: [layer·heads + head].
std::vector<double> entropies(const std::vector<float>& maps, int64_t n, int64_t L) {
  std::vector<double> out;
  for (int64_t m = 0; m < n; ++m) {
    double sum = 0;
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < L; ++j) {
        const double w = maps[static_cast<size_t>((m * L + i) * L + j)];
        if (w > 0) sum -= w * std::log(w);
      }
    out.push_back(sum / static_cast<double>(L));
  }
  return out;
}

nlohmann::json describe(const std::vector<std::string>& args, const TempDir& dir, RunResult* result = nullptr) {
  std::vector<std::string> all = {"render"};
  all.insert(all.end(), args.begin(), args.end());
  all.insert(all.end(), {"--out", (dir / "f.svg").string(), "--describe", (dir / "f.json").string()});
  const RunResult r = runAttnlab(all);
  if (result) *result = r;  // the caller checks the status
  else EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0 ? nlohmann::json::parse(slurp(dir / "f.json")) : nlohmann::json();
}

// Every view but the Q/K one (it needs q and k) from `model run`'s folder is
// the figure `render --model` draws on the same text: the same bytes.
TEST(AttentionFileCli, ModelRunFolderGivesTheModelsOwnFigures) {
  TempDir dir;
  const std::string text = "The cat sat on the mat because it was tired, and the cat slept.";
  const RunResult run = runAttnlab({"model", "run", "shipped:default", "--text", text, "--out", (dir / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  for (const std::string view : {"model", "heads", "rollout", "table", "entropy"}) {
    for (const std::string ext : {".svg", ".png"}) {
      const fs::path a = dir / ("model-" + view + ext), b = dir / ("file-" + view + ext);
      const RunResult ra = runAttnlab({"render", "--model", "shipped:default", "--text", text, "--view", view, "--layer", "1",
                                       "--head", "2", "--out", a.string()});
      const RunResult rb = runAttnlab({"render", "--attention", (dir / "run").string(), "--view", view, "--layer", "1",
                                       "--head", "2", "--out", b.string()});
      ASSERT_EQ(ra.status, 0) << ra.err;
      ASSERT_EQ(rb.status, 0) << rb.err;
      EXPECT_EQ(slurp(a), slurp(b)) << view << ext << ": the file's figure differs from the model's";
      EXPECT_EQ(rb.out.substr(rb.out.find(" (")), ra.out.substr(ra.out.find(" ("))) << "the same name: meta.json's model";
    }
  }
  // Q/K needs the queries and keys, which `model run` does not write: said, nothing written.
  const RunResult qk = runAttnlab({"render", "--attention", (dir / "run").string(), "--view", "qk", "--out", (dir / "qk.svg").string()});
  EXPECT_EQ(qk.status, 2);
  EXPECT_EQ(countLines(qk.err), 1) << qk.err;
  EXPECT_NE(qk.err.find("--view qk: needs each layer's queries and keys"), std::string::npos) << qk.err;
  EXPECT_NE(qk.err.find("--q Q.npy and --k K.npy"), std::string::npos) << qk.err;
  EXPECT_FALSE(fs::exists(dir / "qk.svg"));
}

// [L, L], [heads, L, L] and [layers, heads, L, L] open as 1 × 1, 1 × heads
// and layers × heads panels; tokens numbered, from a text file or a JSON list.
TEST(AttentionFileCli, BareArraysOfEveryRankOpenWithTheirTokens) {
  TempDir dir;
  const int64_t L = 6;
  const std::vector<float> maps = softmaxMaps(2, 3, L, true, 7);
  const auto prefix = [&](int64_t n) { return std::vector<float>(maps.begin(), maps.begin() + n * L * L); };
  writeNpy(dir / "one.npy", Array{{L, L}, prefix(1)});
  writeNpy(dir / "layer.npy", Array{{3, L, L}, prefix(3)});
  writeNpy(dir / "all.npy", Array{{2, 3, L, L}, maps});
  const std::vector<std::pair<std::string, size_t>> files = {{"one.npy", 1}, {"layer.npy", 3}, {"all.npy", 6}};
  for (const auto& [file, panels] : files) {
    const nlohmann::json d = describe({"--attention", (dir / file).string(), "--view", "model"}, dir);
    ASSERT_EQ(d.at("panels").size(), panels) << file;
    EXPECT_EQ(d.at("panels")[0].at("rows"), L) << file;
  }
  // Numbered tokens when none are given; a text file of one per line, and a JSON list, name them.
  const auto texts = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--attention", (dir / "one.npy").string(), "--view", "heads"};
    args.insert(args.end(), extra.begin(), extra.end());
    describe(args, dir);
    std::string all;
    for (const std::string& t : svgTexts(slurp(dir / "f.svg"))) all += t + "|";
    return all;
  };
  EXPECT_NE(texts({}).find("|5|"), std::string::npos);
  writeText(dir / "tokens.txt", "alpha\r\nbeta\ngamma\ndelta\nepsilon\nzeta\n");
  EXPECT_NE(texts({"--tokens", (dir / "tokens.txt").string()}).find("zeta"), std::string::npos);
  writeText(dir / "tokens.json", R"(["un", "deux", "trois", "quatre", "cinq", "six"])");
  EXPECT_NE(texts({"--tokens", (dir / "tokens.json").string()}).find("quatre"), std::string::npos);
}

// The entropy view's dots are the heads' entropies computed in double from
// the file's maps; a float16 copy of the same maps (.safetensors) draws the
// same strongest keys.
TEST(AttentionFileCli, EntropyAndStrongestKeysFollowTheMaps) {
  TempDir dir;
  const int64_t layers = 2, heads = 3, L = 9;
  const std::vector<float> maps = softmaxMaps(layers, heads, L, false, 11);
  writeNpy(dir / "a.npy", Array{{layers, heads, L, L}, maps});
  const nlohmann::json e = describe({"--attention", (dir / "a.npy").string(), "--view", "entropy"}, dir);
  const std::vector<double> expected = entropies(maps, layers * heads, L);
  ASSERT_EQ(e.at("marks").size(), expected.size());
  std::vector<double> drawn;
  for (const nlohmann::json& m : e.at("marks")) drawn.push_back(m.at("value").get<double>());
  std::sort(drawn.begin(), drawn.end());
  std::vector<double> sorted = expected;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) EXPECT_NEAR(drawn[i], sorted[i], 1e-5) << i;

  writeSafetensors(dir / "a16.safetensors", {tensorFromValues("attention", DType::F16, {layers, heads, L, L}, maps)});
  const nlohmann::json f32 = describe({"--attention", (dir / "a.npy").string(), "--view", "model"}, dir);
  const nlohmann::json f16 = describe({"--attention", (dir / "a16.safetensors").string(), "--view", "model"}, dir);
  ASSERT_EQ(f32.at("panels").size(), static_cast<size_t>(layers * heads));
  ASSERT_EQ(f16.at("panels").size(), f32.at("panels").size());
  for (size_t p = 0; p < f32.at("panels").size(); ++p) {
    const nlohmann::json &a = f32.at("panels")[p].at("strongest"), &b = f16.at("panels")[p].at("strongest");
    EXPECT_EQ(a.at("row"), b.at("row")) << p;
    EXPECT_EQ(a.at("col"), b.at("col")) << p;
    EXPECT_NEAR(a.at("value").get<double>(), b.at("value").get<double>(), 1e-3) << p;
  }
}

// Induction only where the file says the text repeats (meta.json "repeat":
// T): the mean over the second copy of A[i, i − T + 1], as plain loops give it.
TEST(AttentionFileCli, InductionWhereTheFileSaysTheTextRepeats) {
  TempDir dir;
  const int64_t heads = 2, T = 5, L = 1 + 2 * T;  // a first token, then the sequence twice
  std::vector<float> maps = softmaxMaps(1, heads, L, true, 3);
  // Head 1 an induction head: the second copy's rows put 0.8 on the token after the earlier occurrence.
  for (int64_t i = L - T; i < L; ++i) {
    float* row = &maps[static_cast<size_t>(((1 * L) + i) * L)];
    for (int64_t j = 0; j <= i; ++j) row[j] *= 0.2f;
    row[i - T + 1] += 0.8f;
  }
  std::vector<double> expected(heads, 0.0);
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = L - T; i < L; ++i) expected[static_cast<size_t>(h)] += maps[static_cast<size_t>((h * L + i) * L + i - T + 1)];
    expected[static_cast<size_t>(h)] /= static_cast<double>(T);
  }
  fs::create_directory(dir / "rep");
  writeNpy(dir / "rep/attention.npy", Array{{1, heads, L, L}, maps});
  const auto induction = [&] {
    const nlohmann::json t = describe({"--attention", (dir / "rep").string(), "--view", "table"}, dir);
    std::vector<double> v;
    for (const nlohmann::json& m : t.at("marks")) v.push_back(m.at("value").get<double>());
    return v;
  };
  EXPECT_EQ(induction(), std::vector<double>(heads, 0.0)) << "no \"repeat\": no induction";
  writeText(dir / "rep/meta.json", R"({"repeat": 5, "model": "my-model"})");
  const std::vector<double> drawn = induction();
  ASSERT_EQ(drawn.size(), expected.size());
  for (size_t h = 0; h < drawn.size(); ++h) EXPECT_NEAR(drawn[h], expected[h], 1e-6) << h;
  EXPECT_GT(drawn[1], 0.8);
  EXPECT_NE(slurp(dir / "f.svg").find("my-model"), std::string::npos) << "meta.json's model names the figure";
}

// Scores (meta.json "scores": true, −inf for masked keys) are drawn as their softmax.
TEST(AttentionFileCli, ScoresAreDrawnAsTheirSoftmax) {
  TempDir dir;
  const int64_t L = 4;
  std::vector<float> scores;
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < L; ++j) scores.push_back(j > i ? -INFINITY : static_cast<float>(j == 0 ? 3.0 : 0.5 * static_cast<double>(j)));
  fs::create_directory(dir / "s");
  writeNpy(dir / "s/attention.npy", Array{{L, L}, scores});
  RunResult r;
  describe({"--attention", (dir / "s").string(), "--view", "model"}, dir, &r);
  EXPECT_EQ(r.status, 2) << "scores without \"scores\": true are refused";
  EXPECT_NE(r.err.find("\"scores\": true"), std::string::npos) << r.err;
  writeText(dir / "s/meta.json", R"({"scores": true})");
  const nlohmann::json d = describe({"--attention", (dir / "s").string(), "--view", "model"}, dir);
  ASSERT_FALSE(d.is_null());
  const nlohmann::json& s = d.at("panels")[0].at("strongest");
  EXPECT_EQ(s.at("col"), 0);
  EXPECT_NEAR(s.at("value").get<double>(), 1.0, 1e-6) << "row 0 reads key 0 alone";
  const nlohmann::json t = describe({"--attention", (dir / "s").string(), "--view", "entropy"}, dir);
  double mean = 0;  // each row's entropy of its softmax, in plain loops
  for (int64_t i = 0; i < L; ++i) {
    double zi = 0;
    for (int64_t j = 0; j <= i; ++j) zi += std::exp(static_cast<double>(scores[static_cast<size_t>(i * L + j)]));
    double h = 0;
    for (int64_t j = 0; j <= i; ++j) {
      const double w = std::exp(static_cast<double>(scores[static_cast<size_t>(i * L + j)])) / zi;
      h -= w * std::log(w);
    }
    mean += h / static_cast<double>(L);
  }
  ASSERT_EQ(t.at("marks").size(), 1u);
  EXPECT_NEAR(t.at("marks")[0].at("value").get<double>(), mean, 1e-5);
}

// The Q/K view from the file's own q and k: the dot product and score are
// q·k and q·k/√d of the arrays given, computed here in double.
TEST(AttentionFileCli, QkViewReadsTheGivenQueriesAndKeys) {
  TempDir dir;
  const int64_t layers = 1, heads = 2, L = 5, d = 4;
  std::mt19937 rng(5);
  std::normal_distribution<float> g;
  std::vector<float> q(static_cast<size_t>(layers * L * heads * d)), k(q.size());
  for (float& v : q) v = g(rng);
  for (float& v : k) v = g(rng);
  writeNpy(dir / "q.npy", Array{{layers, L, heads * d}, q});
  writeNpy(dir / "k.npy", Array{{layers, L, heads * d}, k});
  writeNpy(dir / "a.npy", Array{{layers, heads, L, L}, softmaxMaps(layers, heads, L, true, 1)});
  const nlohmann::json j = describe({"--attention", (dir / "a.npy").string(), "--q", (dir / "q.npy").string(), "--k",
                                     (dir / "k.npy").string(), "--view", "qk", "--head", "1", "--query", "3", "--key", "2"},
                                    dir);
  ASSERT_FALSE(j.is_null());
  double dot = 0;
  for (int64_t c = 0; c < d; ++c)
    dot += static_cast<double>(q[static_cast<size_t>(3 * heads * d + d + c)]) * static_cast<double>(k[static_cast<size_t>(2 * heads * d + d + c)]);
  std::string all = slurp(dir / "f.svg");
  char want[32];
  std::snprintf(want, sizeof want, "%.4g", dot / 2.0);  // score q·k/√4, as the figure writes it
  bool found = false;
  for (const std::string& t : svgTexts(all)) found = found || t.find(want) != std::string::npos;
  EXPECT_TRUE(found) << "score " << want << " not drawn";
  // q of another shape: named with the shapes accepted.
  writeNpy(dir / "q3.npy", Array{{layers, L + 1, heads * d}, std::vector<float>(static_cast<size_t>(layers * (L + 1) * heads * d), 0.0f)});
  const RunResult bad = runAttnlab({"render", "--attention", (dir / "a.npy").string(), "--q", (dir / "q3.npy").string(), "--k",
                                    (dir / "k.npy").string(), "--view", "qk", "--out", (dir / "x.svg").string()});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("q3.npy"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("--q: shape [1, 6, 8] fits no layout; expected [1, 5, heads·d_head] or [1, 2, 5, d_head]"),
            std::string::npos)
      << bad.err;
  EXPECT_FALSE(fs::exists(dir / "x.svg"));
}

// A file whose every map would not fit is pooled: the grid shows the pooled
// maps, the table the summaries, and the views that read every map say so.
// A `model run --maps pooled` folder opens the same way.
TEST(AttentionFileCli, LongFilesArePooledAndSaySo) {
  TempDir dir;
  const int64_t L = 300;
  writeNpy(dir / "long.npy", Array{{2, 2, L, L}, softmaxMaps(2, 2, L, true, 9)});
  // 1 MiB of memory "available": the maps' 1.4 MiB do not fit, one head (0.34 MiB) does.
  const std::vector<std::string> small = {"ATTNLAB_MEMORY_LIMIT_MB=1"};
  const RunResult grid = runAttnlab({"render", "--attention", (dir / "long.npy").string(), "--view", "model", "--out",
                                     (dir / "g.svg").string(), "--describe", (dir / "g.json").string()},
                                    small);
  ASSERT_EQ(grid.status, 0) << grid.err;
  const nlohmann::json g = nlohmann::json::parse(slurp(dir / "g.json"));
  EXPECT_LT(g.at("panels")[0].at("rows").get<int>(), L) << "pooled blocks, not tokens";
  const RunResult rollout = runAttnlab({"render", "--attention", (dir / "long.npy").string(), "--view", "rollout", "--out",
                                        (dir / "r.svg").string()},
                                       small);
  EXPECT_EQ(rollout.status, 2);
  EXPECT_NE(rollout.err.find("reads every map"), std::string::npos) << rollout.err;
  EXPECT_FALSE(fs::exists(dir / "r.svg"));
  const RunResult table = runAttnlab({"render", "--attention", (dir / "long.npy").string(), "--view", "table", "--out",
                                      (dir / "t.svg").string()},
                                     small);
  EXPECT_EQ(table.status, 0) << table.err;

  const RunResult run = runAttnlab({"model", "run", "shipped:default", "--maps", "pooled", "--out", (dir / "run").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json p = describe({"--attention", (dir / "run").string(), "--view", "model"}, dir);
  EXPECT_FALSE(p.at("panels").empty());
  const nlohmann::json e = describe({"--attention", (dir / "run").string(), "--view", "entropy"}, dir);
  std::vector<double> drawn, summaries;
  for (const nlohmann::json& m : e.at("marks")) drawn.push_back(m.at("value").get<double>());
  for (const nlohmann::json& h : nlohmann::json::parse(slurp(dir / "run/heads.json"))) summaries.push_back(h.at("entropy").get<double>());
  std::sort(drawn.begin(), drawn.end());
  std::sort(summaries.begin(), summaries.end());
  ASSERT_EQ(drawn.size(), summaries.size());
  for (size_t i = 0; i < drawn.size(); ++i) EXPECT_NEAR(drawn[i], summaries[i], 1e-6) << i;
}

// Cross-attention: an encoder–decoder's cross_attention.npy [layers, heads,
// T, S] with its tokens.json (target rows, source columns) draws each head's
// map with its strongest cell where the run's map has it; a rectangle
// without tokens is numbered; rollout (self-attention's) is refused.
TEST(AttentionFileCli, CrossAttentionHasTargetRowsAndSourceColumns) {
  TempDir dir;
  const RunResult run = runAttnlab({"model", "run", "shipped:t5-toy", "--text", "the big red cat sleeps", "--out", (dir / "t5").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const Array cross = readNpy(dir / "t5/cross_attention.npy", "cross");  // [layers, heads, T, S]
  const int64_t T = cross.shape[2], S = cross.shape[3];
  const std::vector<std::string> args = {"--attention", (dir / "t5/cross_attention.npy").string(), "--tokens",
                                         (dir / "t5/tokens.json").string(), "--view", "model"};
  const nlohmann::json d = describe(args, dir);
  ASSERT_EQ(d.at("panels").size(), static_cast<size_t>(cross.shape[0] * cross.shape[1]));
  for (size_t p = 0; p < d.at("panels").size(); ++p) {
    const float* map = cross.data.data() + static_cast<int64_t>(p) * T * S;
    const int64_t best = std::max_element(map, map + T * S) - map;
    const nlohmann::json& s = d.at("panels")[p].at("strongest");
    EXPECT_EQ(s.at("row").get<int64_t>() * S + s.at("col").get<int64_t>(), best) << "panel " << p;
    EXPECT_EQ(d.at("panels")[p].at("rows"), T);
    EXPECT_EQ(d.at("panels")[p].at("cols"), S);
  }
  const nlohmann::json tokens = nlohmann::json::parse(slurp(dir / "t5/tokens.json"));
  std::string texts;
  for (const std::string& t : svgTexts(slurp(dir / "f.svg"))) texts += t + "|";
  EXPECT_NE(texts.find(tokens.at("target_tokens")[1].get<std::string>() + "|"), std::string::npos) << texts;
  EXPECT_NE(texts.find("cross-attention, " + std::to_string(T) + " target over " + std::to_string(S) + " source tokens"),
            std::string::npos)
      << texts;
  // The folder itself opens on its cross-attention: the same panels, titled by the model meta.json names.
  const nlohmann::json whole = describe({"--attention", (dir / "t5").string(), "--view", "model"}, dir);
  EXPECT_EQ(whole.at("panels"), d.at("panels"));
  EXPECT_NE(slurp(dir / "f.svg").find("t5-toy"), std::string::npos);
  RunResult r;
  describe({"--attention", (dir / "t5/cross_attention.npy").string(), "--tokens", (dir / "t5/tokens.json").string(), "--view",
            "rollout"},
           dir, &r);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("these maps are cross-attention"), std::string::npos) << r.err;
  // A rectangle [1, heads, 3, 5] without tokens: numbered rows and columns.
  std::vector<float> rect;
  for (int i = 0; i < 2 * 3; ++i)
    for (int j = 0; j < 5; ++j) rect.push_back(j == i % 5 ? 0.6f : 0.1f);
  writeNpy(dir / "rect.npy", Array{{1, 2, 3, 5}, rect});
  const nlohmann::json q = describe({"--attention", (dir / "rect.npy").string(), "--view", "model"}, dir);
  ASSERT_EQ(q.at("panels").size(), 2u);
  EXPECT_EQ(q.at("panels")[0].at("rows"), 3);
  EXPECT_EQ(q.at("panels")[0].at("cols"), 5);
}

// Bad input: exit 2, one line naming the file and the field and what was expected, no figure.
TEST(AttentionFileCli, BadInputIsOneLineAndWritesNothing) {
  TempDir dir;
  const int64_t L = 4;
  std::vector<float> good = softmaxMaps(1, 2, L, true, 2);
  writeNpy(dir / "good.npy", Array{{2, L, L}, good});
  std::vector<float> unnormal = good;
  unnormal[static_cast<size_t>(L * L + 2 * L)] += 0.5f;  // head 1, row 2
  writeNpy(dir / "sum.npy", Array{{2, L, L}, unnormal});
  std::vector<float> nan = good;
  nan[5] = NAN;
  writeNpy(dir / "nan.npy", Array{{2, L, L}, nan});
  writeNpy(dir / "rank5.npy", Array{{1, 1, 2, L, L}, std::vector<float>(static_cast<size_t>(2 * L * L), 0.25f)});
  writeText(dir / "short.txt", "a\nb\nc\n");
  fs::create_directory(dir / "heads");
  writeNpy(dir / "heads/attention.npy", Array{{2, L, L}, good});
  writeText(dir / "heads/meta.json", R"({"maps": "heads"})");
  const std::string good_npy = (dir / "good.npy").string();
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> said;
  };
  const std::vector<Case> cases = {
      {{"--attention", (dir / "sum.npy").string()}, {"sum.npy", "head 1, row 2 sums to", "not 1"}},
      {{"--attention", (dir / "nan.npy").string()}, {"nan.npy", "row 1, column 1 is nan"}},
      {{"--attention", (dir / "rank5.npy").string()}, {"rank5.npy", "--attention", "[1, 1, 2, 4, 4]", "[layers, heads, L, L]"}},
      {{"--attention", good_npy, "--tokens", (dir / "short.txt").string()}, {"short.txt", "3 tokens", "has 4"}},
      {{"--attention", (dir / "missing").string()}, {"missing", "--attention", "no such file"}},
      {{"--attention", (dir / "heads").string()}, {"meta.json", "'maps'", "--maps all or pooled"}},
      {{"--attention", good_npy, "--text", "hello"}, {"--text", "--tokens"}},
      {{"--attention", good_npy, "--target", "hello"}, {"--target"}},
      {{"--attention", good_npy, "--model", "shipped:default"}, {"--attention PATH"}},
      {{"--default-model", "--tokens", (dir / "short.txt").string()}, {"--tokens", "--attention PATH"}},
      {{"--default-model", "--q", good_npy}, {"--q", "--attention PATH"}},
      {{"--attention", good_npy, "--q", good_npy}, {"--q: needs --k"}},
      {{"--attention", good_npy, "--view", "pattern"}, {"--view", "'pattern' is not a view of attention from a file"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"render"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    args.insert(args.end(), {"--out", (dir / "out.svg").string()});
    const RunResult r = runAttnlab(args);
    std::string line;
    for (const std::string& a : c.args) line += a + " ";
    EXPECT_EQ(r.status, 2) << line << r.err;
    EXPECT_EQ(countLines(r.err), 1) << line << r.err;
    for (const std::string& s : c.said) EXPECT_NE(r.err.find(s), std::string::npos) << line << "\n" << r.err << "lacks: " << s;
    EXPECT_FALSE(fs::exists(dir / "out.svg")) << line;
  }
}

}  // namespace
}  // namespace attn::test
