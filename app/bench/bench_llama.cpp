// attnlab bench section "llama": a checkpoint of TinyLlama-1.1B's shape
// (22 layers, d = 2048, 32 query heads sharing 4 key/value heads, SwiGLU
// 5632, vocabulary 32,000, untied LM head) with random BF16 weights, 2.2 GB,
// written here as a Hugging Face folder and run over 128 token ids with
// every attention map captured:
//   load (mmap, checks) in a fresh process, from disk and from the page cache,
//   and again in this one;
//   peak RSS of a fresh process over load and forward, against the file;
//   the forward, cold (a fresh process's first call) and warm (median).
// The fresh processes are this binary, `attnlab bench --llama-fresh DIR`.
// scripts/peer_bench.py writes the folder through --write-llama-checkpoint
// and runs torch on the same files.
// Section "llama_threads": the same checkpoint over 1,024 tokens beside a
// process that keeps a core busy for 2 s, from the start and from 1 s in:
// the threads each layer ran on (the pass looks at the free cores again
// between layers), and when.
#include "app/bench/bench.h"

#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/model/kinds/generate.h"
#include "engine/model/blocks/maps.h"
#include "engine/model/checkpoint/gguf.h"
#include "engine/model/checkpoint/gguf_model.h"
#include "engine/model/families/family.h"
#include "engine/model/model.h"
#include "engine/npy.h"
#include "engine/parallel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <omp.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace attn {

namespace {

// TinyLlama-1.1B's config.json (TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T).
constexpr int64_t kLayers = 22, kD = 2048, kHeads = 32, kKvHeads = 4, kFf = 5632, kVocab = 32000;
// TinyLlama has 2048 positions; the bench gives the same weights a long context (as a
// RoPE-scaled fine-tune would) so that 8k- and 32k-token runs are possible.
constexpr int64_t kPositions = 32768;
constexpr int64_t kTokens = 128;
constexpr int64_t kLongTokens = 8192;  // a long text: a chapter, a contract
constexpr int64_t kKvDim = kKvHeads * (kD / kHeads);  // k_proj / v_proj rows: 4 heads × 64

// The tensors of LlamaForCausalLM in Hugging Face's names, nn.Linear's
// [out, in] layout, random N(0, 0.02²) (initializer_range) and RMSNorm gains
// N(1, 0.02²), all BF16.
std::vector<TensorToWrite> llamaTensors() {
  const float s = 0.02f;
  auto bf16 = [s](const std::string& name, std::vector<int64_t> shape, float offset = 0.0f) {
    return randomTensor(name, std::move(shape), s, offset, DType::BF16);
  };
  std::vector<TensorToWrite> t;
  t.push_back(bf16("model.embed_tokens.weight", {kVocab, kD}));
  for (int64_t l = 0; l < kLayers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.push_back(bf16(p + "input_layernorm.weight", {kD}, 1.0f));
    t.push_back(bf16(p + "self_attn.q_proj.weight", {kD, kD}));
    t.push_back(bf16(p + "self_attn.k_proj.weight", {kKvDim, kD}));
    t.push_back(bf16(p + "self_attn.v_proj.weight", {kKvDim, kD}));
    t.push_back(bf16(p + "self_attn.o_proj.weight", {kD, kD}));
    t.push_back(bf16(p + "post_attention_layernorm.weight", {kD}, 1.0f));
    t.push_back(bf16(p + "mlp.gate_proj.weight", {kFf, kD}));
    t.push_back(bf16(p + "mlp.up_proj.weight", {kFf, kD}));
    t.push_back(bf16(p + "mlp.down_proj.weight", {kD, kFf}));
  }
  t.push_back(bf16("model.norm.weight", {kD}, 1.0f));
  t.push_back(bf16("lm_head.weight", {kVocab, kD}));
  return t;
}

uint64_t dataBytes(const std::vector<TensorToWrite>& tensors) {
  uint64_t n = 0;
  for (const TensorToWrite& t : tensors) {
    uint64_t e = 1;
    for (const int64_t s : t.shape) e *= static_cast<uint64_t>(s);
    n += storedBytes(t.dtype, e);
  }
  return n;
}

// A byte-level BPE tokenizer.json (the Llama 3 / Qwen2 family's kind) with
// the three specials and the 256 byte symbols, no merges. TinyLlama's own is
// SentencePiece-style; the bench runs on ids, so the tokenizer is only
// loaded, and this is the smallest one every tokenizer.json reader takes.
std::string llamaTokenizerJson() {
  const std::array<std::string, 3> specials = {"<unk>", "<s>", "</s>"};
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object(), added = nlohmann::ordered_json::array();
  for (size_t i = 0; i < specials.size(); ++i) {
    vocab[specials[i]] = i;
    added.push_back({{"id", i}, {"content", specials[i]}, {"single_word", false}, {"lstrip", false}, {"rstrip", false},
                     {"normalized", false}, {"special", true}});
  }
  const std::array<std::string, 256> bytes = gpt2ByteSymbols();
  for (size_t b = 0; b < bytes.size(); ++b) vocab[bytes[b]] = specials.size() + b;
  const nlohmann::ordered_json bos = {{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}};
  const nlohmann::ordered_json byte_level = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  const nlohmann::ordered_json tokenizer = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer", byte_level},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", {bos, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"pair",
         {bos, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, bos, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
      {"decoder", byte_level},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", nlohmann::ordered_json::array()}}}};
  return tokenizer.dump(1);
}

// The ids both sides run on (128 of them, or a long text's), spread over
// the vocabulary; the first is <s>.
std::vector<int32_t> llamaIds(int64_t n = kTokens) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    ids[static_cast<size_t>(i)] = i == 0 ? 1 : static_cast<int32_t>((i * 7919 + 13) % kVocab);
  return ids;
}

// 128 tokens: every map of every layer and query head, and the untied LM
// head's top-5 after the last token, what a user asking for the next token
// gets. A long text: the pooled maps and head summaries, as `model run`
// writes them by default when every map will not fit.
ModelRunOptions llamaRunOptions(int64_t tokens = kTokens) {
  ModelRunOptions o;
  o.predict_at = {-1};
  if (tokens > kTokens) {
    o.maps.mode = MapsChoice::Mode::Pooled;
    o.keep_projections = false;
  }
  return o;
}

// Decode: a 27-token prompt (<s> and 26 bytes), then 9 greedy tokens; the
// seconds per new token after the first (each a one-row pass over the KV cache).
constexpr int64_t kDecodeNew = 9;
double decodeSecondsPerToken(const Model& m) {
  std::vector<double> at;  // seconds since the start, after each new token
  generate(m, "The quick brown fox jumps.", {.max_new = kDecodeNew}, {},
           [&](const Generation& g) { at.push_back(g.seconds); });
  if (at.size() < 2) throw InputError("llama: the generation stopped after its first token");
  return (at.back() - at.front()) / static_cast<double>(at.size() - 1);
}

// Seconds to read every byte of the file's mapped pages once (in the page
// cache): what a decode step cannot go below when it reads each weight once.
double readOnceSeconds(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  const size_t size = static_cast<size_t>(fs::file_size(file));
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return -1;
  const uint64_t* words = static_cast<const uint64_t*>(map);
  const int64_t n = static_cast<int64_t>(size / 8);
  volatile uint64_t sink = 0;
  const double s = medianSeconds(3, [&] {
    uint64_t sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (int64_t i = 0; i < n; ++i) sum += words[i];
    sink = sum;
  });
  (void)sink;
  ::munmap(map, size);
  return s;
}

// A warm decode step (the median of 3 generations' seconds per new token)
// against reading the model's file once from the page cache.
struct DecodeAndRead {
  double decode_s, read_s;
};
DecodeAndRead decodeAndRead(const Model& m, const fs::path& file) {
  std::vector<double> decodes;
  for (int i = 0; i < 3; ++i) decodes.push_back(decodeSecondsPerToken(m));
  std::sort(decodes.begin(), decodes.end());
  return {decodes[1], readOnceSeconds(file)};
}

// The share of the file's pages in the page cache (mincore on a fresh map).
double cachedFraction(int fd, uint64_t size) {
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return -1;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)), pages = (size + page - 1) / page;
  std::vector<unsigned char> in(pages);
  uint64_t resident = 0;
  if (::mincore(map, size, in.data()) == 0)
    for (const unsigned char c : in) resident += c & 1u;
  ::munmap(map, size);
  return static_cast<double>(resident) / static_cast<double>(pages);
}

// Writes the file's dirty pages back and drops its pages from the page cache
// (this file's only: other processes keep theirs), so that the next load
// reads it from disk. Returns the share still cached afterwards.
double evictFromPageCache(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  const double left = cachedFraction(fd, fs::file_size(file));
  ::close(fd);
  return left;
}

std::string shellQuoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// `attnlab bench --llama-fresh DIR` in a new process: its JSON, or an
// InputError carrying the child's own one-line message.
nlohmann::json freshProcess(const fs::path& dir, const fs::path& scratch, int64_t tokens = kTokens) {
  const fs::path out = scratch / "fresh.json", err = scratch / "fresh.err";
  const std::string cmd = shellQuoted(fs::read_symlink("/proc/self/exe").string()) + " bench --llama-fresh " +
                          shellQuoted(dir.string()) + " --llama-tokens " + std::to_string(tokens) + " >" +
                          shellQuoted(out.string()) + " 2>" + shellQuoted(err.string());
  const int status = std::system(cmd.c_str());
  std::ifstream in(status == 0 ? out : err);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (status != 0) {
    if (const size_t nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
    throw InputError("llama: the fresh-process run failed: " + (text.empty() ? "no message" : text));
  }
  return nlohmann::json::parse(text);
}

// The checkpoint a section runs on: --llama-checkpoint's folder, or one
// written into `scratch` (setting *write_s).
fs::path llamaFolder(const BenchFolder& scratch, const BenchOptions& options, double* write_s) {
  fs::path dir = options.llama_checkpoint;
  if (dir.empty()) {
    dir = scratch.path / "tinyllama-shape";
    const auto w0 = std::chrono::steady_clock::now();
    writeLlamaCheckpoint(dir.string());
    *write_s = secondsSince(w0);
  } else if (!fs::exists(dir / "config.json") || !fs::exists(dir / "model.safetensors")) {
    throw InputError("--llama-checkpoint: " + dir.string() +
                     " holds no config.json and model.safetensors (write them with --write-llama-checkpoint DIR)");
  }
  return dir;
}

// A child process that waits `after` seconds, then keeps one core busy for
// `seconds` (another user's job, a build step). Only clock_gettime and
// usleep between fork and _exit: the parent has OpenMP threads, and the
// child must not touch what they may have held.
pid_t busyProcess(double after, double seconds) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const auto t0 = std::chrono::steady_clock::now();
  while (secondsSince(t0) < after) ::usleep(10000);
  while (secondsSince(t0) < after + seconds) {
  }
  ::_exit(0);
}

}  // namespace

void writeLlamaCheckpoint(const std::string& dir) {
  const std::vector<TensorToWrite> tensors = llamaTensors();
  fs::create_directories(dir);
  // Room for the file (written beside, then renamed) and 1 GiB to spare.
  const uint64_t need = dataBytes(tensors) + (1ull << 30), have = fs::space(dir).available;
  if (have < need)
    throw InputError(dir + ": needs " + formatBytes(static_cast<double>(need)) + " free for the TinyLlama-shaped checkpoint, has " +
                     formatBytes(static_cast<double>(have)));
  const nlohmann::ordered_json config = {
      {"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"},
      {"hidden_size", kD}, {"intermediate_size", kFf},
      {"num_hidden_layers", kLayers}, {"num_attention_heads", kHeads},
      {"num_key_value_heads", kKvHeads}, {"max_position_embeddings", kPositions},
      {"vocab_size", kVocab}, {"rms_norm_eps", 1e-5},
      {"rope_theta", 10000.0}, {"rope_scaling", nullptr},
      {"hidden_act", "silu"}, {"tie_word_embeddings", false},
      {"attention_bias", false}, {"initializer_range", 0.02},
      {"bos_token_id", 1}, {"eos_token_id", 2},
      {"torch_dtype", "bfloat16"}};
  writeFileAtomic(fs::path(dir) / "config.json", config.dump(1));
  writeFileAtomic(fs::path(dir) / "tokenizer.json", llamaTokenizerJson());
  const nlohmann::ordered_json tokenizer_config = {
      {"add_bos_token", true}, {"add_eos_token", false}, {"bos_token", "<s>"}, {"eos_token", "</s>"},
      {"unk_token", "<unk>"}, {"model_max_length", kPositions}, {"tokenizer_class", "LlamaTokenizer"}, {"legacy", false}};
  writeFileAtomic(fs::path(dir) / "tokenizer_config.json", tokenizer_config.dump(1));
  writeSafetensors(fs::path(dir) / "model.safetensors", tensors, {{"format", "pt"}});
}

int benchLlamaFreshProcess(const std::string& dir, int64_t tokens) {
  resetPeakMemory();
  const int64_t f0 = pageFaults();
  const auto l0 = std::chrono::steady_clock::now();
  const std::shared_ptr<const Model> model = loadModel(filesOnDisk(dir));
  const double load_s = secondsSince(l0);
  const int64_t f1 = pageFaults();
  const double rss_loaded = currentMemoryBytes();
  const std::vector<int32_t> ids = llamaIds(tokens);
  const auto c0 = std::chrono::steady_clock::now();
  const ModelRun run = runModelIds(*model, ids, llamaRunOptions(tokens));
  const double forward_s = secondsSince(c0);
  nlohmann::json out = {{"load_seconds", load_s},
                        {"forward_seconds", forward_s},
                        {"attention_seconds", run.attention_seconds},
                        {"attention_flops", run.attention_flops},
                        {"load_page_faults", f1 - f0},
                        {"forward_page_faults", pageFaults() - f1},
                        {"rss_after_load_bytes", rss_loaded},
                        {"peak_rss_bytes", peakMemoryBytes()},
                        {"threads", run.threads},
                        {"flops", run.flops},
                        {"tokens", tokens}};
  if (tokens == kTokens) {
    out["ids"] = ids;  // scripts/peer_bench.py runs torch on the same ids
    out["decode_seconds_per_token"] = decodeSecondsPerToken(*model);
  }
  std::cout << out.dump() << "\n";
  return 0;
}

void benchLlama(nlohmann::json& out, const BenchOptions& options) {
  BenchFolder scratch("llama");
  double write_s = 0;
  const fs::path dir = llamaFolder(scratch, options, &write_s);
  const fs::path file = dir / "model.safetensors";
  const double file_bytes = static_cast<double>(fs::file_size(file));

  // Cold: fresh processes, the first with the file's pages dropped from the cache.
  const double cached_before = evictFromPageCache(file);
  const nlohmann::json disk = freshProcess(dir, scratch.path);
  const nlohmann::json cached = freshProcess(dir, scratch.path);

  // Warm: this process, three loads (the last kept), then the forwards.
  std::shared_ptr<const Model> model;
  std::vector<double> loads;
  for (int i = 0; i < 3; ++i) {
    model.reset();
    const auto l0 = std::chrono::steady_clock::now();
    model = loadModel(filesOnDisk(dir.string()));
    loads.push_back(secondsSince(l0));
  }
  std::sort(loads.begin(), loads.end());
  const std::vector<int32_t> ids = llamaIds();
  const ModelRunOptions run_options = llamaRunOptions();
  resetPeakMemory();  // VmHWM := the RSS with the model loaded
  const double rss_loaded = currentMemoryBytes();
  const auto f0 = std::chrono::steady_clock::now();
  ModelRun run = runModelIds(*model, ids, run_options);
  const double first_s = secondsSince(f0);
  int all_thread_runs = 0;  // runs that found every core free (threadsAvailable)
  const double forward_s = medianSeconds(5, [&] {
    run = runModelIds(*model, ids, run_options);
    all_thread_runs += run.threads == omp_get_max_threads();
  });
  const double warm_peak = peakMemoryBytes();
  const int64_t maps = static_cast<int64_t>(run.attention.size() * run.attention[0].size());
  const auto [decode_s, read_s] = decodeAndRead(*model, file);
  // A long text: cold in a fresh process (its peak RSS), then warm here.
  const nlohmann::json long_cold = freshProcess(dir, scratch.path, kLongTokens);
  const ModelRun long_run = runModelIds(*model, llamaIds(kLongTokens), llamaRunOptions(kLongTokens));
  model.reset();
  const double gemm_rate = gemmGflops();  // after the model's runs, on the same threads

  const double load_s = cached.at("load_seconds").get<double>();
  const double peak_ratio = cached.at("peak_rss_bytes").get<double>() / file_bytes;
  const bool load_ok = load_s < 2.0, memory_ok = peak_ratio < 1.3;
  out["threads"] = omp_get_max_threads();
  out["forward_runs_on_all_threads"] = all_thread_runs;
  out["file_bytes"] = file_bytes;
  out["write_seconds"] = write_s;
  out["fresh_from_disk"] = disk;
  out["fresh_from_disk"]["file_cached_before"] = cached_before;
  out["fresh"] = cached;
  out["load_seconds"] = load_s;
  out["load_this_process_seconds"] = loads[1];
  out["cold_forward_ms"] = cached.at("forward_seconds").get<double>() * 1e3;
  out["first_forward_this_process_ms"] = first_s * 1e3;
  out["forward_ms"] = forward_s * 1e3;
  out["forward_gflops"] = run.flops / forward_s / 1e9;
  out["flops"] = run.flops;
  out["maps"] = maps;
  out["tokens"] = kTokens;
  out["ids"] = ids;
  out["peak_rss_bytes"] = cached.at("peak_rss_bytes");
  out["peak_over_file"] = peak_ratio;
  out["warm_rss_loaded_bytes"] = rss_loaded;
  out["warm_forward_peak_rss_bytes"] = warm_peak;
  const double long_peak = long_cold.at("peak_rss_bytes").get<double>(), long_budget = 1.5 * file_bytes + 2.0 * (1 << 30);
  const double long_cold_s = long_cold.at("forward_seconds").get<double>(), long_warm_s = long_run.compute_seconds;
  const double prefill_fraction = run.flops / forward_s / 1e9 / gemm_rate;
  const double long_fraction = long_run.flops / long_warm_s / 1e9 / gemm_rate;
  const double attention_fraction = long_run.attention_flops / long_run.attention_seconds / 1e9 / gemm_rate;
  out["gemm_gflops"] = gemm_rate;
  out["prefill_fraction_of_gemm"] = prefill_fraction;
  out["decode_seconds_per_token"] = decode_s;
  out["decode_tokens_per_second"] = 1.0 / decode_s;
  out["cold_decode_seconds_per_token"] = cached.at("decode_seconds_per_token");
  out["read_weights_once_seconds"] = read_s;
  out["long"] = {{"tokens", kLongTokens},
                 {"fresh", long_cold},
                 {"warm_seconds", long_warm_s},
                 {"warm_flops", long_run.flops},
                 {"warm_fraction_of_gemm", long_fraction},
                 {"attention_seconds", long_run.attention_seconds},
                 {"attention_flops", long_run.attention_flops},
                 {"attention_fraction_of_gemm", attention_fraction},
                 {"peak_rss_bytes", long_peak},
                 {"peak_budget_bytes", long_budget}};
  out["targets_met"] = {{"load_under_2s", load_ok},
                        {"peak_under_1_3x_file", memory_ok},
                        {"prefill_128_at_60pct_gemm", prefill_fraction >= 0.6},
                        {"prefill_long_at_60pct_gemm", long_fraction >= 0.6},
                        {"attention_long_at_60pct_gemm", attention_fraction >= 0.6},
                        {"decode_4_tokens_per_second", decode_s <= 0.25},
                        {"long_peak_under_1_5x_file_plus_2GiB", long_peak < long_budget}};
  if (!options.print()) return;
  auto met = [](bool ok) { return ok ? "met" : "MISSED"; };
  auto bytes = [](const nlohmann::json& v) { return formatBytes(v.get<double>()); };
  const std::string origin = options.llama_checkpoint.empty()
                                 ? "written in " + std::to_string(static_cast<int>(write_s + 0.5)) + " s"
                                 : "in " + dir.string();
  std::printf("TinyLlama-1.1B shape (22 layers, d=2048, 32 query / 4 KV heads, SwiGLU 5632, vocab 32000, untied head),\n"
              "random BF16 weights %s, %s\n",
              formatBytes(file_bytes).c_str(), origin.c_str());
  std::printf("threads %d (the warm forward found them all free in %d of 5 runs)\n", omp_get_max_threads(),
              all_thread_runs);
  std::printf("load (mmap, checks), fresh process, file in the page cache %7.2f s   target < 2 s   %s\n", load_s,
              met(load_ok));
  std::printf("  fresh process, file dropped from the page cache (%.0f%% left) %7.2f s   (%lld page faults)\n",
              100.0 * cached_before, disk.at("load_seconds").get<double>(),
              static_cast<long long>(disk.at("load_page_faults").get<int64_t>()));
  std::printf("  this process again, median of 3                          %7.2f s\n", loads[1]);
  std::printf("forward, %lld tokens, %lld maps, top-5 after the last token (%.1f GFLOP):\n",
              static_cast<long long>(kTokens), static_cast<long long>(maps), run.flops / 1e9);
  std::printf("  cold: first call in a fresh process                 %9.1f ms   (%lld page faults, threads %d)\n",
              cached.at("forward_seconds").get<double>() * 1e3,
              static_cast<long long>(cached.at("forward_page_faults").get<int64_t>()), cached.at("threads").get<int>());
  std::printf("  cold, the file read from disk                       %9.1f ms\n",
              disk.at("forward_seconds").get<double>() * 1e3);
  std::printf("  warm: median of 5                                   %9.1f ms   (%.1f GFLOP/s, %.0f%% of GEMM)   "
              "target 60%%   %s\n",
              forward_s * 1e3, run.flops / forward_s / 1e9, 100.0 * prefill_fraction, met(prefill_fraction >= 0.6));
  std::printf("prefill of %lld tokens, pooled maps and head summaries (%.0f GFLOP):\n", static_cast<long long>(kLongTokens),
              long_run.flops / 1e9);
  std::printf("  cold: fresh process                                 %9.1f s    (%.0f tokens/s)\n", long_cold_s,
              kLongTokens / long_cold_s);
  std::printf("  warm: this process                                  %9.1f s    (%.0f tokens/s, %.1f GFLOP/s, %.0f%% of GEMM)   "
              "target 60%%   %s\n",
              long_warm_s, kLongTokens / long_warm_s, long_run.flops / long_warm_s / 1e9, 100.0 * long_fraction,
              met(long_fraction >= 0.6));
  std::printf("  of it the attention (QK\u1d40, softmax, AV, maps pooled) %6.1f s    (%.1f GFLOP/s, %.0f%% of GEMM)   "
              "target 60%%   %s\n",
              long_run.attention_seconds, long_run.attention_flops / long_run.attention_seconds / 1e9,
              100.0 * attention_fraction, met(attention_fraction >= 0.6));
  std::printf("  peak RSS, fresh process %s = %.2fx the file   target < 1.5x file + 2 GiB (%s)   %s\n",
              formatBytes(long_peak).c_str(), long_peak / file_bytes, formatBytes(long_budget).c_str(),
              met(long_peak < long_budget));
  std::printf("decode, 27-token prompt then %lld greedy tokens, per new token:\n", static_cast<long long>(kDecodeNew));
  std::printf("  cold: fresh process                                 %9.1f ms   (%.2f tokens/s)\n",
              cached.at("decode_seconds_per_token").get<double>() * 1e3,
              1.0 / cached.at("decode_seconds_per_token").get<double>());
  std::printf("  warm: median of 3                                   %9.1f ms   (%.2f tokens/s)   target 4 tokens/s   %s\n",
              decode_s * 1e3, 1.0 / decode_s, met(decode_s <= 0.25));
  std::printf("  reading the file's %s once from the page cache takes %.1f ms: a step costs %.1fx that\n",
              formatBytes(file_bytes).c_str(), read_s * 1e3, decode_s / read_s);
  std::printf("GEMM (OpenBLAS sgemm, 2048^3 float, this run, threads %d) %.1f GFLOP/s\n", omp_get_max_threads(), gemm_rate);
  std::printf("peak RSS of a fresh process, load + forward %10s = %.2fx the file   target < 1.3x   %s\n",
              bytes(cached.at("peak_rss_bytes")).c_str(), peak_ratio, met(memory_ok));
  std::printf("  (RSS after its load %s; file-backed pages of the map count in RSS)\n",
              bytes(cached.at("rss_after_load_bytes")).c_str());
  std::printf("  this process: RSS with the model loaded %s, peak during the warm forwards %s\n",
              formatBytes(rss_loaded).c_str(), formatBytes(warm_peak).c_str());
  std::printf("PyTorch on the same folder, cold and warm: scripts/peer_bench.sh --only llama\n");
}

// [SECTION] The same weights as a quantized GGUF file
namespace {

// The checkpoint's tensors as llama.cpp's converter and llama-quantize write
// them: named by the Llama family's GgufSpec, q and k in ggml's RoPE row
// order, each as typeOf(its GGUF name, its dimensions) gives it
// (ggufStoredType, ggufQ4KMType); the tokenizer's pieces
// (llamaTokenizerJson's) as tokenizer.ggml.*.
void writeLlamaGguf(const fs::path& file, const std::function<DType(const std::string&, size_t)>& typeOf) {
  const std::vector<GgufTensorName>& names = findFamily("llama")->gguf.at(0).tensors;
  std::vector<GgufTensorToWrite> tensors;
  for (TensorToWrite& t : llamaTensors()) {
    const auto [name, spec] = ggufNameOf(names, t.name);
    const int64_t rows = t.shape[0], cols = t.shape.size() > 1 ? t.shape[1] : 1;
    GgufTensorToWrite g{name, std::vector<int64_t>(t.shape.rbegin(), t.shape.rend()),
                        typeOf(name, t.shape.size()), t.fill};
    if (spec->undo == GgufUndo::RopeRowsQ || spec->undo == GgufUndo::RopeRowsK) {
      // Stored row g holds the checkpoint's row from[g].
      const std::vector<int64_t> stored =
          ropeStoredRows(rows, spec->undo == GgufUndo::RopeRowsQ ? kHeads : kKvHeads, file.string(), t.name);
      auto from = std::make_shared<std::vector<int64_t>>(stored.size());
      for (size_t r = 0; r < stored.size(); ++r) (*from)[static_cast<size_t>(stored[r])] = static_cast<int64_t>(r);
      g.fill = [fill = t.fill, from, cols](int64_t first, int64_t count, float* out) {
        for (int64_t at = first; at < first + count; at += cols)
          fill((*from)[static_cast<size_t>(at / cols)] * cols, cols, out + (at - first));
      };
    }
    tensors.push_back(std::move(g));
  }
  const nlohmann::json tok = nlohmann::json::parse(llamaTokenizerJson());
  std::vector<std::string> pieces(tok["model"]["vocab"].size());
  for (const auto& [piece, id] : tok["model"]["vocab"].items()) pieces[id.get<size_t>()] = piece;
  writeGguf(file, ggufLlamaKeys({kLayers, kD, kHeads, kKvHeads, kFf, kPositions}, pieces), tensors);
}

}  // namespace

void benchLlamaGguf(nlohmann::json& out, const BenchOptions& options) {
  BenchFolder scratch("gguf");
  fs::path dir = options.llama_checkpoint;
  if (dir.empty()) {
    dir = scratch.path / "tinyllama-shape";
    writeLlamaCheckpoint(dir.string());
  }
  const fs::path gguf = scratch.path / "tinyllama-shape-q4_k.gguf";
  const auto w0 = std::chrono::steady_clock::now();
  writeLlamaGguf(gguf, [](const std::string& name, size_t dims) { return ggufStoredType(name, dims, DType::Q4_K); });
  const double write_s = secondsSince(w0);
  const double file_bytes = static_cast<double>(fs::file_size(gguf));

  // Cold: a fresh process over the GGUF file (load, 128 tokens, decode), its peak RSS.
  const nlohmann::json fresh = freshProcess(gguf, scratch.path);
  // Warm, one run: the same 128 tokens through the BF16 checkpoint and the Q4_K file, alternately.
  const std::shared_ptr<const Model> bf16 = loadModel(filesOnDisk(dir.string()));
  const std::shared_ptr<const Model> q4 = loadModel(filesOnDisk(gguf.string()));
  const std::vector<int32_t> ids = llamaIds();
  const ModelRunOptions run_options = llamaRunOptions();
  runModelIds(*bf16, ids, run_options);
  runModelIds(*q4, ids, run_options);
  std::vector<double> t_bf16, t_q4;
  for (int i = 0; i < 5; ++i) {
    t_bf16.push_back(medianSeconds(1, [&] { runModelIds(*bf16, ids, run_options); }));
    t_q4.push_back(medianSeconds(1, [&] { runModelIds(*q4, ids, run_options); }));
  }
  std::sort(t_bf16.begin(), t_bf16.end());
  std::sort(t_q4.begin(), t_q4.end());
  const double prefill_bf16 = t_bf16[2], prefill_q4 = t_q4[2];
  const auto [decode_s, read_s] = decodeAndRead(*q4, gguf);
  const double gemm_rate = gemmGflops();
  // The same weights as llama-quantize's Q4_K_M, the file most people run:
  // its head, and attn_v and ffn_down in some layers, Q6_K.
  int64_t q6_layers = 0;
  for (int64_t l = 0; l < kLayers; ++l)
    q6_layers += ggufQ4KMType("blk." + std::to_string(l) + ".ffn_down.weight", 2, kLayers, true) == DType::Q6_K;
  const fs::path gguf_m = scratch.path / "tinyllama-shape-q4_k_m.gguf";
  const auto wm = std::chrono::steady_clock::now();
  writeLlamaGguf(gguf_m, [](const std::string& name, size_t dims) { return ggufQ4KMType(name, dims, kLayers, true); });
  const double write_m_s = secondsSince(wm);
  const DecodeAndRead m = decodeAndRead(*loadModel(filesOnDisk(gguf_m.string())), gguf_m);
  const double file_m_bytes = static_cast<double>(fs::file_size(gguf_m));

  const double peak = fresh.at("peak_rss_bytes").get<double>(), budget = file_bytes + double(1 << 30);
  const double prefill_ratio = prefill_q4 / prefill_bf16, decode_ratio = decode_s / read_s;
  out["file_bytes"] = file_bytes;
  out["write_seconds"] = write_s;
  out["fresh"] = fresh;
  out["peak_rss_bytes"] = peak;
  out["peak_budget_bytes"] = budget;
  out["prefill_bf16_ms"] = prefill_bf16 * 1e3;
  out["prefill_q4_k_ms"] = prefill_q4 * 1e3;
  out["prefill_ratio"] = prefill_ratio;
  out["decode_seconds_per_token"] = decode_s;
  out["read_file_once_seconds"] = read_s;
  out["decode_over_read"] = decode_ratio;
  out["gemm_gflops"] = gemm_rate;
  out["q4_k_m"] = {{"file_bytes", file_m_bytes},
                   {"q6_k_layers", q6_layers},
                   {"write_seconds", write_m_s},
                   {"decode_seconds_per_token", m.decode_s},
                   {"read_file_once_seconds", m.read_s},
                   {"decode_over_read", m.decode_s / m.read_s}};
  out["targets_met"] = {{"peak_under_file_plus_1GiB", peak < budget},
                        {"prefill_within_1_5x_bf16", prefill_ratio <= 1.5},
                        {"decode_within_2x_reading_the_file", decode_ratio <= 2.0}};
  if (!options.print()) return;
  auto met = [](bool ok) { return ok ? "met" : "MISSED"; };
  std::printf("the llama section's weights as Q4_K (norms F32): %s, written in %.0f s\n", formatBytes(file_bytes).c_str(),
              write_s);
  std::printf("fresh process: load %.2f s, forward over %lld tokens %.1f ms, decode %.1f ms per token\n",
              fresh.at("load_seconds").get<double>(), static_cast<long long>(kTokens),
              fresh.at("forward_seconds").get<double>() * 1e3, fresh.at("decode_seconds_per_token").get<double>() * 1e3);
  std::printf("  peak RSS %s   target < file + 1 GiB (%s)   %s\n", formatBytes(peak).c_str(), formatBytes(budget).c_str(),
              met(peak < budget));
  std::printf("prefill of %lld tokens, warm, median of 5: BF16 %.1f ms, Q4_K %.1f ms = %.2fx   target 1.5x   %s\n",
              static_cast<long long>(kTokens), prefill_bf16 * 1e3, prefill_q4 * 1e3, prefill_ratio, met(prefill_ratio <= 1.5));
  std::printf("decode, warm, median of 3: %.1f ms per token; reading the file once from the page cache %.1f ms = %.2fx   "
              "target 2x   %s\n",
              decode_s * 1e3, read_s * 1e3, decode_ratio, met(decode_ratio <= 2.0));
  std::printf("the same as Q4_K_M (Q6_K head, attn_v and ffn_down in %lld of %lld layers): %s, written in %.0f s; decode "
              "%.1f ms per token, reading the file once %.1f ms = %.2fx\n",
              static_cast<long long>(q6_layers), static_cast<long long>(kLayers), formatBytes(file_m_bytes).c_str(),
              write_m_s, m.decode_s * 1e3, m.read_s * 1e3, m.decode_s / m.read_s);
  std::printf("GEMM (this run) %.1f GFLOP/s; the Q4_K prefill ran at %.0f%% of it\n", gemm_rate,
              100.0 * fresh.at("flops").get<double>() / prefill_q4 / 1e9 / gemm_rate);
}

void benchLlamaThreads(nlohmann::json& out, const BenchOptions& options) {
  BenchFolder scratch("llama-threads");
  double write_s = 0;
  const fs::path dir = llamaFolder(scratch, options, &write_s);
  const std::shared_ptr<const Model> model = loadModel(filesOnDisk(dir.string()));
  constexpr int64_t kThreadTokens = 1024;
  constexpr double kBusySeconds = 2.0;
  const std::vector<int32_t> ids = llamaIds(kThreadTokens);
  const ModelRunOptions run_options = llamaRunOptions(kThreadTokens);
  runModelIds(*model, llamaIds(), llamaRunOptions());  // the weights' pages in memory before the timed runs
  // One run beside a busy process that starts `after` seconds into it: each
  // layer's threads, and when it started and ended (the pass reports
  // progress at the end of each layer).
  auto beside = [&](double after) {
    RunContext ctx;
    std::vector<double> ends;
    const auto t0 = std::chrono::steady_clock::now();
    ctx.on_progress = [&](float) { ends.push_back(secondsSince(t0)); };
    const pid_t busy = busyProcess(after, kBusySeconds);
    if (busy < 0) throw InputError("llama_threads: could not start the busy process");
    const ModelRun run = runModelIds(*model, ids, run_options, ctx);
    ::waitpid(busy, nullptr, 0);
    nlohmann::json layers = nlohmann::json::array();
    for (size_t l = 0; l < run.layer_threads.size() && l < ends.size(); ++l)
      layers.push_back({{"layer", l}, {"start_seconds", l == 0 ? 0.0 : ends[l - 1]}, {"end_seconds", ends[l]},
                        {"threads", run.layer_threads[l]}});
    return nlohmann::json{{"busy_from_seconds", after},
                          {"busy_until_seconds", after + kBusySeconds},
                          {"seconds", run.compute_seconds},
                          {"layers", layers}};
  };
  out["tokens"] = kThreadTokens;
  out["threads"] = omp_get_max_threads();
  out["busy_seconds"] = kBusySeconds;
  out["write_seconds"] = write_s;
  out["busy_at_start"] = beside(0.0);
  out["busy_from_1s"] = beside(1.0);
  if (!options.print()) return;
  std::printf("TinyLlama-1.1B shape, %lld tokens (pooled maps), OpenMP's count %d; another process keeps one core\n"
              "busy for %.0f s. Each layer's threads (the pass looks at the free cores between layers, at most every %lld ms):\n",
              static_cast<long long>(kThreadTokens), omp_get_max_threads(), kBusySeconds,
              static_cast<long long>(PassThreads::kInterval.count()));
  for (const char* key : {"busy_at_start", "busy_from_1s"}) {
    const nlohmann::json& r = out[key];
    std::printf("  busy from %.0f s to %.0f s, the run took %.1f s:\n", r["busy_from_seconds"].get<double>(),
                r["busy_until_seconds"].get<double>(), r["seconds"].get<double>());
    std::printf("    layer  start s   end s  threads\n");
    for (const nlohmann::json& l : r["layers"])
      std::printf("    %5d  %7.2f  %6.2f  %7d\n", l["layer"].get<int>(), l["start_seconds"].get<double>(),
                  l["end_seconds"].get<double>(), l["threads"].get<int>());
  }
}

}  // namespace attn
