// Lessons: a guided path through one mechanism, as data a teacher edits
// without compiling. A lesson is a JSON file (assets/lessons/NAME.json,
// embedded at build time; or the user's folder, ATTNLAB_LESSONS or
// ~/.config/attnlab/lessons/, whose files replace shipped ones of the same
// name). Its steps each set a scene (the flags of `attnlab gui`, inherited
// from the step before), a narration, the step's formula, marks drawn on the
// view and, optionally, a prompt for the student and the narration as a
// handout prints it ("paper"). The format is in docs/lessons.md.
#pragma once

#include "app/shared/scene_options.h"
#include "widgets/annotations.h"

#include <filesystem>
#include <string>
#include <vector>

namespace attn {

struct LessonStep {
  std::string title;
  SceneOptions scene;  // this step's scene: every earlier step's, with this step's changes
  std::string narration, formula, prompt;
  std::string paper;   // the narration for a handout; empty: the narration without window instructions
  std::vector<Annotation> highlights;
};

// The sentences of `text` that do not ask the reader to act on the window:
// a sentence naming a control (click, hover, drag, scroll, press, a slider,
// the side panel, a menu, a button, a box to type in) or opening with an
// imperative that changes the scene (Set, Change, Move, Sort, Type, Play, …)
// is left out; the rest is kept as written.
std::string withoutWindowInstructions(const std::string& text);
// What a handout prints of a step: its "paper" text, else its narration
// without window instructions; its prompt without them ("" when none is left).
std::string paperNarration(const LessonStep& step);
std::string paperPrompt(const LessonStep& step);

struct Lesson {
  std::string name;    // the file name without .json
  std::string file;    // where it came from: "assets/lessons/NAME.json" or the user's path
  std::string title, summary;
  std::vector<LessonStep> steps;
  std::vector<std::string> variants() const;  // the variants its steps open, in order, once each
};

// Parses and checks a lesson; `file` names it in errors. Throws InputError,
// one line naming the file and the step: "FILE: step 3: unknown variant 'x'".
Lesson parseLesson(const std::string& text, const std::string& name, const std::string& file);

// The user's lesson folder: $ATTNLAB_LESSONS, else ~/.config/attnlab/lessons.
std::filesystem::path userLessonFolder();

// Every lesson: the shipped ones, then the user's (replacing a shipped one
// of the same name), sorted by name. A file that does not parse is left
// out and its error line appended to `errors`.
std::vector<Lesson> allLessons(std::vector<std::string>& errors);

// A lesson by name, or by path when `name_or_path` ends in .json. Throws
// InputError naming the lessons there are, or the file's own error.
Lesson findLesson(const std::string& name_or_path);

}  // namespace attn
