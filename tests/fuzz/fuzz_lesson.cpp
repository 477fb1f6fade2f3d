// libFuzzer target: a lesson file (app/lesson). Any text either parses into
// a lesson whose every step is a scene the window accepts (validateScene
// passes again) with marks at non-negative indices, or is refused with one
// InputError naming the file; nothing else may escape.
#include "app/lesson/lesson.h"

#include "engine/error.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const attn::Lesson l = attn::parseLesson(text, "fuzz", "lessons/fuzz.json");
    if (l.steps.empty()) std::abort();
    for (const attn::LessonStep& s : l.steps) {
      try {
        attn::validateScene(s.scene);
      } catch (const attn::InputError&) {
        std::abort();  // a parsed step must be a scene the window accepts
      }
      if (s.narration.empty()) std::abort();
      for (const attn::Annotation& a : s.highlights)
        if (a.query < -1 || a.key < -1 || a.query_end < -1 || a.key_end < -1) std::abort();
    }
  } catch (const attn::InputError& e) {
    if (std::string(e.what()).rfind("lessons/fuzz.json: ", 0) != 0) std::abort();  // every error names the file
  }
  return 0;
}
