#include "engine/params.h"

#include "engine/attention_math.h"
#include "engine/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

namespace attn {

const ParamSpec* findParam(const std::vector<ParamSpec>& specs, const std::string& key) {
  for (const ParamSpec& s : specs)
    if (s.key == key) return &s;
  return nullptr;
}

std::string paramTypeName(ParamType t) {
  switch (t) {
    case ParamType::Bool: return "bool";
    case ParamType::Int: return "int";
    case ParamType::Float: return "float";
    case ParamType::Choice: return "choice";
    case ParamType::File: return "file";
    case ParamType::FloatList: return "float list";
    case ParamType::Text: return "text";
  }
  return "?";
}

bool hasRange(ParamType t) { return t == ParamType::Int || t == ParamType::Float || t == ParamType::FloatList; }

std::string formatValue(const ParamValue& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&v)) return formatNumber(*d);
  if (const auto* list = std::get_if<std::vector<double>>(&v)) {
    std::ostringstream os;
    for (size_t e = 0; e < list->size(); ++e) os << (e ? "," : "") << (*list)[e];
    return os.str();
  }
  return std::get<std::string>(v);
}

Params Params::defaults(const std::vector<ParamSpec>& specs) {
  Params p;
  for (const ParamSpec& s : specs) p.values_[s.key] = s.def;
  return p;
}

namespace {

std::string expected(const ParamSpec& s) {
  std::ostringstream os;
  switch (s.type) {
    case ParamType::Bool: return "true or false";
    case ParamType::Int: os << "an integer in [" << static_cast<int64_t>(s.min) << ", " << static_cast<int64_t>(s.max) << "]"; return os.str();
    case ParamType::Float: os << "a number in [" << s.min << ", " << s.max << "]"; return os.str();
    case ParamType::Choice: {
      std::string c;
      for (const std::string& x : s.choices) c += (c.empty() ? "" : ", ") + x;
      return "one of: " + c;
    }
    case ParamType::File:
      if (s.file_shape == "image") return "a path to a PNG or JPEG picture";
      if (s.file_shape == "safetensors") return "a path to a trained model's .safetensors file";
      return "a path to a .npy file" + (s.file_shape.empty() ? "" : " of shape " + s.file_shape);
    case ParamType::FloatList:
      os << "comma-separated numbers in [" << s.min << ", " << s.max << "]" << (s.per_head ? ", one per head" : "")
         << (s.centred ? ", an odd number of them" : "") << (s.sums_to_one ? ", summing to 1" : "");
      return os.str();
    case ParamType::Text: return s.file_shape.empty() ? std::string("text") : s.file_shape;
  }
  return "";
}

[[noreturn]] void bad(const ParamSpec& s, const std::string& value) {
  throw InputError("parameter '" + s.key + "': got '" + value + "', expected " + expected(s));
}

}  // namespace

void Params::setValue(const std::vector<ParamSpec>& specs, const std::string& key, const ParamValue& value) {
  const ParamSpec* s = findParam(specs, key);
  if (!s) {
    std::string known;
    for (const ParamSpec& x : specs) known += (known.empty() ? "" : ", ") + x.key;
    throw InputError("unknown parameter '" + key + "' (this variant takes: " + (known.empty() ? "none" : known) + ")");
  }
  ParamValue v = value;
  if (s->type == ParamType::Float && std::holds_alternative<int64_t>(v)) v = static_cast<double>(std::get<int64_t>(v));
  switch (s->type) {
    case ParamType::Bool:
      if (!std::holds_alternative<bool>(v)) bad(*s, formatValue(v));
      break;
    case ParamType::Int: {
      if (!std::holds_alternative<int64_t>(v)) bad(*s, formatValue(v));
      const int64_t i = std::get<int64_t>(v);
      if (i < s->min || i > s->max) bad(*s, formatValue(v));
      break;
    }
    case ParamType::Float: {
      if (!std::holds_alternative<double>(v)) bad(*s, formatValue(v));
      const double d = std::get<double>(v);
      if (!std::isfinite(d) || d < s->min || d > s->max) bad(*s, formatValue(v));
      break;
    }
    case ParamType::Choice: {
      if (!std::holds_alternative<std::string>(v)) bad(*s, formatValue(v));
      bool ok = false;
      for (const std::string& c : s->choices) ok = ok || c == std::get<std::string>(v);
      if (!ok) bad(*s, formatValue(v));
      break;
    }
    case ParamType::File:
    case ParamType::Text:  // the variant checks the syntax, naming the parameter
      if (!std::holds_alternative<std::string>(v)) bad(*s, formatValue(v));
      break;
    case ParamType::FloatList: {
      if (const double* d = std::get_if<double>(&v)) v = std::vector<double>{*d};
      const auto* list = std::get_if<std::vector<double>>(&v);
      if (!list || list->empty()) bad(*s, formatValue(v));
      for (size_t e = 0; e < list->size(); ++e) {
        const double d = (*list)[e];
        if (!std::isfinite(d) || d < s->min || d > s->max) {
          std::ostringstream os;
          os << s->key << ": element " << e << " must be in " << s->min << ".." << s->max << ", got " << d;
          throw InputError(os.str());
        }
      }
      if (s->centred && list->size() % 2 == 0)
        throw InputError("parameter '" + s->key + "' (" + s->symbol + "): expected an odd number of entries around the " +
                         "middle one, got " + std::to_string(list->size()));
      if (s->sums_to_one) checkDistribution(*list, "parameter '" + s->key + "' (" + s->symbol + ")");
      break;
    }
  }
  values_[key] = v;
}

void Params::set(const std::vector<ParamSpec>& specs, const std::string& key, const std::string& value) {
  const ParamSpec* s = findParam(specs, key);
  if (!s) return setValue(specs, key, value);  // reports the unknown key
  switch (s->type) {
    case ParamType::Bool:
      if (value == "true" || value == "1" || value == "on" || value == "yes") return setValue(specs, key, true);
      if (value == "false" || value == "0" || value == "off" || value == "no") return setValue(specs, key, false);
      bad(*s, value);
    case ParamType::Int: {
      char* end = nullptr;
      errno = 0;
      const long long i = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || errno || *end != '\0') bad(*s, value);
      return setValue(specs, key, static_cast<int64_t>(i));
    }
    case ParamType::Float: {
      char* end = nullptr;
      const double d = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0') bad(*s, value);
      return setValue(specs, key, d);
    }
    case ParamType::Choice:
    case ParamType::File:
    case ParamType::Text:
      return setValue(specs, key, value);
    case ParamType::FloatList: {
      // "8,16,32,64": elements numbered from 0 in errors, like heads.
      std::vector<double> list;
      size_t start = 0;
      for (size_t e = 0;; ++e) {
        const size_t comma = value.find(',', start);
        const std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        char* end = nullptr;
        const double d = std::strtod(item.c_str(), &end);
        const bool blank = item.find_first_not_of(" \t") == std::string::npos;
        if (blank || end[std::strspn(end, " \t")] != '\0')
          throw InputError(s->key + ": element " + std::to_string(e) + " is '" + item + "', expected " + expected(*s));
        list.push_back(d);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return setValue(specs, key, list);
    }
  }
}

const ParamValue& Params::get(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) throw std::logic_error("Params: no value for '" + key + "'");
  return it->second;
}

bool Params::getBool(const std::string& key) const { return std::get<bool>(get(key)); }
int64_t Params::getInt(const std::string& key) const { return std::get<int64_t>(get(key)); }
double Params::getFloat(const std::string& key) const { return std::get<double>(get(key)); }
const std::string& Params::getString(const std::string& key) const { return std::get<std::string>(get(key)); }
const std::vector<double>& Params::getFloatList(const std::string& key) const {
  return std::get<std::vector<double>>(get(key));
}

void checkDistribution(const std::vector<double>& v, const std::string& what) {
  for (const double x : v)
    if (x < 0) throw InputError(what + ": entries must be ≥ 0, got " + formatValue(x));
  const double sum = std::accumulate(v.begin(), v.end(), 0.0);
  if (std::abs(sum - 1.0) > 1e-3) throw InputError(what + ": entries must sum to 1, got " + formatValue(sum));
}

void rescaleOthersToSumOne(std::vector<double>& list, size_t keep) {
  if (list.size() == 1) {
    list[0] = 1;
    return;
  }
  const double target = 1.0 - list[keep];
  double rest = 0;
  for (size_t i = 0; i < list.size(); ++i)
    if (i != keep) rest += list[i];
  for (size_t i = 0; i < list.size(); ++i)
    if (i != keep) list[i] = rest > 0 ? list[i] * target / rest : target / static_cast<double>(list.size() - 1);
}

double Params::floatForHead(const std::string& key, int64_t head) const {
  const std::vector<double>& list = getFloatList(key);
  return list[std::min(static_cast<size_t>(head), list.size() - 1)];
}

nlohmann::json Params::toJson() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& kv : values_) std::visit([&](const auto& x) { j[kv.first] = x; }, kv.second);
  return j;
}

nlohmann::json specToJson(const ParamSpec& s) {
  nlohmann::json j = {{"key", s.key}, {"symbol", s.symbol}, {"type", paramTypeName(s.type)}, {"help", s.help}};
  std::visit([&](const auto& x) { j["default"] = x; }, s.def);
  if (hasRange(s.type)) {
    j["min"] = s.min;
    j["max"] = s.max;
  }
  if (s.type == ParamType::Choice) j["choices"] = s.choices;
  if (s.type == ParamType::File) j["shape"] = s.file_shape;
  if (s.type == ParamType::Text && !s.file_shape.empty()) j["syntax"] = s.file_shape;
  if (s.type == ParamType::FloatList) {
    j["per_head"] = s.per_head;
    j["sums_to_one"] = s.sums_to_one;
    j["centred"] = s.centred;
  }
  return j;
}

}  // namespace attn
