// The lessons there are: the shipped ones (embedded) and the user's folder.
#include "app/lesson/lesson.h"

#include "app/shared/config_dir.h"
#include "engine/error.h"

#include <embedded_lessons.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace attn {

std::filesystem::path userLessonFolder() {
  if (const char* env = std::getenv("ATTNLAB_LESSONS"); env && *env) return env;
  return userConfigDir() / "lessons";
}

namespace {

constexpr uintmax_t kMaxLessonBytes = 4u << 20;

// The file's text; one larger than any lesson is refused before it is read.
std::string readText(const std::filesystem::path& p) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(p, ec);
  if (ec) throw InputError(p.string() + ": cannot read the lesson file (" + ec.message() + ")");
  if (size > kMaxLessonBytes) throw InputError(p.string() + ": " + std::to_string(size) + " bytes, larger than a lesson (4 MiB at most)");
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(p.string() + ": cannot read the lesson file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<Lesson> allLessons(std::vector<std::string>& errors) {
  std::map<std::string, Lesson> by_name;
  for (const auto& [file, text] : kLesson_files) {
    const std::string name = std::filesystem::path(file).stem().string();
    try {
      by_name[name] = parseLesson(text, name, std::string("assets/lessons/") + file);
    } catch (const InputError& e) {
      errors.push_back(e.what());
    }
  }
  const std::filesystem::path folder = userLessonFolder();
  std::error_code ec;
  if (std::filesystem::is_directory(folder, ec)) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const std::filesystem::path& p : files) {
      try {
        by_name[p.stem().string()] = parseLesson(readText(p), p.stem().string(), p.string());
      } catch (const InputError& e) {
        // A teacher's broken copy is an error, not a silent fall-back to the shipped lesson.
        by_name.erase(p.stem().string());
        errors.push_back(e.what());
      }
    }
  }
  std::vector<Lesson> out;
  for (auto& [name, lesson] : by_name) out.push_back(std::move(lesson));
  return out;
}

Lesson findLesson(const std::string& name_or_path) {
  if (std::filesystem::path(name_or_path).extension() == ".json") {
    const std::filesystem::path p(name_or_path);
    return parseLesson(readText(p), p.stem().string(), p.string());
  }
  std::vector<std::string> errors;
  std::vector<Lesson> lessons = allLessons(errors);
  for (Lesson& l : lessons)
    if (l.name == name_or_path) return std::move(l);
  for (const std::string& e : errors)  // the lesson asked for may be the one that failed to parse
    if (e.find("/" + name_or_path + ".json:") != std::string::npos) throw InputError(e);
  std::string names;
  for (const Lesson& l : lessons) names += (names.empty() ? "" : ", ") + l.name;
  // The name came from gui --lesson or lesson export's NAME: the line names the lesson, not a flag.
  throw InputError("lesson '" + name_or_path + "': no such lesson (there are: " + names + "; see 'attnlab lesson list')");
}

}  // namespace attn
