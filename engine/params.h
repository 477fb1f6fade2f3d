// Parameter descriptions (part of the registry) and the values a run uses.
// The GUI builds its controls, the CLI its --set validation and `attnlab
// list` its listing from ParamSpec; nothing else describes a parameter.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace attn {

// FloatList: one number per head ("--set z=8,16,32,64"), or a plain list of
// numbers (ParamSpec::per_head false: ACT's halting values); min/max bound each
// element. A variant with H heads reads element h for head h and the last
// element for heads beyond the list (floatForHead()). Text: a free-form
// string whose syntax the variant checks (SNAIL's block list "attn(16,8),tc(32)").
enum class ParamType { Bool, Int, Float, Choice, File, FloatList, Text };
bool hasRange(ParamType t);  // Int, Float, FloatList: min/max apply

using ParamValue = std::variant<bool, int64_t, double, std::string, std::vector<double>>;

struct ParamSpec {
  std::string key;      // CLI key: --set KEY=VALUE
  std::string symbol;   // the paper's symbol, shown in the UI ("β", "D", "h")
  ParamType type = ParamType::Float;
  std::string help;     // one sentence, shown as tooltip and in `attnlab list`
  double min = 0, max = 1;                // Int / Float / FloatList element range, inclusive
  bool log_scale = false;                 // slider hint for wide ranges
  ParamValue def;                         // default value
  std::vector<std::string> choices;       // Choice values
  std::string file_shape;                 // File: expected shape, e.g. "[Lq, Lk]", or "image" for a PNG or
                                          // JPEG picture in place of a .npy, or "safetensors" for a trained
                                          // model's weights; Text: the expected syntax
  bool per_head = true;                   // FloatList: element h is head h's; false: a plain list
                                          // (the GUI shows one slider per element, with add/remove)
  bool sums_to_one = false;               // plain FloatList: a distribution (the variant checks it;
                                          // the GUI rescales the other entries when one moves)
  bool centred = false;                   // plain FloatList: odd length around its middle entry (the
                                          // GUI adds and removes an entry at both ends)
};

// Throws InputError "<what>: entries must be ≥ 0" or "…: entries must sum to
// 1, got S" unless `v` is a distribution (within 1e-3): a sums_to_one list,
// NTM's w_prev file.
void checkDistribution(const std::vector<double>& v, const std::string& what);

// A distribution (ParamSpec::sums_to_one) after its entry `keep` was moved
// within [0, 1]: the other entries are rescaled so that the list sums to 1,
// or share what is left evenly where they are all 0. A single entry becomes 1.
void rescaleOthersToSumOne(std::vector<double>& list, size_t keep);

// The values of one run, always complete: defaults are filled in for every
// key of the variant's spec, so readers never see a missing key.
class Params {
 public:
  Params() = default;
  static Params defaults(const std::vector<ParamSpec>& specs);

  // Parses and validates "value" for `key`; throws InputError naming the
  // parameter and the expected type/range on failure.
  void set(const std::vector<ParamSpec>& specs, const std::string& key, const std::string& value);
  // Sets an already-typed value, validated against the spec.
  void setValue(const std::vector<ParamSpec>& specs, const std::string& key, const ParamValue& value);

  bool getBool(const std::string& key) const;
  int64_t getInt(const std::string& key) const;
  double getFloat(const std::string& key) const;
  const std::string& getString(const std::string& key) const;  // Choice, File and Text
  const std::vector<double>& getFloatList(const std::string& key) const;
  // Element `head` of a FloatList, or its last element for heads beyond the list.
  double floatForHead(const std::string& key, int64_t head) const;
  const ParamValue& get(const std::string& key) const;
  bool has(const std::string& key) const { return values_.count(key) != 0; }

  const std::map<std::string, ParamValue>& values() const { return values_; }
  nlohmann::json toJson() const;
  bool operator==(const Params& o) const { return values_ == o.values_; }

 private:
  std::map<std::string, ParamValue> values_;
};

const ParamSpec* findParam(const std::vector<ParamSpec>& specs, const std::string& key);
std::string paramTypeName(ParamType t);
std::string formatValue(const ParamValue& v);
nlohmann::json specToJson(const ParamSpec& s);

}  // namespace attn
