#include "app/lesson/lesson.h"

#include "app/model/embedded_model.h"

#include "engine/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>

namespace attn {

namespace {

using json = nlohmann::json;

// The scene keys a step may set: the flags of `attnlab gui`, plus
// "workspace" and "stage". A lesson runs on the embedded model or on one the
// binary ships ("model": "shipped:NAME"), never on a path of the author's disk.
const std::vector<std::string>& sceneKeys() {
  static const std::vector<std::string> keys = {"workspace", "variant", "set",   "view",  "text",  "source_text",
                                                "length",    "source_length", "dim", "heads", "seed",  "preset",
                                                "pattern",   "layer",   "head",  "query", "key",   "stage",
                                                "panel",     "model",   "target", "image", "truncate",
                                                "corrupted"};
  return keys;
}

// A value as an error shows it: a scalar as written (at most 60 characters),
// anything else by its type, so a hostile file cannot make a huge message
// nor recurse (dump() would, on deeply nested arrays).
std::string shown(const json& j) {
  if (!j.is_primitive()) return "a JSON " + std::string(j.type_name());
  const std::string d = j.dump();
  return d.size() <= 60 ? d : d.substr(0, 57) + "...";
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// A parameter value as --set writes it: true, 4, 0.5, general, or 1,0,0 for
// a flat list of numbers. Numbers are written as JSON writes them (every digit).
std::string setValue(const json& v, const std::string& key) {
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number() || v.is_string()) return v.is_string() ? v.get<std::string>() : v.dump();
  if (v.is_array()) {
    std::string s;
    for (const json& x : v) {
      if (!x.is_number()) throw InputError("\"set\": \"" + key + "\": a list holds numbers only, got " + shown(x));
      s += (s.empty() ? "" : ",") + x.dump();
    }
    return s;
  }
  throw InputError("\"set\": \"" + key + "\": expected a boolean, a number, a string or a list of numbers, got " + shown(v));
}

int64_t integer(const json& j, const std::string& key, int64_t lo, int64_t hi) {
  if (!j.is_number_integer() || j.get<int64_t>() < lo || j.get<int64_t>() > hi)
    throw InputError("\"" + key + "\": expected a whole number " + std::to_string(lo) + ".." + std::to_string(hi) +
                     ", got " + shown(j));
  return j.get<int64_t>();
}

std::string text(const json& j, const std::string& key) {
  if (!j.is_string()) throw InputError("\"" + key + "\": expected a string, got " + shown(j));
  return j.get<std::string>();
}

// A text the model or variant reads: empty is refused, as on the command line (leaving the key out is no text).
std::string nonEmptyText(const json& j, const std::string& key, const std::string& when_left_out) {
  std::string t = text(j, key);
  if (t.empty()) throw InputError("\"" + key + "\": empty (leave it out, or null, for " + when_left_out + ")");
  return t;
}

SceneOptions sceneOf(const json& s) {
  SceneOptions o;
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::vector<std::string>& keys = sceneKeys();
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
      throw InputError("\"scene\": unknown key \"" + it.key() + "\" (expected " + joined(keys) + ")");
  }
  const std::string workspace = s.contains("workspace") ? text(s["workspace"], "workspace") : "variants";
  if (workspace != "variants" && workspace != "model")
    throw InputError("\"workspace\": expected \"variants\" or \"model\", got \"" + workspace + "\"");
  o.model_workspace = workspace == "model";
  if (!o.model_workspace && !s.contains("variant"))
    throw InputError("\"scene\": a step of the variants workspace needs \"variant\" (or \"workspace\": \"model\")");
  if (s.contains("variant") && !o.model_workspace) o.variant = text(s["variant"], "variant");
  if (s.contains("set")) {
    if (!s["set"].is_object()) throw InputError("\"set\": expected an object of parameter values, got " + shown(s["set"]));
    for (auto it = s["set"].begin(); it != s["set"].end(); ++it) o.sets.push_back(it.key() + "=" + setValue(*it, it.key()));
  }
  if (s.contains("view")) o.view = text(s["view"], "view");
  InputOptions& in = o.input;
  auto given = [&](const char* key) {
    const bool has = s.contains(key);
    o.input_given = o.input_given || has;
    return has;
  };
  if (given("text")) in.text = nonEmptyText(s["text"], "text", "the default text");
  if (given("source_text")) in.source_text = nonEmptyText(s["source_text"], "source_text", "the default source");
  if (given("length")) in.length = integer(s["length"], "length", 1, 4096);
  if (given("source_length")) in.source_length = integer(s["source_length"], "source_length", 1, 4096);
  if (given("dim")) in.dim = integer(s["dim"], "dim", 1, 1024);
  if (given("heads")) in.heads = integer(s["heads"], "heads", 1, 64);
  if (given("seed")) in.seed = static_cast<uint64_t>(integer(s["seed"], "seed", 0, INT64_MAX));
  if (given("preset")) in.preset = text(s["preset"], "preset");
  if (o.model_workspace && s.contains("text")) o.input_given = false;  // the model reads the text; no synthetic input
  if (s.contains("pattern")) o.pattern = text(s["pattern"], "pattern");
  if (s.contains("layer")) o.layer = static_cast<int>(integer(s["layer"], "layer", 0, 1023));
  if (s.contains("head")) o.head = static_cast<int>(integer(s["head"], "head", 0, 1023));
  if (s.contains("query")) o.query = integer(s["query"], "query", 0, 1 << 20);
  if (s.contains("key")) o.key = integer(s["key"], "key", 0, 1 << 20);
  if (s.contains("stage")) o.stage = static_cast<int>(integer(s["stage"], "stage", 0, 1023));
  if (s.contains("panel")) o.panel = text(s["panel"], "panel");
  if (s.contains("model")) {
    o.model = text(s["model"], "model");
    if (o.model.rfind(kShippedPrefix, 0) != 0)
      throw InputError("\"model\": a lesson reads the models the binary ships (\"shipped:NAME\"), got \"" + o.model + "\"");
  }
  if (s.contains("target")) o.target = nonEmptyText(s["target"], "target", "the model's own translation");
  if (s.contains("corrupted")) o.corrupted = nonEmptyText(s["corrupted"], "corrupted", "no corrupted prompt");
  if (s.contains("truncate")) {
    if (!s["truncate"].is_boolean()) throw InputError("\"truncate\": expected true or false, got " + shown(s["truncate"]));
    o.truncate = s["truncate"].get<bool>();
  }
  if (s.contains("image")) o.image = text(s["image"], "image");
  validateScene(o);
  return o;
}

Annotation highlightOf(const json& h) {
  if (!h.is_object()) throw InputError("\"highlights\": expected objects such as {\"ring\": [3, 5]}, got " + shown(h));
  static const std::map<std::string, std::pair<Annotation::Kind, size_t>> kinds = {
      {"ring", {Annotation::Kind::Ring, 2}},     {"row", {Annotation::Kind::Row, 1}},
      {"column", {Annotation::Kind::Column, 1}}, {"box", {Annotation::Kind::Box, 4}},
      {"arrow", {Annotation::Kind::Arrow, 4}},   {"token", {Annotation::Kind::Token, 1}}};
  Annotation a;
  int found = 0;
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it.key() == "label") {
      a.label = text(*it, "label");
      continue;
    }
    const auto k = kinds.find(it.key());
    if (k == kinds.end())
      throw InputError("\"highlights\": unknown mark \"" + it.key() + "\" (expected ring, row, column, box, arrow or token, and label)");
    ++found;
    a.kind = k->second.first;
    const size_t n = k->second.second;
    std::vector<int64_t> v;
    if (n == 1 && it->is_number_integer()) v.push_back(integer(*it, it.key(), 0, 1 << 20));
    if (it->is_array() && it->size() == n)
      for (const json& x : *it) v.push_back(integer(x, it.key(), 0, 1 << 20));
    if (v.size() != n) {
      const char* shape = n == 1 ? "an index" : n == 2 ? "[query, key]" : a.kind == Annotation::Kind::Box
                                                                               ? "[query, key, query_end, key_end]"
                                                                               : "[from_query, from_key, to_query, to_key]";
      throw InputError("\"" + it.key() + "\": expected " + shape + ", got " + shown(*it));
    }
    switch (a.kind) {
      case Annotation::Kind::Column: a.key = v[0]; break;
      case Annotation::Kind::Row:
      case Annotation::Kind::Token: a.query = v[0]; break;
      case Annotation::Kind::Ring:
        a.query = v[0];
        a.key = v[1];
        break;
      case Annotation::Kind::Box:
      case Annotation::Kind::Arrow:
        a.query = v[0];
        a.key = v[1];
        a.query_end = v[2];
        a.key_end = v[3];
        break;
    }
  }
  if (found != 1) throw InputError("\"highlights\": each mark needs exactly one of ring, row, column, box, arrow or token, got " + shown(h));
  return a;
}

// Scene objects merge key by key, "set" too; null removes a key.
void mergeScene(json& scene, const json& change) {
  // A move between the workspaces starts with no selection of the other's (a model's head 2 is no variant's head).
  const auto workspaceOf = [](const json& j, const std::string& fallback) {
    if (j.contains("workspace") && j["workspace"].is_string()) return j["workspace"].get<std::string>();
    return j.contains("variant") ? std::string("variants") : fallback;
  };
  const std::string before = workspaceOf(scene, "variants");
  if (workspaceOf(change, before) != before)
    for (const char* key : {"layer", "head", "query", "key", "pattern", "stage", "panel"}) scene.erase(key);
  // A new variant starts from its own defaults, with only this step's "set",
  // and none of the previous variant's stage or framed panel.
  if (change.contains("variant") && (!scene.contains("variant") || scene["variant"] != change["variant"]))
    for (const char* key : {"set", "stage", "panel"}) scene.erase(key);
  for (auto it = change.begin(); it != change.end(); ++it) {
    if (it->is_null()) {
      scene.erase(it.key());
    } else if (it.key() == "set" && it->is_object()) {
      if (!scene.contains("set") || !scene["set"].is_object()) scene["set"] = json::object();
      for (auto s = it->begin(); s != it->end(); ++s) {
        if (s->is_null())
          scene["set"].erase(s.key());
        else
          scene["set"][s.key()] = *s;
      }
    } else {
      scene[it.key()] = *it;
    }
  }
  // A move to the model leaves the variant behind.
  if (change.contains("workspace") && change["workspace"] == "model") scene.erase("variant");
  if (change.contains("variant") && !change.contains("workspace")) scene["workspace"] = "variants";
}

}  // namespace

namespace {

// The sentences of `text`, each with the space after it: one ends at . ! or ?
// before white space and a capital, a quote or a bracket, or at the end
// ("e.g. the", "et al. 2022" and "2.5" end none).
std::vector<std::string> sentences(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '.' && text[i] != '!' && text[i] != '?') continue;
    size_t next = i + 1;
    while (next < text.size() && std::isspace(static_cast<unsigned char>(text[next]))) ++next;
    const unsigned char c = next < text.size() ? static_cast<unsigned char>(text[next]) : 0;
    const bool ends = next == text.size() ||
                      (next > i + 1 && (std::isupper(c) || c == '\'' || c == '"' || c == '(' || c == 0xE2 /* ‘ “ */));
    if (!ends) continue;
    out.push_back(text.substr(start, next - start));
    start = next;
  }
  if (start < text.size()) out.push_back(text.substr(start));
  return out;
}

bool actsOnTheWindow(const std::string& sentence) {
  static const std::regex control(
      R"(\b(click|double-click|hover|drag|scroll|press)\w*|\bslider|\bside panel|\bin the panel\b|\bmenus?\b|\bbuttons?\b|)"
      R"(\btooltip|\bcheckbox|\b(source|text|target) box\b)",
      std::regex::icase);
  static const std::regex imperative(
      R"(^\s*(Click|Hover|Drag|Scroll|Press|Move|Type|Toggle|Switch|Open|Select|Pick|Choose|Sort|Play|Step|Set|Change|)"
      R"(Raise|Lower|Turn|Replace|Give|Edit)\b)");
  return std::regex_search(sentence, control) || std::regex_search(sentence, imperative);
}

}  // namespace

std::string withoutWindowInstructions(const std::string& text) {
  std::string kept;
  for (const std::string& s : sentences(text))
    if (!actsOnTheWindow(s)) kept += s;
  return kept.erase(kept.find_last_not_of(" \n\t") + 1);
}

std::string paperNarration(const LessonStep& step) {
  return step.paper.empty() ? withoutWindowInstructions(step.narration) : step.paper;
}

std::string paperPrompt(const LessonStep& step) { return withoutWindowInstructions(step.prompt); }

std::vector<std::string> Lesson::variants() const {
  std::vector<std::string> out;
  for (const LessonStep& s : steps) {
    const std::string v = s.scene.model_workspace ? std::string("model") : s.scene.variant;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

Lesson parseLesson(const std::string& source, const std::string& name, const std::string& file) {
  json j;
  try {
    j = json::parse(source);
  } catch (const json::exception& e) {  // a syntax error, or a number too large for a double (1e400)
    throw InputError(file + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  Lesson l;
  l.name = name;
  l.file = file;
  try {
    if (!j.is_object()) throw InputError("expected an object with \"title\", \"summary\" and \"steps\"");
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() != "title" && it.key() != "summary" && it.key() != "steps" && it.key() != "comment")
        throw InputError("unknown key \"" + it.key() + "\" (expected title, summary, steps)");
    if (!j.contains("title") || !j.contains("steps")) throw InputError("needs \"title\" and \"steps\"");
    l.title = text(j["title"], "title");
    l.summary = j.contains("summary") ? text(j["summary"], "summary") : "";
    if (!j["steps"].is_array() || j["steps"].empty()) throw InputError("\"steps\": expected a non-empty list of steps");
  } catch (const InputError& e) {
    throw InputError(file + ": " + e.what());
  }
  json scene = json::object();
  for (size_t i = 0; i < j["steps"].size(); ++i) {
    const json& s = j["steps"][i];
    try {
      if (!s.is_object()) throw InputError("expected an object");
      for (auto it = s.begin(); it != s.end(); ++it) {
        static const std::vector<std::string> keys = {"title", "scene", "narration", "formula", "highlights", "prompt", "paper"};
        if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
          throw InputError("unknown key \"" + it.key() + "\" (expected " + joined(keys) + ")");
      }
      LessonStep step;
      if (!s.contains("title") || !s.contains("narration"))
        throw InputError("needs \"title\" and \"narration\"");
      step.title = text(s["title"], "title");
      step.narration = text(s["narration"], "narration");
      if (step.narration.empty()) throw InputError("\"narration\": empty");
      if (s.contains("formula")) step.formula = text(s["formula"], "formula");
      if (s.contains("prompt")) step.prompt = text(s["prompt"], "prompt");
      if (s.contains("paper")) {
        step.paper = text(s["paper"], "paper");
        if (step.paper.empty()) throw InputError("\"paper\": empty (leave it out to print the narration)");
      }

      if (s.contains("scene")) {
        if (!s["scene"].is_object()) throw InputError("\"scene\": expected an object");
        mergeScene(scene, s["scene"]);
      } else if (i == 0) {
        throw InputError("the first step needs a \"scene\"");
      }
      step.scene = sceneOf(scene);
      if (s.contains("highlights")) {
        if (!s["highlights"].is_array()) throw InputError("\"highlights\": expected a list");
        for (const json& h : s["highlights"]) step.highlights.push_back(highlightOf(h));
      }
      l.steps.push_back(std::move(step));
    } catch (const InputError& e) {
      throw InputError(file + ": step " + std::to_string(i + 1) + ": " + e.what());
    }
  }
  return l;
}

}  // namespace attn
