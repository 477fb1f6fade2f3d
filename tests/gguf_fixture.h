// GGUF files for the tests: any metadata and tensors through the engine's
// writer (gguf.h, quantized by quants.h), and llama.cpp's conversion of a
// checkpoint (convert_hf_to_gguf.py's, written again here from its source,
// so the loader is checked against the converter, not against itself).
#pragma once

#include "engine/model/checkpoint/gguf.h"
#include "tests/model_fixture.h"

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attn::test {


using GgufKv = GgufKeyToWrite;
struct GgufTensorOut {
  std::string name;
  std::vector<int64_t> dims;  // ggml's ne, innermost first
  DType type = DType::F32;
  std::vector<float> values;  // in ggml's order: dims[0] varies fastest
};

// The file engine's writeGguf writes for them (version and alignment for the reader's refusals),
// and its bytes.
void writeGguf(const std::filesystem::path& path, const std::vector<GgufKv>& kv,
               const std::vector<GgufTensorOut>& tensors, uint32_t version = 3, uint64_t alignment = 32);
std::string ggufBytes(const std::vector<GgufKv>& kv, const std::vector<GgufTensorOut>& tensors, uint32_t version = 3,
                      uint64_t alignment = 32);

// A LLaMA-family checkpoint (writeCheckpoint's) of a shape every block type
// can hold: `family` "llama", "qwen2" or "qwen3", 2 layers, d = 256, 4 heads
// of 64 over 2 key/value heads, d_ff 512 (Qwen3: head_dim 64 and QK-norm).
// `dtype` F16 / BF16: the values rounded to it and saved so.
TinyModel writeGgufParent(const std::filesystem::path& dir, const std::string& family, DType dtype = DType::F32);
// Checkpoints of the other families as llama.cpp's converter takes them, each
// written by its family's test file in its own tensor names: rows of 256,
// and what llama.cpp hard-codes rather than reads set to its values.
TinyModel writeGemmaGgufParent(const std::filesystem::path& dir, int generation);  // 1, 2 or 3
TinyModel writeOlmo2GgufParent(const std::filesystem::path& dir);
TinyModel writePhi3GgufParent(const std::filesystem::path& dir);
TinyModel writePhiGgufParent(const std::filesystem::path& dir);
TinyModel writeBloomGgufParent(const std::filesystem::path& dir);
// parallel: use_parallel_residual and attention biases; else neither.
TinyModel writeGptNeoxGgufParent(const std::filesystem::path& dir, bool parallel);
// A checkpoint folder on disk (config.json and one model.safetensors, no
// prefix) as a TinyModel, for convertToGguf: the shipped trained models.
TinyModel readTinyModel(const std::filesystem::path& dir);
// Written here: a StarCoder (GPTBigCodeForCausalLM, multi-query, n_inner
// 4·d as the converter assumes) and a BertModel (no masked-LM head, its
// pooler saved; the BERT fixture's WordPiece vocab.txt), both rows of 256.
TinyModel writeStarcoderGgufParent(const std::filesystem::path& dir, DType dtype = DType::F32);
TinyModel writeBertGgufParent(const std::filesystem::path& dir, DType dtype = DType::F32);

// `m` as llama.cpp's converter (that family's class) writes it: each tensor
// stored as `type` or F32 as llama.cpp keeps it (ggufStoredTypes), with what the
// converter changes changed (q and k permuted for "llama", Gemma's norms + 1, …;
// Llama's rope_scaling llama3 as the rope_freqs tensor), the tokenizer's
// vocabulary and merges as tokenizer.ggml.* (BERT's WordPiece as its '▁' words).
// `edit` changes the metadata and tensors before they are written (bad-file tests).
using GgufEdit = std::function<void(std::vector<GgufKv>& kv, std::vector<GgufTensorOut>& tensors)>;
std::filesystem::path convertToGguf(const TinyModel& m, DType type, const std::filesystem::path& out,
                                    const GgufEdit& edit = {});
// The type convertToGguf stores each of `m`'s tensors as in a file of
// `type`, by its name in the checkpoint (those the converter drops absent):
// F32 where llama.cpp keeps it so (attn::ggufStoredType), else `type`, or
// what `edit` retypes it to (an edit that changes the types only).
std::map<std::string, DType> ggufStoredTypes(const TinyModel& m, DType type, const GgufEdit& edit = {});
// The edit that turns a file converted as Q4_K into llama-quantize's Q4_K_M
// (attn::ggufQ4KMType for each of its Q4_K tensors) with general.file_type
// 15 (LLAMA_FTYPE_MOSTLY_Q4_K_M).
GgufEdit asQ4KM();

}  // namespace attn::test
