// The window's side of lessons (app/lesson) and presentation mode: the
// caption strip with the step's narration, the marks drawn over the view,
// the laser and the pen, the keys that step through a lesson.
#pragma once

#include "app/gui/gui_state.h"

#include <imgui.h>

#include <string>

namespace attn {

// Keys of lessons and presentation mode (→ Space PageDown, ← PageUp, F5,
// Esc, L, P). True when the key was used; `text_input` is true while a text
// field has the keyboard (then only F5 and Esc act).
bool lessonKey(AppState& s, int key, bool text_input);

// A view offers the matrix it was drawn around as the one a lesson marks;
// the first offered in a frame is kept.
inline void offerAnchor(AppState& s, const MatrixPlacement& placed) {
  if (!s.anchor.valid()) s.anchor = placed;
}

// The caption strip under the view: lesson, step, narration, formula, prompt
// and, outside presentation mode, Back / Next buttons. Its height at `width`.
float lessonStripHeight(const AppState& s, float width);
void drawLessonStrip(AppState& s, ImVec2 pos, ImVec2 size);

// Over the view [pos, pos + size]: the step's marks on s.anchor (animated in
// over `animate_seconds` from the step's opening; 0 draws them whole), the
// pen's strokes and the laser dot; the pen takes the mouse while it is on.
// Returns what is wrong with the marks (out of the matrix, or a view with
// no matrix), empty when nothing is.
std::string drawLessonOverlay(AppState& s, ImVec2 pos, ImVec2 size, float animate_seconds);

// The Lessons menu: every lesson (a click asks the main loop to open it),
// Back and Next, presentation mode.
void lessonMenu(AppState& s);

}  // namespace attn
