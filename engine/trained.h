// The small models the project trains itself (scripts/train_*.py, Debian's
// python3-torch) and ships in assets/trained/ as safetensors files, embedded
// into the engine at build time, or the same kind of file from the user's disk
// (a run of the training script with another seed, say).
//
// Every tensor is read with the shape the model's configuration implies, and
// every value is checked finite and within kMaxInputMagnitude: a file whose
// header lies about a shape, or whose weights are Inf, is refused with one
// InputError naming the file, the tensor and what was expected.
#pragma once

#include "engine/model/checkpoint/safetensors.h"
#include "engine/tensor.h"

#include <cstdint>
#include <memory>
#include <string>

namespace attn {

// `path` empty: the embedded assets/trained/<embedded_name> ("ntm-copy.safetensors");
// otherwise the user's file. Throws InputError when neither opens.
std::shared_ptr<const SafetensorsFile> openTrainedModel(const std::string& embedded_name, const std::string& path);

// A whole number from the file's __metadata__ (the training script's
// configuration: "memory_rows" → 32), within [min, max].
int64_t trainedConfigInt(const SafetensorsFile& f, const std::string& key, int64_t min, int64_t max);

// The tensor `name`, which must have exactly the shape [rows, cols] ([n]).
Mat trainedMatrix(const SafetensorsFile& f, const std::string& name, int64_t rows, int64_t cols);
Vec trainedVector(const SafetensorsFile& f, const std::string& name, int64_t n);

}  // namespace attn
